"""notebooks_data/zoo/make_table4.py: --help writes nothing, the input / output folders, and bad run
cards end in one line "make_table4: <path>: <problem>" before anything is written (issue 44,
class 7).

make_table4.py runs from a temporary copy of the repository's layout (conftest.py) holding made-up
run cards (baseline, -c2p, -p2c and two -EMD variants, seeds 1-3, and a long baseline run) and the two caches it
reads (unigram.json, inference.json keyed by the made-up baseline's weights), so it computes
nothing with torch and never writes the committed table."""
import hashlib
import json
import math
import os
import shutil

import pytest

from conftest import NOTEBOOKS, assert_one_line_error, copy_script, import_script, run, tree_digest

CE = {"baseline": [4.60, 4.62, 4.61], "no-c2p": [4.70, 4.69, 4.73], "no-p2c": [4.61, 4.60, 4.64],
      "no-emd": [4.64, 4.63, 4.66], "no-emd-depth": [4.60, 4.63, 4.61]}


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def make_card(variant, seed, ce, steps=1000):
    """A run card as make_zoo.write_card writes it (made-up numbers)."""
    curve = [{"step": 100 * k, "cross_entropy": ce + 1.0 / k, "top1": 0.3 - 0.01 / k, "top5": 0.45 - 0.01 / k}
             for k in range(1, 4)]
    m = {"cross_entropy": ce, "top1": 0.3, "top5": 0.45}
    return dict(m, variant=variant, seed=seed, steps=steps, recipe_steps=steps, init_sha256=sha("init %d" % seed),
                init_sha256_tensors=72, init_own_tensors=[], test=dict(m, masked_tokens=100),
                validation_curve=curve, weights_sha256=sha("%s %d %d" % (variant, seed, steps)),
                train_seconds=1.0, openblas_core="SkylakeX", torch_version="1.13.1", command="(made up)")


def folder(seed, steps):
    return "s%d" % seed if steps == 1000 else "s%d-%dsteps" % (seed, steps)


def write_card(runs, card):
    d = os.path.join(runs, card["variant"], folder(card["seed"], card["recipe_steps"]))
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "card.json")
    with open(path, "w") as f:
        json.dump(card, f, indent=1)
    return path


@pytest.fixture
def t4(tmp_path):
    """tmp/notebooks_data/{make_table4.py, paired_stats.py, models/zoo-runs/..., models/zoo/{unigram,
    inference}.json}, tmp/docs/table4-notes.md. Returns a dict of paths."""
    root = str(tmp_path / "repo")
    script = copy_script(root, "zoo/make_table4.py")
    copy_script(root, "lib/paired_stats.py")
    nb = os.path.dirname(os.path.dirname(script))
    runs, zoo, docs = os.path.join(nb, "models", "zoo-runs"), os.path.join(nb, "models", "zoo"), os.path.join(root, "docs")
    for variant, ces in CE.items():
        for seed, ce in enumerate(ces, 1):
            write_card(runs, make_card(variant, seed, ce))
    write_card(runs, make_card("baseline", 1, 4.4, steps=4000))
    os.makedirs(zoo)
    with open(os.path.join(zoo, "unigram.json"), "w") as f:
        json.dump({"source": "made up", "masked_tokens": 100, "cross_entropy": 7.0, "top1": 0.03, "top5": 0.1}, f)
    with open(os.path.join(zoo, "inference.json"), "w") as f:
        json.dump({"baseline_weights_sha256": sha("baseline 1 1000"), "as_trained": {}, "switches": {}}, f)
    os.makedirs(docs)
    with open(os.path.join(docs, "table4-notes.md"), "w") as f:
        f.write("## Notes\n\nmade-up notes\n")
    return {"root": root, "script": script, "runs": runs, "zoo": zoo, "docs": docs}


OUTPUTS = ("zoo/table4.json", "docs/table4.md", "docs/images/table4_curves.png", "docs/images/table4_long_curves.png")


def outputs(zoo, docs):
    return [os.path.join(zoo if o.startswith("zoo/") else docs, o.split("/", 1)[1]) for o in OUTPUTS]


def test_help_prints_the_options_and_writes_nothing(t4):
    before = tree_digest(t4["root"])
    p = run(t4["script"], "--help")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage:") and "--runs-dir" in p.stdout and "--zoo-dir" in p.stdout, p.stdout
    assert tree_digest(t4["root"]) == before   # no table4.json, table4.md or curves written or changed


