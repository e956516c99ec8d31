#!/usr/bin/env python3
"""The mini Table 4 (docs/table4.md, models/zoo/table4.json) from the zoo's run cards.

Every run of notebooks_data/zoo/make_zoo.py leaves models/zoo-runs/<variant>/s<seed>/card.json: its
seed, init_sha256 (the initial tensors all variants share) and the held-out test numbers
(cross-entropy, top-1, top-5 on heldout.txt after its first 1,000 sentences, float64 of the
saved weights, one fixed set of masks). This script
  * checks that the runs of one seed started from one initialisation (equal init_sha256 across
    variants; it refuses otherwise);
  * pairs each variant with the baseline seed by seed and tests the differences of the primary
    metric, cross-entropy, with a two-sided paired t test and a 95 % t-interval, Holm-corrected
    across the variants (notebooks_data/lib/paired_stats.py); "beyond noise" means p_holm < 0.05;
    top-1 / top-5 get the same treatment as secondary metrics;
  * computes the unigram baseline from the training text (corpus/train.txt), scored on the test
    masks;
  * draws the validation learning curves (docs/images/table4_curves.png, and the long pair's
    docs/images/table4_long_curves.png);
  * adds the contrasts between variants the notes compare (CONTRASTS) and the long pairs' tests
    (LONG_PAIRS) to the one Holm family, with Bonferroni simultaneous intervals beside the
    unadjusted 95 % ones; a long pair not yet run is listed as pending;
  * bootstraps the test split's sentences for the runs whose per-sentence losses exist
    (sentence_losses.py; the shipped seed-1 runs), paired per comparison;
  * writes models/zoo/table4.json and docs/table4.md (the prose of docs/table4-notes.md appended,
    its {{placeholders}} and [[if ...]] choices filled from table4.json: render_notes).

    /usr/bin/python3 notebooks_data/zoo/make_table4.py [--runs-dir DIR] [--zoo-dir DIR] [--docs-dir DIR]

Every card is checked before anything is computed or written: a card that is not valid JSON,
lacks a key this script reads, holds a value of the wrong type, a NaN or an infinity, or sits in
a folder its variant / seed / recipe_steps do not name, stops the script with one line
"make_table4: <path>: <problem>" (exit 1). `--help` prints the options and writes nothing.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from lib import paired_stats as ps  # noqa: E402

ZOO = os.path.join(HERE, "models", "zoo")          # default --zoo-dir
RUNS = os.path.join(HERE, "models", "zoo-runs")    # default --runs-dir
DOCS = os.path.join(ROOT, "docs")                  # default --docs-dir
RECIPE_STEPS = 1000
LONG_STEPS = 4000

# variant, label, what changed, the paper's Table 4 row (DeBERTa-base: MNLI-m/mm and RACE accuracy)
VARIANTS = [
    ("baseline", "baseline", "c2c + c2p + p2c, EMD with I = H + P (the bundled recipe)",
     "DeBERTa-base: MNLI 86.3/86.2, SQuAD v1.1 92.1/86.1, v2.0 82.5/79.3, RACE 71.7"),
    ("no-c2p", "-c2p", "pos_att_type [\"p2c\"]", "-C2P: MNLI 85.9/85.7, SQuAD v1.1 91.6/85.8, v2.0 81.3/78.3, RACE 69.3"),
    ("no-p2c", "-p2c", "pos_att_type [\"c2p\"]", "-P2C: MNLI 86.0/85.8, SQuAD v1.1 91.7/85.7, v2.0 80.8/77.6, RACE 69.6"),
    ("no-emd", "-EMD (no positions)", "no EMD and no absolute position anywhere; one layer application fewer",
     "-EMD: MNLI 86.1/86.1, SQuAD v1.1 91.8/85.8, v2.0 81.3/78.0, RACE 70.3"),
    ("no-emd-abs", "-EMD, positions at input", "no EMD; absolute positions added at the input as BERT does "
     "(position_biased_input)", "-EMD (see the notes)"),
    ("no-emd-depth", "-EMD, depth-matched", "the EMD's two layer applications with I = H: the baseline's depth "
     "and weights, no absolute position (deberta_explorer.emd_position false)", "—"),
    ("no-emd-abs-depth", "-EMD, positions at input, depth-matched", "absolute positions added at the input "
     "(position_biased_input) and the EMD's two layer applications with I = H: the baseline's depth and weights, "
     "the positions moved from the decoder to the input (deberta_explorer.emd_position false)", "—"),
    ("p2p", "+p2p", "trained with the p2p term (deberta_explorer.p2p)", "—"),
    ("p2c-paper", "p2c paper index", "p2c reads δ(j,i) in training (deberta_explorer.p2c_index)", "—"),
    ("c2c-abs", "c2c + absolute", "no relative attention; absolute positions at the input (BERT-style)",
     "RoBERTa-ReImp-base (absolute positions, same data): MNLI 84.9/85.1, SQuAD v1.1 91.1/84.8, v2.0 79.5/76.0, "
     "RACE 66.8"),
]
METRICS = ("cross_entropy", "top1", "top5")


class BadInput(Exception):
    """A file this script reads is unusable: str(e) is "<path>: <problem>"."""


def load_json(path):
    """The JSON value of the file PATH; BadInput naming PATH when it is not a regular file, cannot
    be read, is not UTF-8 or not valid JSON (a truncated file: "not valid JSON (... line L column C)")."""
    if not os.path.isfile(path):
        raise BadInput("%s: not a regular file" % path)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise BadInput("%s: %s" % (path, e.strerror))
    except UnicodeDecodeError as e:
        raise BadInput("%s: not UTF-8 (byte %d)" % (path, e.start))
    except json.JSONDecodeError as e:
        raise BadInput("%s: not valid JSON (%s at line %d column %d)" % (path, e.msg, e.lineno, e.colno))


def _kind(value):
    return "a string" if isinstance(value, str) else "null" if value is None else type(value).__name__


def _integer(where, value, low):
    """VALUE must be an int >= LOW (a JSON true / false is not an integer)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("%s is %s (%s), not an integer" % (where, json.dumps(value), _kind(value)))
    if value < low:
        raise ValueError("%s is %d, below %d" % (where, value, low))
    return value


