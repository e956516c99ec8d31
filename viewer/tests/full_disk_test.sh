#!/bin/sh
# full_disk_test.sh — every output kind written to a full disk (issue 59, class 5): each output path
# is a symlink to /dev/full, where opening succeeds and every write or the flush at close fails.
# Each writer must report "cannot write PATH: No space left on device" and exit non-zero; before
# the fix stb, cairo and ofstream buffered, nobody checked the close, and the tools printed
# "wrote …" with exit 0.
#   full_disk_test.sh VIEWER DEBERTA OUTDIR MODEL [VIEWER OPTIONS...]
set -u
viewer=$1 deberta=$2 out=$3 model=$4
shift 4
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -c /dev/full ] || fail "/dev/full is missing"
command -v xvfb-run >/dev/null 2>&1 || fail "xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)"
rm -rf "$out"
mkdir -p "$out/export"
full() { ln -s /dev/full "$1"; }
# Every file --export writes, each a link to /dev/full.
for q in c2c c2p p2c p2p logits probs; do
  for ext in png csv npy; do full "$out/export/$q.$ext"; done
done
full "$out/export/trace.safetensors"
for f in figure.pdf grid.svg pipeline.pdf links.svg window.png dump.safetensors; do full "$out/$f"; done
status=0
# The CLI: dump's safetensors and standard output.
log=$("$deberta" dump --model "$model" --ids 1,5,6,2 --out "$out/dump.safetensors" 2>&1) && fail "dump to a full disk exited 0: $log"
echo "$log"
echo "$log" | grep -qF "cannot write $out/dump.safetensors: No space left on device" || fail "dump's message does not name the path"
log=$("$deberta" tokenize --model "$model" --text "hello world" 2>&1 >/dev/full) && fail "tokenize > /dev/full exited 0: $log"
echo "$log"
echo "$log" | grep -qF "cannot write standard output: No space left on device" || fail "standard output on a full disk not reported"
# The viewer: figures (PDF, SVG), diagrams, every export kind and the screenshot, in one run.
log=$(xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --frames 6 --model "$model" --figure "$out/figure.pdf" \
      --figure-grid "$out/grid.svg" --figure-pipeline "$out/pipeline.pdf" --figure-links "$out/links.svg" \
      --export "$out/export" --screenshot "$out/window.png" "$@" 2>&1) && status=0 || status=$?
echo "$log"
[ "$status" -ne 0 ] || fail "deberta-viewer wrote to a full disk and exited 0"
for f in figure.pdf grid.svg pipeline.pdf links.svg window.png export/c2c.png export/c2c.csv export/c2c.npy \
         export/probs.png export/trace.safetensors; do
  echo "$log" | grep -qF "cannot write $out/$f: No space left on device" || fail "no failure reported for $out/$f"
done
echo "$log" | grep -q "wrote $out" && fail "a write to the full disk was reported as written"
echo PASS
