#include "deberta/model.h"

#include "backend/ops.h"

#include <algorithm>
#include <limits>
#include <cmath>
#include <sstream>

namespace deberta {

void zero_unused_token_types(const ModelConfig& c, Inputs* inputs) {
  if (c.type_vocab_size == 0) inputs->token_type_ids.assign(inputs->input_ids.size(), 0);
}

std::vector<int64_t> find_mask_positions(const Inputs& inputs, int64_t mask_id) {
  std::vector<int64_t> positions;
  for (int64_t n = 0; n < inputs.size(); ++n)
    if (inputs.input_ids[n] == mask_id) positions.push_back(n);
  return positions;
}

namespace {
/// −rel_pos, keeping INT64_MIN (the reference's unreadable bucket, m − 1 = b/2) as it is: its
/// negation is signed overflow.
IndexMatrix negated(const IndexMatrix& rel_pos) {
  return rel_pos.unaryExpr([](int64_t r) { return r == std::numeric_limits<int64_t>::min() ? r : -r; });
}

/// Whether any active term of `r` reads the position projection `reads` names (reads_K_r, reads_Q_r).
/// "c2p, p2c" ("nothing" when empty).
std::string join_terms(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "nothing" : out;
}

bool any_reads(const ResolvedAttention& r, bool (*reads)(Term)) {
  for (Term t : kAllTerms)
    if (r.terms[t] && reads(t)) return true;
  return false;
}

// rows(i, j) as a function of i − j: entry i − j + N − 1, `[2N − 1]` (from row 0 and column 0),
// checked against every entry; empty when the rows are not such a function.
std::vector<int64_t> by_distance(const IndexMatrix& rows) {
  const int64_t N = rows.rows();
  if (N == 0 || rows.cols() != N) return {};
  std::vector<int64_t> v(static_cast<size_t>(2 * N - 1));
  for (int64_t i = 0; i < N; ++i) v[static_cast<size_t>(i + N - 1)] = rows(i, 0);
  for (int64_t j = 1; j < N; ++j) v[static_cast<size_t>(N - 1 - j)] = rows(0, j);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j)
      if (rows(i, j) != v[static_cast<size_t>(i - j + N - 1)]) return {};
  return v;
}
}  // namespace

void check_input_length(const ModelConfig& c, int64_t n, const std::string& model_name, bool emd) {
  if (n <= 0) throw InvalidInput("the input has no tokens");
  // Only where a position past the absolute table is read (issue 59, class 8): relative positions
  // are clamped to the relative table (or bucketed), so otherwise any length computes, as HF does.
  const bool reads_absolute_positions = c.position_biased_input || (emd && c.emd_position);
  if (reads_absolute_positions && n > c.max_position_embeddings)
    throw InvalidInput("input has " + std::to_string(n) + " tokens, more than max_position_embeddings = " +
                       std::to_string(c.max_position_embeddings) + (model_name.empty() ? "" : " of " + model_name));
}

void check_mask_positions(const std::vector<int64_t>& positions, int64_t n) {
  std::vector<char> seen(static_cast<size_t>(std::max<int64_t>(n, 0)), 0);
  for (int64_t p : positions) {
    if (p < 0 || p >= n)
      throw InvalidInput("masked position " + std::to_string(p) + " is outside the " + std::to_string(n) + "-token input");
    if (seen[static_cast<size_t>(p)]++) throw InvalidInput("masked position " + std::to_string(p) + " is given more than once");
  }
}

namespace {
bool has_K_r(const ModelConfig& c, const ModelWeights& w) {
  return c.relative_attention && !w.layers.empty() && !w.layers[0].attention.pos_key.empty();
}
bool has_Q_r(const ModelConfig& c, const ModelWeights& w) {
  return c.relative_attention && !w.layers.empty() && !w.layers[0].attention.pos_query.empty();
}
}  // namespace

bool has_projections_for(const Model& model, Term term) {
  return (!reads_K_r(term) || has_K_r(model.config, model.weights)) &&
         (!reads_Q_r(term) || has_Q_r(model.config, model.weights));
}

