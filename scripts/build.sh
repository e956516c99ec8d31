#!/usr/bin/env bash
# Configures and builds everything (Release) into build/; executables land in build/bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$jobs"
