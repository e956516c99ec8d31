#!/usr/bin/env bash
# Trains the mini-Table-4 zoo (docs/table4.md): every variant with one recipe, two runs at a time
# on one thread each. Never run by CI.
#   bash notebooks_data/zoo/train_zoo.sh [RUN ...]     RUN = variant@seed, e.g. baseline@1234 no-c2p@1234
# Each run writes notebooks_data/models/zoo/deberta-tiny-<variant>/ and its log; seed replicas
# (seed != 1234) go to models/zoo-seeds/deberta-tiny-<variant>-s<seed>/ (not shipped: size budget).
set -euo pipefail
cd "$(dirname "$0")/.."  # notebooks_data/
STEPS=${ZOO_STEPS:-1000}
JOBS=${ZOO_JOBS:-2}
runs=("$@")
if [[ ${#runs[@]} -eq 0 ]]; then
  runs=(baseline@1234 no-c2p@1234 no-p2c@1234 no-emd@1234 c2c-abs@1234 p2p@1234 p2c-paper@1234
        baseline@4321 no-c2p@4321 no-p2c@4321)
fi
train_one() {
  local variant=${1%@*} seed=${1#*@}
  local name="deberta-tiny-$variant"
  [[ "$seed" != 1234 ]] && name+="-s$seed"
  local out="models/zoo/$name"
  [[ "$seed" != 1234 ]] && out="models/zoo-seeds/$name"
  mkdir -p "$out"
  # The zoo recipe: the bundled model's architecture, corpus, vocabulary and optimizer, a fixed
  # number of steps and no time budget (step-for-step reproducible on one thread).
  nice -n 10 /usr/bin/python3 train/train_tiny.py --variant "$variant" --seed "$seed" --out "$out" \
    --max-steps "$STEPS" --warmup 200 --time-budget 0 --eval-every 250 --eval-sentences 1000 \
    --weights-dtype f16 > "$out/train.log" 2>&1 && echo "finished $name" || echo "FAILED $name"
}
i=0
for r in "${runs[@]}"; do
  train_one "$r" &
  i=$((i + 1))
  if (( i % JOBS == 0 )); then wait -n || true; i=$((i - 1)); fi
done
wait