ResolvedAttention resolve_attention(const ModelConfig& c, const ModelWeights& w, const Ablation& a) {
  ResolvedAttention r;
  for (Term t : kAllTerms) r.terms[t] = a.terms[t].value_or(c.trained_with(t));
  r.p2c_index = a.p2c_index.value_or(c.trained_with_paper_p2c ? P2CIndex::Paper : P2CIndex::Code);
  const bool has_k_r = has_K_r(c, w), has_q_r = has_Q_r(c, w);
  const std::string why = !c.relative_attention ? "it has no relative attention"
                                                : "its pos_att_type lists " + join_terms(c.pos_att_type);
  for (Term t : kAllTerms) {
    if (!r.terms[t]) continue;
    if (reads_K_r(t) && !has_k_r)
      throw Error(std::string("term ") + term_name(t) + " needs the K_r projection, which this model does not have (" + why + ")");
    if (reads_Q_r(t) && !has_q_r)
      throw Error(std::string("term ") + term_name(t) + " needs the Q_r projection, which this model does not have (" + why + ")");
  }
  r.k = c.relative_attention ? c.relative_span() : 0;
  r.window = r.k;
  if (a.max_relative_positions != 0) {
    if (!c.relative_attention) throw Error("max_relative_positions: this model has no relative attention");
    if (a.max_relative_positions < 1 || a.max_relative_positions > r.k)
      throw Error("max_relative_positions K = " + std::to_string(a.max_relative_positions) + " is outside [1, " +
                  std::to_string(r.k) + "] (the trained table has 2k = " + std::to_string(2 * r.k) + " rows)");
    r.window = a.max_relative_positions;
  }
  switch (a.scale_mode) {
    case ScaleMode::Auto: r.scale_factor = c.reference_scale_factor(); break;
    case ScaleMode::Fixed: r.scale_factor = a.scale_factor; break;
    case ScaleMode::Rescale:  // 1 + the number of active position terms
      r.scale_factor = 1;
      for (Term t : kAllTerms) r.scale_factor += r.terms[t] && (reads_K_r(t) || reads_Q_r(t));
      break;
  }
  if (!(r.scale_factor > 0)) throw Error("scale factor must be positive, found " + std::to_string(r.scale_factor));
  r.scale = 1.0 / std::sqrt(static_cast<double>(c.d_head()) * r.scale_factor);
  for (const auto& [l, h] : a.head_mask)
    if (l < 0 || l >= c.num_hidden_layers || h < 0 || h >= c.num_attention_heads)
      throw Error("head mask " + std::to_string(l) + ":" + std::to_string(h) + " is outside the model (" +
                  std::to_string(c.num_hidden_layers) + " layers x " + std::to_string(c.num_attention_heads) +
                  " heads)");
  return r;
}

SequenceContext make_sequence_context(const Model& model, const Inputs& in, const Ablation& ablation) {
  const ModelConfig& c = model.config;
  const int64_t N = in.size();
  if (N < 1) throw InvalidInput("input is empty: at least one token is needed");
  if (!in.attention_mask.empty() && static_cast<int64_t>(in.attention_mask.size()) != N)
    throw InvalidInput("attention_mask has " + std::to_string(in.attention_mask.size()) + " entries, input_ids " +
                std::to_string(N));
  if (!in.token_type_ids.empty() && static_cast<int64_t>(in.token_type_ids.size()) != N)
    throw InvalidInput("token_type_ids has " + std::to_string(in.token_type_ids.size()) + " entries, input_ids " +
                std::to_string(N));
  SequenceContext s;
  s.attention = resolve_attention(c, model.weights, ablation);
  s.head_mask = ablation.head_mask;
  s.mask = Vector::Ones(N);
  for (int64_t n = 0; n < static_cast<int64_t>(in.attention_mask.size()); ++n) {
    const int64_t m = in.attention_mask[n];
    if (m != 0 && m != 1) throw Error("attention_mask[" + std::to_string(n) + "] = " + std::to_string(m) + " (expected 0 or 1)");
    s.mask[n] = static_cast<double>(m);
  }
  if (!c.relative_attention) return s;
  // m − 1 = b/2: the log-bucket formula divides by log((m − 1) / (b/2)) = 0 for any |i − j| > b/2
  // (Hugging Face's rule; microsoft's clamps to ±(m − 1) first, so it never gets there).
  const int64_t mid = c.position_buckets / 2;
  // Refused only when a term reads those rows: the reference computes INT64_MIN buckets, and a
  // c2c-only forward never looks at them (issue 44, class 11).
  const bool reads_positions = reads_relative_table(s.attention.terms);
  if (c.log_buckets() && c.max_relative_positions - 1 == mid && N - 1 > mid && reads_positions &&
      ablation.relative_positions == RelativePositionRule::HuggingFace)
    throw Error("max_relative_positions - 1 = position_buckets / 2 = " + std::to_string(mid) +
                ": distances beyond " + std::to_string(mid) + " cannot be log-bucketed (log((m - 1) / (b/2)) = 0; the "
                "reference writes INT64_MIN), and this input of " + std::to_string(N) + " tokens has them; use at most " +
                std::to_string(mid + 1) + " tokens or --relative-positions microsoft");
  s.rel_pos = relative_positions(N, N, c, ablation.relative_positions);
  s.c2p_row = table_rows(s.rel_pos, s.attention.k, s.attention.window);
  // Released code: p2c reads the row of i − j, like c2p. Paper (eq. 4): δ(j, i), the row of j − i.
  s.p2c_row = s.attention.p2c_index == P2CIndex::Code ? s.c2p_row
                                                   : table_rows(negated(s.rel_pos), s.attention.k, s.attention.window);
  s.c2p_by_distance = by_distance(s.c2p_row);
  s.p2c_by_distance = s.attention.p2c_index == P2CIndex::Code ? s.c2p_by_distance : by_distance(s.p2c_row);
  s.rel_table = relative_embedding_table(c, model.weights);
  const auto& r = s.attention;
  int64_t lo = 2 * r.k, hi = -1;
  if (any_reads(r, reads_K_r)) lo = std::min(lo, s.c2p_row.minCoeff()), hi = std::max(hi, s.c2p_row.maxCoeff());
  if (any_reads(r, reads_Q_r)) lo = std::min(lo, s.p2c_row.minCoeff()), hi = std::max(hi, s.p2c_row.maxCoeff());
  if (hi >= 0) s.row_lo = lo, s.row_hi = hi;
  return s;
}

