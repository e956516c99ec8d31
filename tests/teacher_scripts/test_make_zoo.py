"""notebooks_data/zoo/make_zoo.py's arguments, queue and exit status (issue 44, classes 6 and 7).

make_zoo.py runs here from a temporary copy of the repository's layout whose train_tiny.py is a
stub (conftest.py): the stub has the real VARIANTS; run as the trainer it records its arguments in
trainer_calls.log and fails, or, for the variants named in FAKE_TRAINER_OK, writes the
training_log.json and weights that make_zoo's card reads. No test trains a model."""
import json
import os
import pprint

import pytest

from conftest import assert_one_line_error, copy_script, import_script, run, train_tiny_variants

STUB = '''"""Stub of train_tiny.py (tests/teacher_scripts): the real VARIANTS; as a script it records
its arguments in ../../trainer_calls.log (the test's tmp folder), then fails unless its --variant is in FAKE_TRAINER_OK."""
import json
import os
import sys

VARIANTS = %s

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "trainer_calls.log"), "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\\n")
    a = sys.argv
    variant, seed, steps = a[a.index("--variant") + 1], int(a[a.index("--seed") + 1]), int(a[a.index("--max-steps") + 1])
    if variant not in os.environ.get("FAKE_TRAINER_OK", "").split(","):
        print("stub trainer: failing on purpose")
        sys.exit(3)
    out = a[a.index("--out") + 1]
    if "--stop-after" in a:   # pause: keep a checkpoint, write no final log (train_tiny --resumable --stop-after)
        assert "--resumable" in a
        open(os.path.join(out, "resume.pt"), "w").write(a[a.index("--stop-after") + 1])
        sys.exit(0)
    if os.path.exists(os.path.join(out, "resume.pt")):
        os.remove(os.path.join(out, "resume.pt"))   # continued to the end
    m = {"cross_entropy": 5.0 + seed / 100.0, "top1": 0.25, "top5": 0.5}
    log = {"steps": steps, "init_sha256": "%%064x" %% seed, "init_sha256_tensors": 72, "init_own_tensors": [],
           "test": dict(m, masked_tokens=10), "heldout_curve": [dict(m, step=steps)], "train_seconds": 1.0,
           "openblas_core": "SkylakeX", "torch_version": "1.13.1"}
    with open(os.path.join(out, "training_log.json"), "w") as f:
        json.dump(log, f)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(b"stub weights")
'''


SENTENCE_STUB = '''"""Stub of sentence_losses.py (tests/teacher_scripts): writes the file make_zoo commits."""
import sys
open(sys.argv[1] + "/test_sentences.json.xz", "w").write("stub")
'''


@pytest.fixture
def zoo(tmp_path):
    """tmp/notebooks_data/{zoo/make_zoo.py, train/train_tiny.py (stub), corpus/train.txt}; returns a dict of
    the paths a test looks at."""
    script = copy_script(str(tmp_path), "zoo/make_zoo.py")
    nb = os.path.dirname(os.path.dirname(script))
    os.makedirs(os.path.join(nb, "train"))
    with open(os.path.join(nb, "train", "train_tiny.py"), "w") as f:
        f.write(STUB % pprint.pformat(train_tiny_variants()))
    with open(os.path.join(nb, "zoo", "sentence_losses.py"), "w") as f:
        f.write(SENTENCE_STUB)
    os.makedirs(os.path.join(nb, "corpus"))
    open(os.path.join(nb, "corpus", "train.txt"), "w").close()
    return {"script": script, "runs": os.path.join(nb, "models", "zoo-runs"),
            "calls": os.path.join(str(tmp_path), "trainer_calls.log")}


def trainer_calls(z):
    if not os.path.exists(z["calls"]):
        return []
    with open(z["calls"]) as f:
        return [json.loads(l) for l in f]


def assert_nothing_started(z):
    assert trainer_calls(z) == [], "the trainer ran"
    assert not os.path.exists(z["runs"]), "run folders were made: %s" % os.listdir(z["runs"])


# --- class 7: arguments are checked before any run starts --------------------------------------

