#!/usr/bin/env python3
"""Build the training / held-out corpus of the bundled tiny model from Debian text packages.

Sources (see notebooks_data/README.md for the licences):
  * WordNet 3.0 glosses and example sentences   Debian package wordnet-base
                                                 (/usr/share/wordnet/data.{noun,verb,adj,adv})
  * King James Bible (1611) verses               Debian packages bible-kjv-text + bible-kjv
                                                 (text decoded with `bible -l 100000 gen1:1-rev22:21`)

Steps: extract text -> fold to ASCII (NFKD, strip accents, straight quotes) -> split into
sentences -> keep 3..80 words -> dedupe (case- and whitespace-insensitive) -> shuffle with a
fixed seed -> hold out 5 % -> write corpus/train.txt and corpus/heldout.txt, one sentence a line.

    apt-get install -y --no-install-recommends wordnet-base bible-kjv-text bible-kjv
    python3 notebooks_data/prepare/prepare_corpus.py
"""
import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import unicodedata

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
SEED = 20210503          # DeBERTa's ICLR 2021 presentation date, used as the corpus seed
HELDOUT_FRACTION = 0.05


def to_ascii(s: str) -> str:
    s = s.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    s = s.replace("\u2013", "-").replace("\u2014", " - ")
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if ord(c) < 128 and (c.isprintable() or c == " "))
    return re.sub(r"\s+", " ", s).strip()


def wordnet_sentences(root="/usr/share/wordnet"):
    """Definitions as "lemma: definition." plus the quoted example sentences of every synset."""
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(root, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue                               # licence header
                head, gloss = line.split("|", 1)
                fields = head.split()
                w_cnt = int(fields[3], 16)
                lemma = fields[4]
                lemma = re.sub(r"\((a|p|ip)\)$", "", lemma).replace("_", " ")
                gloss = gloss.strip()
                q = gloss.find('"')
                definition = (gloss if q < 0 else gloss[:q]).strip().rstrip(";").strip()
                examples = re.findall(r'"([^"]+)"', gloss)
                if definition:
                    d = definition if definition[-1] in ".?!" else definition + "."
                    out.append("%s: %s" % (lemma, d))
                for ex in examples:
                    ex = ex.strip()
                    if ex:
                        out.append(ex)
    return out


def kjv_sentences():
    txt = subprocess.run(["bible", "-l", "100000", "gen1:1-rev22:21"], check=True,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True).stdout
    out = []
    for line in txt.splitlines():
        m = re.match(r"^\s+\d+ (.*)$", line)
        if not m:
            continue                                       # book / chapter headings
        verse = m.group(1)
        for s in re.split(r"(?<=[.?!])\s+(?=[A-Z])", verse):
            out.append(s)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "corpus"))
    args = ap.parse_args()
    sources = {"wordnet": wordnet_sentences(), "kjv": kjv_sentences()}
    seen, items = set(), []
    stats = {}
    for name, sents in sources.items():
        kept = 0
        for s in sents:
            s = to_ascii(s)
            n = len(s.split())
            if n < 3 or n > 80:
                continue
            key = re.sub(r"\s+", " ", s.lower())
            if key in seen:
                continue
            seen.add(key)
            items.append(s)
            kept += 1
        stats[name] = {"extracted": len(sents), "kept": kept}
    rng = random.Random(SEED)
    rng.shuffle(items)
    n_held = int(round(len(items) * HELDOUT_FRACTION))
    held, train = items[:n_held], items[n_held:]
    os.makedirs(args.out, exist_ok=True)
    for fn, data in (("train.txt", train), ("heldout.txt", held)):
        with open(os.path.join(args.out, fn), "w", encoding="ascii") as f:
            f.write("\n".join(data) + "\n")
    stats.update({"seed": SEED, "heldout_fraction": HELDOUT_FRACTION,
                  "train_sentences": len(train), "heldout_sentences": len(held)})
    for fn in ("train.txt", "heldout.txt"):
        with open(os.path.join(args.out, fn), "rb") as f:
            stats["sha256_" + fn] = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(args.out, "stats.json"), "w") as f:
        json.dump(stats, f, indent=2)
    print(json.dumps(stats, indent=2))


if __name__ == "__main__":
    main()