namespace {
// The products `positions` runs: each layer's K_r = P W_{k,r}ᵀ + b and Q_r = P W_{q,r}ᵀ + b on the
// relative table `table` (P), into `out` (its vectors sized to the layers here).
std::vector<ops::Product> position_products(const Model& model, const Matrix& table, PositionTable* out) {
  const auto L = static_cast<size_t>(model.config.num_hidden_layers);
  out->K_r.resize(L), out->Q_r.resize(L);
  std::vector<ops::Product> products;
  for (size_t l = 0; l < L && l < model.weights.layers.size(); ++l) {
    const AttentionWeights& w = model.weights.layers[l].attention;
    if (!w.pos_key.empty()) products.push_back({&w.pos_key, &table, &out->K_r[l], /*rows_independent=*/true});
    if (!w.pos_query.empty()) products.push_back({&w.pos_query, &table, &out->Q_r[l], /*rows_independent=*/true});
  }
  return products;
}
}  // namespace

std::shared_ptr<const PositionTable> ModelWorkspace::positions(const Model& model) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (built_) return positions_;
  building_.reset();
  const ModelConfig& c = model.config;
  const Matrix table = relative_embedding_table(c, model.weights);
  std::shared_ptr<PositionTable> out;
  if (c.relative_attention && table.rows() > 0) {
    out = std::make_shared<PositionTable>();
    ops::products(position_products(model, table, out.get()));
  }
  positions_ = std::move(out);
  built_ = true;
  return positions_;
}

bool ModelWorkspace::positions_step(const Model& model, int64_t max_work) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (built_) return true;
  if (!building_) {  // the first piece: the relative table P (a LayerNorm of its rows), no product
    building_ = std::make_unique<PositionsBuild>();
    building_->table = relative_embedding_table(model.config, model.weights);
    if (model.config.relative_attention && building_->table.rows() > 0) building_->out = std::make_shared<PositionTable>();
    return false;
  }
  PositionsBuild& b = *building_;
  const std::vector<ops::Product> products =
      b.out ? position_products(model, b.table, b.out.get()) : std::vector<ops::Product>();
  if (b.product < products.size()) {
    const ops::Product& p = products[b.product];
    const int64_t rows = b.table.rows(), out_width = p.layer->weight.rows();
    const int64_t per_row = std::max<int64_t>(1, out_width * p.layer->weight.cols());
    const int64_t n = std::clamp<int64_t>(max_work / per_row, 1, rows - b.row);
    if (b.row == 0) p.y->resize(rows, out_width);
    const Matrix x = b.table.middleRows(b.row, n);
    Matrix y;
    ops::products({ops::Product(p.layer, &x, &y, /*rows_independent=*/true)});
    p.y->middleRows(b.row, n) = y;
    b.row += n;
    if (b.row == rows) ++b.product, b.row = 0;
    if (b.product < products.size()) return false;
  }
  positions_ = std::move(b.out);
  built_ = true;
  building_.reset();
  return true;
}

std::shared_ptr<const ops::PackedWeights> ModelWorkspace::packed(const Model& model) const {
  std::lock_guard<std::mutex> lock(packed_mutex_);
  if (packed_) return packed_;
  std::vector<const Linear*> layers;
  for (const LayerWeights& w : model.weights.layers)
    for (const Linear* l : {&w.attention.query, &w.attention.key, &w.attention.value, &w.attention.output,
                            &w.intermediate, &w.output})
      layers.push_back(l);
  packed_ = ops::pack_weights(layers);
  return packed_;
}

void ModelWorkspace::take_from(ModelWorkspace& other) noexcept {
  std::scoped_lock lock(mutex_, other.mutex_, packed_mutex_, other.packed_mutex_);
  positions_ = std::move(other.positions_);
  built_ = other.built_;
  building_ = std::move(other.building_);
  packed_ = std::move(other.packed_);
  other.positions_.reset();
  other.packed_.reset();
  other.built_ = false;
}

void ModelWorkspace::clear() {
  std::scoped_lock lock(mutex_, packed_mutex_);
  positions_.reset();
  building_.reset();
  packed_.reset();
  built_ = false;
}

