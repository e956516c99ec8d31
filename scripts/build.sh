#!/usr/bin/env bash
# Configures and builds everything (Release) into build/; executables land in build/bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
# Compiler outputs are reused from earlier builds on this machine, in any clone (scripts/cache.sh).
source scripts/cache.sh
deberta_cache_enable_ccache "$PWD"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${DEBERTA_CCACHE_ARGS[@]}" "$@"
cmake --build build -j"$jobs"
