// Op-by-op comparison of the two backends (backend/ops.h), in the manner of ggml's
// test-backend-ops: every op of the fast backend against the reference backend on random shapes
// chosen to reach each code path — odd sizes, one row, the 32-row boundary of the dot-product
// kernel, k > 1024 (the packed path's narrower blocks), bias or none, every fused step — and then
// whole layers with padding masks. The ops come from the registry (ops.h, DEBERTA_OPS): the test
// runs the comparison of every listed op and fails for a listed op that has none. The error of an
// op is max |fast − reference| / max |reference| over its output (normwise relative, so that
// entries near zero do not dominate); each must be ≤ 1e-12, and the worst per op is printed.
#include "test_util.h"

#include "backend/ops.h"
#include "backend/panel_gemm.h"
#include "backend/threading.h"
#include "deberta/backend.h"
#include "deberta/equations.h"
#include "deberta/model.h"
#include "deberta/model_io.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

using namespace deberta;

namespace {

constexpr double kOpTolerance = 1e-12;

struct Random {
  std::mt19937_64 rng;
  Matrix operator()(int64_t rows, int64_t cols) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Matrix m(rows, cols);
    for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
  }
  Vector vector(int64_t n) { return (*this)(n, 1).col(0); }
};

// The worst error seen per op, printed once at the end of each test case.
struct Worst {
  std::map<std::string, double> by_op;
  void record(const std::string& op, const Matrix& fast, const Matrix& ref) {
    REQUIRE_MESSAGE((fast.rows() == ref.rows() && fast.cols() == ref.cols()), op);
    const double scale = std::max(ref.cwiseAbs().maxCoeff(), 1e-300);
    const double err = ref.size() == 0 ? 0.0 : (fast - ref).cwiseAbs().maxCoeff() / scale;
    CHECK_MESSAGE(err <= kOpTolerance, op << ": relative error " << err);
    double& w = by_op[op];
    w = std::max(w, err);
  }
  ~Worst() {
    if (by_op.count("gelu_erf"))
      std::printf("backend ops: gelu_erf of the fast backend on %s\n", ops::fast::vector_erf() ? "glibc's vector erf" : "the scalar erf");
    for (const auto& [op, err] : by_op) std::printf("backend ops: %-28s worst relative error %.3g\n", op.c_str(), err);
  }
};


struct ThreadGuard {
  int saved = num_threads();
  ~ThreadGuard() { set_num_threads(saved); }
};

// The shapes: rows N, depth k (= in), outputs.
struct Shape {
  int64_t n, in, out;
};
const Shape kShapes[] = {{1, 7, 5},     {1, 384, 384},  {3, 17, 29},   {32, 64, 96},   {33, 64, 97},
                         {45, 101, 203}, {128, 384, 1536}, {130, 1536, 384}, {7, 1030, 61}, {64, 1100, 257}};

// One comparison per op of the registry (ops.h, DEBERTA_OPS): each runs the op on both backends for
// one shape and records the error. The shapes and thread counts come from the registry test below.
using OpCheck = void (*)(Random&, Worst&, const Shape&);

void check_linear(Random& random, Worst& worst, const Shape& s) {
  for (bool bias : {true, false}) {
    const Linear layer{random(s.out, s.in), bias ? random.vector(s.out) : Vector()};
    const Matrix x = random(s.n, s.in);
    worst.record("linear", ops::fast::linear(layer, x), ops::reference::linear(layer, x));
  }
}

