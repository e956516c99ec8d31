// test_lesson.cpp — the Lesson tab's answers (viewer/lesson.cpp) against the core, on the bundled
// model with the viewer's default sentence and on models where steps must say why they skip.
//
// Each answer is recomputed here from a second core call (relative_positions + table_rows,
// relative_distance, the trace's terms) rather than copied from the lesson, so a lesson that read
// the wrong map, row or layer fails.
#include "diagrams.h"
#include "lesson.h"

#include "deberta/equations.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/tokenizer.h"

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

using namespace deberta;

namespace {

std::string source(const std::string& rel) { return std::string(DEBERTA_SOURCE_DIR) + "/" + rel; }

/// The viewer's default sentence (lesson.h): long enough (> 17 tokens) that the log buckets matter.
const char* kDefaultText = viewer::kDefaultText;

struct Run {
  Model model;
  ForwardTrace trace;
  std::optional<EMDTrace> emd;
  std::vector<std::string> tokens;
  viewer::LessonInput input(int layer, int head) const {
    viewer::LessonInput in;
    in.model = &model, in.trace = &trace, in.emd = emd ? &*emd : nullptr;
    in.emd_note = emd ? "" : why_no_emd(model);
    in.tokens = tokens, in.layer = layer, in.head = head;
    return in;
  }
};

Run run_text(const std::string& dir, const std::string& text) {
  Run r;
  r.model = load_model(dir);
  const auto tok = load_tokenizer_for_model(dir, r.model.config.vocab_size);
  const Encoding enc = tok->encode(text);
  Inputs in;
  in.input_ids = enc.ids;
  r.tokens = enc.tokens;
  r.trace = forward(r.model, in, {}, TraceLevel::Full, true);
  if (r.trace.emd) r.emd = r.trace.emd;
  return r;
}

const viewer::LessonStep& step_titled(const std::vector<viewer::LessonStep>& steps, const std::string& prefix) {
  for (const auto& s : steps)
    if (s.title.rfind(prefix, 0) == 0) return s;
  FAIL("no lesson step titled " << prefix);
  return steps.front();
}

}  // namespace

