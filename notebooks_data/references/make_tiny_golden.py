#!/usr/bin/env python3
"""Reference tensors of the bundled deberta-tiny model, for the C++ side.

For a few held-out sentences (chosen by length, first match in corpus/heldout.txt order) a few
tokens are replaced by [MASK] at the token level (about 15 % of the tokens, at least one, at most
four, chosen among whole-word pieces, never [CLS]/[SEP]); the model (F32 weights of
models/deberta-tiny upcast to float64) is run in float64 and every intermediate is stored in
the format of notebooks_data/golden/README.md:

    models/deberta-tiny-golden/config.json              copy of the model's config.json
    models/deberta-tiny-golden/golden_{i}.safetensors   one sentence each, inputs [1, N]
    models/deberta-tiny-golden/cases.json               text, pieces, ids, masks, top-5 predictions

golden_5 is golden_0's sentence followed by three padding tokens (id 0, attention_mask 0).
mlm.logits ([N, V]) is not stored (size); mlm.masked_logits is. The per-term scores
layer.{l}.{c2c,c2p,p2c,attn_logits} are stored only in files with N <= 24 (size).

    nice -n 10 python3 notebooks_data/references/make_tiny_golden.py          # write
    nice -n 10 python3 notebooks_data/references/make_tiny_golden.py --check  # recompute and compare

The trained-ablation zoo (docs/table4.md) uses the same script with the three short bins only:

    python3 notebooks_data/references/make_tiny_golden.py --model models/zoo/deberta-tiny-no-c2p \
        --out models/zoo/golden/deberta-tiny-no-c2p --bins 3
"""
import argparse
import json
import os
# One thread everywhere (the machine is shared): OpenBLAS / OpenMP read these at load time,
# before torch.set_num_threads(1) can take effect.
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)
from lib import deberta_torch as dt  # noqa: E402

MASK_SEED = 7
# (min, max) token counts including [CLS] and [SEP], one sentence per bin
LENGTH_BINS = [(8, 10), (12, 16), (18, 24), (28, 34), (44, 52)]
# The per-term scores (c2c, c2p, p2c, attn_logits) of every layer are stored only for N <= this,
# to keep the files small; attn_probs and output are always stored.
MAX_N_FOR_SCORES = 24
N_PAD = 3


def encode_text(sp, text):
    """[CLS] pieces [SEP] of a text that may contain the literal "[MASK]": SentencePiece keeps
    [MASK] as one user-defined piece; a lone "▁" piece directly before it is dropped."""
    mask_id = sp.piece_to_id("[MASK]")
    ids = sp.encode(text)
    out = [i for k, i in enumerate(ids)
           if not (sp.id_to_piece(i) == "\u2581" and k + 1 < len(ids) and ids[k + 1] == mask_id)]
    return [sp.piece_to_id("[CLS]")] + out + [sp.piece_to_id("[SEP]")]


def masked_text(sp, token_ids, masked_positions):
    """The text with each masked piece replaced by "[MASK]" (keeping its word-start space)."""
    parts = []
    for k, t in enumerate(token_ids[1:-1], start=1):
        piece = sp.id_to_piece(int(t))
        if k in masked_positions:
            piece = ("\u2581" if piece.startswith("\u2581") else "") + "[MASK]"
        parts.append(piece)
    return "".join(parts).replace("\u2581", " ").strip()


def pick_sentences(sp, lines, mask_id, rng, bins=LENGTH_BINS):
    picked = []
    for lo, hi in bins:
        for text in lines:
            ids = [1] + sp.encode(text) + [2]
            if lo <= len(ids) <= hi and sp.unk_id() not in ids and text not in [p["text"] for p in picked]:
                break
        else:
            raise RuntimeError("no held-out sentence with %d..%d tokens" % (lo, hi))
        # prefer whole words: a word-start piece followed by another word start, punctuation
        # or [SEP], so that the masked text reads naturally and tokenizes back to input_ids
        def whole_word(p):
            nxt = sp.id_to_piece(ids[p + 1])
            return sp.id_to_piece(ids[p]).startswith("\u2581") and len(sp.id_to_piece(ids[p])) > 1 and (
                ids[p + 1] == 2 or nxt.startswith("\u2581") or not any(ch.isalnum() for ch in nxt))
        inner = np.array([p for p in range(1, len(ids) - 1) if whole_word(p)])
        if inner.size == 0:
            inner = np.arange(1, len(ids) - 1)
        m = int(min(4, max(1, round(0.15 * (len(ids) - 2))), inner.size))
        pos = np.sort(rng.choice(inner, size=m, replace=False))
        masked = list(ids)
        for p in pos:
            masked[p] = mask_id
        picked.append({"text": text, "token_ids": ids, "input_ids": masked,
                       "masked_positions": [int(p) for p in pos]})
    return picked


