#!/usr/bin/python3
"""The training text of deberta-tiny-multilingual's second version (issue 54, item 7): the Debian text
of the first version (corpus_multilingual/train.txt.xz, prepare_multilingual_corpus.py) beside
everyday sentences written for the project (corpus_multilingual/everyday/<lang>.{a,b}.txt: home,
school, food, weather, travel, work, family, the city; ko, ja, zh (Simplified), it).

  /usr/bin/python3 notebooks_data/prepare/prepare_everyday_corpus.py [--debian-share 0.5] [--repeat 5]

Steps: NFC; blank lines and lines of fewer than 4 characters dropped; exact duplicates dropped; every
sentence of a held-out file (everyday/heldout.<lang>.txt, and the Debian held-out files) removed from
the training text; the Debian text subsampled to --debian-share of its sentences (seed 20210503);
each everyday sentence written --repeat times (everyday text is a few percent of the Debian text's
size, and it is the register the model is for); shuffled (same seed).

Writes corpus_multilingual/train_everyday.txt (not committed: rebuilt from the committed inputs) and
corpus_multilingual/everyday/stats.json (counts per language and file, sha256 of every input and
held-out file, the arguments).
"""
import argparse
import glob
import hashlib
import json
import lzma
import os
import random
import unicodedata

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
CORPUS = os.path.join(HERE, "corpus_multilingual")
EVERYDAY = os.path.join(CORPUS, "everyday")
LANGS = ["ko", "ja", "zh", "it"]
SEED = 20210503


def norm(line):
    """One sentence as it is compared and written: NFC, surrounding white space removed."""
    return unicodedata.normalize("NFC", line).strip()


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [s for s in (norm(l) for l in f) if len(s) >= 4]


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--debian-share", type=float, default=0.5, help="share of the Debian sentences kept")
    ap.add_argument("--repeat", type=int, default=5, help="times each everyday sentence is written")
    ap.add_argument("--out", default=os.path.join(CORPUS, "train_everyday.txt"))
    args = ap.parse_args()
    rng = random.Random(SEED)

    held, held_lines = set(), {}
    # The arguments as they make the text: the output named relative to notebooks_data/, not this machine.
    stats = {"seed": SEED, "args": dict(vars(args), out=os.path.relpath(args.out, HERE)), "languages": {}, "inputs": {}}
    for path in sorted(glob.glob(os.path.join(CORPUS, "heldout*.txt")) +
                       glob.glob(os.path.join(EVERYDAY, "heldout.*.txt"))):
        held_lines[path] = read_lines(path)
        held.update(held_lines[path])
        stats["inputs"][os.path.relpath(path, HERE)] = sha256_file(path)

    everyday = []
    for lang in LANGS:
        seen, per_file = set(), {}
        for path in sorted(glob.glob(os.path.join(EVERYDAY, "%s.*.txt" % lang))):
            lines = read_lines(path)
            kept = [s for s in lines if s not in held and s not in seen]
            seen.update(kept)
            per_file[os.path.basename(path)] = {"lines": len(lines), "kept": len(kept)}
            stats["inputs"][os.path.relpath(path, HERE)] = sha256_file(path)
            everyday.extend(kept)
        held_lang = held_lines.get(os.path.join(EVERYDAY, "heldout.%s.txt" % lang), [])
        stats["languages"][lang] = {"files": per_file, "train_sentences": len(seen),
                                    "heldout_sentences": len(held_lang)}

    debian_path = os.path.join(CORPUS, "train.txt.xz")
    with lzma.open(debian_path, "rt", encoding="utf-8") as f:
        debian = [s for s in (norm(l) for l in f) if len(s) >= 4 and s not in held]
    stats["inputs"][os.path.relpath(debian_path, HERE)] = sha256_file(debian_path)
    rng.shuffle(debian)
    debian = debian[:int(len(debian) * args.debian_share)]

    train = debian + everyday * args.repeat
    rng.shuffle(train)
    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(s + "\n" for s in train)
    stats.update({"debian_sentences": len(debian), "everyday_sentences": len(everyday),
                  "train_lines": len(train)})
    with open(os.path.join(EVERYDAY, "stats.json"), "w", encoding="utf-8") as f:
        json.dump(stats, f, indent=1, ensure_ascii=False)
    print("%s: %d lines (%d Debian sentences, %d everyday sentences x %d)"
          % (args.out, len(train), len(debian), len(everyday), args.repeat))


if __name__ == "__main__":
    main()