void check_products(Random& random, Worst& worst, const Shape& s) {
  for (bool bias : {true, false}) {
    const Linear layer{random(s.out, s.in), bias ? random.vector(s.out) : Vector()};
    const Matrix x = random(s.n, s.in);
    for (bool rows_independent : {false, true}) {
      Matrix yf, yr;
      ops::Product p{&layer, &x, &yf, rows_independent};
      ops::fast::products({p});
      p.y = &yr;
      ops::reference::products({p});
      worst.record(rows_independent ? "products (rows independent)" : "products", yf, yr);
    }
    // The fused steps: activation, residual, then LayerNorm of finished rows.
    const Matrix residual = random(s.n, s.out);
    const LayerNormParams norm{random.vector(s.out), random.vector(s.out), 1e-7};
    Matrix yf, yr, nf(s.n, s.out), nr(s.n, s.out);
    ops::Product f{&layer, &x, &yf};
    f.elementwise = [](Eigen::Ref<Matrix> b) { activation_in_place(b, Activation::GeluErf); };
    f.residual = &residual;
    f.rows_done = [&](int64_t a, int64_t b) { layer_norm_rows(yf, a, b, norm, &nf); };
    ops::fast::products({f});
    ops::Product r = f;
    r.y = &yr;
    r.rows_done = [&](int64_t a, int64_t b) { layer_norm_rows(yr, a, b, norm, &nr); };
    ops::reference::products({r});
    worst.record("products + act + residual", yf, yr);
    worst.record("products ... + LayerNorm", nf, nr);
  }
  // Several products in one set, sharing an input (Q_c, K_c, V_c) and not (K_r).
  const Linear q{random(s.out, s.in), random.vector(s.out)}, k{random(s.out, s.in), random.vector(s.out)};
  const Matrix x = random(s.n, s.in), table = random(2 * s.n + 1, s.in);
  Matrix qf, kf, rf, qr, kr, rr;
  ops::fast::products({{&q, &x, &qf}, {&k, &x, &kf}, {&k, &table, &rf, true}});
  ops::reference::products({{&q, &x, &qr}, {&k, &x, &kr}, {&k, &table, &rr, true}});
  worst.record("products (a set of three)", qf, qr);
  worst.record("products (a set of three)", kf, kr);
  worst.record("products (a set of three)", rf, rr);
}

// GELU on entries spread over erf's ranges (|x / √2| up to 7, past where erf rounds to ±1), on the
// whole matrix and on a block that starts off any vector boundary.
void check_gelu_erf(Random& random, Worst& worst, const Shape& s) {
  const Matrix wide = 10.0 * random(s.n, s.out);
  Matrix gf = wide, gr = wide;
  ops::fast::gelu_erf(gf);
  ops::reference::gelu_erf(gr);
  worst.record("gelu_erf", gf, gr);
  Matrix block = wide;
  const int64_t first = std::min<int64_t>(3, s.out - 1);
  ops::fast::gelu_erf(block.middleCols(0, first));
  ops::fast::gelu_erf(block.middleCols(first, s.out - first));
  CHECK(std::memcmp(block.data(), gf.data(), static_cast<size_t>(gf.size()) * sizeof(double)) == 0);
}

// The tied decoder over a vocabulary of `out · 3 + 1` rows: several slices of E, the last one
// partial, on both of its paths (1,024-row slices for few or independent rows: up to 5 slices here;
// 4,096-row slices for more rows: 2 at out = 1536).
void check_tied_decoder(Random& random, Worst& worst, const Shape& s) {
  const Matrix x = random(s.n, s.in);
  const Matrix E = random(s.out * 3 + 1, s.in);
  const Vector vb = random.vector(E.rows());
  for (bool rows_independent : {false, true})
    worst.record("tied_decoder", ops::fast::tied_decoder(x, E, vb, rows_independent),
                 ops::reference::tied_decoder(x, E, vb));
}

// for_rows and tasks produce nothing to compare: on both backends they must cover their ranges
// exactly once (rows from the shape's n and out), and tasks must pass the first exception on.
void check_for_rows(Random&, Worst&, const Shape& s) {
  for (Backend b : {Backend::Fast, Backend::Reference}) {
    test::BackendGuard on(b);
    for (int64_t rows : {s.n, s.out, s.n * s.out}) {
      std::vector<int> seen(static_cast<size_t>(rows), 0);
      ops::for_rows(rows, s.in, [&](int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r) ++seen[static_cast<size_t>(r)];
      });
      CHECK_MESSAGE(std::count(seen.begin(), seen.end(), 1) == rows, backend_name(b) << ", rows " << rows);
    }
  }
}

