#!/usr/bin/env bash
# The project's test command: installs dependencies, builds, runs every test suite with ctest
# (golden suite included; the viewer's screenshot test runs under xvfb-run), then the sanitizer
# build's run of the same suite and a short fuzzing run. Prints the time each part took.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
took() { echo "test.sh: $1 done at $(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s"; }
bash scripts/setup.sh
took "setup"
bash scripts/build.sh
took "build"
# Two tests per core: many of them wait more than they compute (a window under Xvfb, a page in
# Chromium, a Python interpreter starting), and every test holds on a busy machine (issue 44).
# OpenMP threads that wait sleep at once instead of spinning first: a spinning thread takes the core
# another test needs (the tests time nothing; `deberta bench` and the benchmarks keep the default).
jobs=$(( $(nproc) * 2 ))
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
(cd build && ctest -j"$jobs" --output-on-failure --timeout 900)
took "ctest"
# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, then 10 s per fuzz target.
CTEST_JOBS=$jobs bash scripts/sanitize.sh 10
took "sanitizers"
