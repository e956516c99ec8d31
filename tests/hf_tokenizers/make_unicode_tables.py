#!/usr/bin/env python3
"""Writes core/src/io/tokenizer_unicode_tables.inc: the character tables of the Hugging Face
tokenizer pipeline (core/src/io/tokenizer_unicode.cpp).

    /usr/bin/python3 tests/hf_tokenizers/make_unicode_tables.py [PROBE_JSON]

PROBE_JSON is the output of probe_unicode.js (run with the npm `tokenizers` library of
package-lock.json; made here when not given). Every class and per-character mapping the library
applies is read off the library itself, one code point at a time: BertNormalizer's "other"
(removed by clean_text) and whitespace, WhitespaceSplit's whitespace, the punctuation and numeric
classes of the Punctuation / BertPreTokenizer / Digits splitters, the non-spacing marks that
strip_accents removes, and the NFD, NFKD and lowercase mapping of each character.

The grapheme cluster classes (for the Precompiled normalizer, which works on extended grapheme
clusters as the unicode-segmentation crate splits them) come from Debian's unicode-data package:
/usr/share/unicode/auxiliary/GraphemeBreakProperty.txt and emoji/emoji-data.txt
(Extended_Pictographic).

Two things a single character cannot show come from Python's unicodedata (Unicode 14.0 on
Debian 12): the values of the canonical combining classes (for the reordering of marks) and the
primary composites (for NFC / NFKC's composition). Which characters have a non-zero class is the
library's (a mark moves before U+0345 under its NFD): its tables are older than Python's, and a
mark it does not know is a starter for it.
"""
import json
import os
import subprocess
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "core", "src", "io", "tokenizer_unicode_tables.inc")


def ranges(cps):
    out = []
    for cp in sorted(cps):
        if out and out[-1][1] + 1 == cp:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def is_hangul_syllable(cp):
    return 0xAC00 <= cp <= 0xD7A3


def emit_ranges(name, cps, comment):
    rs = ranges(cps)
    lines = ["// %s (%d code points in %d ranges)" % (comment, len(cps), len(rs)),
             "constexpr CodeRange %s[] = {" % name]
    row = []
    for lo, hi in rs:
        row.append("{0x%X, 0x%X}," % (lo, hi))
        if len(row) == 6:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append("};")
    return "\n".join(lines)


