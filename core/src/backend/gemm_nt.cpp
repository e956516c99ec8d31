// gemm_nt.cpp — see gemm_nt.h.
#include "backend/gemm_nt.h"
#include "backend/panel_gemm.h"

#include <algorithm>
#include <string>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace deberta::detail {

namespace {

// One SIMD register of doubles and the four operations the kernel needs.
#if defined(__AVX512F__)
struct Lanes {
  using V = __m512d;
  static constexpr int kWidth = 8;
  static constexpr int kRows = 4, kCols = 6;  // 24 accumulators + 6 + 1 of 32 registers
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static double sum(V v) {  // once per output element, in this fixed order
    alignas(64) double t[8];
    _mm512_store_pd(t, v);
    return ((t[0] + t[4]) + (t[2] + t[6])) + ((t[1] + t[5]) + (t[3] + t[7]));
  }
  // `sum` of eight registers at once, into out[0 … 7]: the same additions in the same order for each
  // (so the same bits), done lane-parallel by three rounds of shuffles and adds instead of eight
  // rounds of stores and scalar adds (at 19 masked rows, the MLM head spent a third of its time in
  // `sum`).
  static void sum8(const V* v, double* out) {
    V half[4], quarter[2];
    for (int i = 0; i < 4; ++i)  // [a0+a4, a1+a5, a2+a6, a3+a7, b0+b4, …] for the pair (a, b) = v[2i], v[2i+1]
      half[i] = _mm512_add_pd(_mm512_shuffle_f64x2(v[2 * i], v[2 * i + 1], 0x44),
                              _mm512_shuffle_f64x2(v[2 * i], v[2 * i + 1], 0xEE));
    for (int i = 0; i < 2; ++i)  // [(a0+a4)+(a2+a6), (a1+a5)+(a3+a7), b…, c…, d…]
      quarter[i] = _mm512_add_pd(_mm512_shuffle_f64x2(half[2 * i], half[2 * i + 1], 0x88),
                                 _mm512_shuffle_f64x2(half[2 * i], half[2 * i + 1], 0xDD));
    // [a, e, b, f, c, g, d, h]: each the first pair's sum plus the second's
    const V sums = _mm512_add_pd(_mm512_unpacklo_pd(quarter[0], quarter[1]), _mm512_unpackhi_pd(quarter[0], quarter[1]));
    alignas(64) double t[8];
    _mm512_store_pd(t, sums);
    for (int i = 0; i < 4; ++i) out[i] = t[2 * i], out[4 + i] = t[2 * i + 1];
  }
};
#elif defined(__AVX2__) && defined(__FMA__)
struct Lanes {
  using V = __m256d;
  static constexpr int kWidth = 4;
  static constexpr int kRows = 3, kCols = 4;  // 12 accumulators + 4 + 1 of 16 registers
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static double sum(V v) {
    alignas(32) double t[4];
    _mm256_store_pd(t, v);
    return (t[0] + t[2]) + (t[1] + t[3]);
  }
};
#elif defined(__wasm_simd128__)
struct Lanes {  // WebAssembly SIMD (-msimd128, the web edition): two doubles, no fused multiply-add
  using V = v128_t;
  static constexpr int kWidth = 2;
  static constexpr int kRows = 3, kCols = 4;  // 12 accumulators + 4 + 1, as on AVX2
  static V zero() { return wasm_f64x2_splat(0.0); }
  static V load(const double* p) { return wasm_v128_load(p); }
  static V fma(V a, V b, V c) { return wasm_f64x2_add(wasm_f64x2_mul(a, b), c); }
  static double sum(V v) { return wasm_f64x2_extract_lane(v, 0) + wasm_f64x2_extract_lane(v, 1); }
};
#else
struct Lanes {  // portable: one lane, the compiler's own code
  using V = double;
  static constexpr int kWidth = 1;
  static constexpr int kRows = 4, kCols = 4;
  static V zero() { return 0.0; }
  static V load(const double* p) { return *p; }
  static V fma(V a, V b, V c) { return a * b + c; }
  static double sum(V v) { return v; }
};
#endif

/// One tile: R rows of x against C rows of w over the whole k range. `next` (or null) is the next
/// tile's first row of w, fetched into cache while this tile computes.
template <int R, int C>
void tile(const double* x, int64_t ldx, const double* w, int64_t ldw, int64_t K, double* y, int64_t ldy,
          const double* next) {
  using L = Lanes;
  typename L::V acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) acc[r][c] = L::zero();
  int64_t k = 0;
  for (; k + L::kWidth <= K; k += L::kWidth) {
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
    if (next)
      for (int c = 0; c < C; ++c) _mm_prefetch(reinterpret_cast<const char*>(next + c * ldw + k), _MM_HINT_T0);
#endif
    typename L::V wk[C];
    for (int c = 0; c < C; ++c) wk[c] = L::load(w + c * ldw + k);
    for (int r = 0; r < R; ++r) {
      const typename L::V xk = L::load(x + r * ldx + k);
      for (int c = 0; c < C; ++c) acc[r][c] = L::fma(xk, wk[c], acc[r][c]);
    }
  }
#if defined(__AVX512F__)
  if (k == K) {  // no remainder: the sums eight at a time
    constexpr int n = R * C, groups = (n + 7) / 8;
    typename L::V all[groups * 8];
    for (int i = 0; i < groups * 8; ++i) all[i] = i < n ? acc[i / C][i % C] : L::zero();
    double sums[groups * 8];
    for (int g = 0; g < groups; ++g) L::sum8(all + 8 * g, sums + 8 * g);
    for (int i = 0; i < n; ++i) y[(i / C) * ldy + i % C] = sums[i];
    return;
  }
#endif
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      double s = L::sum(acc[r][c]);
      for (int64_t t = k; t < K; ++t) s += x[r * ldx + t] * w[c * ldw + t];
      y[r * ldy + c] = s;
    }
}

