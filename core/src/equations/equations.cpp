#include "deberta/equations.h"
#include "backend/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace deberta {

Matrix linear(const Linear& layer, const Matrix& x) { return ops::linear(layer, x); }

int64_t relative_distance(int64_t i, int64_t j, int64_t k) {
  if (k < 1) throw Error("relative_distance: k must be >= 1, found " + std::to_string(k));
  const int64_t r = i - j;
  if (r <= -k) return 0;
  if (r >= k) return 2 * k - 1;
  return r + k;
}

LogBucketWorking log_bucket_working(int64_t r, int64_t buckets, int64_t max_position) {
  LogBucketWorking w;
  w.r = r;
  w.mid = buckets / 2;
  const int64_t abs_r = r < 0 ? -r : r;
  w.exact = abs_r <= w.mid;
  if (w.exact) {
    w.bucket = r;
    return w;
  }
  if (max_position - 1 == w.mid) {
    // log((m − 1) / (b/2)) = 0: the reference's float bucket is ±inf (or NaN for b/2 = 1), which
    // its cast to int64 turns into INT64_MIN on x86 for either sign; written as the reference writes
    // it. Only `make_sequence_context` decides whether a term would read it (then it is refused).
    w.scaled = std::numeric_limits<double>::infinity();
    w.bucket = std::numeric_limits<int64_t>::min();
    return w;
  }
  double scaled = std::log(static_cast<double>(abs_r) / w.mid) / std::log(static_cast<double>(max_position - 1) / w.mid) *
                  (w.mid - 1);
  // When the exact value is an integer (e.g. log(15/9) / log(25/9) · 8 = 4), libm rounding can
  // land one ulp above it and the ceiling would jump a bucket; snap such values to the integer.
  if (std::fabs(scaled - std::round(scaled)) <= 1e-12 * std::max(1.0, std::fabs(scaled))) scaled = std::round(scaled);
  w.scaled = scaled;
  const int64_t bucket = static_cast<int64_t>(std::ceil(scaled) + w.mid);
  w.bucket = r < 0 ? -bucket : bucket;
  return w;
}

int64_t log_bucket_position(int64_t r, int64_t buckets, int64_t max_position) {
  return log_bucket_working(r, buckets, max_position).bucket;
}

const char* relative_position_rule_key(RelativePositionRule rule) {
  return rule == RelativePositionRule::Microsoft ? "microsoft" : "hf";
}

RelativePositionRule parse_relative_position_rule(const std::string& key) {
  if (key == "hf") return RelativePositionRule::HuggingFace;
  if (key == "microsoft") return RelativePositionRule::Microsoft;
  throw Error("relative positions '" + key + "': expected hf (Hugging Face transformers) or microsoft (microsoft/DeBERTa)");
}

IndexMatrix relative_positions(int64_t n_query, int64_t n_key, const ModelConfig& config, RelativePositionRule rule) {
  const int64_t m = config.max_relative_positions;
  const bool clamp_first = config.log_buckets() && rule == RelativePositionRule::Microsoft;
  // The value depends on i − j only: evaluate each of the N_q + N_k − 1 distances once, then fill.
  const int64_t lowest = -(n_key - 1);
  std::vector<int64_t> by_distance(static_cast<size_t>(std::max<int64_t>(n_query + n_key - 1, 0)));
  for (size_t k = 0; k < by_distance.size(); ++k) {
    const int64_t d = lowest + static_cast<int64_t>(k);
    const int64_t r = clamp_first ? std::clamp<int64_t>(d, -(m - 1), m - 1) : d;
    by_distance[k] = config.log_buckets() ? log_bucket_position(r, config.position_buckets, m) : r;
  }
  IndexMatrix rel(n_query, n_key);
  for (int64_t i = 0; i < n_query; ++i)
    for (int64_t j = 0; j < n_key; ++j) rel(i, j) = by_distance[static_cast<size_t>(i - j - lowest)];
  return rel;
}

