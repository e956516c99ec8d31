#!/usr/bin/env python3
"""The mini Table 4: held-out masked-LM numbers of the trained-ablation zoo, from the shipped models.

For every model of models/zoo (and the seed replicas, see below) this runs the C++ evaluator

    deberta eval-mlm --model M --text-file corpus/heldout.txt --json --per-sentence

(one fixed set of masks: seed 0, rate 0.15, the same SentencePiece vocabulary for every model), and
for the baseline the same evaluation under each inference-time ablation (`--terms c2c,p2c`, ...).
95 % intervals come from a bootstrap over sentences (2,000 resamples; the masks stay fixed); the
difference of a variant from the baseline is bootstrapped paired (same resampled sentences).

Writes docs/table4.md, models/zoo/table4.json (the numbers the viewer's Compare tab lists) and
models/zoo/eval/<name>.json (each evaluation, per sentence). Seed replicas (trained by
train_zoo.sh with seed 4321) are not shipped as weights (the zoo's size budget); when a replica's
folder is absent its cached evaluation in models/zoo/eval/ is used, and the table says so.

    /usr/bin/python3 notebooks_data/make_table4.py [--deberta build/bin/deberta] [--max-sentences N]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ZOO = os.path.join(HERE, "models", "zoo")
EVAL_DIR = os.path.join(ZOO, "eval")
SEEDS = os.path.join(HERE, "models", "zoo-seeds")   # seed replicas: trained locally, not shipped

# name, what changed, the paper's Table 4 row (DeBERTa-base, each variant pre-trained separately):
# MNLI-m/mm accuracy and RACE accuracy, or None where the paper has no such row.
VARIANTS = [
    ("deberta-tiny-baseline", "baseline", "c2c + c2p + p2c, EMD (the bundled recipe)",
     "DeBERTa-base: MNLI 86.3/86.2, RACE 71.7"),
    ("deberta-tiny-no-c2p", "-c2p", "pos_att_type [\"p2c\"]", "-C2P: MNLI 85.9/85.7, RACE 69.3"),
    ("deberta-tiny-no-p2c", "-p2c", "pos_att_type [\"c2p\"]", "-P2C: MNLI 86.0/85.8, RACE 69.6"),
    ("deberta-tiny-no-emd", "-EMD", "no absolute position table: the MLM head reads the last layer",
     "-EMD: MNLI 86.1/86.1, RACE 70.3"),
    ("deberta-tiny-p2p", "+p2p", "trained with the project's p2p term (deberta_explorer.p2p)", None),
    ("deberta-tiny-p2c-paper", "p2c paper index", "p2c reads δ(j,i) in training (deberta_explorer.p2c_index)", None),
    ("deberta-tiny-c2c-abs", "c2c + absolute", "no relative attention; absolute positions at the input (BERT-style)",
     "RoBERTa-ReImp-base (absolute positions, same data): MNLI 84.9/85.1, RACE 66.8"),
]
SEED_REPLICAS = {"deberta-tiny-baseline": "deberta-tiny-baseline-s4321",
                 "deberta-tiny-no-c2p": "deberta-tiny-no-c2p-s4321",
                 "deberta-tiny-no-p2c": "deberta-tiny-no-p2c-s4321"}
# The same component switched off at inference in the trained baseline (deberta eval-mlm flags).
INFERENCE = {"-c2p": ["--terms", "c2c,p2c"], "-p2c": ["--terms", "c2c,c2p"], "-EMD": ["--no-emd"],
             "+p2p": ["--terms", "c2c,c2p,p2c,p2p"], "p2c paper index": ["--p2c-index", "paper"],
             "c2c + absolute": ["--terms", "c2c"]}
N_BOOT = 2000


def run_eval(deberta, model_dir, flags, max_sentences):
    cmd = [deberta, "eval-mlm", "--model", model_dir, "--text-file", os.path.join(HERE, "corpus", "heldout.txt"),
           "--json", "--per-sentence", "--seed", "0", "--mask-rate", "0.15"] + flags
    if max_sentences:
        cmd += ["--max-sentences", str(max_sentences)]
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    r = json.loads(out)
    r["flags"] = flags
    r["model"] = os.path.relpath(model_dir, ROOT)
    return r


REUSE = False   # --reuse: take a cached evaluation when there is one (same flags, same sentences)


def evaluation(deberta, name, flags, key, max_sentences):
    """Evaluates models/zoo/<name> (cached in models/zoo/eval/<key>.json when the folder is absent)."""
    path = os.path.join(EVAL_DIR, key + ".json")
    if REUSE and os.path.isfile(path):
        with open(path) as f:
            r = json.load(f)
        if r.get("flags") == flags and (not max_sentences or r["sentences"] == max_sentences):
            r["cached"] = not os.path.isdir(os.path.join(ZOO, name))
            return r
    model_dir = os.path.join(ZOO, name)
    if not os.path.isdir(model_dir):
        model_dir = os.path.join(SEEDS, name)
    # A finished run has its tokenizer copied in (train_tiny.py writes spm.model last).
    if os.path.isfile(os.path.join(model_dir, "spm.model")):
        r = run_eval(deberta, model_dir, flags, max_sentences)
        r["cached"] = False
        with open(path, "w") as f:
            json.dump(r, f, separators=(",", ":"))
        return r
    if os.path.isfile(path):
        with open(path) as f:
            r = json.load(f)
        r["cached"] = True
        return r
    return None


def per_sentence(r):
    a = np.array([row[1:] for row in r["per_sentence"]], dtype=np.float64)  # masked, top1, top5, ce
    return a


def metrics(a):
    m = a[:, 0].sum()
    return np.array([a[:, 1].sum() / m, a[:, 2].sum() / m, a[:, 3].sum() / m])


def bootstrap(a, b=None, seed=0):
    """95 % percentile intervals of (top1, top5, ce), or of their difference a − b (paired)."""
    rng = np.random.default_rng(seed)
    n = a.shape[0]
    draws = []
    for _ in range(N_BOOT):
        idx = rng.integers(0, n, n)
        v = metrics(a[idx])
        if b is not None:
            v = v - metrics(b[idx])
        draws.append(v)
    d = np.array(draws)
    return np.percentile(d, 2.5, axis=0), np.percentile(d, 97.5, axis=0)


def fmt_ci(v, lo, hi, pct=True):
    if pct:
        return "%.1f [%.1f, %.1f]" % (100 * v, 100 * lo, 100 * hi)
    return "%.3f [%.3f, %.3f]" % (v, lo, hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--deberta", default=os.path.join(ROOT, "build", "bin", "deberta"))
    ap.add_argument("--max-sentences", type=int, default=0)
    ap.add_argument("--reuse", action="store_true", help="reuse cached evaluations in models/zoo/eval/")
    args = ap.parse_args()
    global REUSE
    REUSE = args.reuse
    os.makedirs(EVAL_DIR, exist_ok=True)

    results, arrays = {}, {}
    for name, label, change, paper in VARIANTS:
        r = evaluation(args.deberta, name, [], name, args.max_sentences)
        if r is None:
            print("missing: %s (not trained yet?)" % name, file=sys.stderr)
            continue
        results[name], arrays[name] = r, per_sentence(r)
        print("%-28s top1 %.4f" % (name, r["top1"]), file=sys.stderr)
    for name, replica in SEED_REPLICAS.items():
        r = evaluation(args.deberta, replica, [], replica, args.max_sentences)
        if r is not None:
            results[replica], arrays[replica] = r, per_sentence(r)
    inference = {}
    base = "deberta-tiny-baseline"
    if base in results:
        for label, flags in INFERENCE.items():
            key = base + "--inference" + "".join(f.replace("-", "") for f in flags).replace(",", "_")
            r = evaluation(args.deberta, base, flags, key, args.max_sentences)
            inference[label] = (r, per_sentence(r))

    # Seed noise: the largest seed-to-seed difference over the replicated variants, per metric.
    seed_diffs = {}
    for name, replica in SEED_REPLICAS.items():
        if name in arrays and replica in arrays:
            seed_diffs[name] = metrics(arrays[replica]) - metrics(arrays[name])
    seed_noise = np.max(np.abs(np.array(list(seed_diffs.values()))), axis=0) if seed_diffs else None

    table = {"models": {}, "seed_noise": None if seed_noise is None else
             {"top1": seed_noise[0], "top5": seed_noise[1], "cross_entropy": seed_noise[2]}}
    lines = []
    lines.append("# A mini Table 4: DeBERTa's components, each trained away")
    lines.append("")
    lines.append("*Generated by `notebooks_data/make_table4.py` from the models in `notebooks_data/models/zoo` — "
                 "do not edit by hand.*")
    lines.append("")
    lines.append("The paper's Table 4 (He et al., 2021) pre-trains DeBERTa-base once per variant and fine-tunes each "
                 "on MNLI, SQuAD and RACE. Here every variant of the bundled tiny model (4 layers, H = 192, 4 heads, "
                 "k = 32 log buckets) is pre-trained with one recipe — the same corpus, SentencePiece vocabulary, "
                 "initialisation seed, data order, optimizer and 1,000 steps (`notebooks_data/train_zoo.sh`) — "
                 "changing only the named component, and measured by held-out masked-LM prediction: "
                 "`deberta eval-mlm` on `notebooks_data/corpus/heldout.txt` (one fixed set of masks, seed 0, 15 % "
                 "of the tokens, all replaced by [MASK]). Brackets: 95 % bootstrap intervals over sentences.")
    lines.append("")
    n_masked = results[base]["masked_tokens"] if base in results else 0
    n_sent = results[base]["sentences"] if base in results else 0
    lines.append("%d sentences, %d masked tokens. The unigram baseline scores top-1 %.1f %%, CE %.2f." % (
        n_sent, n_masked, 100 * results[base]["unigram"]["top1"] if base in results else 0,
        results[base]["unigram"]["cross_entropy"] if base in results else 0))
    lines.append("")
    lines.append("| variant | trained with | top-1 % | top-5 % | cross-entropy | Δ top-1 vs baseline (paired 95 %) "
                 "| same component off at inference in the baseline: top-1 % / CE | paper, Table 4 |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for name, label, change, paper in VARIANTS:
        if name not in results:
            lines.append("| %s | %s | (not trained yet) | | | | | %s |" % (label, change, paper or "—"))
            continue
        a = arrays[name]
        v = metrics(a)
        lo, hi = bootstrap(a)
        delta = ""
        if name != base and base in arrays:
            dlo, dhi = bootstrap(a, arrays[base])
            d = v - metrics(arrays[base])
            beyond = seed_noise is not None and abs(d[0]) > seed_noise[0]
            delta = "%+.1f [%+.1f, %+.1f]%s" % (100 * d[0], 100 * dlo[0], 100 * dhi[0],
                                                ", beyond seed noise" if beyond else
                                                (", within seed noise" if seed_noise is not None else ""))
        inf = ""
        if label in inference:
            iv = metrics(inference[label][1])
            inf = "%.1f / %.3f (`%s`)" % (100 * iv[0], iv[2], " ".join(INFERENCE[label]))
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, change, fmt_ci(v[0], lo[0], hi[0]), fmt_ci(v[1], lo[1], hi[1]),
            fmt_ci(v[2], lo[2], hi[2], pct=False), delta or "—", inf or "—", paper or "—"))
        table["models"][name] = {"variant": label, "change": label if name != base else "baseline",
                                 "top1": v[0], "top5": v[1], "cross_entropy": v[2],
                                 "top1_ci": [lo[0], hi[0]], "top5_ci": [lo[1], hi[1]], "ce_ci": [lo[2], hi[2]]}
    lines.append("")
    lines.append("## Seed noise")
    lines.append("")
    if seed_diffs:
        lines.append("Each replicated variant was trained again with seed 4321 (initialisation, data order and "
                     "training masks change; the evaluation masks do not):")
        lines.append("")
        lines.append("| variant | seed 1234 top-1 % | seed 4321 top-1 % | difference (points) | CE difference | seed-4321 numbers from |")
        lines.append("|---|---|---|---|---|---|")
        for name, d in seed_diffs.items():
            replica = SEED_REPLICAS[name]
            source = ("`zoo/eval/%s.json` (weights not shipped)" % replica if results[replica].get("cached")
                      else "`zoo-seeds/%s`" % replica)
            lines.append("| %s | %.1f | %.1f | %+.2f | %+.3f | %s |" % (
                name, 100 * metrics(arrays[name])[0], 100 * metrics(arrays[replica])[0], 100 * d[0], d[2], source))
        lines.append("")
        lines.append("A variant's difference from the baseline counts as *beyond seed noise* when its top-1 "
                     "difference exceeds the largest seed-to-seed difference above (%.2f points)." % (100 * seed_noise[0]))
    else:
        lines.append("No seed replicas have been evaluated yet (train_zoo.sh trains them last).")
    lines.append("")
    with open(os.path.join(ZOO, "table4.json"), "w") as f:
        json.dump(table, f, indent=1)
    # The prose below the table (readings of the numbers) lives in docs/table4-notes.md, written by
    # people; it is appended unchanged.
    notes = os.path.join(ROOT, "docs", "table4-notes.md")
    if os.path.isfile(notes):
        with open(notes) as f:
            lines.append(f.read().rstrip("\n"))
        lines.append("")
    with open(os.path.join(ROOT, "docs", "table4.md"), "w") as f:
        f.write("\n".join(lines))
    print("wrote docs/table4.md and %s" % os.path.relpath(os.path.join(ZOO, "table4.json"), ROOT), file=sys.stderr)


if __name__ == "__main__":
    main()
