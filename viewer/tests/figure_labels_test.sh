#!/bin/sh
# figure_labels_test.sh — issue 42's figures for slides and issue 44's class 9, headless:
#   * a model without a tokenizer and no input: --figure-pipeline and --figure-links say what is
#     missing (exit 1, no file), never crash (the pipeline used to segfault);
#   * on a 3-term, a 2-term and a c2c-only model, the figures name the model's own scale
#     (√(3d), √(2d), √d; never √(1d), never the paper's √(3d) on a model whose factor is not 3),
#     titles are words with layers and heads counted as the viewer counts them (from 0, said so);
#   * no seam: the SVG colour bar is one rect filled with one linearGradient, and the map's cells
#     meet exactly (each rect's x + width is the next rect's x, as written, in decimal).
#   figure_labels_test.sh VIEWER OUTDIR SOURCE_DIR
# Fails (never skips) without xvfb-run or python3.
set -u
viewer=$1 out=$2 src=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xvfb-run >/dev/null 2>&1 || fail "xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)"
command -v python3 >/dev/null 2>&1 || fail "python3 not found"
mkdir -p "$out"
rm -f "$out"/*.svg "$out"/log.txt
run() { xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" "$@"; }

# --- issue 44, class 9: no tokenizer, no ids.
c2p_only=$src/notebooks_data/golden/v1_c2p_only
for kind in pipeline links; do
  log=$(run --model "$c2p_only" --figure-$kind "$out/none_$kind.svg" 2>&1)
  code=$?
  echo "$log"
  [ $code -eq 1 ] || fail "--figure-$kind without input: exit $code (want 1: a message, not a crash)"
  echo "$log" | grep -qF "figure: $out/none_$kind.svg: nothing to draw: this model has no tokenizer and no token ids were given" ||
    fail "--figure-$kind without input does not say what is missing"
  [ ! -e "$out/none_$kind.svg" ] || fail "--figure-$kind without input wrote a file"
done

# --- the model's own scale in every label.
ids=4,9,14,3,8,21,5,6,11,17
check_model() {  # NAME EXPECT_ROOT "FORBIDDEN;FORBIDDEN;…" VIEWER ARGS...
  name=$1 root=$2 forbid=$3
  shift 3
  log=$(run "$@" --figure "$out/${name}_logits.svg" --figure-quantity logits 2>&1) || { echo "$log"; fail "$name: logits figure"; }
  log=$(run "$@" --figure "$out/${name}_probs.svg" --figure-pipeline "$out/${name}_pipeline.svg" 2>&1) ||
    { echo "$log"; fail "$name: weights figure / pipeline"; }
  for f in logits probs pipeline; do
    grep -qF "$root" "$out/${name}_$f.svg" || fail "$name: ${name}_$f.svg does not name the scale $root"
    grep -qF "√(1d)" "$out/${name}_$f.svg" && fail "$name: ${name}_$f.svg writes √(1d)"
    old_ifs=$IFS
    IFS=';'
    for bad in $forbid; do
      grep -qF "$bad" "$out/${name}_$f.svg" && fail "$name: ${name}_$f.svg has '$bad'"
    done
    IFS=$old_ifs
  done
  grep -qF "score Ã/$root" "$out/${name}_logits.svg" || fail "$name: the scores' units are not 'score Ã/$root'"
  grep -qF "softmax(Ã/$root)" "$out/${name}_probs.svg" || fail "$name: the weights' units are not 'softmax(Ã/$root)'"
  grep -qF "counted from 0, as the viewer counts them" "$out/${name}_probs.svg" || fail "$name: the caption does not say how layers are counted"
  echo "$name: figures name $root"
}
check_model three "√(3d)" "√(2d)" --model "$src/notebooks_data/golden/v1_basic" --ids $ids --select 1:2
check_model two "√(2d)" "√(3d)" --model "$c2p_only" --ids $ids --select 1:3
check_model c2c "√d" "√(3d);√(2d);eq. 4" --model "$src/notebooks_data/models/zoo/deberta-tiny-c2c-abs" \
  --text "And God said, Let there be light: and there was [MASK]." --select 1:2
grep -qF "§3.1" "$out/c2c_pipeline.svg" || fail "the c2c-only pipeline does not say it is §3.1's standard attention"
grep -qF "δ" "$out/c2c_pipeline.svg" && fail "the pipeline of a model without relative attention draws δ"

# Titles in words, counted as the viewer counts (from 0).
grep -qF "<title>Attention weights, layer 1 (of 0–1), head 2 (of 0–2)</title>" "$out/three_probs.svg" ||
  fail "three_probs.svg title is not 'Attention weights, layer 1 (of 0–1), head 2 (of 0–2)'"
grep -qF "<title>Attention scores, layer 1 (of 0–3), head 2 (of 0–3)</title>" "$out/c2c_logits.svg" ||
  fail "c2c_logits.svg title is not 'Attention scores, layer 1 (of 0–3), head 2 (of 0–3)'"

# --- no seam: one gradient for the colour bar; map cells that meet exactly.
python3 - "$out/three_probs.svg" "$out/c2c_logits.svg" <<'EOF' || fail "seams in the SVG"
import sys, re
from decimal import Decimal
for path in sys.argv[1:]:
    svg = open(path, encoding="utf-8").read()
    assert svg.count("<linearGradient") == 1, f"{path}: the colour bar is not one linearGradient"
    assert re.search(r'<rect [^>]*fill="url\(#colorbar\)"', svg), f"{path}: no rect filled with the colour bar's gradient"
    cells = svg.split('<g shape-rendering="crispEdges">', 1)[1].split("</g>", 1)[0]
    rows = {}
    for x, y, w, h in re.findall(r'<rect x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"', cells):
        rows.setdefault(Decimal(y), []).append((Decimal(x), Decimal(w), Decimal(h)))
    ys = sorted(rows)
    for y in ys:
        r = sorted(rows[y])
        for (x0, w0, _), (x1, _, _) in zip(r, r[1:]):
            assert x0 + w0 == x1, f"{path}: row y={y}: a cell ends at {x0 + w0}, the next starts at {x1}"
    for y0, y1 in zip(ys, ys[1:]):
        h = rows[y0][0][2]
        assert all(c[2] == h for c in rows[y0]), f"{path}: row y={y0} has cells of different heights"
        assert y0 + h == y1, f"{path}: row y={y0} ends at {y0 + h}, the next row starts at {y1}"
    print(f"{path}: {sum(len(v) for v in rows.values())} cell rects in {len(ys)} rows meet exactly; one gradient colour bar")
EOF
echo "figure labels: the model's own scale, titles in words, no seam; no crash without input"
