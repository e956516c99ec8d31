// finite.cpp — see finite.h.
#include "deberta/finite.h"

namespace deberta {

namespace {
int64_t count_non_finite(const Matrix& m) { return m.size() - m.array().isFinite().count(); }
}  // namespace

std::string non_finite_predictions(const std::vector<MaskPrediction>& predictions) {
  for (const MaskPrediction& p : predictions) {
    const int64_t bad = p.log_probs.size() - p.log_probs.array().isFinite().count();
    if (bad > 0)
      return "the prediction at position " + std::to_string(p.position) + " has " + std::to_string(bad) + " of " +
             std::to_string(p.log_probs.size()) + " log-probabilities NaN or infinite (overflowing or NaN weights?)";
  }
  return "";
}

std::string non_finite_trace(const ForwardTrace& trace) {
  auto report = [](const std::string& what, const Matrix& m) -> std::string {
    const int64_t bad = count_non_finite(m);
    return bad ? what + " holds " + std::to_string(bad) + " NaN/Inf values (overflowing or NaN weights?)" : "";
  };
  if (auto r = report("the embedding output", trace.embedding_output); !r.empty()) return r;
  for (size_t l = 0; l < trace.layers.size(); ++l)
    if (auto r = report("the output of layer " + std::to_string(l), trace.layers[l].output); !r.empty()) return r;
  if (trace.emd)
    if (auto r = report("the Enhanced Mask Decoder output", trace.emd->output()); !r.empty()) return r;
  return "";
}

}  // namespace deberta