void check_tasks(Random&, Worst&, const Shape& s) {
  for (Backend b : {Backend::Fast, Backend::Reference}) {
    test::BackendGuard on(b);
    std::vector<int> ran(static_cast<size_t>(s.out), 0);
    ops::tasks(s.out, [&](int64_t i) { ++ran[static_cast<size_t>(i)]; });
    CHECK_MESSAGE(std::count(ran.begin(), ran.end(), 1) == s.out, backend_name(b));
    CHECK_THROWS_WITH_AS(ops::tasks(5, [](int64_t i) { if (i == 3) throw Error("task 3"); }), "task 3", Error);
  }
}

// Whether a and b are the same doubles, bit for bit (shapes included).
bool same_bits(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(double)) == 0);
}

// The reference backend's `attention` (the equations layer's `attention_head`, handed over) on heads.
void reference_attention(const std::vector<ops::AttentionHead>& heads, std::vector<ops::AttentionResult>* out,
                         bool keep_probs, bool keep_maps) {
  const test::BackendGuard reference(Backend::Reference);
  ops::attention(heads, out, keep_probs, keep_maps);
}

// The same on one head.
void reference_attention(const ops::AttentionHead& head, ops::AttentionResult* out, bool keep_probs, bool keep_maps) {
  std::vector<ops::AttentionResult> one;
  reference_attention(std::vector<ops::AttentionHead>{head}, &one, keep_probs, keep_maps);
  *out = std::move(one.at(0));
}

// eq. 4 whole for one head: both backends' `attention` against the equations layer's
// `attention_head` (context, probs, term maps, logits) to 1e-12, the reference one bit for bit (it
// is attention_head, on copies of the head's columns); the fast one's context and probs
// the same bits whatever it keeps (every trace level of a forward then agrees). Every subset of the
// four terms, a padding key and query, a masked head, and the paper's p2c rows (another table row
// than c2p's) where p2c is on.
void check_attention(Random& random, Worst& worst, const Shape& s) {
  const int64_t N = s.n, d = s.in % 61 + 3, offset = 2, R = 2 * N + offset;
  HeadProjections p;
  p.Q_c = random(N, d), p.K_c = random(N, d), p.V_c = random(N, d);
  p.K_r = random(R, d), p.Q_r = random(R, d);
  p.row_offset = offset;
  IndexMatrix c2p_row(N, N), p2c_row(N, N);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j) c2p_row(i, j) = i - j + N - 1 + offset, p2c_row(i, j) = j - i + N - 1 + offset;
  Vector mask = Vector::Ones(N);
  if (N > 2) mask[N - 1] = 0;  // a padding token: no key for the others, a zero row of its own
  for (int subset = 0; subset < 16; ++subset)
    for (bool masked : {false, true}) {
      if (masked && subset != 15) continue;
      AttentionSetup a;
      for (size_t t = 0; t < kTermCount; ++t) a.terms[kAllTerms[t]] = (subset >> t) & 1;
      a.scale = 0.37, a.c2p_row = &c2p_row, a.p2c_row = (subset & 4) ? &p2c_row : &c2p_row, a.mask = &mask;
      const HeadResult want = attention_head(p, a, masked, /*keep_scores=*/true);
      ops::AttentionHead h;
      h.Q_c = &p.Q_c, h.K_c = &p.K_c, h.V_c = &p.V_c, h.K_r = &p.K_r, h.Q_r = &p.Q_r;
      h.c2p_row = a.c2p_row, h.p2c_row = a.p2c_row, h.row_offset = offset;
      h.terms = a.terms, h.scale = a.scale, h.mask = &mask, h.masked = masked;
      CAPTURE(subset);
      CAPTURE(masked);
      ops::AttentionResult full, probs_only, bare, ref;
      ops::fast::attention(h, &full, true, true);
      ops::fast::attention(h, &probs_only, true, false);
      ops::fast::attention(h, &bare, false, false);
      CHECK(same_bits(full.context, bare.context));
      CHECK(same_bits(probs_only.context, bare.context));
      CHECK(same_bits(full.probs, probs_only.probs));
      CHECK(bare.probs.size() == 0);
      CHECK(bare.logits.size() == 0);
      // The rows by distance (entry i − j + N − 1) instead of the matrices: the same bits.
      std::vector<int64_t> c2p_distance(static_cast<size_t>(2 * N - 1)), p2c_distance(c2p_distance.size());
      for (int64_t t = 0; t < 2 * N - 1; ++t) {
        const int64_t i = std::max<int64_t>(0, t - (N - 1)), j = i - (t - (N - 1));
        c2p_distance[static_cast<size_t>(t)] = (*a.c2p_row)(i, j), p2c_distance[static_cast<size_t>(t)] = (*a.p2c_row)(i, j);
      }
      ops::AttentionHead by_distance = h;
      by_distance.c2p_by_distance = c2p_distance.data(), by_distance.p2c_by_distance = p2c_distance.data();
      ops::AttentionResult full_by_distance, bare_by_distance;
      ops::fast::attention(by_distance, &full_by_distance, true, true);
      ops::fast::attention(by_distance, &bare_by_distance, false, false);
      CHECK(same_bits(bare_by_distance.context, bare.context));
      CHECK(same_bits(full_by_distance.context, full.context));
      CHECK(same_bits(full_by_distance.probs, full.probs));
      CHECK(same_bits(full_by_distance.logits, full.logits));
      for (Term t : kAllTerms) CHECK(same_bits(full_by_distance.terms[t], full.terms[t]));
      reference_attention(h, &ref, true, true);
      // The reference backend's eq. 4 is attention_head itself: the same bits.
      CHECK(same_bits(ref.context, want.context));
      CHECK(same_bits(ref.probs, want.probs));
      CHECK(same_bits(ref.logits, want.scores.logits));
      for (Term t : kAllTerms) CHECK(same_bits(ref.terms[t], want.scores.terms[t]));
      for (const ops::AttentionResult* got : {&full, &ref}) {
        const std::string which = got == &full ? "attention" : "attention (reference)";
        worst.record(which, got->context, want.context);
        worst.record(which, got->probs, want.probs);
        worst.record(which, got->logits, want.scores.logits);
        for (Term t : kAllTerms) {
          CHECK(got->terms[t].size() == want.scores.terms[t].size());
          if (want.scores.terms[t].size() > 0) worst.record(which, got->terms[t], want.scores.terms[t]);
        }
      }
    }
}

