// test_threads.cpp — the threaded forward pass gives bitwise the same numbers at any thread count
// (issue 17), and the fast paths equal the plain expressions they replace.
//
// The forward pass splits its work into tasks fixed by the shapes (threading.h); these tests run
// it at 1, 2 and 3 threads and compare every tensor of `deberta dump`'s output (the trace at
// TraceLevel::Full, the EMD, the MLM logits at the masked positions and at every position) bit
// for bit. 3 threads leave the tasks unevenly spread, so a result that depended on which thread
// ran what would show there.
#include "deberta/analysis.h"
#include "analysis/bench.h"
#include "deberta/dump.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "backend/threading.h"
#include "test_util.h"

#include "deberta/equations.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <stdexcept>

using namespace deberta;

namespace {

// Under AddressSanitizer (scripts/sanitize.sh) the two preset-sized determinism checks below take
// ~5 minutes; they test arithmetic order, not memory safety, and run in the Release suite. The
// sanitizer build still runs the bundled model's 1/2/3-thread test through every threaded path.
constexpr bool kSanitized = deberta::test::kAddressSanitizer;

// Restores the thread count a test changed.
struct ThreadCountGuard {
  int saved = num_threads();
  ~ThreadCountGuard() { set_num_threads(saved); }
};

// Seeded ids in [0, V), the first token 1 and two padding positions at the end when `pad`.
Inputs random_inputs(int64_t n, int64_t vocab, uint64_t seed, bool pad) {
  std::mt19937_64 rng(seed);
  Inputs in;
  for (int64_t i = 0; i < n; ++i) in.input_ids.push_back(static_cast<int64_t>(rng() % vocab));
  if (pad) {
    in.attention_mask.assign(n, 1);
    in.attention_mask[n - 1] = in.attention_mask[n - 2] = 0;
  }
  return in;
}

TensorMap dump_at(const Model& model, const Inputs& in, const Ablation& a, const std::vector<int64_t>& masked,
                  int threads) {
  set_num_threads(threads);
  const ForwardTrace trace = forward(model, in, a, TraceLevel::Full, /*decoder=*/true);
  return trace_to_tensors(model, trace, masked, /*full_logits=*/true);
}

// Every tensor of `b` equals the one of `a` bit for bit; on failure, names the tensor, the first
// differing index and both values.
void check_same_bits(const Matrix& a, const Matrix& b, const std::string& what) {
  REQUIRE_MESSAGE((a.rows() == b.rows() && a.cols() == b.cols()), what);
  CHECK_MESSAGE(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0,
                what << ": max |diff| " << (a - b).cwiseAbs().maxCoeff());
}

void check_bitwise(const TensorMap& a, const TensorMap& b, const std::string& what) {
  REQUIRE(a.size() == b.size());
  for (const auto& entry : a) {  // no structured bindings: clang 14 refuses them inside doctest's macros
    const std::string& name = entry.first;
    const Tensor& ta = entry.second;
    const auto it = b.find(name);
    REQUIRE_MESSAGE(it != b.end(), what << ": tensor " << name << " missing");
    const Tensor& tb = it->second;
    REQUIRE_MESSAGE(ta.shape == tb.shape, what << ": " << name << " shape " << ta.shape_string() << " vs " << tb.shape_string());
    const bool same = ta.f.size() == tb.f.size() && ta.i == tb.i &&
                      (ta.f.empty() ||  // integer tensors: no float data (memcmp of a null pointer is UB)
                       std::memcmp(ta.f.data(), tb.f.data(), ta.f.size() * sizeof(double)) == 0);
    if (!same) {
      int64_t k = 0;
      while (k < static_cast<int64_t>(ta.f.size()) && std::memcmp(&ta.f[k], &tb.f[k], sizeof(double)) == 0) ++k;
      FAIL_CHECK(what << ": " << name << " differs at " << test::index_text(ta.shape, k) << ": "
                      << (k < static_cast<int64_t>(ta.f.size()) ? ta.f[k] : 0.0) << " vs "
                      << (k < static_cast<int64_t>(tb.f.size()) ? tb.f[k] : 0.0));
    }
  }
}

void check_thread_counts(const Model& model, const Inputs& in, const Ablation& a, const std::string& what) {
  std::vector<int64_t> masked;
  for (int64_t n = 1; n < in.size(); n += 7) masked.push_back(n);
  const TensorMap one = dump_at(model, in, a, masked, 1);
  REQUIRE(one.count("mlm.logits"));
  REQUIRE(one.count("mlm.masked_logits"));
  for (int threads : {2, 3}) check_bitwise(one, dump_at(model, in, a, masked, threads), what + ", " + std::to_string(threads) + " threads vs 1");
}

// Seeded matrices with entries uniform in [−1, 1).
struct UniformMatrices {
  std::mt19937_64 rng;
  std::uniform_real_distribution<double> u{-1, 1};
  Matrix operator()(int64_t rows, int64_t cols) {
    Matrix m(rows, cols);
    for (int64_t k = 0; k < m.size(); ++k) m.data()[k] = u(rng);
    return m;
  }
};

Ablation all_terms() {
  Ablation a;
  a.terms[Term::p2p] = true;
  a.p2c_index = P2CIndex::Paper;
  a.head_mask = {{0, 1}, {2, 0}};
  return a;
}

}  // namespace

