#!/usr/bin/env python3
"""Extend the bundled deberta-tiny to 512 tokens: deberta-tiny-512 (issue 31, item 6).

The same architecture, vocabulary and masking as train_tiny.py, with max_position_embeddings 512.
Training continues from deberta-tiny's weights (rows 0..127 of the absolute position table, which
only the EMD reads, are kept; rows 128..511 start from N(0, 0.02)) on a mix of batches:
  * half of them ordinary single sentences of corpus/train.txt, as deberta-tiny was trained;
  * half of them packed sequences: consecutive (already shuffled) training sentences joined into
    [CLS] s_1 s_2 ... [SEP] of a length drawn uniformly from 129..512 tokens, so that every
    absolute position and every relative bucket of long inputs is trained.
Held-out numbers are computed on corpus/heldout.txt both as single sentences (the split and
masks of deberta-tiny's eval.json: eval_tiny.py) and packed into sequences of 129..512 tokens.

    nice -n 10 /usr/bin/python3 notebooks_data/train/train_long.py [--time-budget 3000]

Writes models/deberta-tiny-512/{config.json, model.safetensors, spm.model, tokenizer files,
training_log.json}. One thread, seeded; with --time-budget 0 reproducible step for step.
"""
import argparse
import json
import os
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import random
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)
from lib import deberta_torch as dt  # noqa: E402
from train import train_tiny as tt  # noqa: E402

MAX_LEN = 512
LONG_MIN = 129


def pack_sequences(seqs, rng, max_len=MAX_LEN, min_len=LONG_MIN):
    """Join consecutive sentences (without their own [CLS]/[SEP]) into [CLS] ... [SEP] sequences
    whose length is drawn uniformly from min_len..max_len; a sentence that would overflow starts
    the next sequence (a sentence longer than the room left is cut). Returns int64 arrays."""
    cls, sep = tt.SPECIAL["cls"][1], tt.SPECIAL["sep"][1]
    out, cur, target = [], [], int(rng.integers(min_len, max_len + 1))
    for s in seqs:
        body = list(s[1:-1])
        if cur and len(cur) + len(body) + 2 > target:
            if len(cur) + 2 >= min_len:
                out.append(np.array([cls] + cur + [sep], dtype=np.int64))
            cur, target = [], int(rng.integers(min_len, max_len + 1))
        cur.extend(body[: target - 2 - len(cur)])
    if len(cur) + 2 >= min_len:
        out.append(np.array([cls] + cur + [sep], dtype=np.int64))
    return out


def extend_from(model, src_dir):
    """Copy every tensor of the 128-token model into `model`; position rows beyond it stay as
    initialised. Returns the source's config dict."""
    src = dt.load_model(src_dir, dtype=torch.float32)
    sd = src.state_dict()
    with torch.no_grad():
        for name, p in model.state_dict().items():
            if name not in sd:
                continue
            s = sd[name]
            if s.shape == p.shape:
                p.copy_(s)
            elif name == "embeddings.position_embeddings.weight":
                p[: s.shape[0]].copy_(s)
            else:
                raise ValueError("%s: shape %s in %s, %s here" % (name, tuple(s.shape), src_dir, tuple(p.shape)))


