#!/usr/bin/env bash
# A zoo folder whose table4.json is a FIFO must not hang the viewer (issue 28, class 3): the
# Compare tab reads regular files only. Before the fix the UI thread blocked forever on open().
#   zoo_fifo_test.sh VIEWER MODEL_DIR
set -u
viewer=$1 model=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$model" "$dir/"
mkfifo "$dir/table4.json"
timeout 60 xvfb-run -a "$viewer" --zoo "$dir" --panel compare --screenshot "$dir/shot.png" --frames 3
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: deberta-viewer exited with $rc (124: it hung on the FIFO)"; exit 1; }
echo "zoo fifo: 1 passed, 0 failed"
