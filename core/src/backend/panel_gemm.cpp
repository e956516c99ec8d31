// panel_gemm.cpp — see panel_gemm.h. The SIMD registers are Eigen's packet types (the widest this
// build enables: AVX-512, AVX2 + FMA, SSE2, or WebAssembly SIMD through Eigen's SSE2 path), so the
// one kernel below serves every target.
#include "backend/panel_gemm.h"

#include <algorithm>
#include <string>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace deberta::detail {

namespace {

namespace ei = Eigen::internal;
using Packet = ei::packet_traits<double>::type;
constexpr int kLanes = static_cast<int>(kPanelLanes);
constexpr int kRows = static_cast<int>(kPanelRows);  // accumulators: kRows × 3 registers (24 of 32, 12 of 16)
constexpr int kCols = static_cast<int>(kPanelCols);
static_assert(kLanes == ei::packet_traits<double>::size, "the panel width is Eigen's packet");

PanelBuffer allocate(int64_t doubles) {
  return PanelBuffer(static_cast<double*>(ei::aligned_malloc(sizeof(double) * static_cast<size_t>(std::max<int64_t>(1, doubles)))),
                     ei::aligned_free);
}

// acc[r][·] += x(r, k) · W-panel(k, ·) for k = 0 … depth − 1, in order, one fused multiply-add per
// register: the one loop of every product here. x(r, k) is x[k · kRows + r] for a packed x group,
// or x[r · ldx + k] for rows read in place (`InPlace`). `prefetch`, `lines`: memory the caller
// reads next, one 64-byte line fetched into L2 per k step (the L1's miss buffers stay free for
// the kernel's own loads).
// J: the registers of the panel's row computed (3: all kCols columns; 1 or 2 for a panel whose
// last columns are padding — the same arithmetic for each column computed, fewer columns).
template <int R, bool InPlace, int J = 3>
inline void accumulate(Packet (&acc)[R][3], const double* x, int64_t ldx, const double* w, int64_t depth,
                       const char* prefetch, int64_t lines) {
  static_assert(R >= 1 && R <= kRows, "a micro-kernel computes up to kRows rows");
  static_assert(J >= 1 && J <= 3, "a panel row is three registers");
  for (int64_t k = 0; k < depth; ++k, w += kCols) {
    if (k < lines) __builtin_prefetch(prefetch + 64 * k, 0, 2);
    Packet wk[J];
    for (int j = 0; j < J; ++j) wk[j] = ei::pload<Packet>(w + j * kLanes);
    for (int r = 0; r < R; ++r) {
      const Packet xr = ei::pset1<Packet>(InPlace ? x[r * ldx + k] : x[k * kRows + r]);
      for (int j = 0; j < J; ++j) acc[r][j] = ei::pmadd(xr, wk[j], acc[r][j]);
    }
  }
}

// The registers a panel of `width` valid columns needs (1 … 3).
inline int registers_for(int64_t width) { return static_cast<int>(std::min<int64_t>(3, (width + kLanes - 1) / kLanes)); }

// c `[R, kCols]` (row stride ldc) = start + x-group · W-panelᵀ; start: `bias` `[kCols]` for every
// row when given, else zeros (`from_zero`), else c itself. R ≤ kRows: the rows of the group
// computed (the x group still holds kRows rows; the rest are not read).
template <int R = kRows, int J = 3>
inline void micro_kernel(const double* x, const double* w, int64_t depth, double* c, int64_t ldc, bool from_zero,
                         const double* bias, const char* prefetch = nullptr, int64_t lines = 0) {
  Packet acc[R][3];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < J; ++j)
      acc[r][j] = bias        ? ei::ploadu<Packet>(bias + j * kLanes)
                  : from_zero ? ei::pset1<Packet>(0.0)
                              : ei::ploadu<Packet>(c + r * ldc + j * kLanes);
  accumulate<R, false, J>(acc, x, 0, w, depth, prefetch, lines);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < J; ++j) ei::pstoreu(c + r * ldc + j * kLanes, acc[r][j]);
}

