#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for N seconds (default 30)
# on a copy of its committed seed corpus. Crashes are written to $BUILD/crashes/ and fail the run.
#   scripts/fuzz.sh [seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
b=${BUILD:-build-fuzz}
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DDEBERTA_FUZZ=ON \
  -DDEBERTA_NATIVE=OFF >/dev/null
cmake --build "$b" -j"${JOBS:-$(nproc)}" --target fuzz_safetensors fuzz_config fuzz_checkpoint fuzz_tokenizer fuzz_tokenizer_json
mkdir -p "$b/crashes"
status=0
for target in safetensors config checkpoint tokenizer tokenizer_json; do
  work=$b/corpus/$target
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/$target/* "$work"/ 2>/dev/null || true
  echo "== fuzz_$target for ${seconds}s"
  dict=()
  [ -f "tests/fuzz/dict/$target.dict" ] && dict=(-dict="tests/fuzz/dict/$target.dict")
  if ! ASAN_OPTIONS=detect_leaks=1 "$b/bin/fuzz_$target" "$work" "${dict[@]}" -max_total_time="$seconds" -max_len=65536 \
       -rss_limit_mb=4096 -artifact_prefix="$b/crashes/$target-" -print_final_stats=1 2>"$b/$target.log"; then
    status=1
    tail -40 "$b/$target.log"
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$b/$target.log" | sed "s/^/  /" || true
done
exit $status