TEST_CASE("every step applies on the bundled model with the default sentence, answers match the core") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  const Run r = run_text(dir, kDefaultText);
  const int N = static_cast<int>(r.trace.inputs.size());
  CAPTURE(N);
  REQUIRE(N > 17);  // the buckets start at |i − j| > position_buckets / 2 = 16
  const int layer = 1, head = 2;
  const auto steps = viewer::build_lesson(r.input(layer, head));
  REQUIRE(steps.size() >= 10);
  for (const auto& s : steps) {
    CAPTURE(s.title);
    CAPTURE(s.skip_reason);
    CHECK(s.applies);
    CHECK(std::isfinite(s.answer));
    // The answer as the working shows it, typed back, is judged right (its rounding stays within the
    // tolerance), and a number well outside the tolerance is not.
    CHECK(viewer::judge_lesson_answer(s, viewer::lesson_answer_text(s)).kind == viewer::LessonVerdict::Right);
    CHECK(!viewer::lesson_answer_ok(s, s.answer + (s.integer ? 1.0 : 10 * s.tolerance + 1e-3)));
    CHECK(s.show.i >= 0);
    CHECK(s.show.i < N);
    CHECK(s.show.j >= 0);
    CHECK(s.show.j < (s.show.map == "emd_I" ? static_cast<int>(r.model.config.hidden_size) : N));
  }
  const auto& ctx = r.trace.context;
  const IndexMatrix rel = relative_positions(N, N, r.model.config);
  const IndexMatrix rows = table_rows(rel, ctx.attention.k);

  // Step 1: the favourite key of the middle query in (layer, head).
  const Matrix& P = r.trace.layers[layer].attention.probs[head];
  const auto& s1 = step_titled(steps, "1.");
  Eigen::Index best = 0;
  P.row(N / 2).maxCoeff(&best);
  CHECK(s1.answer == static_cast<double>(best));

  // Step 2: Ã of eq. 4 is the unscaled sum of the terms: the trace's scaled terms divided by s.
  const auto& s2 = step_titled(steps, "2.");
  const auto& a = r.trace.layers[layer].attention;
  const int i2 = s2.show.i, j2 = s2.show.j;
  const double s_scale = ctx.attention.scale;
  CHECK(std::fabs(s2.answer - (a.c2c[head](i2, j2) + a.c2p[head](i2, j2) + a.p2c[head](i2, j2)) / s_scale) < 1e-12);
  CHECK(std::fabs(s2.answer * s_scale - a.logits[head](i2, j2)) < 1e-12);

  // Step 3: eq. 3 with the model's own k. Step 4: the clamp to row 0 (i − j < −k); the 33-token
  // sentence has no pair more than k = 32 apart, so step 4 takes a smaller k and says so.
  const auto& s3 = step_titled(steps, "3.");
  CHECK(s3.show.distance_k == ctx.attention.k);
  CHECK(s3.answer == static_cast<double>(relative_distance(s3.show.i, s3.show.j, s3.show.distance_k)));
  const auto& s4 = step_titled(steps, "4.");
  CHECK(s4.show.distance_k < ctx.attention.k);
  CHECK(s4.question.find("take k = " + std::to_string(s4.show.distance_k)) != std::string::npos);
  CHECK(s4.show.i - s4.show.j < -s4.show.distance_k);
  CHECK(s4.answer == 0);

  // Step 5: the bucket of the longest distance, and it is not the raw distance.
  const auto& s5 = step_titled(steps, "5.");
  CHECK(s5.answer == static_cast<double>(rel(s5.show.i, s5.show.j)));
  CHECK(s5.answer != static_cast<double>(s5.show.i - s5.show.j));

  // Step 6: the c2p row from relative_positions + table_rows.
  const auto& s6 = step_titled(steps, "6.");
  CHECK(s6.answer == static_cast<double>(rows(s6.show.i, s6.show.j)));

  // Step 7: the c2p value of the trace.
  const auto& s7 = step_titled(steps, "7.");
  CHECK(s7.answer == a.c2p[head](s7.show.i, s7.show.j));

  // Step 8: the code's p2c index reads the same row as c2p (the model was trained that way).
  const auto& s8 = step_titled(steps, "8.");
  CHECK(s8.answer == static_cast<double>(rows(s8.show.i, s8.show.j)));

  // Step 9: s = 1/√(d · 3) for c2p + p2c.
  const auto& s9 = step_titled(steps, "9.");
  CHECK(std::fabs(s9.answer - 1.0 / std::sqrt(static_cast<double>(r.model.config.d_head()) * 3.0)) < 1e-15);

  // Step 10: a difference of logits equals the log of the probability ratio.
  const auto& s10 = step_titled(steps, "10.");
  const int j10 = s10.show.j;
  CHECK(std::fabs(s10.answer - std::log(P(N / 2, best) / P(N / 2, j10))) < 1e-9);

  // Step 11: I_0 = H + P at the [MASK], H the output of layer L − 2, P the absolute position row.
  const auto& s11 = step_titled(steps, "11.");
  REQUIRE(r.emd);
  const int i11 = s11.show.i, c11 = s11.show.j, L = static_cast<int>(r.model.config.num_hidden_layers);
  CHECK(r.tokens[static_cast<size_t>(i11)] == "[MASK]");
  const double H11 = r.trace.layers[static_cast<size_t>(L - 2)].output(i11, c11);
  const double P11 = r.model.weights.embeddings.position(i11, c11);
  CHECK(std::fabs(s11.answer - (H11 + P11)) < 1e-12);

  // Step 12: a real forward pass without c2p gives the layer-0 logit the lesson predicts.
  const auto& s12 = step_titled(steps, "12.");
  Ablation no_c2p;
  no_c2p.c2p = false;
  const ForwardTrace off = forward(r.model, r.trace.inputs, no_c2p, TraceLevel::Full, false);
  CHECK(std::fabs(s12.answer - off.layers[0].attention.logits[head](s12.show.i, s12.show.j)) < 1e-12);
}

