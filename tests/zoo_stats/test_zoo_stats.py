"""The zoo's statistics and its shared initialisation (issue 27), run by ctest as `zoo_stats`.

paired_stats.py is plain Python; SciPy is the reference here only. The shared-initialisation test
builds small models with notebooks_data/train/train_tiny.py (torch, one thread)."""
import argparse
import math
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "notebooks_data"))
from lib import paired_stats as ps  # noqa: E402

import scipy.stats as scipy_stats  # noqa: E402  (the reference; a missing SciPy fails, not skips)
import torch  # noqa: E402

# Fixed numbers shaped like the zoo's: cross-entropies of 5 seeds (nats).
BASE = [4.6377, 4.6412, 4.6298, 4.6455, 4.6351]
VARIANTS = {
    "-c2p": [4.6951, 4.7003, 4.6870, 4.7012, 4.6934],   # clearly worse
    "-p2c": [4.6420, 4.6390, 4.6351, 4.6488, 4.6330],   # within noise
    "-EMD": [4.6800, 4.6710, 4.6699, 4.6905, 4.6702],
}


def test_paired_t_matches_scipy_ttest_rel():
    for name, v in VARIANTS.items():
        r = ps.paired_t(v, BASE)
        ref = scipy_stats.ttest_rel(v, BASE)
        assert abs(r["t"] - ref.statistic) <= 1e-12 * abs(ref.statistic), name
        assert abs(r["p"] - ref.pvalue) <= 1e-12 * max(ref.pvalue, 1e-300), name
        d = [a - b for a, b in zip(v, BASE)]
        lo, hi = scipy_stats.t.interval(0.95, len(d) - 1, loc=sum(d) / len(d), scale=scipy_stats.sem(d))
        assert abs(r["ci95"][0] - lo) <= 1e-11 and abs(r["ci95"][1] - hi) <= 1e-11, name


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 30])
@pytest.mark.parametrize("t", [0.0, 0.05, 1.0, 2.5, 8.0, 40.0])
def test_t_tail_matches_scipy(df, t):
    ref = 2.0 * scipy_stats.t.sf(t, df)
    assert abs(ps.t_sf2(t, df) - ref) <= 1e-13 + 1e-12 * ref


def test_t_quantile_exact_forms_and_scipy():
    # Closed forms: df = 1 (Cauchy) and df = 2.
    assert abs(ps.t_ppf(0.975, 1) - math.tan(math.pi * 0.475)) <= 1e-11
    q = 0.975
    assert abs(ps.t_ppf(q, 2) - (2 * q - 1) / math.sqrt(2 * q * (1 - q))) <= 1e-12
    for df in (3, 4, 9, 30):   # SciPy's inversion is itself good to ~1e-12 here
        assert abs(ps.t_ppf(0.975, df) - scipy_stats.t.ppf(0.975, df)) <= 1e-9


