#!/usr/bin/env python3
"""Train a tiny replaced-token-detection (RTD) discriminator the DeBERTa-v3 way: deberta-tiny-rtd.

What this is
    ELECTRA-style pre-training as DeBERTa-v3 does it (He et al., "DeBERTaV3: Improving DeBERTa
    using ELECTRA-Style Pre-Training with Gradient-Disentangled Embedding Sharing", 2021), at toy
    scale, on one CPU thread:
      1. mask 15 % of the non-special tokens of a corpus sentence (every chosen token -> [MASK]);
      2. the generator — the bundled masked-LM model notebooks_data/models/deberta-tiny, frozen,
         decoding as it was trained (through its Enhanced Mask Decoder) — gives a distribution
         over the vocabulary at each masked position; one replacement is sampled from it
         (temperature 1; the five special pieces [PAD] [CLS] [SEP] [UNK] [MASK] are excluded);
      3. the discriminator reads the corrupted sentence and predicts, for every non-pad token,
         "was this token replaced?" with binary cross-entropy. A sampled token equal to the
         original counts as original (ELECTRA / DeBERTa-v3 label: corrupted[i] != original[i]).
    The discriminator has deberta-tiny's shape and its encoder is initialised from the
    generator's (v3 shares the embeddings of generator and discriminator; here the generator is
    frozen and the discriminator starts from a copy of all its encoder weights, then trains
    them all). Its head is microsoft's LMMaskPredictionHead (deberta_torch.MaskPredictionHead):
        rtd.logits = classifier(act(dense(LayerNorm(h[0] + h))))
    float32 training, one thread, fixed seeds.

What it is not
    Not the full v3 recipe: the generator is not trained jointly (it is the finished deberta-tiny),
    there is no gradient-disentangled embedding sharing (E_D = sg(E_G) + E_Delta), and the corpus
    is the project's small one.

Saved layout (a released v3 discriminator, microsoft/deberta-v3-xsmall style)
    config.json with "architectures": ["DebertaV2ForPreTraining"]; model.safetensors (F16) with
    the encoder under "deberta." (deberta.embeddings.*, deberta.encoder.*), the head under
    "mask_predictions.{dense,LayerNorm,classifier}.*", and — like the released checkpoints —
    an "lm_predictions.lm_head.*" MLM head that the discriminator never trained (a copy of the
    generator's). The core reads this as an RTD model (task_head_plan) with RTD as its default head.

Usage
    nice -n 10 /usr/bin/python3 notebooks_data/train/train_rtd.py --time-budget 3000 \\
        --out notebooks_data/models/deberta-tiny-rtd --log /tmp/train_rtd.log
    /usr/bin/python3 notebooks_data/train/train_rtd.py --golden-only      # float64 reference tensors
    /usr/bin/python3 notebooks_data/train/train_rtd.py --eval-only        # eval.json of the saved model

Writes into --out: config.json, model.safetensors (F16), spm.model + tokenizer files (copied from
the generator), training_log.json, eval.json; into <out>-golden: golden_*.safetensors (float64
tensors of the PyTorch twin run on the stored F16 weights: embedding_output, layer.{l}.output,
rtd.logits) and cases.json.
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
from train.train_tiny import N_SPECIAL, SPECIAL, encode_file, make_batches, pad  # noqa: E402

MASK_ID = SPECIAL["mask"][1]
# Inputs of the reference tensors and of the model card (the second has a replaced word).
GOLDEN_TEXTS = ["the king sat on his throne", "the king sat on his banana",
                "She poured the milk into a glass and drank it."]


# --------------------------------------------------------------------------------------------
# [SECTION] corruption: masking and sampling from the generator
# --------------------------------------------------------------------------------------------

def choose_positions(ids, am, rng: np.random.Generator, p):
    """Chosen positions [B, N] bool: each non-special, unpadded token with probability p, at least
    one per sentence that has a candidate."""
    cand = (ids >= N_SPECIAL) & (am == 1)
    u = rng.random(ids.shape)
    u[~cand] = 2.0
    chosen = u < p
    for b in range(ids.shape[0]):
        if not chosen[b].any() and cand[b].any():
            chosen[b, int(np.argmin(u[b]))] = True
    return chosen


def corrupt(generator, ids, am, rng: np.random.Generator, tgen: torch.Generator, p=0.15):
    """ids, am int64 [B, N] (numpy). Returns (corrupted ids [B, N], labels [B, N] float32 with
    1 = replaced (differs from the original), chosen [B, N] bool).

    The generator sees the sentence with every chosen token replaced by [MASK] and decodes as it
    was trained (its EMD); replacements are sampled from softmax(logits) over the ordinary pieces."""
    chosen = choose_positions(ids, am, rng, p)
    gen_in = np.where(chosen, MASK_ID, ids)
    pos = torch.nonzero(torch.from_numpy(chosen), as_tuple=True)
    with torch.no_grad():
        logits = generator(torch.from_numpy(gen_in), torch.from_numpy(am), lm_positions=pos)["logits"]
        logits[:, :N_SPECIAL] = float("-inf")
        sampled = torch.multinomial(torch.softmax(logits.float(), -1), 1, generator=tgen)[:, 0]
    out = ids.copy()
    out[pos[0].numpy(), pos[1].numpy()] = sampled.numpy()
    labels = (out != ids).astype(np.float32)
    return out, labels, chosen


def heldout_set(generator, seqs, seed, batch_tokens=4096, p=0.15):
    """Deterministic corrupted held-out batches (fixed numpy and torch seeds): a list of
    (corrupted, am, labels, chosen)."""
    rng = np.random.default_rng(seed)
    tgen = torch.Generator().manual_seed(seed)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    groups, cur = [], []
    for i in order:
        if cur and len(seqs[i]) * (len(cur) + 1) > batch_tokens:
            groups.append(cur)
            cur = []
        cur.append(i)
    if cur:
        groups.append(cur)
    out = []
    for g in groups:
        ids, am = pad([seqs[i] for i in g])
        c, lab, chosen = corrupt(generator, ids, am, rng, tgen, p)
        out.append((c, am, lab, chosen))
    return out


# --------------------------------------------------------------------------------------------
# [SECTION] metrics
# --------------------------------------------------------------------------------------------

def roc_auc(scores, labels):
    """Area under the ROC curve = P(score of a replaced token > score of an original one), ties
    counted one half (Mann-Whitney U from average ranks)."""
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels).astype(bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    s = scores[order]
    ranks = np.empty(len(s), dtype=np.float64)
    i = 0
    while i < len(s):          # average ranks over runs of equal scores
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = 0.5 * (i + j) + 1.0
        i = j + 1
    r = np.empty_like(ranks)
    r[order] = ranks
    return float((r[labels].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def binary_metrics(probs, labels, threshold=0.5):
    probs, labels = np.asarray(probs, dtype=np.float64), np.asarray(labels).astype(bool)
    pred = probs > threshold
    tp = int((pred & labels).sum()); fp = int((pred & ~labels).sum())
    fn = int((~pred & labels).sum()); tn = int((~pred & ~labels).sum())
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return {"tokens": int(len(labels)), "replaced_tokens": int(labels.sum()),
            "accuracy": (tp + tn) / len(labels),
            "all_original_baseline_accuracy": float((~labels).mean()),
            "precision_replaced": prec, "recall_replaced": rec,
            "f1_replaced": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
            "roc_auc": roc_auc(probs, labels),
            "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn}}


def evaluate(disc, held, full=False):
    """Metrics over every non-pad token (what the loss is trained on) and, with full=True, also
    over the content tokens only ([CLS] and [SEP] left out) and at the masked positions."""
    disc.eval()
    P, Y, content, chosen_all = [], [], [], []
    nll, n = 0.0, 0
    with torch.no_grad():
        for c, am, lab, chosen in held:
            logits = disc(torch.from_numpy(c), torch.from_numpy(am), run_lm_head=False)["rtd_logits"].double()
            m = am == 1
            lt, yt = logits.numpy()[m], lab[m].astype(np.float64)
            nll += float(F.binary_cross_entropy_with_logits(torch.from_numpy(lt), torch.from_numpy(yt), reduction="sum"))
            n += len(yt)
            P.append(1.0 / (1.0 + np.exp(-lt)))
            Y.append(yt)
            content.append((c >= N_SPECIAL)[m])
            chosen_all.append(chosen[m])
    disc.train()
    P, Y = np.concatenate(P), np.concatenate(Y)
    out = {"bce": nll / n, "all_tokens": binary_metrics(P, Y)}
    if full:
        content, chosen_all = np.concatenate(content), np.concatenate(chosen_all)
        out["content_tokens"] = binary_metrics(P[content], Y[content])
        out["masked_positions"] = {"count": int(chosen_all.sum()),
                                   "generator_sampled_the_original": float(1.0 - Y[chosen_all].mean()),
                                   "metrics": binary_metrics(P[chosen_all], Y[chosen_all])}
    return out


# --------------------------------------------------------------------------------------------
# [SECTION] models and files
# --------------------------------------------------------------------------------------------

def make_discriminator(generator, gen_cfg_dict):
    """deberta-tiny's shape + MaskPredictionHead; every generator tensor (encoder, position
    table, LM head) copied; the head initialised N(0, 0.02) / zero bias / LayerNorm 1, 0."""
    cfg = dt.DebertaConfig.from_dict(gen_cfg_dict, with_lm_head=True)
    cfg.with_rtd_head = True
    disc = dt.DebertaV2(cfg)
    res = disc.load_state_dict(generator.state_dict(), strict=False)
    assert not res.unexpected_keys and all(k.startswith("mask_predictions.") for k in res.missing_keys), res
    mp = disc.mask_predictions
    for lin in (mp.dense, mp.classifier):
        torch.nn.init.normal_(lin.weight, 0.0, 0.02)
        torch.nn.init.zeros_(lin.bias)
    return disc


def out_config(gen_cfg_dict):
    c = dict(gen_cfg_dict)
    c.update({"architectures": ["DebertaV2ForPreTraining"], "torch_dtype": "float16"})
    return c


def save(disc, out, cfg_dict, generator_dir):
    os.makedirs(out, exist_ok=True)
    sd = dt.to_task_checkpoint_names(dt.state_dict_numpy(disc, np.float16))
    dt.save_safetensors(os.path.join(out, "model.safetensors"), sd, {"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg_dict, f, indent=2)
    for name in ("spm.model", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(os.path.join(generator_dir, name), os.path.join(out, name))


def encode_text(sp, text):
    return [SPECIAL["cls"][1]] + sp.encode(text) + [SPECIAL["sep"][1]]


def write_golden(out, gdir, sp, held_example):
    """float64 tensors of the PyTorch twin on the stored F16 weights (load_model reads them
    exactly into float64): embedding_output, layer.{l}.output, rtd.logits per input."""
    model = dt.load_model(out, torch.float64)
    assert model.cfg.with_rtd_head and model.cfg.with_lm_head
    os.makedirs(gdir, exist_ok=True)
    shutil.copyfile(os.path.join(out, "config.json"), os.path.join(gdir, "config.json"))
    inputs = [(t, encode_text(sp, t)) for t in GOLDEN_TEXTS]
    inputs.append(("held-out sentence corrupted by the generator: " + held_example[0], held_example[1]))
    cases = []
    for k, (text, ids) in enumerate(inputs):
        g = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), dtype=np.int64)}
        trace = {}
        with torch.no_grad():
            res = model(torch.from_numpy(g["input_ids"]), torch.from_numpy(g["attention_mask"]), trace=trace,
                        run_lm_head=False)
        g["embedding_output"] = trace["embedding_output"].numpy()[0]
        for l in range(model.cfg.num_hidden_layers):
            g["layer.%d.output" % l] = trace["layer.%d.output" % l].numpy()[0]
        g["rtd.logits"] = res["rtd_logits"].numpy()[0]
        dt.save_safetensors(os.path.join(gdir, "golden_%d.safetensors" % k), g,
                            {"producer": "notebooks_data/train/train_rtd.py", "model": os.path.basename(out)})
        p = 1.0 / (1.0 + np.exp(-g["rtd.logits"]))
        cases.append({"text": text, "pieces": [sp.id_to_piece(int(i)) for i in ids],
                      "p_replaced": [round(float(x), 6) for x in p]})
    with open(os.path.join(gdir, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    return cases


# --------------------------------------------------------------------------------------------
# [SECTION] main
# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generator", default=os.path.join(HERE, "models", "deberta-tiny"))
    ap.add_argument("--train", default=os.path.join(HERE, "corpus", "train.txt"))
    ap.add_argument("--heldout", default=os.path.join(HERE, "corpus", "heldout.txt"))
    ap.add_argument("--out", default=os.path.join(HERE, "models", "deberta-tiny-rtd"))
    ap.add_argument("--log", default="", help="also append progress lines to this file")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--mask-prob", type=float, default=0.15)
    ap.add_argument("--batch-tokens", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--max-steps", type=int, default=100000)
    ap.add_argument("--time-budget", type=float, default=3000.0,
                    help="seconds of training; the learning rate decays to 0 by then (0: none)")
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--eval-sentences", type=int, default=2000)
    ap.add_argument("--progress-sentences", type=int, default=400,
                    help="held-out sentences of the evaluations during training")
    ap.add_argument("--golden-only", action="store_true", help="only write <out>-golden from the saved model")
    ap.add_argument("--eval-only", action="store_true", help="only evaluate the saved model into eval.json")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    np_rng = np.random.default_rng(args.seed)
    py_rng = random.Random(args.seed)
    tgen = torch.Generator().manual_seed(args.seed)
    t_start = time.time()
    logf = open(args.log, "a") if args.log else None

    def say(msg):
        line = "[%s] %s" % (time.strftime("%H:%M:%S"), msg)
        print(line, flush=True)
        if logf:
            logf.write(line + "\n")
            logf.flush()

    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.generator, "spm.model"))
    for piece, i in SPECIAL.values():
        if sp.piece_to_id(piece) != i:
            sys.exit("%s: piece %s has id %d, expected %d" % (args.generator, piece, sp.piece_to_id(piece), i))
    with open(os.path.join(args.generator, "config.json")) as f:
        gen_cfg_dict = json.load(f)
    max_len = int(gen_cfg_dict["max_position_embeddings"])
    for path in (args.train, args.heldout):
        if not os.path.isfile(path):
            sys.exit("%s: missing (for train.txt: xz -dkc %s.xz > %s)" % (path, path, path))

    generator = dt.load_model(args.generator, torch.float32)
    if not generator.runs_emd():
        sys.exit("%s: the generator does not run its EMD (expected deberta-tiny)" % args.generator)
    for p in generator.parameters():
        p.requires_grad_(False)
    generator.eval()
    held_lines, held = encode_file(sp, args.heldout, max_len)
    held_eval = heldout_set(generator, held[:args.eval_sentences], seed=args.seed + 1, p=args.mask_prob)
    held_progress = heldout_set(generator, held[:args.progress_sentences], seed=args.seed + 1, p=args.mask_prob)
    gdir = args.out.rstrip("/") + "-golden"

    if args.golden_only or args.eval_only:
        disc = dt.load_model(args.out, torch.float32)
        if args.eval_only:
            ev = evaluate(disc, held_eval, full=True)
            ev["heldout_sentences"] = len(held[:args.eval_sentences])
            with open(os.path.join(args.out, "eval.json"), "w") as f:
                json.dump(ev, f, indent=1)
            say("eval: %s" % json.dumps(ev["all_tokens"]))
        if args.golden_only:
            c, am, lab, chosen = held_eval[0]
            row = int(np.argmax(lab.sum(1)))          # a sentence of the first batch with a replacement
            ids = [int(x) for x, m in zip(c[row], am[row]) if m]
            cases = write_golden(args.out, gdir, sp, (sp.decode(ids[1:-1]), ids))
            for cs in cases:
                say("golden: %s -> %s" % (cs["text"], list(zip(cs["pieces"], cs["p_replaced"]))))
        return

    say("generator %s; train %s; held-out %d sentences (progress %d)" %
        (args.generator, args.train, len(held[:args.eval_sentences]), len(held[:args.progress_sentences])))
    _, train = encode_file(sp, args.train, max_len)
    say("train: %d sentences, %d tokens" % (len(train), sum(len(s) for s in train)))
    disc = make_discriminator(generator, gen_cfg_dict)
    cfg_dict = out_config(gen_cfg_dict)
    trainable = [(n, p) for n, p in disc.named_parameters() if not n.startswith("lm_predictions.")]
    for n, p in disc.named_parameters():
        p.requires_grad_(not n.startswith("lm_predictions."))
    opt = torch.optim.AdamW([{"params": [p for n, p in trainable if p.dim() >= 2], "weight_decay": args.weight_decay},
                             {"params": [p for n, p in trainable if p.dim() < 2], "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.98), eps=1e-6)

    ev0 = evaluate(disc, held_progress)
    say("before training: held-out bce %.4f acc %.4f (all-original %.4f)" %
        (ev0["bce"], ev0["all_tokens"]["accuracy"], ev0["all_tokens"]["all_original_baseline_accuracy"]))
    log = {"args": vars(args), "seed": args.seed, "generator": os.path.relpath(args.generator, HERE),
           "init": "discriminator encoder, position table and (untrained) LM head copied from the generator; "
                   "mask_predictions head N(0, 0.02)",
           "train_sentences": len(train), "heldout_before": ev0, "loss_curve": [], "heldout_curve": []}

    def progress(step, elapsed):
        p = step / args.max_steps
        if args.time_budget > 0:
            p = max(p, elapsed / args.time_budget)
        return min(1.0, p)

    def lr_at(step, elapsed):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        return args.lr * max(0.0, 1.0 - progress(step, elapsed)) / (1.0 - min(0.99, args.warmup / args.max_steps))

    step, epoch, t0 = 0, 0, time.time()
    run = {"loss": 0.0, "n": 0, "replaced": 0.0, "tokens": 0.0, "same": 0, "chosen": 0}
    done = False
    disc.train()
    while not done:
        for b in make_batches(train, args.batch_tokens, py_rng):
            ids, am = pad([train[i] for i in b])
            c, lab, chosen = corrupt(generator, ids, am, np_rng, tgen, args.mask_prob)
            lr = lr_at(step, time.time() - t0)
            for g in opt.param_groups:
                g["lr"] = lr
            logits = disc(torch.from_numpy(c), torch.from_numpy(am), run_lm_head=False)["rtd_logits"]
            m = torch.from_numpy(am == 1)
            loss = F.binary_cross_entropy_with_logits(logits[m], torch.from_numpy(lab)[m])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for _, p in trainable], 1.0)
            opt.step()
            step += 1
            run["loss"] += float(loss); run["n"] += 1
            run["replaced"] += float(lab[am == 1].sum()); run["tokens"] += float((am == 1).sum())
            run["same"] += int((chosen & (lab == 0)).sum()); run["chosen"] += int(chosen.sum())
            elapsed = time.time() - t0
            if step % 50 == 0:
                log["loss_curve"].append({"step": step, "epoch": epoch, "seconds": round(elapsed, 1), "lr": lr,
                                          "train_bce": run["loss"] / run["n"],
                                          "replaced_fraction": run["replaced"] / run["tokens"],
                                          "sampled_original_fraction": run["same"] / max(1, run["chosen"])})
                say("step %5d ep %d %5.0fs lr %.2e bce %.4f replaced %.3f sampled-original %.3f" %
                    (step, epoch, elapsed, lr, run["loss"] / run["n"], run["replaced"] / run["tokens"],
                     run["same"] / max(1, run["chosen"])))
                run = {"loss": 0.0, "n": 0, "replaced": 0.0, "tokens": 0.0, "same": 0, "chosen": 0}
            stop = step >= args.max_steps or (args.time_budget > 0 and elapsed >= args.time_budget)
            if step % args.eval_every == 0 or stop:
                ev = evaluate(disc, held_progress)
                a = ev["all_tokens"]
                log["heldout_curve"].append({"step": step, "seconds": round(elapsed, 1), "bce": ev["bce"],
                                             "accuracy": a["accuracy"], "f1_replaced": a["f1_replaced"],
                                             "roc_auc": a["roc_auc"]})
                say("  held-out(%d): bce %.4f acc %.4f (all-original %.4f) P %.3f R %.3f F1 %.3f AUC %.4f" %
                    (len(held[:args.progress_sentences]), ev["bce"], a["accuracy"], a["all_original_baseline_accuracy"],
                     a["precision_replaced"], a["recall_replaced"], a["f1_replaced"], a["roc_auc"]))
                log.update({"steps": step, "epochs_completed": epoch, "train_seconds": round(elapsed, 1)})
                save(disc, args.out, cfg_dict, args.generator)
                with open(os.path.join(args.out, "training_log.json"), "w") as f:
                    json.dump(log, f, indent=1)
            if stop:
                log["stopped_by"] = "max_steps" if step >= args.max_steps else "time_budget"
                done = True
                break
        else:
            epoch += 1

    save(disc, args.out, cfg_dict, args.generator)
    # The final numbers come from the stored F16 weights (what ships), read back in float32.
    shipped = dt.load_model(args.out, torch.float32)
    ev = evaluate(shipped, held_eval, full=True)
    ev.update({"heldout_sentences": len(held[:args.eval_sentences]), "heldout_file": os.path.relpath(args.heldout, HERE),
               "corruption_seed": args.seed + 1, "mask_prob": args.mask_prob, "weights": "model.safetensors (F16)"})
    with open(os.path.join(args.out, "eval.json"), "w") as f:
        json.dump(ev, f, indent=1)
    log.update({"steps": step, "epochs_completed": epoch, "train_seconds": round(time.time() - t0, 1),
                "wall_seconds_total": round(time.time() - t_start, 1), "final_heldout": ev["all_tokens"]})
    with open(os.path.join(args.out, "training_log.json"), "w") as f:
        json.dump(log, f, indent=1)
    a = ev["all_tokens"]
    say("final (%d sentences, %d tokens): acc %.4f (all-original %.4f) P %.4f R %.4f F1 %.4f AUC %.4f" %
        (ev["heldout_sentences"], a["tokens"], a["accuracy"], a["all_original_baseline_accuracy"],
         a["precision_replaced"], a["recall_replaced"], a["f1_replaced"], a["roc_auc"]))
    c, am, lab, chosen = held_eval[0]
    row = int(np.argmax(lab.sum(1)))
    ids = [int(x) for x, m in zip(c[row], am[row]) if m]
    write_golden(args.out, gdir, sp, (sp.decode(ids[1:-1]), ids))
    say("done: %d steps, wrote %s and %s" % (step, args.out, gdir))


if __name__ == "__main__":
    main()
