// The switches of issue 3: each one checked against a direct loop over its definition.
#include "test_util.h"

#include "deberta/equations.h"

#include "deberta/ablation.h"
#include "deberta/analysis.h"
#include "deberta/compare.h"
#include "deberta/config.h"
#include "deberta/dump.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace deberta;

namespace {

struct Case {
  Model model;
  Inputs inputs;
  std::vector<int64_t> positions;
};

Case load_case(const std::string& name) {
  const std::string dir = test::source_path("notebooks_data/golden/" + name);
  Case c{load_model(dir), {}, {}};
  const TensorMap g = read_safetensors(dir + "/golden.safetensors");
  c.inputs = inputs_from_tensors(g, dir);
  c.positions = masked_positions_from_tensors(g, dir);
  return c;
}

bool same_layers(const ForwardTrace& a, const ForwardTrace& b) {
  if (a.layers.size() != b.layers.size()) return false;
  for (size_t l = 0; l < a.layers.size(); ++l)
    if (a.layers[l].output != b.layers[l].output) return false;
  return true;
}

// Q_r / K_r of one head, projected from the whole relative table (independent of row_offset).
Matrix head_projection(const Linear& lin, const Matrix& table, int64_t h, int64_t d) {
  return linear(lin, table).middleCols(h * d, d);
}

}  // namespace