TEST_SUITE("equations") {
  TEST_CASE("threads: column blocks are fixed by the width alone, on the 24-column grid, and cover it") {
    for (int64_t cols : {1, 23, 24, 64, 128, 384, 512, 768, 1152, 1536, 3072, 50265}) {
      const ColumnBlocks b = column_blocks(cols);
      CHECK(b.count >= 1);
      CHECK(b.count <= 4);
      CHECK((b.width % 24 == 0 || b.count == 1));
      CHECK((b.count - 1) * b.width < cols);
      CHECK(b.count * b.width >= cols);
    }
  }

  TEST_CASE("threads: run_tasks runs each task once and rethrows the first exception after the region") {
    ThreadCountGuard guard;
    set_num_threads(2);
    std::vector<int> runs(37, 0);
    run_tasks(37, [&](int64_t i) { ++runs[i]; });
    for (int r : runs) CHECK(r == 1);
    CHECK_THROWS_WITH_AS(run_tasks(8, [](int64_t i) { if (i == 5) throw Error("task 5"); }), "task 5", Error);
  }

  TEST_CASE("threads: a product split in tiles equals Linear::apply bit for bit (the presets' shapes)" *
            doctest::skip(kSanitized)) {
    // Above 32 rows parallel_linears runs the panel kernel over operands packed once, in tiles of
    // 32 rows by 48 or 96 columns that any thread may take (core/src/backend/panel_gemm.h): N values
    // on and off the 8-row and 32-row grids, tails of every length, and both kernels' sides of 32.
    ThreadCountGuard guard;
    UniformMatrices random{std::mt19937_64(3)};
    // (in, out): tiny, xsmall and base projections and feed-forward; N from 1 to 600.
    for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{
             {128, 128}, {128, 512}, {512, 128}, {384, 384}, {384, 1536}, {1536, 384}, {768, 768}, {768, 3072}, {3072, 768}})
      for (int64_t n : {1, 5, 16, 32, 33, 34, 35, 37, 64, 66, 97, 128, 131, 511, 600}) {
        const int64_t in = shape.first, out = shape.second;
        const Linear layer{random(out, in), random(out, 1).col(0)};
        const Matrix x = random(n, in);
        const Matrix plain = linear(layer, x);
        for (int threads : {1, 2, 3}) {
          set_num_threads(threads);
          const Matrix split = parallel_linear(layer, x);
          REQUIRE(split.rows() == plain.rows());
          REQUIRE(split.cols() == plain.cols());
          CHECK_MESSAGE(std::memcmp(split.data(), plain.data(), plain.size() * sizeof(double)) == 0,
                        "in " << in << ", out " << out << ", N " << n << ", " << threads << " threads: max |diff| "
                              << (split - plain).cwiseAbs().maxCoeff());
        }
      }
  }

