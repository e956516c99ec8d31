// bench.h (internal, not installed) — seeded random models with real shapes, and the FLOP count of a forward pass. (The
// process-level calls of the `bench` command — mallopt, getrusage — live in core/cli/cmd_bench.cpp.)
#pragma once

#include "deberta/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace deberta {

/// The configuration of a preset ("tiny", "xsmall", "base"; see `make_preset_model`), without
/// weights: cheap, for checks before the weights are made. Errors: unknown preset name.
ModelConfig preset_config(const std::string& preset);

/// A model with seeded random weights (normal-ish, σ ≈ 0.02; LayerNorm gains 1) and a real
/// model's configuration: "tiny" (the bundled model's shape), "xsmall" (deberta-v3-xsmall:
/// H 384, 12 layers, 6 heads, V 128100, position_buckets 256, max_relative_positions 512),
/// "base" (deberta-base v1: H 768, 12 layers, 12 heads, V 50265, k 512). Each has absolute
/// position embeddings and an MLM head so the EMD runs. Errors: unknown preset name.
Model make_preset_model(const std::string& preset, uint64_t seed = 0);

/// The input `deberta bench` and the web edition's forward bench (viewer/web/bench/forward_bench.cpp)
/// time: N token ids `rng() % vocab_size` from std::mt19937_64 seeded 7 (the same ids on every
/// platform), no attention mask, no segments. Errors: none.
Inputs bench_inputs(const ModelConfig& config, int64_t n);

/// The masked positions the bench decodes: 0, 7, 14, … < N (~15 %, MLM's share). Errors: none.
std::vector<int64_t> bench_positions(int64_t n);

/// Minimal floating-point operations (multiply and add counted separately) of one forward pass
/// over N tokens with the EMD and the MLM head at `masked` positions. The position projections are
/// not counted: a model projects its whole table once (`ModelWorkspace`), not per forward. Formula
/// in docs/performance.md.
double forward_flops(const Model& model, int64_t n, int64_t masked, bool with_emd);

}  // namespace deberta