const std::map<std::string, OpCheck> kOpChecks = {
    {"products", check_products}, {"linear", check_linear},     {"tied_decoder", check_tied_decoder},
    {"for_rows", check_for_rows}, {"gelu_erf", check_gelu_erf}, {"tasks", check_tasks},
    {"attention", check_attention}};

}  // namespace

TEST_SUITE("backend_ops") {
  // WeightPanels::pack_stored widens W while packing (issue 60), by a one-pass AVX path for full
  // panels of fp32 and fp16 (issue 60, item 4) and by widen_rows otherwise: every panel double must
  // be what packing the float64-widened W gives, for each dtype, whole and partial panels, depths
  // with and without a remainder of four, and a block that starts inside W.
  TEST_CASE("pack_stored: the panels of W widened first, for fp32, fp16, bf16 and fp64, every shape") {
    std::mt19937 gen(60);
    std::uniform_int_distribution<uint32_t> bits;
    for (const DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
      for (const int64_t depth : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{771}}) {
        const int64_t rows = 3 * detail::kPanelCols + 5;
        AlignedBytes bytes(static_cast<size_t>(rows * depth * dtype_size(dtype)));
        for (size_t at = 0; at < bytes.size(); at += static_cast<size_t>(dtype_size(dtype))) {
          // Random finite values: subnormals and both signs included, no Inf / NaN.
          if (dtype == DType::F16) {
            uint16_t h = static_cast<uint16_t>(bits(gen));
            if ((h & 0x7c00) == 0x7c00) h ^= 0x4000;
            std::memcpy(&bytes[at], &h, 2);
          } else if (dtype == DType::BF16) {
            uint16_t b = static_cast<uint16_t>(bits(gen));
            if ((b & 0x7f80) == 0x7f80) b ^= 0x4000;
            std::memcpy(&bytes[at], &b, 2);
          } else if (dtype == DType::F32) {
            uint32_t f = bits(gen);
            if ((f & 0x7f800000u) == 0x7f800000u) f ^= 0x40000000u;
            std::memcpy(&bytes[at], &f, 4);
          } else {
            const double v = std::ldexp(static_cast<double>(bits(gen)) - 2147483648.0, -30);
            std::memcpy(&bytes[at], &v, 8);
          }
        }
        const StoredMatrix W(dtype, rows, depth, std::move(bytes));
        const Matrix wide = W.widened();
        for (const auto& block : {std::pair<int64_t, int64_t>{0, rows}, {detail::kPanelCols, 2 * detail::kPanelCols},
                                  {5, detail::kPanelCols + 3}}) {
          const int64_t first = block.first, count = block.second;  // (no structured binding: CAPTURE takes it by reference)
          CAPTURE(dtype_name(dtype));
          CAPTURE(depth);
          CAPTURE(first);
          detail::WeightPanels stored, widened;
          stored.pack_stored(W, first, count);
          widened.pack(wide, first, count);
          REQUIRE(stored.panels() == widened.panels());
          const size_t doubles = static_cast<size_t>(stored.panels() * depth * detail::kPanelCols);
          CHECK(std::memcmp(stored.data.get(), widened.data.get(), doubles * sizeof(double)) == 0);
        }
      }
    }
  }

  TEST_CASE("the op registry: every op of ops.h is compared, fast against reference, to 1e-12 (relative)") {
    ThreadGuard threads;
    Worst worst;
    std::set<std::string> listed;
    for (const char* op : ops::kOpNames) {
      listed.insert(op);
      REQUIRE_MESSAGE(kOpChecks.count(op) == 1, "the op '" << op << "' of DEBERTA_OPS has no comparison in this test");
      Random random{std::mt19937_64(29)};
      for (int t : {1, 2, 3}) {
        // Under the sanitizers 1 and 3 threads (an even split adds no code path to check; 85 s there).
        if (t == 2 && test::kAddressSanitizer) continue;
        set_num_threads(t);
        for (const Shape& s : kShapes) {
          CAPTURE(op);
          CAPTURE(s.n);
          CAPTURE(s.in);
          CAPTURE(s.out);
          CAPTURE(t);
          kOpChecks.at(op)(random, worst, s);
        }
      }
    }
    // And no comparison of an op the registry does not list (a renamed op would leave one behind).
    for (const auto& entry : kOpChecks) {
      const std::string& op = entry.first;  // (a structured binding cannot be captured in C++17)
      CHECK_MESSAGE(listed.count(op) == 1, op << " is not in DEBERTA_OPS");
    }
    CHECK(listed.size() == std::size(ops::kOpNames));
  }

  TEST_CASE("attention: a padding key's logit, however large, gets probability 0 and overflows nothing") {
    // The fast op's softmax sends a masked key through exp as −∞ (its logit could exceed the
    // largest counted one by more than exp's range); the reference skips it. Key 4 is padding and
    // its c2c logit ~1e6 above the others; query 4 (padding) gets a zero row.
    const int64_t N = 5, d = 4;
    Matrix Q_c = Matrix::Constant(N, d, 0.5), K_c = Matrix::Constant(N, d, 0.25), V_c = Matrix::Identity(N, d);
    K_c.row(4).setConstant(1e6);
    Vector mask = Vector::Ones(N);
    mask[4] = 0;
    ops::AttentionHead h;
    h.Q_c = &Q_c, h.K_c = &K_c, h.V_c = &V_c, h.mask = &mask, h.scale = 1;
    h.terms[Term::c2c] = true;
    for (bool all_but_padding_masked : {false, true}) {
      if (all_but_padding_masked) mask.head(4).setZero(), mask[4] = 1;  // one key left: probability 1
      ops::AttentionResult fast, ref;
      ops::fast::attention(h, &fast, true, false);
      reference_attention(h, &ref, true, false);
      CHECK(fast.probs.allFinite());
      CHECK(fast.context.allFinite());
      CHECK((fast.probs - ref.probs).cwiseAbs().maxCoeff() <= 1e-15);
      if (!all_but_padding_masked) {
        CHECK(fast.probs.col(4).isZero(0));
        CHECK(fast.probs.row(4).isZero(0));
        CHECK(fast.probs.row(0).sum() == doctest::Approx(1.0));
      }
    }
  }

  TEST_CASE("attention: a layer's heads in one call, read from their columns, equal one call per head, bit for bit") {
    // The forward passes the whole [N, A] projections with each head's window of columns and lets
    // each head write its context into its columns of the layer's: the fast backend then splits the
    // heads into blocks of query rows shared between threads. Each head must get the bits of a call
    // on its own columns alone, at 1 and 3 threads, for every backend.
    ThreadGuard threads;
    Random random{std::mt19937_64(43)};
    for (const int64_t N : {1, 31, 33, 70}) {
      const int64_t heads = 3, d = 5, A = heads * d, offset = 1, R = 2 * N + offset;
      const Matrix Q_c = random(N, A), K_c = random(N, A), V_c = random(N, A), K_r = random(R, A), Q_r = random(R, A);
      IndexMatrix c2p_row(N, N), p2c_row(N, N);
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < N; ++j) c2p_row(i, j) = i - j + N - 1 + offset, p2c_row(i, j) = j - i + N - 1 + offset;
      Vector mask = Vector::Ones(N);
      if (N > 2) mask[1] = 0;
      std::vector<ops::AttentionHead> layer(heads);
      std::vector<Matrix> own(5 * heads);  // each head's columns copied out: Q_c, K_c, V_c, K_r, Q_r
      for (int64_t h = 0; h < heads; ++h) {
        ops::AttentionHead& x = layer[h];
        x.Q_c = &Q_c, x.K_c = &K_c, x.V_c = &V_c, x.K_r = &K_r, x.Q_r = &Q_r;
        x.column0 = h * d, x.columns = d;
        x.c2p_row = &c2p_row, x.p2c_row = &p2c_row, x.row_offset = offset, x.mask = &mask, x.scale = 0.5;
        for (Term t : kAllTerms) x.terms[t] = t != Term::p2p || h == 2;  // head 2 with p2p too
        x.masked = h == 1 && N == 33;
      }
      for (bool fast : {true, false})
        for (int n_threads : {1, 3}) {
          set_num_threads(n_threads);
          CAPTURE(N);
          CAPTURE(fast);
          CAPTURE(n_threads);
          Matrix context = Matrix::Constant(N, A, 7.0);
          std::vector<ops::AttentionHead> into = layer;
          for (ops::AttentionHead& x : into) x.context_out = &context;
          std::vector<ops::AttentionResult> together;
          if (fast)
            ops::fast::attention(into, &together, true, true);
          else
            reference_attention(into, &together, true, true);
          REQUIRE(together.size() == static_cast<size_t>(heads));
          for (int64_t h = 0; h < heads; ++h) {
            const Matrix q = Q_c.middleCols(h * d, d), k = K_c.middleCols(h * d, d), v = V_c.middleCols(h * d, d),
                         kr = K_r.middleCols(h * d, d), qr = Q_r.middleCols(h * d, d);
            ops::AttentionHead alone = layer[h];
            alone.Q_c = &q, alone.K_c = &k, alone.V_c = &v, alone.K_r = &kr, alone.Q_r = &qr;
            alone.column0 = 0, alone.columns = -1;
            ops::AttentionResult one;
            if (fast)
              ops::fast::attention(alone, &one, true, true);
            else
              reference_attention(alone, &one, true, true);
            CHECK(together[h].context.size() == 0);  // written into the layer's context instead
            CHECK(same_bits(Matrix(context.middleCols(h * d, d)), one.context));
            CHECK(same_bits(together[h].probs, one.probs));
            CHECK(same_bits(together[h].logits, one.logits));
            for (Term t : kAllTerms) CHECK(same_bits(together[h].terms[t], one.terms[t]));
          }
        }
      // A layer's context without room for a head's columns is refused, naming both.
      Matrix narrow(N, A - 1);
      std::vector<ops::AttentionHead> into = layer;
      for (ops::AttentionHead& x : into) x.context_out = &narrow;
      std::vector<ops::AttentionResult> out;
      CHECK_THROWS_WITH_AS(ops::attention(into, &out, false, false), doctest::Contains("has no room for head columns"),
                           Error);
    }
  }

  TEST_CASE("whole layers with padding masks: the fast backend agrees with the reference to 1e-12 (relative)") {
    ThreadGuard threads;
    set_num_threads(2);
    Worst worst;
    const Model model = load_model(test::source_path("notebooks_data/models/deberta-tiny"));
    Ablation all;  // every term on, so each relative op runs
    all.terms[Term::c2p] = all.terms[Term::p2c] = all.terms[Term::p2p] = true;
    for (int64_t n : {1, 2, 33, 45, 128}) {
      for (bool pad : {false, true}) {
        Inputs in;
        std::mt19937_64 rng(static_cast<uint64_t>(n));
        for (int64_t i = 0; i < n; ++i) in.input_ids.push_back(static_cast<int64_t>(rng() % model.config.vocab_size));
        in.attention_mask.assign(static_cast<size_t>(n), 1);
        if (pad && n > 2)
          for (int64_t i = n - n / 3; i < n; ++i) in.attention_mask[static_cast<size_t>(i)] = 0;
        for (const Ablation& a : {Ablation{}, all}) {
          ForwardTrace fast, ref;
          {
            test::BackendGuard on(Backend::Fast);
            fast = forward(model, in, a, TraceLevel::Full, true);
          }
          {
            test::BackendGuard on(Backend::Reference);
            ref = forward(model, in, a, TraceLevel::Full, true);
          }
          for (size_t l = 0; l < ref.layers.size(); ++l) {
            worst.record("layer: attention probs", fast.layers[l].attention.probs[0], ref.layers[l].attention.probs[0]);
            worst.record("layer: output", fast.layers[l].output, ref.layers[l].output);
          }
          worst.record("EMD output", fast.decoder_output(), ref.decoder_output());
        }
      }
    }
  }

  TEST_CASE("set_num_threads holds for every thread of the process (the viewer computes on a worker)") {
    ThreadGuard threads;
    set_num_threads(3);
    int seen = 0;
    std::thread worker([&] { seen = num_threads(); });
    worker.join();
    CHECK(seen == 3);
    set_num_threads(1);
    std::thread again([&] { seen = num_threads(); });
    again.join();
    CHECK(seen == 1);
  }

  TEST_CASE("BackendScope: one thread's engine, handed to the fast backend's workers, restored at the end") {
    ThreadGuard threads;
    set_num_threads(2);
    test::BackendGuard process(Backend::Reference);
    {
      const BackendScope scope(Backend::Fast);
      CHECK(backend() == Backend::Fast);
      std::atomic<int> fast_tasks{0}, fast_rows{0};
      ops::tasks(16, [&](int64_t) { fast_tasks += backend() == Backend::Fast; });
      ops::for_rows(100000, 8, [&](int64_t, int64_t) { fast_rows += backend() == Backend::Fast ? 0 : 1; });
      CHECK(fast_tasks == 16);   // every task, on whichever worker thread, computes on the scope's engine
      CHECK(fast_rows == 0);
      Backend other = Backend::Fast;
      std::thread elsewhere([&] { other = backend(); });
      elsewhere.join();
      CHECK(other == Backend::Reference);  // another thread keeps the process's choice
      {
        const BackendScope inner(Backend::Reference);
        CHECK(backend() == Backend::Reference);
      }
      CHECK(backend() == Backend::Fast);  // nested scopes restore the outer one
    }
    CHECK(backend() == Backend::Reference);
  }

  TEST_CASE("the backend is chosen by name, and a wrong name is refused with the name") {
    CHECK(parse_backend("fast") == Backend::Fast);
    CHECK(parse_backend("reference") == Backend::Reference);
    CHECK_THROWS_WITH_AS(parse_backend("quick", "--backend"), "--backend 'quick': expected fast or reference", Error);
    test::BackendGuard on(Backend::Reference);
    CHECK(backend() == Backend::Reference);
    CHECK(std::string(backend_name(backend())) == "reference");
  }
}
