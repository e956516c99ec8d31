#!/usr/bin/env bash
# fit_test.sh — no text cut at the side of its box, on any tab or lesson step, in any language
# (issue 54, item 5).   fit_test.sh VIEWER OUT_DIR SOURCE_DIR
# For en, ko, ja, zh_CN and it, at 1280×800, 1440×900 and 1920×1080: the viewer's --tour (every tab,
# then every lesson step twice) with --check-fit, which reads each stop's draw lists and prints a
# line "fit: …" for every line of text with a glyph cut at its left or right (ui/clip_check.h: a
# label wider than its button, tab, table cell or panel). The multilingual model on a sentence in
# the interface's language (its tokens and predictions in that script), and the bundled English model
# at 1280×800; the large interface size at 1440×900 and 1920×1080. Any "fit:" line fails the test; OUT_DIR keeps each run's output. Run under xvfb-run.
set -euo pipefail
viewer=$1 out=$2 src=$3
mkdir -p "$out"
multi=$src/notebooks_data/models/deberta-tiny-multilingual
declare -A text=(
  [en]="The cat sat on the [MASK] by the window."
  [ko]="나는 도서관에서 [MASK]을 읽었다."
  [ja]="私は図書館で本を[MASK]。"
  [zh_CN]="我在图书馆里读[MASK]。"
  [it]="Ieri ho letto un [MASK] in biblioteca."
)
status=0
runs=0
check() {  # NAME ARGS…: one tour; its "fit:" lines are failures
  local name=$1; shift
  local log=$out/$name.out
  runs=$((runs + 1))
  if ! "$viewer" "$@" --tour --check-fit > "$log" 2>&1 && ! grep -q "^fit:" "$log"; then
    echo "fit_test: $name: the viewer failed:"; tail -5 "$log"; status=1; return
  fi
  if grep -q "^fit:" "$log"; then
    echo "fit_test: $name: $(grep -c '^fit:' "$log") lines cut at their side:"
    grep "^fit:" "$log" | head -20 | sed 's/^/  /'
    status=1
  fi
}
for lang in en ko ja zh_CN it; do
  for size in 1280x800 1440x900 1920x1080; do
    check "${lang}_${size}" --model "$multi" --text "${text[$lang]}" --lang "$lang" --width "${size%x*}" --height "${size#*x}"
  done
  check "${lang}_bundled" --lang "$lang" --width 1280 --height 800
  # The large interface size (A+ once) where it has room: a laptop at 1440×900 and a desktop at 1920×1080.
  for size in 1440x900 1920x1080; do
    check "${lang}_${size}_large" --model "$multi" --text "${text[$lang]}" --lang "$lang" --width "${size%x*}" --height "${size#*x}" \
          --ui-size large
  done
done
[[ $status -eq 0 ]] && echo "fit_test: PASS ($runs tours, every tab and lesson step, no line cut)"
exit $status