TEST_SUITE("ablation") {
  TEST_CASE("a forward keeping no term maps (eq. 4 summed whole) equals one keeping them, bit for bit") {
    // TraceLevel::Full keeps the term maps; Probs and None do not (the fast backend's attention
    // then forms no term map at all; the reference one, attention_head, drops each once added).
    // Every combination of the relative terms, p2p and padding (v2_conv_pad).
    for (const char* name : {"v1_basic", "v2_conv_pad", "v3_emd", "v1_c2p_only"}) {
      const Case c = load_case(name);
      const bool decoder = c.model.weights.embeddings.position.size() > 0;
      const bool has_q_r = c.model.config.has_p2c();  // p2c and p2p need the Q_r projection
      for (int variant = 0; variant < 5; ++variant) {
        if (!has_q_r && variant >= 3) continue;
        const std::string model_name = name;
        CAPTURE(model_name);
        CAPTURE(variant);
        Ablation a;
        if (variant == 1) a.terms[Term::c2p] = false;
        if (variant == 2) a.terms[Term::p2c] = false;
        if (variant == 3) a.terms[Term::p2p] = true;
        if (variant == 4) a.terms[Term::c2p] = true, a.terms[Term::p2c] = true;  // both, whatever the model was trained with
        const ForwardTrace full = forward(c.model, c.inputs, a, TraceLevel::Full, decoder);
        const ForwardTrace probs = forward(c.model, c.inputs, a, TraceLevel::Probs, decoder);
        const ForwardTrace none = forward(c.model, c.inputs, a, TraceLevel::None, decoder);
        REQUIRE(full.layers.size() == probs.layers.size());
        for (size_t l = 0; l < full.layers.size(); ++l) {
          const AttentionTrace& f = full.layers[l].attention;
          for (size_t h = 0; h < f.probs.size(); ++h) CHECK((f.probs[h].array() == probs.layers[l].attention.probs[h].array()).all());
          CHECK((full.layers[l].output.array() == probs.layers[l].output.array()).all());
          CHECK((full.layers[l].output.array() == none.layers[l].output.array()).all());
        }
        CHECK((full.decoder_output().array() == none.decoder_output().array()).all());
      }
    }
  }

  TEST_CASE("every model term switched on explicitly equals the plain path bitwise") {
    for (const char* name : {"v1_basic", "v2_conv_pad", "v3_emd"}) {
      CAPTURE(name);
      const Case c = load_case(name);
      const bool decoder = c.model.weights.embeddings.position.size() > 0;  // the EMD needs absolute positions
      const ForwardTrace plain = forward(c.model, c.inputs, {}, TraceLevel::Full, decoder);
      Ablation all;
      all.terms[Term::c2c] = true;
      all.terms[Term::c2p] = c.model.config.has_c2p();
      all.terms[Term::p2c] = c.model.config.has_p2c();
      all.max_relative_positions = c.model.config.relative_span();  // K = k
      all.scale_mode = ScaleMode::Fixed;
      all.scale_factor = c.model.config.reference_scale_factor();
      const ForwardTrace same = forward(c.model, c.inputs, all, TraceLevel::Full, decoder);
      CHECK(same_layers(plain, same));
      CHECK(plain.decoder_output() == same.decoder_output());
      for (size_t l = 0; l < plain.layers.size(); ++l) CHECK(plain.layers[l].attention.probs == same.layers[l].attention.probs);
    }
  }

  TEST_CASE("p2p is Toeplitz and equals the direct loop s * Q_r[p2c_row] . K_r[c2p_row]") {
    for (const char* name : {"v1_basic", "v2_basic"}) {
      CAPTURE(name);
      const Case c = load_case(name);
      Ablation a;
      a.terms[Term::p2p] = true;
      const ForwardTrace t = forward(c.model, c.inputs, a, TraceLevel::Full);
      const int64_t N = c.inputs.size(), d = c.model.config.d_head();
      for (size_t l = 0; l < t.layers.size(); ++l) {
        const auto& w = c.model.weights.layers[l].attention;
        for (int64_t h = 0; h < c.model.config.num_attention_heads; ++h) {
          const Matrix& p2p = t.layers[l].attention.terms[Term::p2p][h];
          const Matrix Q_r = head_projection(w.pos_query, t.context.rel_table, h, d);
          const Matrix K_r = head_projection(w.pos_key, t.context.rel_table, h, d);
          Matrix direct(N, N);
          for (int64_t i = 0; i < N; ++i)
            for (int64_t j = 0; j < N; ++j)
              direct(i, j) = t.context.attention.scale * Q_r.row(t.context.p2c_row(i, j)).dot(K_r.row(t.context.c2p_row(i, j)));
          test::check_close("p2p", p2p, direct, 1e-13);
          for (int64_t i = 1; i < N; ++i)
            for (int64_t j = 1; j < N; ++j) CHECK(p2p(i, j) == p2p(i - 1, j - 1));  // depends on i − j only
        }
      }
      // p2p changes the scale factor only under --rescale.
      CHECK(t.context.attention.scale_factor == c.model.config.reference_scale_factor());
    }
  }

  TEST_CASE("p2c index 'paper' equals a direct loop reading row delta(j, i)") {
    const Case c = load_case("v2_basic");
    Ablation a;
    a.p2c_index = P2CIndex::Paper;
    const ForwardTrace t = forward(c.model, c.inputs, a, TraceLevel::Full);
    const int64_t N = c.inputs.size(), d = c.model.config.d_head(), k = c.model.config.relative_span();
    const auto& w = c.model.weights.layers[0].attention;
    for (int64_t h = 0; h < c.model.config.num_attention_heads; ++h) {
      const Matrix Q_r = head_projection(w.pos_query, t.context.rel_table, h, d);
      const Matrix K_c = t.layers[0].attention.K_c.middleCols(h * d, d);
      Matrix direct(N, N);
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const int64_t r_ji = log_bucket_position(j - i, c.model.config.position_buckets, c.model.config.max_relative_positions);
          direct(i, j) = t.context.attention.scale * K_c.row(j).dot(Q_r.row(relative_distance(r_ji, 0, k)));
        }
      test::check_close("p2c paper", t.layers[0].attention.terms[Term::p2c][h], direct, 1e-13);
    }
    // And it differs from the code's index (the two conventions are not the same numbers).
    const ForwardTrace code = forward(c.model, c.inputs, {}, TraceLevel::Full);
    CHECK(code.layers[0].attention.terms[Term::p2c][0] != t.layers[0].attention.terms[Term::p2c][0]);
  }

  TEST_CASE("head mask zeroes exactly that head's context") {
    const Case c = load_case("v1_basic");
    Ablation a;
    a.head_mask.insert({1, 2});
    const ForwardTrace plain = forward(c.model, c.inputs, {}, TraceLevel::Full);
    const ForwardTrace masked = forward(c.model, c.inputs, a, TraceLevel::Full);
    const int64_t d = c.model.config.d_head();
    CHECK(masked.layers[0].output == plain.layers[0].output);  // layer 0 untouched
    const Matrix& ctx = masked.layers[1].attention.context;
    CHECK(ctx.middleCols(2 * d, d).isZero(0));
    CHECK(ctx.middleCols(0, 2 * d) == plain.layers[1].attention.context.middleCols(0, 2 * d));
    CHECK(masked.layers[1].attention.probs[2].isZero(0));
    CHECK(masked.layers[1].attention.logits[2] == plain.layers[1].attention.logits[2]);
  }

  TEST_CASE("max_relative_positions K < k reads only the central 2K rows; out of range is refused") {
    const Case c = load_case("v1_basic");  // k = 4
    Ablation a;
    a.max_relative_positions = 2;
    const ForwardTrace t = forward(c.model, c.inputs, a, TraceLevel::Full);
    CHECK(t.context.c2p_row.minCoeff() == 2);
    CHECK(t.context.c2p_row.maxCoeff() == 5);
    a.max_relative_positions = 5;
    CHECK_THROWS_WITH_AS(forward(c.model, c.inputs, a), doctest::Contains("outside [1, 4]"), Error);
  }

  TEST_CASE("a term whose weights the model lacks is refused with a clear message") {
    const Case c = load_case("v1_c2p_only");
    Ablation a;
    a.terms[Term::p2c] = true;
    CHECK_THROWS_WITH_AS(forward(c.model, c.inputs, a), doctest::Contains("Q_r projection"), Error);
    a = {};
    a.terms[Term::p2p] = true;
    CHECK_THROWS_WITH_AS(forward(c.model, c.inputs, a),
                         doctest::Contains("term p2p needs the Q_r projection, which this model does not have "
                                           "(its pos_att_type lists c2p)"),
                         Error);
  }

  TEST_CASE("re-running from the first affected layer equals a fresh forward pass") {
    const Case c = load_case("v3_emd");
    ForwardTrace t = forward(c.model, c.inputs, {}, TraceLevel::Full, true);
    Ablation a;
    a.head_mask.insert({2, 1});
    CHECK(first_affected_layer(c.model, {}, a) == 2);
    rerun_from(c.model, &t, a, first_affected_layer(c.model, {}, a));
    const ForwardTrace fresh = forward(c.model, c.inputs, a, TraceLevel::Full, true);
    CHECK(same_layers(t, fresh));
    CHECK(t.decoder_output() == fresh.decoder_output());
    Ablation b;
    b.terms[Term::c2p] = false;
    CHECK(first_affected_layer(c.model, a, b) == 0);
  }

  TEST_CASE("position projections computed once per sequence equal each layer projecting its own rows") {
    for (const char* name : {"v2_conv_pad", "v3_emd", "v1_basic"}) {
      CAPTURE(name);
      const Case c = load_case(name);
      const ForwardTrace once = forward(c.model, c.inputs, {}, TraceLevel::Full, true);
      CHECK(once.context.K_r.size() == static_cast<size_t>(c.model.config.num_hidden_layers));
      SequenceContext own = once.context;  // the same context without the projections
      own.K_r.clear(), own.Q_r.clear();
      for (size_t l = 0; l < once.layers.size(); ++l) {
        const Matrix& x = l == 0 ? once.embedding_output : once.layers[l - 1].output;
        const AttentionTrace a = disentangled_attention(c.model, static_cast<int64_t>(l), x, x, own, TraceLevel::Full);
        const AttentionTrace& b = once.layers[l].attention;
        CHECK(a.K_r == b.K_r);
        CHECK(a.Q_r == b.Q_r);
        CHECK(a.logits == b.logits);
        CHECK(a.context == b.context);
      }
    }
  }

  TEST_CASE("a rerun keeps the projections of unchanged rows and projects the ones a term toggle needs") {
    const Case c = load_case("v3_emd");
    Ablation no_c2p;
    no_c2p.terms[Term::c2p] = false;
    ForwardTrace t = forward(c.model, c.inputs, no_c2p, TraceLevel::Probs, true);
    CHECK(t.context.K_r[0].size() == 0);  // c2p off: no K_r projected
    const Matrix kept = t.context.Q_r[0];
    rerun_from(c.model, &t, {}, 0);  // c2p back on: K_r projected, Q_r kept
    CHECK(t.context.K_r[0].size() > 0);
    CHECK(t.context.Q_r[0] == kept);
    const ForwardTrace fresh = forward(c.model, c.inputs, {}, TraceLevel::Probs, true);
    CHECK(t.context.K_r == fresh.context.K_r);
    CHECK(same_layers(t, fresh));
    CHECK(t.decoder_output() == fresh.decoder_output());
    rerun_from(c.model, &t, no_c2p, 0);  // off again: K_r kept though unread, the maps as a fresh run
    CHECK(t.context.K_r == fresh.context.K_r);
    const ForwardTrace fresh_off = forward(c.model, c.inputs, no_c2p, TraceLevel::Full, true);
    CHECK(same_layers(t, fresh_off));
    ForwardTrace full_off = forward(c.model, c.inputs, {}, TraceLevel::Full, true);
    rerun_from(c.model, &full_off, no_c2p, 0);
    CHECK(full_off.layers[1].attention.K_r.size() == 0);  // the trace shows no K_r for an off term
    CHECK(full_off.layers[1].attention.terms[Term::c2p].empty());
    CHECK(full_off.layers[1].attention.logits == fresh_off.layers[1].attention.logits);
    Ablation window;
    window.max_relative_positions = 2;  // other rows: everything projected anew
    rerun_from(c.model, &t, window, 0);
    const ForwardTrace fresh_window = forward(c.model, c.inputs, window, TraceLevel::Probs, true);
    CHECK(t.context.row_lo == fresh_window.context.row_lo);
    CHECK(t.context.Q_r == fresh_window.context.Q_r);
    CHECK(same_layers(t, fresh_window));
  }

  TEST_CASE("the scale switches: sqrt(3d) and rescale to the active terms") {
    const Case c = load_case("v1_c2p_only");  // trained with factor 2 (c2p only)
    Ablation a;
    a.scale_mode = ScaleMode::Fixed;
    a.scale_factor = 3;
    const auto r = resolve_attention(c.model.config, c.model.weights, a);
    CHECK(r.scale == 1 / std::sqrt(8.0 * 3));
    a.scale_mode = ScaleMode::Rescale;
    a.terms[Term::c2p] = false;
    CHECK(resolve_attention(c.model.config, c.model.weights, a).scale_factor == 1);
  }

  TEST_CASE("no-EMD decodes from the last layer; the EMD needs absolute positions") {
    const Case c = load_case("v3_emd");
    Ablation a;
    a.emd = false;
    const ForwardTrace t = forward(c.model, c.inputs, a, TraceLevel::None, true);
    CHECK(!t.emd);
    CHECK(t.decoder_output() == t.layers.back().output);
    const Case v2 = load_case("v2_basic");  // no LM head: the decoder stage has nothing to run
    CHECK(!runs_emd(v2.model));
    CHECK(!forward(v2.model, v2.inputs, {}, TraceLevel::None, true).emd);
  }

  TEST_CASE("runs_emd: one rule for every command and panel (issue 11)") {
    const Case c = load_case("v3_emd");
    CHECK(runs_emd(c.model));
    CHECK(why_no_emd(c.model).empty());
    // An LM head without the position table: trained without the EMD (the zoo's -EMD variant);
    // the baseline decodes from the last layer instead of failing.
    Model no_table = c.model;
    no_table.weights.embeddings.position = Matrix();
    CHECK(!runs_emd(no_table));
    CHECK(why_no_emd(no_table).find("position table") != std::string::npos);
    const ForwardTrace t = forward(no_table, c.inputs, {}, TraceLevel::None, true);
    CHECK(!t.emd);
    CHECK(t.decoder_output() == t.layers.back().output);
    // Absolute positions at the input: microsoft's emd_context_layer decodes from the last layer.
    Model pbi = c.model;
    pbi.config.position_biased_input = true;
    CHECK(!runs_emd(pbi));
    // ... unless the project key emd_position is false (the zoo's "-EMD, positions at input,
    // depth-matched" control): then the decoder's two passes run with I_0 = H.
    Model pbi_depth = pbi;
    pbi_depth.config.emd_position = false;
    CHECK(runs_emd(pbi_depth));
    const ForwardTrace td = forward(pbi_depth, c.inputs, {}, TraceLevel::None, true);
    REQUIRE(td.emd);
    CHECK(td.emd->query_states0 == td.layers[td.layers.size() - 2].output);
    // A Hugging Face head (cls.predictions.*) never runs the EMD, table or not.
    Model hf = c.model;
    hf.weights.lm_head->hf_names = true;
    CHECK(!runs_emd(hf));
    CHECK(why_no_emd(hf).find("cls.predictions") != std::string::npos);
  }

  TEST_CASE("normalized: a switch equal to the model is the baseline") {
    const Case c = load_case("v3_emd");
    Ablation a;
    a.terms[Term::c2p] = true, a.terms[Term::p2c] = true, a.terms[Term::p2p] = false, a.p2c_index = P2CIndex::Code;
    CHECK(!a.is_default());
    CHECK(normalized(c.model, a).is_default());
    CHECK(a.describe(&c.model.config) == "baseline");
    Model no_table = c.model;
    no_table.weights.embeddings.position = Matrix();
    Ablation no_emd;
    no_emd.emd = false;
    CHECK(!normalized(c.model, no_emd).is_default());
    CHECK(normalized(no_table, no_emd).is_default());
    Ablation real;
    real.terms[Term::c2p] = false;
    CHECK(!normalized(c.model, real).is_default());
  }

  TEST_CASE("deberta_explorer keys: a model trained with p2p / the paper's p2c index runs so by default") {
    const Case c = load_case("v3_emd");
    Model m = c.model;
    m.config.trained_with_p2p = true;
    m.config.trained_with_paper_p2c = true;
    const ResolvedAttention r = resolve_attention(m.config, m.weights, {});
    CHECK(r.terms[Term::p2p]);
    CHECK(r.p2c_index == P2CIndex::Paper);
    // The default forward of such a model equals the plain model under the explicit switches.
    Ablation explicit_switches;
    explicit_switches.terms[Term::p2p] = true;
    explicit_switches.p2c_index = P2CIndex::Paper;
    const ForwardTrace as_trained = forward(m, c.inputs, {}, TraceLevel::Probs, true);
    const ForwardTrace plain = forward(c.model, c.inputs, explicit_switches, TraceLevel::Probs, true);
    CHECK(as_trained.decoder_output() == plain.decoder_output());
    // And the switches turn them off again: -p2p, p2c index code is the plain model.
    Ablation off;
    off.terms[Term::p2p] = false;
    off.p2c_index = P2CIndex::Code;
    CHECK(forward(m, c.inputs, off, TraceLevel::Probs, true).decoder_output() ==
          forward(c.model, c.inputs, {}, TraceLevel::Probs, true).decoder_output());
    CHECK(off.describe(&m.config) == "-p2p p2c-index=code");
    // The keys as read from config.json, and refusals.
    nlohmann::json j = nlohmann::json::parse(R"({"model_type": "deberta-v2", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 64, "vocab_size": 40, "relative_attention": true,
        "position_buckets": 8, "max_relative_positions": 32, "pos_att_type": ["p2c", "c2p"],
        "deberta_explorer": {"p2p": true, "p2c_index": "paper"}})");
    const ModelConfig parsed = parse_config(j, "cfg.json");
    CHECK(parsed.trained_with_p2p);
    CHECK(parsed.trained_with_paper_p2c);
    j["deberta_explorer"] = {{"p2c_index", "mirror"}};
    CHECK_THROWS_WITH_AS(parse_config(j, "cfg.json"), doctest::Contains("p2c_index"), Error);
    j["deberta_explorer"] = {{"talking_heads", true}};
    CHECK_THROWS_WITH_AS(parse_config(j, "cfg.json"), doctest::Contains("unknown key 'talking_heads'"), Error);
  }

  TEST_CASE("ablate table on the EMD case has every Table 4 row and one row per head") {
    const Case c = load_case("v3_emd");
    const auto rows = run_ablations(c.model, c.inputs, c.positions, standard_ablations(c.model));
    // -c2p, -p2c, +p2p, -EMD, paper index (scale 3 = trained), microsoft's relative positions + 6 heads
    CHECK(rows.size() == 6 + 3 * 2);
    for (const auto& r : rows) {
      CAPTURE(r.name);
      // N = 10 < max_relative_positions: microsoft's clamp to ±(m − 1) changes nothing, bit for bit.
      if (r.name == "rel. positions: microsoft") CHECK(r.max_kl == 0.0);
      CHECK(r.error.empty());
      CHECK(r.mean_kl >= -1e-12);  // the raw value: KL is never clamped
      CHECK(r.max_kl >= r.mean_kl - 1e-15);
      CHECK(r.positions == 3);
    }
    for (size_t k = 1; k < rows.size(); ++k) CHECK(rows[k - 1].mean_kl >= rows[k].mean_kl);
  }

  TEST_CASE("a layer materialised from a probs-only trace equals the full trace bitwise") {
    for (const char* name : {"v2_conv_pad", "v3_emd"}) {
      CAPTURE(name);
      const Case c = load_case(name);
      const bool decoder = c.model.weights.embeddings.position.size() > 0;
      const ForwardTrace full = forward(c.model, c.inputs, {}, TraceLevel::Full, decoder);
      const ForwardTrace light = forward(c.model, c.inputs, {}, TraceLevel::Probs, decoder);
      CHECK(light.layers[0].attention.terms[Term::c2c].empty());
      CHECK(light.layers[0].attention.Q_c.size() == 0);
      for (size_t l = 0; l < full.layers.size(); ++l) {
        const LayerTrace m = materialize_layer(c.model, light, static_cast<int64_t>(l));
        const AttentionTrace &a = m.attention, &b = full.layers[l].attention;
        CHECK(a.terms[Term::c2c] == b.terms[Term::c2c]);
        CHECK(a.terms[Term::c2p] == b.terms[Term::c2p]);
        CHECK(a.terms[Term::p2c] == b.terms[Term::p2c]);
        CHECK(a.logits == b.logits);
        CHECK(a.probs == b.probs);
        CHECK(a.Q_c == b.Q_c);
        CHECK(a.K_r == b.K_r);
        CHECK(m.output == full.layers[l].output);
        CHECK(light.layers[l].attention.probs == b.probs);
      }
      if (decoder)
        for (int64_t p = 0; p < 2; ++p) {
          const LayerTrace m = materialize_emd_pass(c.model, light, p);
          CHECK(m.attention.logits == full.emd->passes[p].attention.logits);
          CHECK(m.output == full.emd->passes[p].output);
        }
    }
  }

  TEST_CASE("kl_divergence: closed form, zero for equal distributions, p = 0 entries contribute 0") {
    // Two outcomes: KL(p ‖ q) = p log(p/q) + (1 − p) log((1 − p)/(1 − q)).
    const double p = 0.3, q = 0.6;
    Vector log_p(2), log_q(2);
    log_p << std::log(p), std::log1p(-p);
    log_q << std::log(q), std::log1p(-q);
    const double expected = p * std::log(p / q) + (1 - p) * std::log((1 - p) / (1 - q));
    CHECK(std::abs(kl_divergence(log_p, log_q) - expected) <= 1e-15);
    CHECK(std::abs(kl_divergence(log_p, log_p)) <= 1e-16);
    // p = (1, 0, …, 0): entries with log p = −∞ contribute nothing, even where log q = −∞ too.
    // 19 entries, so that the vectorised loop (not only its scalar tail) meets the −∞ entries.
    Vector certain = Vector::Constant(19, -INFINITY), other = Vector::Constant(19, -INFINITY);
    certain[0] = 0.0;
    other[0] = other[9] = std::log(0.5);
    CHECK(kl_divergence(certain, other) == doctest::Approx(std::log(2.0)).epsilon(1e-15));
    CHECK_THROWS_AS(kl_divergence(log_p, certain), Error);
  }
}

