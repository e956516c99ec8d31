#!/usr/bin/env bash
# One clang build with AddressSanitizer + UndefinedBehaviorSanitizer (+ libFuzzer coverage) in
# build-asan/: runs the whole test suite under the sanitizers, then each fuzz target for N seconds
# (default 30) on its seed corpus.   scripts/sanitize.sh [--build-only | --no-build] [fuzz-seconds-per-target]
# --build-only builds build-asan/ and stops; --no-build runs what an earlier --build-only built
# (scripts/test.sh builds it beside the Release suite's ctest, then runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
build=1 run=1
case "${1:-}" in
  --build-only) run=0; shift ;;
  --no-build) build=0; shift ;;
esac
seconds=${1:-30}
source scripts/cache.sh
deberta_cache_enable_ccache "$PWD"
if [[ $build -eq 1 ]]; then
# -g1: line tables only — enough for file:line in sanitizer reports, much cheaper to compile than -g.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DDEBERTA_FUZZ=ON -DDEBERTA_BUILD_VIEWER=OFF -DDEBERTA_VIEWER_GL_FREE_ONLY=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -DDEBERTA_NATIVE=OFF -DDEBERTA_TEST_TIMEOUT_SCALE=3 "${DEBERTA_CCACHE_ARGS[@]}" >/dev/null
cmake --build build-asan -j"${JOBS:-$(nproc)}"
fi
[[ $run -eq 1 ]] || exit 0
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Only what runs C++ the sanitizers can see (issue 56): the doctest suites, the CLI's catalogue of
# malformed inputs, the bench, the Python module's forward and the viewer's GL-free rooms' suites
# (lesson, i18n, worker). Left to the Release build, where they run once: the viewer's window (not
# built here: it needs GL), the notebooks (NumPy vs the CLI, 2.5 min
# under ASan), the Python-only checks (zoo_stats, teacher_scripts, the layer rule and its planted
# violations, the rooms, the architecture doc against the tree) and the installed package's
# consumers (package_*, a CMake and a pkg-config build).
(cd build-asan && ctest -j"${CTEST_JOBS:-$(nproc)}" --output-on-failure --timeout 900 \
   -E "notebooks|zoo_stats|teacher_scripts|^layers|^package_|^rooms$|^docs_")
BUILD=build-asan bash scripts/fuzz.sh "$seconds"
