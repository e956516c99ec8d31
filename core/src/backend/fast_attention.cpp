// fast_attention.cpp — the fast backend's eq. 4 for the heads of a layer (ops.h `attention`). The readable
// composition is the equations layer's `attention_head`: each term its own `[N, N]` map, then their
// sum, the softmax, the context, each an Eigen expression. Here, a task per head, on the panel
// kernel (panel_gemm.h):
//   0. the head's operands packed straight from its columns of the layer's projections (no copy of
//      the head first: 4–5 % of the heads' time at N = 128);
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
#include "backend/threading.h"

#include <algorithm>
#include <array>
#include <vector>
#include <cmath>
#include <utility>

namespace deberta::ops::fast {

namespace {

constexpr int64_t kBlockRows = 32;
static_assert(kBlockRows % detail::kPanelRows == 0, "a block of rows must start on the packed input's row grid");

using Row = Eigen::Array<double, 1, Eigen::Dynamic>;

// The row stride of a product read down its columns (p2c, p2p gather from many rows at once):
// `count` columns rounded to a cache line, plus one line. A row stride of a multiple of 4 kB
// (R = 512 table rows) would put the rows a block reads into the same few sets of the L1 cache,
// evicting each other.
int64_t padded_cols(int64_t count) { return (count + 7) / 8 * 8 + 8; }

// y `[rows, W rows]` = x's rows [row0, row0 + rows) · Wᵀ on the panel kernel; `padded`: y's rows
// `padded_cols` apart (its first W.count columns are the product's).
void multiply(const detail::InputPanels& x, int64_t row0, int64_t rows, const detail::WeightPanels& W, Matrix* y,
              bool padded = false) {
  y->resize(rows, padded ? padded_cols(W.count) : W.count);
  detail::multiply_panels(W, 0, x, row0, rows, W.count, y->data(), y->cols(), /*from_zero=*/true);
}

// The columns [lo, hi] (W's rows: table rows less the head's first) of y's rows [y_row0, y_row0 +
// rows) = x's rows [x_row0, x_row0 + rows) · Wᵀ, y already sized: the whole panels that hold them,
// no others. For the position products, whose rows a block of queries (c2p) or a group of keys
// (p2c) reads only in part: a band of about N + 32 of the 2N − 1 table rows when the table is not
// bucketed (N = 128 on xsmall: 33 % of c2p's arithmetic and 41 % of p2c's skipped). Each entry
// computed gets the bits of the whole product (panel_gemm.h: its dot product in the order of k);
// the others are never read.
void multiply_band(const detail::InputPanels& x, int64_t x_row0, int64_t rows, const detail::WeightPanels& W,
                   int64_t lo, int64_t hi, Matrix* y, int64_t y_row0) {
  if (hi < lo || rows <= 0) return;
  const int64_t p0 = lo / detail::kPanelCols, c0 = p0 * detail::kPanelCols;
  const int64_t c1 = std::min(W.count, (hi / detail::kPanelCols + 1) * detail::kPanelCols);
  detail::multiply_panels(W, p0, x, x_row0, rows, c1 - c0, y->data() + y_row0 * y->cols() + c0, y->cols(),
                          /*from_zero=*/true);
}

// The least and greatest table row one term's index gives for queries [i0, i0 + rows) against
// every key (`by_queries`), or for every query against keys [i0, i0 + rows): from the distance
// vector (entry i − j + N − 1) when given, else from the index matrix.
std::pair<int64_t, int64_t> table_rows_read(const int64_t* by_distance, const IndexMatrix& index, int64_t N, int64_t i0,
                                            int64_t rows, bool by_queries) {
  if (by_distance) {
    // Queries i0 … i0 + rows − 1 against keys 0 … N − 1: entries i0 … i0 + rows + N − 2; keys
    // j0 … j0 + rows − 1 against queries 0 … N − 1: entries N − j0 − rows … 2N − 2 − j0.
    const int64_t first = by_queries ? i0 : N - i0 - rows, count = rows + N - 1;
    const auto [lo, hi] = std::minmax_element(by_distance + first, by_distance + first + count);
    return {*lo, *hi};
  }
  const auto part = by_queries ? index.block(i0, 0, rows, N) : index.block(0, i0, N, rows);
  return {part.minCoeff(), part.maxCoeff()};
}

// Keys per chunk of a block's logits: query rows of a block read key j's row of K_c Q_rᵀ (p2c) at
// nearby table rows, so a chunk of keys × the block's queries reads a few kB of it, kept in L1 while
// the whole block is served (row by row, each query would read every key's row once: a cache miss
// per entry at N = 512).
constexpr int64_t kKeyChunk = 32;

// What a block's logits are made of (views into the head's operands and the block's products).
struct BlockTerms {
  const AttentionHead* h;
  int64_t i0, rows;
  const Matrix* c2c_rows;  // the block's rows of Q_c K_cᵀ `[rows, N]`
  const Matrix* c2p_rows;  // the block's rows of Q_c K_rᵀ `[rows, R]`
  const Matrix* p2c_all;   // K_c Q_rᵀ `[N, R]` (rows padded)
  const Matrix* p2p_all;   // Q_r K_rᵀ `[R, R]` (rows padded)
};

// The block's logits Ã `[rows, N]` = ((c2p + p2c) + p2p) + c2c over the active terms, each entry of a
// term scaled by s first: every scaling and every addition rounded on its own, in the equations'
// order (this file is compiled without contraction into fused multiply-adds). One pass over the
// entries, a chunk of keys at a time; `Keep`: each scaled term also written to `maps` (rows i0 …
// of the trace's `[N, N]` maps), from the same values, so that keeping maps changes no bit.
template <bool C2P, bool P2C, bool P2P, bool C2C, bool Keep, bool ByDistance>
void block_logits(const BlockTerms& b, double* logits, int64_t ld, PerTerm<Matrix>* maps) {
  const AttentionHead& h = *b.h;
  const int64_t N = h.K_c->rows(), o = h.row_offset;
  const double s = h.scale;
  // Row strides of the position products (padded: see `multiply`).
  const int64_t ld_p2c = P2C ? b.p2c_all->cols() : 0, ld_p2p = P2P ? b.p2p_all->cols() : 0;
  for (int64_t j0 = 0; j0 < N; j0 += kKeyChunk) {
    const int64_t j1 = std::min(N, j0 + kKeyChunk);
    for (int64_t r = 0; r < b.rows; ++r) {
      const int64_t i = b.i0 + r;
      // Key j's table rows: row i of the index matrices at j, or (ByDistance) the distance vectors
      // at i − j + N − 1, read backwards from i + N − 1. (No two of the pointers below overlap.)
      const int64_t* __restrict c2p_idx = nullptr;
      const int64_t* __restrict p2c_idx = nullptr;
      if constexpr (ByDistance) {
        c2p_idx = h.c2p_by_distance ? h.c2p_by_distance + i + N - 1 : nullptr;
        p2c_idx = h.p2c_by_distance ? h.p2c_by_distance + i + N - 1 : nullptr;
      } else {
        c2p_idx = h.c2p_row ? h.c2p_row->row(i).data() : nullptr;
        p2c_idx = h.p2c_row ? h.p2c_row->row(i).data() : nullptr;
      }
      constexpr int64_t step = ByDistance ? -1 : 1;
      const double* __restrict c2p = C2P ? b.c2p_rows->row(r).data() - o : nullptr;  // indexed by table row
      const double* __restrict p2c = P2C ? b.p2c_all->data() - o : nullptr;          // key j's row at j · ld_p2c
      const double* __restrict p2p = P2P ? b.p2p_all->data() - o * ld_p2p - o : nullptr;
      const double* __restrict c2c = C2C ? b.c2c_rows->row(r).data() : nullptr;
      double* __restrict out = logits + r * ld;
      double *__restrict keep_c2p = nullptr, *__restrict keep_p2c = nullptr, *__restrict keep_p2p = nullptr,
             *__restrict keep_c2c = nullptr;
      if constexpr (Keep) {
        if (C2P) keep_c2p = (*maps)[Term::c2p].row(i).data();
        if (P2C) keep_p2c = (*maps)[Term::p2c].row(i).data();
        if (P2P) keep_p2p = (*maps)[Term::p2p].row(i).data();
        if (C2C) keep_c2c = (*maps)[Term::c2c].row(i).data();
      }
      for (int64_t j = j0; j < j1; ++j) {
        // ((c2p + p2c) + p2p) + c2c over the terms that are on: the first one starts the sum.
        double sum = 0;
        if constexpr (C2P) {
          const double t = s * c2p[c2p_idx[step * j]];
          if constexpr (Keep) keep_c2p[j] = t;
          sum = t;
        }
        if constexpr (P2C) {
          const double t = s * p2c[j * ld_p2c + p2c_idx[step * j]];
          if constexpr (Keep) keep_p2c[j] = t;
          sum = C2P ? sum + t : t;
        }
        if constexpr (P2P) {
          const double t = s * p2p[p2c_idx[step * j] * ld_p2p + c2p_idx[step * j]];
          if constexpr (Keep) keep_p2p[j] = t;
          sum = C2P || P2C ? sum + t : t;
        }
        if constexpr (C2C) {
          const double t = s * c2c[j];
          if constexpr (Keep) keep_c2c[j] = t;
          sum = C2P || P2C || P2P ? sum + t : t;
        }
        out[j] = sum;  // 0 when every term is off
      }
    }
  }
}

// `block_logits` for the terms that are on: a table of its instantiations, by bit mask (c2p 1,
// p2c 2, p2p 4, c2c 8, the distance vectors 16).
using BlockLogitsFn = void (*)(const BlockTerms&, double*, int64_t, PerTerm<Matrix>*);
template <bool Keep, size_t... I>
constexpr std::array<BlockLogitsFn, sizeof...(I)> block_logits_table(std::index_sequence<I...>) {
  return {&block_logits<(I & 1) != 0, (I & 2) != 0, (I & 4) != 0, (I & 8) != 0, Keep, (I & 16) != 0>...};
}
template <bool Keep>
void block_logits(const BlockTerms& b, double* logits, int64_t ld, PerTerm<Matrix>* maps) {
  static constexpr auto table = block_logits_table<Keep>(std::make_index_sequence<32>());
  const AttentionHead& h = *b.h;
  const PerTerm<bool>& on = h.terms;
  // The distance vectors, when given for every index the active terms read.
  const bool c2p_rows = on[Term::c2p] || on[Term::p2p], p2c_rows = on[Term::p2c] || on[Term::p2p];
  const bool by_distance = (!c2p_rows || h.c2p_by_distance) && (!p2c_rows || h.p2c_by_distance);
  const size_t which = (on[Term::c2p] ? 1 : 0) | (on[Term::p2c] ? 2 : 0) | (on[Term::p2p] ? 4 : 0) |
                       (on[Term::c2c] ? 8 : 0) | (by_distance ? 16 : 0);
  table[which](b, logits, ld, maps);
}

// The keys a head's softmax counts, once per head: `keep` 1 / 0 per key (mask ≠ 0), `all` when
// every key counts (a sequence without padding), `shift` 0 / −∞ per key for the masked maximum.
struct KeyMask {
  Row keep, shift;
  bool all = true;
  void set(const Vector& mask) {
    const auto counts = mask.transpose().array() != 0;
    keep = counts.cast<double>();
    shift = counts.select(Row::Zero(mask.size()), Row::Constant(mask.size(), -INFINITY));
    all = counts.all();
  }
};

// The masked softmax of one row in place, as equations.cpp's `masked_softmax`: keys that count have
// mask 1 and a finite logit; a padding query, or one with no key that counts, gets zeros. Each step
// is one vectorised pass (Eigen's exp); a row holding a −∞ logit takes the entry-by-entry path.
void softmax_row(double* row, int64_t N, bool query_counts, const KeyMask& keys) {
  Eigen::Map<Row> p(row, N);
  if (!query_counts) {
    p.setZero();
    return;
  }
  if (p.minCoeff() == -INFINITY) {  // a logit that does not count: select key by key
    const Eigen::Array<bool, 1, Eigen::Dynamic> keep = (keys.keep != 0) && (p != -INFINITY);
    const double max_logit = keep.select(p, -INFINITY).maxCoeff();
    if (max_logit == -INFINITY) {
      p.setZero();
      return;
    }
    p = keep.select((p - max_logit).exp(), 0.0);
    p /= p.sum();
    return;
  }
  const double max_logit = keys.all ? p.maxCoeff() : (p + keys.shift).maxCoeff();
  if (max_logit == -INFINITY) {  // no key counts
    p.setZero();
    return;
  }
  if (keys.all) {
    p = (p - max_logit).exp();
  } else {
    // A masked key's logit goes through exp as −∞ (never overflowing, whatever its value), and
    // exp(−∞) is not exactly 0 in Eigen's exp: the mask makes it so.
    p = (p + keys.shift - max_logit).exp() * keys.keep;
  }
  p /= p.sum();
}

// One head's operands in panels and the products every block of its rows reads whole. A thread's
// own, kept between calls (grown, never shrunk): fresh buffers for every head cost more than the
// head's arithmetic at N = 128 (page faults: 1.2 ms against 0.24 ms a head).
struct HeadOperands {
  detail::InputPanels Q_c, K_c, Q_r;
  detail::WeightPanels K_c_w, K_r_w, Q_r_w, V_c_w;
  Matrix p2c_all, p2p_all;
  KeyMask keys;
};

// A thread's working memory for the blocks of rows it computes (any head's), kept between calls.
struct BlockScratch {
  detail::InputPanels block_panels;
  Matrix block, c2c_rows, c2p_rows, context_rows;
};

// The head's output matrices sized, and its operands packed (straight from the head's columns of
// the layer's projections) with the products every block reads whole: K_c Q_rᵀ (p2c), Q_r K_rᵀ (p2p).
void prepare_head(const AttentionHead& h, HeadOperands& w, AttentionResult* out, bool keep_probs, bool keep_maps) {
  const int64_t N = h.Q_c->rows(), d = h.d();
  const PerTerm<bool>& on = h.terms;
  const auto Q_c = h.of(*h.Q_c), K_c = h.of(*h.K_c), V_c = h.of(*h.V_c);
  w.Q_c.reshape(N, d);
  w.Q_c.pack(Q_c, 0, N);
  if (on[Term::c2c]) w.K_c_w.pack(K_c, 0, N);
  if (on[Term::c2p] || on[Term::p2p]) w.K_r_w.pack(h.of(*h.K_r), 0, h.K_r->rows());
  w.V_c_w.pack_transposed(V_c);
  if (on[Term::p2c]) {
    w.K_c.reshape(N, d);
    w.K_c.pack(K_c, 0, N);
    w.Q_r_w.pack(h.of(*h.Q_r), 0, h.Q_r->rows());
    // K_c Q_rᵀ `[N, R]` (padded rows), each group of keys against only the table rows it is read at.
    w.p2c_all.resize(N, padded_cols(w.Q_r_w.count));
    for (int64_t j0 = 0; j0 < N; j0 += detail::kPanelRows) {
      const int64_t keys = std::min(detail::kPanelRows, N - j0);
      const auto [lo, hi] = table_rows_read(h.p2c_by_distance, *h.p2c_row, N, j0, keys, /*by_queries=*/false);
      multiply_band(w.K_c, j0, keys, w.Q_r_w, lo - h.row_offset, hi - h.row_offset, &w.p2c_all, j0);
    }
  }
  if (on[Term::p2p]) {
    w.Q_r.reshape(h.Q_r->rows(), d);
    w.Q_r.pack(h.of(*h.Q_r), 0, h.Q_r->rows());
    multiply(w.Q_r, 0, h.Q_r->rows(), w.K_r_w, &w.p2p_all, /*padded=*/true);  // [R, R] (padded rows)
  }
  if (!h.context_out) out->context.resize(N, d);
  out->probs = keep_probs ? Matrix(N, N) : Matrix();
  for (Term t : kAllTerms) out->terms[t] = keep_maps && on[t] ? Matrix(N, N) : Matrix();
  out->logits = keep_maps ? Matrix(N, N) : Matrix();
  w.keys.set(*h.mask);
}

// Query rows [i0, i0 + rows) of a prepared head, while they are in cache: their rows of Q_c K_cᵀ and
// Q_c K_rᵀ, the logits, the masked softmax and their rows of probs · V_c.
void head_block(const AttentionHead& h, const HeadOperands& w, BlockScratch& b, int64_t i0, int64_t rows,
                AttentionResult* out, bool keep_probs, bool keep_maps) {
  const int64_t N = h.Q_c->rows();
  const PerTerm<bool>& on = h.terms;
  b.block.resize(std::min(N, kBlockRows), N);  // (kept: the last block of a head may be shorter)
  auto logits = b.block.topRows(rows);
  if (on[Term::c2c]) multiply(w.Q_c, i0, rows, w.K_c_w, &b.c2c_rows);
  if (on[Term::c2p]) {  // the block's rows of Q_c K_rᵀ against only the table rows they read
    const auto [lo, hi] = table_rows_read(h.c2p_by_distance, *h.c2p_row, N, i0, rows, /*by_queries=*/true);
    b.c2p_rows.resize(rows, w.K_r_w.count);
    multiply_band(w.Q_c, i0, rows, w.K_r_w, lo - h.row_offset, hi - h.row_offset, &b.c2p_rows, 0);
  }
  const BlockTerms terms{&h, i0, rows, &b.c2c_rows, &b.c2p_rows, &w.p2c_all, &w.p2p_all};
  if (keep_maps) {
    block_logits<true>(terms, b.block.data(), N, &out->terms);
    out->logits.middleRows(i0, rows) = logits;
  } else {
    block_logits<false>(terms, b.block.data(), N, nullptr);
  }
  for (int64_t r = 0; r < rows; ++r) softmax_row(b.block.row(r).data(), N, (*h.mask)[i0 + r] != 0, w.keys);
  if (h.masked) logits.setZero();  // a head switched off: no attention, no context
  b.block_panels.reshape(rows, N);
  b.block_panels.pack(b.block, 0, rows);
  multiply(b.block_panels, 0, rows, w.V_c_w, &b.context_rows);
  if (h.context_out)
    h.context_out->block(i0, h.column0, rows, h.d()) = b.context_rows;
  else
    out->context.middleRows(i0, rows) = b.context_rows;
  if (keep_probs) out->probs.middleRows(i0, rows) = logits;
}

}  // namespace

void attention(const std::vector<AttentionHead>& heads, std::vector<AttentionResult>* out, bool keep_probs,
               bool keep_maps) {
  out->resize(heads.size());
  // One task per head: its operands packed, then its blocks of query rows, all on one thread while
  // the head's operands are in its cache. (Tried: a task per head's preparation, then a task per
  // block of rows, for finer sharing between threads. On xsmall's heads at N = 128, the best of 300
  // calls took 1004–1019 µs against 924–935 at two threads, 1943–2028 against 1848–1852 at one:
  // every head's operands were packed before any block read them, so they had left the cache; and
  // six heads already share two threads evenly, 1.98× one thread.)
  run_tasks(static_cast<int64_t>(heads.size()), [&](int64_t h) {
    thread_local HeadOperands operands;
    thread_local BlockScratch scratch;
    const AttentionHead& head = heads[static_cast<size_t>(h)];
    AttentionResult* result = &(*out)[static_cast<size_t>(h)];
    prepare_head(head, operands, result, keep_probs, keep_maps);
    const int64_t N = head.Q_c->rows();
    for (int64_t i0 = 0; i0 < N; i0 += kBlockRows)
      head_block(head, operands, scratch, i0, std::min(kBlockRows, N - i0), result, keep_probs, keep_maps);
  });
}

void attention(const AttentionHead& head, AttentionResult* out, bool keep_probs, bool keep_maps) {
  std::vector<AttentionResult> one;
  fast::attention(std::vector<AttentionHead>{head}, &one, keep_probs, keep_maps);
  *out = std::move(one[0]);
}

}  // namespace deberta::ops::fast
