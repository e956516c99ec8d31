// gemm_nt.h — the core's one hand-written product kernel (internal; issue 17): y = x · wᵀ for
// row-major x `[M, K]` and w `[O, K]`, both read along k. That is the layout of every Linear's
// weight (`[out, in]`, Hugging Face's) and of the tied embedding table E `[V, H]`.
//
// Why not Eigen here: for few rows M (a short text, a few [MASK] positions) Eigen's GEMM spends
// about as long copying (packing) w into its blocked layout as multiplying, and w — a weight
// matrix or the 128k-row table — is read from memory once per forward anyway. This kernel reads w
// in place, a tile of rows at a time, and keeps a tile of x rows in registers against it
// ("dot-product form": each output is a dot product of two contiguous rows). Its one user now:
// the position projections (`rows_independent`, any row count); other products of few rows read W
// in place on the panel kernel (panel_gemm.h `linear_rows_in_place`), many rows pack it.
//
// Every output element gets the same arithmetic wherever it lies in a tile and however the
// columns are split between tasks: lane-wise fused multiply-adds over k in order (8 lanes with
// AVX-512, 4 with AVX2, 1 otherwise), one horizontal sum in a fixed order, then the k remainder in
// order. So results do not depend on M, on the column range a task takes, or on the thread count.
#pragma once

#include "deberta/tensor.h"
#include "deberta/weights.h"

#include <cstdint>

namespace deberta::detail {

/// y(m, o) = Σ_k x(m, k) · w(o, k) for m < M, o < O; `ld*` are row strides in doubles. Writes y
/// only (no bias). No errors (the caller checks shapes).
void gemm_nt(const double* x, int64_t ldx, int64_t M, const double* w, int64_t ldw, int64_t O, int64_t K, double* y,
             int64_t ldy);

/// `*y`'s columns [first, first + width) = x `[N, in]` · W.middleRows(first, width)ᵀ + the same
/// entries of `bias` (none when empty), with W `[out, in]` and y `[N, out]` already sized: `gemm_nt`,
/// then the bias. The fast backend's `rows_independent` products (the position projections) at any
/// N: a row's bits never depend on the other rows. No errors (the callers check shapes).
/// W in its stored precision: its rows [first, first + width) are widened into a buffer of the
/// calling thread first (F64 is read in place); the same bits.
void linear_columns(const Matrix& x, const StoredMatrix& W, const Vector& bias, int64_t first, int64_t width, Matrix* y);

/// Throws `Error` naming both shapes unless x `[N, in]` fits W `[out, in]` (x.cols() == in).
void check_linear_input(const StoredMatrix& W, const Matrix& x);

/// The grid of `column_blocks`' widths (threading.h): 24 columns, a multiple of the panel kernel's
/// row groups (8 with AVX-512, 4 otherwise), so that a block of few rows starts on a group.
constexpr int64_t kColumnGrid = 24;

}  // namespace deberta::detail