TEST_CASE("steps that do not apply say why: a short input, a v1 model without buckets, no EMD") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  const Run short_run = run_text(dir, "The LORD is my [MASK].");
  auto steps = viewer::build_lesson(short_run.input(0, 0));
  const auto& s5 = step_titled(steps, "5.");
  CHECK(!s5.applies);
  CHECK(s5.skip_reason.find("too short") != std::string::npos);
  CHECK(!viewer::lesson_answer_ok(s5, s5.answer));

  // A model trained without the EMD (no absolute position table): step 11 skips with the core's reason.
  const std::string no_emd = source("notebooks_data/models/zoo/deberta-tiny-no-emd");
  REQUIRE(std::filesystem::exists(no_emd + "/config.json"));
  const Run ne = run_text(no_emd, kDefaultText);
  REQUIRE(!runs_emd(ne.model));
  steps = viewer::build_lesson(ne.input(0, 0));
  const auto& s11 = step_titled(steps, "11.");
  CHECK(!s11.applies);
  CHECK(s11.skip_reason == why_no_emd(ne.model));

  // A model trained without p2c: step 8 skips.
  const std::string no_p2c = source("notebooks_data/models/zoo/deberta-tiny-no-p2c");
  const Run np = run_text(no_p2c, kDefaultText);
  steps = viewer::build_lesson(np.input(0, 0));
  CHECK(!step_titled(steps, "8.").applies);
  CHECK(step_titled(steps, "7.").applies);
  // s = 1/√(d · 2) with c2p only.
  CHECK(std::fabs(step_titled(steps, "9.").answer - 1.0 / std::sqrt(static_cast<double>(np.model.config.d_head()) * 2.0)) < 1e-15);

  // A v1 golden model (no buckets, no tokenizer): step 5 skips because it does not bucket.
  Model v1 = load_model(source("notebooks_data/golden/v1_basic"));
  Inputs in;
  for (int t = 0; t < 20; ++t) in.input_ids.push_back(4 + t % 30);
  const ForwardTrace tr = forward(v1, in, {}, TraceLevel::Full, false);
  viewer::LessonInput li;
  li.model = &v1, li.trace = &tr, li.emd_note = why_no_emd(v1);
  steps = viewer::build_lesson(li);
  CHECK(!step_titled(steps, "5.").applies);
  CHECK(step_titled(steps, "5.").skip_reason.find("does not bucket") != std::string::npos);
  // Without token names the questions name positions as #p.
  CHECK(step_titled(steps, "1.").question.find("'#") != std::string::npos);
}

TEST_CASE("a trace without the term maps is refused with a clear error") {
  Model v1 = load_model(source("notebooks_data/golden/v1_basic"));
  Inputs in;
  in.input_ids = {4, 5, 6};
  const ForwardTrace light = forward(v1, in, {}, TraceLevel::Probs, false);
  viewer::LessonInput li;
  li.model = &v1, li.trace = &light;
  CHECK_THROWS_WITH_AS(viewer::build_lesson(li), doctest::Contains("TraceLevel::Full"), std::invalid_argument);
  li.trace = nullptr;
  CHECK_THROWS_AS(viewer::build_lesson(li), std::invalid_argument);
}

TEST_CASE("the viewer's inputs (a Probs trace and two layers materialized) give the lesson of a full trace") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  const Run r = run_text(dir, kDefaultText);
  const int layer = 2, head = 1;
  const ForwardTrace light = forward(r.model, r.trace.inputs, {}, TraceLevel::Probs, true);
  // As the viewer's LayerDetail: level Full, the selected layer and layer 0 in full, the others empty.
  ForwardTrace full;
  full.inputs = light.inputs, full.context = light.context, full.level = TraceLevel::Full;
  full.layers.resize(light.layers.size());
  for (int l : {0, layer}) full.layers[static_cast<size_t>(l)] = materialize_layer(r.model, light, l);
  viewer::LessonInput in = r.input(layer, head);
  in.trace = &light, in.full = &full;
  const std::optional<EMDTrace> emd = light.emd;
  in.emd = emd ? &*emd : nullptr;
  const auto ours = viewer::build_lesson(in);
  const auto ref = viewer::build_lesson(r.input(layer, head));
  REQUIRE(ours.size() == ref.size());
  for (size_t k = 0; k < ours.size(); ++k) {
    CAPTURE(ref[k].title);
    CHECK(ours[k].applies == ref[k].applies);
    CHECK(ours[k].question == ref[k].question);
    CHECK(ours[k].answer == ref[k].answer);
    CHECK(ours[k].explanation == ref[k].explanation);
  }
  // Without the selected layer in full the lesson says which layer is missing.
  full.layers[static_cast<size_t>(layer)] = LayerTrace();
  CHECK_THROWS_WITH_AS(viewer::build_lesson(in), doctest::Contains("lacks layer 2"), std::invalid_argument);
}

