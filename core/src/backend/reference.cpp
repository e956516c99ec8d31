// reference.cpp — the reference backend (ops.h): each op the plainest Eigen expression or loop,
// on the calling thread. It exists to be read and to check the fast backend against; it is not
// tuned for speed.
#include "backend/ops.h"

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
