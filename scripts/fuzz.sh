#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for N seconds (default 30)
# on a copy of its committed seed corpus. Crashes are written to build-fuzz/crashes/ and fail the run.
#   scripts/fuzz.sh [seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DDEBERTA_FUZZ=ON \
  -DDEBERTA_BUILD_TESTS=OFF -DDEBERTA_NATIVE=OFF >/dev/null
cmake --build build-fuzz -j"${JOBS:-$(nproc)}" --target fuzz_safetensors fuzz_config fuzz_checkpoint fuzz_tokenizer
mkdir -p build-fuzz/crashes
status=0
for target in safetensors config checkpoint tokenizer; do
  work=build-fuzz/corpus/$target
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/$target/* "$work"/ 2>/dev/null || true
  echo "== fuzz_$target for ${seconds}s"
  if ! ASAN_OPTIONS=detect_leaks=1 build-fuzz/bin/fuzz_$target "$work" -max_total_time="$seconds" -max_len=65536 \
       -rss_limit_mb=4096 -artifact_prefix=build-fuzz/crashes/$target- -print_final_stats=1 2>build-fuzz/$target.log; then
    status=1
    tail -40 build-fuzz/$target.log
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" build-fuzz/$target.log | sed "s/^/  /" || true
done
exit $status
