#!/bin/bash
# lesson_walkthrough.sh — the lesson as a student meets it, driven by xdotool in a real window (not
# headless): for each of the lesson's 15 steps, a wrong answer typed into the answer box (a typical mistake
# of the step when it lists one) and Enter, a screenshot; then the right answer and Enter, a
# screenshot; then the "next step" arrow. The answers come from the viewer itself
# (--lesson-answer X --lesson-reveal prints the answer and the mistakes, as "show the working").
# A manual check (issue 31), not part of ctest: it needs xdotool and xwd (Debian's xdotool,
# x11-apps), and its screenshots are for looking at.
#   lesson_walkthrough.sh VIEWER OUTDIR [VIEWER OPTIONS...]
set -u
viewer=$1 out=$2
shift 2
for tool in Xvfb xdotool xwd python3; do command -v $tool >/dev/null || { echo "needs $tool (apt-get install xvfb xdotool x11-apps)"; exit 1; }; done
mkdir -p "$out"
display=:77
Xvfb $display -screen 0 1280x800x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $viewer_pid $xvfb 2>/dev/null' EXIT
sleep 1
export DISPLAY=$display
# Enter held as a finger holds it: Dear ImGui 1.86 samples keys once a frame, so a press and release
# inside one frame (xdotool's default) would be missed.
enter() { xdotool keydown Return; sleep 0.15; xdotool keyup Return; sleep 0.8; }
grab() {  # grab NAME: the screen as PNG (xwd → PNG with Python's zlib)
  xwd -root -silent | python3 -c '
import struct, sys, zlib
d = sys.stdin.buffer.read()
h = struct.unpack(">25I", d[:100])
hsize, w, hgt, bpl, ncol = h[0], h[4], h[5], h[12], h[19]
px = d[hsize + 12 * ncol:]
rows = b"".join(b"\0" + bytes(b for p in range(w) for b in (px[y*bpl+4*p+2], px[y*bpl+4*p+1], px[y*bpl+4*p])) for y in range(hgt))
def chunk(t, c): return struct.pack(">I", len(c)) + t + c + struct.pack(">I", zlib.crc32(t + c) & 0xffffffff)
sys.stdout.buffer.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, hgt, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
' > "$out/$1.png"
}
"$viewer" --panel lesson --lesson-step 1 "$@" >"$out/viewer.log" 2>&1 &
viewer_pid=$!
sleep 4
xdotool search --sync --onlyvisible --name "DeBERTa" windowactivate >/dev/null 2>&1 || true
for step in $(seq 1 15); do
  info=$(xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --lesson-step "$step" --lesson-answer 1e300 --lesson-reveal \
           --frames 4 --screenshot /tmp/lesson_walk_probe.png "$@" 2>&1)
  right=$(echo "$info" | sed -n "s/^lesson: step $step, the answer: //p")
  wrong=$(echo "$info" | sed -n "s/^lesson: step $step, mistake \([^:]*\): .*/\1/p" | head -n 1)
  [ -n "$wrong" ] || wrong=12345
  if [ "$right" = "(does not apply)" ] || [ -z "$right" ]; then
    echo "step $step: does not apply here"
    grab "step${step}_skip"
  else
    xdotool type --delay 120 -- "$wrong"; enter
    grab "step${step}_wrong"
    xdotool type --delay 120 -- "$right"; enter
    grab "step${step}_right"
    echo "step $step: typed $wrong (a mistake), then $right (the answer)"
  fi
  # The "next step" arrow of the Lesson tab (top left of the explorer, right of the previous arrow).
  xdotool mousemove 468 130 click 1; sleep 1
done
echo "screenshots in $out"
