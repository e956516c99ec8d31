#!/usr/bin/env bash
# tab_bar_test.sh — the tab bar fits in one row at 1280 px in every language (issue 54, item 5).
#   tab_bar_test.sh VIEWER OUT_DIR SOURCE_DIR
# For en, ko, ja, zh_CN and it: the viewer at 1280×800 (normal size) with --log-text (every string
# the frame drew, a line a row on screen: ui/layout.h), then the Explorer window's first line must
# hold all ten tab buttons and the next be the separator under the bar (a second row of tabs would
# come between them). Run under xvfb-run.
set -euo pipefail
viewer=$1 out=$2 src=$3
mkdir -p "$out"
status=0
for lang in en ko ja zh_CN it; do
  log=$out/tabs_$lang.txt
  if ! "$viewer" --model "$src/notebooks_data/models/deberta-tiny-multilingual" --text "Hello [MASK]." --lang "$lang" \
       --width 1280 --height 800 --log-text "$log" > "$out/tabs_$lang.out" 2>&1; then
    echo "tab_bar_test: the viewer failed in $lang:"; tail -5 "$out/tabs_$lang.out"; status=1; continue
  fi
  # The two lines after "## Explorer": the tab row, then the separator ("----").
  read -r row next < <(awk '/^## Explorer$/ {getline a; getline b; gsub(/\t/, " ", a); print gsub(/\[ /, "", a), substr(b, 1, 4); exit}' "$log")
  if [[ "${row:-0}" -ne 10 || "${next:-}" != "----" ]]; then
    echo "tab_bar_test: $lang: the tab bar is not one row at 1280 px (${row:-0} of 10 tabs on the first row):"
    awk '/^## Explorer$/ {for (k = 0; k < 3; ++k) {getline l; print "  " l}; exit}' "$log"
    status=1
  else
    echo "tab_bar_test: $lang: 10 tabs in one row"
  fi
done
[[ $status -eq 0 ]] && echo "tab_bar_test: PASS"
exit $status
