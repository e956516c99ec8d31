#!/bin/sh
# lesson_what_if_test.sh — the Lesson tab's "what if" set headless (--lesson-what-if NAME=VALUE, after
# an answer: the control opens only after an attempt) must print the step's own number and the
# [MASK]'s top 3 before and after the change, and the screenshot must be drawn.
#   lesson_what_if_test.sh VIEWER CHECKER OUT.png [VIEWER OPTIONS...]
set -u
viewer=$1 checker=$2 out=$3
shift 3
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xvfb-run >/dev/null 2>&1 || fail "xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)"
rm -f "$out"
log=$(xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --frames 6 --screenshot "$out" "$@" 2>&1) ||
  { echo "$log" >&2; fail "deberta-viewer exited with an error"; }
echo "$log"
# Step 7 under f = 1: s·c2p at its cell, before -> after (two different numbers), and the [MASK]'s top 3.
line=$(echo "$log" | grep -F "lesson: step 7, what if f = 1: s·c2p at i = ") || fail "no line with the step's number"
before=$(echo "$line" | sed 's/.*: \([^ ]*\) -> \([^ ]*\)$/\1/')
after=$(echo "$line" | sed 's/.*: \([^ ]*\) -> \([^ ]*\)$/\2/')
[ "$before" != "$after" ] || fail "the step's number did not change: $line"
echo "$log" | grep -E "lesson: step 7, what if f = 1: \[MASK\] at [0-9]+: (.* 0\.[0-9]{4},){2}.* 0\.[0-9]{4} -> (.* 0\.[0-9]{4},){2}.* 0\.[0-9]{4}$" >/dev/null ||
  fail "no line with the [MASK]'s top 3 before and after"
exec "$checker" "$out" --size 1280x800 --min-colors 300
