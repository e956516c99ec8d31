#!/usr/bin/env python3
"""Build the corpus of the multilingual bundled model (issue 40) from text that Debian packages ship.

Languages and sources (docs/multilingual-model.md lists the licences):
  ko     message catalogues /usr/share/locale/ko/LC_MESSAGES/*.mo; debian-faq-ko;
         libreoffice-help-ko (HTML help pages)
  ja     catalogues ja; manpages-ja; debian-faq-ja; debian-reference-ja
  zh-Hans  catalogues zh_CN; manpages-zh (zh_CN); fortunes-zh; debian-faq-zh-cn; debian-reference-zh-cn
  zh-Hant  catalogues zh_TW; manpages-zh (zh_TW); debian-reference-zh-tw
  it     catalogues it; manpages-it; fortunes-it; debian-faq-it; debian-reference-it
  en     the English corpus of deberta-tiny (corpus/train.txt.xz + corpus/heldout.txt: WordNet, KJV)

Steps per language: extract text -> NFC -> strip markup (troff, HTML, printf directives, menu
accelerators) -> split into sentences -> keep 8..300 characters with at least one character of the
language's script -> dedupe -> shuffle with a fixed seed -> hold out HELDOUT per language (never
trained on) -> cap the training lines per language at --cap. Writes corpus_multilingual/train.txt
(all languages, shuffled), heldout.<lang>.txt and stats.json.

    apt-get install -y --no-install-recommends manpages-ja manpages-zh manpages-it fortunes-zh \
        fortunes-it debian-faq-ko debian-faq-ja debian-faq-it debian-faq-zh-cn debian-reference-ja \
        debian-reference-it debian-reference-zh-cn debian-reference-zh-tw libreoffice-help-ko
    /usr/bin/python3 notebooks_data/prepare/prepare_multilingual_corpus.py
"""
import argparse
import glob
import gettext
import gzip
import hashlib
import html
import json
import lzma
import os
import random
import re
import unicodedata

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
SEED = 20210503
HELDOUT = 1500          # held-out sentences per language

LANGS = ("ko", "ja", "zh-Hans", "zh-Hant", "it", "en")
LOCALE_DIR = {"ko": "ko", "ja": "ja", "zh-Hans": "zh_CN", "zh-Hant": "zh_TW", "it": "it"}


def script_ok(lang, s):
    """True when `s` holds at least one character of the language's own script."""
    if lang == "ko":
        return re.search(r"[\uac00-\ud7a3]", s) is not None
    if lang == "ja":
        return re.search(r"[\u3040-\u30ff]", s) is not None
    if lang.startswith("zh"):
        return re.search(r"[\u4e00-\u9fff]", s) is not None and re.search(r"[\u3040-\u30ff\uac00-\ud7a3]", s) is None
    return re.search(r"[A-Za-z]", s) is not None


def clean(s):
    s = unicodedata.normalize("NFC", s)
    s = re.sub(r"%(\d+\$)?[-+ #0]*(\d+|\*)?(\.(\d+|\*))?(hh|h|ll|l|L|q|j|z|t|I64)?[diouxXeEfFgGaAcspn%]", " ", s)
    s = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", " ", s)
    s = re.sub(r"(?<=\w)_(?=\w)|&(?=\w)|\(_[A-Za-z]\)|\(&[A-Za-z]\)", "", s)   # menu accelerators
    s = "".join(c if c.isprintable() else " " for c in s)
    return re.sub(r"\s+", " ", s).strip()


SENT_END = re.compile(r"(?<=[。！？!?])|(?<=[.;:])\s+(?=[A-Z\u00c0-\u00dd\"'(\u3000-\u9fff\uac00-\ud7a3])")


def sentences(text):
    for para in re.split(r"\n\s*\n|\n(?=\s*[-*•·]\s)", text):
        para = clean(para.replace("\n", " "))
        for s in SENT_END.split(para):
            s = s.strip(" -*•·")
            if 8 <= len(s) <= 300:
                yield s


def catalogue_text(loc):
    out = []
    for mo in sorted(glob.glob("/usr/share/locale/%s/LC_MESSAGES/*.mo" % loc)):
        try:
            with open(mo, "rb") as f:
                cat = gettext.GNUTranslations(f)._catalog
        except (OSError, UnicodeDecodeError, gettext.error if hasattr(gettext, "error") else OSError, Exception):
            continue
        for key, msg in cat.items():
            if key == "" or not isinstance(msg, str):
                continue
            out.append(msg)
    return "\n\n".join(out)


TROFF_ESC = re.compile(r"\\f[BIRP]|\\f\(..|\\f\[[^\]]*\]|\\s[-+]?\d|\\\(..|\\\[[^\]]*\]|\\[-&|^%:e]|\\\*\(..|\\\*.")


def man_text(pattern):
    out = []
    for fn in sorted(glob.glob(pattern, recursive=True)):
        try:
            raw = gzip.open(fn, "rb").read() if fn.endswith(".gz") else open(fn, "rb").read()
            txt = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError):
            continue
        para = []
        for line in txt.splitlines():
            if line.startswith((".", "'")):
                if re.match(r"^\.(PP|LP|P|SH|SS|TP|IP|sp|br|HP|RS|RE)\b", line):
                    para.append("\n\n")
                m = re.match(r'^\.(B|I|BI|IB|BR|RB|IR|RI)\s+(.*)$', line)
                if m:
                    para.append(m.group(2).replace('"', "") + " ")
                continue
            para.append(TROFF_ESC.sub("", line).replace("\\", "") + "\n")
        out.append("".join(para))
    return "\n\n".join(out)


