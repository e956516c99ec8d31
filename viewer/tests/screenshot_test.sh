#!/bin/sh
# screenshot_test.sh — runs deberta-viewer --screenshot under Xvfb and checks the PNG.
#   screenshot_test.sh VIEWER CHECKER OUT.png "CHECKER OPTIONS" [VIEWER OPTIONS...]
# EXPECT_EXIT=N in the environment: the viewer must exit with N (e.g. 1 for a model that cannot
# load: it still draws the error, then reports it); default 0.
# Fails (never skips) when xvfb-run is missing: CI must install xvfb, xauth and libgl1-mesa-dri.
set -u
viewer=$1 checker=$2 out=$3 check_opts=$4
shift 4
if ! command -v xvfb-run >/dev/null 2>&1; then
  echo "FAIL: xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)" >&2
  exit 1
fi
rm -f "$out"
xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --screenshot "$out" --frames 4 "$@"
rc=$?
if [ $rc -ne "${EXPECT_EXIT:-0}" ]; then
  echo "FAIL: deberta-viewer exited with $rc (expected ${EXPECT_EXIT:-0})" >&2
  exit 1
fi
# shellcheck disable=SC2086
exec "$checker" "$out" $check_opts
