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
#include <cstring>

#if defined(__x86_64__) && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)) && \
    (defined(__AVX512F__) || defined(__AVX2__))
#define DEBERTA_LIBMVEC_ERF 1
#endif

namespace deberta::ops::fast {

#ifdef DEBERTA_LIBMVEC_ERF
namespace {

// A vector of kLanes doubles (GCC's vector extension: +, *, / act lane by lane) and glibc's
// vector erf for it, by the x86-64 vector function ABI name it exports (libmvec.so.1,
// GLIBC_2.35; linked through libm's linker script).
#ifdef __AVX512F__
constexpr int64_t kLanes = 8;
using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
extern "C" Lanes _ZGVeN8v_erf(Lanes);
Lanes erf_lanes(Lanes v) { return _ZGVeN8v_erf(v); }
#else
constexpr int64_t kLanes = 4;
using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
extern "C" Lanes _ZGVdN4v_erf(Lanes);
Lanes erf_lanes(Lanes v) { return _ZGVdN4v_erf(v); }
#endif

// 0.5 · x · (1 + erf(x / √2)), each operation in the order of the scalar formula (reference.cpp).
void gelu_lanes(double* x) {
  Lanes v;
  std::memcpy(&v, x, sizeof v);
  v = 0.5 * v * (1.0 + erf_lanes(v / std::sqrt(2.0)));
  std::memcpy(x, &v, sizeof v);
}

void gelu_row(double* x, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) gelu_lanes(x + i);
  if (i == n) return;
  double tail[kLanes] = {};  // zeros in the unused lanes: erf(0) takes no special path
  std::copy(x + i, x + n, tail);
  gelu_lanes(tail);
  std::copy(tail, tail + (n - i), x + i);
}

}  // namespace

void gelu_erf(Eigen::Ref<Matrix> x) {
  // Rows in ranges across the threads (each entry's bits depend on its value only).
  for_rows(x.rows(), x.cols(), [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) gelu_row(x.row(r).data(), x.cols());
  });
}

bool vector_erf() { return true; }

#else  // no vector erf in this build: the reference backend's loop

void gelu_erf(Eigen::Ref<Matrix> x) { reference::gelu_erf(x); }

bool vector_erf() { return false; }

#endif

}  // namespace deberta::ops::fast
