#!/bin/sh
# deberta-tiny-multilingual, version 3 (issue 54, item 7, "trained longer"): version 2 trained on
# for a fixed number of steps (not a time budget, so the result does not depend on the machine's
# load), every tensor warm-started from the committed version 2, the same corpus, vocabulary and
# arguments otherwise; a lower peak learning rate decayed to zero over the run. One thread, in the
# background, resumable: run it again after a stop and it continues from OUT/resume.pt.
#   nice -n 19 sh notebooks_data/train/train_multilingual_v3.sh        (writes OUT, default
#                                                                 models/deberta-tiny-multilingual-v3-run)
# Its weights replace models/deberta-tiny-multilingual/ only if eval_multilingual.py says the held-out
# everyday sets improve (docs/multilingual-model.md, "Version 3").
set -e
cd "$(dirname "$0")/.."  # notebooks_data/
here=$(pwd)
out=${OUT:-$here/models/deberta-tiny-multilingual-v3-run}
v2=${V2:-$here/models/deberta-tiny-multilingual-v2-init}
if [ ! -f "$v2/model.safetensors" ]; then  # version 2 as committed, copied before anything replaces it
  mkdir -p "$v2"
  cp models/deberta-tiny-multilingual/config.json models/deberta-tiny-multilingual/model.safetensors \
     models/deberta-tiny-multilingual/spm.model "$v2/"
fi
OMP_NUM_THREADS=1 exec /usr/bin/python3 "$here/train/train_tiny.py" \
  --train "$here/corpus_multilingual/train_everyday.txt" \
  --heldout "$here/corpus_multilingual/heldout.txt" \
  --spm "$here/vocab_multilingual/v2/spm.model" \
  --init-from "$v2" \
  --out "$out" \
  --max-len 512 --lr 2e-4 --warmup 100 --max-steps "${STEPS:-3000}" --time-budget 0 \
  --eval-every 500 --eval-sentences 1000 --seed 55 --resumable