// The micro-kernel for the `rows` first rows of a group (1 ≤ rows ≤ kRows): a group past x's end
// computes only its rows (19 masked rows: 8 + 8 + 3, not 24).
template <int R = kRows>
void micro_kernel_rows(int rows, int registers, const double* x, const double* w, int64_t depth, double* c,
                       int64_t ldc, const char* prefetch, int64_t lines) {
  if constexpr (R > 1)
    if (rows < R) return micro_kernel_rows<R - 1>(rows, registers, x, w, depth, c, ldc, prefetch, lines);
  switch (registers) {
    case 1: return micro_kernel<R, 1>(x, w, depth, c, ldc, false, nullptr, prefetch, lines);
    case 2: return micro_kernel<R, 2>(x, w, depth, c, ldc, false, nullptr, prefetch, lines);
    default: return micro_kernel<R, 3>(x, w, depth, c, ldc, false, nullptr, prefetch, lines);
  }
}

#if defined(__AVX__)
// Four values of a row at `p` widened to double: fp32, or fp16 where the build has F16C.
inline __m256d four_f32(const unsigned char* p) { return _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(p))); }
#if defined(__F16C__)
inline __m256d four_f16(const unsigned char* p) {
  return _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
#endif

// A whole panel (kCols rows from `rows`, row stride `row_bytes`) widened and laid out `[depth,
// kCols]` in one pass: four rows by four depths at a time, loaded, widened and transposed in
// registers (no widened copy of the rows to read back). Exact, the same doubles as widen_rows.
template <__m256d (*Four)(const unsigned char*)>
void pack_panel_widening(const unsigned char* rows, int64_t row_bytes, int64_t element, int64_t depth, double* out,
                         DType dtype) {
  static_assert(kCols % 4 == 0, "a panel is groups of four rows");
  int64_t k = 0;
  for (; k + 4 <= depth; k += 4, out += 4 * kCols) {
    for (int g = 0; g < kCols / 4; ++g) {
      const unsigned char* r = rows + 4 * g * row_bytes + k * element;
      const __m256d a = Four(r), b = Four(r + row_bytes), c = Four(r + 2 * row_bytes), d = Four(r + 3 * row_bytes);
      const __m256d ab_even = _mm256_unpacklo_pd(a, b), ab_odd = _mm256_unpackhi_pd(a, b);  // a0 b0 a2 b2 / a1 b1 a3 b3
      const __m256d cd_even = _mm256_unpacklo_pd(c, d), cd_odd = _mm256_unpackhi_pd(c, d);
      _mm256_storeu_pd(out + 4 * g, _mm256_permute2f128_pd(ab_even, cd_even, 0x20));             // depth k
      _mm256_storeu_pd(out + kCols + 4 * g, _mm256_permute2f128_pd(ab_odd, cd_odd, 0x20));       // k + 1
      _mm256_storeu_pd(out + 2 * kCols + 4 * g, _mm256_permute2f128_pd(ab_even, cd_even, 0x31)); // k + 2
      _mm256_storeu_pd(out + 3 * kCols + 4 * g, _mm256_permute2f128_pd(ab_odd, cd_odd, 0x31));   // k + 3
    }
  }
  for (; k < depth; ++k, out += kCols)
    for (int j = 0; j < kCols; ++j) widen_floats(dtype, rows + j * row_bytes + k * element, 1, out + j);
}
#endif

}  // namespace

void WeightPanels::pack(const RowsView& W, int64_t first_, int64_t count_) {
  if (first_ < 0 || count_ < 0 || first_ + count_ > W.rows())
    throw Error("weight panels: rows [" + std::to_string(first_) + ", " + std::to_string(first_ + count_) +
                ") of a weight with " + std::to_string(W.rows()) + " rows");
  reserve(first_, count_, W.cols());
  // Written front to back (the panel's kCols rows of W are read across: from the cache, or as
  // kCols streams from memory).
  for (int64_t p = 0; p < panels(); ++p) {
    double* out = data.get() + p * depth * kCols;
    const int64_t row0 = first + p * kCols, valid = std::min<int64_t>(kCols, first + count - row0);
    const int64_t ld = W.outerStride();
    const double* rows = W.data() + row0 * ld;
    for (int64_t k = 0; k < depth; ++k, out += kCols) {
      for (int64_t j = 0; j < valid; ++j) out[j] = rows[j * ld + k];
      for (int64_t j = valid; j < kCols; ++j) out[j] = 0.0;
    }
  }
}

