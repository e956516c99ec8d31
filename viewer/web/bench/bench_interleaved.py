#!/usr/bin/env python3
"""The web edition's forward against the desktop's, interleaved (issue 41, item 7; docs/web.md "Speed").

    bench_interleaved.py DEBERTA_CLI WASM_BUILD_DIR [--rounds 5] [--repeat 3] [--threads 2]
                         [--scalar SCALAR_WASM_BUILD_DIR]

A shared machine's speed drifts by tens of per cent within a minute, so the builds take turns: each
round runs the desktop's one-thread forward (`deberta bench --preset xsmall --seq 128 --threads 1`),
then the WebAssembly ones under node (forward_bench_wasm.js: SIMD, one thread; forward_bench_wasm_mt.js:
SIMD + pthreads; with --scalar, a build configured with -DDEBERTA_WEB_SIMD=OFF). The page itself,
beside node and the desktop on real models: bench_page.py. Prints every round's median per build, the load
average before each round, and the medians over the rounds with each one's ratio to the desktop's.
Times only: nothing is asserted (ctest wasm_bench checks the numbers).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def result_line(text, what):
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    sys.exit("bench_interleaved.py: no RESULT line from %s:\n%s" % (what, text))


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, NODE_PATH="/usr/share/nodejs"))
    if p.returncode != 0:
        sys.exit("bench_interleaved.py: %s failed (%d):\n%s%s" % (what, p.returncode, p.stdout, p.stderr))
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("wasm")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--scalar")
    a = ap.parse_args()
    bench = ["--preset", "xsmall", "--seq", "128", "--repeat", str(a.repeat)]
    node = ["/usr/bin/node", "--no-experimental-fetch"]
    builds = [("desktop 1 thread", lambda: json.loads(run([a.cli, "bench"] + bench + ["--threads", "1", "--json"], "deberta bench"))["median_ms"])]
    if a.scalar:
        builds.append(("node wasm scalar", lambda: result_line(run(node + [os.path.join(a.scalar, "forward_bench_wasm.js")] + bench, "scalar"), "scalar")["median_ms"]))
    builds.append(("node wasm SIMD", lambda: result_line(run(node + [os.path.join(a.wasm, "forward_bench_wasm.js")] + bench, "SIMD"), "SIMD")["median_ms"]))
    builds.append(("node wasm SIMD + %d threads" % a.threads,
                   lambda: result_line(run(node + [os.path.join(a.wasm, "forward_bench_wasm_mt.js")] + bench + ["--threads", str(a.threads)], "mt"), "mt")["median_ms"]))
    times = {name: [] for name, _ in builds}
    for r in range(1, a.rounds + 1):
        load = open("/proc/loadavg").read().split()[0]
        row = []
        for name, f in builds:
            t = f()
            times[name].append(t)
            row.append("%s %.0f" % (name, t))
        print("round %d (load average %s): %s ms" % (r, load, ", ".join(row)), flush=True)
    base = statistics.median(times["desktop 1 thread"])
    print("medians over %d rounds (each a median of %d forwards), xsmall N = 128:" % (a.rounds, a.repeat))
    for name, _ in builds:
        m = statistics.median(times[name])
        print("  %-32s %8.1f ms  %5.2f x desktop" % (name, m, m / base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