def main():
    ap = argparse.ArgumentParser(description="extend deberta-tiny to 512 tokens")
    ap.add_argument("--init-from", default=os.path.join(HERE, "models", "deberta-tiny"))
    ap.add_argument("--train", default=os.path.join(HERE, "corpus", "train.txt"))
    ap.add_argument("--heldout", default=os.path.join(HERE, "corpus", "heldout.txt"))
    ap.add_argument("--spm", default=os.path.join(HERE, "vocab", "spm.model"))
    ap.add_argument("--out", default=os.path.join(HERE, "models", "deberta-tiny-512"))
    ap.add_argument("--seed", type=int, default=512)
    ap.add_argument("--batch-tokens", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--max-steps", type=int, default=6000)
    ap.add_argument("--time-budget", type=float, default=3000.0)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--eval-sentences", type=int, default=2000)
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np_rng = np.random.default_rng(args.seed)
    py_rng = random.Random(args.seed)
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=args.spm)
    V = sp.get_piece_size()
    _, train = tt.encode_file(sp, args.train, 128)
    _, held = tt.encode_file(sp, args.heldout, 128)
    with open(os.path.join(args.init_from, "config.json")) as f:
        cfg_dict = json.load(f)
    cfg_dict["max_position_embeddings"] = MAX_LEN
    cfg_dict["torch_dtype"] = "float32"
    model = dt.DebertaV2(dt.DebertaConfig.from_dict(cfg_dict, with_lm_head=True))
    tt.init_weights(model)
    extend_from(model, args.init_from)

    held_short = tt.heldout_batches(held[: args.eval_sentences], V, seed=2021)
    held_long_seqs = pack_sequences(held, np.random.default_rng(2023))
    held_long = tt.heldout_batches(held_long_seqs[:200], V, seed=2024, batch_tokens=8192)
    print("train %d sentences; held-out long sequences: %d (first 200 in the curve)" %
          (len(train), len(held_long_seqs)), flush=True)

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98), eps=1e-6)

    def lr_at(step, elapsed):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p = step / args.max_steps
        if args.time_budget > 0:
            p = max(p, elapsed / args.time_budget)
        return args.lr * max(0.0, 1.0 - min(1.0, p)) / (1.0 - args.warmup / args.max_steps)

    log = {"config": cfg_dict, "args": vars(args), "init_from": os.path.relpath(args.init_from, HERE),
           "loss_curve": [], "heldout_curve": []}
    os.makedirs(args.out, exist_ok=True)

    def save():
        tt.save_model(model, args.out, cfg_dict, np.float32)
        with open(os.path.join(args.out, "training_log.json"), "w") as f:
            json.dump(log, f, indent=1)

    def evaluate(step, elapsed):
        ev = {"step": step, "seconds": round(elapsed, 1), "short": tt.evaluate(model, held_short),
              "long": tt.evaluate(model, held_long)}
        log["heldout_curve"].append(ev)
        print("  held-out short ce %.4f top5 %.4f | long ce %.4f top5 %.4f" %
              (ev["short"]["cross_entropy"], ev["short"]["top5"], ev["long"]["cross_entropy"], ev["long"]["top5"]),
              flush=True)

    evaluate(0, 0.0)
    step, t0, run_loss, run_n, done = 0, time.time(), 0.0, 0, False
    model.train()
    while not done:
        short = [("s", b) for b in tt.make_batches(train, args.batch_tokens, py_rng)]
        order = list(range(len(train)))
        py_rng.shuffle(order)
        packed = pack_sequences([train[i] for i in order], np_rng)
        long_batches = [("l", b) for b in tt.make_batches(packed, args.batch_tokens, py_rng)]
        mix = []
        for i in range(max(len(short), len(long_batches))):   # alternate short and long batches
            if i < len(long_batches):
                mix.append(long_batches[i])
            if i < len(short):
                mix.append(short[i])
        for kind, b in mix:
            src = packed if kind == "l" else train
            ids, am = tt.pad([src[i] for i in b])
            inp, lab = tt.mask_tokens(ids, am, V, np_rng)
            lab_t = torch.from_numpy(lab)
            pos = torch.nonzero(lab_t >= 0, as_tuple=True)
            lr = lr_at(step, time.time() - t0)
            for g in opt.param_groups:
                g["lr"] = lr
            res = model(torch.from_numpy(inp), torch.from_numpy(am), lm_positions=pos)
            loss = F.cross_entropy(res["logits"], lab_t[pos])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            run_loss, run_n = run_loss + float(loss), run_n + 1
            elapsed = time.time() - t0
            if step % 100 == 0:
                log["loss_curve"].append({"step": step, "seconds": round(elapsed, 1), "lr": lr,
                                          "train_loss": run_loss / run_n})
                print("step %6d %.0fs lr %.2e loss %.4f" % (step, elapsed, lr, run_loss / run_n), flush=True)
                run_loss, run_n = 0.0, 0
            stop = step >= args.max_steps or (args.time_budget > 0 and elapsed >= args.time_budget)
            if step % args.eval_every == 0 or stop:
                evaluate(step, elapsed)
                log.update({"steps": step, "train_seconds": round(elapsed, 1)})
                save()
            if stop:
                done = True
                break
    save()
    shutil.copyfile(args.spm, os.path.join(args.out, "spm.model"))
    tt.write_tokenizer_files(args.out, MAX_LEN)
    print("done: %d steps" % step, flush=True)


if __name__ == "__main__":
    main()
