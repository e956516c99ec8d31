#!/usr/bin/env bash
# The project's test command: installs dependencies, builds, runs every test suite with ctest
# (golden suite included; the viewer's screenshot test runs under xvfb-run), then the sanitizer
# build's run of the same suite and a short fuzzing run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest -j"$(nproc)" --output-on-failure --timeout 900)
# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer, then 20 s per fuzz target.
bash scripts/sanitize.sh 20