def _number(where, value, low, high=None):
    """VALUE must be a finite int or float in [LOW, HIGH] (JSON's NaN / Infinity are refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s is %s (%s), not a number" % (where, json.dumps(value), _kind(value)))
    if not math.isfinite(value):
        raise ValueError("%s is %s, not a finite number" % (where, value))
    if value < low or (high is not None and value > high):
        raise ValueError("%s is %r, outside [%g, %s]" % (where, value, low, "∞" if high is None else "%g" % high))
    return value


def _metrics(where, obj):
    """OBJ's cross_entropy >= 0 (nats), top1 and top5 in [0, 1] with top1 <= top5. WHERE names
    OBJ in messages ("" for the card itself, "validation_curve[3]" for an entry of the curve)."""
    name = (lambda key: "%s.%s" % (where, key)) if where else (lambda key: key)
    for key in METRICS:
        if key not in obj:
            raise ValueError("%smissing key %r" % (where + ": " if where else "", key))
        _number(name(key), obj[key], 0.0, None if key == "cross_entropy" else 1.0)
    if obj["top1"] > obj["top5"]:
        raise ValueError("%s %r is above %s %r" % (name("top1"), obj["top1"], name("top5"), obj["top5"]))


CARD_KEYS = ("variant", "seed", "steps", "recipe_steps", "init_sha256", "weights_sha256") + METRICS + \
    ("validation_curve",)


def check_card(card, variant, folder):
    """The fields of a run card this script reads (make_zoo.write_card writes them), checked in
    CARD_KEYS order. FOLDER is the card's run folder: it must be s<seed> for a run of RECIPE_STEPS
    recipe steps, s<seed>-<recipe_steps>steps otherwise (make_zoo.run_dir), under the folder of
    its variant. Raises ValueError with the problem."""
    if not isinstance(card, dict):
        raise ValueError("a run card is a JSON object, this is %s" % _kind(card))
    for key in CARD_KEYS:
        if key not in card:
            raise ValueError("missing key %r" % key)
    if card["variant"] != variant:
        raise ValueError("variant is %s, but the card is in the folder of %s" % (json.dumps(card["variant"]), variant))
    seed = _integer("seed", card["seed"], 0)
    recipe = _integer("recipe_steps", card["recipe_steps"], 1)
    _integer("steps", card["steps"], 1)
    for key in ("init_sha256", "weights_sha256"):
        h = card[key]
        if not (isinstance(h, str) and len(h) == 64 and all(ch in "0123456789abcdef" for ch in h)):
            raise ValueError("%s is %s, not 64 lower-case hex digits" % (key, json.dumps(h)))
    _metrics("", card)
    # The kernels and the torch that trained it (issue 42): every card names them, or says "unknown"
    # (runs from before they were recorded that no re-run of their first steps matched).
    for key in ("openblas_core", "torch_version"):
        if key not in card:
            raise ValueError("missing key %r (rerun_zoo_start.py --update-card fills it in)" % key)
        if not (isinstance(card[key], str) and card[key]):
            raise ValueError("%s is %s, not a non-empty string (a name, or \"unknown\")" % (key, json.dumps(card[key])))
    curve = card["validation_curve"]
    if not isinstance(curve, list) or not curve:
        raise ValueError("validation_curve is %s, not a non-empty list" % json.dumps(curve)[:40])
    for i, e in enumerate(curve):
        where = "validation_curve[%d]" % i
        if not isinstance(e, dict):
            raise ValueError("%s is %s, not an object" % (where, _kind(e)))
        if "step" not in e:
            raise ValueError("%s: missing key 'step'" % where)
        _integer(where + ".step", e["step"], 0)
        _metrics(where, e)
    expected = "s%d" % seed if recipe == RECIPE_STEPS else "s%d-%dsteps" % (seed, recipe)
    if folder != expected:
        raise ValueError("seed %d, recipe_steps %d: the run's folder is %s, not %s" % (seed, recipe, expected, folder))


def run_files(runs, name):
    """(variant, run folder name, path) of RUNS/<variant>/<run>/NAME for each variant of VARIANTS,
    in VARIANTS' order and the folders' sorted order, where the file (or a link) exists."""
    for variant, *_ in VARIANTS:
        d = os.path.join(runs, variant)
        if not os.path.isdir(d):
            continue
        for sub in sorted(os.listdir(d)):
            path = os.path.join(d, sub, name)
            if os.path.lexists(path):
                yield variant, sub, path


def read_cards(runs=RUNS):
    """{recipe_steps: {variant: [card, ...]}} of every finished run under RUNS (a card.json in
    RUNS/<variant>/<run folder>/, for each variant of VARIANTS), sorted by seed. Every card is
    checked (load_json, check_card) before any is used: BadInput "<path>: <problem>" otherwise."""
    out = {}
    for variant, sub, path in run_files(runs, "card.json"):
        card = load_json(path)
        try:
            check_card(card, variant, sub)
        except ValueError as e:
            raise BadInput("%s: %s" % (path, e))
        out.setdefault(card["recipe_steps"], {}).setdefault(variant, []).append(card)
    for by_variant in out.values():
        for runs_of in by_variant.values():
            runs_of.sort(key=lambda c: c["seed"])
    return out


def check_initialisations(cards):
    """The runs of one seed must share init_sha256 across variants. Returns {seed: hash}."""
    by_seed = {}
    for variant, runs in cards.items():
        for c in runs:
            h = by_seed.setdefault(c["seed"], c["init_sha256"])
            if h != c["init_sha256"]:
                raise SystemExit("make_table4: seed %d of %s started from init_sha256 %s, other variants of that "
                                 "seed from %s: not one initialisation" % (c["seed"], variant, c["init_sha256"], h))
    return by_seed


# Comparisons between two variants that the notes lean on (docs/table4-notes.md), each a paired t
# test over the seeds both have, A minus B (positive: A's cross-entropy is higher, A is worse).
# They are tested in ONE Holm family with the variant-vs-baseline tests and the long pair's two
# tests (issue 42): every p_holm of table4.json's "paired", "contrasts" and "long_paired" is
# adjusted over that whole family.
CONTRASTS = [
    ("no-emd-abs", "no-emd", "positions at the input vs no absolute position, both one layer application short"),
    ("no-emd", "no-emd-depth", "one layer application fewer, neither with absolute positions (depth alone)"),
    ("no-emd-abs-depth", "no-emd-depth", "positions at the input vs none, both at the baseline's depth"),
    ("no-emd-abs", "no-emd-abs-depth", "one layer application fewer, both with positions at the input (depth alone)"),
    ("no-emd-abs", "no-c2p", "the ranking: positions at the input vs -c2p"),
    ("no-c2p", "no-emd", "the ranking: -c2p vs -EMD (no positions)"),
    ("c2c-abs", "no-emd-abs", "the ranking: c2c + absolute vs the next largest cost"),
    # Issue 58: the docs compare these too, so they are in the family. Added after issue 58 had read
    # their raw p-values (0.0083 and 0.0078): in the family because the docs make the comparisons,
    # not planned before the data.
    ("no-c2p", "no-p2c", "the ranking: -c2p vs -p2c (\"c2p matters most\")"),
    ("no-emd-abs-depth", "no-c2p", "the ranking: positions at the input, depth-matched, vs -c2p"),
]


def contrast_name(a, b):
    return "%s vs %s" % (a, b)


def _test_entry(metric, r, seeds):
    return {"metric": metric, "n": r["n"], "seeds": seeds, "mean_diff": r["mean_diff"], "sd_diff": r["sd"],
            "ci95": r["ci95"], "t": r["t"], "df": r["df"], "p": r["p"], "per_seed": r["diffs"]}


def paired_block(cards):
    """{metric: {variant: test}} of each variant against the baseline (paired t over the seeds both
    have, variant minus baseline), and {metric: {"A vs B": test}} of the CONTRASTS. Cross-entropy's
    tests get p_holm in family_adjust; top-1 / top-5 are Holm-corrected per metric over the
    variants (secondary metrics, not in the family)."""
    by_variant = {v: {c["seed"]: c for c in cards.get(v, [])} for v, *_ in VARIANTS}
    result, contrasts = {}, {}
    for metric in METRICS:
        tests = {}
        for variant, *_ in VARIANTS[1:]:
            seeds = sorted(set(by_variant[variant]) & set(by_variant["baseline"]))
            if len(seeds) < 2:
                continue
            r = ps.paired_t([by_variant[variant][s][metric] for s in seeds],
                            [by_variant["baseline"][s][metric] for s in seeds])
            tests[variant] = _test_entry(metric, r, seeds)
        result[metric] = tests
        cs = {}
        for a, b, question in CONTRASTS:
            seeds = sorted(set(by_variant[a]) & set(by_variant[b]))
            if len(seeds) < 2:
                continue
            r = ps.paired_t([by_variant[a][s][metric] for s in seeds], [by_variant[b][s][metric] for s in seeds])
            cs[contrast_name(a, b)] = dict(_test_entry(metric, r, seeds), question=question)
        contrasts[metric] = cs
    for metric in ("top1", "top5"):
        adjusted = ps.holm({v: t["p"] for v, t in result[metric].items()})
        for v, t in result[metric].items():
            t.update(p_holm=adjusted[v], beyond_noise=adjusted[v] < 0.05)
    return result, contrasts


def family_adjust(paired, contrasts, long_tests):
    """Holm over one family: the variant-vs-baseline tests (PAIRED), the CONTRASTS and each long
    pair's two tests (LONG_TESTS: {key: tests or None}, or one pair's tests, or None). Sets p_holm and
    beyond_noise (p_holm < 0.05) in every member, and ci_simultaneous: the Bonferroni interval
    mean ± t(1 − 0.05 / (2m), df) · se, which holds all m differences at once with probability
    >= 95 % (the ci95 beside it is unadjusted: each alone covers with 95 %). Returns m."""
    members = {("paired", k): t for k, t in paired.items()}
    members.update({("contrast", k): t for k, t in contrasts.items()})
    if long_tests and "gap_4000" in long_tests:
        long_tests = {"long_paired": long_tests}
    for group, tests in (long_tests or {}).items():
        members.update({(group, k): t for k, t in (tests or {}).items() if k in ("gap_4000", "gap_change")})
    adjusted = ps.holm({k: t["p"] for k, t in members.items()})
    m = len(members)
    for k, t in members.items():
        se = t["sd_diff"] / math.sqrt(t["n"])
        half = ps.t_ppf(1.0 - 0.05 / (2 * m), t["df"]) * se
        t.update(p_holm=adjusted[k], beyond_noise=adjusted[k] < 0.05,
                 ci_simultaneous=[t["mean_diff"] - half, t["mean_diff"] + half])
    return m


def sign_test_floor(n):
    """The smallest p an exact sign test (or Wilcoxon signed-rank test) can give over N pairs, all
    pointing one way: {"two_sided": 2 / 2^N, "one_sided": 1 / 2^N}."""
    return {"pairs": n, "two_sided": min(1.0, 2.0 / 2 ** n), "one_sided": 1.0 / 2 ** n}


BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 58
SENTENCES_FILE = "test_sentences.json.xz"   # sentence_losses.OUT_NAME


def sentence_records(cards, runs_dir, zoo_dir):
    """{(variant, seed): (nll [S], masked [S])} of every 1,000-step run whose per-sentence test losses
    exist (RUNS/<variant>/s<seed>/, or for seed 1 the shipped ZOO/deberta-tiny-<variant>/), each
    checked: the file's weights_sha256 is the card's and its total gives the card's cross-entropy to
    1e-9 (BadInput otherwise)."""
    import lzma
    import numpy as np
    out = {}
    for variant, runs in cards.items():
        for c in runs:
            paths = [os.path.join(runs_dir, variant, "s%d" % c["seed"], SENTENCES_FILE)]
            if c["seed"] == 1:
                paths.append(os.path.join(zoo_dir, "deberta-tiny-" + variant, SENTENCES_FILE))
            path = next((q for q in paths if os.path.isfile(q)), None)
            if path is None:
                continue
            try:
                with lzma.open(path, "rt") as f:
                    r = json.load(f)
                nll, masked = np.asarray(r["nll"], dtype=np.float64), np.asarray(r["masked"], dtype=np.int64)
                sha = r["weights_sha256"]
            except (OSError, ValueError, KeyError, TypeError, EOFError, lzma.LZMAError) as e:
                raise BadInput("%s: not a per-sentence loss file (%s)" % (path, e))
            if sha != c["weights_sha256"]:
                raise BadInput("%s: weights_sha256 %s, its card's %s" % (path, sha, c["weights_sha256"]))
            if nll.shape != masked.shape or abs(nll.sum() / masked.sum() - c["cross_entropy"]) > 1e-9:
                raise BadInput("%s: its total is not the card's cross-entropy %r" % (path, c["cross_entropy"]))
            out[(variant, c["seed"])] = (nll, masked)
    return out


def sentence_bootstrap(records, comparisons, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED):
    """The test split's own sampling error: a bootstrap over its sentences (resampled with
    replacement, the same resample for every model: paired), of each comparison's mean over seeds of
    the per-seed cross-entropy difference, over the seeds whose per-sentence losses both sides have.

    COMPARISONS: {name: (A, B)}. Returns {name: {"seeds", "diff" (the point estimate: the cards'
    differences), "se" (sd of the bootstrap differences), "ci95" (2.5 / 97.5 percentiles), "se_delta"
    (the delta-method standard error of the same ratio estimate: a check on the bootstrap)}}, and
    "single_model": the same for the baseline's CE alone. numpy Generator(PCG64(seed)), multinomial
    weights. Sentences, not tokens, are resampled: the masked tokens of a sentence are not
    independent."""
    import numpy as np
    keys = sorted(records)
    if not keys:
        return {}
    col = {k: i for i, k in enumerate(keys)}
    N = np.stack([records[k][0] for k in keys], axis=1)
    M = np.stack([records[k][1] for k in keys], axis=1).astype(np.float64)
    S = N.shape[0]
    rng = np.random.Generator(np.random.PCG64(seed))
    ce = []
    for start in range(0, resamples, 250):
        w = rng.multinomial(S, np.full(S, 1.0 / S), size=min(250, resamples - start)).astype(np.float64)
        ce.append((w @ N) / (w @ M))
    ce = np.concatenate(ce)                          # [resamples, models]
    point = N.sum(axis=0) / M.sum(axis=0)
    # delta method: CE = sum(nll) / sum(m); its linearisation per sentence is (nll_i - CE m_i) / mean(m) / S
    lin = (N - point[None, :] * M) / M.mean(axis=0)[None, :] / S

    def summarise(weights):
        d = ce @ weights
        lo, hi = np.percentile(d, [2.5, 97.5])
        return {"diff": float(point @ weights), "se": float(d.std(ddof=1)), "ci95": [float(lo), float(hi)],
                "se_delta": float(math.sqrt(S) * (lin @ weights).std(ddof=1))}

    out = {"resamples": resamples, "seed": seed, "sentences": int(S), "comparisons": {}}
    for name, (a, b) in comparisons.items():
        seeds = sorted(sd for (v, sd) in keys if v == a and (b, sd) in col)
        if not seeds:
            continue
        w = np.zeros(len(keys))
        for sd in seeds:
            w[col[(a, sd)]] += 1.0 / len(seeds)
            w[col[(b, sd)]] -= 1.0 / len(seeds)
        out["comparisons"][name] = dict(summarise(w), seeds=seeds, a=a, b=b)
    if ("baseline", 1) in col:
        w = np.zeros(len(keys))
        w[col[("baseline", 1)]] = 1.0
        out["single_model"] = dict(summarise(w), model="baseline seed 1")
    return out


LONG_SEEDS = (1, 2, 3)   # issue 27: the long pair, three seeds each

# The 4,000-step pairs against the baseline: (variant, table4.json key, what it asks). Each pair's two
# tests (gap_4000, gap_change) join the one Holm family once all its LONG_SEEDS runs exist; until
# then they are listed as pending (table4.json "pending"), and their arrival makes the family larger.
LONG_PAIRS = [
    ("no-c2p", "long_paired", "issue 27: does -c2p's cost hold, grow or close with four times the training?"),
    ("no-emd-abs-depth", "long_emd_paired", "issue 58, item 8: §3.2's reading (EMD vs positions at the input, "
     "equal depth) at four times the training; pre-registered before any of its runs"),
]


def long_pair_block(long_cards, cards, variant="no-c2p"):
    """A long pair's tests, made once VARIANT and the baseline have every seed of LONG_SEEDS at 4,000 steps.

    {"gap_4000": paired t of VARIANT minus baseline test CE at 4,000 steps, seed by seed;
     "gap_change": paired t of (gap at 4,000 steps) minus (gap of the same seed's 1,000-step runs):
                   negative when the gap narrows with training}
    Both are members of the one Holm family (family_adjust). None until the seeds are complete. The runs' shared initialisation is checked by main (check_initialisations).
    """
    base_long = {c["seed"]: c for c in long_cards.get("baseline", [])}
    nc_long = {c["seed"]: c for c in long_cards.get(variant, [])}
    base_short = {c["seed"]: c for c in cards.get("baseline", [])}
    nc_short = {c["seed"]: c for c in cards.get(variant, [])}
    if not all(sd in base_long and sd in nc_long and sd in base_short and sd in nc_short for sd in LONG_SEEDS):
        return None
    gap_long = [nc_long[sd]["cross_entropy"] - base_long[sd]["cross_entropy"] for sd in LONG_SEEDS]
    gap_short = [nc_short[sd]["cross_entropy"] - base_short[sd]["cross_entropy"] for sd in LONG_SEEDS]
    out = {}
    for name, r in (("gap_4000", ps.paired_t([nc_long[sd]["cross_entropy"] for sd in LONG_SEEDS],
                                             [base_long[sd]["cross_entropy"] for sd in LONG_SEEDS])),
                    ("gap_change", ps.paired_t(gap_long, gap_short))):
        out[name] = _test_entry("cross_entropy", r, list(LONG_SEEDS))   # p_holm: family_adjust
    out["gap_4000"]["per_seed"] = gap_long
    out["gap_change"]["per_seed"] = [a - b for a, b in zip(gap_long, gap_short)]
    return out


def unigram_baseline(zoo=ZOO):
    """Unigram masked-LM baseline: piece frequencies of the training text (add-one smoothed over
    the non-special pieces), scored on the test split's masks (as make_zoo.py's runs). Cached in
    ZOO/unigram.json; a cache that is not valid JSON, or lacks masked_tokens / the metrics, is
    BadInput (delete it to recompute)."""
    cache = os.path.join(zoo, "unigram.json")
    if os.path.lexists(cache):
        r = load_json(cache)
        try:
            if not isinstance(r, dict):
                raise ValueError("not a JSON object")
            if "masked_tokens" not in r:
                raise ValueError("missing key 'masked_tokens'")
            _integer("masked_tokens", r["masked_tokens"], 1)
            _metrics("", r)
        except ValueError as e:
            raise BadInput("%s: %s (delete it to recompute)" % (cache, e))
        return r
    import numpy as np
    import sentencepiece as spm
    from zoo import make_zoo
    from train import train_tiny as tt
    sp = spm.SentencePieceProcessor(model_file=os.path.join(HERE, "vocab", "spm.model"))
    V = sp.get_piece_size()
    _, train = tt.encode_file(sp, make_zoo.train_text(), 128)
    counts = np.zeros(V, dtype=np.float64)
    for s in train:
        np.add.at(counts, s[(s >= tt.N_SPECIAL)], 1.0)
    counts[tt.N_SPECIAL:] += 1.0
    logp = np.full(V, -np.inf)
    logp[tt.N_SPECIAL:] = np.log(counts[tt.N_SPECIAL:] / counts[tt.N_SPECIAL:].sum())
    order = np.argsort(-logp, kind="stable")
    rank = np.empty(V, dtype=np.int64)
    rank[order] = np.arange(V)
    _, held = tt.encode_file(sp, os.path.join(HERE, "corpus", "heldout.txt"), 128)
    test = held[make_zoo.VALIDATION_SENTENCES:]
    nll, n, c1, c5 = 0.0, 0, 0, 0
    for inp, am, lab in tt.heldout_batches(test, V, seed=make_zoo.EVAL_SEED + 1):
        y = lab[lab >= 0]
        nll -= float(logp[y].sum())
        c1 += int((rank[y] < 1).sum())
        c5 += int((rank[y] < 5).sum())
        n += int(y.size)
    r = {"source": "corpus/train.txt piece counts, add-one smoothed", "scored_on": "test split masks",
         "masked_tokens": n, "cross_entropy": nll / n, "top1": c1 / n, "top5": c5 / n}
    with open(cache, "w") as f:
        json.dump(r, f, indent=1)
    return r


# The same component switched at inference in the shipped baseline (seed 1): deberta_torch
# Ablation fields, use_emd, the CLI flags, the trained variants it is to be read beside, and what
# the switch does and does not do. No inference-time switch moves the absolute positions to the
# input (no-emd-abs, c2c-abs) or gives "EMD with I = H" (no-emd-depth, no-emd-abs-depth).
INFERENCE = {
    "c2p off": ({"c2p": False}, None, "--terms c2c,p2c", ["no-c2p"], "the c2p term removed from every layer's scores"),
    "p2c off": ({"p2c": False}, None, "--terms c2c,c2p", ["no-p2c"], "the p2c term removed from every layer's scores"),
    "EMD off": ({}, False, "--no-emd", ["no-emd", "no-emd-abs"],
                "the LM head reads the last encoder layer: no absolute position enters anywhere, one layer "
                "application fewer; the positions are not moved to the input (no-emd-abs trained them there)"),
    "p2p on": ({"p2p": True}, None, "--terms c2c,c2p,p2c,p2p", ["p2p"],
               "the p2p term added with the trained relative embeddings (the baseline never trained with it)"),
    "paper p2c index": ({"p2c_index": "paper"}, None, "--p2c-index paper", ["p2c-paper"],
                        "p2c reads delta(j,i) instead of the code's delta(i,j)"),
    "c2c only": ({"c2p": False, "p2c": False}, None, "--terms c2c", ["c2c-abs"],
                 "c2p and p2c removed; the EMD still adds the absolute positions in the decoder (c2c-abs adds "
                 "them at the input instead, and has no EMD)"),
}


def inference_ablations(weights, zoo=ZOO):
    """Test-split numbers of the shipped baseline (seed 1, ZOO/deberta-tiny-baseline, whose card
    gives WEIGHTS, its weights_sha256) with one component switched off at inference (float64, the
    masks of the runs). Cached in ZOO/inference.json, keyed by WEIGHTS; a cache that is not a
    valid JSON object is BadInput (delete it to recompute)."""
    cache = os.path.join(zoo, "inference.json")
    if os.path.lexists(cache):
        r = load_json(cache)
        if not isinstance(r, dict):
            raise BadInput("%s: not a JSON object (delete it to recompute)" % cache)
        if r.get("baseline_weights_sha256") == weights and isinstance(r.get("switches"), dict):
            return r
    import numpy as np
    import sentencepiece as spm
    import torch
    from lib import deberta_torch as dt
    from zoo import make_zoo
    from train import train_tiny as tt
    torch.set_num_threads(1)
    model_dir = os.path.join(zoo, "deberta-tiny-baseline")
    model = dt.load_model(model_dir, torch.float64)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(model_dir, "spm.model"))
    _, held = tt.encode_file(sp, os.path.join(HERE, "corpus", "heldout.txt"), 128)
    batches = tt.heldout_batches(held[make_zoo.VALIDATION_SENTENCES:], sp.get_piece_size(),
                                 seed=make_zoo.EVAL_SEED + 1)
    out = {"baseline_weights_sha256": weights, "model": "models/zoo/deberta-tiny-baseline (seed 1)",
           "as_trained": tt.evaluate(model, batches), "switches": {}}
    for switch, (fields, use_emd, flags, beside, what) in INFERENCE.items():
        r = tt.evaluate(model, batches, ablation=dt.Ablation(**fields), use_emd=use_emd)
        r.update(flags=flags, read_beside_trained=beside, what=what)
        out["switches"][switch] = r
        print("inference %-16s ce %.4f top1 %.4f" % (switch, r["cross_entropy"], r["top1"]), file=sys.stderr)
    with open(cache, "w") as f:
        json.dump(out, f, indent=1)
    return out


def rerun_results(runs_dir):
    """The rerun_start.json of every run folder under RUNS_DIR (rerun_zoo_start.py), in variant
    order; a file that is not valid JSON is BadInput."""
    out = []
    for _, _, path in run_files(runs_dir, "rerun_start.json"):
        r = load_json(path)
        if not isinstance(r, dict):
            raise BadInput("%s: not a JSON object" % path)
        out.append(r)
    return out


def plot_curves(cards, path, title, variants=None, gap=None):
    """Validation curves, mean over seeds with a min-max band. With gap=(a, b), a second panel
    draws b minus a per seed that both have (the gap's path within paired runs)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    if gap:
        fig, (ax, gx) = plt.subplots(2, 1, figsize=(8, 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    else:
        fig, ax = plt.subplots(figsize=(8, 5))
    for variant, label, *_ in VARIANTS:
        if variant not in cards or (variants and variant not in variants):
            continue
        curves = [c["validation_curve"] for c in cards[variant]]
        steps = [e["step"] for e in curves[0]]
        ys = [[e["cross_entropy"] for e in cv] for cv in curves if len(cv) == len(steps)]
        mean = [sum(col) / len(col) for col in zip(*ys)]
        line, = ax.plot(steps, mean, label="%s (%d seed%s)" % (label, len(ys), "" if len(ys) == 1 else "s"))
        if len(ys) > 1:
            ax.fill_between(steps, [min(col) for col in zip(*ys)], [max(col) for col in zip(*ys)],
                            color=line.get_color(), alpha=0.15)
    ax.set_ylabel("validation cross-entropy (nats)\nheldout.txt, first 1,000 sentences")
    ax.set_title(title)
    ax.set_ylim(top=min(ax.get_ylim()[1], 7.0))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if gap:
        a, b = gap
        runs_a = {c["seed"]: c for c in cards.get(a, [])}
        label_b = next(label for v, label, *_ in VARIANTS if v == b)
        label_a = next(label for v, label, *_ in VARIANTS if v == a)
        for c in cards.get(b, []):
            if c["seed"] not in runs_a:
                continue
            va = {e["step"]: e["cross_entropy"] for e in runs_a[c["seed"]]["validation_curve"]}
            pts = [(e["step"], e["cross_entropy"] - va[e["step"]]) for e in c["validation_curve"] if e["step"] in va]
            gx.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label="seed %d" % c["seed"])
        gx.axhline(0.0, color="black", linewidth=0.8)
        gx.set_ylabel("%s minus %s (nats)" % (label_b, label_a))
        gx.grid(alpha=0.3)
        gx.legend(fontsize=8)
        gx.set_xlabel("training step")
        fig.align_ylabels((ax, gx))
    else:
        ax.set_xlabel("training step")
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def long_section(L, long_cards, cards, variant, key, asks, label, tests):
    """The page's section of one long pair (baseline vs VARIANT at 4,000 steps): the runs, the per-seed
    gaps at 1,000 / 4,000 steps and along the validation curve, the two family tests (TESTS, or None
    while seeds are missing: then what is missing and the command that runs them), the kernels."""
    title = {"no-c2p": "## The long pair (4,000 steps)",
             "no-emd-abs-depth": "## The 4,000-step check of §3.2: baseline vs −EMD, positions at input, depth-matched"}
    L.append(title.get(variant, "## Baseline vs %s at 4,000 steps" % label))
    L.append("")
    L.append("*%s*" % (asks[0].upper() + asks[1:]))
    L.append("")
    base_long = {c["seed"]: c for c in long_cards.get("baseline", [])}
    var_long = {c["seed"]: c for c in long_cards.get(variant, [])}
    base_short = {c["seed"]: c for c in cards.get("baseline", [])}
    var_short = {c["seed"]: c for c in cards.get(variant, [])}
    rows = [(v, c) for v in ("baseline", variant) for c in long_cards.get(v, [])]
    if var_long:
        L.append("| variant | seed | test CE | top-1 % | top-5 % | kernels |")
        L.append("|---|---|---|---|---|---|")
        for v, c in rows:
            L.append("| %s | %d | %.3f | %.1f | %.1f | %s |" % (v, c["seed"], c["cross_entropy"], 100 * c["top1"],
                                                              100 * c["top5"], c.get("openblas_core", "unknown")))
        L.append("")
    paired = sorted(set(base_long) & set(var_long))
    if paired:
        marks = (1000, 2000, 3000, 4000)
        L.append("%s minus baseline, per seed: test cross-entropy of the 1,000-step recipe runs and of the "
                 "4,000-step runs, and the long runs' validation cross-entropy at steps %s (one run each, so "
                 "the gap's path within a run; the learning rate decays over 4,000 steps there)."
                 % (_label_minus(label), ", ".join("{:,}".format(m) for m in marks)))
        L.append("")
        L.append("| seed | test, 1,000-step runs | test, 4,000-step runs | " +
                 " | ".join("validation @ {:,}".format(m) for m in marks) + " |")
        L.append("|---|---|---|" + "---|" * len(marks))
        for sd in paired:
            short = ("%+.3f" % (var_short[sd]["cross_entropy"] - base_short[sd]["cross_entropy"])
                     if sd in var_short and sd in base_short else "—")
            vb = {e["step"]: e["cross_entropy"] for e in base_long[sd]["validation_curve"]}
            vn = {e["step"]: e["cross_entropy"] for e in var_long[sd]["validation_curve"]}
            path = ["%+.3f" % (vn[m] - vb[m]) if m in vb and m in vn else "—" for m in marks]
            L.append("| %d | %s | %+.3f | %s |" % (sd, short, var_long[sd]["cross_entropy"] - base_long[sd]["cross_entropy"],
                                                  " | ".join(path)))
        L.append("")
        cores = {v: sorted({c.get("openblas_core", "unknown") for c in long_cards.get(v, [])}) for v in ("baseline", variant)}
        if cores["baseline"] != cores[variant] or "unknown" in cores["baseline"]:
            L.append("**Kernels differ or are unknown** (baseline: %s; %s: %s): the pair is not one with nothing "
                     "else changed." % (", ".join(cores["baseline"]), _label_minus(label), ", ".join(cores[variant])))
            L.append("")
    if tests:
        g, ch = tests["gap_4000"], tests["gap_change"]
        L.append("Paired over the three seeds (two-sided t, 95 %% t-interval, unadjusted; both tests are members of "
                 "the one Holm family above): %s minus baseline at 4,000 steps **%+.3f [%+.3f, %+.3f]** "
                 "(simultaneous [%+.3f, %+.3f]), p %.2g, p_holm %.2g (%s); its change from the same seeds' 1,000-step "
                 "gap %+.3f [%+.3f, %+.3f] (simultaneous [%+.3f, %+.3f]), p %.2g, p_holm %.2g (%s)."
                 % (_label_minus(label), g["mean_diff"], g["ci95"][0], g["ci95"][1], g["ci_simultaneous"][0],
                    g["ci_simultaneous"][1], g["p"], g["p_holm"],
                    "beyond noise" if g["beyond_noise"] else "not beyond noise",
                    ch["mean_diff"], ch["ci95"][0], ch["ci95"][1], ch["ci_simultaneous"][0], ch["ci_simultaneous"][1],
                    ch["p"], ch["p_holm"], "beyond noise" if ch["beyond_noise"] else "not beyond noise"))
        L.append("")
    missing = [v + " seed " + str(sd) for v, have in (("baseline", base_long), (variant, var_long))
               for sd in LONG_SEEDS if sd not in have]
    if missing:
        L.append("Not run yet: %s. Until the pair has its three seeds no test is made here%s. The runs: "
                 "`/usr/bin/python3 notebooks_data/zoo/make_zoo.py --queue %s --jobs 2 --commit` "
                 "(add `--stop-after N` to pause each at step N; the same command continues them)."
                 % (", ".join(missing), ": the lines above are observations" if paired else "",
                    " ".join("%s@%d:%d" % (v, sd, LONG_STEPS) for v, have in (("baseline", base_long), (variant, var_long))
                             for sd in LONG_SEEDS if sd not in have)))
        base_cores = sorted({c.get("openblas_core", "unknown") for c in base_long.values()})
        if base_long and len(missing) <= len(LONG_SEEDS) and all(m.startswith(variant + " ") for m in missing):
            L.append("The baseline's long runs trained on %s kernels: for a pair whose kernels match too, run "
                     "these where make_zoo picks the same kernels from the CPU (it records them on each card%s). "
                     "Elsewhere the baseline's three would have to be re-trained too, and into another folder: run "
                     "folders are named by variant, seed and steps only."
                     % (", ".join(base_cores), "; SkylakeX kernels need AVX-512" if "SkylakeX" in base_cores else ""))
        L.append("")
    if var_long or (variant == "no-c2p" and long_cards):
        name = "table4_long_curves.png" if variant == "no-c2p" else "table4_long_%s_curves.png" % variant
        L.append("![long runs](images/%s)" % name)
        L.append("")


def kernel_checks(runs_dir, cards, records):
    """The kernels' own effect (issue 58): runs under <runs_dir>/../zoo-kernels/<variant>-s<seed>-<core>/
    re-train a committed run's variant and seed by its recipe on other OpenBLAS kernels (the card
    records them). Each is checked (check_card; init_sha256 equal to the committed run's) and compared
    with it: {"variant", "seed", "openblas_core", "reference_openblas_core", "cross_entropy",
    "reference_cross_entropy", "diff" (this minus the committed run), "bootstrap" (the test-set
    bootstrap of diff, when both have per-sentence losses), "same_kernels" ({variant: its seed's run
    on these kernels minus this run} for every committed run of that seed trained on them)}."""
    import lzma
    root = os.path.join(os.path.dirname(os.path.abspath(runs_dir)), "zoo-kernels")
    out = []
    if not os.path.isdir(root):
        return out
    by = {(v, c["seed"]): c for v, runs in cards.items() for c in runs}
    for sub in sorted(os.listdir(root)):
        path = os.path.join(root, sub, "card.json")
        if not os.path.isfile(path):
            continue
        card = load_json(path)
        try:
            if not isinstance(card, dict) or card.get("variant") not in dict((v, 1) for v, *_ in VARIANTS):
                raise ValueError("variant is not one of the zoo's")
            check_card(card, card["variant"], "s%d" % card.get("seed", -1))
        except ValueError as e:
            raise BadInput("%s: %s" % (path, e))
        ref = by.get((card["variant"], card["seed"]))
        if ref is None or ref["init_sha256"] != card["init_sha256"] or ref["recipe_steps"] != card["recipe_steps"]:
            raise BadInput("%s: no committed run of %s seed %d with its initialisation and steps"
                           % (path, card["variant"], card["seed"]))
        entry = {"run": os.path.relpath(os.path.join(root, sub), os.path.dirname(os.path.abspath(runs_dir))),
                 "variant": card["variant"], "seed": card["seed"], "openblas_core": card["openblas_core"],
                 "torch_version": card["torch_version"], "reference_openblas_core": ref["openblas_core"],
                 "cross_entropy": card["cross_entropy"], "reference_cross_entropy": ref["cross_entropy"],
                 "top1": card["top1"], "top5": card["top5"], "weights_sha256": card["weights_sha256"],
                 "diff": card["cross_entropy"] - ref["cross_entropy"],
                 "max_validation_diff": max(abs(e["cross_entropy"] - r_["cross_entropy"])
                                            for e in card["validation_curve"] for r_ in ref["validation_curve"]
                                            if e["step"] == r_["step"]),
                 "same_kernels": {v: c["cross_entropy"] - card["cross_entropy"] for (v, sd), c in by.items()
                                  if sd == card["seed"] and c["openblas_core"] == card["openblas_core"]
                                  and v != card["variant"]}}
        spath = os.path.join(root, sub, SENTENCES_FILE)
        if os.path.isfile(spath) and (card["variant"], card["seed"]) in records:
            with lzma.open(spath, "rt") as f:
                r = json.load(f)
            if r.get("weights_sha256") != card["weights_sha256"]:
                raise BadInput("%s: weights_sha256 is not its card's" % spath)
            import numpy as np
            mine = (np.asarray(r["nll"], dtype=np.float64), np.asarray(r["masked"], dtype=np.int64))
            if abs(mine[0].sum() / mine[1].sum() - card["cross_entropy"]) > 1e-9:
                raise BadInput("%s: its total is not the card's cross-entropy" % spath)
            recs = {("kernels", 0): mine, ("ref", 0): records[(card["variant"], card["seed"])]}
            comps = {"diff": (("kernels"), ("ref"))}
            for v in entry["same_kernels"]:
                if (v, card["seed"]) in records:
                    recs[(v, 0)] = records[(v, card["seed"])]
                    comps["same_kernels/" + v] = (v, "kernels")
            entry["bootstrap"] = sentence_bootstrap(recs, comps).get("comparisons", {})
        out.append(entry)
    return out


def fmt(x, nd=3):
    return ("%%.%df" % nd) % x


# --- the notes (docs/table4-notes.md) are a template: every number and verdict in them comes from
# table4.json through these placeholders, so the sentences say what the tests say (issue 58) -------
#   {{t:REF}}   "+0.053 [+0.040, +0.066], p 0.00036, p_holm 0.0054 — beyond noise" (Δ, unadjusted 95 % CI)
#   {{v:REF}}   "beyond noise" / "not beyond noise"      {{d:REF}}  "+0.053"
#   {{ci:REF}} the unadjusted 95 % interval, {{sci:REF}} the simultaneous one "[+0.031, +0.075]"
#   {{range:REF}} the per-seed differences "+0.039 … +0.061"   {{n:REF}} the number of seeds
#   {{each:REF}} every per-seed difference "+0.033, +0.009 and +0.012"
#   {{bse:REF}} the seed-1 test-set bootstrap's standard error, {{bci:REF}} its 95 % interval,
#   {{bd:REF}} its point estimate (the seed-1 difference); {{kc:FIELD}} the kernel check (kernel_checks)
#   {{m}} the family's size                                  {{bse1}} the baseline's own bootstrap SE
#   [[if REF|text when beyond noise|text when not]]   (the texts may hold placeholders, not "|" or "]]")
# REF: "paired/<variant>", "contrasts/<A> vs <B>", "long_paired/gap_4000", "long_emd_paired/gap_change", ...

def _minus(text):
    """Prose uses the minus sign (U+2212)."""
    return text.replace("-", "\u2212")


def _label_minus(label):
    """A variant's label in prose: its leading "-" (the component taken away) is a minus sign, the
    hyphens inside it ("depth-matched") stay hyphens."""
    return "\u2212" + label[1:] if label.startswith("-") else label


def _g(x):
    """p-values as the table prints them (2 significant digits; 1 as 1.0)."""
    return "1.0" if x >= 1.0 else "%.2g" % x


def _lookup(table, ref, where):
    part, _, name = ref.partition("/")
    group = table.get(part)
    if not isinstance(group, dict) or name not in group:
        raise BadInput("%s: %s: no such test in table4.json" % (where, ref))
    return group[name]


def render_notes(text, table, where="table4-notes.md"):
    """TEXT with its placeholders filled from TABLE (table4.json's dict); BadInput naming WHERE and the
    placeholder when one names no test or is malformed."""
    import re
    boot = (table.get("sentence_bootstrap") or {}).get("comparisons", {})

    def cond(mo):
        t = _lookup(table, mo.group(1).strip(), where)
        return mo.group(2) if t["beyond_noise"] else mo.group(3)
    text = re.sub(r"\[\[if ([^|\]]+)\|(.*?)\|(.*?)\]\]", cond, text, flags=re.S)

    def one(mo):
        kind, _, ref = mo.group(1).partition(":")
        if kind == "m":
            return str(table["recipe"]["family_size"])
        if kind == "kc":   # {{kc:FIELD}} of the first kernel check: diff, cross_entropy, reference_cross_entropy,
            #                openblas_core, reference_openblas_core, bse (its bootstrap SE), same/<variant>
            if not table.get("kernel_checks"):
                raise BadInput("%s: {{kc:%s}}: no kernel check in table4.json" % (where, ref))
            k = table["kernel_checks"][0]
            if ref == "bse":
                v = k["bootstrap"]["diff"]["se"]
                return "%.4f" % v if v >= 5e-4 else "%.1e" % v
            if ref.startswith("same/"):
                return _minus("%+.3f" % k["same_kernels"][ref[5:]])
            if ref.startswith("samebse/"):
                return "%.4f" % k["bootstrap"]["same_kernels/" + ref[8:]]["se"]
            v = k[ref]
            if ref == "diff":
                return _minus("%+.3f" % v if abs(v) >= 5e-4 else "%+.1e" % v)
            if ref == "max_validation_diff":
                return "%.1e" % v
            return "%.9f" % v if isinstance(v, float) else str(v)
        if kind == "bse1":
            return "%.4f" % table["sentence_bootstrap"]["single_model"]["se"]
        if kind == "bd":
            if ref not in boot:
                raise BadInput("%s: {{%s}}: no test-set bootstrap for %s" % (where, mo.group(1), ref))
            return _minus("%+.3f" % boot[ref]["diff"])
        if kind in ("bse", "bci"):
            if ref not in boot:
                raise BadInput("%s: {{%s}}: no test-set bootstrap for %s" % (where, mo.group(1), ref))
            b = boot[ref]
            return "%.4f" % b["se"] if kind == "bse" else _minus("[%+.3f, %+.3f]" % tuple(b["ci95"]))
        t = _lookup(table, ref, where)
        if kind == "t":
            return _minus("%+.3f [%+.3f, %+.3f]" % (t["mean_diff"], t["ci95"][0], t["ci95"][1])) + \
                ", p %s, p_holm %s — %s" % (_g(t["p"]), _g(t["p_holm"]),
                                            "beyond noise" if t["beyond_noise"] else "not beyond noise")
        if kind == "v":
            return "beyond noise" if t["beyond_noise"] else "not beyond noise"
        if kind == "d":
            return _minus("%+.3f" % t["mean_diff"])
        if kind == "ci":
            return _minus("[%+.3f, %+.3f]" % tuple(t["ci95"]))
        if kind == "sci":
            return _minus("[%+.3f, %+.3f]" % tuple(t["ci_simultaneous"]))
        if kind == "range":
            return _minus("%+.3f … %+.3f" % (min(t["per_seed"]), max(t["per_seed"])))
        if kind == "n":
            return str(t["n"])
        if kind == "each":
            vals = [_minus("%+.3f" % x) for x in t["per_seed"]]
            return ", ".join(vals[:-1]) + " and " + vals[-1] if len(vals) > 1 else vals[0]
        raise BadInput("%s: {{%s}}: unknown placeholder" % (where, mo.group(1)))
    out = re.sub(r"\{\{([^{}]+)\}\}", one, text)
    if "{{" in out or "[[if" in out:
        raise BadInput("%s: a placeholder is not closed" % where)
    return out


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description="The mini Table 4 (docs/table4.md, models/zoo/table4.json) from the zoo's run cards.",
        epilog="Reads RUNS-DIR/<variant>/<run>/card.json, ZOO-DIR's caches (unigram.json, inference.json; "
               "computed when absent) and DOCS-DIR/table4-notes.md; writes ZOO-DIR/table4.json, "
               "DOCS-DIR/table4.md and DOCS-DIR/images/table4_curves.png (table4_long_curves.png with "
               "the long runs).")
    ap.add_argument("--runs-dir", default=RUNS, help="the run cards (default: notebooks_data/models/zoo-runs)")
    ap.add_argument("--zoo-dir", default=ZOO, help="caches, the shipped baseline and table4.json "
                    "(default: notebooks_data/models/zoo)")
    ap.add_argument("--docs-dir", default=DOCS, help="table4.md, images/ and table4-notes.md (default: docs)")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        build(args.runs_dir, args.zoo_dir, args.docs_dir)
    except BadInput as e:
        raise SystemExit("make_table4: %s" % e)


def build(runs_dir, zoo_dir, docs_dir):
    """Check every card, then write the table, its figures and its page (see the module's doc)."""
    all_cards = read_cards(runs_dir)
    cards = all_cards.get(RECIPE_STEPS, {})
    long_cards = all_cards.get(LONG_STEPS, {})
    if "baseline" not in cards:
        raise SystemExit("make_table4: no finished baseline run under %s" % runs_dir)
    if not any(c["seed"] == 1 for c in cards["baseline"]):
        raise SystemExit("make_table4: no baseline run of seed 1 (the shipped model) under %s" % runs_dir)
    seeds_hash = check_initialisations(cards)
    # The long runs of a seed start from that seed's one initialisation too.
    check_initialisations({v: cards.get(v, []) + long_cards.get(v, []) for v in set(cards) | set(long_cards)})
    tests, contrasts = paired_block(cards)
    long_groups = {key: long_pair_block(long_cards, cards, variant) if long_cards else None
                   for variant, key, _ in LONG_PAIRS}
    long_tests = long_groups["long_paired"]
    family = family_adjust(tests["cross_entropy"], contrasts["cross_entropy"], long_groups)
    pending = [{"tests": [key + ".gap_4000", key + ".gap_change"], "asks": asks,
                "missing": [v + " seed " + str(sd) for v in ("baseline", variant) for sd in LONG_SEEDS
                            if sd not in {c["seed"] for c in long_cards.get(v, [])}]}
               for variant, key, asks in LONG_PAIRS if long_groups[key] is None]
    records = sentence_records(cards, runs_dir, zoo_dir)
    comparisons = {"paired/" + v: (v, "baseline") for v in tests["cross_entropy"]}
    comparisons.update({"contrasts/" + contrast_name(a, b): (a, b) for a, b, _ in CONTRASTS
                        if contrast_name(a, b) in contrasts["cross_entropy"]})
    bootstrap = sentence_bootstrap(records, comparisons)
    kernels = kernel_checks(runs_dir, cards, records)
    uni = unigram_baseline(zoo_dir)
    inference = inference_ablations(next(c for c in cards["baseline"] if c["seed"] == 1)["weights_sha256"], zoo_dir)

    table = {"recipe": {"steps": RECIPE_STEPS, "test_split": "heldout.txt sentences 1000..end",
                        "primary_metric": "cross_entropy",
                        "test": "paired t (two-sided); Holm over one family of %d tests: every variant vs the "
                                "baseline, the contrasts between variants, each long pair's two tests" % family,
                        "family_size": family, "beyond_noise": "p_holm < 0.05",
                        "intervals": "ci95: unadjusted 95 % t-interval (each alone); ci_simultaneous: Bonferroni "
                                     "over the family (all together, >= 95 %)",
                        "pending": pending,
                        "sign_test_floor": {str(n): sign_test_floor(n) for n in (3, 5)}},
             "init_sha256_by_seed": {str(k): v for k, v in sorted(seeds_hash.items())},
             "unigram": uni, "inference": inference, "variants": {}, "paired": tests["cross_entropy"],
             "contrasts": contrasts["cross_entropy"],
             "paired_secondary": {m: tests[m] for m in ("top1", "top5")}, "models": {},
             "sentence_bootstrap": bootstrap, "kernel_checks": kernels}
    for variant, label, change, paper in VARIANTS:
        runs = cards.get(variant, [])
        entry = {"label": label, "change": change, "paper": paper,
                 "seeds": [{k: c[k] for k in ("seed", "init_sha256", "cross_entropy", "top1", "top5", "steps")}
                           for c in runs]}
        for m in METRICS:
            vals = [c[m] for c in runs]
            if vals:
                mean = sum(vals) / len(vals)
                entry[m + "_mean"] = mean
                entry[m + "_sd"] = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else None
        table["variants"][variant] = entry
        shipped = [c for c in runs if c["seed"] == 1]
        if shipped:   # the viewer's Compare tab lists the shipped model (seed 1) with its numbers
            c = shipped[0]
            table["models"]["deberta-tiny-" + variant] = {"variant": label, "change": change, "seed": 1,
                                                          "top1": c["top1"], "top5": c["top5"],
                                                          "cross_entropy": c["cross_entropy"]}
    if long_cards:
        table["long"] = {v: [{"seed": c["seed"], "init_sha256": c["init_sha256"], "steps": c["steps"],
                              "cross_entropy": c["cross_entropy"],
                              "top1": c["top1"], "top5": c["top5"], "validation_curve": c["validation_curve"]}
                             for c in runs] for v, runs in long_cards.items()}
        for key, group in long_groups.items():
            if group:
                table[key] = group
    with open(os.path.join(zoo_dir, "table4.json"), "w") as f:
        json.dump(table, f, indent=1)

    images = os.path.join(docs_dir, "images")
    os.makedirs(images, exist_ok=True)
    plot_curves(cards, os.path.join(images, "table4_curves.png"),
                "Zoo learning curves (1,000 steps; line: mean over seeds, band: min-max)")
    for variant, _, _ in LONG_PAIRS:
        if long_cards.get(variant) or (variant == "no-c2p" and long_cards):   # issue 27's figure: any long run
            name = "table4_long_curves.png" if variant == "no-c2p" else "table4_long_%s_curves.png" % variant
            plot_curves(long_cards, os.path.join(images, name), "Long runs: baseline vs %s (4,000 steps)" % variant,
                        variants=("baseline", variant), gap=("baseline", variant))

    L = []
    L.append("# A mini Table 4: DeBERTa's components, each trained away")
    L.append("")
    L.append("*Generated by `notebooks_data/zoo/make_table4.py` from the run cards in "
             "`notebooks_data/models/zoo-runs/` — do not edit by hand. The readings are in the notes below.*")
    L.append("")
    L.append("Every variant of the bundled tiny model (4 layers, H = 192, 4 heads, k = 32 log buckets) is "
             "pre-trained by one recipe (`notebooks_data/zoo/make_zoo.py`: corpus, vocabulary, optimizer, 1,000 steps), "
             "changing only the named component. **One initialisation per seed**: for seed s every variant starts "
             "from the baseline's initial tensors of seed s for every tensor they share (`init_sha256` in each "
             "card, equal across variants: checked) and reads the same batches and training masks. "
             "**Metric**: masked-LM cross-entropy (nats) on the test split — `heldout.txt` after its first "
             "1,000 sentences (%d masked tokens), never used in training; the first 1,000 held-out sentences give "
             "the learning curves. Top-1 / top-5 are secondary." % uni["masked_tokens"])
    L.append("")
    n_long = sum(len([k for k in g if k in ("gap_4000", "gap_change")]) for g in long_groups.values() if g)
    floor5, floor3 = sign_test_floor(5), sign_test_floor(3)
    L.append("**Test**: for each variant the per-seed differences from the baseline of the same seed, a paired "
             "two-sided t test with a 95 %% t-interval. The p-values are Holm-corrected over **one family of %d "
             "tests**: the %d variants against the baseline, the %d contrasts between variants below, and the "
             "%d tests of the long pairs%s; *beyond noise* only when p_holm < 0.05, and a raw p is never called so. "
             "**The 95 %% intervals (\"95 %% CI\") are unadjusted**: each covers its own difference with 95 %%, "
             "not all of them together. The *simultaneous* intervals beside them are Bonferroni intervals over the "
             "family (t quantile 1 − 0.05/(2 · %d)): all %d cover together with at least 95 %%. Holm's verdicts are "
             "step-down and have no simple interval of their own, so a simultaneous interval can hold 0 where Holm "
             "says *beyond noise*. "
             "**Exact tests**: a sign or Wilcoxon signed-rank test over %d pairs that all point one way gives "
             "p = 2/2⁵ = %.4g two-sided, and p = 1/2⁵ = %.4g one-sided (over %d pairs: %.3g and %.3g); so no "
             "two-sided distribution-free test over five seeds or fewer can reach p < 0.05, while a one-sided one "
             "over five seeds can, only if all five point the direction named before the data. No one-sided test "
             "is made here: every verdict rests on the two-sided t test and its assumption of roughly normal "
             "per-seed differences. Unigram baseline (piece frequencies "
             "of the training text, scored on the same masks): CE %.3f, top-1 %.1f %%, top-5 %.1f %%." % (
                 family, len(tests["cross_entropy"]), len(contrasts["cross_entropy"]), n_long,
                 "" if not pending else " (the pre-registered tests of %s join it when their runs exist: %s)" % (
                     ", ".join(" and ".join(p_["tests"]) for p_ in pending),
                     "; ".join(", ".join(p_["missing"]) for p_ in pending)),
                 family, family, floor5["pairs"], floor5["two_sided"], floor5["one_sided"], floor3["pairs"],
                 floor3["two_sided"], floor3["one_sided"], uni["cross_entropy"], 100 * uni["top1"], 100 * uni["top5"]))
    L.append("")
    L.append("| variant | trained with | seeds | CE mean (sd) | Δ CE vs baseline [95 % CI, unadjusted] | "
             "simultaneous CI | p | p (Holm) | "
             "beyond noise | top-1 % | top-5 % | paper, Table 4 (base models; MNLI-m/mm acc, SQuAD F1/EM, RACE acc) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for variant, label, change, paper in VARIANTS:
        e = table["variants"][variant]
        n = len(e["seeds"])
        if n == 0:
            L.append("| %s | %s | 0 | (not trained yet) | | | | | | | | %s |" % (label, change, paper))
            continue
        sd = e["cross_entropy_sd"]
        ce = "%s (%s)" % (fmt(e["cross_entropy_mean"]), fmt(sd) if sd is not None else "—")
        t = tests["cross_entropy"].get(variant)
        if variant == "baseline":
            d = sci = p = ph = verdict = "—"
        elif t is None:
            d, sci, p, ph, verdict = "(fewer than 2 paired seeds)", "", "", "", ""
        else:
            d = "%+.3f [%+.3f, %+.3f]" % (t["mean_diff"], t["ci95"][0], t["ci95"][1])
            sci = "[%+.3f, %+.3f]" % tuple(t["ci_simultaneous"])
            p, ph = "%.2g" % t["p"], "%.2g" % t["p_holm"]
            verdict = "**yes**" if t["beyond_noise"] else "no"
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %s |" % (
            label, change, ", ".join(str(s["seed"]) for s in e["seeds"]), ce, d, sci, p, ph, verdict,
            100 * e["top1_mean"], 100 * e["top5_mean"], paper))
    L.append("")
    L.append("Secondary metrics, paired the same way (Δ in points, Holm-corrected per metric):")
    L.append("")
    L.append("| variant | Δ top-1 [95 % CI] | p (Holm) | Δ top-5 [95 % CI] | p (Holm) |")
    L.append("|---|---|---|---|---|")
    for variant, label, *_ in VARIANTS[1:]:
        a, b = tests["top1"].get(variant), tests["top5"].get(variant)
        if a is None:
            continue
        L.append("| %s | %+.2f [%+.2f, %+.2f] | %.2g | %+.2f [%+.2f, %+.2f] | %.2g |" % (
            label, 100 * a["mean_diff"], 100 * a["ci95"][0], 100 * a["ci95"][1], a["p_holm"],
            100 * b["mean_diff"], 100 * b["ci95"][0], 100 * b["ci95"][1], b["p_holm"]))
    L.append("")
    L.append("**Contrasts between variants** (A minus B, paired over the seeds both have; in the family above):")
    L.append("")
    L.append("| A vs B | question | seeds | Δ CE [95 % CI, unadjusted] | simultaneous CI | p | p (Holm) | beyond noise |")
    L.append("|---|---|---|---|---|---|---|---|")
    labels = {v: label for v, label, *_ in VARIANTS}
    for a, b, question in CONTRASTS:
        t = contrasts["cross_entropy"].get(contrast_name(a, b))
        if t is None:
            L.append("| %s vs %s | %s | (fewer than 2 paired seeds) | | | | | |" % (labels[a], labels[b], question))
            continue
        L.append("| %s vs %s | %s | %s | %+.3f [%+.3f, %+.3f] | [%+.3f, %+.3f] | %.2g | %.2g | %s |" % (
            labels[a], labels[b], question, ", ".join(str(x) for x in t["seeds"]), t["mean_diff"], t["ci95"][0],
            t["ci95"][1], t["ci_simultaneous"][0], t["ci_simultaneous"][1], t["p"], t["p_holm"],
            "**yes**" if t["beyond_noise"] else "no"))
    L.append("")
    boot = bootstrap.get("comparisons", {}) if bootstrap else {}
    L.append("**The test split's own sampling error** (a bootstrap over its %s sentences). Every run is scored on one "
             "fixed test split, so which sentences happened to be held out is the same for every seed and is in no "
             "interval above. `notebooks_data/zoo/sentence_losses.py` re-scores a model sentence by sentence (its "
             "total equals the card's cross-entropy to 1e-9); the sentences are resampled with replacement, the same "
             "resample for both models of a comparison (%s resamples, numpy PCG64 seed %s), and the comparison's "
             "difference recomputed. Per-sentence losses need the weights, and only the shipped runs' weights "
             "(seed 1) are committed, so this is the **seed-1 difference's** test-set error, not the mean over seeds'; "
             "make_zoo.py now writes the per-sentence losses of every run it trains, so a re-run of seeds 2–5 would "
             "give it for the mean. The delta-method standard error of the same ratio is beside it as a check."
             % ("{:,}".format(bootstrap["sentences"]) if bootstrap else "test",
                "{:,}".format(bootstrap["resamples"]) if bootstrap else "—", bootstrap.get("seed", "—") if bootstrap else "—"))
    L.append("")
    if boot:
        one = bootstrap.get("single_model")
        if one:
            L.append("One model's cross-entropy alone (the baseline, seed 1): %.3f, bootstrap SE %.4f (delta method "
                     "%.4f), 95 %% interval [%.3f, %.3f]. A paired difference between two models on the same "
                     "sentences has a much smaller SE, below." % (one["diff"], one["se"], one["se_delta"],
                                                                  one["ci95"][0], one["ci95"][1]))
            L.append("")
        L.append("| comparison | seed-1 Δ CE | bootstrap SE | bootstrap 95 % interval | delta-method SE | seed SE "
                 "(sd / √n, over seeds) |")
        L.append("|---|---|---|---|---|---|")
        for name, b in boot.items():
            kind, _, key = name.partition("/")
            t = (tests["cross_entropy"] if kind == "paired" else contrasts["cross_entropy"]).get(key)
            what = ("%s vs baseline" % labels[key]) if kind == "paired" else "%s vs %s" % (labels[b["a"]], labels[b["b"]])
            L.append("| %s | %+.3f | %.4f | [%+.3f, %+.3f] | %.4f | %s |" % (
                what, b["diff"], b["se"], b["ci95"][0], b["ci95"][1], b["se_delta"],
                "%.4f" % (t["sd_diff"] / math.sqrt(t["n"])) if t else "—"))
        L.append("")
    else:
        L.append("(No per-sentence losses yet: `sentence_losses.py MODEL_DIR` writes them.)")
        L.append("")
    L.append("![validation learning curves](images/table4_curves.png)")
    L.append("")
    labels_long = {v: label for v, label, *_ in VARIANTS}
    for variant, key, asks in LONG_PAIRS:
        long_section(L, long_cards, cards, variant, key, asks, labels_long[variant], table.get(key))
    L.append("The long runs keep a checkpoint (`resume.pt`, every 100 steps; not committed: ~41 MB) and continue "
             "from it when started again on the same machine, ending with the bits of a run straight through; a new "
             "checkout starts them over. Each is about 40 minutes of one core at 0.6 s a step on SkylakeX kernels (1.5 s "
             "on the Prescott fallback; 1.67 s on Haswell kernels measured at nice 19 on a shared two-core AMD EPYC "
             "host on 2026-11-28, 20 steps, load ≈ 9: about 1.9 hours a run there) with two runs at once on a "
             "two-core host: `make_zoo.py --queue baseline@2:4000 no-c2p@2:4000 … --jobs 2 --commit`; "
             "`--stop-after N` pauses every run at step N (its checkpoint kept, no card) and the same command "
             "without it continues them.")
    L.append("")
    reruns = rerun_results(runs_dir)
    L.append("**The kernels of each run.** Every card records the OpenBLAS kernels it trained on (`openblas_core`) and "
             "the torch version (`torch_version`); runs from before 2026-11-26 did not record them. "
             "`notebooks_data/zoo/rerun_zoo_start.py RUN_DIR` re-trains the first 200 steps of a run on each candidate "
             "kernel set (its own arguments, seed and schedule) and compares every number the run logged up to "
             "step 200 (the training loss at steps 100 and 200, the validation curve's cross-entropy, top-1 and "
             "top-5 at both): a match is equality to 1e-12. A matching re-run gives the card its kernels and this "
             "torch; a card neither recorded nor matched says \"unknown\". Re-runs (one run per variant):")
    L.append("")
    if reruns:
        L.append("| run | recorded | tried | verdict | max \\|difference\\| of the last tried |")
        L.append("|---|---|---|---|---|")
        for r in reruns:
            tried = r.get("tried", [])
            last = tried[-1] if tried else {}
            L.append("| %s | %s | %s | %s | %s |" % (
                r.get("run", "?"), r.get("recorded_openblas_core") or "—",
                ", ".join("%s%s" % (t["core"], " (stopped at step 100)" if t.get("stopped_early") else "") for t in tried),
                "matches on %s (torch %s)" % (r["openblas_core"], r.get("torch_version")) if r.get("openblas_core") not in
                (None, "unknown") else "no candidate matched",
                "%.3g over %d numbers" % (last["max_abs_diff"], last["compared"]) if last.get("max_abs_diff") is not None
                else "—"))
    else:
        L.append("(none yet)")
    L.append("")
    L.append("Each run: `/usr/bin/python3 notebooks_data/zoo/make_zoo.py --variant V --seed S` regenerates its weights: "
             "the same init_sha256 on any machine, and the same test cross-entropy on the same OpenBLAS kernels "
             "(torch's float32 products round as the kernels do, and training carries the difference on). make_zoo "
             "picks the kernels from the CPU's features and each card records them (`openblas_core`: "
             "`OPENBLAS_CORETYPE=<it>` reproduces a run). Only seed 1 of each variant ships (`notebooks_data/models/zoo/deberta-tiny-<variant>`); "
             "every run's card, log and curve is committed.")
    L.append("")
    notes = os.path.join(docs_dir, "table4-notes.md")
    if os.path.isfile(notes):
        with open(notes, encoding="utf-8") as f:
            L.append(render_notes(f.read(), table, notes).rstrip("\n"))
        L.append("")
    with open(os.path.join(docs_dir, "table4.md"), "w") as f:
        f.write("\n".join(L))
    print("wrote %s, %s, %s" % (os.path.join(docs_dir, "table4.md"), os.path.join(zoo_dir, "table4.json"),
                                os.path.join(images, "table4_curves.png")), file=sys.stderr)


if __name__ == "__main__":
    main()
