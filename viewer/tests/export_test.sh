#!/bin/sh
# export_test.sh — runs deberta-viewer --screenshot --export under Xvfb and checks the exported files.
#   export_test.sh VIEWER DEBERTA OUTDIR MODEL [VIEWER OPTIONS...]
# The exported trace must equal `deberta dump` on the same inputs (≤ 1e-12, every tensor, mlm.* and
# emd.* included). Fails (never skips) when xvfb-run is missing.
set -u
viewer=$1 deberta=$2 dir=$3 model=$4
shift 4
set -- --model "$model" "$@"
command -v xvfb-run >/dev/null 2>&1 || { echo "FAIL: xvfb-run not found; install xvfb xauth libgl1-mesa-dri" >&2; exit 1; }
rm -rf "$dir"
xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --screenshot "$dir/window.png" --export "$dir" "$@" || {
  echo "FAIL: deberta-viewer --export failed" >&2
  exit 1
}
fail=0
for q in c2c c2p logits probs; do
  for ext in png csv npy; do
    [ -s "$dir/$q.$ext" ] || { echo "FAIL: $dir/$q.$ext missing or empty" >&2; fail=1; }
  done
  # .npy: magic \x93NUMPY, version 1.0, float64 little-endian
  head -c 6 "$dir/$q.npy" | tail -c 5 | grep -q NUMPY || { echo "FAIL: $q.npy has no NUMPY magic" >&2; fail=1; }
  grep -q "'descr': '<f8'" "$dir/$q.npy" || { echo "FAIL: $q.npy is not float64" >&2; fail=1; }
done
# safetensors: 8-byte header length, then JSON naming the golden tensors
grep -q '"layer.0.attn_probs"' "$dir/trace.safetensors" || { echo "FAIL: trace.safetensors lacks layer.0.attn_probs" >&2; fail=1; }
# EXPECT_EMD=0 for models that decode without the EMD (the diff below then proves no emd.* on either side).
if [ "${EXPECT_EMD:-1}" = 1 ]; then
  grep -q '"emd.kv_states"' "$dir/trace.safetensors" || { echo "FAIL: trace.safetensors lacks emd.kv_states" >&2; fail=1; }
elif grep -q '"emd.kv_states"' "$dir/trace.safetensors"; then
  echo "FAIL: this model decodes without the EMD, but the export has emd.*" >&2; fail=1
fi
grep -q '"mlm.masked_logits"' "$dir/trace.safetensors" || { echo "FAIL: trace.safetensors lacks mlm.masked_logits" >&2; fail=1; }
# The same numbers as the CLI: dump the exported inputs (ids, mask, masked positions) and diff.
"$deberta" dump --model "$model" --inputs "$dir/trace.safetensors" --out "$dir/dump.safetensors" >/dev/null || {
  echo "FAIL: deberta dump on the exported inputs failed" >&2; fail=1; }
"$deberta" diff "$dir/trace.safetensors" "$dir/dump.safetensors" --tol 1e-12 > "$dir/diff.txt" 2>&1 || {
  cat "$dir/diff.txt" >&2; echo "FAIL: the viewer's export differs from deberta dump" >&2; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
