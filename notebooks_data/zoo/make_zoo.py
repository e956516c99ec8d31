#!/usr/bin/env python3
"""Train one run of the mini-Table-4 zoo (docs/table4.md), or a queue of runs two at a time.

The zoo recipe (issue 27): the bundled model's architecture, corpus, vocabulary and optimizer;
1,000 steps (warm-up 200), one thread, no time budget, so a run is reproducible step for step.
  * One initialisation per seed: every variant of seed S starts from the baseline's initial
    tensors of seed S for every tensor they share (train_tiny.init_shared); the card records
    init_sha256 over the tensors all variants share, in name order.
  * One data order per seed: batches and masks are drawn from generators seeded by S only.
  * Held-out split: corpus/heldout.txt, never used in training. Its first 1,000 sentences are
    the validation set of the learning curve (every 100 steps, float32, masks of seed 2021);
    the other 8,628 are the test set of the final numbers (float64 of the saved f16 weights,
    masks of seed 2022), the same masks for every run.

    /usr/bin/python3 notebooks_data/zoo/make_zoo.py --variant no-c2p --seed 3
    /usr/bin/python3 notebooks_data/zoo/make_zoo.py --queue baseline@1 no-c2p@1 ... [--jobs 2]
    /usr/bin/python3 notebooks_data/zoo/make_zoo.py --queue baseline@1:4000 ... --stop-after 2000

--stop-after N pauses every run at step N (a multiple of 100, one of its checkpoints): resume.pt is
kept and no card is written; the same command without --stop-after (or with a later N) continues
the run, which ends with the bits of a run straight through. A run pauses on its own too when the
process is stopped (every run keeps a checkpoint every 100 steps).

A run writes notebooks_data/models/zoo-runs/<variant>/s<seed>/: card.json (seed, init_sha256,
the test numbers, the curve), training_log.json, train.log, config.json and model.safetensors
(the weights are not committed, see .gitignore: `--variant V --seed S` regenerates them). The
run of seed SHIPPED_SEED is also copied to models/zoo/deberta-tiny-<variant>/ (shipped).

Arguments are checked before any run starts (a variant of train_tiny.VARIANTS, a seed in
[0, 2^32 - 1], steps >= 1, jobs in [1, 256]; argparse's exit 2 otherwise). Exit status 1 when a
run fails, with one line naming it and its log.
"""
import argparse
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
RUNS = os.path.join(HERE, "models", "zoo-runs")
ZOO = os.path.join(HERE, "models", "zoo")
SHIPPED_SEED = 1
SENTENCE_LOSSES = "test_sentences.json.xz"   # sentence_losses.OUT_NAME
STEPS = 1000
VALIDATION_SENTENCES = 1000
EVAL_SEED = 2021          # validation masks; the test masks use EVAL_SEED + 1
SHIPPED_FILES = ("config.json", "model.safetensors", "spm.model", "tokenizer_config.json",
                 "special_tokens_map.json", "training_log.json", "card.json")


def run_dir(variant, seed, steps=STEPS):
    sub = "s%d" % seed if steps == STEPS else "s%d-%dsteps" % (seed, steps)
    return os.path.join(RUNS, variant, sub)


def train_text():
    """corpus/train.txt, restored from the committed train.txt.xz when absent."""
    path = os.path.join(HERE, "corpus", "train.txt")
    if not os.path.isfile(path):
        tmp = "%s.part%d" % (path, os.getpid())  # queues running side by side each write their own
        with lzma.open(path + ".xz", "rb") as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(tmp, path)
    return path


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_card(out, variant, seed, steps):
    """card.json: what table4.json and the docs read of a run."""
    with open(os.path.join(out, "training_log.json")) as f:
        log = json.load(f)
    test = log["test"]
    card = {
        "variant": variant, "seed": seed, "steps": log["steps"], "recipe_steps": steps,
        "init_sha256": log["init_sha256"], "init_sha256_tensors": log["init_sha256_tensors"],
        "init_own_tensors": log["init_own_tensors"],
        "cross_entropy": test["cross_entropy"], "top1": test["top1"], "top5": test["top5"],
        "test": test,
        "validation_curve": [{k: e[k] for k in ("step", "cross_entropy", "top1", "top5")}
                             for e in log["heldout_curve"]],
        "weights_sha256": sha256_file(os.path.join(out, "model.safetensors")),
        "train_seconds": log["train_seconds"],
        "openblas_core": log.get("openblas_core"),  # None: trained before it was recorded
        "torch_version": log.get("torch_version"),  # None: likewise (rerun_zoo_start.py fills both in)
        "kernels_note": "openblas_core and torch_version recorded by train_tiny.py while the run trained "
                        "(training_log.json)" if log.get("openblas_core") and log.get("torch_version") else
                        "card_kernels.py says where they come from",
        "command": "/usr/bin/python3 notebooks_data/zoo/make_zoo.py --variant %s --seed %d%s" %
                   (variant, seed, "" if steps == STEPS else " --steps %d" % steps),
    }
    with open(os.path.join(out, "card.json"), "w") as f:
        json.dump(card, f, indent=1)
    return card


