#!/usr/bin/env python3
"""Where each zoo card's `openblas_core` and `torch_version` come from, said on the card (issue 58).

Every run card (models/zoo-runs/<variant>/<run>/card.json) and every shipped model card
(models/zoo/deberta-tiny-<variant>/card.json, a copy of the seed-1 run's card) gets both keys and a
`kernels_note` saying where their values come from:
  * recorded by train_tiny.py while the run trained (its training_log.json has them);
  * inferred by rerun_zoo_start.py (card key openblas_core_source = "rerun_start.json"): the first
    200 steps re-trained on those kernels matched every logged number to 1e-12; the torch version
    is the re-run's, which reproduces the run but is not shown to be the one that trained it;
  * "unknown": not recorded (the run predates the recording, 2026-11-26) and not re-run. Never a
    guessed value.
A shipped card takes openblas_core, torch_version, openblas_core_source, unrecorded and
kernels_note from its run card (seed 1), whose weights it ships (weights_sha256 checked equal).

    /usr/bin/python3 notebooks_data/zoo/card_kernels.py [--check]

--check writes nothing and exits 1 listing the cards that would change.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # notebooks_data/
sys.path.insert(0, HERE)
RUNS = os.path.join(HERE, "models", "zoo-runs")
ZOO = os.path.join(HERE, "models", "zoo")
KEYS = ("openblas_core", "torch_version")
SYNCED = KEYS + ("openblas_core_source", "unrecorded", "kernels_note")


def note_for(card, log):
    """The kernels_note of CARD (its run's training_log.json LOG, or None)."""
    unknown = [k for k in KEYS if card.get(k) in (None, "", "unknown")]
    recorded = [k for k in KEYS if log and log.get(k) and k not in unknown and
                card.get("openblas_core_source") is None]
    parts = []
    if recorded:
        parts.append("%s recorded by train_tiny.py while the run trained (training_log.json)" % " and ".join(recorded))
    if card.get("openblas_core_source") == "rerun_start.json" and not unknown:
        parts.append("not recorded while the run trained (it predates the recording, 2026-11-26): "
                     "rerun_zoo_start.py re-trained its first 200 steps on %s kernels with torch %s and every "
                     "logged number matched to 1e-12 (rerun_start.json), so the kernels are inferred from that "
                     "match; the torch version is the re-run's, which reproduces the run but is not shown to be "
                     "the one that trained it" % (card["openblas_core"], card["torch_version"]))
    if unknown:
        parts.append("%s \"unknown\": not recorded while the run trained (it predates the recording, 2026-11-26) "
                     "and not re-run (rerun_zoo_start.py re-ran seed 1 of each variant); not guessed"
                     % " and ".join(unknown))
    return "; ".join(parts)


def read(path):
    with open(path) as f:
        return json.load(f)


def plan():
    """[(path, new card)] of every card whose kernel keys or note would change."""
    from zoo import make_table4
    changes, runs = [], {}
    for variant, sub, path in make_table4.run_files(RUNS, "card.json"):
        card = read(path)
        log_path = os.path.join(os.path.dirname(path), "training_log.json")
        log = read(log_path) if os.path.isfile(log_path) else None
        new = dict(card)
        for k in KEYS:
            if not new.get(k):
                new[k] = "unknown"
                new["unrecorded"] = sorted(set(new.get("unrecorded", [])) | {k})
        new["kernels_note"] = note_for(new, log)
        runs[(variant, sub)] = new
        if new != card:
            changes.append((path, new))
    for variant, *_ in make_table4.VARIANTS:
        path = os.path.join(ZOO, "deberta-tiny-" + variant, "card.json")
        if not os.path.isfile(path):
            continue
        card = read(path)
        run = runs.get((variant, "s1"))
        if run is None or run["weights_sha256"] != card["weights_sha256"]:
            raise SystemExit("card_kernels: %s: no seed-1 run card with its weights_sha256" % path)
        new = {k: v for k, v in card.items() if k not in SYNCED}
        new.update({k: run[k] for k in SYNCED if k in run})
        if new != card:
            changes.append((path, new))
    return changes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a card would change")
    args = ap.parse_args(argv)
    changes = plan()
    for path, new in changes:
        print("%s %s" % ("would change" if args.check else "wrote", os.path.relpath(path, HERE)))
        if not args.check:
            with open(path, "w") as f:
                json.dump(new, f, indent=1)
    return 1 if args.check and changes else 0


if __name__ == "__main__":
    sys.exit(main())