@pytest.mark.parametrize("args, needles", [
    (["--steps", "0"], ["--steps", "at least 1", "got 0"]),
    (["--steps", "-5"], ["--steps", "at least 1", "got -5"]),
    (["--steps", "1.5"], ["--steps", "must be an integer"]),
    (["--seed", "-1"], ["--seed", "in [0, 4294967295]", "got -1"]),
    (["--seed", "4294967296"], ["--seed", "in [0, 4294967295]"]),
    (["--seed", "x"], ["--seed", "must be an integer", "'x'"]),
])
def test_bad_steps_and_seed_are_refused_before_any_run(zoo, args, needles):
    base = {"--variant": "baseline", "--seed": "2"}
    for flag, value in zip(args[::2], args[1::2]):
        base[flag] = value
    argv = [x for kv in base.items() for x in kv]
    p = run(zoo["script"], *argv)
    assert_one_line_error(p, *needles, argparse_error=True)
    assert_nothing_started(zoo)


@pytest.mark.parametrize("entry, needles", [
    ("nosuch@1", ["unknown variant 'nosuch'", "baseline"]),
    ("baseline@1:0", ["the steps must be at least 1, got 0"]),
    ("baseline@1:-5", ["the steps must be at least 1"]),
    ("baseline@-1", ["the seed must be in [0, 4294967295], got -1"]),
    ("baseline@x", ["the seed must be an integer"]),
    ("baseline@1:x", ["the steps must be an integer"]),
    ("baseline@1@2", ["the seed must be an integer", "'1@2'"]),
    ("baseline", ["is not VARIANT@SEED[:STEPS]"]),
    ("baseline@", ["is not VARIANT@SEED[:STEPS]"]),
    ("baseline@1:", ["is not VARIANT@SEED[:STEPS]"]),
    ("@1", ["is not VARIANT@SEED[:STEPS]"]),
])
def test_bad_queue_entries_are_refused_before_any_run(zoo, entry, needles):
    # A good entry first: nothing of the queue may start when one entry is bad.
    p = run(zoo["script"], "--queue", "baseline@2:5", entry)
    line = assert_one_line_error(p, "--queue", repr(entry), *needles, argparse_error=True)
    assert "FAILED" not in p.stdout and "started" not in p.stdout, p.stdout
    assert_nothing_started(zoo)
    assert line.count("\n") == 0


def test_queue_with_single_run_arguments_is_refused(zoo):
    p = run(zoo["script"], "--queue", "baseline@2", "--seed", "3")
    assert_one_line_error(p, "--queue", "--seed", "for one run", argparse_error=True)
    assert_nothing_started(zoo)


# --- class 6: --jobs 0 looped forever -----------------------------------------------------------

@pytest.mark.parametrize("jobs", ["0", "-1", "257"])
def test_bad_jobs_is_refused_not_a_hang(zoo, jobs):
    p = run(zoo["script"], "--queue", "baseline@2:5", "--jobs", jobs, timeout=30)
    assert_one_line_error(p, "--jobs", "in [1, 256]", "got " + jobs, argparse_error=True)
    assert_nothing_started(zoo)


# --- class 7: a run that fails makes the script fail -------------------------------------------

def test_failed_queue_run_exits_nonzero_naming_it(zoo):
    p = run(zoo["script"], "--queue", "baseline@2:5", "no-c2p@2:5", "--jobs", "2",
            env={"FAKE_TRAINER_OK": "baseline"})
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "finished baseline@2:5" in p.stdout and "FAILED no-c2p@2:5" in p.stdout, p.stdout
    line = assert_one_line_error(p, "1 of 2 queued runs failed", "no-c2p@2:5", zoo["runs"])
    assert "baseline@2:5" not in line
    # The run that failed: no card, its `started` mark removed, the child's one-line message in
    # queue.err (no traceback); the run that finished has its card.
    failed = os.path.join(zoo["runs"], "no-c2p", "s2-5steps")
    assert not os.path.exists(os.path.join(failed, "card.json"))
    assert not os.path.exists(os.path.join(failed, "started"))
    with open(os.path.join(failed, "queue.err")) as f:
        err = f.read()
    assert "Traceback" not in err and err.count("\n") == 1 and "no-c2p@2:5 failed (exit 3)" in err, err
    assert os.path.isfile(os.path.join(zoo["runs"], "baseline", "s2-5steps", "card.json"))


