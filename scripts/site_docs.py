#!/usr/bin/python3
"""The web site's docs and source (issue 41, item 8): the project has no public address, so the site
carries them.

    site_docs.py ROOT SITE

Writes SITE/docs/*.html — README.md and docs/*.md rendered with Debian's python3-markdown (tables,
fenced code, heading anchors), links between them rewritten to the .html pages, links into the source
tree turned into plain text that names the file in the archive, images replaced by their caption
(docs/images is 5.8 MB: the site stays under its 60 MB) — and SITE/deberta-explorer-src.tar.xz:
`git archive` of ROOT's HEAD without the model weights, corpora, fixtures' binaries and images.
Prints what each costs. Exit 1 with a one-line message when ROOT has no README.md or is not a git
checkout (the archive is then missing and the page's link would be dead).
"""
import html
import os
import re
import subprocess
import sys

import markdown

ARCHIVE = "deberta-explorer-src.tar.xz"
# What the archive leaves out: model weights and checkpoints, corpora, the training data and the
# docs' screenshots. Everything else that git tracks is in it (code, tests, scripts, docs, the
# notebooks' Python scripts).
EXCLUDE = [":!notebooks_data", ":!*.safetensors", ":!*.bin", ":!*.xz", ":!*.npy", ":!docs/images"]
INCLUDE = [".", "notebooks_data/*.py", "notebooks_data/*.md"]

STYLE = """body{font:16px/1.5 "DejaVu Sans",sans-serif;max-width:52em;margin:1em auto;padding:0 1em;color:#1d1d1f}
pre,code{font-family:"DejaVu Sans Mono",monospace;font-size:0.9em}pre{background:#f4f4f6;padding:0.6em;overflow-x:auto}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:0.2em 0.5em}nav{margin-bottom:1em}
.figure-note{color:#666;font-style:italic}"""


def title_of(text, fallback):
    m = re.search(r"^#\s+(.+)$", text, re.M)
    return m.group(1).strip() if m else fallback


def rewrite(body, page_of):
    """Links to other docs point at their pages; links into the source tree name the file; images
    become their caption."""
    def link(m):
        href, inner = m.group(1), m.group(2)
        if re.match(r"^(https?:|mailto:|#)", href):
            return m.group(0)
        path, _, anchor = href.partition("#")
        name = os.path.normpath(path).replace("\\", "/").lstrip("./")
        if name in page_of:
            return '<a href="%s%s">%s</a>' % (page_of[name], "#" + anchor if anchor else "", inner)
        return '<span title="%s in the source archive">%s</span>' % (html.escape(name), inner)

    def image(m):
        alt = re.search(r'alt="([^"]*)"', m.group(0))
        return '<span class="figure-note">[figure: %s]</span>' % (alt.group(1) if alt and alt.group(1) else "screenshot")

    body = re.sub(r"<img [^>]*>", image, body)
    body = re.sub(r'<a href="([^"]*)">(.*?)</a>', link, body, flags=re.S)
    # The docs name each other in the text ("see docs/heads.md"): those mentions become links too,
    # outside the links already there.
    parts = re.split(r"(<a [^>]*>.*?</a>)", body, flags=re.S)
    mention = re.compile(r"(<code>)?(?<![\w/.-])((?:docs/)?[\w.-]+\.md)\b(</code>)?")

    def linked(m):
        name = m.group(2)
        page = page_of.get(name) or page_of.get("docs/" + name)
        if not page:
            return m.group(0)
        return '<a href="%s">%s</a>' % (page, m.group(0))

    return "".join(p if p.startswith("<a ") else mention.sub(linked, p) for p in parts)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: site_docs.py ROOT SITE")
    root, site = sys.argv[1], sys.argv[2]
    if not os.path.isfile(os.path.join(root, "README.md")):
        sys.exit("site_docs.py: %s has no README.md" % root)
    sources = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    # A doc's path (as links name it, from the root) → its page in SITE/docs/.
    page_of = {s: os.path.basename(s)[:-3] + ".html" for s in sources}
    out_dir = os.path.join(site, "docs")
    os.makedirs(out_dir, exist_ok=True)
    titles = {}
    for src in sources:
        with open(os.path.join(root, src), encoding="utf-8") as f:
            text = f.read()
        titles[src] = title_of(text, src)
        md = markdown.Markdown(extensions=["tables", "fenced_code", "toc", "sane_lists"])
        body = md.convert(text)
        # Relative links are written from the doc's own folder: resolve them from the root.
        here = os.path.dirname(src)

        def from_root(m):
            href = m.group(1)
            if re.match(r"^(https?:|mailto:|#)", href):
                return m.group(0)
            return '<a href="%s">' % os.path.normpath(os.path.join(here, href)).replace("\\", "/")

        body = re.sub(r'<a href="([^"]*)">', from_root, body)
        body = rewrite(body, page_of)
        nav = '<nav><a href="index.html">All docs</a> · <a href="../index.html">The explorer</a> · <a href="../%s">Source (.tar.xz)</a></nav>' % ARCHIVE
        with open(os.path.join(out_dir, page_of[src]), "w", encoding="utf-8") as f:
            f.write('<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
                    'content="width=device-width, initial-scale=1"><title>%s — DeBERTa Explorer</title><style>%s</style>'
                    '</head><body>%s\n%s\n</body></html>\n' % (html.escape(titles[src]), STYLE, nav, body))
    items = "\n".join('<li><a href="%s">%s</a> <small>(%s)</small></li>' % (page_of[s], html.escape(titles[s]), s) for s in sources)
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as f:
        f.write('<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
                'content="width=device-width, initial-scale=1"><title>Docs — DeBERTa Explorer</title><style>%s</style></head>'
                '<body><nav><a href="../index.html">The explorer</a> · <a href="../%s">Source (.tar.xz)</a></nav>'
                '<h1>DeBERTa Explorer: the docs</h1><p>The project\'s README and docs/, as in the source archive '
                '(screenshots are left out to keep the site small).</p><ul>\n%s\n</ul></body></html>\n' % (STYLE, ARCHIVE, items))
    docs_bytes = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))

    archive = os.path.join(site, ARCHIVE)
    try:
        tar = subprocess.run(["git", "-C", root, "archive", "--format=tar", "--prefix=deberta-explorer/", "HEAD", "--"] + INCLUDE + EXCLUDE,
                             check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("site_docs.py: %s: git archive failed (%s): no source archive" % (root, getattr(e, "stderr", b"").decode().strip() or e))
    xz = subprocess.run(["xz", "-9", "-c"], input=tar, check=True, capture_output=True).stdout
    with open(archive, "wb") as f:
        f.write(xz)
    print("site_docs.py: %d pages of docs (%.2f MB), %s (%.2f MB)" % (len(sources) + 1, docs_bytes / 1e6, ARCHIVE, len(xz) / 1e6))


if __name__ == "__main__":
    main()
