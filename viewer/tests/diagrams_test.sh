#!/bin/sh
# diagrams_test.sh — the Pipeline and Token links tabs: each opens headless (--panel pipeline /
# --panel links), its screenshot is a real drawing (png check), and its figure export (SVG) holds
# the model's sizes and the tokens as <text>, vector shapes and no raster image.
#   diagrams_test.sh VIEWER CHECKER OUTDIR [VIEWER OPTIONS...]
set -u
viewer=$1 checker=$2 out=$3
shift 3
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xvfb-run >/dev/null 2>&1 || fail "xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)"
mkdir -p "$out"
rm -f "$out"/pipeline.png "$out"/pipeline.svg "$out"/links.png "$out"/links.svg "$out"/links.pdf
run() { xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --frames 6 "$@" 2>&1 || fail "deberta-viewer $*"; }
log=$(run --panel pipeline --screenshot "$out/pipeline.png" --figure-pipeline "$out/pipeline.svg" "$@")
echo "$log"
echo "$log" | grep -q "wrote $out/pipeline.svg" || fail "no pipeline figure"
log=$(run --panel links --select 1:2 --screenshot "$out/links.png" --figure-links "$out/links.svg" "$@")
echo "$log"
log=$(run --panel links --select 1:2 --figure-links "$out/links.pdf" "$@")
echo "$log" | grep -q "wrote $out/links.pdf" || fail "no links PDF"
for f in pipeline links; do
  grep -q '<image' "$out/$f.svg" && fail "$f.svg embeds a raster image"
  python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$out/$f.svg" || fail "$f.svg is not well-formed XML"
  "$checker" "$out/$f.png" --size 1280x800 --min-colors 60 || fail "$f.png"
done
# The pipeline names the model's sizes (deberta-tiny-512: 4 layers, 4 heads of d = 48, k = 32).
for want in "× L = 4" "4 heads × " "2k = 64" "I_0 = H + P" "softmax(Ã / √(3d))" "MLM head"; do
  grep -F "<text" "$out/pipeline.svg" | grep -qF "$want" || fail "pipeline.svg has no <text> with '$want'"
done
# The links: every token a <text> on both sides, lines for the links.
for want in "[CLS]" "[MASK]" "beginning" "query i" "key j"; do
  grep -F "<text" "$out/links.svg" | grep -qF "$want" || fail "links.svg has no <text> with '$want'"
done
lines=$(grep -c '<line' "$out/links.svg")
[ "$lines" -gt 30 ] || fail "links.svg has only $lines lines"
pdftotext "$out/links.pdf" - | grep -q "beginning" || fail "links.pdf has no token text"
echo "diagrams: pipeline and links drawn; links.svg has $lines lines"