void project_positions(const Model& model, SequenceContext* seq, SequenceContext* previous) {
  const ResolvedAttention& r = seq->attention;
  const int64_t L = model.config.num_hidden_layers;
  seq->K_r.assign(L, Matrix());
  seq->Q_r.assign(L, Matrix());
  if (seq->row_hi < seq->row_lo) return;
  const bool same_rows = previous && previous->row_lo == seq->row_lo && previous->row_hi == seq->row_hi &&
                         static_cast<int64_t>(previous->K_r.size()) == L && static_cast<int64_t>(previous->Q_r.size()) == L;
  const int64_t n_rows = seq->row_hi - seq->row_lo + 1;
  const Matrix rows = seq->rel_table.middleRows(seq->row_lo, n_rows);
  const std::shared_ptr<const PositionTable> table = model.workspace.positions(model);
  const PositionTable* whole = table.get();
  std::vector<ops::Product> jobs;
  std::vector<std::pair<const Matrix*, Matrix*>> copies;  // rows of the model's table, as tasks
  // A projection of the same rows is taken over even when no term reads it now, so that switching
  // the term back on costs no product. Else the rows come from the model's table when it has one
  // (the same bits: both are projected row by row, `rows_independent`), else they are projected.
  auto project = [&](bool needed, const Linear& w, const std::vector<Matrix>* projected, int64_t l, Matrix* kept,
                     Matrix* out) {
    const Matrix* from = projected && static_cast<int64_t>(projected->size()) == L ? &(*projected)[l] : nullptr;
    if (kept && kept->size() > 0)
      *out = std::move(*kept);
    else if (needed && from && from->rows() == seq->rel_table.rows() && from->rows() > seq->row_hi)
      copies.push_back({from, out});
    else if (needed)
      jobs.push_back({&w, &rows, out, /*rows_independent=*/true});
  };
  for (int64_t l = 0; l < L; ++l) {
    const AttentionWeights& w = model.weights.layers[l].attention;
    project(any_reads(r, reads_K_r), w.pos_key, whole ? &whole->K_r : nullptr, l, same_rows ? &previous->K_r[l] : nullptr,
            &seq->K_r[l]);
    project(any_reads(r, reads_Q_r), w.pos_query, whole ? &whole->Q_r : nullptr, l, same_rows ? &previous->Q_r[l] : nullptr,
            &seq->Q_r[l]);
  }
  ops::tasks(static_cast<int64_t>(copies.size()),
             [&](int64_t c) { *copies[c].second = copies[c].first->middleRows(seq->row_lo, n_rows); });
  ops::products(jobs);
}

namespace {
// Head `head`'s columns of the five projections (position ones may be empty).
HeadProjections slice_head(const Matrix& Q_c, const Matrix& K_c, const Matrix& V_c, const Matrix& Q_r,
                           const Matrix& K_r, int64_t row_offset, int64_t head, int64_t d) {
  HeadProjections p;
  p.Q_c = Q_c.middleCols(head * d, d), p.K_c = K_c.middleCols(head * d, d), p.V_c = V_c.middleCols(head * d, d);
  if (Q_r.size() > 0) p.Q_r = Q_r.middleCols(head * d, d);
  if (K_r.size() > 0) p.K_r = K_r.middleCols(head * d, d);
  p.row_offset = row_offset;
  return p;
}
}  // namespace

HeadProjections head_projections(const AttentionTrace& t, int64_t head, int64_t d) {
  return slice_head(t.Q_c, t.K_c, t.V_c, t.Q_r, t.K_r, t.row_offset, head, d);
}

namespace {
// Head `head`'s operands for the backend's eq. 4: the layer's whole projections (`t`'s Q_c, K_c, V_c
// and the position ones given) with the head's window of d columns, read in place (views of `t`,
// `K_r`, `Q_r` and `a`: all must outlive the call).
ops::AttentionHead head_operands(const AttentionTrace& t, const Matrix& K_r, const Matrix& Q_r, int64_t head, int64_t d,
                                 const AttentionSetup& a, bool masked, const SequenceContext& seq) {
  ops::AttentionHead h;
  h.Q_c = &t.Q_c, h.K_c = &t.K_c, h.V_c = &t.V_c, h.K_r = &K_r, h.Q_r = &Q_r;
  h.column0 = head * d, h.columns = d;
  h.c2p_row = a.c2p_row, h.p2c_row = a.p2c_row, h.row_offset = t.row_offset;
  h.rows_lo = seq.row_lo, h.rows_hi = seq.row_hi;
  // The distance vectors stand for the matrices only where they are the sequence's own.
  const auto n = static_cast<size_t>(2 * t.Q_c.rows() - 1);
  if (a.c2p_row == &seq.c2p_row && seq.c2p_by_distance.size() == n) h.c2p_by_distance = seq.c2p_by_distance.data();
  if (a.p2c_row == &seq.p2c_row && seq.p2c_by_distance.size() == n) h.p2c_by_distance = seq.p2c_by_distance.data();
  h.terms = a.terms, h.scale = a.scale, h.mask = a.mask, h.masked = masked;
  return h;
}
}  // namespace

AttentionSetup attention_setup(const SequenceContext& seq) {
  AttentionSetup a;
  a.terms = seq.attention.terms;
  a.scale = seq.attention.scale;
  a.c2p_row = &seq.c2p_row;
  a.p2c_row = &seq.p2c_row;
  a.mask = &seq.mask;
  return a;
}

