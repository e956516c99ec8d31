#!/usr/bin/env python3
"""Execute the teaching notebooks top to bottom, as CI does.

    /usr/bin/python3 notebooks_data/notebooks/run_all.py            # check every notebook
    /usr/bin/python3 notebooks_data/notebooks/run_all.py 02 05      # only those whose name starts so
    /usr/bin/python3 notebooks_data/notebooks/run_all.py --update   # also rewrite them with outputs

Each notebook (`NN_*.ipynb` in this folder) is read, executed in a fresh kernel with nbclient on an
in-memory copy, and judged: any exception or failed `assert` in a cell fails the run (exit 1). The
committed files are rewritten only with --update (so that their outputs read as documents on
GitHub); --out-dir keeps the executed copies elsewhere for inspection. Also checked: that each
committed notebook carries its outputs (every code cell executed, in order) and stays under the
size limit (--max-kb, figures are low-dpi PNGs).

The kernel finds the C++ core's CLI through DEBERTA_CLI (--cli sets it), else build/bin/deberta;
it runs with OMP_NUM_THREADS=1. Prints the wall time of every notebook and the total.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colour codes in the kernel's tracebacks


def committed_problems(nb: nbformat.NotebookNode, path: Path, max_kb: float) -> list[str]:
    """What is wrong with a committed notebook as a document: missing outputs, too large."""
    problems = []
    counts = [c.get("execution_count") for c in nb.cells if c.cell_type == "code"]
    if any(n is None for n in counts) or counts != list(range(1, len(counts) + 1)):
        problems.append("not committed with its outputs in order (run run_all.py --update)")
    size_kb = path.stat().st_size / 1024
    if size_kb > max_kb:
        problems.append(f"{size_kb:.0f} KB > {max_kb:.0f} KB (smaller or fewer figures)")
    return problems


def execute(path: Path, timeout: int) -> tuple[nbformat.NotebookNode, str | None]:
    """Run a copy of the notebook at `path`; returns (executed copy, error text or None)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(HERE)}})
    try:
        client.execute()
    except CellExecutionError as e:  # a cell raised (including a failed assert)
        return nb, ANSI.sub("", str(e))
    except Exception as e:  # kernel died, timeout, ...
        return nb, f"{type(e).__name__}: {e}"
    return nb, None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="run only notebooks whose file name starts with one of these")
    parser.add_argument("--update", action="store_true", help="write the executed notebooks back (with outputs)")
    parser.add_argument("--out-dir", type=Path, help="write the executed copies into this folder")
    parser.add_argument("--cli", help="path of the deberta executable (sets DEBERTA_CLI)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds allowed per cell (default 300)")
    parser.add_argument("--max-kb", type=float, default=400, help="size limit of a committed notebook (default 400)")
    args = parser.parse_args()

    if args.cli:
        os.environ["DEBERTA_CLI"] = str(Path(args.cli).resolve())
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # quiet the kernel debugger's warning
    print(f"DEBERTA_CLI = {os.environ.get('DEBERTA_CLI', '(unset: build/bin/deberta)')}")

    paths = sorted(HERE.glob("[0-9][0-9]_*.ipynb"))
    if args.only:
        paths = [p for p in paths if any(p.name.startswith(o) for o in args.only)]
    if not paths:
        print("no notebook selected", file=sys.stderr)
        return 1
    if args.out_dir:
        args.out_dir.mkdir(parents=True, exist_ok=True)

    failures, total = [], 0.0
    for path in paths:
        start = time.perf_counter()
        nb, error = execute(path, args.timeout)
        seconds = time.perf_counter() - start
        total += seconds
        if args.out_dir:
            nbformat.write(nb, args.out_dir / path.name)
        if error is None and args.update:
            nbformat.write(nb, path)
        problems = [error] if error else []
        if error is None:
            problems += committed_problems(nbformat.read(path, as_version=4), path, args.max_kb)
        status = "ok" if not problems else "FAILED"
        print(f"{path.name:<40} {seconds:6.1f} s  {status}", flush=True)
        for p in problems:
            print("    " + p.replace("\n", "\n    "))
        if problems:
            failures.append(path.name)

    print(f"{len(paths)} notebooks, {total:.1f} s in total; "
          + (f"{len(failures)} failed: {', '.join(failures)}" if failures else "all passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
