#!/bin/sh
# bad_model_test.sh — loads a good model, then broken model folders from the bad-input catalogue,
# under Xvfb; each failed load must show its error and keep the previous model and the text.
#   bad_model_test.sh VIEWER GOOD_MODEL BAD_DIR...
# Fails (never skips) when xvfb-run is missing.
set -u
viewer=$1 good=$2
shift 2
command -v xvfb-run >/dev/null 2>&1 || { echo "FAIL: xvfb-run not found; install xvfb xauth libgl1-mesa-dri" >&2; exit 1; }
text="The cat sat on the [MASK]."
out=$(xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --model "$good" --text "$text" \
      --screenshot "${TMPDIR:-/tmp}/viewer_bad_model.png" --then-load "$@" 2>&1) || {
  echo "$out"
  echo "FAIL: deberta-viewer exited non-zero" >&2
  exit 1
}
echo "$out"
fail=0
n=$(echo "$out" | grep -c '^state: ')
[ "$n" -eq $(($# + 1)) ] || { echo "FAIL: expected $(($# + 1)) state lines, got $n" >&2; fail=1; }
# After every failed load: the good model, the text, and an error naming the folder.
i=0
for bad in "$@"; do
  i=$((i + 1))
  line=$(echo "$out" | grep '^state: ' | sed -n "$((i + 1))p")
  case "$line" in
    *"model=$good "*) ;;
    *) echo "FAIL: after loading $bad the model is not $good: $line" >&2; fail=1 ;;
  esac
  case "$line" in
    *"error="*"$bad"*) ;;
    *) echo "FAIL: no error naming $bad: $line" >&2; fail=1 ;;
  esac
  case "$line" in
    *"text=$text") ;;
    *) echo "FAIL: the text was lost after loading $bad: $line" >&2; fail=1 ;;
  esac
done
[ $fail -eq 0 ] && echo "PASS: $# broken models refused, previous model and text kept"
exit $fail
