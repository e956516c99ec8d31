// panel_gemm.h — a linear layer's product on operands laid out in panels (internal; issue 43,
// item 5; it replaces issue 17's driver of Eigen's internal GEMM kernel).
//
// y = x · Wᵀ + b, x `[N, in]`, W `[out, in]`, y `[N, out]`. Both operands are copied ("packed")
// into panels that the micro-kernel reads front to back:
//   W: panels of kPanelCols of its rows (y's columns), each `[in, kPanelCols]` k-major;
//   x: groups of kPanelRows of its rows, each `[in, kPanelRows]` k-major.
// Rows past the end of W or x are zeros in their panel. The micro-kernel holds a kPanelRows ×
// kPanelCols block of y in registers (8 × 24 doubles with AVX-512: 24 of the 32 registers), and
// for each k adds x(r, k) · W(c, k) to every entry with one fused multiply-add per SIMD register.
//
// Every entry of y is therefore bias, then + x(r, 0) W(c, 0), then + x(r, 1) W(c, 1), … in the order
// of k, each step one fused multiply-add (one multiply then one add where the target has no FMA).
// That arithmetic does not depend on where the entry sits in a tile, on the tile's size, on N, or
// on which thread computes it — so any split of y between tasks gives the same bits, and a row's
// bits never depend on the other rows.
//
// Why not Eigen's GEMM here: Eigen packs both operands again inside every product call, and its
// kernel reached ~66 GFLOP/s on one core of the AVX-512 host where this one reaches ~100 at the
// encoder's shapes (128 × 384 × 384 … 1024³; docs/performance.md). The weights can be packed once
// per model (`WeightPanels` kept by `ops::PackedWeights`), so a forward packs only x.
#pragma once

#include "deberta/tensor.h"
#include "deberta/weights.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace deberta::detail {

/// Doubles per SIMD register of this build (8 AVX-512, 4 AVX2, 2 SSE2 / WebAssembly SIMD, 1 none):
/// Eigen's widest packet.
constexpr int64_t kPanelLanes = Eigen::internal::packet_traits<double>::size;
/// Columns of y per W panel: three SIMD registers (24 with AVX-512, 12 AVX2, 6 SSE2).
constexpr int64_t kPanelCols = 3 * kPanelLanes;
/// Rows of y per x group: 8 with AVX-512 (32 registers), 4 otherwise (16 registers).
constexpr int64_t kPanelRows = kPanelLanes >= 8 ? 8 : 4;

/// A row-major matrix or a block of its columns, read in place (row stride `outerStride()`): what the
/// packing functions read, so that one head's columns of a layer's projections are packed straight
/// from the `[N, A]` projection, with no copy of the head first. A `Matrix` converts to it.
using RowsView = Eigen::Ref<const Matrix, 0, Eigen::OuterStride<>>;

/// Memory of 64-byte aligned doubles, not zeroed.
using PanelBuffer = std::unique_ptr<double, void (*)(void*)>;

/// W's rows [first, first + count) as panels. Panel p holds rows first + p·kPanelCols … as
/// `[depth, kPanelCols]`, k-major.
struct WeightPanels {
  int64_t first = 0, count = 0, depth = 0;
  PanelBuffer data{nullptr, nullptr};
  int64_t capacity = 0;  ///< doubles allocated at `data`

  int64_t panels() const { return (count + kPanelCols - 1) / kPanelCols; }
  /// Packs rows [first, first + count) of W `[out, depth]`, reusing this buffer's memory when it is
  /// large enough. Errors: std::bad_alloc; Error if the rows are not W's.
  void pack(const RowsView& W, int64_t first, int64_t count);
  /// The same for a weight in its stored precision (weights.h): each panel's rows are widened to
  /// float64 (exactly) as they are packed — the one place the fast backend's products widen a
  /// weight (issue 60). F64 is read in place. Errors: as above.
  void pack_stored(const StoredMatrix& W, int64_t first, int64_t count);
  /// The same for W = Wtᵀ given as Wt `[depth, out]` (e.g. V_c, whose columns are W's rows): all of
  /// W's rows. Errors: std::bad_alloc.
  void pack_transposed(const RowsView& Wt);
  /// Panel `p` (relative to `first`): `depth × kPanelCols` doubles.
  const double* panel(int64_t p) const { return data.get() + p * depth * kPanelCols; }
  size_t bytes() const { return static_cast<size_t>(capacity) * sizeof(double); }

 private:
  void reserve(int64_t first, int64_t count, int64_t depth);
};

