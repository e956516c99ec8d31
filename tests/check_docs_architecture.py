#!/usr/bin/env python3
"""docs/architecture.md's file tables against the tracked files (issue 57, item 7): a file the
doc names must exist, and every file of core/src must be named, so the tables cannot drift from
the tree unseen.

  core table     the rows `| `<layer>/` | … |` of the layer table: a file named in a row (a token
                 ending in .h, .cpp or .inc; `name.{h,cpp}` names both) is core/src/<layer>/<name>
                 or the public header core/include/deberta/<name>; every tracked file of
                 core/src/<layer>/ must be named in its row
  viewer block   the fenced block of "## The viewer": a room line `  <room>/  …` and its
                 continuation lines; a file named there is under viewer/<room>/ (a name with a
                 slash is relative to viewer/)

The tracked files are `git ls-files` (the file system when SOURCE_DIR is no git checkout).
Exits 1 listing every problem.   Usage: check_docs_architecture.py [SOURCE_DIR]
"""
import pathlib
import re
import subprocess
import sys

FILE_TOKEN = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:\{[\w,]+\}|h|cpp|inc|py|sh|html|js|pot|cmake))"
                        r"(?![\w{])")


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        return {p for p in out.decode("utf-8").split("\0") if p}
    except (OSError, subprocess.CalledProcessError):
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def names(text):
    """File names a piece of the doc mentions, braces expanded (`app.{h,cpp}` → app.h, app.cpp)."""
    out = []
    for token in FILE_TOKEN.findall(text):
        m = re.match(r"(.*)\.\{([\w,]+)\}$", token)
        out += [f"{m.group(1)}.{ext}" for ext in m.group(2).split(",")] if m else [token]
    return out


def core_table(doc, files):
    problems, rows = [], {}
    for line in doc.splitlines():
        m = re.match(r"\|\s*`([a-z]+)/`\s*\|", line)
        if m:
            rows[m.group(1)] = line
    layers = sorted({p.split("/")[2] for p in files if p.startswith("core/src/") and p.count("/") >= 3})
    for layer in layers:
        if layer not in rows:
            problems.append(f"docs/architecture.md: the layer table has no row for core/src/{layer}/")
    for layer, row in rows.items():
        named = set(names(row))
        for name in sorted(named):
            if f"core/src/{layer}/{name}" not in files and f"core/include/deberta/{name}" not in files:
                problems.append(f"docs/architecture.md: the {layer}/ row names {name}, which is neither "
                                f"core/src/{layer}/{name} nor core/include/deberta/{name}")
        for path in sorted(p for p in files if p.startswith(f"core/src/{layer}/")):
            if path[len(f"core/src/{layer}/"):] not in named:
                problems.append(f"docs/architecture.md: the {layer}/ row does not name {path}")
    if not rows:
        problems.append("docs/architecture.md: no layer table (rows | `<layer>/` | …)")
    return problems


def viewer_block(doc, files):
    problems = []
    section = doc.split("## The viewer", 1)
    block = re.search(r"```\n(.*?)```", section[1], re.DOTALL) if len(section) == 2 else None
    if not block:
        return ["docs/architecture.md: no fenced file block under \"## The viewer\""]
    room = None
    for line in block.group(1).splitlines():
        m = re.match(r"  ([\w-]+)/\s", line)
        if m:
            room = m.group(1)
            if not any(p.startswith(f"viewer/{room}/") for p in files):
                problems.append(f"docs/architecture.md: the viewer block names the room {room}/, which viewer/ has not")
        if room is None:
            continue
        for name in names(line):
            if "/" in name:
                ok = f"viewer/{name}" in files
            else:
                ok = any(p.startswith(f"viewer/{room}/") and p.endswith("/" + name) for p in files)
            if not ok:
                problems.append(f"docs/architecture.md: the viewer block's {room}/ names {name}, which is not "
                                f"{'viewer/' + name if '/' in name else 'under viewer/' + room + '/'}")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    files = tracked(root)
    doc = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    problems = core_table(doc, files) + viewer_block(doc, files)
    for p in problems:
        print(p)
    if problems:
        print(f"check_docs_architecture: {len(problems)} problem(s)")
        return 1
    print("check_docs_architecture: the layer table names every file of core/src, and every file the layer "
          "table and the viewer block name exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
