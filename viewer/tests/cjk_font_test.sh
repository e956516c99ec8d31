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
# Issue 44, class 10: 30,000 distinct characters (all of Han, then Hangul) grew the atlas to ~1 GB.
# It holds at most 4096 of them; the rest are reported once and drawn as U+FFFD; peak RSS stays small.
many=$(/usr/bin/python3 -c "print(''.join(chr(c) for c in list(range(0x4E00, 0x9FA6)) + list(range(0xAC00, 0xAC00 + 9000))))")
rss=$(/usr/bin/python3 - "$viewer" "$model" "$many" "$out/cjk_many.png" <<'PY' 2>"$out/cjk_many.log"
import resource, subprocess, sys
viewer, model, text, png = sys.argv[1:5]
r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", viewer, "--model", model, "--text", text,
                    "--screenshot", png, "--frames", "3", "--panel", "grid"], stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
sys.stderr.write(r.stderr)
sys.stderr.write("exit %d\n" % r.returncode)
# The input (tens of thousands of tokens) is refused by the model's length rule: exit 1 with that
# message is expected; a signal (a crash, the OOM killer) is not.
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024 if r.returncode in (0, 1) else -1)
PY
)
cat "$out/cjk_many.log" | grep "^font:" || true
[ "$rss" -ge 0 ] 2>/dev/null || { echo "FAIL: the viewer crashed on 30,000 distinct characters"; cat "$out/cjk_many.log"; exit 1; }
grep -q "^font: [0-9]* characters beyond the atlas's limit of 4096 show as U+FFFD" "$out/cjk_many.log" ||
  { echo "FAIL: no over-limit report"; exit 1; }
echo "peak RSS with 30,000 distinct characters: $rss MB"
[ "$rss" -lt 600 ] || { echo "FAIL: peak RSS $rss MB (the atlas is not bounded)"; exit 1; }
echo "cjk fonts: 3 passed, 0 failed"
