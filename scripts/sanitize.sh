#!/usr/bin/env bash
# One clang build with AddressSanitizer + UndefinedBehaviorSanitizer (+ libFuzzer coverage) in
# build-asan/: runs the whole test suite under the sanitizers, then each fuzz target for N seconds
# (default 30) on its seed corpus.   scripts/sanitize.sh [fuzz-seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
# -g1: line tables only — enough for file:line in sanitizer reports, much cheaper to compile than -g.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DDEBERTA_FUZZ=ON -DDEBERTA_BUILD_VIEWER=OFF \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -DDEBERTA_NATIVE=OFF >/dev/null
cmake --build build-asan -j"${JOBS:-$(nproc)}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The viewer is not built here (it needs GL; its suites run in the Release build); notebooks: NumPy vs
# the CLI (numerics, run in the Release suite; 2.5 min under ASan); zoo_stats: Python statistics
# that run no C++ (40 s here for nothing the sanitizers could see).
(cd build-asan && ctest -j"${CTEST_JOBS:-$(nproc)}" --output-on-failure --timeout 900 -E "viewer|notebooks|zoo_stats")
BUILD=build-asan bash scripts/fuzz.sh "$seconds"
