// ops.h — the operations the equations and the model need from an engine, behind one interface
// (docs/architecture.md). Two backends implement every op:
//   fast       (fast.cpp)       a SIMD kernel on operands packed in panels, tiles shared between
//                               threads; the results do not depend on the thread count
//                               (panel_gemm.h, gemm_nt.h, threading.h)
//   reference  (reference.cpp)  each op one Eigen expression or one straight loop, on one thread;
//                               its `attention` is the equations layer's `attention_head`, handed
//                               over at start-up (`set_reference_attention`)
// `deberta::set_backend` (deberta/backend.h) picks one at run time; DEBERTA_BACKEND sets the
// starting choice. Both give the same numbers to rounding (tests/test_backend_ops.cpp).
//
// Internal: never installed; only core/src includes it.
#pragma once

#include "deberta/backend.h"
#include "deberta/tensor.h"
#include "deberta/terms.h"
#include "deberta/weights.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace deberta::ops {

/// The registry: every op of this interface, listed once (as ggml's test-backend-ops lists its
/// ops). Both backends implement each one, and tests/test_backend_ops.cpp compares the fast backend
/// with the reference on every entry, failing for an entry it has no comparison for: an op added
/// here cannot skip its test. (`fast::vector_erf` is a query, `pack_weights` a preparation that
/// changes no number (tests/test_threads.cpp), and `set_reference_attention` the reference
/// backend's eq. 4 handed over by the equations layer: not ops.)
#define DEBERTA_OPS(X) X(products) X(linear) X(tied_decoder) X(for_rows) X(gelu_erf) X(tasks) X(attention)

#define DEBERTA_OP_NAME(op) #op,
/// The names of DEBERTA_OPS, in its order.
inline constexpr const char* kOpNames[] = {DEBERTA_OPS(DEBERTA_OP_NAME)};
#undef DEBERTA_OP_NAME

/// The packed copy of some linear layers' weights (opaque; the fast backend's): see `pack_weights`.
class PackedWeights;

/// Elementwise work applied in place to a block of a product's output (an activation): the block
/// may be any rectangle of y, so the work must treat each entry alone.
using BlockFn = std::function<void(Eigen::Ref<Matrix> block)>;

/// Work on rows [first, last) of a finished product (every column computed, the residual added):
/// a LayerNorm of those rows. Blocks of rows may be handed over in any order, each exactly once.
using RowsFn = std::function<void(int64_t first, int64_t last)>;

/// One product y = x Wᵀ + b of a set, then optional steps in this order: `elementwise` on y,
/// `y += *residual`, `rows_done` on finished rows.
struct Product {
  Product() = default;
  Product(const Linear* layer_, const Matrix* x_, Matrix* y_, bool rows_independent_ = false)
      : layer(layer_), x(x_), y(y_), rows_independent(rows_independent_) {}

  const Linear* layer = nullptr;     ///< W `[out, in]`, b `[out]` (empty: no bias)
  const Matrix* x = nullptr;         ///< `[N, in]`
  Matrix* y = nullptr;               ///< output, resized to `[N, out]`
  /// Each row's bits must not depend on the other rows of x (the position projections: rows
  /// projected with the whole table or alone are then the same bits).
  bool rows_independent = false;
  BlockFn elementwise;               ///< e.g. the feed-forward's activation
  const Matrix* residual = nullptr;  ///< `[N, out]`
  RowsFn rows_done;                  ///< e.g. the post-LN blocks' LayerNorm
};

/// Runs a set of products (the five projections of an attention sub-layer, say) as one piece of
/// work. `packed`: a model's packed weights (`pack_weights`, kept in its `ModelWorkspace`), or null;
/// a product whose W is in it reads its panels instead of packing W — unless the matrix has since
/// been replaced (another buffer or shape). The same bits with or without (tests/test_threads.cpp);
/// the reference backend ignores it. On the reference backend the steps run one after the other
/// on the whole of y (so `rows_done` once on all rows): a post-LN block's product with its steps
/// is then, operation for operation, the equations' `residual_layer_norm` / `feed_forward`.
/// Errors: x's width ≠ W's `in`; a residual that is not `[N, out]`; the first exception of an
/// elementwise or rows_done step, rethrown once every thread has stopped.
void products(const std::vector<Product>& set, const PackedWeights* packed = nullptr);

