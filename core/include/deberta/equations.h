// equations.h — DeBERTa's equations, one function each, in float64.
//
// Source: He, Liu, Gao, Chen, "DeBERTa: Decoding-enhanced BERT with Disentangled Attention",
// ICLR 2021 (arXiv:2006.03654v6), and the released reference code where it differs:
// Hugging Face transformers v4.27 `modeling_deberta.py` / `modeling_deberta_v2.py`,
// microsoft/DeBERTa `apps/models/masked_language_model.py`. docs/equations.md maps each
// equation to its function; docs/paper-vs-code.md lists the differences.
//
// Conventions: N = sequence length, H = hidden size, d = head width, k = relative span
// (the relative table has 2k rows), R = number of table rows a sequence uses. Index i is the
// query (row of every score matrix), j the key (column).
#pragma once

#include "deberta/config.h"
#include "deberta/tensor.h"
#include "deberta/terms.h"
#include "deberta/weights.h"

#include <string>
#include <vector>

namespace deberta {

// ----------------------------------------------------------------------------------------------
// Relative positions (eq. 3 and the v2 log buckets)

/// A linear layer on the rows of `x [N, in]`: `[N, out]` = x Wᵀ + b (W `[out, in]`, b `[out]` or
/// none), PyTorch's `nn.Linear`. Every projection of the model (Q_c, K_c, V_c, Q_r, K_r, the
/// feed-forward, the heads) is this product; the backend's ops compute it (bitwise the same on any
/// thread count). Errors: x's width ≠ `in`.
Matrix linear(const Linear& layer, const Matrix& x);

/// eq. 3: the relative distance δ(i, j) ∈ [0, 2k) from token i to token j:
/// 0 if i − j ≤ −k; 2k − 1 if i − j ≥ k; i − j + k otherwise. Units: rows of the relative table.
/// Errors: k < 1.
int64_t relative_distance(int64_t i, int64_t j, int64_t k);

/// DeBERTa-v2 log-bucketed relative position (reference `make_log_bucket_position`), mid = b/2:
/// r if |r| ≤ mid, else sign(r)·(⌈log(|r|/mid) / log((m−1)/mid) · (mid−1)⌉ + mid).
/// `buckets` = position_buckets b, `max_position` = max_relative_positions m. No clamping to m
/// happens here (as in the reference), so |result| can exceed b − 1 for |r| ≥ m.
int64_t log_bucket_position(int64_t r, int64_t buckets, int64_t max_position);

/// The working of log_bucket_position(r, b, m), every intermediate number of the formula, so that
/// a lesson or a figure shows the same arithmetic the model runs (not a copy of it):
/// exact = |r| ≤ mid; otherwise scaled = log(|r|/mid) / log((m−1)/mid) · (mid−1) (integers
/// snapped as in log_bucket_position) and bucket = sign(r)·(⌈scaled⌉ + mid).
struct LogBucketWorking {
  int64_t r = 0;        ///< the relative position i − j
  int64_t mid = 0;      ///< b/2: |r| up to mid keeps its own bucket
  bool exact = true;    ///< |r| ≤ mid: bucket = r
  double scaled = 0;    ///< log(|r|/mid) / log((m−1)/mid) · (mid−1), before the ceiling (0 when exact)
  int64_t bucket = 0;   ///< = log_bucket_position(r, b, m)
};
/// Errors: none (as log_bucket_position).
LogBucketWorking log_bucket_working(int64_t r, int64_t buckets, int64_t max_position);

/// Which reference code's relative positions to follow. The two differ only for log-bucketed
/// models (v2/v3) and only where |i − j| ≥ max_relative_positions m (docs/paper-vs-code.md §4).
enum class RelativePositionRule {
  HuggingFace,  ///< transformers `build_relative_position`: bucket i − j as it is (default)
  Microsoft,    ///< microsoft/DeBERTa `da_utils.make_log_bucket_position`: clamp i − j to ±(m − 1) first
};
/// "hf" | "microsoft".
const char* relative_position_rule_key(RelativePositionRule rule);
/// Parses "hf" | "microsoft". Errors: any other string.
RelativePositionRule parse_relative_position_rule(const std::string& key);

/// Relative position of every query i to every key j, `[N_q, N_k]`: i − j, log-bucketed when the
/// config has `position_buckets` > 0 (v2). With `RelativePositionRule::Microsoft` and log buckets,
/// i − j is first clamped to [−(m − 1), m − 1] (m = max_relative_positions), as microsoft/DeBERTa
/// does; without log buckets both rules give i − j. Reference: `build_relative_position` of
/// Hugging Face transformers (default) or of microsoft/DeBERTa `DeBERTa/deberta/da_utils.py`.
IndexMatrix relative_positions(int64_t n_query, int64_t n_key, const ModelConfig& config,
                               RelativePositionRule rule = RelativePositionRule::HuggingFace);

/// The relative-table row read at (i, j) for relative positions `rel_pos [N_q, N_k]`:
/// δ applied to the (bucketed) position, clamp(rel_pos + k, 0, 2k − 1) (eq. 3), i.e. `c2p_row`.
/// With `window` K < k the model sees less distance: the position is first clamped to
/// [−K, K − 1], so only the central 2K rows are read. `window` ≤ 0 means K = k.
IndexMatrix table_rows(const IndexMatrix& rel_pos, int64_t k, int64_t window = 0);

// ----------------------------------------------------------------------------------------------
// Elementwise functions and LayerNorm

/// GELU, exact form x·Φ(x) = x/2 · (1 + erf(x/√2)) ("gelu" in Hugging Face configs).
double gelu(double x);
/// Applies an activation elementwise to `x` (any shape). Errors: none.
Matrix activation(const Matrix& x, Activation act);
/// The same on a temporary, in its own memory (the feed-forward's `activation(linear(…))`).
Matrix activation(Matrix&& x, Activation act);
/// `activation` in place on any block of a matrix (rows, columns, the whole): each entry's bits
/// depend on its value only, so a block's entries are bitwise those of the whole matrix. The
/// equations' `feed_forward` applies it to the whole product (`activation`); the model layer's
/// fused feed-forward (`post_ln_feed_forward`, model.cpp) to each tile of its product
/// (`ops::Product::elementwise`), bitwise the same. The exact GELU runs on the backend's
/// `gelu_erf` (the fast backend's vector erf is within a few ulp of `std::erf`); every other
/// activation is its scalar formula per entry. Errors: none.
void activation_in_place(Eigen::Ref<Matrix> x, Activation act);
/// LayerNorm over each row of `x [N, H]` with biased variance: (x − μ)/√(σ² + eps) · γ + β.
Matrix layer_norm(const Matrix& x, const LayerNormParams& p);
/// `layer_norm` of x's rows [first, last) into the same rows of `*y` (already `[N, H]`): the one
/// definition of a row's LayerNorm, so rows normalised in any grouping (threads, the post-LN
/// blocks' tiles: a product's `rows_done` step) are bitwise those of `layer_norm`. Errors: none.
void layer_norm_rows(const Matrix& x, int64_t first, int64_t last, const LayerNormParams& p, Matrix* y);

// ----------------------------------------------------------------------------------------------
// Embeddings and the relative table

/// Input embeddings `[N, H]`: word (+ absolute position when `position_biased_input`) (+ token
/// type when `type_vocab_size` > 0), projected E → H when `embedding_size` ≠ H, LayerNorm-ed and
/// multiplied by the mask. Reference: `DebertaEmbeddings.forward`.
/// `input_ids`, `token_type_ids` `[N]`, `mask [N]` of 0/1.
/// Errors: an id outside the vocabulary / type vocabulary; N > max_position_embeddings when
/// absolute positions are added.
Matrix embed(const ModelConfig& config, const EmbeddingWeights& w, const std::vector<int64_t>& input_ids,
             const std::vector<int64_t>& token_type_ids, const Vector& mask);

/// The relative-position embedding table P as the attention reads it, `[2k, H]`: the raw
/// `encoder.rel_embeddings.weight`, LayerNorm-ed in v2 when `norm_rel_ebd` = layer_norm.
Matrix relative_embedding_table(const ModelConfig& config, const ModelWeights& w);

// ----------------------------------------------------------------------------------------------
// eq. 4: disentangled attention, per head. Q_c, K_c: `[N, d]` content projections of one head;
// Q_r, K_r: `[R, d]` projections of table rows row_offset … row_offset + R − 1; rows: `[N_q, N_k]`
// table rows (whole-table coordinates). s is the scale 1/√(d · scale_factor).

/// eq. 4, c2c term: c2c[i, j] = s · Q_c[i] · K_c[j]. Returns `[N_q, N_k]`.
Matrix content_to_content(const Matrix& Q_c, const Matrix& K_c, double s);

/// eq. 4, c2p term: c2p[i, j] = s · Q_c[i] · K_r[δ(i, j)]. Computed as the reference does: all
/// products Q_c K_rᵀ `[N_q, R]`, then gathered at `rows`. Returns `[N_q, N_k]`.
Matrix content_to_position(const Matrix& Q_c, const Matrix& K_r, const IndexMatrix& rows, int64_t row_offset,
                           double s);

/// eq. 4, p2c term: p2c[i, j] = s · K_c[j] · Q_r[rows(i, j)]. The reference code passes the row of
/// i − j (the same `rows` as c2p); the paper writes δ(j, i) (pass the mirrored rows).
/// Returns `[N_q, N_k]`.
Matrix position_to_content(const Matrix& K_c, const Matrix& Q_r, const IndexMatrix& rows, int64_t row_offset,
                           double s);

/// eq. 2, fourth term (dropped by the paper, never computed by the reference code): the
/// position-to-position score p2p[i, j] = s · Q_r[p2c_rows(i, j)] · K_r[c2p_rows(i, j)], a pure
/// function of the relative position. Returns `[N_q, N_k]`.
Matrix position_to_position(const Matrix& Q_r, const Matrix& K_r, const IndexMatrix& p2c_rows,
                            const IndexMatrix& c2p_rows, int64_t row_offset, double s);

/// Masked softmax over keys of `logits [N_q, N_k]` with 0/1 masks `mask_q [N_q]`, `mask_k [N_k]`:
/// the pair (i, j) is valid when mask_q[i]·mask_k[j] = 1; invalid logits are excluded and get
/// probability 0; a query row with no valid key is all zero. Reference: `XSoftmax`.
Matrix masked_softmax(const Matrix& logits, const Vector& mask_q, const Vector& mask_k);
/// The same, overwriting `logits` with the probabilities (no second `[N_q, N_k]` buffer): the same
/// arithmetic, so the same bits. Used when the logits are not kept (`attention_head`).
Matrix masked_softmax(Matrix&& logits, const Vector& mask_q, const Vector& mask_k);

/// log Σ_v exp(logits(m, v)) of row m, shifted by the row's maximum (the one definition of a
/// row's normaliser). `logits [M, V]`, m in [0, M).
double log_sum_exp_row(const Matrix& logits, int64_t m);

/// Row-wise log-softmax of `logits [M, V]` → `[M, V]`: logits(m, v) − log_sum_exp_row(logits, m).
/// The same numbers on either backend and at any thread count (rows are independent).
Matrix log_softmax_rows(const Matrix& logits);

/// KL(p ‖ q) = Σ_v p_v (log p_v − log q_v) in nats for two log-probability vectors `[V]`. Not clamped:
/// mathematically ≥ 0, it may come out a few ulps below 0 when p = q. Errors: vectors of different sizes.
double kl_divergence(const Vector& log_p, const Vector& log_q);

/// Attention context of one head: probs `[N_q, N_k]` · V_c `[N_k, d]` → `[N_q, d]` (eq. 4, last line).
Matrix attention_context(const Matrix& probs, const Matrix& V_c);

// ----------------------------------------------------------------------------------------------
// eq. 4 whole: one attention head, from its projections to its context

/// One head's slices of an attention sub-layer's projections (head h owns columns h·d … h·d + d − 1):
/// content `[N, d]` (Q_c of the query input, K_c and V_c of the key/value input) and position
/// `[R, d]` of table rows row_offset … row_offset + R − 1 (empty when no active term reads them).
struct HeadProjections {
  Matrix Q_c, K_c, V_c, Q_r, K_r;
  int64_t row_offset = 0;
};

/// What eq. 4 reads of the sequence besides a head's projections: which terms are on, the scale,
/// the table rows each relative term reads and the 0/1 mask. Views: the matrices pointed to must
/// outlive the call. (The model fills one per sequence from its `SequenceContext`.)
struct AttentionSetup {
  PerTerm<bool> terms;                   ///< the terms in the sum
  double scale = 1;                      ///< s = 1/√(f·d), f the scale factor (the paper's f = 3)
  const IndexMatrix* c2p_row = nullptr;  ///< `[N_q, N_k]`: row δ(i, j) read by c2p (and p2p's key side)
  const IndexMatrix* p2c_row = nullptr;  ///< `[N_q, N_k]`: row read by p2c (and p2p's query side)
  const Vector* mask = nullptr;          ///< `[N]` 0/1, of queries and keys (self-attention)
};

/// eq. 4, one term of one head, × s: `content_to_content`, `content_to_position`,
/// `position_to_content` or `position_to_position` with the rows and projections the term reads.
/// Returns `[N_q, N_k]`. Errors: a relative term whose projection (K_r, Q_r) or rows are missing.
Matrix term_scores(Term term, const HeadProjections& p, const AttentionSetup& a);

/// One head's eq. 4 terms, each × s, and their sum, all `[N_q, N_k]` with query i on the rows.
/// A term that is off stays empty.
struct HeadScores {
  PerTerm<Matrix> terms;
  Matrix logits;  ///< s·Ã: the sum of the active scaled terms (the paper's Ã/√(3d) when f = 3)
};

/// eq. 4: the attention scores of one head, s·Ã[i, j] = c2c + c2p + p2c (+ p2p), Ã being the
/// unscaled sum of the active terms. Each term is scaled before the sum, and the sum is taken in
/// the reference code's order, c2c + ((c2p + p2c) + p2p) (Hugging Face
/// `DisentangledSelfAttention.forward`: `rel_att` first, then added to the c2c scores), so the
/// doubles are the reference's. With `keep_terms` false only `logits` is returned (each term's map
/// dropped once added): the same doubles (tests/test_equations.cpp, "eq. 4 whole", and
/// tests/test_ablation.cpp's first case pin the bits). The one sum of eq. 4 of the reference
/// engine: `attention_head` runs it, and the reference backend's `ops::attention` is
/// `attention_head` (the fast backend's is its own, pinned to this one).
/// No terms on: all zero. Errors: as `term_scores`.
HeadScores attention_logits(const HeadProjections& p, const AttentionSetup& a, bool keep_terms = true);

/// One head's result: its scores, probabilities `[N_q, N_k]` and context `[N_q, d]`.
struct HeadResult {
  HeadScores scores;
  Matrix probs;
  Matrix context;
};

/// eq. 4 whole for one head: the scores s·Ã (`attention_logits`), the masked softmax over keys
/// (`masked_softmax`, all zero when `masked`: an ablated head) and the context probs · V_c.
/// With `keep_scores` false, `scores` stays empty and the probabilities overwrite the logits
/// (same bits). Errors: as `attention_logits`.
HeadResult attention_head(const HeadProjections& p, const AttentionSetup& a, bool masked, bool keep_scores = true);

// ----------------------------------------------------------------------------------------------
// The Enhanced Mask Decoder (§3.2, appendix A.8)

/// §3.2: the decoder's first query input I_0 = H + P, `[N, H]`: H the hidden states it decodes
/// from (the output of encoder layer L − 2), P the absolute position embeddings of positions
/// 0 … N − 1 (zero for a model that decodes without them). Errors: H and P differ in shape.
Matrix emd_query_input(const Matrix& H, const Matrix& P);

/// §3.2 / appendix A.8: the decoder's passes. `passes` times the shared last layer runs with query
/// I_t and key/value H, I_{t+1} = layer(I_t, H), from I_0 (`emd_query_input`). `layer(query, kv)`
/// runs one pass (`[N, H]` each) and returns its record, whose `output` `[N, H]` is I_{t+1}.
/// Returns the records in order (microsoft `EnhancedMaskDecoder`: n = 2 passes).
template <class Pass, class Layer>
std::vector<Pass> emd_passes(const Matrix& I_0, const Matrix& H, int passes, const Layer& layer) {
  std::vector<Pass> out;
  const Matrix* I_t = &I_0;
  for (int t = 0; t < passes; ++t) {
    out.push_back(layer(*I_t, H));
    I_t = &out.back().output;
  }
  return out;
}

/// Post-LN residual block: LayerNorm(x Wᵀ + b + residual). Shapes `[N, in]`, `[N, H]` → `[N, H]`.
/// Reference: `DebertaSelfOutput`, `DebertaOutput`. Errors: x's width ≠ `in`, residual ≠ `[N, H]`.
Matrix residual_layer_norm(const Matrix& x, const Linear& dense, const Matrix& residual, const LayerNormParams& norm);

/// Feed-forward sub-layer: LayerNorm(act(a W_iᵀ + b_i) W_oᵀ + b_o + a), `[N, H]` → `[N, H]`.
Matrix feed_forward(const Matrix& a, const LayerWeights& w, Activation act);

/// DeBERTa-v2 nGiE convolution (`ConvLayer`, applied after layer 0):
/// c = act(conv1d(x) with padding rows zeroed), result LayerNorm(residual + c) · mask.
/// `x [N, H]` is the layer-0 input (embedding output), `residual [N, H]` the layer-0 output.
Matrix ngie_convolution(const Matrix& x, const Matrix& residual, const Vector& mask, const ConvWeights& w,
                        int64_t groups, Activation act);

}  // namespace deberta
