// packed_gemm.cpp — see packed_gemm.h. The only file of the core that calls Eigen's internal GEMM
// interfaces; each use below is the same call Eigen 3.4's general_matrix_matrix_product::run
// makes for a row-major y = x · Wᵀ (GeneralMatrixMatrix.h, transposed to yᵀ = W · xᵀ).
#include "backend/packed_gemm.h"

#include <algorithm>
#include <string>

namespace deberta::detail {

#if EIGEN_VERSION_AT_LEAST(3, 4, 0) && !EIGEN_VERSION_AT_LEAST(3, 4, 90)

namespace {

namespace ei = Eigen::internal;
using Index = Eigen::Index;
using Traits = ei::gebp_traits<double, double>;
using WeightMapper = ei::const_blas_data_mapper<double, Index, Eigen::RowMajor>;  // W(i, k)
using InputMapper = ei::const_blas_data_mapper<double, Index, Eigen::ColMajor>;   // xᵀ(k, j) = x(j, k)
using ResultMapper = ei::blas_data_mapper<double, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;  // yᵀ(i, j)

static_assert(kWeightPanel % Traits::mr == 0, "a weight block must start on Eigen's row panel grid");
static_assert(kInputPanel % Traits::nr == 0, "an input block must start on Eigen's column panel grid");

}  // namespace

int64_t product_kc(int64_t depth) {
  // Eigen's single-threaded heuristic (evaluateProductBlockingSizesHeuristic) sets kc from k and
  // the L1 size alone; m and n only bound the other two blocks, so any values serve here.
  Index k = depth, m = 4096, n = 4096;
  ei::computeProductBlockingSizes<double, double, 1, Index>(k, m, n, 1);
  return std::max<Index>(k, 1);
}

PackedOperand::PackedOperand(Side side_, int64_t rows_, int64_t depth_) : data(nullptr, ei::aligned_free) {
  reshape(side_, rows_, depth_);
}

void PackedOperand::reshape(Side side_, int64_t rows_, int64_t depth_) {
  const int64_t needed = std::max<int64_t>(1, rows_ * depth_);
  if (needed > capacity) {
    data.reset();  // (the old block first: the peak stays one buffer)
    capacity = 0;
    data.reset(static_cast<double*>(ei::aligned_malloc(sizeof(double) * needed)));
    capacity = needed;
  }
  side = side_, rows = rows_, depth = depth_, kc = product_kc(depth_);
}

void PackedOperand::pack(const Matrix& m, int64_t m_first, int64_t count, int64_t first) {
  // k block k2 holds all `rows` rows, k block after k block: offset rows · k2; inside it, a block
  // of rows starting on the grid starts at first · (its kc) (Eigen packs panel after panel).
  for (Index k2 = 0; k2 < depth; k2 += kc) {
    const Index kcb = std::min<Index>(kc, depth - k2);
    double* block = data.get() + rows * k2 + first * kcb;
    if (side == Side::Weight) {
      ei::gemm_pack_lhs<double, Index, WeightMapper, Traits::mr, Traits::LhsProgress,
                        typename Traits::LhsPacket4Packing, Eigen::RowMajor>
          pack_lhs;
      pack_lhs(block, WeightMapper(m.data(), m.cols()).getSubMapper(m_first, k2), kcb, count);
    } else {
      ei::gemm_pack_rhs<double, Index, InputMapper, Traits::nr, Eigen::ColMajor> pack_rhs;
      pack_rhs(block, InputMapper(m.data(), m.cols()).getSubMapper(k2, m_first), kcb, count);
    }
  }
}

void multiply_packed(const PackedOperand& weight, int64_t w_first, const PackedOperand& input, int64_t x_first,
                     int64_t rows, int64_t cols, double* y, int64_t ldy) {
  if (weight.depth != input.depth)
    throw Error("packed product: W of depth " + std::to_string(weight.depth) + " against x of depth " +
                std::to_string(input.depth));
  ei::gebp_kernel<double, double, Index, ResultMapper, Traits::mr, Traits::nr, false, false> gebp;
  const ResultMapper result(y, ldy);
  // The k blocks in order, each added onto y: Eigen's order (res += alpha · block sum).
  for (Index k2 = 0; k2 < weight.depth; k2 += weight.kc) {
    const Index kcb = std::min<Index>(weight.kc, weight.depth - k2);
    gebp(result, weight.data.get() + weight.rows * k2 + w_first * kcb, input.data.get() + input.rows * k2 + x_first * kcb,
         cols, kcb, rows, 1.0);
  }
}

#else  // another Eigen version: kPackedGemm is false, so nothing calls these; a call is a bug

namespace {
[[noreturn]] void unavailable() {
  throw Error("packed GEMM needs Eigen 3.4 (this build has Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
              std::to_string(EIGEN_MAJOR_VERSION) + "); the fast backend must not call it here");
}
}  // namespace

int64_t product_kc(int64_t) { unavailable(); }
PackedOperand::PackedOperand(Side, int64_t, int64_t) : data(nullptr, [](void*) {}) { unavailable(); }
void PackedOperand::reshape(Side, int64_t, int64_t) { unavailable(); }
void PackedOperand::pack(const Matrix&, int64_t, int64_t, int64_t) { unavailable(); }
void multiply_packed(const PackedOperand&, int64_t, const PackedOperand&, int64_t, int64_t, int64_t, double*, int64_t) {
  unavailable();
}

#endif

}  // namespace deberta::detail
