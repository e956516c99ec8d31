#!/usr/bin/env python3
"""The rooms of viewer/ and notebooks_data/ (issue 57, items 5 and 6) stay rooms:

1. viewer/ holds at most 8 files at its top level (the rest in app/, panels/, ui/, state/, jobs/,
   lesson/, i18n/, figures/, export/, tests/, web/);
2. notebooks_data/ holds at most 3 scripts (.py, .sh) at its top level;
3. notebooks_data/README.md's index names every script of the rooms (lib/, prepare/, train/, zoo/,
   references/, studies/) by its path;
4. every script a committed model card, run card, training log or model README names (the
   provenance of a committed model) resolves: it exists in notebooks_data/ (a room or the top) or
   moved.json maps its old path to an existing new one.

    rooms_test.py SOURCE_DIR
"""
import json
import pathlib
import re
import sys

ROOMS = ("lib", "prepare", "train", "zoo", "references", "studies")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    nb = root / "notebooks_data"
    problems = []
    top = [p.name for p in (root / "viewer").iterdir() if p.is_file()]
    if len(top) > 8:
        problems.append("viewer/ has %d files at its top level (at most 8): %s" % (len(top), ", ".join(sorted(top))))
    scripts = [p.name for p in nb.iterdir() if p.is_file() and p.suffix in (".py", ".sh")]
    if len(scripts) > 3:
        problems.append("notebooks_data/ has %d scripts at its top level (at most 3): %s" % (len(scripts), ", ".join(sorted(scripts))))
    readme = (nb / "README.md").read_text(encoding="utf-8")
    room_scripts = sorted(p.relative_to(nb).as_posix() for r in ROOMS for p in (nb / r).glob("*") if p.suffix in (".py", ".sh"))
    for rel in room_scripts:
        if "`%s`" % rel not in readme:
            problems.append("notebooks_data/README.md's index does not name %s" % rel)
    moved = json.loads((nb / "moved.json").read_text(encoding="utf-8"))["moved"]
    for old, new in moved.items():
        if not (nb / new).is_file():
            problems.append("moved.json: %s -> %s, which does not exist" % (old, new))
    known = {p.name for p in nb.rglob("*") if p.suffix in (".py", ".sh")} | set(moved)
    known |= {p.name for p in (root / "scripts").glob("*.sh")}
    cards = [p for p in (nb / "models").rglob("*") if p.is_file() and
             (p.name in ("card.json", "run.json", "README.md", "eval.json") or p.name.startswith("training_log"))]
    names = 0
    for card in cards:
        for name in set(re.findall(r"\b[A-Za-z0-9_]+\.(?:py|sh)\b", card.read_text(encoding="utf-8", errors="replace"))):
            names += 1
            if name not in known:
                problems.append("%s names %s, which is neither a script nor in moved.json" % (card.relative_to(root), name))
    for p in problems:
        print("FAIL " + p)
    print("rooms: viewer/ %d top-level files, notebooks_data/ %d top-level scripts, %d room scripts indexed, "
          "%d provenance names in %d cards resolved" % (len(top), len(scripts), len(room_scripts), names, len(cards)))
    print("%d passed, %d failed" % (4 if not problems else 0, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