def test_table_from_the_default_folders(t4):
    p = run(t4["script"])
    assert p.returncode == 0, p.stderr
    for path in outputs(t4["zoo"], t4["docs"]):
        assert os.path.isfile(path), path
    with open(os.path.join(t4["zoo"], "table4.json")) as f:
        table = json.load(f)
    # The paired test of -c2p against the baseline, from the cards' numbers.
    d = [a - b for a, b in zip(CE["no-c2p"], CE["baseline"])]
    mean = sum(d) / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 2)
    r = table["paired"]["no-c2p"]
    assert r["seeds"] == [1, 2, 3] and r["n"] == 3
    assert abs(r["mean_diff"] - mean) <= 1e-14 and abs(r["sd_diff"] - sd) <= 1e-14
    assert abs(r["t"] - mean / (sd / math.sqrt(3))) <= 1e-12 * abs(r["t"])
    assert [s["seed"] for s in table["long"]["baseline"]] == [1]
    with open(os.path.join(t4["docs"], "table4.md")) as f:
        assert f.read().rstrip().endswith("made-up notes")


def test_contrasts_and_one_holm_family(t4):
    """Issue 42: the contrasts between variants are paired tests of their own (A minus B over the
    seeds both have), and every p_holm of "paired" and "contrasts" is Holm over the one family."""
    p = run(t4["script"])
    assert p.returncode == 0, p.stderr
    with open(os.path.join(t4["zoo"], "table4.json")) as f:
        table = json.load(f)
    c = table["contrasts"]["no-emd vs no-emd-depth"]
    d = [a - b for a, b in zip(CE["no-emd"], CE["no-emd-depth"])]
    assert c["seeds"] == [1, 2, 3] and abs(c["mean_diff"] - sum(d) / 3) <= 1e-14
    # Contrasts whose variants have no runs are absent, not made up.
    assert "no-emd-abs vs no-emd" not in table["contrasts"]
    family = [("paired", k, t) for k, t in table["paired"].items()] + \
             [("contrasts", k, t) for k, t in table["contrasts"].items()]
    # no-emd vs no-emd-depth, no-c2p vs no-emd, and no-c2p vs no-p2c (issue 58: the notes rank them)
    assert table["recipe"]["family_size"] == len(family) == 4 + 3
    ps = import_script(t4["root"] + "-stats", "lib/paired_stats")
    adjusted = ps.holm({(g, k): t["p"] for g, k, t in family})
    for g, k, t in family:
        assert abs(t["p_holm"] - adjusted[(g, k)]) <= 1e-15, (g, k)
        assert t["beyond_noise"] == (t["p_holm"] < 0.05)
    # Holm over 5 is not Holm over the 4 variants alone: the family is one.
    alone = ps.holm({k: t["p"] for k, t in table["paired"].items()})
    assert any(abs(alone[k] - t["p_holm"]) > 1e-12 for k, t in table["paired"].items())


def test_folder_options_read_and_write_only_there(t4, tmp_path):
    other = str(tmp_path / "other")
    runs, zoo, docs = (os.path.join(other, n) for n in ("runs", "zoo", "docs"))
    shutil.copytree(t4["runs"], runs)
    shutil.copytree(t4["zoo"], zoo)
    shutil.copytree(t4["docs"], docs)
    before = tree_digest(t4["root"])
    p = run(t4["script"], "--runs-dir", runs, "--zoo-dir", zoo, "--docs-dir", docs)
    assert p.returncode == 0, p.stderr
    assert tree_digest(t4["root"]) == before   # the default folders untouched
    for path in outputs(zoo, docs):
        assert os.path.isfile(path), path
    # The same cards give the same table from the default folders.
    assert run(t4["script"]).returncode == 0
    with open(os.path.join(zoo, "table4.json"), "rb") as a, open(os.path.join(t4["zoo"], "table4.json"), "rb") as b:
        assert a.read() == b.read()


