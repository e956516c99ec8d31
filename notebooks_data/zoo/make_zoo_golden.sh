#!/usr/bin/env bash
# Reference tensors of every trained-ablation zoo model (docs/table4.md), for the C++ reproduction
# test (tests/test_bundled.cpp): one held-out sentence (N = 9) and the same with 3 padding tokens,
# every intermediate in float64 from the PyTorch twin (deberta_torch.py), which runs each model as
# its config.json says it was trained (p2p, the paper's p2c index, no EMD, absolute positions).
#   bash notebooks_data/zoo/make_zoo_golden.sh [MODEL_DIR ...]    default: every model of models/zoo
set -euo pipefail
cd "$(dirname "$0")/.."  # notebooks_data/
models=("$@")
[[ ${#models[@]} -eq 0 ]] && models=(models/zoo/*/)
for m in "${models[@]}"; do
  name=$(basename "$m")
  OMP_NUM_THREADS=1 nice -n 5 /usr/bin/python3 references/make_tiny_golden.py --model "$m" --out "models/zoo-golden/$name" --bins 1 |
    sed "s/^/$name: /"
done
