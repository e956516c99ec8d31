#!/usr/bin/env bash
# The project's test command: installs dependencies, builds, runs every test suite with ctest
# (golden suite included; the viewer's screenshot test runs under xvfb-run), then the sanitizer
# build's run of the C++ suites and a short fuzzing run. Prints the time each part took.
#
#   scripts/test.sh           everything (README's test command, what CI runs)
#   scripts/test.sh --quick   the developers' tier: the core's doctest suites (golden on both engines
#                             among them) and the viewer's unit suites, in the Release build only
#   scripts/test.sh --nightly the nightly tier: the tests too slow for the default command (ctest label
#                             `nightly`: the page opening v3-large- and mdeberta-shaped models), alone
#
# Builds reuse what an earlier build on this machine made, in any clone (scripts/cache.sh: ccache
# and the WebAssembly libraries under ${XDG_CACHE_HOME:-$HOME/.cache}/deberta-explorer).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
nightly=0
case "${1:-}" in
  --quick) quick=1 ;;
  --nightly) nightly=1 ;;
  "") ;;
  *) echo "test.sh: unknown option $1 (usage: scripts/test.sh [--quick | --nightly])" >&2; exit 2 ;;
esac
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
if [[ $quick -eq 1 ]]; then
  # The C++ unit suites only: every doctest suite of tests/ (ctest label `core`) and of viewer/
  # (label `viewer_unit`). No window, browser, notebook or sanitizer.
  (cd build && ctest -j"$jobs" --output-on-failure --timeout 900 -L "^(core|viewer_unit)$")
  took "ctest (quick)"
  exit 0
fi
if [[ $nightly -eq 1 ]]; then
  # The site they need is built by its fixture (web_site) first.
  (cd build && ctest -j"$jobs" --output-on-failure --timeout 3000 -L "^nightly$")
  took "ctest (nightly)"
  exit 0
fi
# The sanitizer build compiles beside ctest (issue 56), at a lower priority: much of ctest waits on
# windows, browsers and interpreters, and those minutes of idle cores build it.
asan_log=$(mktemp /tmp/deberta-asan-build-XXXXXX)
nice -n 10 bash scripts/sanitize.sh --build-only >"$asan_log" 2>&1 &
asan_build=$!
trap 'kill "$asan_build" 2>/dev/null || true; rm -f "$asan_log"' EXIT
# Every test but the nightly tier's (label `nightly`: minutes each; scripts/test.sh --nightly).
(cd build && ctest -j"$jobs" --output-on-failure --timeout 900 -LE "^nightly$")
took "ctest"
if ! wait "$asan_build"; then
  echo "test.sh: the sanitizer build failed:"; tail -40 "$asan_log"; exit 1
fi
took "the sanitizer build (beside ctest)"
# The C++ suites under AddressSanitizer + UndefinedBehaviorSanitizer, then 10 s per fuzz target.
CTEST_JOBS=$jobs bash scripts/sanitize.sh --no-build 10
took "sanitizers"