def golden_tensors(model, input_ids, attention_mask, masked_positions, labels):
    g = {
        "input_ids": np.array([input_ids], dtype=np.int64),
        "attention_mask": np.array([attention_mask], dtype=np.int64),
        "token_type_ids": np.zeros((1, len(input_ids)), dtype=np.int64),
        "mlm.masked_positions": np.array(masked_positions, dtype=np.int64),
    }
    lab = np.zeros((1, len(input_ids)), dtype=np.int64)
    for p, l in zip(masked_positions, labels):
        lab[0, p] = l
    g["mlm.labels"] = lab
    traced = dt.run_traced(model, g)
    traced.pop("mlm.logits")
    if len(input_ids) > MAX_N_FOR_SCORES:
        for k in list(traced):
            if k.startswith("layer.") and k.split(".")[-1] in ("c2c", "c2p", "p2c", "attn_logits"):
                del traced[k]
    for k, v in traced.items():
        g[k] = v.astype(np.int64) if v.dtype.kind in "iu" else v.astype(np.float64)
    return g


# Long cases (a 512-token model): only these tensors are stored, so that a 500-token case stays a
# few MB (the [N, N] maps of every layer would be ~50 MB).
LONG_KEEP = ("input_ids", "attention_mask", "token_type_ids", "embedding_output", "mlm.masked_positions",
             "mlm.labels", "mlm.masked_logits")


def build_long(model, sp, lines, n_tokens, rng, n_masks=12):
    """One held-out sequence of exactly n_tokens: consecutive held-out sentences joined, [CLS] … [SEP],
    with n_masks random ordinary tokens replaced by [MASK]. Stores LONG_KEEP plus every layer's
    output and the EMD outputs."""
    cls, sep, mask_id = sp.piece_to_id("[CLS]"), sp.piece_to_id("[SEP]"), sp.piece_to_id("[MASK]")
    body = []
    for line in lines:
        body.extend(sp.encode(line))
        if len(body) >= n_tokens - 2:
            break
    ids = [cls] + body[: n_tokens - 2] + [sep]
    pos = sorted(int(p) for p in rng.choice(np.arange(1, n_tokens - 1), size=n_masks, replace=False))
    inp = list(ids)
    for p in pos:
        inp[p] = mask_id
    g = golden_tensors(model, inp, [1] * n_tokens, pos, [ids[p] for p in pos])
    keep = {k: v for k, v in g.items()
            if k in LONG_KEEP or (k.startswith("layer.") and k.endswith(".output")) or k.startswith("emd.output.")}
    top = np.argsort(-g["mlm.masked_logits"], axis=-1)[:, :5]
    case = {"file": "golden_long_%d.safetensors" % n_tokens, "seq_len": n_tokens, "token_ids": ids, "input_ids": inp,
            "masked_positions": pos, "labels": [ids[p] for p in pos], "stored_tensors": sorted(keep),
            "top5_ids": top.tolist(), "top5_pieces": [[sp.id_to_piece(int(t)) for t in row] for row in top],
            "label_pieces": [sp.id_to_piece(int(ids[p])) for p in pos],
            "text": "held-out sentences joined from the first line on (%d tokens)" % n_tokens}
    return case, keep


