#!/usr/bin/env python3
"""Evaluate deberta-tiny on the held-out sentences, with a unigram baseline and ablations.

Masking: every held-out sentence, 15 % of its non-special tokens (at least one), 80 % -> [MASK],
10 % -> random piece, 10 % unchanged, drawn with numpy's default_rng(EVAL_SEED) in the order of
the sentences sorted by token count (stable). The exact masks are written to
heldout_masks.txt so that another implementation can reproduce the numbers:
    one line per held-out sentence (same order as corpus/heldout.txt):
    "<token count incl. [CLS]/[SEP]> <pos>:<label id>:<input id> ..."

The model runs in float64 (the F32 weights upcast). Variants (inference-time only, no retraining;
the attention scale stays 1/sqrt(3 d)):
    full   EMD + c2c + c2p + p2c (as trained)
    -EMD   LM head applied to the last encoder layer output directly
    -c2p   c2p term dropped
    -p2c   p2c term dropped
    +p2p   p2p[h,i,j] = s * Q_r[row(i,j)] . K_r[row(i,j)] added

    nice -n 10 python3 notebooks_data/train/eval_tiny.py
"""
import argparse
import json
import math
import os
# One thread everywhere (the machine is shared): OpenBLAS / OpenMP read these at load time,
# before torch.set_num_threads(1) can take effect.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)
from lib import deberta_torch as dt  # noqa: E402
from train import train_tiny as tt  # noqa: E402

EVAL_SEED = 2021


def masked_heldout(seqs, vocab_size, seed, batch_tokens=4096):
    """Like train_tiny.heldout_batches, but also returns the per-sentence masks."""
    rng = np.random.default_rng(seed)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    groups, cur = [], []
    for i in order:
        if cur and len(seqs[i]) * (len(cur) + 1) > batch_tokens:
            groups.append(cur)
            cur = []
        cur.append(i)
    if cur:
        groups.append(cur)
    batches, per_sentence = [], [None] * len(seqs)
    for g in groups:
        ids, am = tt.pad([seqs[i] for i in g])
        inp, lab = tt.mask_tokens(ids, am, vocab_size, rng)
        batches.append((inp, am, lab))
        for r, i in enumerate(g):
            pos = np.nonzero(lab[r] >= 0)[0]
            per_sentence[i] = [(int(p), int(lab[r, p]), int(inp[r, p])) for p in pos]
    return batches, per_sentence


def unigram_baseline(train_seqs, batches, vocab_size):
    """Predict every masked token from the training-set piece frequencies (add-one smoothed
    over the non-special pieces)."""
    counts = np.zeros(vocab_size, dtype=np.float64)
    for s in train_seqs:
        np.add.at(counts, s, 1)
    counts[:tt.N_SPECIAL] = 0
    p = counts + 1.0
    p[:tt.N_SPECIAL] = 0
    p /= p.sum()
    top5 = np.argsort(-p)[:5]
    ys = np.concatenate([lab[lab >= 0] for _, _, lab in batches])
    return {"masked_tokens": int(ys.size), "cross_entropy": float(-np.log(p[ys]).mean()),
            "top1": float((ys == top5[0]).mean()), "top5": float(np.isin(ys, top5).mean())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(HERE, "models", "deberta-tiny"))
    ap.add_argument("--train", default=os.path.join(HERE, "corpus", "train.txt"))
    ap.add_argument("--heldout", default=os.path.join(HERE, "corpus", "heldout.txt"))
    ap.add_argument("--masks-out", default=os.path.join(HERE, "models", "deberta-tiny-golden",
                                                        "heldout_masks.txt"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N held-out sentences")
    ap.add_argument("--max-len", type=int, default=128,
                    help="sentence truncation (128: the split and masks of deberta-tiny's eval.json for any model)")
    ap.add_argument("--long", action="store_true",
                    help="also score the held-out sentences packed into sequences of 129..512 tokens "
                         "(train_long.pack_sequences, seed 2023; masks of seed 2024), for a 512-token model")
    args = ap.parse_args()
    torch.set_num_threads(1)
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.model, "spm.model"))
    model = dt.load_model(args.model, torch.float64)
    V = model.cfg.vocab_size
    max_len = min(args.max_len, model.cfg.max_position_embeddings)
    _, held = tt.encode_file(sp, args.heldout, max_len)
    if args.limit:
        held = held[:args.limit]
    batches, masks = masked_heldout(held, V, EVAL_SEED)
    os.makedirs(os.path.dirname(args.masks_out), exist_ok=True)
    with open(args.masks_out, "w") as f:
        for s, m in zip(held, masks):
            f.write("%d %s\n" % (len(s), " ".join("%d:%d:%d" % t for t in m)))

    _, train = tt.encode_file(sp, args.train, max_len)
    results = {"heldout_sentences": len(held), "eval_seed": EVAL_SEED, "masking": "15% of non-special tokens "
               "(>= 1 per sentence), 80% [MASK] / 10% random / 10% unchanged",
               "precision": "float64 (F32 weights upcast)",
               "baseline_unigram": unigram_baseline(train, batches, V), "model": {}}
    variants = [
        ("full", dt.Ablation(), True),
        ("-EMD", dt.Ablation(), False),
        ("-c2p", dt.Ablation(c2p=False), True),
        ("-p2c", dt.Ablation(p2c=False), True),
        ("+p2p", dt.Ablation(p2p=True), True),
    ]
    for name, abl, emd in variants:
        t0 = time.time()
        r = tt.evaluate(model, batches, ablation=abl, use_emd=emd)
        model.eval()
        r["seconds"] = round(time.time() - t0, 1)
        results["model"][name] = r
        print("%-6s ce %.4f top1 %.4f top5 %.4f  (%.0fs)" % (name, r["cross_entropy"], r["top1"],
                                                            r["top5"], r["seconds"]), flush=True)
    if args.long:
        import numpy as np
        from train import train_long
        seqs = train_long.pack_sequences(held, np.random.default_rng(2023))
        long_batches, _ = masked_heldout(seqs, V, 2024)
        results["long"] = {"sequences": len(seqs), "min_tokens": int(min(len(s) for s in seqs)),
                           "max_tokens": int(max(len(s) for s in seqs)), "mask_seed": 2024,
                           "packing": "train_long.pack_sequences(heldout sentences, default_rng(2023))", "model": {}}
        for name, abl, emd in variants[:2]:
            t0 = time.time()
            r = tt.evaluate(model, long_batches, ablation=abl, use_emd=emd)
            model.eval()
            r["seconds"] = round(time.time() - t0, 1)
            results["long"]["model"][name] = r
            print("long %-6s ce %.4f top1 %.4f top5 %.4f  (%.0fs)" % (name, r["cross_entropy"], r["top1"],
                                                                     r["top5"], r["seconds"]), flush=True)
    b = results["baseline_unigram"]
    print("unigram ce %.4f top1 %.4f top5 %.4f" % (b["cross_entropy"], b["top1"], b["top5"]))
    with open(os.path.join(args.model, "eval.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