/// x `[rows, depth]` as groups of kPanelRows rows. Groups may be packed by different threads.
struct InputPanels {
  int64_t rows = 0, depth = 0;
  PanelBuffer data{nullptr, nullptr};

  int64_t capacity = 0;  ///< doubles allocated at `data`

  InputPanels() = default;
  /// Allocates room for x `[rows, depth]` (nothing packed yet). Errors: std::bad_alloc.
  InputPanels(int64_t rows, int64_t depth);
  /// Makes this x `[rows, depth]`, keeping its memory when large enough. Errors: std::bad_alloc.
  void reshape(int64_t rows, int64_t depth);
  int64_t groups() const { return (rows + kPanelRows - 1) / kPanelRows; }
  /// Packs x's rows [first, first + count) (first a multiple of kPanelRows; count one too unless
  /// the range ends at x's last row). No errors.
  void pack(const RowsView& x, int64_t first, int64_t count);
  const double* group(int64_t g) const { return data.get() + g * depth * kPanelRows; }
};

/// y's block of `rows` rows (from x's row `row0`, a multiple of kPanelRows) and `cols` columns
/// (panels `panel0`, `panel0` + 1, … of `weight`) = start + x · Wᵀ over the whole k: `y` points at
/// the block's top-left entry, `ldy` is y's row stride. The start: `bias` `[cols]` (the block's
/// entries of b, the same for every row) when given; else zeros with `from_zero`; else y's own
/// values. Each gives the bits of the sums onto y holding that start. `prefetch`: memory the caller
/// reads next (`prefetch_bytes` from it), fetched into cache a line per step of the products (the
/// tied decoder's next rows of E, while this panel is multiplied). Errors: Error if the operands'
/// depths differ.
void multiply_panels(const WeightPanels& weight, int64_t panel0, const InputPanels& x, int64_t row0, int64_t rows,
                     int64_t cols, double* y, int64_t ldy, bool from_zero = false, const double* bias = nullptr,
                     const char* prefetch = nullptr, int64_t prefetch_bytes = 0);

/// The same products with x's rows read in place instead of packed, and y written transposed: for
/// r < rows (≤ kPanelRows) and m < W.count, out[m · ldo + r] = start[r] + Σ_k x(r, k) · W(m, k), the
/// sum in the order of k — the same bits as `multiply_panels` onto that start. x: `rows` rows at
/// `x`, row stride `ldx`. For the tied decoder (x = rows of E, W = the masked rows' h, start = the
/// bias): E is read once, straight from memory, with no copy. `prefetch`: as `multiply_panels`.
/// No errors (the caller checks shapes).
void multiply_rows_transposed(const double* x, int64_t ldx, int64_t rows, const WeightPanels& W, const double* start,
                              double* out, int64_t ldo, const char* prefetch = nullptr, int64_t prefetch_bytes = 0);

/// The row count up to which the fast products read W in place (`linear_rows_in_place`, and
/// gemm_nt.h's dot products for `rows_independent` ones) instead of packing it: at N ≤ 32, W's
/// bytes cost more than its arithmetic (docs/performance.md).
constexpr int64_t kInPlaceMaxRows = 32;

/// A linear layer's product for few rows of x: y's columns [first, first + width) = x · Wᵀ + b for
/// x given as panels (`x_rows`: x's N rows packed as a WeightPanels, N ≤ a few panels), W `[out, in]`
/// read in place kPanelRows rows at a time (the next ones fetched meanwhile), b `[out]` or empty.
/// W is read once, straight from memory, and never packed: at N ≤ 32 its bytes cost more than its
/// arithmetic. Each entry is bias + its dot product in the order of k, one fused multiply-add per k:
/// the same bits as `multiply_panels` on packed W (a row's bits do not depend on N or on the
/// path). y: `[N, out]`, already sized. No errors (the caller checks shapes).
/// W in its stored precision: kPanelRows rows at a time are widened into a buffer of the calling
/// thread (a few kB, in cache) and multiplied from there; F64 is read in place.
void linear_rows_in_place(const WeightPanels& x_rows, const StoredMatrix& W, const Vector& bias, int64_t first,
                          int64_t width, Matrix* y);

/// Rows [first, first + count) of W as float64 with their row stride, for a kernel that reads
/// rows: W's own memory when it is stored as F64, else the rows widened into `scratch` (resized).
/// No errors.
const double* widened_rows(const StoredMatrix& W, int64_t first, int64_t count, std::vector<double>* scratch);

}  // namespace deberta::detail
