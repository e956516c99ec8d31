// compare.h — two models on the same input: per-head attention differences and prediction
// differences. This is how a model trained *without* a component (the trained-ablation zoo,
// docs/table4.md) is put beside the model trained *with* it, in `deberta compare` and the viewer.
#pragma once

#include "deberta/analysis.h"
#include "deberta/model.h"

#include <string>
#include <vector>

namespace deberta {

/// Attention mass by relative offset o = i − j (query i, key j): a head-free summary of where a
/// model attends, which can be compared between separately trained models (their heads are not
/// aligned, so per-head differences mix "attends differently" with "the same heads in another
/// order"). For layer l:
///   mass_l(o) = 1 / (H · N_v) · Σ_h Σ_{valid i} Σ_{valid j : i − j = o} P_{l,h}(i, j)
/// with P the attention probabilities (softmax of eq. 4's scores) and N_v the unmasked tokens: the
/// average, over heads and valid queries, of the probability a query puts on the key o positions
/// to its left (o > 0) or right (o < 0). Each layer's masses sum to 1; `pooled` is their mean.
struct OffsetProfile {
  int64_t max_offset = 0;                    ///< N − 1: offsets run −max_offset … +max_offset
  std::vector<std::vector<double>> per_layer;  ///< `[L][2·max_offset + 1]`, index o + max_offset
  std::vector<double> pooled;                ///< `[2·max_offset + 1]`, the mean over layers
  /// Mass at offset o of `layer` (−1: pooled); 0 outside the range.
  double at(int64_t o, int64_t layer = -1) const;
};

/// The offset profile of a finished trace (`TraceLevel::Probs` or `Full`).
/// Errors: a trace without attention probabilities (`TraceLevel::None`).
OffsetProfile attention_mass_by_offset(const ForwardTrace& trace);

/// The comparison of model A with model B on one input.
struct ModelComparison {
  int64_t layers = 0, heads = 0;  ///< the layers × heads both models have (the smaller of each)
  /// `[layers][heads]`: mean over the valid (query, key) pairs of |P_A(i, j) − P_B(i, j)|, where P
  /// is the attention probability map of that layer and head (eq. 4 softmax). Unitless, in [0, 2/N].
  std::vector<std::vector<double>> mean_abs_prob_diff;
  std::vector<MaskPrediction> predictions_a, predictions_b;  ///< at `positions`, top-k each
  std::vector<double> kl;            ///< per position KL(A ‖ B) in nats (raw value: ≥ −1e-12 up to rounding)
  double mean_kl = 0;                ///< mean of `kl`
  int64_t top1_agree = 0;            ///< positions where both rank the same token first
  std::string note;                  ///< e.g. "model B has 6 layers, A 4: the first 4 are compared"
  /// Attention mass by relative offset of each model (all of its layers): the head-free measure.
  OffsetProfile offsets_a, offsets_b;
};

/// Runs both models (as trained: no ablation) on `inputs` and compares them.
/// `positions` are the masked positions to predict at (may be empty: attention only).
/// Shapes: each model's probabilities are `[N, N]` per head; predictions `[V]` log-probabilities.
/// Errors: the input does not fit either model (ids ≥ vocab_size, N > max_position_embeddings);
/// predictions asked for but a model has no LM head; the two vocabularies differ in size (KL needs
/// one vocabulary).
ModelComparison compare_models(const Model& a, const Model& b, const Inputs& inputs,
                               const std::vector<int64_t>& positions, int64_t top_k = 5);

/// The same from two finished traces with `TraceLevel::Probs` or `Full` (the viewer keeps them):
/// each model's MLM head reads its own trace's `decoder_output()` (the EMD's last pass, or the
/// last encoder layer). Errors: the traces were run on different inputs; predictions asked for but
/// a model has no LM head; the two vocabularies differ in size.
ModelComparison compare_traces(const Model& a, const ForwardTrace& trace_a, const Model& b,
                               const ForwardTrace& trace_b, const std::vector<int64_t>& positions,
                               int64_t top_k = 5);

}  // namespace deberta