AttentionTrace disentangled_attention(const Model& model, int64_t layer, const Matrix& query, const Matrix& kv,
                                      const SequenceContext& seq, TraceLevel level) {
  const ModelConfig& c = model.config;
  const AttentionWeights& w = model.weights.layers[layer].attention;
  const ResolvedAttention& r = seq.attention;
  const int64_t heads = c.num_attention_heads, d = c.d_head();
  AttentionTrace t;
  // eq. 4's projections: content of every token, position of only the table rows this sequence
  // reads — projected once per sequence when `project_positions` ran (the context's K_r / Q_r),
  // else here. The products run as one set (ops.h).
  std::vector<ops::Product> projections = {{&w.query, &query, &t.Q_c}, {&w.key, &kv, &t.K_c}, {&w.value, &kv, &t.V_c}};
  t.row_offset = seq.row_lo;
  const bool projected = layer < static_cast<int64_t>(seq.K_r.size()) && layer < static_cast<int64_t>(seq.Q_r.size());
  Matrix rows;
  if (seq.row_hi >= seq.row_lo && !projected) {
    rows = seq.rel_table.middleRows(seq.row_lo, seq.row_hi - seq.row_lo + 1);
    if (any_reads(r, reads_K_r)) projections.push_back({&w.pos_key, &rows, &t.K_r, /*rows_independent=*/true});
    if (any_reads(r, reads_Q_r)) projections.push_back({&w.pos_query, &rows, &t.Q_r, /*rows_independent=*/true});
  }
  ops::products(projections, model.workspace.packed(model).get());
  const Matrix none;
  const Matrix& K_r = !projected ? t.K_r : any_reads(r, reads_K_r) ? seq.K_r[layer] : none;
  const Matrix& Q_r = !projected ? t.Q_r : any_reads(r, reads_Q_r) ? seq.Q_r[layer] : none;

  const bool full = level == TraceLevel::Full;
  const bool keep_probs = level != TraceLevel::None;
  auto sized = [&](bool on) { return std::vector<Matrix>(on ? heads : 0); };
  for (Term term : kAllTerms) t.terms[term] = sized(full && r.terms[term]);
  t.logits = sized(full);
  t.probs = sized(keep_probs);
  t.context.resize(query.rows(), heads * d);  // every column is written by its head below
  const AttentionSetup setup = attention_setup(seq);
  // Head h's result into the trace: what the level keeps.
  auto keep = [&](int64_t h, PerTerm<Matrix>& terms, Matrix& logits, Matrix& probs) {
    if (full) {
      for (Term term : kAllTerms)
        if (r.terms[term]) t.terms[term][h] = std::move(terms[term]);
      t.logits[h] = std::move(logits);
    }
    if (keep_probs) t.probs[h] = std::move(probs);
  };
  // eq. 4 whole for every head, as one op on the layer's projections (each head reads its window
  // of columns in place and writes its context into its columns of the layer's): on the reference
  // backend the equations layer's `attention_head` head by head, on the fast one its fused
  // implementation, pinned to attention_head by tests/test_backend_ops.cpp.
  std::vector<ops::AttentionHead> operands;
  for (int64_t h = 0; h < heads; ++h) {
    operands.push_back(head_operands(t, K_r, Q_r, h, d, setup, seq.head_mask.count({layer, h}) > 0, seq));
    operands.back().context_out = &t.context;
  }
  std::vector<ops::AttentionResult> results;
  ops::attention(operands, &results, keep_probs, full);
  for (int64_t h = 0; h < heads; ++h) keep(h, results[h].terms, results[h].logits, results[h].probs);
  if (!full)
    t.Q_c = t.K_c = t.V_c = t.Q_r = t.K_r = Matrix();
  else if (projected)
    t.K_r = K_r, t.Q_r = Q_r;  // the trace keeps its own copy, as when projected here
  return t;
}