/// y = x Wᵀ + b `[N, out]` for x `[N, in]`: a product of `products` (threaded; W read in place for
/// at most 32 rows, packed above). Fast: a row's bits depend neither on N nor on the thread count.
/// W is in its stored precision (weights.h `StoredMatrix`): the fast backend widens it where it
/// reads it (while packing its panels, or a few rows at a time into a buffer of the thread); the
/// reference widens it for the one product (freed on return; F64 read in place). Exact, so the
/// bits are those of a float64 W.
/// Errors: x's width ≠ `in`.
Matrix linear(const Linear& layer, const Matrix& x);

/// logits_g = h_g Eᵀ + bias `[M, V]` for each h_g `[M, H]` of `h` (several hidden states at the same
/// M positions: the EMD's output and the last layer's, say), E `[V, H]`, bias `[V]`: the tied MLM
/// decoder. Each result has the bits of its state decoded alone. Fast: when the states have few
/// rows (≤ 32, the products' W-in-place regime), they are stacked into one pass over E (a logit's
/// bits do not depend on M there). E in its stored precision (weights.h): the fast backend widens
/// kPanelRows rows at a time as it reads them; the reference widens E for the one product (a
/// float64 temporary of E's size, freed on return; in place when E is F64).
/// Errors: shapes that do not fit (the first state's that does not).
std::vector<Matrix> tied_decoder(const std::vector<const Matrix*>& h, const StoredMatrix& E, const Vector& bias);

/// body(first, last) over ranges covering [0, rows) of rows `cols` entries wide, where every row is
/// independent of the others (LayerNorm, an activation). Errors: the first exception of a range.
void for_rows(int64_t rows, int64_t cols, const RowsFn& body);

/// x ← GELU(x) = 0.5 · x · (1 + erf(x / √2)) entrywise, in place, on any block of a matrix (Hugging
/// Face's "gelu", the exact erf form; `deberta::gelu` is its definition for one number). Each
/// entry's bits depend on its value only, not on its place in the block, so a product's tiles get
/// the entries of the whole. Reference: `std::erf` per entry. Fast: glibc's vector erf where the
/// build has it (fast_elementwise.cpp), within a few ulp of the scalar one. No errors.
void gelu_erf(Eigen::Ref<Matrix> x);

/// task(0) … task(count − 1), independent pieces of work each writing only its own outputs (the
/// heads of an attention sub-layer). Errors: the first exception a task throws.
void tasks(int64_t count, const std::function<void(int64_t)>& task);

/// One head's operands of eq. 4 (the equations layer's `HeadProjections` and `AttentionSetup`, in
/// the tensor layer's types): N queries, N keys, d features, R projected table rows.
/// The five projections may be a layer's whole ones (`[N, A]`, `[R, A]`) with the head's window of
/// columns given (`column0`, `columns`): the forward passes them so, and each backend reads the
/// head's columns in place (the fast one packs them straight from there, with no copy of the head).
struct AttentionHead {
  const Matrix* Q_c = nullptr;  ///< `[N, d]`, or `[N, A]` with the window
  const Matrix* K_c = nullptr;  ///< `[N, d]`, or `[N, A]` with the window
  const Matrix* V_c = nullptr;  ///< `[N, d]`, or `[N, A]` with the window
  const Matrix* K_r = nullptr;  ///< `[R, d]` (c2p, p2p; may be null or empty when neither is on), or `[R, A]`
  const Matrix* Q_r = nullptr;  ///< `[R, d]` (p2c, p2p; likewise), or `[R, A]`
  /// The head's columns of the five: [column0, column0 + columns), or all of them when columns < 0.
  int64_t column0 = 0, columns = -1;
  /// d: the head's width (`columns`, or Q_c's width when the window is all of it).
  int64_t d() const { return columns >= 0 ? columns : Q_c ? Q_c->cols() : 0; }
  /// The head's window of one of the five (`[rows, d]`, read in place).
  Eigen::Block<const Matrix> of(const Matrix& m) const { return m.middleCols(column0, d()); }
  const IndexMatrix* c2p_row = nullptr;  ///< `[N, N]` table row of K_r for (i, j) (c2p, p2p)
  const IndexMatrix* p2c_row = nullptr;  ///< `[N, N]` table row of Q_r for (i, j) (p2c, p2p)
  int64_t row_offset = 0;                ///< table row of K_r's / Q_r's first row
  /// The least and greatest table row in the index matrices of the active terms, when the caller
  /// knows them (the sequence context does: `SequenceContext::row_lo`, `row_hi`); checked against
  /// K_r's and Q_r's rows instead of scanning the N² indices for every head. -1: scan.
  int64_t rows_lo = -1, rows_hi = -1;
  /// Optional, when the table row of (i, j) depends on i − j alone (one sequence's δ(i, j) does):
  /// `c2p_by_distance[i − j + N − 1]` = (*c2p_row)(i, j), `[2N − 1]`, and likewise for p2c. The
  /// fast backend then reads these 2N − 1 numbers instead of the N² of the matrices (4 MB at
  /// N = 512, read again by every head); the reference reads the matrices. The caller vouches that
  /// both agree (`SequenceContext` builds them from its matrices and checks). Null: the matrices.
  const int64_t* c2p_by_distance = nullptr;
  const int64_t* p2c_by_distance = nullptr;
  PerTerm<bool> terms;                   ///< the terms in the sum
  double scale = 1;                      ///< s, applied to each term before the sum
  const Vector* mask = nullptr;          ///< `[N]`, 1 = token (queries and keys)
  bool masked = false;                   ///< a head switched off: probabilities 0, context 0
  /// When set, `[N, A]`: the head's context goes into its window of these columns (the layer's
  /// context, each head writing its own), and the result's `context` is left empty.
  Matrix* context_out = nullptr;
};

