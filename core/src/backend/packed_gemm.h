// packed_gemm.h — a linear layer's product as tiles over operands packed once (internal; issue 17).
//
// y = x · Wᵀ + b, x `[N, in]`, W `[out, in]`, y `[N, out]`, computed with Eigen 3.4's own
// double-precision GEMM kernels (`gemm_pack_lhs`, `gemm_pack_rhs`, `gebp_kernel`), driven here
// instead of by Eigen's `general_matrix_matrix_product`. Eigen sees our row-major product as the
// column-major yᵀ `[out, N]` = W · xᵀ: W is its left operand (packed in panels of 24 rows with
// AVX-512, 12 with AVX2) and x its right one (panels of 4 rows of x).
//
// Why: Eigen packs both operands inside every product call. Split between threads as column
// blocks, each block repacked the whole x; split finer, each piece repacked its part of W, and
// the pieces cost more than the split saved. Packed once, the operands are read-only and any
// tile of y — a block of columns on the 24 grid by a block of rows on the 4 grid — is one
// `gebp_kernel` call per k block, cheap at any size. Small tiles let two cores of unequal speed
// (a shared host) share a product by how fast each is, instead of each waiting for the other.
//
// Bitwise: a tile computes every entry with the arithmetic of Eigen's single-threaded product of
// the whole (the same k blocking `computeProductBlockingSizes` chooses, the same kernel for every
// entry: Eigen picks a row's kernel from its distance to the end of a 24-row panel grid, a
// column's from its distance to the end of the 4-column grid, and tiles on those grids keep both).
// So `ops::linear` and the tiled product give the same bits, for any tiling and any thread
// count (tests/test_threads.cpp; checked for the presets' shapes at every N from 2 to 600).
//
// Needs Eigen 3.4 (internal interfaces): `kPackedGemm` is false with any other version, and the
// callers then use one Eigen product per column block (`linear_columns`).
#pragma once

#include "deberta/tensor.h"

#include <cstdint>
#include <memory>

namespace deberta::detail {

#if EIGEN_VERSION_AT_LEAST(3, 4, 0) && !EIGEN_VERSION_AT_LEAST(3, 4, 90)
constexpr bool kPackedGemm = true;
#else
constexpr bool kPackedGemm = false;
#endif

/// Row grids of the two packed operands: a block of W's rows (y's columns) must start on a
/// multiple of kWeightPanel, a block of x's rows (y's rows) on a multiple of kInputPanel, and only
/// the last block of either may end off the grid. 24 = Eigen's double panel with AVX-512 (3 × 8);
/// the AVX2 (12) and SSE (6) panels divide it. 4 = Eigen's `nr` for double on every target.
constexpr int64_t kWeightPanel = 24;
constexpr int64_t kInputPanel = 4;

/// The k block of Eigen's single-threaded GEMM for inner dimension `depth` (a function of `depth`
/// and the L1 cache size only; `computeProductBlockingSizes`). No errors.
int64_t product_kc(int64_t depth);

/// Rows of a matrix `[·, depth]` (W's rows, or x's rows) in Eigen's packed GEMM layout, k block
/// after k block of `kc` = product_kc(depth): the operand of one or more tiles.
struct PackedOperand {
  enum class Side { Weight, Input };  // Eigen's left operand (W) or right operand (x)
  Side side = Side::Weight;
  int64_t rows = 0, depth = 0, kc = 0;
  std::unique_ptr<double, void (*)(void*)> data;  // rows · depth doubles, aligned, not zeroed

  int64_t capacity = 0;                            // doubles allocated at `data`

  /// Allocates room for `rows` rows of `depth` entries (nothing packed yet). Errors: std::bad_alloc.
  PackedOperand(Side side, int64_t rows, int64_t depth);
  /// Makes this operand `rows` rows of `depth` entries, keeping its memory when large enough (a
  /// buffer still in the cache of the thread that packed into it last). Errors: std::bad_alloc.
  void reshape(Side side, int64_t rows, int64_t depth);
  /// Packs m's rows [m_first, m_first + count) (`[·, depth]`, row-major) into this operand's rows
  /// [first, first + count). `first` on the operand's grid (kWeightPanel or kInputPanel), and only
  /// the operand's last block may end off it; blocks may be packed by different threads.
  void pack(const Matrix& m, int64_t m_first, int64_t count, int64_t first);
};

/// The tile y `[rows, cols]` (top-left entry at `y`, row stride `ldy`) += x · Wᵀ over the whole k,
/// with W's rows taken from `weight`'s rows [w_first, w_first + cols) and x's rows from `input`'s
/// rows [x_first, x_first + rows); y already holds the bias (or zeros). `w_first` a multiple of
/// kWeightPanel, `x_first` of kInputPanel. Errors: `Error` if the two operands' depths differ.
void multiply_packed(const PackedOperand& weight, int64_t w_first, const PackedOperand& input, int64_t x_first,
                     int64_t rows, int64_t cols, double* y, int64_t ldy);

}  // namespace deberta::detail
