#!/usr/bin/env bash
# desktop_paste_check.sh — the desktop viewer's text box and the system clipboard (issue 40, item 1),
# checked by hand in a real X window: a manual check, not part of ctest (the box is found by its
# place on the screen, which moves when the Model & text panel changes; see BOX below).
#
#   viewer/tests/desktop_paste_check.sh VIEWER [MODEL_DIR] [OUT_DIR]
#
# Needs Xvfb, xdotool and xclip (scripts/setup.sh installs them). In a 1280×800 window the viewer
# opens MODEL_DIR (default: the multilingual bundled model) on a Korean text; then
#   1. xclip, another X client, owns the CLIPBOARD with a Japanese sentence;
#   2. a click on the text box, Ctrl+A, Ctrl+V, Enter (keys held ~0.2 s so a frame sees each):
#      ImGui's GLFW backend reads the clipboard (glfwGetClipboardString) into the box;
#   3. the clipboard is overwritten with "-", then Ctrl+A, Ctrl+C in the box: the box's text goes
#      back to the CLIPBOARD (glfwSetClipboardString), and xclip reads it.
# Passes when the text read back is the Japanese sentence: it went system clipboard → box → system
# clipboard, which a box that did not take the paste (it still holds the Korean text) or a copy
# that never reached the clipboard ("-") both fail. OUT_DIR/desktop_paste.xwd is the window after
# the paste, for people to look at (xwd from x11-apps, when present).
set -euo pipefail
viewer=${1:?usage: desktop_paste_check.sh VIEWER [MODEL_DIR] [OUT_DIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
model=${2:-$root/notebooks_data/models/deberta-tiny-multilingual}
out=${3:-/tmp/deberta-desktop-paste}
BOX="200 294"  # the centre of the text box in the 1280×800 window (look at the .xwd if this moves)
for tool in Xvfb xdotool xclip; do
  command -v $tool >/dev/null || { echo "desktop_paste_check: needs $tool (apt-get install xvfb xdotool xclip)"; exit 1; }
done
mkdir -p "$out"
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 >/dev/null 2>&1 &
xvfb=$!
export DISPLAY=$display
viewer_pid=""
cleanup() {
  [[ -n "$viewer_pid" ]] && kill "$viewer_pid" 2>/dev/null || true
  kill "$xvfb" 2>/dev/null || true
}
trap cleanup EXIT
sleep 1
"$viewer" --model "$model" --text "안녕하세요 [MASK]." --width 1280 --height 800 >"$out/viewer.log" 2>&1 &
viewer_pid=$!
sleep 8  # the window, the model and the first result

press() {  # press KEY [MODIFIER]: each key held for a few frames
  [[ -n "${2:-}" ]] && { xdotool keydown "$2"; sleep 0.2; }
  xdotool keydown "$1"; sleep 0.25; xdotool keyup "$1"; sleep 0.1
  [[ -n "${2:-}" ]] && { xdotool keyup "$2"; sleep 0.2; }
  return 0
}
japanese="私は図書館で本を[MASK]。"
printf '%s' "$japanese" | xclip -selection clipboard
# shellcheck disable=SC2086
xdotool mousemove $BOX click 1
sleep 0.5
press a ctrl
press v ctrl
press Return
sleep 3
command -v xwd >/dev/null && xwd -root -silent >"$out/desktop_paste.xwd"
printf '-' | xclip -selection clipboard
# shellcheck disable=SC2086
xdotool mousemove $BOX click 1
sleep 0.5
press a ctrl
press c ctrl
sleep 0.5
back=$(xclip -selection clipboard -o)
echo "desktop_paste_check: the box's text, copied back: $back"
if [[ "$back" == "$japanese" ]]; then
  echo "desktop_paste_check: pass (system clipboard → text box → system clipboard)"
else
  echo "desktop_paste_check: FAIL: expected $japanese"
  exit 1
fi
