#!/usr/bin/env bash
# The project's test command: installs dependencies, builds, runs every test suite with ctest
# (golden suite included; the viewer's screenshot test runs under xvfb-run), then the sanitizer
# build's run of the same suite and a short fuzzing run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
# Two tests per core: many of them wait more than they compute (a window under Xvfb, a page in
# Chromium, a Python interpreter starting), and every test holds on a busy machine (issue 44).
jobs=$(( $(nproc) * 2 ))
(cd build && ctest -j"$jobs" --output-on-failure --timeout 900)
# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, then 10 s per fuzz target.
CTEST_JOBS=$jobs bash scripts/sanitize.sh 10
