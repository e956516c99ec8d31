#!/usr/bin/env python3
"""Re-run the first steps of a zoo run and compare them with its logged curve (issue 42).

A zoo run (make_zoo.py) is reproducible step for step only on the OpenBLAS kernels it trained on:
they decide the float32 rounding of every product. Runs trained before 2026-11-26 did not record
them. This script re-trains the first STEPS steps of a run (default 200; the run's own arguments,
seed and schedule, train_tiny.py --stop-after) on each candidate kernel set in turn and compares
the logged numbers at every logged step <= STEPS: the training loss of each 100 steps and the
validation curve (cross-entropy, top-1, top-5). A candidate *matches* when every compared number is
equal (|difference| <= 1e-12: the logs store Python floats, so equal runs log equal numbers). A
candidate whose step-100 training loss already differs in its printed 4 decimals is stopped there.

    /usr/bin/python3 notebooks_data/zoo/rerun_zoo_start.py RUN_DIR [RUN_DIR ...] [--steps 200]
        [--cores SkylakeX,Haswell,Prescott] [--update-card] [--mark-unrecorded RUNS_DIR]

RUN_DIR is a run folder (models/zoo-runs/<variant>/s<seed>) holding card.json and
training_log.json. For each run it writes RUN_DIR/rerun_start.json: the kernels tried, the
largest difference of each, the verdict, and this machine's torch and CPU. With --update-card,
a run whose card has no openblas_core gets the matching kernels and this torch version
("openblas_core_source": "rerun_start.json"), or "unknown" for both when no candidate matched.
Exit status 0 when every run was compared (whatever the verdict), 1 on a failed re-run or an
unusable run folder (one line naming it).
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)
from zoo import make_zoo  # noqa: E402

CANDIDATES = ("SkylakeX", "Haswell", "Prescott")
# Arguments of train_tiny.py that name files (replaced by this checkout's), or that are not part
# of what was trained (resuming, the test evaluation, benchmarking).
NOT_PASSED = {"out", "train", "heldout", "spm", "test", "resumable", "exit_after_checkpoint", "bench", "stop_after"}
TOLERANCE = 1e-12


class Unusable(Exception):
    """A run folder this script cannot re-run: str(e) names the file and the problem."""


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise Unusable("%s: %s" % (path, e.strerror))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Unusable("%s: not valid JSON (%s)" % (path, e))


def trainer_command(log_args, out, steps):
    """train_tiny.py's command line for the first STEPS steps of a run whose logged arguments are
    LOG_ARGS (training_log.json "args"), writing into OUT."""
    cmd = [sys.executable, os.path.join(HERE, "train", "train_tiny.py"), "--out", out, "--train", make_zoo.train_text(),
           "--stop-after", str(steps)]
    for key, value in sorted(log_args.items()):
        if key in NOT_PASSED:
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            if value:
                cmd.append(flag)
        else:
            cmd += [flag, str(value)]
    return cmd


def logged_numbers(log, steps):
    """{(curve, step, field): value} of the numbers a run logged at steps <= STEPS."""
    out = {}
    for e in log.get("loss_curve", []):
        if e["step"] <= steps:
            out[("loss_curve", e["step"], "train_loss")] = e["train_loss"]
    for e in log.get("heldout_curve", []):
        if e["step"] <= steps:
            for field in ("cross_entropy", "top1", "top5"):
                out[("heldout_curve", e["step"], field)] = e[field]
    return out


def try_core(log, core, steps):
    """Re-train the first STEPS steps on kernels CORE. Returns {"core", "compared", "max_abs_diff",
    "first_difference", "stopped_early", "matches"}; raises RuntimeError when the trainer fails."""
    want = logged_numbers(log, steps)
    step100 = want.get(("loss_curve", 100, "train_loss"))
    env = dict(os.environ, OPENBLAS_CORETYPE=core, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="rerun-start-") as out:
        proc = subprocess.Popen(["nice", "-n", "10"] + trainer_command(log["args"], out, steps), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines, printed100 = [], None
        for line in proc.stdout:
            lines.append(line)
            parts = line.split()
            # "step    100 ep 0  94s  lr 5.00e-04  loss 7.9862": stop a candidate that already differs.
            if step100 is not None and printed100 is None and parts[:2] == ["step", "100"] and "loss" in parts:
                printed100 = parts[parts.index("loss") + 1]
                if printed100 != "%.4f" % step100:
                    proc.kill()
        rc = proc.wait()
        stopped = printed100 is not None and printed100 != "%.4f" % step100
        if stopped:
            got = {("loss_curve", 100, "train_loss"): float(printed100)}
        else:
            if rc != 0:
                raise RuntimeError("train_tiny.py exited %d on %s:\n%s" % (rc, core, "".join(lines[-15:])))
            got = logged_numbers(read_json(os.path.join(out, "training_log.json")), steps)
    diffs = {k: abs(got[k] - v) for k, v in want.items() if k in got}
    first = next(({"curve": k[0], "step": k[1], "field": k[2], "logged": want[k], "rerun": got[k]}
                  for k in sorted(diffs) if diffs[k] > TOLERANCE), None)
    complete = set(want) <= set(got)
    return {"core": core, "compared": len(diffs), "max_abs_diff": max(diffs.values()) if diffs else None,
            "first_difference": first, "stopped_early": stopped,
            "matches": complete and bool(diffs) and first is None}


def rerun(run_dir, steps, cores, update_card):
    card_path = os.path.join(run_dir, "card.json")
    card = read_json(card_path)
    log = read_json(os.path.join(run_dir, "training_log.json"))
    if not isinstance(log, dict) or "args" not in log or "loss_curve" not in log:
        raise Unusable("%s: no 'args' or 'loss_curve' (not a training_log.json of train_tiny.py)"
                       % os.path.join(run_dir, "training_log.json"))
    if not logged_numbers(log, steps):
        raise Unusable("%s: nothing logged at steps <= %d" % (os.path.join(run_dir, "training_log.json"), steps))
    recorded = card.get("openblas_core") if isinstance(card, dict) else None
    order = ([recorded] if recorded and recorded != "unknown" else []) + [c for c in cores if c != recorded]
    import torch
    result = {"run": os.path.relpath(run_dir, HERE), "steps": steps, "tolerance": TOLERANCE,
              "recorded_openblas_core": recorded, "torch_version": torch.__version__,
              "machine": platform.processor() or platform.machine(), "tried": []}
    for core in order:
        r = try_core(log, core, steps)
        result["tried"].append(r)
        print("%s: %s %s (max |diff| %s over %d numbers%s)" % (
            result["run"], core, "matches" if r["matches"] else "differs", r["max_abs_diff"], r["compared"],
            ", stopped at step 100" if r["stopped_early"] else ""), file=sys.stderr)
        if r["matches"]:
            break
    match = next((r["core"] for r in result["tried"] if r["matches"]), None)
    result["openblas_core"] = match or "unknown"
    with open(os.path.join(run_dir, "rerun_start.json"), "w") as f:
        json.dump(result, f, indent=1)
    if update_card and not recorded:
        card["openblas_core"] = match or "unknown"
        card["torch_version"] = torch.__version__ if match else "unknown"
        card["openblas_core_source"] = "rerun_start.json"
        with open(card_path, "w") as f:
            json.dump(card, f, indent=1)
    return result


def mark_unrecorded(runs_dir):
    """Every card under RUNS_DIR/<variant>/<run>/ (the variants of make_table4.VARIANTS) that records
    no openblas_core or no torch_version, and was not settled by a re-run, gets "unknown" for what
    it lacks, and "unrecorded" lists those keys. Returns the paths of the cards changed."""
    from zoo import make_table4
    changed = []
    for _, _, path in make_table4.run_files(runs_dir, "card.json"):
        card = read_json(path)
        missing = [k for k in ("openblas_core", "torch_version") if not card.get(k)]
        if not missing:
            continue
        for k in missing:
            card[k] = "unknown"
        card["unrecorded"] = sorted(set(card.get("unrecorded", [])) | set(missing))
        with open(path, "w") as f:
            json.dump(card, f, indent=1)
        changed.append(path)
    return changed


def main(argv=None):
    ap = argparse.ArgumentParser(description="Re-run the first steps of zoo runs and compare their logged curves.")
    ap.add_argument("runs", nargs="*", metavar="RUN_DIR", help="run folders (models/zoo-runs/<variant>/s<seed>)")
    ap.add_argument("--steps", type=make_zoo.count(100), default=200,
                    help="steps to re-run (at least 100, the first logged step; default 200)")
    ap.add_argument("--cores", default=",".join(CANDIDATES),
                    help="OPENBLAS_CORETYPE candidates, in order (default %s)" % ",".join(CANDIDATES))
    ap.add_argument("--update-card", action="store_true",
                    help="write the verdict into cards that have no openblas_core")
    ap.add_argument("--mark-unrecorded", metavar="RUNS_DIR",
                    help="after the re-runs: write \"unknown\" into every card under RUNS_DIR that still records no "
                         "kernels or torch version")
    args = ap.parse_args(argv)
    if not args.runs and not args.mark_unrecorded:
        ap.error("give run folders, --mark-unrecorded RUNS_DIR, or both")
    cores = [c for c in args.cores.split(",") if c]
    failed = 0
    for run_dir in args.runs:
        try:
            rerun(run_dir.rstrip("/"), args.steps, cores, args.update_card)
        except (Unusable, RuntimeError) as e:
            print("rerun_zoo_start: %s" % e, file=sys.stderr)
            failed += 1
    if args.mark_unrecorded:
        for path in mark_unrecorded(args.mark_unrecorded):
            print("rerun_zoo_start: %s: kernels and torch version unknown" % path, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