def cpu_blas_core():
    """OPENBLAS_CORETYPE for this CPU: "SkylakeX" with AVX-512 F/BW/DQ/VL, "Haswell" with AVX2 + FMA,
    None otherwise (OpenBLAS's own choice)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
    except OSError:
        return None
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= set(flags):
        return "SkylakeX"
    if {"avx2", "fma"} <= set(flags):
        return "Haswell"
    return None


def blas_env():
    """The environment a run trains in. Debian's OpenBLAS (torch's BLAS) picks its kernels from the
    CPU model and falls back to SSE3 "Prescott" on a model it does not know (a virtual machine's
    "Intel(R) Xeon(R) Processor"): 2.5-3x slower training measured on 2026-11-26. So the kernels
    come from the CPU's features unless OPENBLAS_CORETYPE is set, one OpenBLAS thread per run; the
    card records them (openblas_core), since they decide the float32 rounding."""
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if not env.get("OPENBLAS_CORETYPE") and cpu_blas_core():
        env["OPENBLAS_CORETYPE"] = cpu_blas_core()
    return env


class RunFailed(Exception):
    """A training run that exited non-zero; the message names the run and its log."""


def train_one(variant, seed, steps=STEPS, nice=10, stop_after=0):
    """Train VARIANT@SEED for STEPS steps into run_dir (train_tiny.py under nice, one thread) and
    write its card and the per-sentence test losses (sentence_losses.py; and copy the shipped files
    for seed SHIPPED_SEED). Returns the card, or None when the run paused at STOP_AFTER < STEPS
    (its checkpoint resume.pt kept: the next call continues it); raises RunFailed when the trainer
    exits non-zero."""
    out = run_dir(variant, seed, steps)
    os.makedirs(out, exist_ok=True)
    cmd = ["nice", "-n", str(nice), sys.executable, os.path.join(HERE, "train", "train_tiny.py"),
           "--variant", variant, "--seed", str(seed), "--out", out, "--train", train_text(),
           "--max-steps", str(steps), "--warmup", "200", "--time-budget", "0",
           "--eval-every", "100", "--eval-sentences", str(VALIDATION_SENTENCES),
           "--eval-seed", str(EVAL_SEED), "--weights-dtype", "f16", "--shared-init", "--test"]
    # Every run keeps a checkpoint and continues from it: a run cut off by the end of a session (a
    # 4,000-step run always is) goes on in the next one and still ends with the bits of a run
    # straight through (tests/zoo_stats). The checkpoint is removed when the run finishes.
    resuming = os.path.exists(os.path.join(out, "resume.pt"))
    cmd.append("--resumable")
    if 0 < stop_after < steps:
        cmd += ["--stop-after", str(stop_after)]
    with open(os.path.join(out, "train.log"), "a" if resuming else "w") as logf:
        rc = subprocess.call(cmd, stdout=logf, stderr=subprocess.STDOUT, env=blas_env())
    if rc != 0:
        raise RunFailed("%s@%d:%d failed (exit %d): see %s" % (variant, seed, steps, rc, os.path.join(out, "train.log")))
    if os.path.exists(os.path.join(out, "resume.pt")):
        return None   # paused at --stop-after: the checkpoint continues it
    card = write_card(out, variant, seed, steps)
    # The per-sentence test losses (the test-set bootstrap of make_table4.py) need the weights,
    # which are not committed: written now, while they are here (under the same nice, one thread).
    cmd = ["nice", "-n", str(nice), sys.executable, os.path.join(HERE, "zoo", "sentence_losses.py"), out]
    with open(os.path.join(out, "train.log"), "a") as logf:
        rc = subprocess.call(cmd, stdout=logf, stderr=subprocess.STDOUT, env=blas_env())
    if rc != 0:
        raise RunFailed("%s@%d:%d: the per-sentence test losses failed (exit %d): see %s"
                        % (variant, seed, steps, rc, os.path.join(out, "train.log")) +
                        "; the card is written: `sentence_losses.py %s` retries" % out)
    if seed == SHIPPED_SEED and steps == STEPS:
        dst = os.path.join(ZOO, "deberta-tiny-" + variant)
        os.makedirs(dst, exist_ok=True)
        for fn in SHIPPED_FILES + ("train.log", SENTENCE_LOSSES):
            shutil.copyfile(os.path.join(out, fn), os.path.join(dst, fn))
    return card


SEED_MAX = 2 ** 32 - 1    # seeds are small integers; every generator a run seeds takes this range
JOBS_MAX = 256            # the project's bound on thread counts (docs/robustness.md, class 2)


def count(low, high=None, name=None):
    """An argparse type: an integer in [low, high] (high None: no upper bound), refused otherwise
    (issue 44: --steps 0, --steps -5 and --seed -1 started runs). argparse names the option in
    its message; NAME, when given, starts the message (for a part of a --queue entry)."""
    lead = name + " " if name else ""
    def parse(text):
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("%smust be an integer, got %r" % (lead, text))
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError("%smust be %s, got %d" % (
                lead, "at least %d" % low if high is None else "in [%d, %d]" % (low, high), value))
        return value
    return parse


def queue_entry(variants):
    """An argparse type for one --queue entry VARIANT@SEED[:STEPS] -> (variant, seed, steps):
    a variant of train_tiny.VARIANTS, a seed in [0, SEED_MAX], steps >= 1 (default STEPS).
    Checked when the arguments are parsed, so a bad entry never reaches a run."""
    def parse(text):
        variant, at, rest = text.partition("@")
        seed, colon, steps = rest.partition(":")
        if not at or not variant or not seed or (colon and not steps):
            raise argparse.ArgumentTypeError("%r is not VARIANT@SEED[:STEPS]" % text)
        if variant not in variants:
            raise argparse.ArgumentTypeError("%r: unknown variant %r (one of %s)" % (
                text, variant, ", ".join(sorted(variants))))
        try:
            seed = count(0, SEED_MAX, "the seed")(seed)
            steps = count(1, None, "the steps")(steps) if colon else STEPS
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError("%r: %s" % (text, e))
        return variant, seed, steps
    return parse


def main(argv=None):
    """Parse the arguments and train one run or a queue. Returns the exit status: 0 when every
    run finished (or was skipped), 1 when one failed (a one-line message names it and its log).
    A bad argument exits 2 (argparse) before any run starts."""
    sys.path.insert(0, HERE)
    from train import train_tiny
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=sorted(train_tiny.VARIANTS))
    ap.add_argument("--seed", type=count(0, SEED_MAX))
    ap.add_argument("--steps", type=count(1),
                    help="training steps, at least 1 (default %d; the long pair: 4000)" % STEPS)
    ap.add_argument("--queue", nargs="+", metavar="VARIANT@SEED[:STEPS]", type=queue_entry(train_tiny.VARIANTS),
                    help="runs to train, --jobs at a time; a run whose card exists is skipped")
    ap.add_argument("--jobs", type=count(1, JOBS_MAX), default=2)
    ap.add_argument("--stop-after", type=count(0), default=0, metavar="N",
                    help="pause each run at step N, a multiple of 100 (its checkpoint kept, no card): the same "
                         "command again continues it; 0 (default): run to the end")
    ap.add_argument("--commit", action="store_true",
                    help="git-commit each finished run's card, log and curve (and a shipped model)")
    args = ap.parse_args(argv)
    if args.stop_after % 100:
        ap.error("--stop-after %d: must be a multiple of 100 (the runs' checkpoints)" % args.stop_after)
    if args.queue:
        if args.variant is not None or args.seed is not None or args.steps is not None:
            ap.error("--queue gives each run as VARIANT@SEED[:STEPS]; --variant, --seed and --steps are for one run")
        return run_queue(args.queue, args.jobs, args.commit, args.stop_after)
    if args.variant is None or args.seed is None:
        ap.error("--variant and --seed (or --queue)")
    steps = STEPS if args.steps is None else args.steps
    try:
        card = train_one(args.variant, args.seed, steps, stop_after=args.stop_after)
    except RunFailed as e:
        print("make_zoo: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:   # the corpus, the run folder or the trainer's output
        print("make_zoo: %s: %s" % (e.filename, e.strerror), file=sys.stderr)
        return 1
    if card is None:
        print("make_zoo: %s@%d:%d paused at step %d; the same command without --stop-after continues it"
              % (args.variant, args.seed, steps, args.stop_after))
        return 0
    print(json.dumps({k: card[k] for k in ("variant", "seed", "init_sha256", "cross_entropy", "top1", "top5")}))
    return 0


def started_by_live_queue(out):
    """Whether OUT/started names a queue process that is still running."""
    try:
        with open(os.path.join(out, "started")) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def commit_run(variant, seed, steps):
    out = os.path.relpath(run_dir(variant, seed, steps), os.path.dirname(HERE))
    paths = [os.path.join(out, fn) for fn in ("card.json", "training_log.json", "train.log", "config.json",
                                               SENTENCE_LOSSES)]
    root = os.path.dirname(HERE)
    if seed == SHIPPED_SEED and steps == STEPS:
        # A shipped model is committed with its reference tensors (tests/test_bundled.cpp needs both),
        # so main never holds a zoo model without its zoo-golden.
        name = "deberta-tiny-" + variant
        subprocess.check_call(["bash", os.path.join(HERE, "zoo", "make_zoo_golden.sh"), os.path.join("models", "zoo", name)])
        for d in (ZOO, os.path.join(HERE, "models", "zoo-golden")):
            paths.append(os.path.relpath(os.path.join(d, name), root))
    subprocess.call(["git", "add", "--"] + paths, cwd=root)
    subprocess.call(["git", "commit", "-q", "-m", "zoo run %s seed %d (%d steps): card, curve, log" %
                     (variant, seed, steps), "--"] + paths, cwd=root)


POLL_SECONDS = 0.5        # how often the queue looks for finished runs


def run_queue(runs, jobs, commit=False, stop_after=0):
    """Train RUNS, a list of (variant, seed, steps), JOBS at a time (each one thread, under nice),
    each in a child `make_zoo.py --variant V --seed S --steps N` whose stderr goes to the run's
    queue.err. With STOP_AFTER > 0 each run pauses at that step (make_zoo --stop-after) and is
    reported "paused" (no card, nothing committed). Returns 0 when every run finished, paused or
    was skipped, 1 when one failed: then a line on stderr names the failed runs and where their
    logs are."""
    pending = list(runs)
    running, failed = {}, []
    while pending or running:
        while pending and len(running) < jobs:
            r = pending.pop(0)
            out = run_dir(*r)
            # Another queue may share the list: a run with a card, or started by a queue still alive,
            # is skipped. A `started` left by a queue that is gone (a session that ended) is stale: the
            # run starts again, or continues from its checkpoint (the long runs, resume.pt).
            if os.path.isfile(os.path.join(out, "card.json")) or started_by_live_queue(out):
                continue
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, "started"), "w") as f:
                f.write("%d %s\n" % (os.getpid(), time.strftime("%Y-%m-%d %H:%M:%S")))
            cmd = [sys.executable, os.path.abspath(__file__), "--variant", r[0], "--seed", str(r[1]),
                   "--steps", str(r[2])] + (["--stop-after", str(stop_after)] if stop_after else [])
            with open(os.path.join(out, "queue.err"), "w") as err:
                running[subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)] = r
            print("%s started %s@%d:%d" % (time.strftime("%H:%M:%S"), *r), flush=True)
        time.sleep(POLL_SECONDS)
        for p in list(running):
            if p.poll() is None:
                continue
            r = running.pop(p)
            paused = p.returncode == 0 and not os.path.isfile(os.path.join(run_dir(*r), "card.json"))
            print("%s %s %s@%d:%d" % (time.strftime("%H:%M:%S"), "FAILED" if p.returncode != 0 else
                                      "paused" if paused else "finished", *r), flush=True)
            if paused:
                os.remove(os.path.join(run_dir(*r), "started"))
            elif p.returncode != 0:
                os.remove(os.path.join(run_dir(*r), "started"))
                failed.append(r)
            elif commit:
                commit_run(*r)
    if failed:
        print("make_zoo: %d of %d queued runs failed: %s (see each run's queue.err and train.log under %s)" % (
            len(failed), len(runs), ", ".join("%s@%d:%d" % r for r in failed), RUNS), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