def test_failed_single_run_is_one_line_and_exit_1(zoo):
    p = run(zoo["script"], "--variant", "baseline", "--seed", "2", "--steps", "5")
    line = assert_one_line_error(p, "baseline@2:5 failed (exit 3)", "train.log")
    assert p.returncode == 1
    log = line.rsplit("see ", 1)[1]
    with open(log) as f:
        assert "stub trainer: failing on purpose" in f.read()


# --- what still works: the queue trains, writes cards make_table4 accepts, and skips done runs ---

def test_queue_trains_every_run_and_skips_finished_ones(zoo, tmp_path):
    make_table4 = import_script(str(tmp_path / "t4"), "zoo/make_table4")
    env = {"FAKE_TRAINER_OK": "baseline,no-c2p"}
    p = run(zoo["script"], "--queue", "baseline@2:7", "no-c2p@3:7", "--jobs", "2", env=env)
    assert p.returncode == 0, (p.stdout, p.stderr)
    calls = trainer_calls(zoo)
    assert sorted((c[c.index("--variant") + 1], c[c.index("--seed") + 1], c[c.index("--max-steps") + 1])
                  for c in calls) == [("baseline", "2", "7"), ("no-c2p", "3", "7")]
    for variant, seed in (("baseline", 2), ("no-c2p", 3)):
        with open(os.path.join(zoo["runs"], variant, "s%d-7steps" % seed, "card.json")) as f:
            card = json.load(f)
        assert (card["variant"], card["seed"], card["recipe_steps"], card["steps"]) == (variant, seed, 7, 7)
        assert card["command"].endswith("--variant %s --seed %d --steps 7" % (variant, seed))
        make_table4.check_card(card, variant, "s%d-7steps" % seed)   # raises on a field it would refuse
    # Again: both cards exist, so nothing runs and the queue succeeds.
    p = run(zoo["script"], "--queue", "baseline@2:7", "no-c2p@3:7", env=env)
    assert p.returncode == 0 and "started" not in p.stdout, (p.stdout, p.stderr)
    assert len(trainer_calls(zoo)) == 2


def test_stop_after_pauses_and_the_same_queue_continues(zoo):
    """--stop-after N (issue 58, item 8): each run is started with --resumable --stop-after N, reported
    "paused" with no card; the same queue without it continues the run (same folder) to its card."""
    env = {"FAKE_TRAINER_OK": "baseline"}
    p = run(zoo["script"], "--queue", "baseline@2:400", "--stop-after", "200", env=env)
    assert p.returncode == 0 and "paused baseline@2:400" in p.stdout, (p.stdout, p.stderr)
    out = os.path.join(zoo["runs"], "baseline", "s2-400steps")
    assert os.path.isfile(os.path.join(out, "resume.pt")) and not os.path.exists(os.path.join(out, "card.json"))
    assert not os.path.exists(os.path.join(out, "started"))
    call = trainer_calls(zoo)[-1]
    assert call[call.index("--stop-after") + 1] == "200" and "--resumable" in call
    p = run(zoo["script"], "--queue", "baseline@2:400", env=env)
    assert p.returncode == 0 and "finished baseline@2:400" in p.stdout, (p.stdout, p.stderr)
    assert "--stop-after" not in trainer_calls(zoo)[-1]
    assert os.path.isfile(os.path.join(out, "card.json")) and not os.path.exists(os.path.join(out, "resume.pt"))
    assert os.path.isfile(os.path.join(out, "test_sentences.json.xz"))


@pytest.mark.parametrize("n", ["150", "-100"])
def test_stop_after_not_a_checkpoint_is_refused(zoo, n):
    p = run(zoo["script"], "--variant", "baseline", "--seed", "2", "--steps", "400", "--stop-after", n)
    assert p.returncode == 2 and "--stop-after" in p.stderr, (p.stdout, p.stderr)
    assert_nothing_started(zoo)
