#!/bin/sh
# export_all.sh — the viewer and the CLI give the same numbers on every model the project ships
# or tests against: for each golden case, each golden_extra case and each bundled / zoo model,
# deberta-viewer writes the trace of one input; `deberta dump` runs the exported inputs (same
# ablation) and `deberta diff` must find every tensor equal within 1e-12 — encoder, emd.*, mlm.*
# and task heads (rtd.*, cls.*, tokcls.*) alike.
#   export_all.sh VIEWER DEBERTA OUTDIR SOURCE_DIR      (under xvfb-run, or it starts one)
# One viewer process exports every model (--export-list, issue 56: it launched the viewer once a
# model); one python3 lists the jobs. Inputs: models with a tokenizer get a sentence with [MASK]
# (and a pair for classifiers); the others the unpadded input_ids of their golden inputs.
set -u
viewer=$1 deberta=$2 out=$3 src=$4
if [ -z "${DISPLAY:-}" ]; then
  command -v xvfb-run >/dev/null 2>&1 || { echo "FAIL: xvfb-run not found; install xvfb xauth libgl1-mesa-dri" >&2; exit 1; }
fi
rm -rf "$out"
mkdir -p "$out"
py=${PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=python3
# jobs.tsv: the viewer's --export-list (KEY=VALUE, tab-separated); names.tsv: NAME, MODEL, ABLATE
# a line, for the dumps.
if ! "$py" - "$src" "$out" <<'PY'
import glob, json, os, struct, sys
import numpy as np
src, out = sys.argv[1:]
def ids_of(path):  # the unpadded input_ids and the mask id (or -1) of a golden inputs file
    raw = open(path, "rb").read()
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
    return ",".join(str(int(i)) for i in ids), mask
jobs, names = [], []
for pattern in ("golden/*/", "golden_extra/*/", "models/*/", "models/zoo/*/"):
    for model in sorted(glob.glob(os.path.join(src, "notebooks_data", pattern))):
        model = model.rstrip("/")
        has = lambda f: os.path.isfile(os.path.join(model, f))
        if not has("config.json") or not (has("model.safetensors") or has("pytorch_model.bin")):
            continue  # e.g. *-golden: tensors, no model
        name = os.path.basename(model)
        d = os.path.join(out, name)
        job = ["model=" + model, "export=" + d]
        if has("spm.model") or has("tokenizer.json") or has("vocab.json"):
            job += ["text=In the beginning God created the heaven and the [MASK].", "pair=and the earth was without form"]
        else:
            inputs = os.path.join(model, "golden.safetensors")
            if not os.path.isfile(inputs):
                inputs = os.path.join(model, "inputs.safetensors")
            if not os.path.isfile(inputs):
                print("skip %s: no tokenizer and no golden inputs" % name)
                continue
            ids, mask = ids_of(inputs)
            job += ["ids=" + ids, "mask_id=%d" % mask]
        ablate = ""
        if has("run.json") and "microsoft" in open(os.path.join(model, "run.json")).read():
            ablate = "--relative-positions microsoft"
            job.append("ablate=" + ablate)
        jobs.append("\t".join(job))
        names.append("\t".join([name, model, ablate]))
open(os.path.join(out, "jobs.tsv"), "w").write("".join(j + "\n" for j in jobs))
open(os.path.join(out, "names.tsv"), "w").write("".join(n + "\n" for n in names))
PY
then
  echo "FAIL: could not list the models and their inputs" >&2; exit 1
fi
# The one viewer process: every model's window.png, map exports and trace.safetensors.
if [ -n "${DISPLAY:-}" ]; then
  "$viewer" --export-list "$out/jobs.tsv" >"$out/viewer.log" 2>&1
else
  xvfb-run -a -s "-screen 0 1280x800x24" "$viewer" --export-list "$out/jobs.tsv" >"$out/viewer.log" 2>&1
fi
viewer_rc=$?
fail=0 count=0
tab=$(printf '\t')
while IFS="$tab" read -r name model ablate; do
  dir=$out/$name
  if ! grep -qF "export-list: ok $dir: " "$out/viewer.log"; then
    why=$(grep -F "export-list: FAIL $dir: " "$out/viewer.log" | tail -1)
    echo "FAIL $name: deberta-viewer's export failed: ${why:-no line for it (exit $viewer_rc): $(tail -1 "$out/viewer.log")}" >&2
    fail=1; continue
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
done <"$out/names.tsv"
[ "$viewer_rc" -eq 0 ] || { echo "FAIL: deberta-viewer --export-list exited $viewer_rc: $(tail -1 "$out/viewer.log")" >&2; fail=1; }
[ $count -ge 30 ] || { echo "FAIL: only $count models compared (expected every golden, golden_extra and shipped model)" >&2; fail=1; }
[ $fail -eq 0 ] && echo "PASS: viewer export = deberta dump on $count models"
exit $fail
