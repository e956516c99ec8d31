// reference.cpp — the reference backend (ops.h): each op the plainest Eigen expression or loop,
// on the calling thread, and eq. 4 as the equations layer writes it (`attention_head`, handed over
// by that layer). It exists to be read and to check the fast backend against; it is not tuned
// for speed.
#include "backend/ops.h"

#include <atomic>
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