def build(model, sp, lines, bins=LENGTH_BINS):
    rng = np.random.default_rng(MASK_SEED)
    mask_id = sp.piece_to_id("[MASK]")
    cases = pick_sentences(sp, lines, mask_id, rng, bins)
    pad = dict(cases[0])
    pad = {**pad, "token_ids": pad["token_ids"] + [0] * N_PAD, "input_ids": pad["input_ids"] + [0] * N_PAD,
           "padding": N_PAD}
    cases.append(pad)
    files = {}
    for i, c in enumerate(cases):
        n_valid = len(c["input_ids"]) - c.get("padding", 0)
        am = [1] * n_valid + [0] * c.get("padding", 0)
        labels = [c["token_ids"][p] for p in c["masked_positions"]]
        g = golden_tensors(model, c["input_ids"], am, c["masked_positions"], labels)
        files["golden_%d.safetensors" % i] = g
        logits = g["mlm.masked_logits"]
        top = np.argsort(-logits, axis=-1)[:, :5]
        mt = masked_text(sp, c["token_ids"][:len(c["token_ids"]) - c.get("padding", 0)],
                         c["masked_positions"])
        c.update({
            "file": "golden_%d.safetensors" % i,
            "masked_text": mt,
            "masked_text_encodes_to_input_ids":
                encode_text(sp, mt) == c["input_ids"][:len(c["input_ids"]) - c.get("padding", 0)],
            "attention_mask": am,
            "pieces": [sp.id_to_piece(int(t)) for t in c["token_ids"]],
            "input_pieces": [sp.id_to_piece(int(t)) for t in c["input_ids"]],
            "labels": labels,
            "label_pieces": [sp.id_to_piece(int(t)) for t in labels],
            "top5_ids": top.tolist(),
            "top5_pieces": [[sp.id_to_piece(int(t)) for t in row] for row in top],
            "top5_logits": [[float(logits[r, t]) for t in row] for r, row in enumerate(top)],
            "seq_len": len(c["input_ids"]),
        })
    return cases, files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(HERE, "models", "deberta-tiny"))
    ap.add_argument("--heldout", default=os.path.join(HERE, "corpus", "heldout.txt"))
    ap.add_argument("--out", default=os.path.join(HERE, "models", "deberta-tiny-golden"))
    ap.add_argument("--check", action="store_true", help="recompute and compare with --out")
    ap.add_argument("--long", type=int, nargs="*", default=[],
                    help="also a case of each of these lengths (held-out sentences joined; a 512-token model)")
    ap.add_argument("--bins", type=int, default=len(LENGTH_BINS),
                    help="use the first this many length bins (the zoo: 3, N <= 24)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.model, "spm.model"))
    model = dt.load_model(args.model, torch.float64)
    with open(args.heldout) as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    cases, files = build(model, sp, lines, LENGTH_BINS[:args.bins])
    long_rng = np.random.default_rng(MASK_SEED + 1)
    for n in args.long:
        case, g = build_long(model, sp, lines, n, long_rng)
        cases.append(case)
        files[case["file"]] = g
    if args.check:
        worst = 0.0
        for name, g in files.items():
            ref = dt.load_safetensors(os.path.join(args.out, name))
            assert sorted(ref) == sorted(g), name
            for k in g:
                worst = max(worst, float(np.abs(ref[k] - g[k]).max()) if g[k].size else 0.0)
        print("recomputed %d files, max abs diff %.3e" % (len(files), worst))
        sys.exit(0 if worst <= 1e-10 else 1)
    os.makedirs(args.out, exist_ok=True)
    shutil.copyfile(os.path.join(args.model, "config.json"), os.path.join(args.out, "config.json"))
    name_ = os.path.basename(os.path.normpath(args.model))
    wdtype = json.load(open(os.path.join(args.model, "config.json"))).get("torch_dtype", "float32")
    for name, g in files.items():
        dt.save_safetensors(os.path.join(args.out, name), g,
                            {"model": "%s (%s weights upcast to float64)" % (name_, wdtype),
                             "producer": "notebooks_data/references/make_tiny_golden.py"})
    info = {"weights": "%s/model.safetensors (%s; upcast to float64 before running)" %
                       (os.path.relpath(args.model, args.out), wdtype),
            "precision": "float64", "mask_token": "[MASK]", "mask_token_id": sp.piece_to_id("[MASK]"),
            "mask_seed": MASK_SEED, "max_n_for_term_scores": MAX_N_FOR_SCORES,
            "stored_tensors": sorted(files["golden_0.safetensors"]),
            "cases": cases}
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(info, f, indent=1)
    for c in cases:
        print("%s N=%d masked %s -> top1 %s (label %s): %s" % (
            c["file"], c["seq_len"], c["masked_positions"], [t[0] for t in c["top5_pieces"]],
            c["label_pieces"], c["text"][:70]))


if __name__ == "__main__":
    main()
