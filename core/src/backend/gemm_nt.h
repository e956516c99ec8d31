// gemm_nt.h — the core's one hand-written product kernel (internal; issue 17): y = x · wᵀ for
// row-major x `[M, K]` and w `[O, K]`, both read along k. That is the layout of every Linear's
// weight (`[out, in]`, Hugging Face's) and of the tied embedding table E `[V, H]`.
//
// Why not Eigen here: for few rows M (a short text, a few [MASK] positions) Eigen's GEMM spends
// about as long copying (packing) w into its blocked layout as multiplying, and w — a weight
// matrix or the 128k-row table — is read from memory once per forward anyway. This kernel reads w
// in place, a tile of rows at a time, and keeps a tile of x rows in registers against it
// ("dot-product form": each output is a dot product of two contiguous rows). For many rows
// Eigen's packed kernel is as fast or faster, so the callers use this one below a row count.
//
// Every output element gets the same arithmetic wherever it lies in a tile and however the
// columns are split between tasks: lane-wise fused multiply-adds over k in order (8 lanes with
// AVX-512, 4 with AVX2, 1 otherwise), one horizontal sum in a fixed order, then the k remainder in
// order. So results do not depend on M, on the column range a task takes, or on the thread count.
#pragma once

#include "deberta/tensor.h"

#include <cstdint>

namespace deberta::detail {

/// y(m, o) = Σ_k x(m, k) · w(o, k) for m < M, o < O; `ld*` are row strides in doubles. Writes y
/// only (no bias). No errors (the caller checks shapes).
void gemm_nt(const double* x, int64_t ldx, int64_t M, const double* w, int64_t ldw, int64_t O, int64_t K, double* y,
             int64_t ldy);

/// `*y`'s columns [first, first + width) = x `[N, in]` · W.middleRows(first, width)ᵀ + the same
/// entries of `bias` (none when empty), with W `[out, in]` and y `[N, out]` already sized. Few rows
/// (N ≤ kGemmNtMaxRows): `gemm_nt`, then the bias. More: Eigen's GEMM accumulating onto the bias
/// (`y = b; y += x Wᵀ`: Eigen would otherwise zero y first and a second pass would add b). The one
/// definition of a linear layer's product (`ops::linear`, `parallel_linears`). No errors (the
/// callers check shapes).
/// `rows_independent`: the dot-product kernel at any N (a row's bits then never depend on the
/// other rows).
void linear_columns(const Matrix& x, const Matrix& W, const Vector& bias, int64_t first, int64_t width, Matrix* y,
                    bool rows_independent = false);

/// Throws `Error` naming both shapes unless x `[N, in]` fits W `[out, in]` (x.cols() == in).
void check_linear_input(const Matrix& W, const Matrix& x);

/// The row count up to which `parallel_linears` and the tied decoder use `gemm_nt` instead of
/// Eigen's packed GEMM (measured: docs/performance.md, issue 17 third round).
constexpr int64_t kGemmNtMaxRows = 32;

/// Eigen's double-precision register panel with AVX-512 (3 × 8 rows of its left operand; 12 with
/// AVX2 and 6 with SSE divide it): a column block of `linear_columns`'s Eigen path that starts on
/// this grid gives bitwise the columns of the unsplit product (`column_blocks`, threading.h).
constexpr int64_t kEigenPanel = 24;

}  // namespace deberta::detail
