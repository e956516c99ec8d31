#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for N seconds (default 30)
# on a copy of its committed seed corpus. Crashes are written to $BUILD/crashes/ and fail the run.
#   scripts/fuzz.sh [seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
b=${BUILD:-build-fuzz}
source scripts/cache.sh
deberta_cache_enable_ccache "$PWD"
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DDEBERTA_FUZZ=ON \
  -DDEBERTA_NATIVE=OFF "${DEBERTA_CCACHE_ARGS[@]}" >/dev/null
cmake --build "$b" -j"${JOBS:-$(nproc)}" --target fuzz_safetensors fuzz_config fuzz_checkpoint fuzz_tokenizer fuzz_tokenizer_json
mkdir -p "$b/crashes"
# One target per core at a time (each libFuzzer run is one thread): the same seconds per target,
# in a fraction of the wall time.
fuzz_one() {
  local target=$1 work=$b/corpus/$1
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/$target/* "$work"/ 2>/dev/null || true
  local dict=()
  [ -f "tests/fuzz/dict/$target.dict" ] && dict=(-dict="tests/fuzz/dict/$target.dict")
  if ASAN_OPTIONS=detect_leaks=1 "$b/bin/fuzz_$target" "$work" "${dict[@]}" -max_total_time="$seconds" -max_len=65536 \
       -rss_limit_mb=4096 -artifact_prefix="$b/crashes/$target-" -print_final_stats=1 2>"$b/$target.log"; then
    echo 0 >"$b/$target.status"
  else
    echo 1 >"$b/$target.status"
  fi
}
targets=(safetensors config checkpoint tokenizer tokenizer_json)
max_jobs=${JOBS:-$(nproc)}
rm -f "$b"/*.status
for target in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= max_jobs )); do wait -n || true; done
  echo "== fuzz_$target for ${seconds}s"
  fuzz_one "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
  echo "== fuzz_$target"
  if [[ "$(cat "$b/$target.status" 2>/dev/null)" != 0 ]]; then
    status=1
    tail -40 "$b/$target.log"
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$b/$target.log" | sed "s/^/  /" || true
done
exit $status
