#!/usr/bin/python3
"""A font for the page with every character kept and what Dear ImGui does not read dropped, so that
the site stays under its 60 MB:

    unhinted_font.py IN_TTF OUT_TTF

Kept: every character of the font's cmap and its glyf outlines, unchanged (a glyph drawn in the
page is the desktop's). Dropped: the TrueType hinting (stb_truetype rasterises without it), the
layout tables (Dear ImGui does no shaping) and the font editor's source tables (TSI*). Nanum
Gothic (fonts-nanum, 17,666 characters): 4.7 MB -> 2.9 MB.
Needs python3-fonttools (Debian's /usr/bin/python3).
"""
import sys

from fontTools import subset


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: unhinted_font.py IN_TTF OUT_TTF")
    src, dst = sys.argv[1:]
    options = subset.Options()
    options.hinting = False
    options.layout_features = []
    options.notdef_outline = True
    options.glyph_names = False
    font = subset.load_font(src, options)
    if "glyf" not in font:
        sys.exit("unhinted_font.py: %s has no glyf outlines (Dear ImGui 1.86 reads TrueType glyf fonts only)" % src)
    cmap = font.getBestCmap()
    sub = subset.Subsetter(options)
    sub.populate(unicodes=sorted(cmap))
    sub.subset(font)
    kept = font.getBestCmap()
    if set(kept) != set(cmap):
        sys.exit("unhinted_font.py: %s: %d of %d characters kept" % (src, len(kept), len(cmap)))
    subset.save_font(font, dst, options)
    print("unhinted_font.py: %s: all %d characters, no hinting" % (dst, len(kept)))


if __name__ == "__main__":
    main()