/// A tile of `rows` ≤ kRows x rows against C w rows (the row count is a template argument).
template <int C>
void tile_rows(int rows, const double* x, int64_t ldx, const double* w, int64_t ldw, int64_t K, double* y,
               int64_t ldy, const double* next) {
  static_assert(Lanes::kRows <= 4, "tile_rows dispatches up to 4 rows");
  switch (rows) {
    case 1: return tile<1, C>(x, ldx, w, ldw, K, y, ldy, next);
    case 2: return tile<2, C>(x, ldx, w, ldw, K, y, ldy, next);
    case 3: return tile<3, C>(x, ldx, w, ldw, K, y, ldy, next);
    default: return tile<Lanes::kRows, C>(x, ldx, w, ldw, K, y, ldy, next);
  }
}

template <int C>
void column_tile(const double* x, int64_t ldx, int64_t M, const double* w, int64_t ldw, int64_t K, double* y,
                 int64_t ldy, const double* next) {
  for (int64_t m = 0; m < M; m += Lanes::kRows) {
    const int rows = static_cast<int>(std::min<int64_t>(Lanes::kRows, M - m));
    // Fetch the next tile of w during the first pass only: later passes find it in cache.
    tile_rows<C>(rows, x + m * ldx, ldx, w, ldw, K, y + m * ldy, ldy, m == 0 ? next : nullptr);
  }
}

}  // namespace

void gemm_nt(const double* x, int64_t ldx, int64_t M, const double* w, int64_t ldw, int64_t O, int64_t K, double* y,
             int64_t ldy) {
  constexpr int C = Lanes::kCols;
  int64_t o = 0;
  for (; o + C <= O; o += C) {
    const double* next = o + 2 * C <= O ? w + (o + C) * ldw : nullptr;
    column_tile<C>(x, ldx, M, w + o * ldw, ldw, K, y + o, ldy, next);
  }
  for (; o < O; ++o) column_tile<1>(x, ldx, M, w + o * ldw, ldw, K, y + o, ldy, nullptr);
}

void check_linear_input(const StoredMatrix& W, const Matrix& x) {
  if (x.cols() != W.cols())
    throw Error("linear layer [" + std::to_string(W.rows()) + ", " + std::to_string(W.cols()) + "] applied to input [" +
                std::to_string(x.rows()) + ", " + std::to_string(x.cols()) + "]");
}

void linear_columns(const Matrix& x, const StoredMatrix& W, const Vector& bias, int64_t first, int64_t width, Matrix* y) {
  thread_local std::vector<double> scratch;  // the block's rows of W widened (W not stored as F64)
  gemm_nt(x.data(), x.cols(), x.rows(), widened_rows(W, first, width, &scratch), W.cols(), width, x.cols(),
          y->data() + first, y->cols());
  if (bias.size() > 0) y->middleCols(first, width).rowwise() += bias.segment(first, width).transpose();
}

}  // namespace deberta::detail
