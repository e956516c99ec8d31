#!/usr/bin/python3
"""i18n_check.py — the interface's catalogues against the viewer's sources (issue 40, item 5).

Fails, naming the file and the entry, when
  1. a catalogue (viewer/i18n/po/LANG.po) has an untranslated or fuzzy entry, or msgfmt --check finds an
     error (a printf format a translation changed: msgfmt checks c-format entries),
     as `msgfmt --check --statistics` reports them;
  2. a string the sources mark (xgettext with i18n.h's keywords over scripts/i18n_sources.sh's
     files) is missing from a catalogue, or the committed template viewer/i18n/po/deberta-explorer.pot
     differs from the sources' strings: the catalogues are behind the sources
     (run scripts/update_po.sh, then translate);
  3. a translation's named placeholders ({layer}, {x:.3f}) differ from its msgid's (trf fills them
     by name: a renamed or dropped one would show the English text instead);
  4. a translation drops a symbol of the paper its msgid has (c2p, p2c, c2c, p2p, EMD, Q_c, K_r,
     δ, Ã, …): the paper's notation stays as the paper writes it, in every language;
  5. a literal of a listed source that reads as English words is drawn by a Dear ImGui call (Text,
     Button, SetTooltip, TableSetupColumn, …) or a viewer helper that draws its argument, without
     being marked (xgettext --extract-all lists every literal and where it is); a name that stays as
     it is in every language ("Hugging Face") carries `// i18n: not translated` on its line;
  6. a catalogue lacks its header's Language or Plural-Forms.

Usage: i18n_check.py SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
os.chdir(ROOT)

LANGS = ["it", "ja", "ko", "zh_CN"]

# The paper's symbols: a msgid with one of them needs it in its translation too.
PAPER_SYMBOLS = ["c2c", "c2p", "p2c", "p2p", "EMD", "Q_c", "K_c", "V_c", "Q_r", "K_r", "δ", "Ã", "softmax",
                 "position_buckets", "max_relative_positions"]

# Calls that draw their first string argument (Dear ImGui's and the viewer's own helpers).
DRAWING_CALLS = (r"Text|TextWrapped|TextDisabled|TextColored|TextUnformatted|BulletText|LabelText|Button|SmallButton|"
                 r"Checkbox|RadioButton|MenuItem|BeginMenu|BeginTabItem|Selectable|SetTooltip|CollapsingHeader|"
                 r"TreeNode|TreeNodeEx|SliderInt|SliderFloat|SliderDouble|InputText|InputTextMultiline|InputInt|"
                 r"InputDouble|Combo|BeginCombo|DragFloat|DragInt|TableSetupColumn|BeginPopupModal|"
                 r"strip_button|help_marker|HelpMarker|tooltip|notice|heading|section|caption")
DRAW_RE = re.compile(r"\b(?:ImGui::)?(?:" + DRAWING_CALLS + r")\s*\(\s*(?:u8)?\"")

failures = []

# The glossaries' word for "layer" (the .po headers) and the words they do not use for it.
LAYER_WORD = {"ko": "레이어", "ja": "層", "zh_CN": "层", "it": "layer"}
LAYER_NOT = {"ko": ("층",), "ja": ("レイヤー", "レイヤ"), "zh_CN": ("图层", "层级"), "it": ("strato", "strati", "livello", "livelli")}


def fail(msg):
    failures.append(msg)


def sources():
    out = subprocess.run(["bash", "-c", "source scripts/i18n_sources.sh; printf '%s\\n' \"${I18N_SOURCES[@]}\""],
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def extract(out, extract_all=False):
    """The template of the marked strings (or, extract_all, of every literal): scripts/i18n_sources.sh."""
    subprocess.run(["bash", "-c", 'source scripts/i18n_sources.sh; i18n_extract "$0" $1', out,
                    "--extract-all" if extract_all else ""], check=True)


def parse_po(path):
    """Entries of a .po/.pot: dicts with ctx, id, str, flags, refs, obsolete."""
    entries, cur, field = [], None, None

    def unquote(s):
        s = s.strip()
        assert s.startswith('"') and s.endswith('"'), (path, s)
        return bytes(s[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")

    def flush():
        nonlocal cur
        if cur is not None and cur.get("id") is not None:
            entries.append(cur)
        cur = None

    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                flush()
                continue
            if cur is None:
                cur = {"ctx": None, "id": None, "str": None, "flags": set(), "refs": [], "obsolete": False, "plural": False}
            if line.startswith("#~"):
                cur["obsolete"] = True
                continue
            if line.startswith("#,"):
                cur["flags"] |= {x.strip() for x in line[2:].split(",")}
                continue
            if line.startswith("#:"):
                cur["refs"] += line[2:].split()
                continue
            if line.startswith("#"):
                continue
            m = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(".*")$', line)
            if m:
                key, val = m.group(1), unquote(m.group(2))
                if key == "msgctxt":
                    field = "ctx"
                elif key == "msgid":
                    field = "id"
                elif key == "msgid_plural":
                    field = "idp"
                    cur["plural"] = True
                else:
                    field = "str" if cur["str"] is None else "strx"
                cur[field] = val
            elif line.startswith('"'):
                cur[field] = (cur.get(field) or "") + unquote(line)
    flush()
    return entries


def key(e):
    return (e["ctx"], e["id"])


def placeholders(s):
    # {name} or {name:spec}; {{ and }} are literal braces.
    s = s.replace("{{", "").replace("}}", "")
    return sorted(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::[^{}]*)?\}", s))


files = sources()
tmp = tempfile.mkdtemp(prefix="i18n-check-")

# 2. The sources' marked strings.
fresh_pot = os.path.join(tmp, "fresh.pot")
extract(fresh_pot)
fresh = {key(e): e for e in parse_po(fresh_pot) if e["id"]}
committed_pot = "viewer/i18n/po/deberta-explorer.pot"
if not os.path.exists(committed_pot):
    fail(f"{committed_pot}: missing (run scripts/update_po.sh)")
else:
    committed = {key(e) for e in parse_po(committed_pot) if e["id"]}
    for k in sorted(set(fresh) - committed, key=str):
        fail(f"{committed_pot}: lacks the sources' string {k[1]!r} ({', '.join(fresh[k]['refs'][:2])}): run scripts/update_po.sh")
    for k in sorted(committed - set(fresh), key=str):
        fail(f"{committed_pot}: has {k[1]!r}, which the sources no longer mark: run scripts/update_po.sh")

for lang in LANGS:
    po = f"viewer/i18n/po/{lang}.po"
    if not os.path.exists(po):
        fail(f"{po}: missing")
        continue
    # 1. msgfmt's own statistics and checks.
    r = subprocess.run(["msgfmt", "--check", "--statistics", "-o", "/dev/null", po], capture_output=True, text=True)
    stats = (r.stdout + r.stderr).strip()
    if r.returncode != 0:
        fail(f"{po}: msgfmt --check failed: {stats}")
    elif "untranslated" in stats or "fuzzy" in stats:
        fail(f"{po}: {stats}")
    print(f"{po}: {stats}")
    entries = [e for e in parse_po(po) if not e["obsolete"]]
    header = next((e for e in entries if e["id"] == ""), None)
    # 6. The header.
    if header is None or f"Language: {lang}\n" not in (header["str"] or "") or "Plural-Forms:" not in (header["str"] or ""):
        fail(f"{po}: the header lacks 'Language: {lang}' or Plural-Forms")
    have = {key(e): e for e in entries if e["id"]}
    for k, e in fresh.items():
        t = have.get(k)
        if t is None:
            fail(f"{po}: lacks {k[1]!r} ({', '.join(e['refs'][:2])}): run scripts/update_po.sh, then translate it")
            continue
        if "fuzzy" in t["flags"] or not t["str"]:
            fail(f"{po}: {k[1]!r} is {'fuzzy' if 'fuzzy' in t['flags'] else 'untranslated'}")
            continue
        # 3. Named placeholders.
        if placeholders(k[1]) != placeholders(t["str"]):
            fail(f"{po}: the placeholders of {k[1]!r} {placeholders(k[1])} differ in its translation {t['str']!r}")
        # 4. The paper's symbols.
        for sym in PAPER_SYMBOLS:
            if re.search(r"(?<![A-Za-z0-9_])" + re.escape(sym) + r"(?![A-Za-z0-9_])", k[1]) and sym not in t["str"]:
                fail(f"{po}: the translation of {k[1]!r} drops the paper's symbol {sym!r}: {t['str']!r}")
        # 7. One word for "layer", the glossary's (each catalogue's header): the Equation tab's
        #    sliders and the lesson header must not name it two ways (issue 54: ko had 층 beside 레이어).
        if re.search(r"\blayers?\b", k[1], re.I):
            for other in LAYER_NOT.get(lang, ()):
                if re.search((r"\b" + other + r"\b") if other.isascii() else re.escape(other), t["str"]):
                    fail(f"{po}: {k[1]!r} says {other!r} for 'layer', the glossary's word is {LAYER_WORD[lang]!r}: {t['str']!r}")

# 5. Unmarked English in drawing calls: every literal (xgettext --extract-all) and the line it starts on.
all_pot = os.path.join(tmp, "all.pot")
extract(all_pot, extract_all=True)
marked_ids = {k[1] for k in fresh}
lines_of = {}
for e in parse_po(all_pot):
    text = e["id"]
    if not text or text in marked_ids:
        continue
    visible = re.sub(r"##.*$", "", text)                       # an ImGui ID suffix is never drawn
    visible = re.sub(r"%(?:\d+\$)?[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[a-zA-Z%]", " ", visible)  # printf directives
    visible = re.sub(r"\.[a-z]{2,}\b|\{[a-z,]+\}", " ", visible)  # file extensions: .csv, .{pdf,svg}
    words = [w for w in re.findall(r"[A-Za-z]{2,}", visible)
             if not any(w == s or w in s for s in PAPER_SYMBOLS) and not re.fullmatch(r"[A-Z]{2,5}|eq|vs|px|ms|GB|MB|KB", w)]
    if not words:
        continue
    for ref in e["refs"]:
        path, _, line = ref.rpartition(":")
        if path not in lines_of:
            with open(path, encoding="utf-8") as f:
                lines_of[path] = f.read().split("\n")
        src = lines_of[path][int(line) - 1]
        # The literal at the start of a drawing call's argument list on its own line.
        if 'trc("%s"' % text in src:  # a context, not drawn
            continue
        if DRAW_RE.search(src) and "i18n: not translated" not in src:
            fail(f"{ref}: {text!r} is drawn but not marked for translation (tr, trf or N_; viewer/i18n/i18n.h)")

for f in failures:
    print("FAIL:", f)
print(f"i18n_check: {len(fresh)} strings, {len(LANGS)} catalogues, {len(failures)} problems")
sys.exit(1 if failures else 0)
