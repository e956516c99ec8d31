#!/usr/bin/env python3
"""Fine-tune the bundled deberta-tiny into a sentence-pair classifier: WordNet lemma-gloss matching.

Task ("does this definition belong to this word?"): input [CLS] lemma [SEP] definition [SEP],
label MATCH (the synset's own definition) or NO_MATCH. Negatives, one per positive: half a random
definition of the same part of speech (easy), half a definition from the same lexicographer file
(noun.animal, verb.motion, ...: hard — same topic, wrong word). Synsets are split 95 / 5 by a hash
of their offset, so held-out pairs use synsets never seen in fine-tuning (the pre-training corpus
did contain every "lemma: definition" line of WordNet; say so when reading the accuracy).

Model: Hugging Face DebertaV2ForSequenceClassification layout — encoder weights under "deberta.",
ContextPooler pooled = gelu(h[0] W_p^T + b_p) ("pooler.dense"), logits = pooled W_c^T + b_c
("classifier"), the same formulas as notebooks_data/golden/README.md (v2_cls_nli). float32, one thread, seeded.

    nice python3 notebooks_data/train/finetune_cls.py --out notebooks_data/models/deberta-tiny-wordnet-match

Writes config.json (architectures, id2label, pooler keys), model.safetensors (F16), the tokenizer
files, training_log.json, README.md numbers come from training_log.json; and the float64
reference tensors of two held-out pairs into <out>-golden/ for the C++ reproduction test.
"""
import argparse
import json
import os
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import random
import re
import shutil
import sys
import time
import zlib

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)
from lib import deberta_torch as dt  # noqa: E402
from train.train_tiny import pad  # noqa: E402  (the pre-training script's right-padding with a mask)

LABELS = {0: "NO_MATCH", 1: "MATCH"}


def wordnet_synsets(root="/usr/share/wordnet"):
    """(offset, pos, lexfile, lemma, definition) for every synset with a definition."""
    out = []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(root, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue
                head, gloss = line.split("|", 1)
                fields = head.split()
                lemma = re.sub(r"\((a|p|ip)\)$", "", fields[4]).replace("_", " ")
                q = gloss.find('"')
                definition = (gloss if q < 0 else gloss[:q]).strip().rstrip(";").strip()
                if definition:
                    out.append((int(fields[0]), pos, int(fields[1]), lemma, definition))
    return out


def make_pairs(synsets, rng):
    """One positive and one negative (alternately easy and hard) per synset."""
    by_lex, by_pos = {}, {}
    for s in synsets:
        by_lex.setdefault((s[1], s[2]), []).append(s)
        by_pos.setdefault(s[1], []).append(s)
    pairs = []
    for k, s in enumerate(synsets):
        pairs.append((s[3], s[4], 1))
        pool = by_lex[(s[1], s[2])] if k % 2 == 0 else by_pos[s[1]]
        for _ in range(10):
            o = pool[rng.randrange(len(pool))]
            if o[3] != s[3] and o[4] != s[4]:
                pairs.append((s[3], o[4], 0))
                break
    return pairs


def encode_pair(sp, a, b, max_len):
    ia, ib = sp.encode(a), sp.encode(b)
    ib = ib[: max(1, max_len - 3 - len(ia))]
    return [1] + ia + [2] + ib + [2]


class Classifier(torch.nn.Module):
    """DebertaV2ForSequenceClassification: encoder, ContextPooler (dense + gelu on token 0), classifier."""

    def __init__(self, encoder, hidden, n_labels):
        super().__init__()
        self.deberta = encoder
        self.pooler_dense = torch.nn.Linear(hidden, hidden)
        self.classifier = torch.nn.Linear(hidden, n_labels)

    def forward(self, ids, am, trace=None):
        h = self.deberta(ids, am, trace=trace)["hidden"]
        pooled = dt.gelu(self.pooler_dense(h[:, 0]))
        return pooled, self.classifier(pooled)


def batches(encoded, tokens_per_batch, rng):
    order = list(range(len(encoded)))
    rng.shuffle(order)
    out, cur, cur_max = [], [], 0
    for i in sorted(order[: len(order)], key=lambda i: (len(encoded[i][0]) // 4, rng.random())):
        L = len(encoded[i][0])
        if cur and max(cur_max, L) * (len(cur) + 1) > tokens_per_batch:
            out.append(cur)
            cur, cur_max = [], 0
        cur.append(i)
        cur_max = max(cur_max, L)
    if cur:
        out.append(cur)
    rng.shuffle(out)
    return out


def collate(encoded, idx):
    ids, am = pad([encoded[i][0] for i in idx])
    return torch.from_numpy(ids), torch.from_numpy(am), torch.tensor([encoded[i][1] for i in idx])


def accuracy(model, encoded, batch_tokens=4096):
    model.eval()
    correct, n = 0, 0
    with torch.no_grad():
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i][0]))
        cur = []
        for i in order + [None]:
            if i is None or (cur and len(encoded[i][0]) * (len(cur) + 1) > batch_tokens):
                if cur:
                    ids, am, y = collate(encoded, cur)
                    _, logits = model(ids, am)
                    correct += int((logits.argmax(-1) == y).sum())
                    n += len(cur)
                cur = []
            if i is not None:
                cur.append(i)
    model.train()
    return correct / max(n, 1)