def emit_map(name, mapping, comment, pool):
    lines = ["// %s (%d characters)" % (comment, len(mapping)), "constexpr CodeMapping %s[] = {" % name]
    row = []
    for cp in sorted(mapping):
        target = mapping[cp]
        start = len(pool)
        pool.extend(target)
        row.append("{0x%X, %d, %d}," % (cp, start, len(target)))
        if len(row) == 5:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append("};")
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            probe = json.load(f)
    else:
        env = dict(os.environ, NODE_PATH=os.path.join(HERE, "node_modules"))
        text = subprocess.run(["/usr/bin/node", os.path.join(HERE, "probe_unicode.js")], env=env, check=True,
                              capture_output=True).stdout
        probe = json.loads(text)
    as_map = lambda d: {int(k): v for k, v in d.items()}
    nfd = {cp: v for cp, v in as_map(probe["nfd"]).items() if not is_hangul_syllable(cp)}
    nfkd = {cp: v for cp, v in as_map(probe["nfkd"]).items() if not is_hangul_syllable(cp)}
    lower = as_map(probe["lower"])

    reorders = set(probe["reorders"])
    unknown = [cp for cp in reorders if not unicodedata.combining(chr(cp))]
    if unknown:
        sys.exit("the library reorders marks unicodedata gives class 0: %s" % " ".join("U+%04X" % c for c in unknown))
    ccc = {}
    compose = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        c = unicodedata.combining(ch)
        if c and (cp in reorders or cp == 0x345):
            ccc[cp] = c
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<"):
            parts = [int(x, 16) for x in d.split()]
            if len(parts) == 2 and unicodedata.normalize("NFC", unicodedata.normalize("NFD", ch)) == ch:
                compose.append((parts[0], parts[1], cp))
    compose.sort()
    ccc_ranges = []
    for cp in sorted(ccc):
        if ccc_ranges and ccc_ranges[-1][1] + 1 == cp and ccc_ranges[-1][2] == ccc[cp]:
            ccc_ranges[-1][1] = cp
        else:
            ccc_ranges.append([cp, cp, ccc[cp]])

    gcb_names = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend", "SpacingMark",
                 "L", "V", "T", "LV", "LVT"]
    gcb = {}
    for path, wanted in (("/usr/share/unicode/auxiliary/GraphemeBreakProperty.txt", None),
                         ("/usr/share/unicode/emoji/emoji-data.txt", "Extended_Pictographic")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#")[0].strip()
                if not line:
                    continue
                cps, prop = [x.strip() for x in line.split(";")]
                if wanted is not None and prop != wanted:
                    continue
                lo, _, hi = cps.partition("..")
                for cp in range(int(lo, 16), int(hi or lo, 16) + 1):
                    if wanted is None:
                        gcb[cp] = gcb_names.index(prop)
                    else:
                        gcb[cp] = gcb.get(cp, 0) | 0x100  # Extended_Pictographic flag
    gcb_ranges = []
    for cp in sorted(gcb):
        if gcb_ranges and gcb_ranges[-1][1] + 1 == cp and gcb_ranges[-1][2] == gcb[cp]:
            gcb_ranges[-1][1] = cp
        else:
            gcb_ranges.append([cp, cp, gcb[cp]])

    pool = []
    parts = [
        "// tokenizer_unicode_tables.inc — generated by tests/hf_tokenizers/make_unicode_tables.py from",
        "// Hugging Face's tokenizers %s (npm, probed one code point at a time) and Python's unicodedata %s"
        % (probe["version"], unicodedata.unidata_version),
        "// (combining classes, primary composites). Do not edit; included by tokenizer_unicode.cpp only.",
        "",
        emit_ranges("kOther", probe["other"], "BertNormalizer clean_text removes these"),
        emit_ranges("kBertSpace", probe["bert_space"], "BertNormalizer clean_text turns these into a space"),
        emit_ranges("kWhitespace", probe["whitespace"], "WhitespaceSplit / BertPreTokenizer split on these"),
        emit_ranges("kPunctuation", probe["punctuation"], "Punctuation / BertPreTokenizer isolate these"),
        emit_ranges("kNumeric", probe["numeric"], "Digits splits on these"),
        emit_ranges("kNonspacingMark", probe["nonspacing_mark"], "strip_accents removes these (after NFD)"),
        emit_map("kNfd", nfd, "full canonical decomposition (Hangul syllables are computed)", pool),
        emit_map("kNfkd", nfkd, "full compatibility decomposition (Hangul syllables are computed)", pool),
        emit_map("kLower", lower, "lowercase mapping of one character", pool),
        "// canonical combining class, in runs of one class (%d characters)" % len(ccc),
        "constexpr CombiningRange kCombining[] = {",
    ]
    row = []
    for lo, hi, c in ccc_ranges:
        row.append("{0x%X, 0x%X, %d}," % (lo, hi, c))
        if len(row) == 5:
            parts.append("    " + " ".join(row))
            row = []
    if row:
        parts.append("    " + " ".join(row))
    parts.append("};")
    parts.append("// primary composites: (first, second) → composite, sorted (%d pairs; Hangul is computed)" % len(compose))
    parts.append("constexpr Composition kCompose[] = {")
    row = []
    for a, b, c in compose:
        row.append("{0x%X, 0x%X, 0x%X}," % (a, b, c))
        if len(row) == 5:
            parts.append("    " + " ".join(row))
            row = []
    if row:
        parts.append("    " + " ".join(row))
    parts.append("};")
    parts.append("// grapheme cluster break class (GraphemeBreakProperty, Unicode %s: %s), 0x100 = Extended_Pictographic"
                 % ("15.0", ", ".join("%d %s" % (k, n) for k, n in enumerate(gcb_names))))
    parts.append("constexpr CombiningRange kGraphemeBreak[] = {")
    row = []
    for lo, hi, c in gcb_ranges:
        row.append("{0x%X, 0x%X, 0x%X}," % (lo, hi, c))
        if len(row) == 5:
            parts.append("    " + " ".join(row))
            row = []
    if row:
        parts.append("    " + " ".join(row))
    parts.append("};")
    parts.append("// the code points the mappings above point into")
    parts.append("constexpr char32_t kPool[] = {")
    for k in range(0, len(pool), 12):
        parts.append("    " + " ".join("0x%X," % cp for cp in pool[k:k + 12]))
    parts.append("};")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    print("wrote %s (%d pool code points)" % (OUT, len(pool)))


if __name__ == "__main__":
    main()
