#!/usr/bin/python3
"""english_prose_check.py — English prose left on screen in a translated interface (issue 54, item 6).

Usage: english_prose_check.py LOG LANG [--all-windows]

LOG is `deberta-viewer --tour --log-text LOG` (every string each stop's last frame drew, through
Dear ImGui's log; viewer/ui/layout.h). The stops read are the Equation tab, the Lesson tab and each
lesson step with its working shown, and the Predictions, Compare, Pipeline and Token links tabs; of
each, the window of the tabs ("## Explorer"), or every window
with --all-windows. Fails (exit 1) on a run of two or more English words in a row that the
allow-list below does not cover, printing each with its stop.

A word is English when it is made of Latin letters only and Debian's English word list
(wamerican) has it, and, in Italian, Debian's Italian word list (witalian) does not. Not words:
anything with a digit, an underscore, a symbol or a non-Latin letter (c2p, Q_r, δ(i,j), 層), and
names written in capitals (EMD, MLM, KL). Not read: quotations ("…", “…”, 「…」, '…' — the paper's words,
the learner's sentences and token names are quoted), and the allow-list: the paper's own terms,
tensor and model names, and the English loanwords the catalogues chose in their glossaries.
"""
import re
import sys

# The paper's symbols and terms kept in English in every catalogue (docs/i18n.md), model and
# tensor names, the tools named on screen, and the loanwords of each glossary (the .po headers).
ALLOW = {
    # the paper's words, names and references
    "softmax", "logit", "logits", "appendix", "arxiv", "transformer", "hugging", "face", "microsoft",
    "deberta", "bert", "roberta", "sentencepiece", "wordpiece", "ctrl", "enhanced", "mask", "decoder",
    # Italian's loanwords (it.po's glossary): token, layer, embedding, query, logit, softmax, bucket
    "token", "tokens", "layer", "embedding", "embeddings", "query", "bucket", "buckets", "tokenizer", "zoo",
    "heatmap", "trace", "score", "batch", "encoder", "head", "feed", "forward",
    # Italian's baseline (it.po: "Baseline: il modello come addestrato") and "vs" (A vs B, every language)
    "baseline", "vs",
}
# Words that are labels of the paper in the viewer in every language: never prose by themselves.
NOT_PROSE_PAIRS = {("hugging", "face"), ("enhanced", "mask"), ("mask", "decoder")}

WORD = re.compile(r"^[A-Za-z]+$")
EDGE = "()[]{}.,;:!?\"'“”‘’«»「」『』（）［］、。，：；！？・…—–-·|=+<>/*"


def load_words(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return {w.strip().lower() for w in f if w.strip()}
    except OSError:
        sys.exit(f"english_prose_check: cannot read {path} (Debian's wamerican / witalian: scripts/setup.sh)")


def stops(log):
    """(name, {window: text}) of each tour stop."""
    out = []
    for block in re.split(r"^#### tour: ", log, flags=re.M)[1:]:
        name, _, body = block.partition("\n")
        windows = {}
        for w in re.split(r"^## ", body, flags=re.M)[1:]:
            title, _, text = w.partition("\n")
            windows[title.strip()] = text
        out.append((name.strip(), windows))
    return out


# The tour's stops read (tab names of --panel): the Equation tab, the lesson, the predictions with
# their "[MASK] at" table, Compare, and the two diagrams (their labels, drawn into a draw list, are
# logged by panel_diagrams.cpp).
READ_TABS = ("equation", "lesson", "predictions", "compare", "pipeline", "links")

# Terms a catalogue's glossary keeps in English as a whole (it.po: "masked language model (MLM)").
ALLOW_PHRASES = ["masked language model", "test set"]


def unquoted(text):
    for phrase in ALLOW_PHRASES:
        text = re.sub(re.escape(phrase), " ", text, flags=re.I)
    text = re.sub(r"“[^”]*”", " ", text, flags=re.S)
    text = re.sub(r"「[^」]*」", " ", text, flags=re.S)  # Japanese quotation marks (a notebook's heading, as written)
    text = re.sub(r"‘[^’\n]*’", " ", text)
    text = re.sub(r"\"[^\"]{0,400}\"", " ", text, flags=re.S)
    # '…' opened after a non-letter and closed before one (Italian's l'… and dell'… are not quotes)
    text = re.sub(r"(?<![A-Za-zÀ-ÿ])'[^'\n]{0,200}'(?![A-Za-zÀ-ÿ])", " ", text)
    return text


def english_runs(text, english, italian, lang):
    runs = []
    for line in unquoted(text).split("\n"):
        run = []
        for raw in line.split() + [""]:
            w = raw.strip(EDGE)
            is_word = bool(WORD.match(w)) and not (len(w) > 1 and w.isupper())
            low = w.lower()
            eng = (is_word and low in english and low not in ALLOW and len(w) > 1 and
                   not (lang == "it" and low in italian))
            if eng:
                run.append(w)
                # a word followed by punctuation other than a space ends the run after it
                if raw != w and raw.rstrip(EDGE) != raw and raw[-1] in ".;:!?。，、":
                    if len(run) >= 2:
                        runs.append(" ".join(run))
                    run = []
            else:
                if len(run) >= 2 and tuple(x.lower() for x in run) not in NOT_PROSE_PAIRS:
                    runs.append(" ".join(run))
                run = []
    return runs


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    log_path, lang = args
    all_windows = "--all-windows" in sys.argv
    english = load_words("/usr/share/dict/american-english")
    italian = load_words("/usr/share/dict/italian") if lang == "it" else set()
    with open(log_path, encoding="utf-8", errors="replace") as f:
        log = f.read()
    wanted = [(n, w) for n, w in stops(log)
              if n in READ_TABS or (n.startswith("lesson step") and n.endswith("show the working"))]
    missing = [t for t in READ_TABS if t not in {n for n, _ in wanted}]
    if len(wanted) < 3 or missing:
        sys.exit(f"english_prose_check: {log_path} holds {len(wanted)} of the stops read, none of {missing} (a --tour log?)")
    found = 0
    seen = set()
    for name, windows in wanted:
        for title, text in windows.items():
            if not all_windows and title != "Explorer":
                continue
            for run in english_runs(text, english, italian, lang):
                if (title, run) in seen:
                    continue
                seen.add((title, run))
                found += 1
                print(f"{lang}: {name} [{title}]: English prose: \"{run}\"")
    print(f"english_prose_check: {lang}: {len(wanted)} stops read, {found} English runs")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