def state_dict_hf(model):
    sd = {}
    for k, v in model.state_dict().items():
        if k.startswith("deberta."):
            sd[k] = v
        elif k.startswith("pooler_dense."):
            sd["pooler.dense." + k.split(".", 1)[1]] = v
        else:
            sd[k] = v
    return {k: v.detach().cpu().numpy() for k, v in sd.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default=os.path.join(HERE, "models", "deberta-tiny"))
    ap.add_argument("--out", default=os.path.join(HERE, "models", "deberta-tiny-wordnet-match"))
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--batch-tokens", type=int, default=1536)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--heldout-eval", type=int, default=4000)
    ap.add_argument("--export-heldout", metavar="TSV",
                    help="write the first --heldout-eval held-out pairs as 'lemma<TAB>definition<TAB>label' "
                         "(the input of `deberta eval --labeled`) and exit without training")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    t0 = time.time()

    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(args.base, "spm.model"))
    synsets = wordnet_synsets()
    held = [s for s in synsets if zlib.crc32(("%s%d" % (s[1], s[0])).encode()) % 20 == 0]
    train = [s for s in synsets if zlib.crc32(("%s%d" % (s[1], s[0])).encode()) % 20 != 0]
    train_pairs, held_pairs = make_pairs(train, rng), make_pairs(held, rng)
    enc_train = [(encode_pair(sp, a, b, args.max_len), y) for a, b, y in train_pairs]
    enc_held = [(encode_pair(sp, a, b, args.max_len), y) for a, b, y in held_pairs]
    if args.export_heldout:  # held-out synsets are never trained on; a fixed shuffle picks the subset
        order = list(range(len(held_pairs)))
        random.Random(args.seed).shuffle(order)
        with open(args.export_heldout, "w") as f:
            for k in order[: args.heldout_eval]:
                a, b, y = held_pairs[k]
                f.write("%s\t%s\t%s\n" % (a, b.replace("\t", " "), LABELS[y]))
        print("wrote %s (%d pairs)" % (args.export_heldout, min(args.heldout_eval, len(order))))
        return
    rng.shuffle(enc_held)
    enc_held_eval = enc_held[: args.heldout_eval]
    print("pairs: train %d, held-out %d (evaluating %d)" % (len(enc_train), len(enc_held), len(enc_held_eval)),
          flush=True)

    base = dt.load_model(args.base, torch.float32)
    enc_cfg = dict(json.load(open(os.path.join(args.base, "config.json"))))
    cfg = dt.DebertaConfig.from_dict(enc_cfg, with_lm_head=False)
    encoder = dt.DebertaV2(cfg)
    missing = encoder.load_state_dict({k: v for k, v in base.state_dict().items()
                                       if not k.startswith("lm_predictions.") and k != "embeddings.position_embeddings.weight"},
                                      strict=False)
    if hasattr(encoder.embeddings, "position_embeddings"):
        del encoder.embeddings.position_embeddings     # HF's classifier has no position table
    assert not missing.unexpected_keys, missing
    model = Classifier(encoder, cfg.hidden_size, len(LABELS))
    for lin in (model.pooler_dense, model.classifier):
        torch.nn.init.normal_(lin.weight, 0.0, 0.02)
        torch.nn.init.zeros_(lin.bias)
    acc0 = accuracy(model, enc_held_eval)
    print("held-out accuracy before fine-tuning: %.4f" % acc0, flush=True)

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    log = {"args": vars(args), "pairs_train": len(enc_train), "pairs_heldout": len(enc_held),
           "heldout_accuracy_before": acc0, "curve": []}
    step, run_loss, run_n = 0, 0.0, 0
    model.train()
    while step < args.steps:
        for b in batches(enc_train, args.batch_tokens, rng):
            ids, am, y = collate(enc_train, b)
            lr = args.lr * min((step + 1) / args.warmup, max(0.0, (args.steps - step) / (args.steps - args.warmup)))
            for g in opt.param_groups:
                g["lr"] = lr
            _, logits = model(ids, am)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            run_loss += float(loss)
            run_n += 1
            if step % 100 == 0:
                acc = accuracy(model, enc_held_eval[:1000]) if step % 400 == 0 else None
                log["curve"].append({"step": step, "seconds": round(time.time() - t0, 1), "loss": run_loss / run_n,
                                     "heldout_accuracy_1000": acc})
                print("step %5d  %.0fs  loss %.4f%s" % (step, time.time() - t0, run_loss / run_n,
                                                         "" if acc is None else "  held-out acc %.4f" % acc), flush=True)
                run_loss, run_n = 0.0, 0
            if step >= args.steps:
                break

    acc = accuracy(model, enc_held_eval)
    log.update({"steps": step, "train_seconds": round(time.time() - t0, 1), "heldout_accuracy": acc,
                "heldout_eval_pairs": len(enc_held_eval)})
    print("held-out accuracy: %.4f (%d pairs), %.0f s" % (acc, len(enc_held_eval), time.time() - t0), flush=True)

    os.makedirs(args.out, exist_ok=True)
    out_cfg = dict(enc_cfg)
    out_cfg.update({"architectures": ["DebertaV2ForSequenceClassification"],
                    "id2label": {str(k): v for k, v in LABELS.items()},
                    "label2id": {v: k for k, v in LABELS.items()},
                    "pooler_hidden_size": cfg.hidden_size, "pooler_hidden_act": "gelu", "pooler_dropout": 0,
                    "torch_dtype": "float16"})
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(out_cfg, f, indent=2)
    sd = {k: v.astype(np.float16) for k, v in state_dict_hf(model).items()}
    dt.save_safetensors(os.path.join(args.out, "model.safetensors"), sd, {"format": "pt"})
    for name in ("spm.model", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copyfile(os.path.join(args.base, name), os.path.join(args.out, name))
    with open(os.path.join(args.out, "training_log.json"), "w") as f:
        json.dump(log, f, indent=1)

    # float64 reference tensors of two held-out pairs, from the stored F16 weights.
    model64 = Classifier(dt.DebertaV2(cfg), cfg.hidden_size, len(LABELS)).double()
    if hasattr(model64.deberta.embeddings, "position_embeddings"):
        del model64.deberta.embeddings.position_embeddings
    back = {("pooler_dense." + k[len("pooler.dense."):] if k.startswith("pooler.dense.") else k):
            torch.from_numpy(v.astype(np.float64)) for k, v in sd.items()}
    model64.load_state_dict(back, strict=True)
    model64.eval()
    gdir = args.out + "-golden"
    os.makedirs(gdir, exist_ok=True)
    shutil.copyfile(os.path.join(args.out, "config.json"), os.path.join(gdir, "config.json"))
    cases = []
    for k, (a, b, y) in enumerate([held_pairs[0], held_pairs[1]]):
        ids = encode_pair(sp, a, b, args.max_len)
        g = {"input_ids": np.array([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
             "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64)}
        trace = {}
        with torch.no_grad():
            pooled, logits = model64(torch.from_numpy(g["input_ids"]), torch.from_numpy(g["attention_mask"]), trace)
        for name, v in trace.items():
            if name.endswith(".output") and name.startswith("layer."):
                g[name] = v.numpy()[0]
        g["embedding_output"] = trace["embedding_output"].numpy()[0]
        g["cls.pooled"] = pooled.numpy()[0]
        g["cls.logits"] = logits.numpy()[0]
        dt.save_safetensors(os.path.join(gdir, "golden_%d.safetensors" % k), g,
                            {"producer": "notebooks_data/train/finetune_cls.py", "model": os.path.basename(args.out)})
        p = torch.softmax(logits[0], -1).numpy()
        cases.append({"lemma": a, "definition": b, "label": LABELS[y], "probabilities": p.tolist()})
    with open(os.path.join(gdir, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print("wrote %s and %s" % (args.out, gdir), flush=True)


if __name__ == "__main__":
    main()
