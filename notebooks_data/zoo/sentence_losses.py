#!/usr/bin/env python3
"""Per-sentence test losses of a zoo model, for the test-set bootstrap of docs/table4.md.

Every zoo run is scored on one fixed test split (heldout.txt after its first 1,000 sentences,
8,628 sentences, the masks of seed EVAL_SEED + 1 = 2022; make_zoo.py). The cards keep only the
totals (cross-entropy, top-1, top-5), so the sampling error of the test split itself (which
sentences happened to be held out) is in no interval over seeds. This script re-scores a model
directory (config.json + model.safetensors) on exactly those masks in float64 and writes, for
every test sentence in file order, its summed negative log-likelihood (nats) over its masked
tokens and the number of masked tokens:

    DIR/test_sentences.json.xz = {"weights_sha256", "sentences", "masked_tokens_total",
                                  "cross_entropy", "nll": [S floats], "masked": [S ints]}

It refuses (exit 1, one line naming DIR) when the re-scored total differs from the card's
cross_entropy by more than 1e-9 nats (relative summation-order differences of float64 are
~1e-15): then the per-sentence numbers would not be the run's.

    /usr/bin/python3 notebooks_data/zoo/sentence_losses.py MODEL_DIR [MODEL_DIR ...]

make_table4.py reads the files (bootstrap over sentences, paired: the same resampled sentences for
both models of a comparison). Only the weights of the shipped runs (seed 1, models/zoo/) and of
runs trained since make_zoo.py wrote this file are on disk; the others' weights were not committed.
"""
import hashlib
import json
import lzma
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)

OUT_NAME = "test_sentences.json.xz"
TOLERANCE = 1e-9   # nats: the re-scored cross-entropy against the card's


def sentence_losses(model_dir):
    """(nll [S] float64, masked [S] int) of the test split's sentences under MODEL_DIR's weights
    (float64), the masks of make_zoo's test evaluation. Source: train_tiny.evaluate, per sentence."""
    import numpy as np
    import sentencepiece as spm
    import torch
    import torch.nn.functional as F
    from lib import deberta_torch as dt
    from train import train_tiny as tt
    from zoo import make_zoo
    torch.set_num_threads(1)
    model = dt.load_model(model_dir, torch.float64)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, "vocab", "spm.model"))
    _, held = tt.encode_file(sp, os.path.join(HERE, "corpus", "heldout.txt"), 128)
    test = held[make_zoo.VALIDATION_SENTENCES:]
    batches = tt.heldout_batches(test, sp.get_piece_size(), seed=make_zoo.EVAL_SEED + 1)
    groups = tt.length_groups(test)
    if len(groups) != len(batches):
        raise RuntimeError("the batches of train_tiny.heldout_batches changed: %d groups, %d batches"
                           % (len(groups), len(batches)))
    nll = np.zeros(len(test), dtype=np.float64)
    masked = np.zeros(len(test), dtype=np.int64)
    with torch.no_grad():
        for idx, (inp, am, lab) in zip(groups, batches):
            if inp.shape[0] != len(idx):
                raise RuntimeError("a batch of %d rows, %d sentences" % (inp.shape[0], len(idx)))
            lab_t = torch.from_numpy(lab)
            pos = torch.nonzero(lab_t >= 0, as_tuple=True)
            logits = model(torch.from_numpy(inp), torch.from_numpy(am), lm_positions=pos)["logits"].to(torch.float64)
            tok = F.cross_entropy(logits, lab_t[pos], reduction="none").numpy()
            rows = pos[0].numpy()
            for r, s in enumerate(idx):
                sel = rows == r
                nll[s] = float(tok[sel].sum())
                masked[s] = int(sel.sum())
    return nll, masked


def write(model_dir):
    """Re-score MODEL_DIR, check the total against its card.json, write OUT_NAME. Returns the record."""
    with open(os.path.join(model_dir, "card.json")) as f:
        card = json.load(f)
    h = hashlib.sha256()
    with open(os.path.join(model_dir, "model.safetensors"), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != card["weights_sha256"]:
        raise SystemExit("sentence_losses: %s: model.safetensors is not the card's weights (sha256 %s, card %s)"
                         % (model_dir, h.hexdigest(), card["weights_sha256"]))
    nll, masked = sentence_losses(model_dir)
    ce = float(nll.sum()) / int(masked.sum())
    if int(masked.sum()) != card["test"]["masked_tokens"] or abs(ce - card["cross_entropy"]) > TOLERANCE:
        raise SystemExit("sentence_losses: %s: re-scored %d tokens, CE %.15f; the card: %d tokens, CE %.15f"
                         % (model_dir, int(masked.sum()), ce, card["test"]["masked_tokens"], card["cross_entropy"]))
    rec = {"weights_sha256": card["weights_sha256"], "variant": card["variant"], "seed": card["seed"],
           "steps": card["steps"], "sentences": int(len(nll)), "masked_tokens_total": int(masked.sum()),
           "cross_entropy": ce, "card_cross_entropy": card["cross_entropy"],
           "split": "heldout.txt sentences 1000..end (file order), masks of seed 2022",
           "nll": [float(x) for x in nll], "masked": [int(x) for x in masked]}
    with lzma.open(os.path.join(model_dir, OUT_NAME), "wt") as f:
        json.dump(rec, f)
    print("%s: %d sentences, CE %.12f (card %.12f)" % (model_dir, len(nll), ce, card["cross_entropy"]), flush=True)
    return rec


def read(path):
    """The record of a test_sentences.json.xz (see the module's doc)."""
    with lzma.open(path, "rt") as f:
        return json.load(f)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    for d in sys.argv[1:]:
        write(d)
