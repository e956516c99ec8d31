#!/bin/sh
# deberta-tiny-multilingual, version 2 (issue 54, item 7): the everyday corpus and the second
# vocabulary, warm-started from version 1 (every tensor copied; embedding rows matched by piece),
# trained on one thread in the background. Resumable: run it again after a stop and it continues
# from OUT/resume.pt with the bits of an uninterrupted run (train_tiny.py --resumable).
#   nice -n 19 sh notebooks_data/train/train_multilingual_v2.sh          (writes OUT, default
#                                                                  models/deberta-tiny-multilingual-v2-run)
# Every path is given on the command line, so a resumed run matches its checkpoint's arguments
# wherever the scripts sit. The run's weights then replace models/deberta-tiny-multilingual/
# (docs/multilingual-model.md, "Version 2").
set -e
cd "$(dirname "$0")/.."  # notebooks_data/
here=$(pwd)
out=${OUT:-$here/models/deberta-tiny-multilingual-v2-run}
[ -f corpus_multilingual/train_everyday.txt ] || /usr/bin/python3 prepare/prepare_everyday_corpus.py
[ -f vocab_multilingual/v2/spm.model ] || sh prepare/make_vocab_multilingual.sh
# Version 1, the warm start, as committed in 58d0136 (not kept in the tree: git has it).
v1=$here/models/deberta-tiny-multilingual-v1
if [ ! -f "$v1/model.safetensors" ]; then
  mkdir -p "$v1"
  for f in config.json model.safetensors spm.model; do
    git show "58d0136:notebooks_data/models/deberta-tiny-multilingual/$f" >"$v1/$f"
  done
fi
exec /usr/bin/python3 "$here/train/train_tiny.py" \
  --train "$here/corpus_multilingual/train_everyday.txt" \
  --heldout "$here/corpus_multilingual/heldout.txt" \
  --spm "$here/vocab_multilingual/v2/spm.model" \
  --init-from "$v1" \
  --out "$out" \
  --max-len 512 --lr 5e-4 --warmup 200 --max-steps 20000 --time-budget "${TIME_BUDGET:-4500}" \
  --eval-every 500 --eval-sentences 1000 --seed 54 --resumable
