// panel_gemm.cpp — see panel_gemm.h. The SIMD registers are Eigen's packet types (the widest this
// build enables: AVX-512, AVX2 + FMA, SSE2, or WebAssembly SIMD through Eigen's SSE2 path), so the
// one kernel below serves every target.
#include "backend/panel_gemm.h"

#include <algorithm>
#include <string>

namespace deberta::detail {

namespace {

namespace ei = Eigen::internal;
using Packet = ei::packet_traits<double>::type;
constexpr int kLanes = static_cast<int>(kPanelLanes);
constexpr int kRows = static_cast<int>(kPanelRows);  // accumulators: kRows × 3 registers (24 of 32, 12 of 16)
constexpr int kCols = static_cast<int>(kPanelCols);
static_assert(kLanes == ei::unpacket_traits<Packet>::size, "the panel width is Eigen's packet");

PanelBuffer allocate(int64_t doubles) {
  return PanelBuffer(static_cast<double*>(ei::aligned_malloc(sizeof(double) * static_cast<size_t>(std::max<int64_t>(1, doubles)))),
                     ei::aligned_free);
}

// c `[kRows, kCols]` (row stride ldc) += x-group · W-panelᵀ over k = 0 … depth − 1, in order
// (`from_zero`: c = the product, c not read).
inline void micro_kernel(const double* x, const double* w, int64_t depth, double* c, int64_t ldc, bool from_zero) {
  Packet acc[kRows][3];
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < 3; ++j) acc[r][j] = from_zero ? ei::pset1<Packet>(0.0) : ei::ploadu<Packet>(c + r * ldc + j * kLanes);
  for (int64_t k = 0; k < depth; ++k, w += kCols, x += kRows) {
    const Packet w0 = ei::pload<Packet>(w), w1 = ei::pload<Packet>(w + kLanes), w2 = ei::pload<Packet>(w + 2 * kLanes);
    for (int r = 0; r < kRows; ++r) {
      const Packet xr = ei::pset1<Packet>(x[r]);
      acc[r][0] = ei::pmadd(xr, w0, acc[r][0]);
      acc[r][1] = ei::pmadd(xr, w1, acc[r][1]);
      acc[r][2] = ei::pmadd(xr, w2, acc[r][2]);
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < 3; ++j) ei::pstoreu(c + r * ldc + j * kLanes, acc[r][j]);
}

}  // namespace

void WeightPanels::pack(const Matrix& W, int64_t first_, int64_t count_) {
  if (first_ % kCols != 0 || first_ < 0 || first_ + count_ > W.rows())
    throw Error("weight panels: rows [" + std::to_string(first_) + ", " + std::to_string(first_ + count_) +
                ") of a weight with " + std::to_string(W.rows()) + " rows, or off the grid of " + std::to_string(kCols));
  reserve(first_, count_, W.cols());
  // Written front to back (the panel's kCols rows of W are read across, from the cache).
  for (int64_t p = 0; p < panels(); ++p) {
    double* out = data.get() + p * depth * kCols;
    const int64_t row0 = first + p * kCols, valid = std::min<int64_t>(kCols, first + count - row0);
    const double* rows = W.data() + row0 * depth;
    for (int64_t k = 0; k < depth; ++k, out += kCols) {
      for (int64_t j = 0; j < valid; ++j) out[j] = rows[j * depth + k];
      for (int64_t j = valid; j < kCols; ++j) out[j] = 0.0;
    }
  }
}

void WeightPanels::reserve(int64_t first_, int64_t count_, int64_t depth_) {
  first = first_, count = count_, depth = depth_;
  const int64_t needed = panels() * depth * kCols;
  if (needed > capacity) {
    data.reset();  // (the old buffer first: the peak stays one buffer)
    capacity = 0;
    data = allocate(needed);
    capacity = needed;
  }
}

void WeightPanels::pack_transposed(const Matrix& Wt) {
  reserve(0, Wt.cols(), Wt.rows());
  for (int64_t p = 0; p < panels(); ++p) {
    double* out = data.get() + p * depth * kCols;
    const int64_t col0 = p * kCols, valid = std::min<int64_t>(kCols, count - col0);
    for (int64_t k = 0; k < depth; ++k) {
      const double* in = Wt.data() + k * count + col0;
      std::copy(in, in + valid, out + k * kCols);
      std::fill(out + k * kCols + valid, out + (k + 1) * kCols, 0.0);
    }
  }
}

InputPanels::InputPanels(int64_t rows_, int64_t depth_) { reshape(rows_, depth_); }

void InputPanels::reshape(int64_t rows_, int64_t depth_) {
  rows = rows_, depth = depth_;
  const int64_t needed = groups() * depth * kRows;
  if (needed > capacity) {
    data.reset();
    capacity = 0;
    data = allocate(needed);
    capacity = needed;
  }
}

void InputPanels::pack(const Matrix& x, int64_t first, int64_t count) {
  for (int64_t g = first / kRows; g * kRows < first + count; ++g) {
    double* out = data.get() + g * depth * kRows;
    const int64_t valid = std::min<int64_t>(kRows, rows - g * kRows);
    const double* in = x.data() + g * kRows * depth;
    for (int64_t k = 0; k < depth; ++k, out += kRows) {
      for (int64_t r = 0; r < valid; ++r) out[r] = in[r * depth + k];
      for (int64_t r = valid; r < kRows; ++r) out[r] = 0.0;
    }
  }
}

void multiply_panels(const WeightPanels& weight, int64_t panel0, const InputPanels& x, int64_t row0, int64_t rows,
                     int64_t cols, double* y, int64_t ldy, bool from_zero) {
  if (weight.depth != x.depth)
    throw Error("panel product: W of depth " + std::to_string(weight.depth) + " against x of depth " +
                std::to_string(x.depth));
  alignas(64) double edge[kRows * kCols];  // a block that runs past y's last row or column
  for (int64_t c0 = 0; c0 < cols; c0 += kCols) {
    const double* w = weight.panel(panel0 + c0 / kCols);
    const int64_t width = std::min<int64_t>(kCols, cols - c0);
    for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
      const double* xg = x.group((row0 + r0) / kRows);
      const int64_t height = std::min<int64_t>(kRows, rows - r0);
      double* block = y + r0 * ldy + c0;
      if (width == kCols && height == kRows) {
        micro_kernel(xg, w, x.depth, block, ldy, from_zero);
        continue;
      }
      std::fill(edge, edge + kRows * kCols, 0.0);
      if (!from_zero)
        for (int64_t r = 0; r < height; ++r) std::copy(block + r * ldy, block + r * ldy + width, edge + r * kCols);
      micro_kernel(xg, w, x.depth, edge, kCols, false);
      for (int64_t r = 0; r < height; ++r) std::copy(edge + r * kCols, edge + r * kCols + width, block + r * ldy);
    }
  }
}

}  // namespace deberta::detail
