#!/usr/bin/env bash
# Cross-check the C++ core against independently computed reference tensors.
#   notebooks_data/crosscheck/run.sh            (build, generate, dump, compare)
# Cases are written to notebooks_data/crosscheck/cases/ (regenerated each run).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="$ROOT/build-xcheck"
PY=/usr/bin/python3
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

if [ ! -x "$BUILD/bin/deberta" ] || [ "${REBUILD:-1}" = 1 ]; then
  nice -n 10 cmake -S "$ROOT" -B "$BUILD" -DDEBERTA_BUILD_VIEWER=OFF -DDEBERTA_BUILD_TESTS=OFF >/dev/null
  nice -n 10 cmake --build "$BUILD" -j1 --target deberta >/dev/null
fi

echo "== self-test of the Python reference against the 5 golden cases"
nice -n 10 $PY "$HERE/make_cases.py" selftest "$ROOT/notebooks_data/golden" || true

CASES="$HERE/cases"
rm -rf "$CASES"
echo "== generating cases"
nice -n 10 $PY "$HERE/make_cases.py" gen "$CASES"

echo "== running the C++ dump"
for d in "$CASES"/*/; do
  n="$(basename "$d")"
  extra=()
  if $PY -c "import json,sys; h=open(sys.argv[1],'rb').read(); import struct; l=struct.unpack('<Q',h[:8])[0]; sys.exit(0 if 'mlm.masked_positions' in json.loads(h[8:8+l]) else 1)" "$d/inputs.safetensors"; then
    extra=(--full-logits)
  fi
  if [ -f "$d/run.json" ]; then  # cases made with microsoft/DeBERTa's relative positions
    extra+=(--relative-positions "$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['relative_positions'])" "$d/run.json")")
  fi
  if ! nice -n 10 "$BUILD/bin/deberta" dump --model "$d" --inputs "$d/inputs.safetensors" --out "$d/cpp.safetensors" \
       "${extra[@]}" >"$d/cpp.stdout" 2>"$d/cpp.stderr"; then
    echo "  $n: dump FAILED: $(tail -1 "$d/cpp.stderr")"
    rm -f "$d/cpp.safetensors"
  fi
done

echo "== comparing (tolerance 1e-10)"
nice -n 10 $PY "$HERE/make_cases.py" compare "$CASES"