/// What `attention` gives for one head (the equations layer's `HeadResult`, in the tensor layer's
/// types): the context always, the rest when asked for.
struct AttentionResult {
  PerTerm<Matrix> terms;  ///< each active term's scaled map `[N, N]` (keep_maps)
  Matrix logits;          ///< Ã `[N, N]`, their sum (keep_maps)
  Matrix probs;           ///< `[N, N]` (keep_probs)
  Matrix context;         ///< `[N, d]` (empty when the head has a `context_out`)
};

/// eq. 4 whole for each of `heads` (an attention sub-layer's), into (*out)[h]: Ã = the active terms,
/// each scaled by s, summed in the reference's order ((c2p + p2c) + p2p) + c2c; the masked softmax
/// of each row (a padding query, or one with no key that counts, gets zeros; a `masked` head gets
/// zeros everywhere); context = probs · V_c `[N, d]`.
/// Reference: the equations layer's `attention_head` itself, one head after the other, on copies of
/// each head's columns (the backend sits below the equations and cannot call them: the equations
/// layer hands it over, `set_reference_attention`). Fast (fast_attention.cpp): a task per head
/// packs its operands from its columns and forms K_c Q_rᵀ (p2c) over the table rows each group of
/// keys reads, then takes blocks of 32 query rows, each gathered, summed, normalised and multiplied
/// by V_c while in cache, never forming a term's `[N, N]` map unless `keep_maps`; its numbers are
/// `attention_head`'s to rounding (≤ 1e-12 relative, tests/test_backend_ops.cpp). A head's bits
/// depend neither on the other heads nor on the thread count.
/// Errors: a term on whose projection or table rows are missing or do not fit; operands whose
/// shapes differ (the first such head's); the reference backend with no eq. 4 handed over.
void attention(const std::vector<AttentionHead>& heads, std::vector<AttentionResult>* out, bool keep_probs,
               bool keep_maps);

/// eq. 4 whole for one head (its operands checked), as `attention` gives it: the terms and logits
/// when `keep_maps`, the probabilities when `keep_probs`, the context (or into `context_out`).
using HeadAttention = void (*)(const AttentionHead& head, AttentionResult* out, bool keep_probs, bool keep_maps);

/// Hands the reference backend its eq. 4: the equations layer passes its `attention_head` (as a
/// `HeadAttention` on one head's columns) when the program starts (equations.cpp). The last one
/// given holds. Returns true (so that it can initialise a constant). No errors.
bool set_reference_attention(HeadAttention head);

// ----------------------------------------------------------------------------------------------
// Weights packed once per model (issue 43, item 5). The fast backend's products read W as panels
// (backend/panel_gemm.h); packing them costs a pass over W, which a forward otherwise pays in
// every product. A model keeps its packed copy (`ModelWorkspace::packed`) and gives it to its
// products (`products`' `packed`). Same bits either way: a product packs the same panels itself
// when W has none. The reference backend ignores all of this.