TEST_CASE("a blank or unparsable answer is not an answer; the tolerance shows as used (issue 31)") {
  using viewer::parse_lesson_answer;
  CHECK(!parse_lesson_answer(""));
  CHECK(!parse_lesson_answer("   "));
  CHECK(!parse_lesson_answer("abc"));
  CHECK(!parse_lesson_answer("1.2.3"));
  CHECK(!parse_lesson_answer("4x"));
  CHECK(!parse_lesson_answer("nan"));
  CHECK(!parse_lesson_answer("inf"));
  REQUIRE(parse_lesson_answer(" 7 "));
  CHECK(*parse_lesson_answer(" 7 ") == 7.0);
  CHECK(*parse_lesson_answer("-0.25") == -0.25);
  CHECK(*parse_lesson_answer("0") == 0.0);  // a typed 0 is an answer; an empty box is not
  viewer::LessonStep s;
  s.applies = true;
  s.tolerance = 5e-5;
  CHECK(viewer::lesson_tolerance_text(s) == "±5e-05");
  s.tolerance = 0.002;
  CHECK(viewer::lesson_tolerance_text(s) == "±0.002");
  s.integer = true;
  CHECK(viewer::lesson_tolerance_text(s).empty());
}

namespace {

std::string exact(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// The mistake of `step` whose name starts with `prefix` (fails the test when there is none).
const viewer::LessonMistake& mistake(const viewer::LessonStep& step, const std::string& prefix) {
  for (const auto& m : step.mistakes)
    if (m.name.rfind(prefix, 0) == 0) return m;
  FAIL("step '" << step.title << "' lists no mistake starting '" << prefix << "'");
  return step.mistakes.front();
}

}  // namespace

TEST_CASE("each named mistake is recognised from its wrong number, recomputed here from the core (issue 31)") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  const Run r = run_text(dir, kDefaultText);
  const int layer = 1, head = 2;
  const auto steps = viewer::build_lesson(r.input(layer, head));
  const auto& ctx = r.trace.context;
  const auto& a = r.trace.layers[layer].attention;
  const int64_t k = ctx.attention.k;
  const double s_scale = ctx.attention.scale;

  // Every listed mistake, typed as its number, is judged wrong and named; none is the answer.
  for (const auto& st : steps) {
    CAPTURE(st.title);
    for (const auto& m : st.mistakes) {
      CAPTURE(m.name);
      const viewer::LessonVerdict v = viewer::judge_lesson_answer(st, exact(m.value));
      CHECK(v.kind == viewer::LessonVerdict::Wrong);
      CHECK(v.mistake == m.name);
      CHECK(v.text() == "wrong: " + m.name);
    }
    // The answer is right; a number far from every mistake is wrong with no known mistake.
    CHECK(viewer::judge_lesson_answer(st, exact(st.answer)).text() == "right");
    double far = st.answer + 1e6;
    CHECK(viewer::judge_lesson_answer(st, exact(far)).text() == "wrong: no known mistake");
    CHECK(viewer::judge_lesson_answer(st, "").text() == "not an answer");
    CHECK(viewer::judge_lesson_answer(st, "  ").kind == viewer::LessonVerdict::NotAnswer);
  }

  // The five mistakes the issue names, each from its own recomputation.
  // Forgot the scale (step 7): the c2p dot product itself = the trace's scaled c2p / s.
  const auto& s7 = step_titled(steps, "7.");
  CHECK(std::fabs(mistake(s7, "forgot the scale").value - a.c2p[head](s7.show.i, s7.show.j) / s_scale) < 1e-9);
  // The paper's p2c index δ(j, i) where the code reads δ(i, j) (step 8).
  const auto& s8 = step_titled(steps, "8.");
  const IndexMatrix rows = table_rows(relative_positions(static_cast<int64_t>(r.tokens.size()), static_cast<int64_t>(r.tokens.size()),
                                                         r.model.config), k);
  CHECK(mistake(s8, "used the paper's p2c index").value == static_cast<double>(rows(s8.show.j, s8.show.i)));
  // Softmax over the wrong axis (step 1): the largest weight of column i.
  const auto& s1 = step_titled(steps, "1.");
  Eigen::Index col_best = 0;
  a.probs[head].col(s1.show.i).maxCoeff(&col_best);
  if (col_best != static_cast<Eigen::Index>(s1.answer))
    CHECK(mistake(s1, "softmax over the wrong axis").value == static_cast<double>(col_best));
  // δ not clamped at k (step 4): i − j + k.
  const auto& s4 = step_titled(steps, "4.");
  CHECK(mistake(s4, "did not clamp").value == static_cast<double>(s4.show.i - s4.show.j + s4.show.distance_k));
  // The EMD's I = H without the position (step 11): the output of layer L − 2 alone.
  const auto& s11 = step_titled(steps, "11.");
  const size_t L = r.model.config.num_hidden_layers;
  CHECK(mistake(s11, "took I = H without the position").value == r.trace.layers[L - 2].output(s11.show.i, s11.show.j));
  // Ã with the scale applied (step 2): the trace's logit.
  const auto& s2 = step_titled(steps, "2.");
  CHECK(std::fabs(mistake(s2, "applied the scale").value - a.logits[head](s2.show.i, s2.show.j)) < 1e-9);
}

