// fast_attention.cpp — the fast backend's eq. 4 for one head (ops.h `attention`). The readable
// composition is the equations layer's `attention_head`: each term its own `[N, N]` map, then their
// sum, the softmax, the context, each an Eigen expression. Here, on the panel kernel
// (panel_gemm.h):
//   1. the products every block of rows reads whole: K_c Q_rᵀ `[N, R]` for p2c (its gather runs down
//      a column: key j's row for each query) and Q_r K_rᵀ `[R, R]` for p2p;
//   2. blocks of 32 query rows, each while it is in cache: its rows of Q_c K_cᵀ and Q_c K_rᵀ, each
//      active term's entries scaled by s, their sum Ã in the reference's order
//      ((c2p + p2c) + p2p) + c2c, the masked softmax of each row, and its rows of probs · V_c.
// A forward that keeps no term maps never forms one (at N = 512 each is 2 MB written and read
// back); one that keeps them gets them from the same arithmetic, so every trace level of a forward
// gives the same bits. The numbers are attention_head's to rounding (≤ 1e-12 relative;
// tests/test_backend_ops.cpp) and do not depend on the thread count (one head, one task).
#include "backend/ops.h"
#include "backend/panel_gemm.h"

#include <algorithm>
#include <cmath>

namespace deberta::ops::fast {

namespace {

constexpr int64_t kBlockRows = 32;
static_assert(kBlockRows % detail::kPanelRows == 0, "a block of rows must start on the packed input's row grid");

using Row = Eigen::Array<double, 1, Eigen::Dynamic>;
using Block = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// y `[rows, W rows]` = x's rows [row0, row0 + rows) · Wᵀ on the panel kernel.
void multiply(const detail::InputPanels& x, int64_t row0, int64_t rows, const detail::WeightPanels& W, Matrix* y) {
  y->resize(rows, W.count);
  detail::multiply_panels(W, 0, x, row0, rows, W.count, y->data(), y->cols(), /*from_zero=*/true);
}

// Keys per chunk of the p2c gather: query rows of a block read key j's row of K_c Q_rᵀ at nearby
// table rows, so a chunk of keys × the block's queries reads a few kB of it, kept in L1 while the
// whole block is served (row by row, each query would read every key's row once: a cache miss per
// entry at N = 512).
constexpr int64_t kKeyChunk = 32;

// The block's term maps, each entry scaled by s (`term[t]` `[rows, N]`, rows i0 …): the rows a full
// trace keeps, and the addends of the logits. c2c_rows / c2p_rows: the block's rows of Q_c K_cᵀ
// `[rows, N]` / Q_c K_rᵀ `[rows, R]`.
void term_rows(const AttentionHead& h, int64_t i0, int64_t rows, const Matrix& c2c_rows, const Matrix& c2p_rows,
               const Matrix& p2c_all, const Matrix& p2p_all, PerTerm<Block>& term) {
  const int64_t N = h.K_c->rows(), o = h.row_offset;
  const double s = h.scale;
  const PerTerm<bool>& on = h.terms;
  for (Term t : kAllTerms)
    if (on[t]) term[t].resize(rows, N);
  if (on[Term::c2p])
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t* idx = h.c2p_row->row(i0 + r).data();
      const double* scores = c2p_rows.row(r).data();
      double* out = &term[Term::c2p](r, 0);
      for (int64_t j = 0; j < N; ++j) out[j] = s * scores[idx[j] - o];
    }
  if (on[Term::p2c]) {
    const int64_t R = p2c_all.cols();
    for (int64_t j0 = 0; j0 < N; j0 += kKeyChunk) {
      const int64_t j1 = std::min(N, j0 + kKeyChunk);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t* idx = h.p2c_row->row(i0 + r).data();
        double* out = &term[Term::p2c](r, 0);
        for (int64_t j = j0; j < j1; ++j) out[j] = s * p2c_all.data()[j * R + idx[j] - o];
      }
    }
  }
  if (on[Term::p2p])
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t* c2p_idx = h.c2p_row->row(i0 + r).data();
      const int64_t* p2c_idx = h.p2c_row->row(i0 + r).data();
      for (int64_t j = 0; j < N; ++j) term[Term::p2p](r, j) = s * p2p_all(p2c_idx[j] - o, c2p_idx[j] - o);
    }
  if (on[Term::c2c]) term[Term::c2c] = s * c2c_rows.array();
}

// The block's logits Ã `[rows, N]` = ((c2p + p2c) + p2p) + c2c over the active terms (scaled
// already): each scaling and each addition rounded on its own, as the equations' sum of maps.
void sum_terms(const PerTerm<bool>& on, const PerTerm<Block>& term, Eigen::Ref<Matrix> logits) {
  bool first = true;
  for (Term t : {Term::c2p, Term::p2c, Term::p2p, Term::c2c}) {
    if (!on[t]) continue;
    if (first)
      logits = term[t].matrix();
    else
      logits += term[t].matrix();
    first = false;
  }
  if (first) logits.setZero();  // every term off
}

