#!/bin/sh
# zoom_test.sh — a long input (about 500 tokens) in Head detail, zoomed with --zoom so that cells
# carry their numbers and the axes their token names; the screenshot's map region must be a map.
#   zoom_test.sh VIEWER CHECKER OUTDIR MODEL_DIR
# MODEL_DIR is the zoo's model without the EMD (no absolute-position table, so nothing in it is
# tied to 128 positions): the test links its files into OUTDIR/long512 with max_position_embeddings
# raised to 512, the input limit the viewer checks. The bundled model stops at 128 tokens.
set -u
viewer=$1 checker=$2 out=$3 model=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v xvfb-run >/dev/null 2>&1 || fail "xvfb-run not found; install xvfb xauth libgl1-mesa-dri (scripts/setup.sh)"
[ -f "$model/config.json" ] || fail "$model/config.json not found"
model=$(cd "$model" && pwd)  # absolute: the links below must work from OUTDIR
mkdir -p "$out/long512"
for f in "$model"/*; do
  [ "$(basename "$f")" = config.json ] || ln -sf "$f" "$out/long512/$(basename "$f")"
done
sed 's/"max_position_embeddings": *128/"max_position_embeddings": 512/' "$model/config.json" >"$out/long512/config.json"
grep -q '"max_position_embeddings": 512' "$out/long512/config.json" || fail "could not raise max_position_embeddings"
v="In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters. And God said, Let there be light: and there was light. And God saw the light, that it was good: and God divided the light from the darkness. And God called the light Day, and the darkness he called Night. And the evening and the morning were the first day. And God said, Let there be a firmament in the midst of the waters."
text="$v $v $v $v And God made the firmament, and divided the [MASK]."
rm -f "$out/zoom512.png"
xvfb-run -a -s "-screen 0 1600x1000x24" "$viewer" --model "$out/long512" --text "$text" --panel head --select 1:1:40:36 \
    --zoom 0.078,0.078,100 --width 1600 --height 1000 --screenshot "$out/zoom512.png" --frames 4 --timeout 170 >"$out/zoom.log" 2>&1
rc=$?
cat "$out/zoom.log"
[ $rc -eq 0 ] || fail "deberta-viewer exited with $rc"
grep -q "computed 5[01][0-9] tokens" "$out/zoom.log" || fail "the input is not about 512 tokens long"
exec "$checker" "$out/zoom512.png" --size 1600x1000 --min-colors 300 --region 560,330,900,300 --min-map-colors 40