def test_holm_against_hand_computed_and_monotone():
    p = {"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.5}
    h = ps.holm(p)
    # sorted: a 0.01*4 = 0.04, c 0.03*3 = 0.09, b 0.04*2 = 0.08 -> max(0.09, 0.08) = 0.09, d 0.5*1 -> 0.5
    assert h == pytest.approx({"a": 0.04, "c": 0.09, "b": 0.09, "d": 0.5}, abs=1e-15)
    assert ps.holm({"x": 0.6, "y": 0.7}) == {"x": 1.0, "y": 1.0}


def test_verdicts_recomputable_and_errors():
    r = ps.paired_t(VARIANTS["-c2p"], BASE)
    assert r["p"] < 1e-4 and r["ci95"][0] > 0
    r2 = ps.paired_t(VARIANTS["-p2c"], BASE)
    assert r2["p"] > 0.05 and r2["ci95"][0] < 0 < r2["ci95"][1]
    with pytest.raises(ValueError):
        ps.paired_t([1.0], [2.0])
    with pytest.raises(ValueError):
        ps.paired_t([1.0, 2.0], [2.0])


def _table4():
    import json
    path = os.path.join(HERE, "..", "..", "notebooks_data", "models", "zoo", "table4.json")
    with open(path) as f:
        return json.load(f)


def _family_pvalues(table):
    """Every test of table4.json's one Holm family (issue 42), its p recomputed from the per-seed
    numbers the table lists: {("paired", variant) | ("contrast", "A vs B") | ("long", name): p}."""
    ce = {v: {s["seed"]: s["cross_entropy"] for s in e["seeds"]} for v, e in table["variants"].items()}
    out = {}
    for name in table["paired"]:
        seeds = sorted(set(ce[name]) & set(ce["baseline"]))
        out[("paired", name)] = ps.paired_t([ce[name][s] for s in seeds], [ce["baseline"][s] for s in seeds])["p"]
    for name, block in table.get("contrasts", {}).items():
        a, b = name.split(" vs ")
        seeds = sorted(set(ce[a]) & set(ce[b]))
        assert block["seeds"] == seeds, name
        out[("contrast", name)] = ps.paired_t([ce[a][s] for s in seeds], [ce[b][s] for s in seeds])["p"]
    for group in LONG_GROUPS:
        for name, block in table.get(group, {}).items():
            if name in ("gap_4000", "gap_change"):
                out[(group, name)] = block["p"]   # recomputed from the runs by the long-pair test below
    return out


LONG_GROUPS = {"long_paired": "no-c2p", "long_emd_paired": "no-emd-abs-depth"}   # make_table4.LONG_PAIRS


def test_table4_paired_block_follows_from_its_seeds():
    """models/zoo/table4.json: every p and verdict of the one Holm family (variants against the
    baseline, contrasts between variants, the long pair) recomputed from the per-seed numbers."""
    table = _table4()
    if "paired" not in table:
        pytest.fail("table4.json has no 'paired' block")
    assert "contrasts" in table, "table4.json has no 'contrasts' block (issue 42)"
    base = {s["seed"]: s for s in table["variants"]["baseline"]["seeds"]}
    for name, block in table["paired"].items():
        seeds = [s for s in table["variants"][name]["seeds"] if s["seed"] in base]
        for s in seeds:
            assert s["init_sha256"] == base[s["seed"]]["init_sha256"], (name, s["seed"])
        r = ps.paired_t([s["cross_entropy"] for s in seeds], [base[s["seed"]]["cross_entropy"] for s in seeds])
        assert block["metric"] == "cross_entropy"
        assert abs(block["mean_diff"] - r["mean_diff"]) <= 1e-12
        assert abs(block["p"] - r["p"]) <= 1e-12
    pvals = _family_pvalues(table)
    assert table["recipe"]["family_size"] == len(pvals)
    adjusted = ps.holm(pvals)
    blocks = {("paired", k): v for k, v in table["paired"].items()}
    blocks.update({("contrast", k): v for k, v in table["contrasts"].items()})
    for group in LONG_GROUPS:
        blocks.update({(group, k): v for k, v in table.get(group, {}).items() if k in ("gap_4000", "gap_change")})
    for key, block in blocks.items():
        assert abs(block["p"] - pvals[key]) <= 1e-12, key
        assert abs(block["p_holm"] - adjusted[key]) <= 1e-12, key
        assert block["beyond_noise"] == (adjusted[key] < 0.05), key


@pytest.mark.parametrize("group", sorted(LONG_GROUPS))
def test_table4_long_pair_follows_from_its_seeds(group):
    """table4.json's long pairs (issue 27's, and issue 58's 4,000-step check of §3.2): each pair's two
    tests recomputed from the long and 1,000-step runs it lists; a pair is tested exactly when its
    three seeds are in, and listed as pending (pre-registered) until then."""
    table = _table4()
    variant = LONG_GROUPS[group]
    long_runs = {v: {s["seed"]: s for s in runs} for v, runs in table.get("long", {}).items()}
    complete = all(sd in long_runs.get(v, {}) for v in ("baseline", variant) for sd in (1, 2, 3))
    assert (group in table) == complete, "the long pair is tested exactly when its three seeds are in"
    pending = [t for p in table["recipe"]["pending"] for t in p["tests"]]
    assert ((group + ".gap_4000") in pending) == (not complete)
    if not complete:
        return
    short = {v: {s["seed"]: s for s in table["variants"][v]["seeds"]} for v in ("baseline", variant)}
    seeds = table[group]["gap_4000"]["seeds"]
    assert seeds == [1, 2, 3]
    for sd in seeds:  # one initialisation per seed: the long runs' and the 1,000-step runs'
        for v in ("baseline", variant):
            assert long_runs[v][sd]["init_sha256"] == table["init_sha256_by_seed"][str(sd)], (v, sd)
    ce = lambda runs, v: [runs[v][sd]["cross_entropy"] for sd in seeds]  # noqa: E731
    gap_long = [a - b for a, b in zip(ce(long_runs, variant), ce(long_runs, "baseline"))]
    gap_short = [a - b for a, b in zip(ce(short, variant), ce(short, "baseline"))]
    for name, r in (("gap_4000", ps.paired_t(ce(long_runs, variant), ce(long_runs, "baseline"))),
                    ("gap_change", ps.paired_t(gap_long, gap_short))):
        block = table[group][name]
        for key in ("mean_diff", "p"):
            assert abs(block[key] - r[key]) <= 1e-12, (name, key)
        assert all(abs(a - b) <= 1e-12 for a, b in zip(block["ci95"], r["ci95"]))
        # its verdict is the family's (p_holm, checked in the test above), not the raw p's
        assert block["beyond_noise"] == (block["p_holm"] < 0.05) and block["p_holm"] >= block["p"]


def _small_config():
    from train import train_tiny as tt
    a = argparse.Namespace(hidden=16, layers=2, heads=2, intermediate=32, max_len=16,
                           max_relative_positions=16, position_buckets=4)
    return tt, tt.model_config(50, a)


def test_shared_initialisation_across_variants():
    tt, base_cfg = _small_config()
    common = tt.common_parameter_names(base_cfg)
    hashes = {}
    states = {}
    for variant in ("baseline", "no-emd", "c2c-abs", "no-emd-depth", "no-emd-abs"):
        model = tt.build_model(tt.apply_variant(base_cfg, variant), variant)
        own = tt.init_shared(model, tt.baseline_initial_state(base_cfg, 7), 7)
        assert own == [], variant          # every tensor of these variants is one of the baseline's
        hashes[variant] = tt.init_sha256(model, common)
        states[variant] = {n: p.detach().clone() for n, p in model.named_parameters()}
    assert len(set(hashes.values())) == 1
    for variant, st in states.items():
        for name, tensor in st.items():
            assert torch.equal(tensor, states["baseline"][name]), (variant, name)
    # The baseline itself starts exactly as the plain recipe (torch.manual_seed, init_weights).
    torch.manual_seed(7)
    plain = tt.build_model(base_cfg, "baseline")
    tt.init_weights(plain)
    for name, p in plain.named_parameters():
        assert torch.equal(p, states["baseline"][name]), name
    # Another seed gives other tensors, so the hash can tell seeds apart.
    other = tt.build_model(base_cfg, "baseline")
    tt.init_shared(other, tt.baseline_initial_state(base_cfg, 8), 8)
    assert tt.init_sha256(other, common) != hashes["baseline"]


def test_resumed_run_has_the_bits_of_an_uninterrupted_one(tmp_path):
    """--resumable (the long runs of item 5 span sessions): a run stopped after its checkpoints of
    steps 20 and 30 and resumed twice ends with the same weights, curves and test figure as one run
    straight through, across epoch boundaries (a 300-sentence text: an epoch is a few batches)."""
    import subprocess
    import json
    from zoo import make_zoo
    root = os.path.join(HERE, "..", "..", "notebooks_data")
    small = tmp_path / "train.txt"
    with open(make_zoo.train_text(), encoding="utf-8") as f:
        small.write_text("".join(f.readline() for _ in range(300)), encoding="utf-8")
    args = [sys.executable, os.path.join(root, "train", "train_tiny.py"), "--variant", "no-emd", "--seed", "2",
            "--hidden", "32", "--intermediate", "64", "--layers", "2", "--heads", "2", "--max-steps", "40",
            "--eval-every", "10", "--warmup", "5", "--time-budget", "0", "--eval-sentences", "50",
            "--weights-dtype", "f16", "--shared-init", "--resumable", "--test", "--train", str(small)]
    env = dict(os.environ, OMP_NUM_THREADS="1")

    def run(out, *extra):
        r = subprocess.run(args + ["--out", str(out)] + list(extra), env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    run(tmp_path / "straight")
    assert "exit after the checkpoint of step 20" in run(tmp_path / "resumed", "--exit-after-checkpoint", "20")
    assert (tmp_path / "resumed" / "resume.pt").exists()
    # A checkpoint continues only on the OpenBLAS kernels that wrote it (they decide the rounding).
    probe = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); from train import train_tiny; "
                            "print(train_tiny.openblas_core())" % root], env=env, capture_output=True, text=True)
    current = probe.stdout.strip()
    if current not in ("", "None"):
        other = "Nehalem" if current == "Prescott" else "Prescott"  # both run on every x86-64
        r = subprocess.run(args + ["--out", str(tmp_path / "resumed")], env=dict(env, OPENBLAS_CORETYPE=other),
                           capture_output=True, text=True)
        assert r.returncode != 0 and "written on OpenBLAS kernels " + current in r.stdout + r.stderr, r.stdout + r.stderr
    log = run(tmp_path / "resumed", "--exit-after-checkpoint", "30")
    assert "resumed from" in log and "at step 20" in log
    log = run(tmp_path / "resumed")
    assert "at step 30" in log
    assert not (tmp_path / "resumed" / "resume.pt").exists()  # a finished run leaves no checkpoint
    a, b = (json.load(open(tmp_path / d / "training_log.json")) for d in ("straight", "resumed"))
    assert a["epochs_completed"] == b["epochs_completed"] >= 3
    strip = lambda curve: [{k: v for k, v in e.items() if k != "seconds"} for e in curve]  # noqa: E731
    assert strip(a["heldout_curve"]) == strip(b["heldout_curve"])
    assert [e["train_loss"] for e in a["loss_curve"]] == [e["train_loss"] for e in b["loss_curve"]]
    assert a["test"]["cross_entropy"] == b["test"]["cross_entropy"]
    assert (tmp_path / "straight" / "model.safetensors").read_bytes() == (tmp_path / "resumed" / "model.safetensors").read_bytes()
    # --stop-after with --resumable (issue 58, item 8) pauses at one of the run's checkpoints and
    # keeps it: no test figure yet; a later --stop-after pauses again, none runs to the end, and the
    # run ends with the bits of the run straight through.
    r = subprocess.run(args + ["--out", str(tmp_path / "paused"), "--stop-after", "15"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "multiple of --eval-every" in r.stderr, r.stdout + r.stderr
    assert "paused at step 20 of 40" in run(tmp_path / "paused", "--stop-after", "20")
    assert (tmp_path / "paused" / "resume.pt").exists()
    assert "test" not in json.load(open(tmp_path / "paused" / "training_log.json"))
    assert "at or past --stop-after 20" in run(tmp_path / "paused", "--stop-after", "20")   # nothing to do
    log = run(tmp_path / "paused", "--stop-after", "30")
    assert "at step 20" in log and "paused at step 30 of 40" in log
    log = run(tmp_path / "paused")
    assert "at step 30" in log and not (tmp_path / "paused" / "resume.pt").exists()
    c = json.load(open(tmp_path / "paused" / "training_log.json"))
    assert strip(a["heldout_curve"]) == strip(c["heldout_curve"])
    assert [e["train_loss"] for e in a["loss_curve"]] == [e["train_loss"] for e in c["loss_curve"]]
    assert a["test"]["cross_entropy"] == c["test"]["cross_entropy"] and c["stopped_by"] == "max_steps"
    assert (tmp_path / "straight" / "model.safetensors").read_bytes() == (tmp_path / "paused" / "model.safetensors").read_bytes()


# --- issue 58, item 7: the docs say what table4.json's tests say ---------------------------------

ROOT = os.path.join(HERE, "..", "..")
NB = os.path.join(ROOT, "notebooks_data")


def _docs(name):
    with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
        return f.read()


def _family_blocks(table):
    blocks = {("paired", k): v for k, v in table["paired"].items()}
    blocks.update({("contrasts", k): v for k, v in table["contrasts"].items()})
    for group in LONG_GROUPS:
        blocks.update({(group, k): v for k, v in table.get(group, {}).items() if k in ("gap_4000", "gap_change")})
    return blocks


def test_the_docs_comparisons_are_in_the_family():
    """−c2p vs −p2c and −c2p vs the depth-matched positions-at-input −EMD (the notes rank them) are
    contrasts of the one Holm family, paired over seeds 1–5."""
    table = _table4()
    for name in ("no-c2p vs no-p2c", "no-emd-abs-depth vs no-c2p"):
        block = table["contrasts"][name]
        assert block["seeds"] == [1, 2, 3, 4, 5] and "p_holm" in block, name
    assert table["recipe"]["family_size"] == len(_family_blocks(table))


def test_simultaneous_intervals_are_bonferroni_over_the_family():
    table = _table4()
    m = table["recipe"]["family_size"]
    for key, t in _family_blocks(table).items():
        half = ps.t_ppf(1.0 - 0.05 / (2 * m), t["df"]) * t["sd_diff"] / math.sqrt(t["n"])
        lo, hi = t["ci_simultaneous"]
        assert abs(lo - (t["mean_diff"] - half)) <= 1e-12 and abs(hi - (t["mean_diff"] + half)) <= 1e-12, key
        assert lo <= t["ci95"][0] and hi >= t["ci95"][1], key   # wider than the unadjusted interval
    floor = table["recipe"]["sign_test_floor"]
    assert floor["5"] == {"pairs": 5, "two_sided": 2 / 32, "one_sided": 1 / 32}
    assert floor["3"] == {"pairs": 3, "two_sided": 2 / 8, "one_sided": 1 / 8}


def test_the_page_is_the_notes_rendered_from_table4_json():
    """docs/table4.md holds docs/table4-notes.md with every placeholder filled from the committed
    table4.json: a number or verdict in the notes that the table does not give fails here."""
    from zoo import make_table4
    rendered = make_table4.render_notes(_docs("table4-notes.md"), _table4())
    assert "{{" not in rendered and "[[if" not in rendered
    assert rendered.rstrip("\n") in _docs("table4.md")


def test_every_verdict_on_the_page_is_a_family_test_s():
    """Every "p X, p_holm Y — (not) beyond noise" on docs/table4.md (tables' prose, notes) is one of the
    family's tests, printed as table4.json holds it; "beyond noise" only where p_holm < 0.05."""
    import re
    from zoo import make_table4
    table = _table4()
    known = {(make_table4._g(t["p"]), make_table4._g(t["p_holm"]), t["beyond_noise"]) for t in _family_blocks(table).values()}
    known |= {("%.2g" % t["p"], "%.2g" % t["p_holm"], t["beyond_noise"]) for t in _family_blocks(table).values()}
    page = _docs("table4.md")
    found = re.findall(r"p ([0-9.e+-]+), p_holm ([0-9.e+-]+) (?:— |\()(not )?beyond noise", page)
    assert len(found) >= 25, found   # the notes' bullets and the long pair's paragraph
    for p, ph, neg in found:
        assert (p, ph, not neg) in known, (p, ph, neg)
        assert (float(ph) < 0.05) == (not neg) or ph == "0.05", (p, ph, neg)


def test_the_ranking_and_4000_step_sentences_follow_the_tests():
    table = _table4()
    page = _docs("table4.md")
    c = table["contrasts"]
    if not c["no-c2p vs no-p2c"]["beyond_noise"]:
        assert 'So "c2p matters most" is not shown here' in page
        assert "c2p matters more than p2c here" not in page
    if not table["long_paired"]["gap_change"]["beyond_noise"]:
        assert "whether the gap narrows with training is not shown" in page
        assert '"The gap narrows with 4,000 steps" is what the three seeds suggest, not what the test shows' in page
        assert "with 4,000 steps the gap narrows" not in page
    # "Nothing else changed" is said of the recipe only, or denied: the control's runs and the
    # baseline's ran on other kernels (their cards say so).
    import re
    for mo in re.finditer(r"nothing else", page):
        window = page[max(0, mo.start() - 16): mo.start() + 60]  # "not one with " is 13 characters
        assert "recipe" in window or "not one with" in window, window
    assert "The 95 % intervals (\"95 % CI\") are unadjusted" in page
    assert "1/2⁵ = 0.03125 one-sided" in page and "no two-sided distribution-free test" in page


def test_the_paper_s_table_10_is_cited_with_its_numbers():
    """Appendix A.4 / Table 10 (DeBERTa-AP: absolute positions at the input), with the perplexities
    as the paper prints them, and the log ratios computed from them."""
    page = _docs("table4.md")
    assert "appendix A.4, Table 10" in page
    for text in ("RoBERTa 21.6 / 21.6", "DeBERTa-AP 20.7 / 20.0", "DeBERTa 20.5 / 19.9"):
        assert text in page, text
    assert "ln(20.7/20.5) = %.4f" % math.log(20.7 / 20.5) in page
    assert "ln(20.0/19.9) = %.4f" % math.log(20.0 / 19.9) in page


def test_test_set_bootstrap_is_recomputable_and_matches_the_cards():
    """The per-sentence losses committed beside the shipped models are those runs' (weights_sha256,
    total = the card's CE to 1e-9); the bootstrap's point estimates are the cards' differences and its
    standard errors agree with the delta method's within 15 %."""
    import numpy as np
    from zoo import make_table4
    table = _table4()
    cards = make_table4.read_cards(os.path.join(NB, "models", "zoo-runs"))[1000]
    records = make_table4.sentence_records(cards, os.path.join(NB, "models", "zoo-runs"), os.path.join(NB, "models", "zoo"))
    assert ("baseline", 1) in records and len(records) >= 4
    by = {(v, c["seed"]): c for v, runs in cards.items() for c in runs}
    boot = table["sentence_bootstrap"]
    assert boot["sentences"] == 8628
    for name, b in boot["comparisons"].items():
        for sd in b["seeds"]:
            assert (b["a"], sd) in records and (b["b"], sd) in records, name
        diff = sum(by[(b["a"], sd)]["cross_entropy"] - by[(b["b"], sd)]["cross_entropy"] for sd in b["seeds"]) / len(b["seeds"])
        assert abs(b["diff"] - diff) <= 1e-9, name
        assert b["ci95"][0] < b["diff"] < b["ci95"][1], name
        assert 0.85 < b["se"] / b["se_delta"] < 1.15, name
    one = boot["single_model"]
    nll, masked = records[("baseline", 1)]
    assert abs(nll.sum() / masked.sum() - one["diff"]) <= 1e-12
    assert 0.85 < one["se"] / one["se_delta"] < 1.15
    assert int(masked.sum()) == 24942 and np.all(masked >= 1)


def test_every_shipped_card_names_its_kernels_and_torch():
    """openblas_core and torch_version on every shipped card (models/zoo/*/card.json), equal to its
    seed-1 run card's, with a kernels_note; "unknown" only with a note saying it was not recorded."""
    import glob
    import json
    import subprocess
    shipped = sorted(glob.glob(os.path.join(NB, "models", "zoo", "deberta-tiny-*", "card.json")))
    assert len(shipped) == 10
    runs = sorted(glob.glob(os.path.join(NB, "models", "zoo-runs", "*", "*", "card.json")))
    for path in shipped + runs:
        with open(path) as f:
            card = json.load(f)
        for key in ("openblas_core", "torch_version"):
            assert isinstance(card.get(key), str) and card[key], (path, key)
            if card[key] == "unknown":
                assert "not recorded" in card["kernels_note"] and key in card["kernels_note"], path
        assert card["kernels_note"], path
        if path in shipped:
            with open(os.path.join(NB, "models", "zoo-runs", card["variant"], "s1", "card.json")) as f:
                run = json.load(f)
            assert card["weights_sha256"] == run["weights_sha256"]
            for key in ("openblas_core", "torch_version", "kernels_note"):
                assert card[key] == run[key], (path, key)
    r = subprocess.run([sys.executable, os.path.join(NB, "zoo", "card_kernels.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_kernel_check_is_the_committed_run_on_other_kernels():
    """models/zoo-kernels/: the baseline's seed 1 re-trained by its recipe on other OpenBLAS kernels
    (the kernels' own effect on a run, issue 58). Same initialisation as the committed run, other
    kernels on its card; table4.json's differences recomputed from the cards."""
    import json
    table = _table4()
    checks = table["kernel_checks"]
    assert len(checks) >= 1
    runs = {}
    for v, e in table["variants"].items():
        for s in e["seeds"]:
            with open(os.path.join(NB, "models", "zoo-runs", v, "s%d" % s["seed"], "card.json")) as f:
                runs[(v, s["seed"])] = json.load(f)
    for k in checks:
        with open(os.path.join(NB, "models", k["run"], "card.json")) as f:
            card = json.load(f)
        ref = runs[(k["variant"], k["seed"])]
        assert card["init_sha256"] == ref["init_sha256"] and card["steps"] == ref["steps"]
        assert card["openblas_core"] == k["openblas_core"] != ref["openblas_core"] == k["reference_openblas_core"]
        assert abs(k["diff"] - (card["cross_entropy"] - ref["cross_entropy"])) <= 1e-12
        same = {v: c["cross_entropy"] - card["cross_entropy"] for (v, sd), c in runs.items()
                if sd == k["seed"] and c["openblas_core"] == card["openblas_core"] and v != k["variant"]}
        assert same.keys() == k["same_kernels"].keys() and same
        assert all(abs(same[v] - k["same_kernels"][v]) <= 1e-12 for v in same)
        assert abs(k["bootstrap"]["diff"]["diff"] - k["diff"]) <= 1e-9
