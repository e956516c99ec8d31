#!/usr/bin/env bash
# Korean, Japanese and Chinese token labels (issue 30): the CJK fixture model
# (notebooks_data/fixtures/cjk_model, pieces in Hangul, Kana and Han) draws every character of its
# tokens, predictions and input from a loaded font — no "font:" report — and a character no font
# has (U+E000, private use) is reported once on stderr and drawn as U+FFFD.
#   cjk_font_test.sh VIEWER CHECKER OUT_DIR SOURCE_DIR
set -u
viewer=$1 checker=$2 out=$3 src=$4
mkdir -p "$out"
model=$src/notebooks_data/fixtures/cjk_model
text="나는 책을 [MASK]. 私は本を読みます。我在看书。 Привет"
log=$(xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --model "$model" --text "$text" --screenshot "$out/cjk.png" --frames 4 --panel grid 2>&1) || { echo "$log"; exit 1; }
echo "$log"
if echo "$log" | grep -q "^font:"; then echo "FAIL: a character of the CJK text has no glyph"; exit 1; fi
"$checker" "$out/cjk.png" --size 1280x800 --min-colors 100 || exit 1
log=$(xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --model "$model" --text "$text $(printf '\xee\x80\x80')" --screenshot "$out/cjk_missing.png" --frames 4 2>&1) || { echo "$log"; exit 1; }
echo "$log"
echo "$log" | grep -qx "font: 1 characters have no glyph (U+E000)" || { echo "FAIL: no report for U+E000"; exit 1; }
echo "cjk fonts: 2 passed, 0 failed"
