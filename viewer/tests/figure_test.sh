#!/bin/sh
# figure_test.sh — the "figures for slides" export: writes the selected map and the layers × heads
# grid as PDF and SVG (headless, cairo), renders the PDF to PNG with poppler's pdftoppm, checks the
# PNG with viewer_png_check (enough colours; the map rectangle, which the viewer reports, is a real
# map) and checks with pdftotext that the labels, the colour bar's units and the caption are text
# in the PDF.
#   figure_test.sh VIEWER CHECKER OUTDIR TOKEN [VIEWER OPTIONS...]
# TOKEN is a token name that must appear as an axis label. Fails (never skips) without xvfb-run,
# pdftoppm or pdftotext: CI installs xvfb, xauth, libgl1-mesa-dri and poppler-utils.
set -u
viewer=$1 checker=$2 out=$3 token=$4
shift 4
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in xvfb-run pdftoppm pdftotext; do
  command -v $tool >/dev/null 2>&1 || fail "$tool not found; install xvfb xauth libgl1-mesa-dri poppler-utils (scripts/setup.sh)"
done
mkdir -p "$out"
rm -f "$out"/map.pdf "$out"/map.svg "$out"/grid.pdf "$out"/map.png "$out"/grid.png "$out"/log.txt
run() { xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" "$@" >>"$out/log.txt" 2>&1 || { cat "$out/log.txt" >&2; fail "deberta-viewer $*"; }; }
run --figure "$out/map.pdf" --figure-grid "$out/grid.pdf" "$@"
run --figure "$out/map.svg" "$@"
cat "$out/log.txt"
for f in map.pdf grid.pdf; do
  head -c 5 "$out/$f" | grep -q '%PDF-' || fail "$f is not a PDF"
done
head -c 200 "$out/map.svg" | grep -q '<svg' || fail "map.svg is not an SVG"
# The SVG is for slides: vector cells (<rect>), every label a real <text> element, no raster image.
grep -q '<image' "$out/map.svg" && fail "map.svg embeds a raster <image>"
grep -q '<rect' "$out/map.svg" || fail "map.svg has no <rect> cells"
grep -qF ">1 $token</text>" "$out/map.svg" || grep -qF "$token</text>" "$out/map.svg" || fail "map.svg has no <text> label for '$token'"
for want in "key j" "query i" "attention" "Model:"; do
  grep -F "<text" "$out/map.svg" | grep -qF "$want" || fail "map.svg has no <text> with '$want'"
done
cells=$(grep -c '<rect' "$out/map.svg")
echo "map.svg: $cells <rect> elements, $(grep -c '<text' "$out/map.svg") <text> elements, no <image>"
if command -v python3 >/dev/null 2>&1; then
  python3 -c "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])" "$out/map.svg" || fail "map.svg is not well-formed XML"
fi

# Text in the PDF: a token label, the axis titles, the colour bar's units, the caption.
pdftotext "$out/map.pdf" "$out/map.txt" || fail "pdftotext map.pdf"
for want in "$token" "key j" "query i" "attention weight" "Model:" "Ablation:" "Attention weights, layer 1 (of 0–3), head 1 (of 0–3)"; do
  grep -qF "$want" "$out/map.txt" || fail "map.pdf has no text '$want'"
done
pdftotext "$out/grid.pdf" "$out/grid.txt" || fail "pdftotext grid.pdf"
grep -qF "layer 0" "$out/grid.txt" || fail "grid.pdf has no 'layer 0' row title"

# Render at 144 dpi (2 px per pt) and check the map rectangle the viewer printed ("map at X,Y S pt").
pdftoppm -png -r 144 -singlefile "$out/map.pdf" "$out/map" || fail "pdftoppm map.pdf"
pdftoppm -png -r 72 -singlefile "$out/grid.pdf" "$out/grid" || fail "pdftoppm grid.pdf"
rect=$(sed -n 's/.*map\.pdf.*map at \([0-9]*\),\([0-9]*\) size \([0-9]*\) pt.*/\1 \2 \3/p' "$out/log.txt" | head -n 1)
[ -n "$rect" ] || fail "the viewer did not report where the map is"
set -- $rect
"$checker" "$out/map.png" --min-colors 150 --region "$(( $1 * 2 + 4 )),$(( $2 * 2 + 4 )),$(( $3 * 2 - 8 )),$(( $3 * 2 - 8 ))" \
    --min-map-colors 40 || fail "map.png"
exec "$checker" "$out/grid.png" --min-colors 150
