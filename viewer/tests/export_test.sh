#!/bin/sh
# export_test.sh — runs deberta-viewer --screenshot --export under Xvfb and checks the exported files.
#   export_test.sh VIEWER OUTDIR [VIEWER OPTIONS...]
# Fails (never skips) when xvfb-run is missing.
set -u
viewer=$1 dir=$2
shift 2
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
grep -q '"emd.kv_states"' "$dir/trace.safetensors" || { echo "FAIL: trace.safetensors lacks emd.kv_states" >&2; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