// The masked softmax of one row in place, as equations.cpp's `masked_softmax`: keys that count have
// mask 1 and a finite logit; a padding query, or one with no key that counts, gets zeros.
void softmax_row(double* row, int64_t N, bool query_counts, const Vector& mask) {
  Eigen::Map<Row> p(row, N);
  const Eigen::Array<bool, 1, Eigen::Dynamic> keep = (mask.transpose().array() != 0) && (p != -INFINITY);
  const double max_logit = query_counts ? keep.select(p, -INFINITY).maxCoeff() : -INFINITY;
  if (max_logit == -INFINITY) {
    p.setZero();
    return;
  }
  p = (p - max_logit).exp();
  p = keep.select(p, 0.0);
  p /= p.sum();
}

// A thread's working memory for its heads, kept between calls (grown, never shrunk): a head's
// operands in panels and its intermediate rows. Fresh buffers for every head cost more than the
// head's arithmetic at N = 128 (page faults: 1.2 ms against 0.24 ms a head).
struct Scratch {
  detail::InputPanels Q_c, K_c, Q_r, block_panels;
  detail::WeightPanels K_c_w, K_r_w, Q_r_w, V_c_w;
  Matrix p2c_all, p2p_all, block, c2c_rows, c2p_rows, context_rows;
  PerTerm<Block> term;
};

}  // namespace

void attention(const AttentionHead& h, AttentionResult* out, bool keep_probs, bool keep_maps) {
  const int64_t N = h.Q_c->rows(), d = h.Q_c->cols();
  const PerTerm<bool>& on = h.terms;
  thread_local Scratch scratch;
  Scratch& w = scratch;
  // The operands as panels, once per head.
  w.Q_c.reshape(N, d);
  w.Q_c.pack(*h.Q_c, 0, N);
  if (on[Term::c2c]) w.K_c_w.pack(*h.K_c, 0, N);
  if (on[Term::c2p] || on[Term::p2p]) w.K_r_w.pack(*h.K_r, 0, h.K_r->rows());
  w.V_c_w.pack_transposed(*h.V_c);
  if (on[Term::p2c]) {
    w.K_c.reshape(N, d);
    w.K_c.pack(*h.K_c, 0, N);
    w.Q_r_w.pack(*h.Q_r, 0, h.Q_r->rows());
    multiply(w.K_c, 0, N, w.Q_r_w, &w.p2c_all);  // [N, R]
  }
  if (on[Term::p2p]) {
    w.Q_r.reshape(h.Q_r->rows(), d);
    w.Q_r.pack(*h.Q_r, 0, h.Q_r->rows());
    multiply(w.Q_r, 0, h.Q_r->rows(), w.K_r_w, &w.p2p_all);  // [R, R]
  }

  out->context.resize(N, d);
  if (keep_probs) out->probs.resize(N, N);
  if (keep_maps) {
    for (Term t : kAllTerms) out->terms[t] = on[t] ? Matrix(N, N) : Matrix();
    out->logits.resize(N, N);
  }
  const int64_t block_capacity = std::min(N, kBlockRows);
  w.block.resize(block_capacity, N);
  w.block_panels.reshape(block_capacity, N);
  for (int64_t i0 = 0; i0 < N; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, N - i0);
    if (on[Term::c2c]) multiply(w.Q_c, i0, rows, w.K_c_w, &w.c2c_rows);
    if (on[Term::c2p]) multiply(w.Q_c, i0, rows, w.K_r_w, &w.c2p_rows);
    term_rows(h, i0, rows, w.c2c_rows, w.c2p_rows, w.p2c_all, w.p2p_all, w.term);
    auto logits = w.block.topRows(rows);
    sum_terms(on, w.term, logits);
    if (keep_maps) {
      for (Term t : kAllTerms)
        if (on[t]) out->terms[t].middleRows(i0, rows) = w.term[t].matrix();
      out->logits.middleRows(i0, rows) = logits;
    }
    for (int64_t r = 0; r < rows; ++r) softmax_row(w.block.row(r).data(), N, (*h.mask)[i0 + r] != 0, *h.mask);
    if (h.masked) logits.setZero();  // a head switched off: no attention, no context
    w.block_panels.pack(w.block, 0, rows);
    multiply(w.block_panels, 0, rows, w.V_c_w, &w.context_rows);
    out->context.middleRows(i0, rows) = w.context_rows;
    if (keep_probs) out->probs.middleRows(i0, rows) = logits;
  }
}

}  // namespace deberta::ops::fast
