#!/usr/bin/env bash
# wasm_bench_test.sh — ctest wasm_bench (issue 41, item 7; docs/web.md "Speed"): the forward pass
# of a deberta-v3-xsmall-shaped model (random weights, N = 128, the MLM head at every 7th position)
# on the desktop and in WebAssembly under node, one thread and emscripten's pthreads.
#
#   wasm_bench_test.sh DESKTOP_FORWARD_BENCH WASM_BUILD_DIR OUT_DIR [REPEAT]
#
# The desktop build (forward_bench) writes its MLM logits; each WebAssembly build
# (WASM_BUILD_DIR/forward_bench_wasm.js, forward_bench_wasm_mt.js, built by scripts/web.sh) runs the
# same forward and compares every logit with them: it fails when one differs by more than 1e-10.
# The times are printed, never asserted (a shared machine's speed is not a property of the code).
set -euo pipefail
desktop=${1:?usage: wasm_bench_test.sh DESKTOP_FORWARD_BENCH WASM_BUILD_DIR OUT_DIR [REPEAT]}
wasm=${2:?usage}
out=${3:?usage}
repeat=${4:-3}
node=/usr/bin/node
export NODE_PATH=/usr/share/nodejs
for f in "$desktop" "$wasm/forward_bench_wasm.js" "$wasm/forward_bench_wasm_mt.js"; do
  [[ -f "$f" ]] || { echo "FAIL: wasm_bench: $f not found (scripts/web.sh builds the WebAssembly ones)"; exit 1; }
done
mkdir -p "$out"
ref=$out/xsmall-128.logits
rm -f "$ref"
"$desktop" --preset xsmall --seq 128 --threads 1 --repeat "$repeat" --save "$ref"
status=0
"$node" --no-experimental-fetch "$wasm/forward_bench_wasm.js" --preset xsmall --seq 128 --threads 1 --repeat "$repeat" \
  --check "$ref" || status=1
threads=$(( $(nproc) < 4 ? $(nproc) : 4 ))
(( threads >= 2 )) || threads=2
"$node" --no-experimental-fetch "$wasm/forward_bench_wasm_mt.js" --preset xsmall --seq 128 --threads "$threads" \
  --repeat "$repeat" --check "$ref" || status=1
exit $status
