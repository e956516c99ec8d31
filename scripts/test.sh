#!/usr/bin/env bash
# The project's test command: installs dependencies, builds, runs every test suite with ctest
# (golden suite included; the viewer's screenshot test runs under xvfb-run), then the sanitizer
# build's run of the same suite and a short fuzzing run. Prints the time each part took.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
took() { echo "test.sh: $1 done at $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s"; }
# The builds started beside the others below stop with this script (a failed step ends it).
background=()
kill_tree() { local c; for c in $(pgrep -P "$1"); do kill_tree "$c"; done; kill "$1" 2>/dev/null || true; }
trap 'for p in "${background[@]}"; do kill_tree "$p"; done' EXIT
bash scripts/setup.sh
took "setup"
# The web edition's build (its WebAssembly libraries are mostly configure checks, one emcc call
# after another: cores to spare) beside the native build. ctest's web_site runs web.sh again,
# which waits for this one (a lock) and finds the site built, or fails with the error itself.
mkdir -p build-web
bash scripts/web.sh --build-only > build-web/background.log 2>&1 &
background+=($!)
bash scripts/build.sh
took "build"
# Two tests per core: many of them wait more than they compute (a window under Xvfb, a page in
# Chromium, a Python interpreter starting), and every test holds on a busy machine (issue 44).
# OpenMP threads that wait sleep at once instead of spinning first: a spinning thread takes the core
# another test needs (the tests time nothing; `deberta bench` and the benchmarks keep the default).
jobs=$(( $(nproc) * 2 ))
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# The sanitizer build beside the suite at the lowest priority: it takes the cores only while the
# tests wait (on a window, a page, an interpreter) and is done, or nearly, when they end.
nice -n 19 bash scripts/sanitize.sh --build-only > build-asan.log 2>&1 &
asan_pid=$!
background+=("$asan_pid")
(cd build && ctest -j"$jobs" --output-on-failure --timeout 900)
took "ctest"
# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, then 10 s per fuzz target.
# (A failed build above is run again here, and fails with its error.)
wait "$asan_pid" || echo "test.sh: the sanitizer build beside the suite failed (build-asan.log); building it again"
took "sanitizer build"
CTEST_JOBS=$jobs bash scripts/sanitize.sh 10
took "sanitizers"
