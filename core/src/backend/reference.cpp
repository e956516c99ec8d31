// reference.cpp — the reference backend (ops.h): each op the plainest Eigen expression or loop,
// on the calling thread, and eq. 4 as the equations layer writes it (`attention_head`, handed over
// by that layer). It exists to be read and to check the fast backend against; it is not tuned
// for speed.
#include "backend/ops.h"

#include <atomic>
#include <cmath>

namespace deberta::ops::reference {

namespace {
// y = x Wᵀ + b for a float64 W (a Matrix, or a map of one's bytes). `y` is built from the product
// (not assigned to an existing matrix: Eigen's `y = x * Wᵀ` into a matrix already declared runs
// another path, and other bits).
template <typename W>
Matrix affine_of(const Matrix& x, const W& w, const Vector& b) {
  Matrix y = x * w.transpose();
  if (b.size() > 0) y.rowwise() += b.transpose();
  return y;
}

// y = x Wᵀ + b, W in its stored precision: read in place when it is F64 (its bytes are aligned as
// a Matrix's, so Eigen runs the same product), else widened for this product only (the temporary
// is freed on return). Widening is exact: the bits are those of a float64 W.
Matrix affine(const Matrix& x, const StoredMatrix& W, const Vector& b) {
  if (const double* f64 = W.f64()) return affine_of(x, Eigen::Map<const Matrix, Eigen::AlignedMax>(f64, W.rows(), W.cols()), b);
  return affine_of(x, W.widened(), b);
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

Matrix tied_decoder(const Matrix& h, const StoredMatrix& E, const Vector& bias) { return affine(h, E, bias); }

void for_rows(int64_t rows, const RowsFn& body) { body(0, rows); }

void tasks(int64_t count, const std::function<void(int64_t)>& task) {
  for (int64_t i = 0; i < count; ++i) task(i);
}

void gelu_erf(Eigen::Ref<Matrix> x) {
  x = x.unaryExpr([](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); });
}

}  // namespace deberta::ops::reference

namespace deberta::ops {

namespace {
// The equations layer's `attention_head`, handed over at start-up (set_reference_attention).
std::atomic<HeadAttention> g_reference_attention{nullptr};
}  // namespace

bool set_reference_attention(HeadAttention head) {
  g_reference_attention.store(head);
  return true;
}

namespace reference {

// eq. 4 is written once for this backend, in the equations layer (`attention_head`): run it on
// each head, one after the other.
void head_by_head(const std::vector<AttentionHead>& heads, std::vector<AttentionResult>* out, bool keep_probs,
                  bool keep_maps) {
  const HeadAttention head = g_reference_attention.load();
  if (!head) throw Error("eq. 4: the reference backend has no attention (the equations layer did not hand it over)");
  out->assign(heads.size(), AttentionResult());
  for (size_t h = 0; h < heads.size(); ++h) head(heads[h], &(*out)[h], keep_probs, keep_maps);
}

}  // namespace reference
}  // namespace deberta::ops