TEST_SUITE("ablation") {
  TEST_CASE("attention mass by relative offset: a hand-checked two-head, one-layer trace with padding") {
    // N = 3 tokens, the last one padding. Head 0 puts all mass on the previous token (i − j = 1;
    // query 0 on itself), head 1 splits each query's mass 0.25 / 0.75 over the keys 0 and 1.
    ForwardTrace t;
    t.context.mask = Vector(3);
    t.context.mask << 1, 1, 0;
    LayerTrace layer;
    Matrix h0 = Matrix::Zero(3, 3), h1 = Matrix::Zero(3, 3);
    h0(0, 0) = 1, h0(1, 0) = 1;
    h1(0, 0) = 0.25, h1(0, 1) = 0.75, h1(1, 0) = 0.25, h1(1, 1) = 0.75;
    h1(2, 2) = 5;  // a padding row and column: must not count
    layer.attention.probs = {h0, h1};
    t.layers = {layer, layer};
    const OffsetProfile p = attention_mass_by_offset(t);
    REQUIRE(p.max_offset == 2);
    // offset 0: head 0 query 0 (1) + head 1 (0.25 at (0,0), 0.75 at (1,1)) = 2 over H·N_v = 4
    CHECK(p.at(0, 0) == doctest::Approx(2.0 / 4).epsilon(1e-15));
    CHECK(p.at(1, 0) == doctest::Approx(1.25 / 4).epsilon(1e-15));   // (1,0): head 0 1 + head 1 0.25
    CHECK(p.at(-1, 0) == doctest::Approx(0.75 / 4).epsilon(1e-15));  // (0,1): head 1 0.75
    CHECK(p.at(2, 0) == 0.0);
    CHECK(p.at(-2, 0) == 0.0);
    CHECK(p.at(7, 0) == 0.0);  // outside the range
    double sum = 0;
    for (int64_t o = -2; o <= 2; ++o) sum += p.at(o);
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(p.at(1) == doctest::Approx(p.at(1, 1)).epsilon(1e-15));  // pooled = mean of two equal layers
    ForwardTrace none;
    none.context.mask = Vector::Ones(2);
    none.layers.resize(1);
    CHECK_THROWS_WITH_AS(attention_mass_by_offset(none), doctest::Contains("attention probabilities"), Error);
  }

  TEST_CASE("parse_ablation_flags: an unknown flag is named as unknown, not as missing its value") {
    CHECK_THROWS_WITH_AS(parse_ablation_flags("--no-c2p"), doctest::Contains("unknown ablation flag '--no-c2p'"), Error);
    CHECK_THROWS_WITH_AS(parse_ablation_flags("--terms c2c --bogus 3"), doctest::Contains("unknown ablation flag '--bogus'"),
                         Error);
    CHECK_THROWS_WITH_AS(parse_ablation_flags("--terms"), doctest::Contains("--terms: missing value"), Error);
    const Ablation a = parse_ablation_flags("--terms c2c,p2c --no-emd");
    CHECK(a.terms[Term::c2c] == std::optional<bool>(true));
    CHECK(a.terms[Term::c2p] == std::optional<bool>(false));
    CHECK(a.terms[Term::p2c] == std::optional<bool>(true));
    CHECK_FALSE(a.emd);
  }

  TEST_CASE("issue 59 class 7: parse_ablation_flags takes --window as `deberta predict` does (the viewer's --ablate)") {
    // deberta-viewer --ablate "--window 1" was refused as an unknown flag; predict's --window is
    // --max-relative-positions by another name (cli_common.cpp).
    CHECK(parse_ablation_flags("--window 1").max_relative_positions == 1);
    CHECK(parse_ablation_flags("--window=3 --no-emd").max_relative_positions == 3);
    CHECK(parse_ablation_flags("--max-relative-positions 2").max_relative_positions == 2);
    CHECK_THROWS_WITH_AS(parse_ablation_flags("--window"), doctest::Contains("missing value"), Error);
  }
}
