// analysis.h — what the model predicts at masked positions, and what an ablation changes.
//
// Shared by `deberta predict` / `ablate` / `eval-mlm` and the viewer's predictions panel.
#pragma once

#include "deberta/model.h"

#include <string>
#include <vector>

namespace deberta {

/// One candidate token at a masked position.
struct TokenScore {
  int64_t id = 0;
  double probability = 0;  ///< softmax over the vocabulary
  double logit = 0;
};

/// The model's distribution at one masked position.
struct MaskPrediction {
  int64_t position = 0;          ///< token index in the sequence
  std::vector<TokenScore> top;   ///< top-k, most probable first
  Vector log_probs;              ///< `[V]` log-softmax of the logits
};

// find_mask_positions and check_mask_positions: model.h (input helpers, below the io layer's
// input resolver, inputs.h).

/// Top-k tokens for each row of `logits [M, V]` (row m belongs to `positions[m]`), rows split
/// between the threads. Ties broken by the lower token id.
std::vector<MaskPrediction> top_k_predictions(const Matrix& logits, const std::vector<int64_t>& positions, int64_t k);

/// Predictions at `positions` from decoder states `hidden [N, H]` already computed (a trace's
/// `decoder_output()`): the MLM head, then the top k. The one place predictions are made:
/// `predict_masked`, the ablation runs and the viewer's worker all call it. Errors: a position
/// outside [0, N) or given twice; those of `mlm_logits` (no LM head).
std::vector<MaskPrediction> predict_from_states(const Model& model, const Matrix& hidden,
                                                const std::vector<int64_t>& positions, int64_t k);

/// Runs encoder + decoder under `ablation` and returns the predictions at `positions`.
/// Errors: those of `forward` and `mlm_logits`.
std::vector<MaskPrediction> predict_masked(const Model& model, const Inputs& inputs, const std::vector<int64_t>& positions,
                                           const Ablation& ablation, int64_t k);

/// How an ablation changes the predictions relative to a baseline.
struct AblationEffect {
  std::string name;      ///< e.g. "-c2p", "mask 3:1"
  Ablation ablation;
  double mean_kl = 0;    ///< mean over masked positions of KL(baseline ‖ ablated), nats
  double max_kl = 0;
  int64_t top1_changes = 0;  ///< positions whose most probable token changed
  int64_t positions = 0;
  std::string error;     ///< non-empty when the ablation cannot run on this model (why)
};

/// KL(baseline[m] ‖ ablated[m]) (`kl_divergence`, nats) for each of the first min(sizes)
/// positions, split between the threads. Errors: those of `kl_divergence`.
std::vector<double> kl_divergences(const std::vector<MaskPrediction>& baseline,
                                   const std::vector<MaskPrediction>& ablated);

/// Compares predictions made under `ablated` with `baseline` (same positions, same order); `kl`:
/// their `kl_divergences` when the caller has them already (the viewer shows them too).
/// Errors: those of `kl_divergences`; `kl` of another length.
AblationEffect compare_predictions(const std::vector<MaskPrediction>& baseline,
                                   const std::vector<MaskPrediction>& ablated);
AblationEffect compare_predictions(const std::vector<MaskPrediction>& baseline,
                                   const std::vector<MaskPrediction>& ablated, const std::vector<double>& kl);

/// The inference-time ablations — −c2p, −p2c, ±p2p, −EMD, the other p2c index, scale √(3d) — that
/// apply to this model, then every single head masked. (The paper's Table 4 trains each variant
/// separately: docs/table4.md compares those trained models.)
std::vector<std::pair<std::string, Ablation>> standard_ablations(const Model& model, bool heads = true);

/// Runs every ablation of `ablations` and compares it with the baseline; results sorted by
/// mean KL, largest first. Ablations the model cannot run are kept with `error` set.
std::vector<AblationEffect> run_ablations(const Model& model, const Inputs& inputs, const std::vector<int64_t>& positions,
                                          const std::vector<std::pair<std::string, Ablation>>& ablations);

}  // namespace deberta