namespace {
// The post-LN steps of a layer: the equations' `residual_layer_norm` and `feed_forward` as
// products with steps (ops.h), so that an engine may run each step on a tile of the product in the
// task that computed it (the activation on the tile, then the residual added, then LayerNorm of
// rows whose every column is done). Each entry gets the same operations in the same order as the
// equations (bias + the dot product, + the residual; `layer_norm_rows`; the activation per entry),
// so the results are bitwise theirs on either backend (tests/test_threads.cpp); the reference
// backend runs the steps one after the other on whole matrices, which is the equations' own
// sequence. Why: with two threads, a separate pass over a product's output reads half of it from
// the other core's cache and runs on one thread (a residual add of [128, 384]: 16 µs on one
// thread, 61 µs after a two-thread product); a layer at N = 512 on two threads, 20.4 → 19.0 ms
// (docs/performance.md). `packed`: the model's packed weights, or null (ops::products).

/// LN(x Wᵀ + b + residual) `[N, out]` for x `[N, in]`, residual `[N, out]` (equations'
/// `residual_layer_norm`). Errors: x's width ≠ the layer's `in`, or a residual that is not
/// `[N, out]` (`ops::check_product`'s messages).
Matrix post_ln_output(const Matrix& x, const Linear& dense, const Matrix& residual, const LayerNormParams& norm,
                      const ops::PackedWeights* packed) {
  Matrix sum, out(x.rows(), dense.weight.rows());
  ops::Product p{&dense, &x, &sum};
  p.residual = &residual;
  p.rows_done = [&](int64_t first, int64_t last) { layer_norm_rows(sum, first, last, norm, &out); };
  ops::products({p}, packed);
  return out;
}

/// LN(act(a W_iᵀ + b_i) W_oᵀ + b_o + a) `[N, H]` for a `[N, H]` (equations' `feed_forward`).
Matrix post_ln_feed_forward(const Matrix& a, const LayerWeights& w, Activation act, const ops::PackedWeights* packed) {
  Matrix inner;
  ops::Product up{&w.intermediate, &a, &inner};
  up.elementwise = [act](Eigen::Ref<Matrix> block) { activation_in_place(block, act); };
  ops::products({up}, packed);
  return post_ln_output(inner, w.output, a, w.output_norm, packed);
}
}  // namespace

LayerTrace run_layer(const Model& model, int64_t layer, const Matrix& query, const Matrix& kv,
                     const SequenceContext& seq, TraceLevel level) {
  const LayerWeights& w = model.weights.layers[layer];
  // The layer's products read the model's packed weights when it keeps them (ModelWorkspace).
  const std::shared_ptr<const ops::PackedWeights> packed = model.workspace.packed(model);
  LayerTrace t;
  t.attention = disentangled_attention(model, layer, query, kv, seq, level);
  t.attention_output = post_ln_output(t.attention.context, w.attention.output, query, w.attention.output_norm, packed.get());
  t.output = post_ln_feed_forward(t.attention_output, w, model.config.hidden_act, packed.get());
  if (level == TraceLevel::None) t.attention.context = t.attention_output = Matrix();
  return t;
}

ForwardSteps::ForwardSteps(const Model& model, const Inputs& inputs, const Ablation& ablation, TraceLevel level,
                           bool decoder)
    : model_(&model), first_(0), decoder_(decoder), fresh_(true) {
  // The EMD reads P's first N rows (I = H + P) when it runs after this encoder (run_decoder's rule).
  check_input_length(model.config, inputs.size(), model.directory, decoder && ablation.emd && runs_emd(model));
  trace_.inputs = inputs;
  trace_.ablation = ablation;
  trace_.level = level;
  // Size the N x N maps before allocating any: kept in the trace per layer and head (Full: up to
  // every term's map, logits, probs; Probs: probs), plus ~7 alive per running head.
  const int64_t per_head = level == TraceLevel::Full ? kTermCount + 2 : level == TraceLevel::Probs ? 1 : 0;
  const int64_t layers = model.config.num_hidden_layers + (decoder ? 2 : 0), heads = model.config.num_attention_heads;
  ops::check_forward_memory(inputs.size(), per_head * layers * heads, heads, 7);
  stages_ = 1 + model.config.num_hidden_layers + (decoder ? 1 : 0);
}

ForwardSteps::ForwardSteps(const Model& model, ForwardTrace trace, const Ablation& ablation, int64_t first_layer)
    : model_(&model),
      trace_(std::move(trace)),
      first_(std::clamp<int64_t>(first_layer, 0, model.config.num_hidden_layers)),
      decoder_(trace_.decoder),
      fresh_(false) {
  trace_.ablation = ablation;
  stages_ = 1 + (model.config.num_hidden_layers - first_) + (decoder_ ? 1 : 0);
}

std::string ForwardSteps::next_stage() const {
  if (done_ >= stages_) return "done";
  if (done_ == 0) return fresh_ ? "embeddings" : "sequence context";
  const int64_t layer = first_ + done_ - 1;
  if (layer < model_->config.num_hidden_layers)
    return "layer " + std::to_string(layer + 1) + " of " + std::to_string(model_->config.num_hidden_layers);
  return "decoder";
}

void ForwardSteps::step() {
  if (done_ >= stages_) return;
  const Model& model = *model_;
  if (done_ == 0) {
    if (fresh_) {
      trace_.context = make_sequence_context(model, trace_.inputs, trace_.ablation);
      project_positions(model, &trace_.context);
      trace_.embedding_output = embed(model.config, model.weights.embeddings, trace_.inputs.input_ids,
                                      trace_.inputs.token_type_ids, trace_.context.mask);
    } else {
      SequenceContext next = make_sequence_context(model, trace_.inputs, trace_.ablation);
      project_positions(model, &next, &trace_.context);  // the same rows: no new products
      trace_.context = std::move(next);
      trace_.emd.reset();
    }
    trace_.layers.resize(static_cast<size_t>(first_));
  } else if (const int64_t l = first_ + done_ - 1; l < model.config.num_hidden_layers) {
    // Layer l reads the previous layer's output (the embeddings for layer 0).
    const Matrix& x = l == 0 ? trace_.embedding_output : trace_.layers[static_cast<size_t>(l - 1)].output;
    LayerTrace layer = run_layer(model, l, x, x, trace_.context, trace_.level);
    if (l == 0 && model.weights.conv) {
      layer.output_pre_conv = layer.output;
      layer.output = ngie_convolution(trace_.embedding_output, layer.output_pre_conv, trace_.context.mask,
                                      *model.weights.conv, model.config.conv_groups, model.config.conv_act);
    }
    trace_.layers.push_back(std::move(layer));
  } else {
    run_decoder(model, &trace_);
  }
  ++done_;
}

