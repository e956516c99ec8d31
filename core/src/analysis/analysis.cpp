#include "deberta/analysis.h"

#include "backend/ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace deberta {

std::vector<MaskPrediction> top_k_predictions(const Matrix& logits, const std::vector<int64_t>& positions, int64_t k) {
  // Each row's log-softmax straight into its prediction (no [M, V] matrix of them first: 158 MB
  // at 2 × 77 rows of 128,100), the same entries as `log_softmax_rows`.
  std::vector<MaskPrediction> out(static_cast<size_t>(logits.rows()));
  ops::for_rows(logits.rows(), logits.cols(), [&](int64_t first, int64_t last) {
        std::vector<int64_t> order(logits.cols());
        for (int64_t m = first; m < last; ++m) {
          MaskPrediction& p = out[static_cast<size_t>(m)];
          p.position = positions[m];
          p.log_probs = (logits.row(m).array() - log_sum_exp_row(logits, m)).transpose();
          std::iota(order.begin(), order.end(), 0);
          const int64_t kk = std::min<int64_t>(std::max<int64_t>(k, 1), logits.cols());
          std::partial_sort(order.begin(), order.begin() + kk, order.end(), [&](int64_t a, int64_t b) {
            return logits(m, a) > logits(m, b) || (logits(m, a) == logits(m, b) && a < b);
          });
          for (int64_t t = 0; t < kk; ++t)
            p.top.push_back({order[t], std::exp(p.log_probs[order[t]]), logits(m, order[t])});
        }
      });
  return out;
}

std::vector<MaskPrediction> predict_from_states(const Model& model, const Matrix& hidden,
                                                const std::vector<int64_t>& positions, int64_t k) {
  check_mask_positions(positions, hidden.rows());
  return top_k_predictions(mlm_logits(model, hidden, positions), positions, k);
}

std::vector<MaskPrediction> predict_masked(const Model& model, const Inputs& inputs, const std::vector<int64_t>& positions,
                                           const Ablation& ablation, int64_t k) {
  const ForwardTrace trace = forward(model, inputs, ablation, TraceLevel::None, true);
  return predict_from_states(model, trace.decoder_output(), positions, k);
}


std::vector<double> kl_divergences(const std::vector<MaskPrediction>& baseline, const std::vector<MaskPrediction>& ablated) {
  std::vector<double> kl(std::min(baseline.size(), ablated.size()));
  const int64_t vocab = baseline.empty() ? 1 : baseline[0].log_probs.size();
  ops::for_rows(static_cast<int64_t>(kl.size()), vocab, [&](int64_t first, int64_t last) {
        for (int64_t m = first; m < last; ++m) kl[m] = kl_divergence(baseline[m].log_probs, ablated[m].log_probs);
      });
  return kl;
}

AblationEffect compare_predictions(const std::vector<MaskPrediction>& baseline, const std::vector<MaskPrediction>& ablated) {
  return compare_predictions(baseline, ablated, kl_divergences(baseline, ablated));
}

AblationEffect compare_predictions(const std::vector<MaskPrediction>& baseline, const std::vector<MaskPrediction>& ablated,
                                   const std::vector<double>& kl_of) {
  if (kl_of.size() != std::min(baseline.size(), ablated.size()))
    throw Error("compare_predictions: " + std::to_string(kl_of.size()) + " KL values for " +
                std::to_string(std::min(baseline.size(), ablated.size())) + " positions");
  AblationEffect e;
  e.positions = static_cast<int64_t>(baseline.size());
  for (size_t m = 0; m < baseline.size() && m < ablated.size(); ++m) {
    const double kl = kl_of[m];
    e.mean_kl += kl;
    e.max_kl = std::max(e.max_kl, kl);
    e.top1_changes += baseline[m].top[0].id != ablated[m].top[0].id;
  }
  if (e.positions > 0) e.mean_kl /= static_cast<double>(e.positions);
  return e;
}

std::vector<std::pair<std::string, Ablation>> standard_ablations(const Model& model, bool heads) {
  const ModelConfig& c = model.config;
  std::vector<std::pair<std::string, Ablation>> out;
  Ablation a;
  // Each position term the model runs, off; each it does not run but has the projections for, on.
  // (c2c, in every model, is not a position term: its removal is not one of Table 4's rows.)
  for (Term t : kAllTerms) {
    const bool on = c.trained_with(t);
    if (on_in_every_model(t) || (!on && !has_projections_for(model, t))) continue;
    a = {};
    a.terms[t] = !on;
    out.push_back({std::string(on ? "-" : "+") + term_name(t), a});
  }
  if (runs_emd(model)) {  // a model that decodes without the EMD has none to remove
    a = {};
    a.emd = false;
    out.push_back({"-EMD", a});
  }
  if (c.has_p2c()) {
    a = {};
    a.p2c_index = c.trained_with_paper_p2c ? P2CIndex::Code : P2CIndex::Paper;
    out.push_back({c.trained_with_paper_p2c ? "p2c index: code" : "p2c index: paper", a});
  }
  a = {};
  a.scale_mode = ScaleMode::Fixed;
  a.scale_factor = 3;
  if (c.reference_scale_factor() != 3) out.push_back({"scale sqrt(3d)", a});
  if (c.log_buckets()) {  // the other reference's relative positions (differ only where |i - j| >= m)
    a = {};
    a.relative_positions = RelativePositionRule::Microsoft;
    out.push_back({"rel. positions: microsoft", a});
  }
  if (heads)
    for (int64_t l = 0; l < c.num_hidden_layers; ++l)
      for (int64_t h = 0; h < c.num_attention_heads; ++h) {
        a = {};
        a.head_mask.insert({l, h});
        out.push_back({"mask head " + std::to_string(l) + ":" + std::to_string(h), a});
      }
  return out;
}

std::vector<AblationEffect> run_ablations(const Model& model, const Inputs& inputs, const std::vector<int64_t>& positions,
                                          const std::vector<std::pair<std::string, Ablation>>& ablations) {
  // One baseline pass; each ablation re-runs only from the first layer it changes.
  const ForwardTrace base_trace = forward(model, inputs, {}, TraceLevel::None, true);
  const auto baseline = predict_from_states(model, base_trace.decoder_output(), positions, 1);
  std::vector<AblationEffect> out;
  for (const auto& [name, ablation] : ablations) {
    AblationEffect e;
    try {
      ForwardTrace trace = base_trace;
      rerun_from(model, &trace, ablation, first_affected_layer(model, base_trace.ablation, ablation));
      e = compare_predictions(baseline,
                              predict_from_states(model, trace.decoder_output(), positions, 1));
    } catch (const Error& err) {
      e.error = err.what();
    }
    e.name = name;
    e.ablation = ablation;
    out.push_back(std::move(e));
  }
  std::stable_sort(out.begin(), out.end(), [](const AblationEffect& a, const AblationEffect& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    return a.mean_kl > b.mean_kl;
  });
  return out;
}

}  // namespace deberta
