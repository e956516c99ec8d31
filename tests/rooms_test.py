#!/usr/bin/env python3
"""The rooms of viewer/ and notebooks_data/ (issue 57, items 5 and 6) stay rooms:

1. viewer/ holds at most 8 files at its top level (the rest in app/, panels/, ui/, state/, jobs/,
   lesson/, i18n/, figures/, export/, tests/, web/);
2. notebooks_data/ holds at most 3 scripts (.py, .sh) at its top level;
3. notebooks_data/README.md's index names every script of the rooms (lib/, prepare/, train/, zoo/,
   references/, studies/) by its path;
4. every script a committed model card, run card, training log or model README names (the
   provenance of a committed model) resolves: it exists in notebooks_data/ (a room or the top) or
   moved.json maps its old path to an existing new one;
5. no function of viewer/panels, viewer/ui and viewer/app is over 80 lines (head to closing brace),
   apart from LONG_FUNCTIONS (none now), each with its reason (issue 57, item 5: draw functions that read);
6. no panel (viewer/panels) keeps a function static or reads a file (what a panel remembers is a
   field of ViewerState; files are read by jobs: the zoo's listing is jobs/worker.h's read_zoo).

    rooms_test.py SOURCE_DIR
"""
import json
import pathlib
import re
import sys

ROOMS = ("lib", "prepare", "train", "zoo", "references", "studies")

MAX_FUNCTION_LINES = 80
DRAWING_ROOMS = ("panels", "ui", "app")
# (file, function) -> why it may be longer for now. A stale entry (the function is short or gone)
# is reported too. Empty: every drawing function reads in at most MAX_FUNCTION_LINES (issue 57, item 5).
LONG_FUNCTIONS = {}


def strip(text):
    """The text with comments, string and character literals blanked (line count kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'R"([^(\s]*)\(', text[i:i + 20])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        c = text[i]
        if c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 digit separators
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)

def functions(text):
    """(name, first line, last line, lines) of every function body in C++ source `text`: a brace
    at namespace or class scope after a head with a parameter list. A brace-matching scan, not a
    parser: comments, literals and preprocessor lines are blanked first; lambdas and blocks count
    toward the function around them."""
    t = strip(text)
    # preprocessor lines (and their continuations) blanked
    t = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", t)
    stack = []  # kinds: ns, class, func, block
    head_start = 0
    out = []
    line = 1
    head_line = 1
    for i, c in enumerate(t):
        if c == "\n":
            line += 1
            continue
        if c == "{":
            head = t[head_start:i]
            outer = stack[-1][0] if stack else "ns"
            hs = " ".join(head.split())
            if outer in ("ns", "class"):
                if re.match(r"^(inline\s+)?namespace\b", hs) or hs.startswith('extern ""'):
                    kind = "ns"
                elif re.match(r"^(template\s*<.*>\s*)?(struct|class|union|enum)\b", hs) and "(" not in hs.split("{")[0].split(":")[0]:
                    kind = "class"
                elif ")" in hs and "=" not in hs.split("(")[0]:
                    kind = "func"
                else:
                    kind = "block"
            else:
                kind = "block"
            name = ""
            if kind == "func":
                m = re.search(r"([A-Za-z_~][\w:~]*(?:operator\S*)?)\s*\(", hs)
                name = m.group(1) if m else hs[:40]
            stack.append((kind, head_line, name))
            head_start = i + 1
            head_line = line
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "func":
                    out.append((name, start, line, line - start + 1))
            head_start = i + 1
            head_line = line
        elif c == ";":
            head_start = i + 1
            head_line = line
        elif c == ":" and stack and stack[-1][0] == "class" and re.search(r"\b(public|private|protected)\s*$", t[head_start:i]):
            head_start = i + 1
            head_line = line
        elif not c.isspace() and t[head_start:i].strip() == "":
            head_line = line
    return out


def scanner_reads_planted_functions():
    """Problems of `functions` on planted source: a function of 81 lines (with a lambda, a string and
    a character holding braces, a comment and a preprocessor line with braces) must be read as one
    function of 81 lines, a struct's method as its own, a namespace and an array initialiser as none."""
    body = ["  auto f = [&] { return '{'; };", '  const char* s = "}}}";', "  // }", "#define X }"]
    body += ["  x += %d;" % i for i in range(81 - 2 - len(body))]
    text = ("namespace viewer {\nnamespace {\nconst int kA[] = {1, 2};\nstruct S {\n  int get() const {\n    return 1;\n"
            "  }\n};\n}  // namespace\nvoid Draw(int x) {\n" + "\n".join(body) + "\n}\n}  // namespace viewer\n")
    got = [(name, lines) for name, _, _, lines in functions(text)]
    want = [("get", 3), ("Draw", 81)]
    return [] if got == want else ["rooms_test's function scanner read %s from its planted source, not %s" % (got, want)]


# What reads a file or a folder (std::filesystem queries, C and C++ streams, the core's reader).
FILE_READS = re.compile(r"\b(ifstream|fstream|fopen|read_whole_file|directory_iterator|is_regular_file|is_directory|"
                        r"file_size|exists)\s*[(<]")


def panel_statics_and_reads(root):
    """Problems: a `static` inside a function of viewer/panels, or a file read anywhere in one."""
    problems = []
    for path in sorted((root / "viewer" / "panels").glob("*.cpp")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        code = strip(text).split("\n")
        for name, first, last, _ in functions(text):
            for n in range(first, last + 1):
                if re.search(r"\bstatic\b(?!_)", code[n - 1]):
                    problems.append("%s:%d: %s keeps a function static (make it a field of ViewerState)" % (rel, n, name))
        for n, line in enumerate(code, 1):
            m = FILE_READS.search(line)
            if m:
                problems.append("%s:%d: a panel reads the file system (%s): read it in a job (viewer/jobs/)" % (rel, n, m.group(1)))
    return problems


def long_functions(root):
    """Problems: functions of viewer's drawing rooms over MAX_FUNCTION_LINES, and stale allowances."""
    problems, seen, count = [], set(), 0
    for room in DRAWING_ROOMS:
        for path in sorted((root / "viewer" / room).glob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            rel = path.relative_to(root).as_posix()
            for name, first, _, lines in functions(path.read_text(encoding="utf-8")):
                count += 1
                if lines <= MAX_FUNCTION_LINES:
                    continue
                if (rel, name) in LONG_FUNCTIONS:
                    seen.add((rel, name))
                    continue
                problems.append("%s:%d: %s is %d lines (at most %d: split it)" % (rel, first, name, lines, MAX_FUNCTION_LINES))
    for key in sorted(set(LONG_FUNCTIONS) - seen):
        problems.append("LONG_FUNCTIONS allows %s's %s, which is no longer over %d lines: drop the entry" % (key + (MAX_FUNCTION_LINES,)))
    return problems, count


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
    long, functions_read = long_functions(root)
    problems += scanner_reads_planted_functions() + long + panel_statics_and_reads(root)
    for p in problems:
        print("FAIL " + p)
    print("rooms: viewer/ %d top-level files, notebooks_data/ %d top-level scripts, %d room scripts indexed, "
          "%d provenance names in %d cards resolved, %d functions of viewer/%s read (at most %d lines, %d allowed longer)"
          % (len(top), len(scripts), len(room_scripts), names, len(cards), functions_read, "{" + ",".join(DRAWING_ROOMS) + "}",
             MAX_FUNCTION_LINES, len(LONG_FUNCTIONS)))
    print("%d passed, %d failed" % (6 if not problems else 0, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