ForwardTrace ForwardSteps::take() {
  if (done_ < stages_) throw Error("ForwardSteps::take: " + std::to_string(stages_ - done_) + " stage(s) not run yet");
  return std::move(trace_);
}

ForwardTrace forward(const Model& model, const Inputs& inputs, const Ablation& ablation, TraceLevel level,
                     bool decoder) {
  ForwardSteps steps(model, inputs, ablation, level, decoder);
  while (!steps.finished()) steps.step();
  return steps.take();
}

void rerun_from(const Model& model, ForwardTrace* trace, const Ablation& ablation, int64_t first_layer) {
  ForwardSteps steps(model, std::move(*trace), ablation, first_layer);
  while (!steps.finished()) steps.step();
  *trace = steps.take();
}

LayerTrace materialize_layer(const Model& model, const ForwardTrace& trace, int64_t layer) {
  if (layer < 0 || layer >= static_cast<int64_t>(trace.layers.size()))
    throw Error("layer " + std::to_string(layer) + " is outside [0, " + std::to_string(trace.layers.size()) + ")");
  const Matrix& x = layer == 0 ? trace.embedding_output : trace.layers[layer - 1].output;
  LayerTrace full = run_layer(model, layer, x, x, trace.context, TraceLevel::Full);
  // Layer 0's kept output is after the conv; keep that, and the pre-conv output run_layer gives.
  if (layer == 0 && model.weights.conv) {
    full.output_pre_conv = std::move(full.output);
    full.output = trace.layers[0].output;
  }
  return full;
}

LayerTrace materialize_emd_pass(const Model& model, const ForwardTrace& trace, int64_t pass) {
  if (!trace.emd) throw Error("this trace has no Enhanced Mask Decoder pass");
  if (pass < 0 || pass >= static_cast<int64_t>(trace.emd->passes.size()))
    throw Error("EMD pass " + std::to_string(pass) + " is outside [0, " + std::to_string(trace.emd->passes.size()) + ")");
  const Matrix& query = pass == 0 ? trace.emd->query_states0 : trace.emd->passes[pass - 1].output;
  return run_layer(model, model.config.num_hidden_layers - 1, query, trace.emd->kv_states, trace.context, TraceLevel::Full);
}

int64_t first_affected_layer(const Model& model, const Ablation& a, const Ablation& b) {
  const bool global_change = a.terms != b.terms || a.p2c_index != b.p2c_index || a.scale_mode != b.scale_mode ||
                             a.scale_factor != b.scale_factor || a.max_relative_positions != b.max_relative_positions ||
                             a.relative_positions != b.relative_positions;
  if (global_change) return 0;
  int64_t first = model.config.num_hidden_layers;
  for (const auto& m : a.head_mask)
    if (!b.head_mask.count(m)) first = std::min(first, m.first);
  for (const auto& m : b.head_mask)
    if (!a.head_mask.count(m)) first = std::min(first, m.first);
  return first;
}

EMDTrace enhanced_mask_decoder(const Model& model, const ForwardTrace& encoder) {
  const ModelConfig& c = model.config;
  const int64_t L = c.num_hidden_layers, N = encoder.inputs.size();
  if (L < 2) throw Error("the Enhanced Mask Decoder needs at least 2 layers; this model has " + std::to_string(L));
  const StoredMatrix& P_table = model.weights.embeddings.position;
  EMDTrace t;
  if (c.emd_position) {  // I_0 = H + P (section 3.2)
    if (P_table.size() == 0)
      throw Error("the Enhanced Mask Decoder needs absolute position embeddings (embeddings.position_embeddings.weight), "
                  "which this model does not have; use --no-emd to decode without it");
    if (c.embedding_size != c.hidden_size)
      throw Error("the Enhanced Mask Decoder adds position embeddings of width " + std::to_string(c.embedding_size) +
                  " to hidden states of width " + std::to_string(c.hidden_size) + "; they must be equal");
    if (N > P_table.rows())
      throw InvalidInput("sequence of " + std::to_string(N) + " tokens is longer than max_position_embeddings = " +
                         std::to_string(P_table.rows()));
    t.position_embeddings = P_table.top_rows(N);
  } else {  // deberta_explorer.emd_position false: I_0 = H, no absolute position
    t.position_embeddings = Matrix::Zero(N, c.hidden_size);
  }
  t.kv_states = encoder.layers[L - 2].output;
  t.query_states0 = emd_query_input(t.kv_states, t.position_embeddings);
  t.passes = emd_passes<LayerTrace>(t.query_states0, t.kv_states, 2, [&](const Matrix& query, const Matrix& kv) {
    return run_layer(model, L - 1, query, kv, encoder.context, encoder.level);
  });
  return t;
}

