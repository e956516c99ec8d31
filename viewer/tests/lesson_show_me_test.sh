#!/bin/sh
# lesson_show_me_test.sh — the Lesson tab's "show me" (pressed headless with --lesson-show-me) must
# open the step's tab with its layer, head, cell and k, and the screenshot must show that tab's map
# (the region is the right-hand map of Relative distance, the rows the model reads).
#   lesson_show_me_test.sh VIEWER CHECKER OUT.png "EXPECTED LINE" [VIEWER OPTIONS...]
# EXPECTED LINE is what the viewer prints after the press, e.g.
# "lesson: show me → tab=distance layer=1 head=2 cell=3:7 k=4".
set -u
viewer=$1 checker=$2 out=$3 expected=$4
shift 4
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xvfb-run >/dev/null 2>&1 || fail "xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)"
rm -f "$out"
log=$(xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --lesson-show-me --frames 6 --screenshot "$out" "$@" 2>&1) ||
  { echo "$log" >&2; fail "deberta-viewer exited with an error"; }
echo "$log"
echo "$log" | grep -qF "$expected" || fail "expected the line: $expected"
exec "$checker" "$out" --size 1280x800 --min-colors 300 --region 850,230,270,270 --min-map-colors 40