void WeightPanels::pack_stored(const StoredMatrix& W, int64_t first_, int64_t count_) {
  if (const double* f64 = W.f64()) return pack(Eigen::Map<const Matrix>(f64, W.rows(), W.cols()), first_, count_);
  if (first_ < 0 || count_ < 0 || first_ + count_ > W.rows())
    throw Error("weight panels: rows [" + std::to_string(first_) + ", " + std::to_string(first_ + count_) +
                ") of a weight with " + std::to_string(W.rows()) + " rows");
  reserve(first_, count_, W.cols());
  // A panel's kCols rows widened into a buffer of this thread (kCols · depth doubles: in cache),
  // then written front to back as the F64 case writes them; with AVX, a full panel of fp32 (or fp16
  // with F16C) in one pass instead (issue 60, item 4: the pass over W that each forward makes).
  thread_local std::vector<double> rows;
  rows.resize(static_cast<size_t>(kCols * depth));
  for (int64_t p = 0; p < panels(); ++p) {
    double* out = data.get() + p * depth * kCols;
    const int64_t row0 = first + p * kCols, valid = std::min<int64_t>(kCols, first + count - row0);
#if defined(__AVX__)
    const int64_t element = dtype_size(W.dtype()), row_bytes = depth * element;
    const unsigned char* stored = W.data() + row0 * row_bytes;
    if (valid == kCols && W.dtype() == DType::F32) {
      pack_panel_widening<four_f32>(stored, row_bytes, element, depth, out, W.dtype());
      continue;
    }
#if defined(__F16C__)
    if (valid == kCols && W.dtype() == DType::F16) {
      pack_panel_widening<four_f16>(stored, row_bytes, element, depth, out, W.dtype());
      continue;
    }
#endif
#endif
    W.widen_rows(row0, valid, rows.data());
    for (int64_t k = 0; k < depth; ++k, out += kCols) {
      for (int64_t j = 0; j < valid; ++j) out[j] = rows[j * depth + k];
      for (int64_t j = valid; j < kCols; ++j) out[j] = 0.0;
    }
  }
}

const double* widened_rows(const StoredMatrix& W, int64_t first, int64_t count, std::vector<double>* scratch) {
  if (const double* f64 = W.f64()) return f64 + first * W.cols();
  scratch->resize(static_cast<size_t>(std::max<int64_t>(1, count * W.cols())));
  W.widen_rows(first, count, scratch->data());
  return scratch->data();
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

void WeightPanels::pack_transposed(const RowsView& Wt) {
  reserve(0, Wt.cols(), Wt.rows());
  for (int64_t p = 0; p < panels(); ++p) {
    double* out = data.get() + p * depth * kCols;
    const int64_t col0 = p * kCols, valid = std::min<int64_t>(kCols, count - col0);
    for (int64_t k = 0; k < depth; ++k) {
      const double* in = Wt.data() + k * Wt.outerStride() + col0;
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

void InputPanels::pack(const RowsView& x, int64_t first, int64_t count) {
  for (int64_t g = first / kRows; g * kRows < first + count; ++g) {
    double* out = data.get() + g * depth * kRows;
    const int64_t valid = std::min<int64_t>(kRows, rows - g * kRows);
    const int64_t ld = x.outerStride();
    const double* in = x.data() + g * kRows * ld;
    for (int64_t k = 0; k < depth; ++k, out += kRows) {
      for (int64_t r = 0; r < valid; ++r) out[r] = in[r * ld + k];
      for (int64_t r = valid; r < kRows; ++r) out[r] = 0.0;
    }
  }
}

void multiply_panels(const WeightPanels& weight, int64_t panel0, const InputPanels& x, int64_t row0, int64_t rows,
                     int64_t cols, double* y, int64_t ldy, bool from_zero, const double* bias, const char* prefetch,
                     int64_t prefetch_bytes) {
  // The prefetch spread over the micro-kernel calls, a share of its lines each.
  const int64_t calls = ((cols + kCols - 1) / kCols) * ((rows + kRows - 1) / kRows);
  const int64_t lines = (prefetch_bytes + 63) / 64, per_call = calls > 0 ? (lines + calls - 1) / calls : 0;
  int64_t call = 0;
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
      const double* start = bias ? bias + c0 : nullptr;
      const int64_t pf_first = std::min(lines, call * per_call), pf_lines = std::min(lines - pf_first, per_call);
      const char* pf = prefetch ? prefetch + 64 * pf_first : nullptr;
      ++call;
      if (width == kCols && height == kRows) {
        micro_kernel(xg, w, x.depth, block, ldy, from_zero, start, pf, pf ? pf_lines : 0);
        continue;
      }
      std::fill(edge, edge + kRows * kCols, 0.0);
      for (int64_t r = 0; r < height; ++r) {
        const double* from = start ? start : from_zero ? edge + r * kCols : block + r * ldy;
        if (from != edge + r * kCols) std::copy(from, from + width, edge + r * kCols);
      }
      micro_kernel_rows(static_cast<int>(height), registers_for(width), xg, w, x.depth, edge, kCols, pf,
                        pf ? pf_lines : 0);
      for (int64_t r = 0; r < height; ++r) std::copy(edge + r * kCols, edge + r * kCols + width, block + r * ldy);
    }
  }
}

namespace {

// t `[R, kCols]` = start[r] + Σ_k x(r, k) · panel(k, ·), x's rows in place (stride ldx); the first
// J · kLanes columns of t only.
template <int R, int J>
void rows_kernel(const double* x, int64_t ldx, const double* w, int64_t depth, const double* start, double* t,
                 const char* prefetch, int64_t lines) {
  Packet acc[R][3];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < J; ++j) acc[r][j] = ei::pset1<Packet>(start[r]);
  accumulate<R, true, J>(acc, x, ldx, w, depth, prefetch, lines);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < J; ++j) ei::pstoreu(t + r * kCols + j * kLanes, acc[r][j]);
}

template <int R = kRows>
void rows_kernel_n(int rows, int registers, const double* x, int64_t ldx, const double* w, int64_t depth,
                   const double* start, double* t, const char* prefetch, int64_t lines) {
  if constexpr (R > 1)
    if (rows < R) return rows_kernel_n<R - 1>(rows, registers, x, ldx, w, depth, start, t, prefetch, lines);
  switch (registers) {
    case 1: return rows_kernel<R, 1>(x, ldx, w, depth, start, t, prefetch, lines);
    case 2: return rows_kernel<R, 2>(x, ldx, w, depth, start, t, prefetch, lines);
    default: return rows_kernel<R, 3>(x, ldx, w, depth, start, t, prefetch, lines);
  }
}

}  // namespace

