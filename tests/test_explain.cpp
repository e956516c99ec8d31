// test_explain.cpp — explain_cell (the walk-through of one attention cell that `deberta explain`,
// the viewer's equation panel and the lesson's steps 2 and 7 all read) pinned against quantities
// computed independently here: the table rows from relative_positions + table_rows, the raw dot
// products from the trace's own Q_c / K_c / Q_r / K_r projections, the scale from the context.
#include "test_util.h"

#include "deberta/equations.h"
#include "deberta/explain.h"
#include "deberta/model.h"
#include "deberta/model_io.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace deberta;
using deberta::test::source_path;

TEST_SUITE("explain") {
  TEST_CASE("explain_cell's rows, dot products, scaled terms and softmax row agree with an independent computation") {
    for (const char* name : {"v2_basic", "v3_emd", "v1_basic"}) {
      CAPTURE(name);
      const Model model = load_model(source_path(std::string("notebooks_data/golden/") + name));
      const auto& c = model.config;
      Inputs in;
      const int64_t N = std::min<int64_t>(c.max_position_embeddings > 0 ? c.max_position_embeddings : 12, 12);
      for (int64_t t = 0; t < N; ++t) in.input_ids.push_back((5 + 7 * t) % c.vocab_size);
      const ForwardTrace tr = forward(model, in, {}, TraceLevel::Full, false);
      const int64_t d = c.d_head();
      const auto& ctx = tr.context;
      CHECK(std::fabs(ctx.attention.scale - 1.0 / std::sqrt(static_cast<double>(d) * ctx.attention.scale_factor)) < 1e-15);
      IndexMatrix rows;
      if (c.relative_attention) rows = table_rows(relative_positions(N, N, c), ctx.attention.k);
      for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer)
        for (int64_t head = 0; head < c.num_attention_heads; ++head)
          for (int64_t i : {int64_t{0}, N / 2, N - 1})
            for (int64_t j : {int64_t{0}, int64_t{1}, N - 1}) {
              CAPTURE(layer);
              CAPTURE(head);
              CAPTURE(i);
              CAPTURE(j);
              const CellExplanation e = explain_cell(model, tr, layer, head, i, j);
              const AttentionTrace& a = tr.layers[static_cast<size_t>(layer)].attention;
              const auto q_c = a.Q_c.row(i).segment(head * d, d), k_c = a.K_c.row(j).segment(head * d, d);
              CHECK(std::fabs(e.dot[Term::c2c] - q_c.dot(k_c)) < 1e-12);
              CHECK(std::fabs(e.scaled[Term::c2c] - e.dot[Term::c2c] * e.scale) < 1e-12);
              CHECK(std::fabs(e.scaled[Term::c2c] - a.terms[Term::c2c][static_cast<size_t>(head)](i, j)) < 1e-12);
              if (e.active[Term::c2p]) {
                CHECK(e.c2p_row == rows(i, j));
                const auto k_r = a.K_r.row(rows(i, j) - a.row_offset).segment(head * d, d);
                CHECK(std::fabs(e.dot[Term::c2p] - q_c.dot(k_r)) < 1e-12);
                CHECK(std::fabs(e.scaled[Term::c2p] - a.terms[Term::c2p][static_cast<size_t>(head)](i, j)) < 1e-12);
              }
              if (e.active[Term::p2c]) {
                CHECK(e.p2c_row == rows(i, j));  // the released code's index: the same row as c2p
                const auto q_r = a.Q_r.row(rows(i, j) - a.row_offset).segment(head * d, d);
                CHECK(std::fabs(e.dot[Term::p2c] - k_c.dot(q_r)) < 1e-12);
                CHECK(std::fabs(e.scaled[Term::p2c] - a.terms[Term::p2c][static_cast<size_t>(head)](i, j)) < 1e-12);
              }
              const double raw = e.dot[Term::c2c] + (e.active[Term::c2p] ? e.dot[Term::c2p] : 0) + (e.active[Term::p2c] ? e.dot[Term::p2c] : 0);
              CHECK(std::fabs(raw * e.scale - a.logits[static_cast<size_t>(head)](i, j)) < 1e-12);
              CHECK(std::fabs(e.logit - a.logits[static_cast<size_t>(head)](i, j)) < 1e-12);
              CHECK(e.prob == a.probs[static_cast<size_t>(head)](i, j));
              REQUIRE(e.probs_row.size() == static_cast<size_t>(N));
              double sum = 0;
              for (double p : e.probs_row) sum += p;
              CHECK(std::fabs(sum - 1) < 1e-12);
            }
    }
  }

  TEST_CASE("the walk-through states the paper's notation: Ã unscaled, the score s·Ã, softmax(Ã/√(3d))") {
    const Model model = load_model(source_path("notebooks_data/golden/v2_basic"));
    Inputs in;
    in.input_ids = {1, 5, 9, 13, 2};
    const ForwardTrace tr = forward(model, in, {}, TraceLevel::Full, false);
    const CellExplanation e = explain_cell(model, tr, 0, 0, 2, 3);
    const std::string text = format_explanation(e);
    // One notation (issue 58): the terms unscaled (c2c = Q_c[i] · K_c[j]), their scaled parts written s · c2c.
    CHECK(text.find("Ã_ij = c2c + c2p + p2c (unscaled") != std::string::npos);
    CHECK(text.find("c2c = Q_c[i] · K_c[j]  (unscaled") != std::string::npos);
    CHECK(text.find("c2c = s ·") == std::string::npos);
    CHECK(text.find("× s") == std::string::npos);
    CHECK(text.find(",  s · c2p = ") != std::string::npos);
    CHECK(text.find("softmax_j(Ã_i / √(3d))") != std::string::npos);
    char sum[64];
    std::snprintf(sum, sizeof sum, "%.6g", e.dot[Term::c2c] + e.dot[Term::c2p] + e.dot[Term::p2c]);
    CHECK(text.find(std::string("= ") + sum + ";  s · Ã = ") != std::string::npos);
    // A model with c2c alone names only c2c in the sum (v1 without relative attention keeps f = 3).
    const Model c2c_only = load_model(source_path("notebooks_data/golden_extra/v1_norel"));
    const ForwardTrace t1 = forward(c2c_only, in, {}, TraceLevel::Full, false);
    const std::string one = format_explanation(explain_cell(c2c_only, t1, 0, 0, 2, 3));
    CAPTURE(one);
    CHECK(one.find("Ã_ij = c2c (unscaled") != std::string::npos);
    CHECK(one.find("c2p") == std::string::npos);
    CHECK(one.find("p2c") == std::string::npos);
  }
}
