#!/usr/bin/env bash
# Every tab and every lesson step (answer revealed, so its map draws; then "show me") must draw
# without a crash and exit 0 for models that lack parts of DeBERTa: no relative attention
# (golden_extra/v1_norel), the zoo's c2c + absolute positions, c2p only, no EMD, and a
# one-token input. Issue 28, class 1 (steps 5–6 crashed on models without relative attention).
#   every_panel_test.sh VIEWER SOURCE_DIR      (run under xvfb-run)
set -u
viewer=$1 src=$2
failed=0 runs=0
shot=$(mktemp --suffix=.png)
run() {
  runs=$((runs + 1))
  out=$(timeout 60 "$viewer" --screenshot "$shot" --frames 3 --timeout 30 "$@" 2>&1)
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAILED (exit $rc): deberta-viewer $*"; echo "$out" | tail -3; failed=$((failed + 1))
  fi
}
# MODEL|INPUT OPTION|INPUT VALUE
cases=(
  "golden_extra/v1_norel|--ids|1,5,6,7,8,9,10,11,2"
  "models/zoo/deberta-tiny-c2c-abs|--text|In the beginning [MASK] created"
  "golden/v1_c2p_only|--ids|1,5,6,7,2"
  "models/zoo/deberta-tiny-no-emd|--text|a [MASK]"
  "models/deberta-tiny|--ids|4"
)
for c in "${cases[@]}"; do
  IFS='|' read -r model opt value <<<"$c"
  args=(--model "$src/notebooks_data/$model" "$opt" "$value")
  for panel in grid head distance equation predictions compare export lesson pipeline links; do run "${args[@]}" --panel "$panel"; done
  for step in $(seq 1 12); do
    run "${args[@]}" --panel lesson --lesson-step "$step" --lesson-answer 0 --lesson-reveal
    run "${args[@]}" --panel lesson --lesson-step "$step" --lesson-answer 0 --lesson-show-me
  done
done
rm -f "$shot"
echo "every panel: $((runs - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
