// reference.cpp — the reference backend (ops.h): each op the plainest Eigen expression or loop,
// on the calling thread. It exists to be read and to check the fast backend against; it is not
// tuned for speed.
#include "backend/ops.h"

#include <algorithm>
#include <cmath>

namespace deberta::ops::reference {

namespace {
// y = x Wᵀ + b.
Matrix affine(const Matrix& x, const Matrix& W, const Vector& b) {
  Matrix y = x * W.transpose();
  if (b.size() > 0) y.rowwise() += b.transpose();
  return y;
}
}  // namespace

void products(const std::vector<Product>& set) {
  for (const Product& p : set) {
    *p.y = affine(*p.x, p.layer->weight, p.layer->bias);
    if (p.elementwise) p.elementwise(*p.y);
    if (p.residual) *p.y += *p.residual;
    if (p.rows_done) p.rows_done(0, p.y->rows());
  }
}

Matrix linear(const Linear& layer, const Matrix& x) { return affine(x, layer.weight, layer.bias); }

Matrix tied_decoder(const Matrix& h, const Matrix& E, const Vector& bias) { return affine(h, E, bias); }

void for_rows(int64_t rows, const RowsFn& body) { body(0, rows); }

void tasks(int64_t count, const std::function<void(int64_t)>& task) {
  for (int64_t i = 0; i < count; ++i) task(i);
}

void gelu_erf(Eigen::Ref<Matrix> x) {
  x = x.unaryExpr([](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); });
}

}  // namespace deberta::ops::reference

namespace deberta::ops::reference {

// eq. 4 entry by entry: each active term's dot product scaled by s, summed in the reference's
// order ((c2p + p2c) + p2p) + c2c; then each row's masked softmax; then probs · V_c.
void attention(const AttentionHead& h, AttentionResult* out, bool keep_probs, bool keep_maps) {
  const int64_t N = h.Q_c->rows(), o = h.row_offset;
  const double s = h.scale;
  // The head's columns of the projections (copies: this backend reads plainly, not fast).
  const auto head_of = [&](const Matrix* m) { return m && m->size() > 0 ? Matrix(h.of(*m)) : Matrix(); };
  const Matrix Q_c = head_of(h.Q_c), K_c = head_of(h.K_c), V_c = head_of(h.V_c), K_r = head_of(h.K_r),
               Q_r = head_of(h.Q_r);
  const auto c2p_row = [&](int64_t i, int64_t j) { return K_r.row((*h.c2p_row)(i, j) - o); };
  const auto p2c_row = [&](int64_t i, int64_t j) { return Q_r.row((*h.p2c_row)(i, j) - o); };
  PerTerm<Matrix> terms;
  for (Term t : kAllTerms)
    if (h.terms[t]) terms[t].resize(N, N);
  Matrix p = Matrix::Zero(N, N);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j) {
      if (h.terms[Term::c2p]) terms[Term::c2p](i, j) = s * Q_c.row(i).dot(c2p_row(i, j));
      if (h.terms[Term::p2c]) terms[Term::p2c](i, j) = s * K_c.row(j).dot(p2c_row(i, j));
      if (h.terms[Term::p2p]) terms[Term::p2p](i, j) = s * p2c_row(i, j).dot(c2p_row(i, j));
      if (h.terms[Term::c2c]) terms[Term::c2c](i, j) = s * Q_c.row(i).dot(K_c.row(j));
      for (Term t : {Term::c2p, Term::p2c, Term::p2p, Term::c2c})
        if (h.terms[t]) p(i, j) += terms[t](i, j);
    }
  if (keep_maps) out->terms = terms, out->logits = p;
  const Vector& mask = *h.mask;
  for (int64_t i = 0; i < N; ++i) {
    // Keys that count: mask 1 and a finite logit; a padding query (or none that counts) gets zeros.
    double max_logit = -INFINITY;
    for (int64_t j = 0; j < N; ++j)
      if (mask[i] != 0 && mask[j] != 0 && p(i, j) != -INFINITY) max_logit = std::max(max_logit, p(i, j));
    double total = 0;
    for (int64_t j = 0; j < N; ++j) {
      const bool keep = max_logit != -INFINITY && mask[j] != 0 && p(i, j) != -INFINITY;
      p(i, j) = keep ? std::exp(p(i, j) - max_logit) : 0.0;
      total += p(i, j);
    }
    if (total > 0) p.row(i) /= total;
  }
  if (h.masked) p.setZero();
  out->context = p * V_c;
  if (h.context_out) {
    h.context_out->middleCols(h.column0, h.d()) = out->context;
    out->context = Matrix();
  }
  if (keep_probs) out->probs = std::move(p);
}

void attention(const std::vector<AttentionHead>& heads, std::vector<AttentionResult>* out, bool keep_probs,
               bool keep_maps) {
  out->resize(heads.size());
  for (size_t h = 0; h < heads.size(); ++h) reference::attention(heads[h], &(*out)[h], keep_probs, keep_maps);
}

}  // namespace deberta::ops::reference