/// Whether models keep packed weights: the environment's DEBERTA_PACK_WEIGHTS (1 = yes, 0 = no)
/// when set, else no. Off by default since issue 60: the packed copy is float64, twice an fp32
/// checkpoint's encoder bytes and four times an fp16 one's, while the memory goal is 1.3× the
/// checkpoint (docs/performance.md, "Memory"); each product then packs its panels (widening W)
/// as the page always did. No errors.
bool packing_weights();

/// Packs the weights of `layers` (empty ones skipped; each layer's W once) as tasks on the
/// threads. Null when the current backend is the reference one or `packing_weights()` is false.
/// Memory: 8 bytes per encoder weight value (xsmall: 170 MB; base: 680 MB). Edits of a weight in
/// place must drop the packed copy (`Model::weights_changed`). Errors: std::bad_alloc.
std::shared_ptr<const PackedWeights> pack_weights(const std::vector<const Linear*>& layers);

/// Bytes held by `packed` (0 for null).
size_t packed_bytes(const PackedWeights* packed);

namespace reference {
void products(const std::vector<Product>& set);
Matrix linear(const Linear& layer, const Matrix& x);
Matrix tied_decoder(const Matrix& h, const StoredMatrix& E, const Vector& bias);
void for_rows(int64_t rows, const RowsFn& body);
void tasks(int64_t count, const std::function<void(int64_t)>& task);
void gelu_erf(Eigen::Ref<Matrix> x);
/// `attention`: the handed-over `attention_head` on each head in turn.
void head_by_head(const std::vector<AttentionHead>& heads, std::vector<AttentionResult>* out, bool keep_probs,
                  bool keep_maps);
}  // namespace reference

namespace fast {
void products(const std::vector<Product>& set, const PackedWeights* packed = nullptr);
Matrix linear(const Linear& layer, const Matrix& x);
Matrix tied_decoder(const Matrix& h, const StoredMatrix& E, const Vector& bias, bool rows_independent);
/// Whether `rows` rows are few (≤ 32): the products then read W in place instead of packing it.
bool few_rows(int64_t rows);
void for_rows(int64_t rows, int64_t cols, const RowsFn& body);
void tasks(int64_t count, const std::function<void(int64_t)>& task);
void gelu_erf(Eigen::Ref<Matrix> x);
void attention(const std::vector<AttentionHead>& heads, std::vector<AttentionResult>* out, bool keep_probs,
               bool keep_maps);
/// One head (tests): `attention` on {head}.
void attention(const AttentionHead& head, AttentionResult* out, bool keep_probs, bool keep_maps);
/// Whether `gelu_erf` runs on glibc's vector erf in this build (else the scalar erf).
bool vector_erf();
}  // namespace fast

// ----------------------------------------------------------------------------------------------
// What the engine can hold (parallel.cpp): the forward pass sizes its N × N maps before it
// allocates them.

/// Refuses (Error) a forward pass whose attention maps will not fit in the memory this process may
/// use (`usable_memory_bytes`):
/// `kept_maps` N x N double matrices kept in the trace, plus `transient_maps` alive at once while
/// the heads run. The message gives the token count, the bytes needed and the bytes available.
void check_attention_memory(int64_t n_tokens, int64_t kept_maps, int64_t transient_maps);

/// `check_attention_memory` for a forward pass of `heads` heads a layer, each needing
/// `maps_per_head` N x N maps while it runs: the backend counts how many may run at once (as many
/// as the threads, at most `heads`; counted so on either backend). Errors: as
/// `check_attention_memory`.
void check_forward_memory(int64_t n_tokens, int64_t kept_maps, int64_t heads, int64_t maps_per_head);

/// Physical memory of this machine in bytes (0 when unknown).
uint64_t physical_memory_bytes();

/// The memory this process may use, in bytes: the least of the physical memory, the address-space
/// limit (RLIMIT_AS, as `ulimit -v` / `prlimit --as` set it) and the cgroup's memory limit
/// (v2 `memory.max`, v1 `memory.limit_in_bytes`); 0 when none is known. Issue 44, class 3.
uint64_t usable_memory_bytes();

/// The shape checks both backends make before a product. Errors: as `products`.
void check_product(const Product& p);

}  // namespace deberta::ops