def corrupt(how):
    """A function (path) that spoils the card at PATH; the problem make_table4 must name."""
    def edit(change):
        def apply(path):
            with open(path) as f:
                card = json.load(f)
            change(card)
            with open(path, "w") as f:
                json.dump(card, f, indent=1)   # Python writes NaN / Infinity as JSON's extensions
        return apply

    def text(data):
        def apply(path):
            with open(path, "wb") as f:
                f.write(data(open(path, "rb").read()) if callable(data) else data)
        return apply

    def directory(path):
        os.remove(path)
        os.mkdir(path)

    return {
        "nan": (edit(lambda c: c.update(cross_entropy=float("nan"))), "cross_entropy is nan, not a finite number"),
        "infinity_in_curve": (edit(lambda c: c["validation_curve"][1].update(top5=float("inf"))),
                              "validation_curve[1].top5 is inf, not a finite number"),
        "missing_key": (edit(lambda c: c.pop("init_sha256")), "missing key 'init_sha256'"),
        "missing_curve_key": (edit(lambda c: c["validation_curve"][0].pop("top1")),
                              "validation_curve[0]: missing key 'top1'"),
        "string_seed": (edit(lambda c: c.update(seed="2")), 'seed is "2" (a string), not an integer'),
        "bool_seed": (edit(lambda c: c.update(seed=True)), "seed is true (bool), not an integer"),
        "float_seed": (edit(lambda c: c.update(seed=2.0)), "seed is 2.0 (float), not an integer"),
        "string_metric": (edit(lambda c: c.update(top1="0.3")), 'top1 is "0.3" (a string), not a number'),
        "top1_above_top5": (edit(lambda c: c.update(top1=0.5)), "top1 0.5 is above top5 0.45"),
        "probability_above_1": (edit(lambda c: c.update(top5=1.5)), "top5 is 1.5, outside [0, 1]"),
        "seed_of_another_folder": (edit(lambda c: c.update(seed=3)), "the run's folder is s3, not s2"),
        "variant_of_another_folder": (edit(lambda c: c.update(variant="no-p2c")),
                                      'variant is "no-p2c", but the card is in the folder of no-c2p'),
        "bad_hash": (edit(lambda c: c.update(init_sha256="abc")), "init_sha256 is \"abc\", not 64 lower-case hex"),
        "null_kernels": (edit(lambda c: c.update(openblas_core=None)),
                         'openblas_core is null, not a non-empty string (a name, or "unknown")'),
        "no_torch_version": (edit(lambda c: c.pop("torch_version")), "missing key 'torch_version'"),
        "truncated": (text(lambda b: b[:len(b) // 2]), "not valid JSON ("),
        "empty": (text(b""), "not valid JSON (Expecting value at line 1 column 1)"),
        "not_an_object": (text(b"[1, 2]"), "a run card is a JSON object, this is list"),
        "not_utf8": (text(b'{"variant": "\xff"}'), "not UTF-8 (byte 13)"),
        "a_directory": (directory, "not a regular file"),
    }[how]


CASES = ["nan", "infinity_in_curve", "missing_key", "null_kernels", "no_torch_version", "missing_curve_key", "string_seed", "bool_seed", "float_seed",
         "string_metric", "top1_above_top5", "probability_above_1", "seed_of_another_folder",
         "variant_of_another_folder", "bad_hash", "truncated", "empty", "not_an_object", "not_utf8", "a_directory"]


@pytest.mark.parametrize("how", CASES)
def test_bad_card_is_one_line_naming_the_file_and_nothing_is_written(t4, how):
    spoil, problem = corrupt(how)
    path = os.path.join(t4["runs"], "no-c2p", "s2", "card.json")
    spoil(path)
    before = tree_digest(t4["root"])
    p = run(t4["script"])
    assert p.returncode == 1
    assert_one_line_error(p, "make_table4: %s: " % path, problem)
    assert tree_digest(t4["root"]) == before


@pytest.mark.parametrize("how", ["nan", "missing_key", "string_seed", "truncated"])
def test_bad_long_run_card_is_named_too(t4, how):
    spoil, problem = corrupt(how)
    path = os.path.join(t4["runs"], "baseline", "s1-4000steps", "card.json")
    spoil(path)
    p = run(t4["script"])
    assert_one_line_error(p, "make_table4: %s: " % path, problem)
    assert not os.path.exists(os.path.join(t4["zoo"], "table4.json"))


@pytest.mark.parametrize("cache, data, problem", [
    ("unigram.json", b'{"masked_tokens": 10, "cross', "not valid JSON ("),
    ("unigram.json", b'{"masked_tokens": 10, "cross_entropy": NaN, "top1": 0.1, "top5": 0.2}',
     "cross_entropy is nan, not a finite number (delete it to recompute)"),
    ("inference.json", b'{"baseline_weights_sha256": ', "not valid JSON ("),
    ("inference.json", b'"text"', "not a JSON object (delete it to recompute)"),
])
def test_bad_cache_is_one_line_naming_the_file(t4, cache, data, problem):
    path = os.path.join(t4["zoo"], cache)
    with open(path, "wb") as f:
        f.write(data)
    p = run(t4["script"])
    assert_one_line_error(p, "make_table4: %s: " % path, problem)
    assert not os.path.exists(os.path.join(t4["zoo"], "table4.json"))


def test_every_committed_card_passes_the_checks(tmp_path):
    """The checks refuse no card of the committed zoo (notebooks_data/models/zoo-runs)."""
    make_table4 = import_script(str(tmp_path), "zoo/make_table4")
    cards = make_table4.read_cards(os.path.join(NOTEBOOKS, "models", "zoo-runs"))
    n = sum(len(runs) for by_variant in cards.values() for runs in by_variant.values())
    on_disk = sum(1 for d, _, files in os.walk(os.path.join(NOTEBOOKS, "models", "zoo-runs")) if "card.json" in files)
    assert n == on_disk and n > 0
