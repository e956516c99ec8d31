#!/usr/bin/env bash
# Every tab and every lesson step (answer 0 and the working revealed, so its map draws; answer 0 and
# "show me") must draw without a crash and exit 0 for models that lack parts of DeBERTa: no relative
# attention (golden_extra/v1_norel), the zoo's c2c + absolute positions, c2p only, no EMD, and a
# one-token input. Issue 28, class 1 (steps 5–6 crashed on models without relative attention).
# One viewer a model (--tour: every stop starts from the same selection, as a fresh run would).
#   every_panel_test.sh VIEWER SOURCE_DIR      (run under xvfb-run)
set -u
viewer=$1 src=$2
failed=0 stops=0
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
  out=$(timeout 300 "$viewer" --tour --frames 3 --timeout 60 --model "$src/notebooks_data/$model" "$opt" "$value" 2>&1)
  rc=$?
  drawn=$(grep -c '^tour: [a-z]' <<<"$out")
  # Ten tabs and two stops a lesson step: a tour that ends early (or a lesson with no steps) fails.
  total=$(sed -n 's/^tour: \([0-9]*\) stops drawn$/\1/p' <<<"$out")
  echo "$model ($opt $value): exit $rc, ${total:-no} stops drawn"
  if [ $rc -ne 0 ] || [ -z "$total" ] || [ "$total" -lt 20 ]; then
    echo "FAILED: deberta-viewer --tour --model $model $opt '$value'; the last lines:"; echo "$out" | tail -5
    failed=$((failed + 1))
  fi
  stops=$((stops + drawn))
done
echo "every panel: $((${#cases[@]} - failed)) of ${#cases[@]} models passed ($stops stops)"
[ "$failed" -eq 0 ]