void multiply_rows_transposed(const double* x, int64_t ldx, int64_t rows, const WeightPanels& W, const double* start,
                              double* out, int64_t ldo, const char* prefetch, int64_t prefetch_bytes) {
  alignas(64) double t[kRows * kCols];
  const int64_t panels = W.panels(), lines = (prefetch_bytes + 63) / 64;
  const int64_t per_panel = panels > 0 ? (lines + panels - 1) / panels : 0;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t pf_first = std::min(lines, p * per_panel), pf_lines = std::min(lines - pf_first, per_panel);
    const int64_t m0 = p * kCols, width = std::min<int64_t>(kCols, W.count - m0);
    // A last panel of few columns (74 masked rows: 3 panels and 2 columns) computes only the
    // registers that hold them.
    rows_kernel_n(static_cast<int>(rows), registers_for(width), x, ldx, W.panel(p), W.depth, start, t,
                  prefetch ? prefetch + 64 * pf_first : nullptr, prefetch ? pf_lines : 0);
    for (int64_t m = 0; m < width; ++m)
      for (int64_t r = 0; r < rows; ++r) out[(m0 + m) * ldo + r] = t[r * kCols + m];
  }
}

void linear_rows_in_place(const WeightPanels& x_rows, const StoredMatrix& W, const Vector& bias, int64_t first,
                          int64_t width, Matrix* y) {
  const int64_t in = W.cols(), out = W.rows();
  const int64_t element = dtype_size(W.dtype());
  const auto* stored = reinterpret_cast<const char*>(W.data());
  alignas(64) const double zeros[kRows] = {};
  thread_local std::vector<double> scratch;  // kRows rows widened (W not stored as F64)
  for (int64_t m0 = first; m0 < first + width; m0 += kRows) {
    const int64_t rows = std::min<int64_t>(kRows, first + width - m0);
    const int64_t next = std::min<int64_t>(kRows, first + width - m0 - rows);  // fetched meanwhile
    // The kernel's "x" is these rows of W, its panel operand x's rows: y(n, m) lands at n · out + m.
    multiply_rows_transposed(widened_rows(W, m0, rows, &scratch), in, rows, x_rows,
                             bias.size() > 0 ? bias.data() + m0 : zeros, y->data() + m0, out,
                             stored + (m0 + rows) * in * element, next * in * element);
  }
}

}  // namespace deberta::detail