std::string why_no_emd(const Model& model) {
  const ModelConfig& c = model.config;
  const auto& lm = model.weights.lm_head;
  if (!lm) return "the model has no masked-LM head";
  if (lm->hf_names) return "a Hugging Face masked-LM head (cls.predictions.*): DebertaForMaskedLM has no EMD";
  if (c.position_biased_input && c.emd_position)
    return "absolute positions are added at the input (position_biased_input): microsoft's emd_context_layer "
           "then decodes from the last layer";
  if (c.emd_position && model.weights.embeddings.position.size() == 0)
    return "no absolute position table (embeddings.position_embeddings.weight): the model was trained without the EMD";
  if (c.num_hidden_layers < 2) return "the EMD needs at least 2 layers";
  if (c.emd_position && c.embedding_size != c.hidden_size)
    return "embedding_size differs from hidden_size (the EMD adds P to H)";
  return {};
}

bool runs_emd(const Model& model) { return why_no_emd(model).empty(); }

Ablation normalized(const Model& model, Ablation a) {
  const ModelConfig& c = model.config;
  for (Term t : kAllTerms)
    if (a.terms[t] && *a.terms[t] == c.trained_with(t)) a.terms[t].reset();
  if (a.p2c_index && (*a.p2c_index == P2CIndex::Paper) == c.trained_with_paper_p2c) a.p2c_index.reset();
  if (a.scale_mode == ScaleMode::Fixed && a.scale_factor == c.reference_scale_factor()) {
    a.scale_mode = ScaleMode::Auto;
    a.scale_factor = 0;
  }
  if (a.max_relative_positions != 0 && c.relative_attention && a.max_relative_positions == c.relative_span())
    a.max_relative_positions = 0;
  if (!a.emd && !runs_emd(model)) a.emd = true;
  // Without log buckets the two references' relative positions are the same i − j.
  if (!c.log_buckets()) a.relative_positions = RelativePositionRule::HuggingFace;
  return a;
}

void run_decoder(const Model& model, ForwardTrace* trace) {
  trace->decoder = true;
  trace->emd.reset();
  if (trace->ablation.emd && runs_emd(model)) trace->emd = enhanced_mask_decoder(model, *trace);
}

namespace {

// The MLM transform h = LN(act(x W_dᵀ + b_d)) of the rows `positions` of `hidden`.
Matrix lm_transform(const Model& model, const Matrix& hidden, const std::vector<int64_t>& positions) {
  const LMHeadWeights& lm = *model.weights.lm_head;
  Matrix x(static_cast<int64_t>(positions.size()), hidden.cols());
  for (size_t m = 0; m < positions.size(); ++m) {
    if (positions[m] < 0 || positions[m] >= hidden.rows())
      throw InvalidInput("masked position " + std::to_string(positions[m]) + " is outside the sequence [0, " +
                         std::to_string(hidden.rows()) + ")");
    x.row(static_cast<int64_t>(m)) = hidden.row(positions[m]);
  }
  return layer_norm(activation(linear(lm.dense, x), model.config.hidden_act), lm.norm);
}

void require_lm_head(const Model& model) {
  if (!model.weights.lm_head)
    throw Error(model.weights_path + ": this checkpoint has no masked-LM head (lm_predictions.lm_head.* or cls.predictions.*)");
}

}  // namespace

Matrix mlm_logits(const Model& model, const Matrix& hidden, const std::vector<int64_t>& positions) {
  require_lm_head(model);
  // BertLMPredictionHead: transform h = LN(act(x W_dᵀ + b_d)), then the tied decoder h Eᵀ + bias.
  const Matrix h = lm_transform(model, hidden, positions);
  return tied_decoder_logits(h, model.weights.embeddings.word, model.weights.lm_head->bias);
}

std::vector<Matrix> mlm_logits(const Model& model, const std::vector<const Matrix*>& hidden,
                               const std::vector<int64_t>& positions) {
  require_lm_head(model);
  const StoredMatrix& E = model.weights.embeddings.word;
  const Vector& bias = model.weights.lm_head->bias;
  std::vector<Matrix> h;
  for (const Matrix* states : hidden) h.push_back(lm_transform(model, *states, positions));
  std::vector<const Matrix*> states;
  for (const Matrix& rows : h) states.push_back(&rows);
  return ops::tied_decoder(states, E, bias);  // with few positions, one pass over E for all states
}

Matrix tied_decoder_logits(const Matrix& h, const StoredMatrix& E, const Vector& bias) {
  return std::move(ops::tied_decoder({&h}, E, bias)[0]);
}

}  // namespace deberta