IndexMatrix table_rows(const IndexMatrix& rel_pos, int64_t k, int64_t window) {
  const int64_t K = window > 0 ? std::min(window, k) : k;
  return rel_pos.unaryExpr([&](int64_t r) { return relative_distance(r, 0, K) + (k - K); });
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

void activation_in_place(Eigen::Ref<Matrix> x, Activation act) {
  // Every case is a function of one entry whose bits do not depend on where a block starts (no
  // Eigen-vectorised tanh/exp: their unaligned head would round differently), so any block of a
  // matrix gets the entries the whole matrix gets. The exact GELU, the models' usual activation,
  // is the backend's op (`gelu` per entry, vectorised by the fast backend).
  auto apply = [&](auto f) { x = x.unaryExpr(f); };
  switch (act) {
    case Activation::GeluErf: return ops::gelu_erf(x);
    case Activation::GeluTanh:
      return apply([](double v) { return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); });
    case Activation::GeluFast:
      return apply([](double v) { return 0.5 * v * (1.0 + std::tanh(v * 0.7978845608 * (1.0 + 0.044715 * v * v))); });
    case Activation::QuickGelu: return apply([](double v) { return v / (1.0 + std::exp(-1.702 * v)); });
    case Activation::Relu: return apply([](double v) { return std::max(v, 0.0); });
    case Activation::Relu6: return apply([](double v) { return std::min(std::max(v, 0.0), 6.0); });
    case Activation::Tanh: return apply([](double v) { return std::tanh(v); });
    case Activation::Sigmoid: return apply([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
    case Activation::Silu: return apply([](double v) { return v / (1.0 + std::exp(-v)); });
    case Activation::Mish: return apply([](double v) { return v * std::tanh(std::log1p(std::exp(v))); });
    case Activation::Linear: return;
    case Activation::GeluClip10: return apply([](double v) { return std::clamp(gelu(v), -10.0, 10.0); });
  }
}

Matrix activation(const Matrix& x, Activation act) {
  Matrix y = x;
  activation_in_place(y, act);
  return y;
}

Matrix activation(Matrix&& x, Activation act) {
  Matrix y = std::move(x);
  activation_in_place(y, act);
  return y;
}

void layer_norm_rows(const Matrix& x, int64_t first, int64_t last, const LayerNormParams& p, Matrix* y) {
  for (int64_t n = first; n < last; ++n) {
    const double mean = x.row(n).mean();
    const auto centred = x.row(n).array() - mean;
    const double variance = centred.square().mean();
    y->row(n) = (centred / std::sqrt(variance + p.eps)).matrix().cwiseProduct(p.weight.transpose()) + p.bias.transpose();
  }
}

Matrix layer_norm(const Matrix& x, const LayerNormParams& p) {
  Matrix y(x.rows(), x.cols());
  layer_norm_rows(x, 0, x.rows(), p, &y);
  return y;
}

Matrix embed(const ModelConfig& c, const EmbeddingWeights& w, const std::vector<int64_t>& input_ids,
             const std::vector<int64_t>& token_type_ids, const Vector& mask) {
  const int64_t N = static_cast<int64_t>(input_ids.size());
  Matrix x(N, c.embedding_size);
  for (int64_t n = 0; n < N; ++n) {
    const int64_t id = input_ids[n];
    if (id < 0 || id >= c.vocab_size)
      throw InvalidInput("input_ids[" + std::to_string(n) + "] = " + std::to_string(id) +
                         " is outside the vocabulary [0, " + std::to_string(c.vocab_size) + ")");
    x.row(n) = w.word.row(id);
  }
  if (c.position_biased_input) {
    if (N > w.position.rows())
      throw InvalidInput("sequence of " + std::to_string(N) + " tokens is longer than max_position_embeddings = " +
                         std::to_string(w.position.rows()));
    x += w.position.top_rows(N);
  }
  if (c.type_vocab_size > 0) {
    for (int64_t n = 0; n < N; ++n) {
      const int64_t t = n < static_cast<int64_t>(token_type_ids.size()) ? token_type_ids[n] : 0;
      if (t < 0 || t >= c.type_vocab_size)
        throw InvalidInput("token_type_ids[" + std::to_string(n) + "] = " + std::to_string(t) + " is outside [0, " +
                           std::to_string(c.type_vocab_size) + ")");
      x.row(n) += w.token_type.row(t);
    }
  }
  if (!w.embed_proj.empty()) x = linear(w.embed_proj, x);
  Matrix h = layer_norm(x, w.norm);
  return h.array().colwise() * mask.array();
}

Matrix relative_embedding_table(const ModelConfig& c, const ModelWeights& w) {
  if (!c.relative_attention) return Matrix();
  const Matrix table = w.rel_embeddings.widened();  // stored precision → float64 (exact)
  return w.rel_norm ? layer_norm(table, *w.rel_norm) : table;
}

double log_sum_exp_row(const Matrix& logits, int64_t m) {
  const double max_logit = logits.row(m).maxCoeff();
  return std::log((logits.row(m).array() - max_logit).exp().sum()) + max_logit;
}

Matrix log_softmax_rows(const Matrix& logits) {
  Matrix out(logits.rows(), logits.cols());
  for (int64_t m = 0; m < logits.rows(); ++m) out.row(m) = logits.row(m).array() - log_sum_exp_row(logits, m);
  return out;
}

double kl_divergence(const Vector& log_p, const Vector& log_q) {
  if (log_p.size() != log_q.size())
    throw Error("kl_divergence: " + std::to_string(log_p.size()) + " and " + std::to_string(log_q.size()) +
                " log-probabilities");
  // Σ_v p_v (log p_v − log q_v) over the entries with p_v > 0 (0 · log 0 = 0), vectorised.
  // p = exp(log p), exactly 0 where log p = −∞ (Eigen 3.4's vectorised exp gives 5.6e-309 there).
  const Eigen::ArrayXd p = (log_p.array() == -INFINITY).select(0.0, log_p.array().exp());
  const double kl = (p > 0).select(p * (log_p.array() - log_q.array()), 0.0).sum();
  return kl;  // not clamped: a negative value beyond rounding (~1e-12) is a bug for the tests to see
}

Matrix content_to_content(const Matrix& Q_c, const Matrix& K_c, double s) { return s * (Q_c * K_c.transpose()); }

namespace {
// The gather both relative terms end with: out(i, j) = s · scores(by_query ? i : j, rows(i, j) − offset),
// where `scores` holds one token against every projected table row.
Matrix gather_table_rows(const Matrix& scores, const IndexMatrix& rows, int64_t row_offset, double s, bool by_query) {
  Matrix out(rows.rows(), rows.cols());
  for (int64_t i = 0; i < rows.rows(); ++i)
    for (int64_t j = 0; j < rows.cols(); ++j) out(i, j) = s * scores(by_query ? i : j, rows(i, j) - row_offset);
  return out;
}
}  // namespace

Matrix content_to_position(const Matrix& Q_c, const Matrix& K_r, const IndexMatrix& rows, int64_t row_offset,
                           double s) {
  const Matrix all = Q_c * K_r.transpose();  // [N_q, R]: query i against every table row
  return gather_table_rows(all, rows, row_offset, s, /*by_query=*/true);
}

Matrix position_to_content(const Matrix& K_c, const Matrix& Q_r, const IndexMatrix& rows, int64_t row_offset,
                           double s) {
  const Matrix all = K_c * Q_r.transpose();  // [N_k, R]: key j against every table row
  return gather_table_rows(all, rows, row_offset, s, /*by_query=*/false);
}

Matrix position_to_position(const Matrix& Q_r, const Matrix& K_r, const IndexMatrix& p2c_rows,
                            const IndexMatrix& c2p_rows, int64_t row_offset, double s) {
  const Matrix all = Q_r * K_r.transpose();  // [R, R]: every pair of table rows
  Matrix p2p(c2p_rows.rows(), c2p_rows.cols());
  for (int64_t i = 0; i < c2p_rows.rows(); ++i)
    for (int64_t j = 0; j < c2p_rows.cols(); ++j)
      p2p(i, j) = s * all(p2c_rows(i, j) - row_offset, c2p_rows(i, j) - row_offset);
  return p2p;
}

namespace {
// Row by row: out may be the logits themselves (each row is read before it is written). A key
// counts when its mask is 1 and its logit is finite; the others get probability 0 (exp(−∞) is
// written as 0 explicitly: Eigen 3.4's vectorised exp gives 5.6e-309 for it). The exponentials are
// their own expression (Eigen's vectorised exp, within an ulp or two of std::exp), summed by
// Eigen's reduction, whose order depends on the row length only.
void softmax_rows(const Matrix& logits, const Vector& mask_q, const Vector& mask_k, Matrix* out) {
  const auto valid_key = (mask_k.transpose().array() != 0);
  for (int64_t i = 0; i < logits.rows(); ++i) {
    auto p = out->row(i).array();
    const auto l = logits.row(i).array();
    const Eigen::Array<bool, 1, Eigen::Dynamic> keep = valid_key && (l != -INFINITY);
    const double max_logit = mask_q[i] != 0 ? keep.select(l, -INFINITY).maxCoeff() : -INFINITY;
    if (max_logit == -INFINITY) {  // a padding query, or no key that counts
      p.setZero();
      continue;
    }
    p = (l - max_logit).exp();
    p = keep.select(p, 0.0);
    p /= p.sum();
  }
}
}  // namespace

Matrix masked_softmax(const Matrix& logits, const Vector& mask_q, const Vector& mask_k) {
  Matrix probs(logits.rows(), logits.cols());  // every entry is written by softmax_rows
  softmax_rows(logits, mask_q, mask_k, &probs);
  return probs;
}

Matrix masked_softmax(Matrix&& logits, const Vector& mask_q, const Vector& mask_k) {
  Matrix probs = std::move(logits);
  softmax_rows(probs, mask_q, mask_k, &probs);
  return probs;
}

Matrix attention_context(const Matrix& probs, const Matrix& V_c) { return probs * V_c; }

namespace {
// A relative term reads a position projection at table rows: both must be there.
void needs(Term term, const Matrix& projection, const char* name, const IndexMatrix* rows) {
  if (projection.size() == 0 || !rows)
    throw Error(std::string("eq. 4, ") + term_name(term) + ": the head has no " + name + " projection or no table rows");
}
}  // namespace

Matrix term_scores(Term term, const HeadProjections& p, const AttentionSetup& a) {
  switch (term) {
    case Term::c2c:
      return content_to_content(p.Q_c, p.K_c, a.scale);
    case Term::c2p:
      needs(term, p.K_r, "K_r", a.c2p_row);
      return content_to_position(p.Q_c, p.K_r, *a.c2p_row, p.row_offset, a.scale);
    case Term::p2c:
      needs(term, p.Q_r, "Q_r", a.p2c_row);
      return position_to_content(p.K_c, p.Q_r, *a.p2c_row, p.row_offset, a.scale);
    case Term::p2p:
      needs(term, p.K_r, "K_r", a.c2p_row);
      needs(term, p.Q_r, "Q_r", a.p2c_row);
      return position_to_position(p.Q_r, p.K_r, *a.p2c_row, *a.c2p_row, p.row_offset, a.scale);
  }
  throw Error("eq. 4: unknown term");
}

HeadScores attention_logits(const HeadProjections& p, const AttentionSetup& a, bool keep_terms) {
  const PerTerm<bool>& on = a.terms;
  HeadScores h;
  for (Term t : kAllTerms)
    if (on[t]) h.terms[t] = term_scores(t, p, a);
  // The sum in the reference's order: the relative terms first, rel_att = (c2p + p2c) + p2p, then
  // c2c + rel_att (formed in place: a + b and b + a are the same double).
  for (Term t : {Term::c2p, Term::p2c, Term::p2p, Term::c2c}) {
    Matrix& term = h.terms[t];
    if (term.size() == 0) continue;
    if (h.logits.size() == 0)
      h.logits = keep_terms ? term : std::move(term);
    else
      h.logits += term;
    if (!keep_terms) term = Matrix();
  }
  if (h.logits.size() == 0) h.logits = Matrix::Zero(p.Q_c.rows(), p.K_c.rows());  // every term off
  return h;
}

HeadResult attention_head(const HeadProjections& p, const AttentionSetup& a, bool masked, bool keep_scores) {
  if (!a.mask) throw Error("eq. 4: attention_head needs the sequence's mask");
  HeadResult h;
  h.scores = attention_logits(p, a, keep_scores);
  h.probs = keep_scores ? masked_softmax(h.scores.logits, *a.mask, *a.mask)
                        : masked_softmax(std::move(h.scores.logits), *a.mask, *a.mask);
  if (masked) h.probs.setZero();
  h.context = attention_context(h.probs, p.V_c);
  return h;
}

namespace {
// The reference backend's eq. 4 (ops.h, `attention`): `attention_head` on one head's columns of
// the layer's projections, its results where the op puts them. Handed to the backend when the
// program starts, since the backend, below this layer, cannot call it.
void reference_head(const ops::AttentionHead& h, ops::AttentionResult* out, bool keep_probs, bool keep_maps) {
  const auto columns = [&](const Matrix* m) { return m && m->size() > 0 ? Matrix(h.of(*m)) : Matrix(); };
  HeadProjections p;
  p.Q_c = columns(h.Q_c), p.K_c = columns(h.K_c), p.V_c = columns(h.V_c), p.K_r = columns(h.K_r), p.Q_r = columns(h.Q_r);
  p.row_offset = h.row_offset;
  AttentionSetup a;
  a.terms = h.terms, a.scale = h.scale, a.c2p_row = h.c2p_row, a.p2c_row = h.p2c_row, a.mask = h.mask;
  HeadResult r = attention_head(p, a, h.masked, keep_maps);
  if (keep_maps) out->terms = std::move(r.scores.terms), out->logits = std::move(r.scores.logits);
  if (keep_probs) out->probs = std::move(r.probs);
  if (h.context_out)
    h.context_out->middleCols(h.column0, h.d()) = r.context;
  else
    out->context = std::move(r.context);
}
[[maybe_unused]] const bool reference_head_handed_over = ops::set_reference_attention(&reference_head);
}  // namespace

Matrix emd_query_input(const Matrix& H, const Matrix& P) {
  if (H.rows() != P.rows() || H.cols() != P.cols())
    throw Error("EMD: hidden states [" + std::to_string(H.rows()) + ", " + std::to_string(H.cols()) +
                "] and position embeddings [" + std::to_string(P.rows()) + ", " + std::to_string(P.cols()) + "] differ in shape");
  return H + P;
}

Matrix residual_layer_norm(const Matrix& x, const Linear& dense, const Matrix& residual, const LayerNormParams& norm) {
  if (residual.rows() != x.rows() || residual.cols() != dense.weight.rows())
    throw Error("residual_layer_norm: residual [" + std::to_string(residual.rows()) + ", " + std::to_string(residual.cols()) +
                "] does not match the output [" + std::to_string(x.rows()) + ", " + std::to_string(dense.weight.rows()) + "]");
  return layer_norm(linear(dense, x) + residual, norm);  // LN(x Wᵀ + b + residual)
}

Matrix feed_forward(const Matrix& a, const LayerWeights& w, Activation act) {
  const Matrix inner = activation(linear(w.intermediate, a), act);  // act(a W_iᵀ + b_i)
  return residual_layer_norm(inner, w.output, a, w.output_norm);       // LN(inner W_oᵀ + b_o + a)
}

Matrix ngie_convolution(const Matrix& x, const Matrix& residual, const Vector& mask, const ConvWeights& w,
                        int64_t groups, Activation act) {
  const int64_t N = x.rows(), H = x.cols(), k = static_cast<int64_t>(w.taps.size()), pad = (k - 1) / 2;
  const int64_t in_g = H / groups, out_g = H / groups;
  Matrix conv = Matrix::Zero(N, H);
  conv.rowwise() += w.bias.transpose();
  for (int64_t t = 0; t < k; ++t) {
    // Output row n reads input row n + t − pad (zero outside the sequence).
    const int64_t shift = t - pad;
    const int64_t first = std::max<int64_t>(0, -shift), last = std::min<int64_t>(N, N - shift);
    if (first >= last) continue;
    for (int64_t g = 0; g < groups; ++g)
      conv.block(first, g * out_g, last - first, out_g) +=
          x.block(first + shift, g * in_g, last - first, in_g) * w.taps[t].middleRows(g * out_g, out_g).transpose();
  }
  for (int64_t n = 0; n < N; ++n)
    if (mask[n] == 0) conv.row(n).setZero();
  const Matrix out = layer_norm(residual + activation(conv, act), w.norm);
  return out.array().colwise() * mask.array();
}

}  // namespace deberta