// DEBERTA_PACK_WEIGHTS=1 while in scope (models keep no packed weights by default since issue 60),
// then as it was.
struct PackingOn {
  std::string before;
  bool had = false;
  PackingOn() {
    if (const char* v = std::getenv("DEBERTA_PACK_WEIGHTS")) before = v, had = true;
    setenv("DEBERTA_PACK_WEIGHTS", "1", 1);
  }
  ~PackingOn() { had ? setenv("DEBERTA_PACK_WEIGHTS", before.c_str(), 1) : unsetenv("DEBERTA_PACK_WEIGHTS"); }
};

  TEST_CASE("packed weights: products read the model's panels, the same bits as panels packed per product") {
    const PackingOn packing;
    // Issue 43, item 5: a model keeps its encoder weights in the panel layout (ModelWorkspace::packed)
    // and gives them to its products (ops::products' `packed`). The numbers may not depend on it: the same
    // bits with the model's panels, with none, and at any thread count; a weight replaced since
    // (another buffer) is packed on the fly, not read stale; the reference backend keeps none.
    ThreadCountGuard guard;
    UniformMatrices random{std::mt19937_64(43)};
    Linear q{random(384, 384), random(384, 1).col(0)}, up{random(1536, 384), random(1536, 1).col(0)};
    const std::shared_ptr<const ops::PackedWeights> packed = ops::pack_weights({&q, &up, &q});
    REQUIRE(packed);
    CHECK(ops::packed_bytes(packed.get()) == static_cast<size_t>((384 + 1536) * 384) * sizeof(double));
    for (int64_t n : {33, 128, 131}) {
      const Matrix x = random(n, 384);
      set_num_threads(1);
      const Matrix plain_q = linear(q, x), plain_up = linear(up, x);
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Matrix yq, yup;
        ops::products({{&q, &x, &yq}, {&up, &x, &yup}}, packed.get());
        CHECK(std::memcmp(yq.data(), plain_q.data(), plain_q.size() * sizeof(double)) == 0);
        CHECK(std::memcmp(yup.data(), plain_up.data(), plain_up.size() * sizeof(double)) == 0);
      }
    }
    // A weight replaced after packing: its product packs the new matrix, not the stale panels.
    Linear replaced = q;
    const std::shared_ptr<const ops::PackedWeights> of_replaced = ops::pack_weights({&replaced});
    replaced.weight = random(384, 384);
    const Matrix x = random(64, 384);
    const Matrix fresh = linear(replaced, x);
    {
      Matrix y;
      ops::products({{&replaced, &x, &y}}, of_replaced.get());
      CHECK(std::memcmp(y.data(), fresh.data(), fresh.size() * sizeof(double)) == 0);
    }
    // A model packs on first use under the fast backend, drops them when told its weights changed,
    // and keeps none under the reference backend.
    Model model = load_model(std::string(DEBERTA_SOURCE_DIR) + "/notebooks_data/models/deberta-tiny");
    {
      test::BackendGuard reference(Backend::Reference);
      CHECK(model.workspace.packed(model) == nullptr);
    }
    const auto first = model.workspace.packed(model);
    REQUIRE(first);
    CHECK(model.workspace.packed(model) == first);
    model.weights_changed();
    CHECK(model.workspace.packed(model) != first);
  }

  TEST_CASE("threads: a product's row has the same bits among few rows (W read in place) as among many (packed)") {
    // At N ≤ 32 the fast backend reads W in place on the panel kernel (linear_rows_in_place) instead
    // of packing it; each entry is still the bias plus its dot product in the order of k, one fused
    // multiply-add per k — so the first n rows of a 70-row product (packed path) are the bits of
    // the n-row product, with or without the model's panels, with or without a bias, at 1–3 threads.
    ThreadCountGuard guard;
    const test::BackendGuard fast(Backend::Fast);
    UniformMatrices random{std::mt19937_64(29)};
    const PackingOn packing;
    for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{384, 384}, {384, 1536}, {1536, 384}, {100, 203}}) {
      const int64_t in = shape.first, out = shape.second;  // (a structured binding cannot be captured in C++17)
      const Linear layer{random(out, in), random(out, 1).col(0)}, no_bias{layer.weight, Vector()};
      const Matrix many = random(70, in);
      const std::shared_ptr<const ops::PackedWeights> panels = ops::pack_weights({&layer, &no_bias});
      for (const Linear* l : {&layer, &no_bias})
        for (int threads : {1, 2, 3})
          for (const ops::PackedWeights* lent : {static_cast<const ops::PackedWeights*>(nullptr), panels.get()}) {
            set_num_threads(threads);
            Matrix all;
            ops::products({{l, &many, &all}}, lent);
            for (int64_t n : {1, 3, 8, 9, 16, 24, 25, 32}) {
              const Matrix rows = many.topRows(n);
              Matrix part;
              ops::products({{l, &rows, &part}}, lent);
              REQUIRE(part.rows() == n);
              CHECK_MESSAGE(std::memcmp(part.data(), all.data(), static_cast<size_t>(n * out) * sizeof(double)) == 0,
                            "in " << in << ", out " << out << ", N " << n << ", " << threads << " threads, bias "
                                  << (l->bias.size() > 0) << ", model panels " << (lent != nullptr));
            }
          }
    }
  }

  TEST_CASE("threads: one set of products sharing an input, packed and direct, equals Linear::apply bit for bit") {
    // Q_c, K_c, V_c read one x (packed once for all three); a position projection in the same set
    // takes the dot-product kernel (rows_independent); a product with no bias; a product of another
    // x with k = 1100 (another k block: 552, not 384), small enough to be taken after some of
    // Q_c's blocks: a thread packs each block's W into its previous block's buffer, so a buffer
    // changes width, depth and k block between blocks; 1 to 3 threads.
    ThreadCountGuard guard;
    UniformMatrices random{std::mt19937_64(17)};
    const Linear q{random(384, 384), random(384, 1).col(0)}, k{random(384, 384), Vector()},
        v{random(200, 384), random(200, 1).col(0)}, r{random(96, 384), random(96, 1).col(0)},
        o{random(30, 1100), random(30, 1).col(0)};
    for (int64_t n : {45, 130}) {
      const Matrix x = random(n, 384), rel = random(70, 384), wide = random(n, 1100);
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Matrix yq, yk, yv, yr, yo;
        ops::Product position{&r, &rel, &yr};
        position.rows_independent = true;
        parallel_linears({{&q, &x, &yq}, {&k, &x, &yk}, {&o, &wide, &yo}, {&v, &x, &yv}, position});
        for (const auto& [got, want] : std::vector<std::pair<const Matrix*, Matrix>>{
                 {&yq, linear(q, x)}, {&yk, linear(k, x)}, {&yv, linear(v, x)}, {&yo, linear(o, wide)}})
          CHECK_MESSAGE(std::memcmp(got->data(), want.data(), want.size() * sizeof(double)) == 0,
                        "N " << n << ", " << threads << " threads");
        Matrix yr_alone;  // the position projection alone: the same bits as inside the set
        ops::Product alone{&r, &rel, &yr_alone};
        alone.rows_independent = true;
        parallel_linears({alone});
        CHECK(std::memcmp(yr.data(), yr_alone.data(), yr.size() * sizeof(double)) == 0);
        const Matrix plain = (rel * r.weight.widened().transpose()).rowwise() + r.bias.transpose();
        CHECK((yr - plain).cwiseAbs().maxCoeff() < 1e-12);
      }
    }
  }

  TEST_CASE("threads: an activation applied to any block of a matrix gives the entries of the whole, bit for bit") {
    // The feed-forward applies its activation per column task (`ops::Product::elementwise`); every
    // activation must therefore be one scalar function per entry, whatever the block's offset
    // (a vectorised tanh or exp would round differently at the unaligned head of a block).
    UniformMatrices random{std::mt19937_64(11)};
    const Matrix x = 4.0 * random(37, 101);
    for (Activation act : {Activation::GeluErf, Activation::GeluTanh, Activation::GeluFast, Activation::QuickGelu,
                           Activation::Relu, Activation::Relu6, Activation::Tanh, Activation::Sigmoid, Activation::Silu,
                           Activation::Mish, Activation::Linear, Activation::GeluClip10}) {
      const Matrix whole = activation(x, act);
      Matrix blocks = x;
      for (int64_t first = 0; first < x.cols(); first += 13)  // 13-column blocks: every lane offset
        activation_in_place(blocks.middleCols(first, std::min<int64_t>(13, x.cols() - first)), act);
      CHECK_MESSAGE(std::memcmp(blocks.data(), whole.data(), whole.size() * sizeof(double)) == 0,
                    "activation " << static_cast<int>(act) << ": max |diff| " << (blocks - whole).cwiseAbs().maxCoeff());
      CHECK(((whole - x).cwiseAbs().maxCoeff() > 0) == (act != Activation::Linear));  // it was applied
    }
  }

  TEST_CASE("threads: a product's fused activation, residual and LayerNorm equal the separate passes, bit for bit") {
    ThreadCountGuard guard;
    UniformMatrices random{std::mt19937_64(13)};
    for (int64_t n : {5, 128}) {  // both kernels (gemm_nt below 33 rows, Eigen above)
      const Linear up{random(1536, 384), random(1536, 1).col(0)}, down{random(384, 1536), random(384, 1).col(0)};
      const Matrix a = random(n, 384);
      const Matrix inner_want = activation(linear(up, a), Activation::GeluErf);
      const Matrix out_want = linear(down, inner_want) + a;
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        Matrix inner, out;
        ops::Product first{&up, &a, &inner};
        first.elementwise = [](Eigen::Ref<Matrix> block) { activation_in_place(block, Activation::GeluErf); };
        parallel_linears({first});
        ops::Product second{&down, &inner, &out};
        second.residual = &a;
        parallel_linears({second});
        CHECK(std::memcmp(inner.data(), inner_want.data(), inner.size() * sizeof(double)) == 0);
        CHECK(std::memcmp(out.data(), out_want.data(), out.size() * sizeof(double)) == 0);
      }
      Matrix y;
      const Matrix wrong = random(n, 383);
      ops::Product bad{&down, &inner_want, &y};
      bad.residual = &wrong;
      CHECK_THROWS_WITH_AS(parallel_linears({bad}), doctest::Contains("residual of shape"), Error);
      // The post-LN block's LayerNorm, run per block of rows as they finish (ops::Product::rows_done).
      const LayerNormParams norm{random(384, 1).col(0), random(384, 1).col(0), 1e-7};
      const Matrix normed_want = layer_norm(out_want, norm);
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Matrix pre, normed(n, 384);
        ops::Product post_ln{&down, &inner_want, &pre};
        post_ln.residual = &a;
        int64_t rows_normed = 0;
        std::mutex counted;
        post_ln.rows_done = [&](int64_t first, int64_t last) {
          layer_norm_rows(pre, first, last, norm, &normed);
          std::lock_guard<std::mutex> lock(counted);
          rows_normed += last - first;
        };
        parallel_linears({post_ln});
        CHECK(rows_normed == n);  // every row handed over exactly once
        CHECK(std::memcmp(pre.data(), out_want.data(), pre.size() * sizeof(double)) == 0);
        CHECK(std::memcmp(normed.data(), normed_want.data(), normed.size() * sizeof(double)) == 0);
        CHECK(std::memcmp(residual_layer_norm(inner_want, down, a, norm).data(), normed_want.data(),
                          normed.size() * sizeof(double)) == 0);
      }
      // A step that throws: the error reaches the caller once the threads have stopped.
      ops::Product failing{&down, &inner_want, &y};
      failing.rows_done = [](int64_t, int64_t) { throw Error("rows step failed"); };
      CHECK_THROWS_WITH_AS(parallel_linears({failing}), "rows step failed", Error);
    }
  }

  TEST_CASE("threads: a layer's post-LN steps, run as products with steps, are the equations', bit for bit") {
    // run_layer gives the post-LN steps to the products (model.cpp): the fast backend adds the
    // residual, applies the activation and normalises rows inside the products' tiles, the
    // reference one runs the steps one after the other on whole matrices; the equations'
    // residual_layer_norm and feed_forward make the same numbers in separate passes.
    ThreadCountGuard guard;
    const Model model = make_preset_model("tiny");
    UniformMatrices random{std::mt19937_64(17)};
    for (int64_t n : {7, 45}) {  // x read as panels (≤ 32 rows), and packed in tiles
      SequenceContext seq = make_sequence_context(model, bench_inputs(model.config, n), {});
      project_positions(model, &seq);
      const Matrix x = random(n, model.config.hidden_size);
      const LayerWeights& w = model.weights.layers[1];
      for (int threads : {1, 2, 3})
        for (Backend engine : {Backend::Fast, Backend::Reference}) {
          const test::BackendGuard on(engine);
          const char* engine_name = backend_name(engine);
          CAPTURE(engine_name);
          set_num_threads(threads);
          const LayerTrace t = run_layer(model, 1, x, x, seq, TraceLevel::Probs);
          const Matrix attention_output = residual_layer_norm(t.attention.context, w.attention.output, x, w.attention.output_norm);
          check_same_bits(t.attention_output, attention_output, "attention output, N = " + std::to_string(n));
          check_same_bits(t.output, feed_forward(attention_output, w, model.config.hidden_act), "layer output, N = " + std::to_string(n));
        }
    }
  }

  TEST_CASE("threads: Linear::apply is x W^T + b within the rounding bound of a K-term dot product, both kernels") {
    // Few rows (N ≤ 32) take the dot-product kernel of core/src/gemm_nt.h, more rows Eigen's GEMM.
    // Shapes with k not a multiple of the 8 (or 4) SIMD lanes and out not a multiple of the 6
    // columns of a tile exercise every remainder path. Reference: the same sum in long double;
    // bound: 2 K eps Σ|x_k w_k| + eps |b| (a dot product's worst case for any summation order).
    UniformMatrices random{std::mt19937_64(7)};
    for (const auto& shape : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 5}, {13, 29}, {64, 6}, {385, 67}})
      for (int64_t n : {1, 2, 3, 4, 5, 9, 31, 32, 33, 40}) {
        const int64_t in = shape.first, out = shape.second;
        const Linear layer{random(out, in), random(out, 1).col(0)};
        const Matrix x = random(n, in);
        const Matrix y = linear(layer, x);
        double worst = 0;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t o = 0; o < out; ++o) {
            long double exact = 0, magnitude = 0;
            for (int64_t k = 0; k < in; ++k) {
              exact += static_cast<long double>(x(i, k)) * layer.weight(o, k);
              magnitude += std::abs(static_cast<long double>(x(i, k)) * layer.weight(o, k));
            }
            exact += layer.bias[o];
            const double eps = std::numeric_limits<double>::epsilon();
            const double bound = 2.0 * in * eps * static_cast<double>(magnitude) + eps * std::abs(layer.bias[o]);
            worst = std::max(worst, std::abs(y(i, o) - static_cast<double>(exact)) / bound);
          }
        CHECK_MESSAGE(worst <= 1.0, "in " << shape.first << ", out " << shape.second << ", N " << n
                                          << ": error / bound = " << worst);
      }
    // With N ≤ 32 a row's result does not depend on the other rows (what the masked-LM head's
    // stacked pass relies on): each row alone gives the same bits.
    for (int64_t n : {7, 32}) {
      const Linear layer{random(50, 77), random(50, 1).col(0)};
      const Matrix x = random(n, 77);
      const Matrix all = linear(layer, x);
      for (int64_t i = 0; i < n; i += 3) {
        const Matrix one = linear(layer, x.middleRows(i, 1));
        CHECK_MESSAGE(std::memcmp(one.row(0).data(), all.row(i).data(), 50 * sizeof(double)) == 0, "N " << n << ", row " << i);
      }
    }
    const Linear narrow{random(4, 3), Vector()};
    CHECK_THROWS_AS(linear(narrow, random(2, 5)), Error);
  }

  TEST_CASE("threads: predictions, log-softmax and KL per masked position are the same at 1, 2 and 3 threads") {
    // The viewer's decoding at many masked positions: rows of a vocabulary-sized logit matrix
    // split between the threads (one row per range at this width). Each row must come out as it
    // does on one thread, and the top token must be the row's arg max.
    ThreadCountGuard guard;
    UniformMatrices random{std::mt19937_64(29)};
    const int64_t V = 70000;
    Matrix base_logits = 8.0 * random(7, V), ablated_logits = 8.0 * random(7, V);
    base_logits(3, 123) = 50.0;  // a clear winner in one row; a tie (lower id wins) in another
    base_logits(5, 10) = base_logits(5, 20) = 60.0;
    const std::vector<int64_t> positions{1, 4, 6, 9, 12, 15, 19};
    set_num_threads(1);
    const Matrix log_probs_1 = log_softmax_rows(base_logits);
    const auto base_1 = top_k_predictions(base_logits, positions, 3);
    const auto ablated_1 = top_k_predictions(ablated_logits, positions, 3);
    const std::vector<double> kl_1 = kl_divergences(base_1, ablated_1);
    REQUIRE(kl_1.size() == 7);
    for (size_t m = 0; m < kl_1.size(); ++m) {
      CHECK(kl_1[m] == kl_divergence(base_1[m].log_probs, ablated_1[m].log_probs));
      CHECK(kl_1[m] > 0.0);
      Eigen::Index best = 0;
      base_logits.row(static_cast<int64_t>(m)).maxCoeff(&best);
      CHECK(base_1[m].top[0].id == best);
      CHECK(base_1[m].position == positions[m]);
      CHECK(std::memcmp(base_1[m].log_probs.data(), log_probs_1.row(static_cast<int64_t>(m)).data(), V * sizeof(double)) == 0);
    }
    CHECK(base_1[3].top[0].id == 123);
    CHECK(base_1[5].top[0].id == 10);
    CHECK(base_1[5].top[1].id == 20);
    for (int threads : {2, 3}) {
      set_num_threads(threads);
      const Matrix log_probs = log_softmax_rows(base_logits);
      CHECK(std::memcmp(log_probs.data(), log_probs_1.data(), log_probs.size() * sizeof(double)) == 0);
      const auto base = top_k_predictions(base_logits, positions, 3);
      const auto ablated = top_k_predictions(ablated_logits, positions, 3);
      REQUIRE(base.size() == base_1.size());
      for (size_t m = 0; m < base.size(); ++m) {
        CHECK(base[m].position == base_1[m].position);
        CHECK(std::memcmp(base[m].log_probs.data(), base_1[m].log_probs.data(), V * sizeof(double)) == 0);
        for (size_t t = 0; t < 3; ++t) {
          CHECK(base[m].top[t].id == base_1[m].top[t].id);
          CHECK(base[m].top[t].probability == base_1[m].top[t].probability);
        }
      }
      const std::vector<double> kl = kl_divergences(base, ablated);
      CHECK(kl == kl_1);
      const AblationEffect effect = compare_predictions(base, ablated), given = compare_predictions(base, ablated, kl);
      CHECK(effect.mean_kl == given.mean_kl);
      CHECK(effect.max_kl == given.max_kl);
      CHECK(effect.top1_changes == given.top1_changes);
    }
    CHECK_THROWS_WITH_AS(compare_predictions(base_1, ablated_1, std::vector<double>(3, 0.0)),
                         "compare_predictions: 3 KL values for 7 positions", Error);
  }

  TEST_CASE("threads: mlm_logits of several hidden states equals one call per state, bit for bit") {
    ThreadCountGuard guard;
    const Model model = load_model(std::string(DEBERTA_SOURCE_DIR) + "/notebooks_data/models/deberta-tiny");
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> u(-2, 2);
    const int64_t N = 40, H = model.config.hidden_size;
    Matrix a(N, H), b(N, H);
    for (int64_t k = 0; k < a.size(); ++k) a.data()[k] = u(rng), b.data()[k] = u(rng);
    for (int64_t P : {1, 5, 32, 33}) {  // one stacked pass (P ≤ 32) and state by state
      std::vector<int64_t> positions;
      for (int64_t p = 0; p < P; ++p) positions.push_back((p * 7) % N);
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const std::vector<Matrix> both = mlm_logits(model, std::vector<const Matrix*>{&a, &b}, positions);
        REQUIRE(both.size() == 2);
        const Matrix one_a = mlm_logits(model, a, positions), one_b = mlm_logits(model, b, positions);
        REQUIRE(both[0].rows() == P);
        CHECK_MESSAGE(std::memcmp(both[0].data(), one_a.data(), one_a.size() * sizeof(double)) == 0, "P " << P);
        CHECK_MESSAGE(std::memcmp(both[1].data(), one_b.data(), one_b.size() * sizeof(double)) == 0, "P " << P);
      }
    }
    CHECK_THROWS_AS(mlm_logits(model, std::vector<const Matrix*>{&a, &b}, {N}), Error);
  }

  TEST_CASE("threads: tied_decoder_logits equals h E^T + bias (1e-12) in both regimes, and is the same at any thread count") {
    ThreadCountGuard guard;
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    const int64_t V = 10007, E = 96;  // V not a multiple of any slice
    Matrix table(V, E);
    for (int64_t k = 0; k < table.size(); ++k) table.data()[k] = u(rng);
    Vector bias(V);
    for (int64_t k = 0; k < V; ++k) bias[k] = u(rng);
    for (int64_t M : {1, 3, 16, 32, 33, 40, 74}) {  // 74: the masked rows at N = 512
      Matrix h(M, E);
      for (int64_t k = 0; k < h.size(); ++k) h.data()[k] = u(rng);
      Matrix plain = h * table.transpose();
      plain.rowwise() += bias.transpose();
      set_num_threads(1);
      const Matrix one = tied_decoder_logits(h, table, bias);
      Matrix::Index r = 0, c = 0;
      const double err = (one - plain).cwiseAbs().maxCoeff(&r, &c);
      CHECK_MESSAGE(err <= 1e-12, "M = " << M << ": worst [" << r << ", " << c << "] ours " << one(r, c) << ", plain "
                                         << plain(r, c) << ", |diff| " << err);
      // A row's logits have the same bits whatever the other rows and the path (rows_independent).
      for (int64_t k : {int64_t{0}, M / 2, M - 1}) {
        const Matrix alone = tied_decoder_logits(h.row(k), table, bias);
        CHECK_MESSAGE(std::memcmp(alone.data(), one.row(k).eval().data(), alone.size() * sizeof(double)) == 0,
                      "M = " << M << ", row " << k << " alone");
      }
      for (int threads : {2, 3}) {
        set_num_threads(threads);
        const Matrix many = tied_decoder_logits(h, table, bias);
        CHECK_MESSAGE(std::memcmp(many.data(), one.data(), one.size() * sizeof(double)) == 0,
                      "M = " << M << ", " << threads << " threads");
      }
    }
    CHECK_THROWS_AS(tied_decoder_logits(Matrix(2, E + 1), table, bias), Error);
  }

  TEST_CASE("position table: rows copied from the model's table equal rows the layer projects itself, bit for bit") {
    // The model's workspace projects eq. 4's K_r, Q_r of the whole table once; a context without
    // them (make_sequence_context alone) makes each layer project the rows it reads.
    ThreadCountGuard guard;
    const Model model = load_model(std::string(DEBERTA_SOURCE_DIR) + "/notebooks_data/models/deberta-tiny");
    const auto table = model.workspace.positions(model);
    REQUIRE(table);
    CHECK(table->K_r.at(0).rows() == relative_embedding_table(model.config, model.weights).rows());
    for (const Ablation& a : {Ablation{}, all_terms()})
      for (int64_t n : {3, 45}) {  // a few table rows, and every row the tiny model has
        const Inputs in = random_inputs(n, model.config.vocab_size, 13, /*pad=*/n > 3);
        const SequenceContext own = make_sequence_context(model, in, a);
        SequenceContext copied = own;
        project_positions(model, &copied);
        REQUIRE(copied.K_r.size() == static_cast<size_t>(model.config.num_hidden_layers));
        const Matrix x = embed(model.config, model.weights.embeddings, in.input_ids, in.token_type_ids, own.mask);
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          const LayerTrace projected = run_layer(model, 1, x, x, own, TraceLevel::Full);
          const LayerTrace from_table = run_layer(model, 1, x, x, copied, TraceLevel::Full);
          CHECK(projected.attention.K_r.size() > 0);
          check_same_bits(projected.attention.K_r, from_table.attention.K_r, "K_r, N " + std::to_string(n));
          check_same_bits(projected.output, from_table.output, "layer output, N " + std::to_string(n));
        }
      }
  }

  TEST_CASE("position table: rebuilt from the edited weights once the model is told, equal to a fresh model's") {
    const Model model = load_model(std::string(DEBERTA_SOURCE_DIR) + "/notebooks_data/models/deberta-tiny");
    Model edited = model;  // a copy starts with an empty workspace
    edited.weights.layers[0].attention.pos_key.weight = edited.weights.layers[0].attention.pos_key.weight.widened() * 2.0;
    edited.weights_changed();
    const Matrix before = model.workspace.positions(model)->K_r[0];
    const Matrix after = edited.workspace.positions(edited)->K_r[0];
    // K_r = P Wᵀ + b, so doubling W gives 2 (K_r − b) + b.
    const Vector& bias = model.weights.layers[0].attention.pos_key.bias;
    Matrix want = 2.0 * before;
    want.rowwise() -= bias.transpose();
    CHECK((after - want).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((after - before).cwiseAbs().maxCoeff() > 1e-6);
    // Edit in place, tell the model, and its forward is that of a model built from the edited weights.
    Model in_place = model;
    (void)in_place.workspace.positions(in_place);  // built from the old weights
    in_place.weights.layers[1].attention.pos_query.weight = in_place.weights.layers[1].attention.pos_query.weight.widened() * -0.5;
    in_place.weights_changed();
    Model fresh;
    fresh.config = in_place.config;
    fresh.weights = in_place.weights;
    const Inputs in = random_inputs(20, model.config.vocab_size, 5, false);
    const ForwardTrace a = forward(in_place, in, all_terms(), TraceLevel::None);
    const ForwardTrace b = forward(fresh, in, all_terms(), TraceLevel::None);
    const ForwardTrace old = forward(model, in, all_terms(), TraceLevel::None);
    check_same_bits(a.layers.back().output, b.layers.back().output, "edited in place vs fresh");
    CHECK((a.layers.back().output - old.layers.back().output).cwiseAbs().maxCoeff() > 1e-6);  // the edit matters
  }

  TEST_CASE("threads: the bundled model's forward is bitwise the same at 1, 2 and 3 threads") {
    ThreadCountGuard guard;
    const Model model = load_model(std::string(DEBERTA_SOURCE_DIR) + "/notebooks_data/models/deberta-tiny");
    check_thread_counts(model, random_inputs(45, model.config.vocab_size, 11, /*pad=*/true), {}, "bundled, N 45");
    check_thread_counts(model, random_inputs(45, model.config.vocab_size, 12, false), all_terms(), "bundled, all terms");
  }

  TEST_CASE("threads: xsmall- and base-shaped forwards (EMD, MLM logits) are bitwise the same at 1, 2 and 3 threads" *
            doctest::skip(kSanitized)) {
    ThreadCountGuard guard;
    {
      const Model xsmall = make_preset_model("xsmall", 1);
      // N 150 > position_buckets / 2 = 128: the log buckets are read too.
      check_thread_counts(xsmall, random_inputs(150, xsmall.config.vocab_size, 21, true), {}, "xsmall, N 150");
      check_thread_counts(xsmall, random_inputs(20, xsmall.config.vocab_size, 22, false), all_terms(), "xsmall, all terms");
    }
    {
      const Model base = make_preset_model("base", 1);
      check_thread_counts(base, random_inputs(61, base.config.vocab_size, 31, true), {}, "base, N 61");
    }
  }
}
