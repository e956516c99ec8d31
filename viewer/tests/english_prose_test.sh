#!/usr/bin/env bash
# english_prose_test.sh — no English prose in the translated Equation tab and lesson (issue 54, item 6).
#   english_prose_test.sh VIEWER OUT_DIR SOURCE_DIR
# For ko, ja, zh_CN and it: the viewer on the multilingual model with a sentence in that language
# (so that tokens and predictions are the language's too), --tour (every tab, then every lesson step
# with its working shown) with --log-text (every string drawn, through Dear ImGui's log), then
# english_prose_check.py on the Equation and Lesson stops: it fails on two English words in a row
# outside quotations and the allow-list (the paper's terms, tensor and model names).
set -euo pipefail
viewer=$1 out=$2 src=$3
mkdir -p "$out"
model=$src/notebooks_data/models/deberta-tiny-multilingual
declare -A text=(
  [ko]="서울은 한국의 [MASK]입니다."
  [ja]="東京は日本の[MASK]です。"
  [zh_CN]="北京是中国的[MASK]。"
  [it]="Roma è la [MASK] d'Italia."
)
status=0
for lang in ko ja zh_CN it; do
  log=$out/tour_$lang.txt
  # A tall window: the lesson's working and the Equation tab's rows are drawn, not scrolled away.
  if ! "$viewer" --model "$model" --text "${text[$lang]}" --lang "$lang" --tour --frames 3 --width 1280 --height 2000 \
       --log-text "$log" > "$out/tour_$lang.out" 2>&1; then
    echo "english_prose_test: the viewer failed in $lang:"; tail -5 "$out/tour_$lang.out"; status=1; continue
  fi
  /usr/bin/python3 "$src/viewer/tests/english_prose_check.py" "$log" "$lang" || status=1
done
[[ $status -eq 0 ]] && echo "english_prose_test: PASS"
exit $status
