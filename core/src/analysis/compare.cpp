#include "deberta/compare.h"

#include <algorithm>
#include <cmath>

namespace deberta {

double OffsetProfile::at(int64_t o, int64_t layer) const {
  if (o < -max_offset || o > max_offset) return 0.0;
  const std::vector<double>& v = layer < 0 ? pooled : per_layer.at(static_cast<size_t>(layer));
  return v.empty() ? 0.0 : v[static_cast<size_t>(o + max_offset)];
}

OffsetProfile attention_mass_by_offset(const ForwardTrace& trace) {
  OffsetProfile out;
  const Vector& mask = trace.context.mask;
  const int64_t N = mask.size();
  out.max_offset = std::max<int64_t>(N - 1, 0);
  const size_t width = static_cast<size_t>(2 * out.max_offset + 1);
  const double valid = mask.sum();
  out.pooled.assign(width, 0.0);
  for (const LayerTrace& layer : trace.layers) {
    if (layer.attention.probs.empty())
      throw Error("attention mass by offset needs the attention probabilities (a trace of level probs or full)");
    std::vector<double> mass(width, 0.0);
    const double H = static_cast<double>(layer.attention.probs.size());
    for (const Matrix& P : layer.attention.probs)
      for (int64_t i = 0; i < N; ++i) {
        if (mask[i] == 0) continue;
        for (int64_t j = 0; j < N; ++j)
          if (mask[j] != 0) mass[static_cast<size_t>(i - j + out.max_offset)] += P(i, j);
      }
    for (double& m : mass) m /= H * valid;
    for (size_t k = 0; k < width; ++k) out.pooled[k] += mass[k] / static_cast<double>(trace.layers.size());
    out.per_layer.push_back(std::move(mass));
  }
  return out;
}

ModelComparison compare_traces(const Model& a, const ForwardTrace& ta, const Model& b, const ForwardTrace& tb,
                               const std::vector<int64_t>& positions, int64_t top_k) {
  if (ta.inputs.input_ids != tb.inputs.input_ids)
    throw Error("compare: the two traces were run on different inputs");
  ModelComparison out;
  out.layers = std::min<int64_t>(ta.layers.size(), tb.layers.size());
  out.heads = std::min(a.config.num_attention_heads, b.config.num_attention_heads);
  if (a.config.num_hidden_layers != b.config.num_hidden_layers ||
      a.config.num_attention_heads != b.config.num_attention_heads)
    out.note = "model A has " + std::to_string(a.config.num_hidden_layers) + " layers x " +
               std::to_string(a.config.num_attention_heads) + " heads, model B " +
               std::to_string(b.config.num_hidden_layers) + " x " + std::to_string(b.config.num_attention_heads) +
               ": the common " + std::to_string(out.layers) + " x " + std::to_string(out.heads) + " are compared";
  // Valid (query, key) pairs: both unmasked (padding rows and columns are zero in both maps).
  const Vector& mask = ta.context.mask;
  const double pairs = mask.sum() * mask.sum();
  for (int64_t l = 0; l < out.layers; ++l) {
    std::vector<double> row;
    for (int64_t h = 0; h < out.heads; ++h) {
      const Matrix& pa = ta.layers[l].attention.probs.at(h);
      const Matrix& pb = tb.layers[l].attention.probs.at(h);
      row.push_back(pairs > 0 ? (pa - pb).cwiseAbs().sum() / pairs : 0.0);
    }
    out.mean_abs_prob_diff.push_back(std::move(row));
  }
  out.offsets_a = attention_mass_by_offset(ta);
  out.offsets_b = attention_mass_by_offset(tb);
  if (positions.empty()) return out;
  if (a.config.vocab_size != b.config.vocab_size)
    throw Error("compare: model A (" + a.directory + ") has vocab_size " + std::to_string(a.config.vocab_size) +
                ", model B (" + b.directory + ") " + std::to_string(b.config.vocab_size) +
                "; predictions can only be compared over one vocabulary");
  out.predictions_a = predict_from_states(a, ta.decoder_output(), positions, top_k);
  out.predictions_b = predict_from_states(b, tb.decoder_output(), positions, top_k);
  for (size_t m = 0; m < positions.size(); ++m) {
    const double kl = kl_divergence(out.predictions_a[m].log_probs, out.predictions_b[m].log_probs);
    out.kl.push_back(kl);
    out.mean_kl += kl;
    out.top1_agree += out.predictions_a[m].top[0].id == out.predictions_b[m].top[0].id;
  }
  out.mean_kl /= static_cast<double>(positions.size());
  return out;
}

ModelComparison compare_models(const Model& a, const Model& b, const Inputs& inputs,
                               const std::vector<int64_t>& positions, int64_t top_k) {
  // The one input must fit both models: each named in the message.
  for (const auto& [m, name] : {std::pair<const Model*, const char*>{&a, "A"}, {&b, "B"}}) {
    const std::string which = std::string("model ") + name + " (" + m->directory + ")";
    if (inputs.size() > m->config.max_position_embeddings)
      throw Error("compare: the input has " + std::to_string(inputs.size()) + " tokens, more than max_position_embeddings = " +
                  std::to_string(m->config.max_position_embeddings) + " of " + which);
    for (int64_t n = 0; n < inputs.size(); ++n)
      if (inputs.input_ids[n] < 0 || inputs.input_ids[n] >= m->config.vocab_size)
        throw Error("compare: input_ids[" + std::to_string(n) + "] = " + std::to_string(inputs.input_ids[n]) +
                    " is outside the vocabulary [0, " + std::to_string(m->config.vocab_size) + ") of " + which);
  }
  const bool decode = !positions.empty();
  const ForwardTrace ta = forward(a, inputs, {}, TraceLevel::Probs, decode);
  const ForwardTrace tb = forward(b, inputs, {}, TraceLevel::Probs, decode);
  return compare_traces(a, ta, b, tb, positions, top_k);
}

}  // namespace deberta
