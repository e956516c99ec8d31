#!/bin/sh
# export_all.sh — the viewer and the CLI give the same numbers on every model the project ships
# or tests against: for each golden case, each golden_extra case and each bundled / zoo model,
# deberta-viewer --export writes the trace of one input; `deberta dump` runs the exported inputs
# (same ablation) and `deberta diff` must find every tensor equal within 1e-12 — encoder, emd.*,
# mlm.* and task heads (rtd.*, cls.*, tokcls.*) alike.
#   export_all.sh VIEWER DEBERTA OUTDIR SOURCE_DIR      (under xvfb-run, or it starts one a model)
# Inputs: models with a tokenizer get a sentence with [MASK] (and a pair for classifiers); the
# others the unpadded input_ids of their golden inputs (python3 + numpy read the safetensors).
set -u
viewer=$1 deberta=$2 out=$3 src=$4
# One X server for every model when the caller gives a display (ctest runs this under xvfb-run),
# else one each.
if [ -z "${DISPLAY:-}" ]; then
  command -v xvfb-run >/dev/null 2>&1 || { echo "FAIL: xvfb-run not found; install xvfb xauth libgl1-mesa-dri" >&2; exit 1; }
fi
run_viewer() {
  if [ -n "${DISPLAY:-}" ]; then "$viewer" "$@"; else xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" "$@"; fi
}
rm -rf "$out"
mkdir -p "$out"
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
ids_of() {  # ids_of FILE: comma-separated unpadded input_ids, then a space, then the mask id (or -1)
  "$py" - "$1" <<'PY'
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
def get(name):
    h = head[name]
    a, b = h["data_offsets"]
    dt = {"I64": np.int64, "I32": np.int32}[h["dtype"]]
    return np.frombuffer(raw[8 + n + a:8 + n + b], dtype=dt).reshape(h["shape"])
ids = get("input_ids").reshape(-1)
if "attention_mask" in head:
    ids = ids[get("attention_mask").reshape(-1) != 0]
mask = -1
if "mlm.masked_positions" in head:
    mask = int(get("input_ids").reshape(-1)[int(get("mlm.masked_positions").reshape(-1)[0])])
print(",".join(str(int(i)) for i in ids), mask)
PY
}
fail=0 count=0
for model in "$src"/notebooks_data/golden/*/ "$src"/notebooks_data/golden_extra/*/ "$src"/notebooks_data/models/*/ \
             "$src"/notebooks_data/models/zoo/*/; do
  model=${model%/}
  [ -f "$model/config.json" ] || continue
  [ -f "$model/model.safetensors" ] || [ -f "$model/pytorch_model.bin" ] || continue  # e.g. *-golden: tensors, no model
  name=$(basename "$model")
  dir=$out/$name
  set -- --model "$model"
  if [ -f "$model/spm.model" ] || [ -f "$model/tokenizer.json" ] || [ -f "$model/vocab.json" ]; then
    set -- "$@" --text "In the beginning God created the heaven and the [MASK]." --pair "and the earth was without form"
  else
    inputs=$model/golden.safetensors
    [ -f "$inputs" ] || inputs=$model/inputs.safetensors
    [ -f "$inputs" ] || { echo "skip $name: no tokenizer and no golden inputs"; continue; }
    read -r ids mask <<EOT
$(ids_of "$inputs")
EOT
    set -- "$@" --ids "$ids" --mask-id "$mask"
  fi
  ablate=""
  [ -f "$model/run.json" ] && grep -q microsoft "$model/run.json" && ablate="--relative-positions microsoft"
  [ -n "$ablate" ] && set -- "$@" --ablate "$ablate"
  if ! run_viewer --screenshot "$dir/window.png" --export "$dir" "$@" >"$dir.log" 2>&1; then
    echo "FAIL $name: deberta-viewer --export failed: $(tail -1 "$dir.log")" >&2; fail=1; continue
  fi
  # shellcheck disable=SC2086
  if ! "$deberta" dump --model "$model" --inputs "$dir/trace.safetensors" --out "$dir/dump.safetensors" $ablate >"$dir.dump.log" 2>&1; then
    echo "FAIL $name: deberta dump on the exported inputs failed: $(tail -1 "$dir.dump.log")" >&2; fail=1; continue
  fi
  if ! "$deberta" diff "$dir/trace.safetensors" "$dir/dump.safetensors" --tol 1e-12 >"$dir.diff.txt" 2>&1; then
    cat "$dir.diff.txt" >&2; echo "FAIL $name: the viewer's export differs from deberta dump" >&2; fail=1; continue
  fi
  count=$((count + 1))
  echo "ok   $name: $(tail -1 "$dir.diff.txt")"
done
[ $count -ge 30 ] || { echo "FAIL: only $count models compared (expected every golden, golden_extra and shipped model)" >&2; fail=1; }
[ $fail -eq 0 ] && echo "PASS: viewer export = deberta dump on $count models"
exit $fail