def fortune_text(paths):
    out = []
    for fn in paths:
        try:
            txt = open(fn, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(t.replace("\n", " ") for t in txt.split("\n%\n"))
    return "\n\n".join(out)


def gz_text(pattern):
    out = []
    for fn in sorted(glob.glob(pattern)):
        try:
            out.append(gzip.open(fn, "rt", encoding="utf-8").read())
        except (OSError, UnicodeDecodeError, EOFError):
            continue
    return "\n\n".join(out)


def html_text(pattern):
    out = []
    for fn in sorted(glob.glob(pattern, recursive=True)):
        try:
            t = open(fn, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        t = re.sub(r"(?is)<(script|style|head)\b.*?</\1>", " ", t)
        t = re.sub(r"(?i)</?(p|div|h\d|li|td|tr|br|table|ul|ol|pre)\b[^>]*>", "\n\n", t)
        out.append(html.unescape(re.sub(r"<[^>]+>", " ", t)))
    return "\n\n".join(out)


def sources(lang):
    """(source name, text) pairs of one language."""
    if lang == "en":
        with lzma.open(os.path.join(HERE, "corpus", "train.txt.xz"), "rt", encoding="utf-8") as f:
            train = f.read()
        held = open(os.path.join(HERE, "corpus", "heldout.txt"), encoding="utf-8").read()
        return [("english-corpus", train.replace("\n", "\n\n") + "\n\n" + held.replace("\n", "\n\n"))]
    src = [("locale-catalogues", catalogue_text(LOCALE_DIR[lang]))]
    if lang == "ko":
        src += [("debian-faq-ko", gz_text("/usr/share/doc/debian/FAQ/debian-faq.ko.txt.gz")),
                ("libreoffice-help-ko", html_text("/usr/share/libreoffice/help/ko/**/*.html"))]
    elif lang == "ja":
        src += [("manpages-ja", man_text("/usr/share/man/ja/**/*.gz")),
                ("debian-faq-ja", gz_text("/usr/share/doc/debian/FAQ/debian-faq.ja.txt.gz")),
                ("debian-reference-ja", gz_text("/usr/share/debian-reference/debian-reference.ja.txt.gz")
                 or html_text("/usr/share/debian-reference/*.ja.html"))]
    elif lang == "zh-Hans":
        src += [("manpages-zh", man_text("/usr/share/man/zh_CN/**/*.gz")),
                ("fortunes-zh", fortune_text(["/usr/share/games/fortunes/chinese", "/usr/share/games/fortunes/song100",
                                               "/usr/share/games/fortunes/tang300"])),
                ("debian-faq-zh-cn", gz_text("/usr/share/doc/debian/FAQ/debian-faq.zh-cn.txt.gz")),
                ("debian-reference-zh-cn", gz_text("/usr/share/debian-reference/debian-reference.zh-cn.txt.gz"))]
    elif lang == "zh-Hant":
        src += [("manpages-zh", man_text("/usr/share/man/zh_TW/**/*.gz")),
                ("debian-reference-zh-tw", gz_text("/usr/share/debian-reference/debian-reference.zh-tw.txt.gz"))]
    elif lang == "it":
        src += [("manpages-it", man_text("/usr/share/man/it/**/*.gz")),
                ("fortunes-it", fortune_text(sorted(p for p in glob.glob("/usr/share/games/fortunes/it/*")
                                                    if "." not in os.path.basename(p)))),
                ("debian-faq-it", gz_text("/usr/share/doc/debian/FAQ/debian-faq.it.txt.gz")),
                ("debian-reference-it", gz_text("/usr/share/debian-reference/debian-reference.it.txt.gz"))]
    return src


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "corpus_multilingual"))
    ap.add_argument("--cap", type=int, default=60000, help="training sentences per language at most")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    stats, train = {"seed": SEED, "heldout_per_language": HELDOUT, "cap_per_language": args.cap}, []
    for lang in LANGS:
        seen, kept, per_source = set(), [], {}
        for name, text in sources(lang):
            n_ex = n_kept = 0
            for s in sentences(text):
                n_ex += 1
                key = re.sub(r"\s+", "", s.lower())
                if key in seen or not script_ok(lang, s):
                    continue
                seen.add(key)
                kept.append(s)
                n_kept += 1
            per_source[name] = {"extracted": n_ex, "kept": n_kept}
        random.Random("%d:%s" % (SEED, lang)).shuffle(kept)
        held, tr = kept[:HELDOUT], kept[HELDOUT:HELDOUT + args.cap]
        train += tr
        with open(os.path.join(args.out, "heldout.%s.txt" % lang), "w", encoding="utf-8") as f:
            f.write("\n".join(held) + "\n")
        stats[lang] = {"sources": per_source, "sentences": len(kept), "heldout": len(held), "train": len(tr),
                       "sha256_heldout": hashlib.sha256("\n".join(held).encode()).hexdigest()}
        print(lang, stats[lang], flush=True)
    random.Random(SEED).shuffle(train)
    with open(os.path.join(args.out, "train.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(train) + "\n")
    with open(os.path.join(args.out, "heldout.txt"), "w", encoding="utf-8") as f:
        for lang in LANGS:   # the first sentences of each language, for train_tiny.py's running curve
            f.write("".join(l + "\n" for l in open(os.path.join(args.out, "heldout.%s.txt" % lang),
                                                   encoding="utf-8").read().splitlines()[:300]))
    stats["train_sentences"] = len(train)
    stats["sha256_train"] = hashlib.sha256("\n".join(train).encode()).hexdigest()
    with open(os.path.join(args.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
