#!/usr/bin/python3
"""The page's Japanese font (issue 54, item 4): IPA Gothic (Debian's fonts-ipafont-gothic, TrueType
glyf outlines, which Dear ImGui's stb_truetype reads) cut to what Japanese text uses, so that the
site stays under its 60 MB:

    japanese_font.py IPAG_TTF OUT_TTF

Kept: Hiragana, Katakana (and their small and half-width forms), CJK punctuation, full-width
forms, and the 2,965 kanji of JIS X 0208 level 1 (the common kanji of ordinary Japanese text), read
from Python's EUC-JP codec: 0.8 MB of the font's 6.2 MB (levels 1 and 2 were 1.8 MB, which the
site's 60 MB did not hold). Dropped: hinting (stb_truetype does not
use it) and the layout tables (Dear ImGui does no shaping). A kanji outside level 1 (the rarer
ones of level 2, and a few Jōyō kanji added in 2010) is drawn by the next CJK font (fonts.cpp:
Droid Sans Fallback, in its Chinese form), as on a desktop without IPA Gothic.
Needs python3-fonttools (Debian's /usr/bin/python3).
"""
import sys

from fontTools import subset


def jis_x_0208_level1_kanji():
    """The kanji of JIS X 0208 level 1 (rows 16–47), through EUC-JP."""
    out = set()
    for row in range(16, 48):
        for cell in range(1, 95):
            try:
                ch = bytes([0xA0 + row, 0xA0 + cell]).decode("euc_jp")
            except UnicodeDecodeError:
                continue
            out.add(ord(ch))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: japanese_font.py IPAG_TTF OUT_TTF")
    src, dst = sys.argv[1:]
    kanji = jis_x_0208_level1_kanji()
    if len(kanji) != 2965:
        sys.exit("japanese_font.py: only %d kanji read from the EUC-JP codec" % len(kanji))
    unicodes = set(kanji)
    for lo, hi in [(0x3000, 0x303F), (0x3040, 0x309F), (0x30A0, 0x30FF), (0x31F0, 0x31FF), (0xFF00, 0xFFEF)]:
        unicodes.update(range(lo, hi + 1))
    options = subset.Options()
    options.hinting = False
    options.layout_features = []
    options.notdef_outline = True
    font = subset.load_font(src, options)
    sub = subset.Subsetter(options)
    sub.populate(unicodes=sorted(unicodes))
    sub.subset(font)
    if "glyf" not in font:
        sys.exit("japanese_font.py: %s has no glyf outlines" % src)
    subset.save_font(font, dst, options)
    print("japanese_font.py: %s: %d characters (%d kanji)" % (dst, len(font.getBestCmap()), len(kanji)))


if __name__ == "__main__":
    main()
