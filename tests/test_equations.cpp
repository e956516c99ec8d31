// One test per equation, on small cases whose expected values are written out by hand.
#include "test_util.h"

#include "deberta/equations.h"
#include "deberta/model.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace deberta;

TEST_SUITE("equations") {
  TEST_CASE("eq. 3: relative distance delta for k = 3 over i - j = -4..4") {
    // δ(i,j) = 0 for i−j ≤ −3, 5 for i−j ≥ 3, i−j+3 otherwise.
    const int64_t expected[] = {0, 0, 1, 2, 3, 4, 5, 5, 5};  // i − j = −4 … 4
    for (int64_t r = -4; r <= 4; ++r) {
      CAPTURE(r);
      CHECK(relative_distance(10 + r, 10, 3) == expected[r + 4]);
      CHECK(relative_distance(r, 0, 3) == expected[r + 4]);
    }
    CHECK_THROWS_AS(relative_distance(0, 0, 0), Error);
  }

  TEST_CASE("v2 log buckets for position_buckets = 8, max_relative_positions = 32 over r = -40..40") {
    // mid = 4; |r| ≤ 4 keeps r; else ceil(log(|r|/4) / log(31/4) · 3) + 4, worked out by hand:
    // 5–7 → 5, 8–15 → 6, 16–31 → 7, 32–40 → 8 (beyond b − 1 = 7: no clamping before the row clamp).
    const int64_t written[] = {0, 1, 2, 3, 4, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7,
                               7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8, 8};  // |r| = 0 … 40
    for (int64_t r = -40; r <= 40; ++r) {
      CAPTURE(r);
      const int64_t a = r < 0 ? -r : r;
      const int64_t want = (r < 0 ? -1 : 1) * written[a];
      CHECK(log_bucket_position(r, 8, 32) == want);
    }
  }

  TEST_CASE("log_bucket_working shows the arithmetic log_bucket_position runs (the lesson's step 5 reads it)") {
    // b = 8 (mid 4), m = 32: r = 20 → log(20/4) / log(31/4) · 3 = 2.3579…, ⌈2.358⌉ + 4 = 7.
    const LogBucketWorking w = log_bucket_working(20, 8, 32);
    CHECK(w.mid == 4);
    CHECK_FALSE(w.exact);
    CHECK(std::fabs(w.scaled - std::log(5.0) / std::log(31.0 / 4.0) * 3.0) < 1e-14);
    CHECK(w.scaled > 2.357);
    CHECK(w.scaled < 2.358);
    CHECK(w.bucket == 7);
    const LogBucketWorking n = log_bucket_working(-3, 8, 32);
    CHECK(n.exact);
    CHECK(n.bucket == -3);
    CHECK(n.scaled == 0.0);
    // The same bucket as the function the model runs, everywhere, both signs.
    for (int64_t b : {2, 4, 8, 18, 32, 256})
      for (int64_t m : {b / 2 + 2, int64_t{26}, int64_t{129}, int64_t{512}})
        for (int64_t r = -600; r <= 600; r += 7) {
          if (m - 1 == b / 2) continue;  // log base 1: the degenerate case of docs/bucket-rounding.md
          const LogBucketWorking x = log_bucket_working(r, b, m);
          CHECK(x.bucket == log_bucket_position(r, b, m));
          if (!x.exact) CHECK(x.bucket == (r < 0 ? -1 : 1) * (static_cast<int64_t>(std::ceil(x.scaled)) + x.mid));
        }
  }

  TEST_CASE("a log bucket whose exact value is an integer does not jump a bucket") {
    // b = 18 (mid 9), m = 26, r = 15: log(15/9) / log(25/9) · 8 = 4 exactly (25/9 = (15/9)²), so
    // the bucket is ⌈4⌉ + 9 = 13; an ulp of libm error above 4 must not make it 14.
    CHECK(log_bucket_position(15, 18, 26) == 13);
    CHECK(log_bucket_position(-15, 18, 26) == -13);
  }

  TEST_CASE("log buckets follow the exact ceiling where the references' float arithmetic does not") {
    // The rule (docs/paper-vs-code.md §4): the mathematically exact ⌈x⌉, decided in
    // notebooks_data/studies/bucket_rounding.py by integer arithmetic. Each row is a case where at least
    // one reference rounds differently: {b, m, |r|, exact bucket, what that reference gives}.
    struct Row {
      int64_t b, m, r, exact, reference;
      const char* who;
    };
    const Row rows[] = {
        {32, 129, 64, 26, 27, "HF in float64: x = log(4)/log(8)·15 = 10 exactly, computed as 10 + 1 ulp"},
        {4, 11, 250, 5, 6, "HF in float64: x = 3 exactly (250/2 = 125 = (10/2)³)"},
        {16, 13, 27, 29, 30, "HF in float32: x = 21 exactly (27/8 = (12/8)³), float32 lands above"},
        {30, 17, 76, 368, 367, "HF in float32: x = 352.00007 is rounded to 352"},
        {6, 5, 4, 5, 6, "microsoft's float32 table: x = 2 exactly at |r| = m − 1"},
        {18, 13, 16, 25, 26, "HF in float64: x = 16 exactly (16/9 = (12/9)²)"},
    };
    for (const Row& row : rows) {
      CAPTURE(row.b);
      CAPTURE(row.m);
      CAPTURE(row.r);
      CAPTURE(row.who);
      CHECK(log_bucket_position(row.r, row.b, row.m) == row.exact);
      CHECK(log_bucket_position(-row.r, row.b, row.m) == -row.exact);
      // The disagreement is real: HF's formula evaluated naively in its precision gives `reference`.
      const std::string who = row.who;
      if (who.rfind("HF in float64", 0) == 0 || who.rfind("HF in float32", 0) == 0) {
        const bool f32 = who.rfind("HF in float32", 0) == 0;
        const int64_t mid = row.b / 2;
        double x;
        if (f32) {
          const float l = std::log(static_cast<float>(row.r) / static_cast<float>(mid)) /
                          std::log(static_cast<float>(row.m - 1) / static_cast<float>(mid)) * static_cast<float>(mid - 1);
          x = static_cast<double>(std::ceil(l));
        } else {
          x = std::ceil(std::log(static_cast<double>(row.r) / static_cast<double>(mid)) /
                        std::log(static_cast<double>(row.m - 1) / static_cast<double>(mid)) * static_cast<double>(mid - 1));
        }
        CHECK(static_cast<int64_t>(x) + mid == row.reference);
      }
      CHECK(row.reference != row.exact);
    }
  }

  TEST_CASE("relative positions: microsoft clamps i - j to ±(m − 1) before bucketing, Hugging Face does not") {
    ModelConfig v2;
    v2.version = ModelVersion::V2;
    v2.relative_attention = true;
    v2.position_buckets = 8;
    v2.max_relative_positions = 10;
    const IndexMatrix hf = relative_positions(24, 24, v2);
    const IndexMatrix ms = relative_positions(24, 24, v2, RelativePositionRule::Microsoft);
    // |i − j| < m: the same bucket under both rules.
    for (int64_t i = 0; i < 24; ++i)
      for (int64_t j = 0; j < 24; ++j)
        if (std::abs(i - j) < 10) CHECK(hf(i, j) == ms(i, j));
    // i − j = −12: HF −(⌈log(3)/log(9/4)·3⌉ + 4) = −9; microsoft clamps to −9 first: −(3 + 4) = −7.
    CHECK(hf(0, 12) == -9);
    CHECK(ms(0, 12) == -7);
    CHECK(ms.maxCoeff() == 7);
    CHECK(ms.minCoeff() == -7);
    CHECK(hf.maxCoeff() > 7);  // HF grows past b − 1; eq. 3's row clamp takes over
    // The c2p rows differ only on the far left: row 0 (HF) vs row 1 (microsoft).
    const IndexMatrix hf_rows = table_rows(hf, 8), ms_rows = table_rows(ms, 8);
    CHECK(hf_rows(0, 12) == 0);
    CHECK(ms_rows(0, 12) == 1);
    CHECK(hf_rows(23, 0) == ms_rows(23, 0));
    // Without log buckets both rules are i − j.
    ModelConfig v1;
    v1.version = ModelVersion::V1;
    v1.relative_attention = true;
    v1.max_relative_positions = 4;
    CHECK(relative_positions(12, 12, v1, RelativePositionRule::Microsoft) == relative_positions(12, 12, v1));
    CHECK(parse_relative_position_rule("microsoft") == RelativePositionRule::Microsoft);
    CHECK(parse_relative_position_rule("hf") == RelativePositionRule::HuggingFace);
    CHECK_THROWS_WITH_AS(parse_relative_position_rule("HF"), doctest::Contains("expected hf"), Error);
  }

  TEST_CASE("relative_positions and table_rows: v1 clamps i - j, v2 buckets first") {
    ModelConfig v1;
    v1.version = ModelVersion::V1;
    v1.relative_attention = true;
    v1.max_relative_positions = 2;
    const IndexMatrix rel = relative_positions(4, 4, v1);
    CHECK(rel(3, 0) == 3);
    CHECK(rel(0, 3) == -3);
    const IndexMatrix rows = table_rows(rel, 2);
    // clamp(i − j + 2, 0, 3)
    CHECK(rows(0, 0) == 2);
    CHECK(rows(0, 1) == 1);
    CHECK(rows(0, 3) == 0);
    CHECK(rows(3, 0) == 3);
    CHECK(rows(2, 1) == 3);
    // Window K = 1 of k = 2: rows 1 and 2 only.
    const IndexMatrix narrow = table_rows(rel, 2, 1);
    CHECK(narrow.minCoeff() == 1);
    CHECK(narrow.maxCoeff() == 2);
    CHECK(narrow(0, 0) == 2);
    CHECK(narrow(0, 1) == 1);

    ModelConfig v2 = v1;
    v2.version = ModelVersion::V2;
    v2.position_buckets = 8;
    v2.max_relative_positions = 32;
    const IndexMatrix bucketed = relative_positions(41, 41, v2);
    CHECK(bucketed(40, 0) == 8);
    CHECK(bucketed(0, 40) == -8);
    CHECK(bucketed(20, 10) == 6);
  }

  TEST_CASE("masked softmax: padding query row is all zero, padding keys get zero") {
    Matrix logits(3, 3);
    logits << 1, 2, 3,  //
        0, 0, 0,        //
        5, 1, -1;
    Vector mask(3);
    mask << 1, 1, 0;  // token 2 is padding
    const Matrix p = masked_softmax(logits, mask, mask);
    const double e = std::exp(1.0);
    CHECK(std::fabs(p(0, 0) - 1 / (1 + e)) < 1e-15);
    CHECK(std::fabs(p(0, 1) - e / (1 + e)) < 1e-15);
    CHECK(p(0, 2) == 0.0);
    CHECK(std::fabs(p(1, 0) - 0.5) < 1e-15);
    CHECK(p(1, 2) == 0.0);
    CHECK(p.row(2).isZero(0));  // padding query: no valid pair
    // A fully masked key set gives an all-zero row, not NaN.
    const Matrix none = masked_softmax(logits, Vector::Ones(3), Vector::Zero(3));
    CHECK(none.isZero(0));
  }

  TEST_CASE("masked softmax: a −∞ logit gets probability exactly 0, with and without padding") {
    // 21 keys: the vectorised exp (not only its scalar tail) meets the −∞ entries.
    const int64_t n = 21;
    Matrix logits = Matrix::Constant(2, n, -INFINITY);
    logits(0, 3) = 1.0, logits(0, 17) = 2.0;
    logits(1, 5) = 0.5;
    for (const Vector& keys : {Vector(Vector::Ones(n)), Vector(Vector::Ones(n) - Vector::Unit(n, 17))}) {
      const Matrix p = masked_softmax(logits, Vector::Ones(2), keys);
      const bool key17 = keys[17] != 0;
      const double e = std::exp(1.0);
      CHECK(p(0, 3) == doctest::Approx(key17 ? 1 / (1 + e) : 1.0).epsilon(1e-15));
      CHECK(p(1, 5) == 1.0);
      for (int64_t j = 0; j < n; ++j) {
        if (j != 3 && j != 17) CHECK(p(0, j) == 0.0);
        if (j != 5) CHECK(p(1, j) == 0.0);
      }
    }
  }

  TEST_CASE("GELU is the erf form and LayerNorm uses the biased variance") {
    CHECK(std::fabs(gelu(1.0) - 0.8413447460685429) < 1e-15);
    CHECK(std::fabs(gelu(-1.0) - -0.15865525393145707) < 1e-15);
    CHECK(gelu(0.0) == 0.0);
    Matrix x(1, 4);
    x << 1, 2, 3, 6;  // mean 3, biased variance (4 + 1 + 0 + 9)/4 = 3.5
    LayerNormParams p{Vector::Ones(4), Vector::Zero(4), 0.0};
    const Matrix y = layer_norm(x, p);
    CHECK(std::fabs(y(0, 0) - (-2 / std::sqrt(3.5))) < 1e-15);
    CHECK(std::fabs(y(0, 3) - (3 / std::sqrt(3.5))) < 1e-15);
  }

  TEST_CASE("eq. 4 terms on a 2-token, 1-head layer computed by hand") {
    // H = d = 2, one head, v2 with share_att_key, c2p only (scale factor 2, s = 1/√(2·2) = 1/2),
    // k = 1: row(i, j) = clamp(i − j + 1, 0, 1). All projections identity, relative table
    // P = I, input x = I. Then Q_c = K_c = V_c = x, K_r = P.
    Model m;
    ModelConfig& c = m.config;
    c.model_type = "deberta-v2";
    c.version = ModelVersion::V2;
    c.hidden_size = 2, c.num_attention_heads = 1, c.attention_head_size = 2, c.intermediate_size = 2;
    c.num_hidden_layers = 1, c.vocab_size = 2, c.max_position_embeddings = 4;
    c.relative_attention = true, c.max_relative_positions = 1, c.pos_att_type = {"c2p"};
    c.share_att_key = true, c.position_biased_input = false;
    const Matrix I = Matrix::Identity(2, 2);
    const Vector zero = Vector::Zero(2);
    LayerWeights layer;
    layer.attention.query = layer.attention.key = layer.attention.value = {I, zero};
    layer.attention.pos_key = layer.attention.key;
    layer.attention.pos_query = layer.attention.query;
    layer.attention.output = {I, zero};
    layer.attention.output_norm = {Vector::Ones(2), zero, 0.0};
    layer.intermediate = {I, zero};
    layer.output = {I, zero};
    Vector gain(2), bias(2);
    gain << 2, 3;
    bias << 0.5, -0.25;
    layer.output_norm = {gain, bias, 0.0};
    m.weights.layers.push_back(layer);
    m.weights.rel_embeddings = I;
    Inputs in;
    in.input_ids = {0, 1};
    const SequenceContext seq = make_sequence_context(m, in, {});
    CHECK(seq.attention.scale == 0.5);
    CHECK(seq.c2p_row(0, 0) == 1);
    CHECK(seq.c2p_row(0, 1) == 0);
    CHECK(seq.c2p_row(1, 0) == 1);
    // The same rows by distance i − j + N − 1 (what the fast attention reads): −1, 0, 1.
    CHECK(seq.c2p_by_distance == std::vector<int64_t>{0, 1, 1});
    CHECK(seq.p2c_by_distance == std::vector<int64_t>{seq.p2c_row(0, 1), seq.p2c_row(0, 0), seq.p2c_row(1, 0)});
    const LayerTrace t = run_layer(m, 0, I, I, seq, TraceLevel::Full);
    // c2c = s·x xᵀ = diag(.5); c2p(0,0) = s·Q0·P[1] = 0, c2p(0,1) = s·Q0·P[0] = .5,
    // c2p(1,0) = s·Q1·P[1] = .5, c2p(1,1) = s·Q1·P[1] = .5.
    Matrix c2c(2, 2), c2p(2, 2);
    c2c << 0.5, 0, 0, 0.5;
    c2p << 0, 0.5, 0.5, 0.5;
    test::check_close("c2c", t.attention.terms[Term::c2c][0], c2c, 0);
    test::check_close("c2p", t.attention.terms[Term::c2p][0], c2p, 0);
    // logits [[.5, .5], [.5, 1]] → probs row 0 = [.5, .5], row 1 = [1, e^.5] / (1 + e^.5).
    const double e = std::exp(0.5);
    Matrix probs(2, 2);
    probs << 0.5, 0.5, 1 / (1 + e), e / (1 + e);
    test::check_close("probs", t.attention.probs[0], probs, 1e-15);
    test::check_close("context", t.attention.context, probs, 1e-15);  // V = I
    // attention output = LN(context + x): a 2-vector LayerNorm with no eps gives ±1.
    Matrix a(2, 2);
    a << 1, -1, -1, 1;
    test::check_close("attention_output", t.attention_output, a, 1e-12);
    // FFN: LN(gelu(a) + a) keeps the signs, so output = ±1 · gain + bias.
    Matrix out(2, 2);
    out << 2 + 0.5, -3 - 0.25, -2 + 0.5, 3 - 0.25;
    test::check_close("output", t.output, out, 1e-12);
  }

  TEST_CASE("eq. 4 whole (attention_head): the scores are the sum of the term functions, kept or not, bit for bit") {
    // One head, N = 5, d = 3, a table of R = 6 projected rows starting at row 2; every subset of
    // the four terms. With the maps kept, logits = c2c + ((c2p + p2c) + p2p) of the term functions;
    // without them (each map dropped once added) the same doubles.
    std::srand(7);
    const int64_t N = 5, d = 3, R = 6, offset = 2;
    HeadProjections p;
    p.Q_c = Matrix::Random(N, d), p.K_c = Matrix::Random(N, d), p.V_c = Matrix::Random(N, d);
    p.Q_r = Matrix::Random(R, d), p.K_r = Matrix::Random(R, d), p.row_offset = offset;
    IndexMatrix c2p_rows(N, N), p2c_rows(N, N);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < N; ++j) c2p_rows(i, j) = offset + (i + 2 * j) % R, p2c_rows(i, j) = offset + (3 * i + j) % R;
    Vector mask = Vector::Ones(N);
    mask[4] = 0;
    AttentionSetup a;
    a.scale = 0.37, a.c2p_row = &c2p_rows, a.p2c_row = &p2c_rows, a.mask = &mask;
    for (int subset = 0; subset < 16; ++subset) {
      CAPTURE(subset);
      for (int t = 0; t < kTermCount; ++t) a.terms[kAllTerms[t]] = (subset >> t) & 1;
      const HeadScores kept = attention_logits(p, a, true);
      Matrix rel, expected = Matrix::Zero(N, N);
      for (Term t : {Term::c2p, Term::p2c, Term::p2p}) {
        if (!a.terms[t]) continue;
        const Matrix term = term_scores(t, p, a);
        CHECK(kept.terms[t] == term);
        rel = rel.size() == 0 ? term : Matrix(rel + term);
      }
      if (a.terms[Term::c2c]) expected = rel.size() == 0 ? term_scores(Term::c2c, p, a) : Matrix(term_scores(Term::c2c, p, a) + rel);
      else if (rel.size() > 0) expected = rel;
      CHECK(kept.logits == expected);
      CHECK(attention_logits(p, a, false).logits == expected);
      for (Term t : kAllTerms) CHECK(kept.terms[t].size() == (a.terms[t] ? N * N : 0));
      const HeadResult head = attention_head(p, a, false, false);
      CHECK(head.probs == masked_softmax(expected, mask, mask));
      CHECK(head.context == attention_context(head.probs, p.V_c));
      CHECK(attention_head(p, a, true, true).probs.isZero(0));  // a masked head
    }
    // The term functions by hand at one cell: c2p(1, 2) = s · Q_c[1] · K_r[row − offset].
    a.terms = {};
    a.terms[Term::c2p] = true;
    CHECK(term_scores(Term::c2p, p, a)(1, 2) == a.scale * p.Q_c.row(1).dot(p.K_r.row(c2p_rows(1, 2) - offset)));
    CHECK(term_scores(Term::p2c, p, a)(1, 2) == a.scale * p.K_c.row(2).dot(p.Q_r.row(p2c_rows(1, 2) - offset)));
    // A relative term without its projection or rows is refused, naming the term.
    HeadProjections no_positions = p;
    no_positions.K_r = Matrix();
    CHECK_THROWS_WITH_AS(term_scores(Term::c2p, no_positions, a), doctest::Contains("c2p: the head has no K_r"), Error);
    CHECK_THROWS_WITH_AS(term_scores(Term::p2p, no_positions, a), doctest::Contains("p2p: the head has no K_r"), Error);
    AttentionSetup no_rows = a;
    no_rows.p2c_row = nullptr;
    CHECK_THROWS_AS(term_scores(Term::p2c, p, no_rows), Error);
    no_rows.mask = nullptr;
    CHECK_THROWS_WITH_AS(attention_head(p, no_rows, false), doctest::Contains("mask"), Error);
  }

  TEST_CASE("the terms' name table and the projections each term reads") {
    for (Term t : kAllTerms) CHECK(term_from_name(term_name(t)) == t);
    CHECK_FALSE(term_from_name("p2q").has_value());
    CHECK(std::string(term_name(Term::p2p)) == "p2p");
    CHECK((!reads_K_r(Term::c2c) && !reads_Q_r(Term::c2c)));
    CHECK((reads_K_r(Term::c2p) && !reads_Q_r(Term::c2p)));
    CHECK((!reads_K_r(Term::p2c) && reads_Q_r(Term::p2c)));
    CHECK((reads_K_r(Term::p2p) && reads_Q_r(Term::p2p)));
  }

  TEST_CASE("the EMD (§3.2): I_0 = H + P, then n passes of one layer with query I_t and key/value H") {
    Matrix H(2, 2), P(2, 2);
    H << 1, 2, 3, 4;
    P << 0.5, 0, 0, -1;
    const Matrix I_0 = emd_query_input(H, P);
    CHECK(I_0 == H + P);
    CHECK_THROWS_WITH_AS(emd_query_input(H, Matrix::Zero(3, 2)), doctest::Contains("differ in shape"), Error);
    struct Pass {
      Matrix query, kv, output;
    };
    // A stand-in layer: output = 2·query + kv. Pass t must see I_t as query and H as key/value.
    const std::vector<Pass> passes = emd_passes<Pass>(I_0, H, 3, [](const Matrix& q, const Matrix& kv) {
      return Pass{q, kv, Matrix(2 * q + kv)};
    });
    REQUIRE(passes.size() == 3);
    CHECK(passes[0].query == I_0);
    for (size_t t = 0; t < 3; ++t) CHECK(passes[t].kv == H);
    CHECK(passes[1].query == passes[0].output);
    CHECK(passes[2].query == passes[1].output);
    CHECK(passes[2].output == 2 * (2 * (2 * I_0 + H) + H) + H);
  }

  TEST_CASE("feed-forward sub-layer against the formula on a 3-wide example") {
    LayerWeights w;
    Matrix Wi(2, 3), Wo(3, 2);
    Wi << 1, 0, -1, 0.5, 0.5, 0.5;
    Wo << 1, 0, 0, 1, 1, 1;
    Vector bi(2), bo(3);
    bi << 0.1, -0.2;
    bo << 0, 0.3, -0.3;
    w.intermediate = {Wi, bi};
    w.output = {Wo, bo};
    w.output_norm = {Vector::Ones(3), Vector::Zero(3), 1e-7};
    Matrix a(1, 3);
    a << 1, 2, -1;
    // hidden = gelu([1 + 1 + 0.1, 0.5·2 − 0.2]) = gelu([2.1, 0.8])
    const double g1 = gelu(2.1), g2 = gelu(0.8);
    Matrix pre(1, 3);
    pre << g1 + 1, g2 + 0.3 + 2, g1 + g2 - 0.3 - 1;
    const double mean = pre.mean();
    const double var = (pre.array() - mean).square().mean();
    const Matrix want = ((pre.array() - mean) / std::sqrt(var + 1e-7)).matrix();
    test::check_close("ffn", feed_forward(a, w, Activation::GeluErf), want, 1e-15);
  }

  TEST_CASE("nGiE convolution equals a direct loop over conv1d (kernel 3, 2 groups, padding)") {
    const int64_t N = 5, H = 4, k = 3, groups = 2, per = H / groups;
    std::srand(7);
    ConvWeights w;
    for (int64_t t = 0; t < k; ++t) w.taps.push_back(Matrix::Random(H, per));
    w.bias = Vector::Random(H);
    w.norm = {Vector::Random(H), Vector::Random(H), 1e-7};
    const Matrix x = Matrix::Random(N, H), residual = Matrix::Random(N, H);
    Vector mask = Vector::Ones(N);
    mask[4] = 0;
    // Direct definition: out[n, o] = b[o] + Σ_t Σ_i W[o, i, t] · x[n + t − 1, g(o)·per + i].
    Matrix conv(N, H);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < H; ++o) {
        double v = w.bias[o];
        const int64_t g = o / per;
        for (int64_t t = 0; t < k; ++t) {
          const int64_t src = n + t - 1;
          if (src < 0 || src >= N) continue;
          for (int64_t i = 0; i < per; ++i) v += w.taps[t](o, i) * x(src, g * per + i);
        }
        conv(n, o) = mask[n] ? std::tanh(v) : 0.0;
      }
    Matrix want = layer_norm(residual + conv, w.norm);
    want.row(4).setZero();
    test::check_close("conv", ngie_convolution(x, residual, mask, w, groups, Activation::Tanh), want, 1e-13);
  }
}
