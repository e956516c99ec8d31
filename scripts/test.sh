#!/usr/bin/env bash
# The project's test command: installs dependencies, builds, runs every test suite with ctest
# (golden suite included; the viewer's screenshot test runs under xvfb-run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 600)