TEST_CASE("no answer, working or map is shown before an attempt; a not-an-answer is no attempt (issue 31)") {
  viewer::LessonStep st;
  st.applies = true;
  st.answer = 3, st.integer = true;
  viewer::LessonState L;
  CHECK(!L.answer_visible(st));
  L.revealed = true;  // "show the working" pressed (or --lesson-reveal) before any attempt
  CHECK(!L.answer_visible(st));
  L.checked = -2;     // a blank box: not an answer, not an attempt
  CHECK(!L.answer_visible(st));
  L.checked = -1, L.attempts = 1;  // a wrong number committed, then the working asked for
  CHECK(L.answer_visible(st));
  L.revealed = false;
  CHECK(!L.answer_visible(st));    // wrong and not revealed: the map would give the answer away
  L.checked = 1;
  CHECK(L.answer_visible(st));     // right
  st.applies = false;
  L = viewer::LessonState();
  CHECK(L.answer_visible(st));     // a step that does not apply has nothing to hide
}

TEST_CASE("token links: a term's share of the weight, the shares add up to the weight; the pipeline has the model's sizes (issue 31)") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  const Run r = run_text(dir, kDefaultText);
  const int layer = 1, head = 2;
  const auto& a = r.trace.layers[layer].attention;
  const std::vector<const Matrix*> terms = {&a.c2c[head], &a.c2p[head], &a.p2c[head]};
  Matrix sum = Matrix::Zero(a.probs[head].rows(), a.probs[head].cols());
  for (size_t t = 0; t < terms.size(); ++t) {
    const Matrix share = viewer::term_share(a.probs[head], terms, t);
    CHECK(share.minCoeff() >= 0);
    sum += share;
    // Cell by cell: weight · |term| / Σ|terms|.
    const Eigen::Index i = 7, j = 3;
    const double total = std::fabs(a.c2c[head](i, j)) + std::fabs(a.c2p[head](i, j)) + std::fabs(a.p2c[head](i, j));
    CHECK(std::fabs(share(i, j) - a.probs[head](i, j) * std::fabs((*terms[t])(i, j)) / total) < 1e-15);
  }
  CHECK((sum - a.probs[head]).cwiseAbs().maxCoeff() < 1e-14);
  CHECK_THROWS_AS(viewer::term_share(a.probs[head], terms, 3), std::invalid_argument);

  const int N = static_cast<int>(r.tokens.size());
  const viewer::Diagram links = viewer::links_diagram(r.tokens, a.probs[head], "links", 0.05);
  CHECK(links.left.size() == static_cast<size_t>(N));
  for (const auto& l : links.links) CHECK(a.probs[head](l.from, l.to) >= 0.05);
  size_t strong = 0;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) strong += a.probs[head](i, j) >= 0.05;
  CHECK(links.links.size() == strong);
  CHECK_THROWS_AS(viewer::links_diagram({"a"}, a.probs[head], "links"), std::invalid_argument);

  const viewer::Diagram p = viewer::pipeline_diagram(r.model.config, r.trace.context.attention, N, true, true);
  std::string all;
  for (const auto& b : p.boxes) all += b.title + " | " + b.detail + "\n";
  CAPTURE(all);
  CHECK(all.find("× L = " + std::to_string(r.model.config.num_hidden_layers)) != std::string::npos);
  CHECK(all.find("[4 heads × " + std::to_string(N) + " × " + std::to_string(N) + "]") != std::string::npos);
  CHECK(all.find("2k = " + std::to_string(2 * r.trace.context.attention.k)) != std::string::npos);
  CHECK(all.find("I_0 = H + P") != std::string::npos);
  CHECK(all.find("softmax(Ã / √(3d))") != std::string::npos);
  const viewer::Diagram q = viewer::pipeline_diagram(r.model.config, r.trace.context.attention, N, false, true);
  std::string none;
  for (const auto& b : q.boxes) none += b.title;
  CHECK(none.find("Enhanced Mask Decoder") == std::string::npos);
}
