// fast_elementwise.cpp — the fast backend's elementwise ops (ops.h): GELU through glibc's vector
// erf (libmvec, glibc ≥ 2.35 on x86-64: 8 lanes with AVX-512, 4 with AVX2; within 4 ulp of the
// scalar erf, measured ≤ 3 ulp and ≤ 1.1e-16 absolute), else the scalar erf.
//
// Bitwise: every entry goes through the same vector call whatever its place in the block — a row's
// tail shorter than a vector is copied into a zero-padded vector first — and libmvec computes each
// lane from that lane alone, so any block of a matrix gets the entries the whole matrix gets (the
// feed-forward applies the activation per tile of its product; tests/test_threads.cpp).
#include "backend/ops.h"

#include <algorithm>
#include <cmath>

#if defined(__x86_64__) && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)) && \
    (defined(__AVX512F__) || defined(__AVX2__))
#include <immintrin.h>
#define DEBERTA_LIBMVEC_ERF 1
#endif

namespace deberta::ops::fast {

namespace {

#ifdef DEBERTA_LIBMVEC_ERF
// glibc's vector erf, by the x86-64 vector function ABI names it exports (libmvec.so.1,
// GLIBC_2.35; linked through libm's linker script).
#ifdef __AVX512F__
extern "C" __m512d _ZGVeN8v_erf(__m512d);
using Lanes = __m512d;
constexpr int64_t kLanes = 8;
Lanes load(const double* p) { return _mm512_loadu_pd(p); }
void store(double* p, Lanes v) { _mm512_storeu_pd(p, v); }
Lanes splat(double v) { return _mm512_set1_pd(v); }
Lanes mul(Lanes a, Lanes b) { return _mm512_mul_pd(a, b); }
Lanes add(Lanes a, Lanes b) { return _mm512_add_pd(a, b); }
Lanes div(Lanes a, Lanes b) { return _mm512_div_pd(a, b); }
Lanes erf(Lanes v) { return _ZGVeN8v_erf(v); }
#else
extern "C" __m256d _ZGVdN4v_erf(__m256d);
using Lanes = __m256d;
constexpr int64_t kLanes = 4;
Lanes load(const double* p) { return _mm256_loadu_pd(p); }
void store(double* p, Lanes v) { _mm256_storeu_pd(p, v); }
Lanes splat(double v) { return _mm256_set1_pd(v); }
Lanes mul(Lanes a, Lanes b) { return _mm256_mul_pd(a, b); }
Lanes add(Lanes a, Lanes b) { return _mm256_add_pd(a, b); }
Lanes div(Lanes a, Lanes b) { return _mm256_div_pd(a, b); }
Lanes erf(Lanes v) { return _ZGVdN4v_erf(v); }
#endif

// 0.5 · x · (1 + erf(x / √2)), each operation in the order of the scalar formula (ops.h).
Lanes gelu_lanes(Lanes x) {
  const Lanes e = erf(div(x, splat(std::sqrt(2.0))));
  return mul(mul(splat(0.5), x), add(splat(1.0), e));
}

void gelu_row(double* x, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(x + i, gelu_lanes(load(x + i)));
  if (i == n) return;
  double tail[kLanes] = {};  // zeros in the unused lanes: erf(0) takes no special path
  std::copy(x + i, x + n, tail);
  store(tail, gelu_lanes(load(tail)));
  std::copy(tail, tail + (n - i), x + i);
}
#else
void gelu_row(double* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
}
#endif

}  // namespace

void gelu_erf(Eigen::Ref<Matrix> x) {
  for (int64_t r = 0; r < x.rows(); ++r) gelu_row(x.row(r).data(), x.cols());
}

bool vector_erf() {
#ifdef DEBERTA_LIBMVEC_ERF
  return true;
#else
  return false;
#endif
}

}  // namespace deberta::ops::fast
