// test_lesson.cpp — the Lesson tab's answers (viewer/lesson/lesson.cpp) against the core, on the bundled
// model with the viewer's default sentence and on models where steps must say why they skip.
//
// Each answer is recomputed here from a second core call (relative_positions + table_rows,
// relative_distance, the trace's terms) rather than copied from the lesson, so a lesson that read
// the wrong map, row or layer fails.
#include "test_paths.h"  // DEBERTA_SOURCE_DIR
#include "figures/diagrams.h"
#include "lesson/lesson.h"
#include "state/state.h"

#include "deberta/equations.h"
#include "deberta/explain.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/tokenizer.h"

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
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
  /// Step 15's reruns, made once per run as the viewer does (the suite builds lessons for many layers
  /// and heads of one run); the tests of steps 13-15 also build without them and compare.
  mutable std::shared_ptr<viewer::LessonReruns> reruns;
  viewer::LessonInput input(int layer, int head) const {
    viewer::LessonInput in;
    in.model = &model, in.trace = &trace, in.emd = emd ? &*emd : nullptr;
    in.emd_note = emd ? "" : why_no_emd(model);
    in.tokens = tokens, in.layer = layer, in.head = head;
    if (!reruns) reruns = std::make_shared<viewer::LessonReruns>(viewer::lesson_reruns(in));
    in.reruns = reruns.get();
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

// A step of a lesson built in the same expression: a copy, so that `const auto& s = step_titled(
// viewer::build_lesson(...), "9.")` holds the step itself, not a reference into the dead vector
// (the reference form crashed viewer_lesson in CI, 1 run in 3).
viewer::LessonStep step_titled(std::vector<viewer::LessonStep>&& steps, const std::string& prefix) {
  return step_titled(steps, prefix);
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
    CHECK(s.show.j < N);  // a key, also on step 11 (its map's column is `component`)
    CHECK(s.show.component < (s.show.map == "emd_I" ? static_cast<int>(r.model.config.hidden_size) : 0));
    // Each question asks for a precision; integers ask for an index.
    if (!s.integer) CHECK(s.question.find("Give it to " + std::to_string(s.decimals) + " decimal places.") != std::string::npos);
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
  CHECK(std::fabs(s2.answer - (a.terms[Term::c2c][head](i2, j2) + a.terms[Term::c2p][head](i2, j2) + a.terms[Term::p2c][head](i2, j2)) / s_scale) < 1e-12);
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
  CHECK(s7.answer == a.terms[Term::c2p][head](s7.show.i, s7.show.j));

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
  const int i11 = s11.show.i, c11 = s11.show.component, L = static_cast<int>(r.model.config.num_hidden_layers);
  CHECK(r.tokens[static_cast<size_t>(i11)] == "[MASK]");
  const double H11 = r.trace.layers[static_cast<size_t>(L - 2)].output(i11, c11);
  const double P11 = r.model.weights.embeddings.position(i11, c11);
  CHECK(std::fabs(s11.answer - (H11 + P11)) < 1e-12);
  // "show me" selects the [MASK] and a key — the one it attends to most in the first EMD pass —,
  // never the component index as a key (issue 42: it selected key 32, [SEP]).
  Eigen::Index key11 = 0;
  r.emd->passes[0].attention.probs[head].row(i11).maxCoeff(&key11);
  CHECK(s11.show.j == static_cast<int>(key11));
  CHECK(s11.show.tab == "predictions");

  // Step 12: a real forward pass without c2p gives the layer-0 logit the lesson predicts.
  const auto& s12 = step_titled(steps, "12.");
  Ablation no_c2p;
  no_c2p.terms[Term::c2p] = false;
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
  // The decimal comma of the interface's language (Italian), and only there.
  CHECK(!parse_lesson_answer("0,25"));
  REQUIRE(viewer::i18n::set_language("it"));
  REQUIRE(parse_lesson_answer("−0,25"));
  CHECK(*parse_lesson_answer("−0,25") == -0.25);
  CHECK(!parse_lesson_answer("0,2,5"));
  CHECK(!parse_lesson_answer("0.2,5"));
  REQUIRE(viewer::i18n::set_language("ko"));
  CHECK(!parse_lesson_answer("0,25"));
  REQUIRE(viewer::i18n::set_language("en"));
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
      CHECK(v.reading == m.reading);
      CHECK(v.text() == (m.reading ? "other reading: " : "wrong: ") + m.name);
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
  CHECK(std::fabs(mistake(s7, "forgot the scale").value - a.terms[Term::c2p][head](s7.show.i, s7.show.j) / s_scale) < 1e-9);
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
  CHECK(mistake(s11, "took I = H without the position").value == r.trace.layers[L - 2].output(s11.show.i, s11.show.component));
  // I = P is offered as the paper's literal reading of A.8, not as a mistake.
  const auto& p11 = mistake(s11, "I = P is the paper's literal reading of A.8");
  CHECK(p11.reading);
  CHECK(p11.value == r.model.weights.embeddings.position(s11.show.i, s11.show.component));
  CHECK(viewer::judge_lesson_answer(s11, exact(p11.value)).text().rfind("other reading: ", 0) == 0);
  CHECK(!mistake(s11, "took I = H without the position").reading);
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


// ---------------------------------------------------------------------------------------------
// Issue 42: one notation, labels computed from the model, mistakes as students write them, step 4
// on long bucketed inputs, signed token links.

namespace {

/// A model without a tokenizer, run on `n` ids (the golden models' vocabularies start at 4).
Run run_ids(const std::string& dir, int n) {
  Run r;
  r.model = load_model(dir);
  Inputs in;
  for (int t = 0; t < n; ++t) in.input_ids.push_back(4 + (t * 7) % 29);
  r.trace = forward(r.model, in, {}, TraceLevel::Full, true);
  if (r.trace.emd) r.emd = r.trace.emd;
  return r;
}

/// `v` with `decimals` places, as a student rounds it.
std::string rounded(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// The root of the scale as a reader expects it for factor f: √d, √(2d), √(3d).
std::string expected_root(double f) {
  if (f == 1) return "√d";
  char buf[32];
  std::snprintf(buf, sizeof buf, "√(%gd)", f);
  return buf;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("labels follow one notation with the model's own factor: 3-term, 2-term and c2c-only models (issue 42)") {
  struct Case {
    const char* dir;
    bool tokenizer;
    double f;        // the factor the reference code uses
    bool pos_terms;  // c2p or p2c active
  };
  const Case cases[] = {
      {"notebooks_data/golden/v1_basic", false, 3, true},             // c2c + c2p + p2c
      {"notebooks_data/golden/v1_c2p_only", false, 2, true},          // c2c + c2p
      {"notebooks_data/models/zoo/deberta-tiny-c2c-abs", true, 1, false},  // c2c only, no relative attention
      {"notebooks_data/golden_extra/v1_norel", false, 3, false},      // c2c only, yet v1's factor counts pos_att_type
  };
  for (const Case& k : cases) {
    CAPTURE(k.dir);
    const Run r = k.tokenizer ? run_text(source(k.dir), "And God said, Let there be light: and there was [MASK].")
                              : run_ids(source(k.dir), 12);
    const auto& att = r.trace.context.attention;
    REQUIRE(att.scale_factor == k.f);
    REQUIRE((att.terms[Term::c2p] || att.terms[Term::p2c]) == k.pos_terms);
    const std::string root = expected_root(k.f);
    CHECK(deberta::scale_root(att.scale_factor) == root);
    // Head detail's labels, figure units and the grid: Ã unscaled, the score Ã/root, the weights softmax(Ã/root).
    CHECK(viewer::score_label(att.scale_factor) == "score Ã/" + root);
    CHECK(viewer::weights_label(att.scale_factor) == "softmax(Ã/" + root + ")");
    CHECK(has(viewer::quantity_label(viewer::Quantity::Logits, att.scale_factor, false, &att.terms), "score Ã/" + root + " = s·("));
    CHECK(has(viewer::quantity_label(viewer::Quantity::Probs, att.scale_factor), "softmax_j(Ã/" + root + ")"));
    for (int q = 0; q < 6; ++q) {
      CHECK(!has(viewer::quantity_label(static_cast<viewer::Quantity>(q), att.scale_factor), "√(1d)"));
      if (k.f != 3) CHECK(!has(viewer::quantity_label(static_cast<viewer::Quantity>(q), att.scale_factor), "√(3d)"));
      CHECK(!has(viewer::quantity_label(static_cast<viewer::Quantity>(q)), "3d"));  // the model-free label names no factor
    }
    // Head detail's selected cell: the scaled terms add up to the score; Ã = score / s; then the weight.
    const auto& a = r.trace.layers[0].attention;
    const int i = 5, j = 2;
    std::vector<std::pair<std::string, double>> scaled = {{"c2c", a.terms[Term::c2c][0](i, j)}};
    if (att.terms[Term::c2p]) scaled.push_back({"c2p", a.terms[Term::c2p][0](i, j)});
    if (att.terms[Term::p2c]) scaled.push_back({"p2c", a.terms[Term::p2c][0](i, j)});
    const std::string cell = viewer::cell_sum_text(scaled, att.scale, a.logits[0](i, j), a.probs[0](i, j), att.scale_factor);
    CAPTURE(cell);
    char want[128];
    std::snprintf(want, sizeof want, "= score Ã/%s %+.4f (Ã = %+.4f)  →  weight %.4f", root.c_str(), a.logits[0](i, j),
                  a.logits[0](i, j) / att.scale, a.probs[0](i, j));
    CHECK(has(cell, want));
    CHECK(!has(cell, "→  A"));  // the weights are not §3.1's A (the score)
    // The pipeline names the model's scale; without a position term it is §3.1's attention, no eq. 4, no δ.
    const viewer::Diagram p = viewer::pipeline_diagram(r.model.config, att, r.trace.inputs.size(), r.emd.has_value(), true);
    std::string boxes;
    for (const auto& b : p.boxes) boxes += b.title + " | " + b.detail + "\n";
    CAPTURE(boxes);
    CHECK(has(boxes, root + ") over keys j"));
    CHECK(!has(boxes, "√(1d)"));
    if (k.f != 3) CHECK(!has(boxes, "√(3d)"));
    if (!k.pos_terms) {
      CHECK(has(boxes, "§3.1"));
      CHECK(!has(boxes, "eq. 4"));
      CHECK(!has(boxes, "Ã"));
    }
    if (!r.model.config.relative_attention) CHECK(!has(boxes, "δ"));
    // The CLI's walk-through: the same root; c2c alone at factor 1 is §3.1, not eq. 4.
    const deberta::CellExplanation e = deberta::explain_cell(r.model, r.trace, 0, 0, i, j);
    std::string walk;
    for (const auto& st : deberta::explanation_steps(e)) walk += "[" + st.equation + "] " + st.formula + " " + st.numbers + "\n";
    CAPTURE(walk);
    CHECK(!has(walk, "√(1d)"));
    CHECK(!has(walk, "eq. 1"));
    if (k.f == 1 && !k.pos_terms) {
      CHECK(has(walk, "[§3.1 (standard attention)]"));
      CHECK(!has(walk, "eq. 4"));
    } else {
      CHECK(has(walk, "softmax_j(Ã_i / " + root + ")"));
      if (k.f != 3) CHECK(!has(walk, "Ã_i / √(3d)"));
    }
    // The lesson: titles, questions and workings use the model's root; the paper's √(3d) only where
    // a sentence names the paper; steps that do not apply to this model say so and draw no δ map.
    const auto steps = viewer::build_lesson(r.input(0, 0));
    for (const auto& st : steps) {
      CAPTURE(st.title);
      // v6's eq. 1 is the MLM objective: only the steps that quote it may cite it (never §3.1's display).
      const bool cites_mlm = std::any_of(st.quotes.begin(), st.quotes.end(), [](const viewer::PaperQuote& q) {
        return q.text == viewer::paper_quote(viewer::Quote::MLMObjective).text;
      });
      for (const std::string* field : {&st.title, &st.question, &st.explanation, &st.equation, &st.text, &st.skip_reason}) {
        CHECK(!has(*field, "√(1d)"));
        if (!cites_mlm) CHECK(!has(*field, "eq. 1)"));
        if (k.f != 3 && has(*field, "√(3d)")) CHECK(has(*field, "paper"));
      }
    }
    CHECK(step_titled(steps, "9.").title == "9. The scale 1/" + root + " (§3.1, eq. 4)");
    CHECK(step_titled(steps, "1.").title == "1. Self-attention (§3.1)");
    CHECK(has(step_titled(steps, "9.").text, k.f == 3 ? "the paper's 1/√(3d)" : "f = " + std::string(k.f == 2 ? "2" : k.f == 1 ? "1" : "3")));
    if (k.pos_terms) {
      CHECK(has(step_titled(steps, "1.").text, "softmax(Ã/" + root + ")"));
      CHECK(step_titled(steps, "2.").applies);
    } else {
      CHECK(has(step_titled(steps, "1.").text, "no position term"));
      CHECK(!step_titled(steps, "2.").applies);
    }
    if (!r.model.config.relative_attention)
      for (const char* t : {"3.", "4.", "5.", "6."}) {
        CHECK(!step_titled(steps, t).applies);
        CHECK(step_titled(steps, t).show.map.empty());  // no δ map where there is no δ
      }
    if (k.f != 3) {
      // The paper's factor typed on a model whose factor differs is named as such.
      const auto& s9 = step_titled(steps, "9.");
      const double d = static_cast<double>(r.model.config.d_head());
      CHECK(viewer::judge_lesson_answer(s9, exact(1 / std::sqrt(3 * d))).mistake.rfind("used the paper's 1/√(3d)", 0) == 0);
    }
  }
  CHECK(viewer::layer_head_words(1, 4, 2, 4) == "layer 1 (of 0–3), head 2 (of 0–3)");
  CHECK(viewer::quantity_words(viewer::Quantity::Probs) == "Attention weights");
  CHECK(viewer::quantity_words(viewer::Quantity::C2P) == "Content-to-position term (c2p)");
}

TEST_CASE("every named mistake, rounded as a student writes it, is named; the rounded answer is right (issue 42)") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  const Run bundled = run_text(dir, kDefaultText);
  const Run two = run_text(source("notebooks_data/models/zoo/deberta-tiny-no-p2c"), kDefaultText);  // f = 2
  int named = 0, two_decimals = 0;
  for (const Run* r : {&bundled, &two})
    for (int layer = 0; layer < static_cast<int>(r->model.config.num_hidden_layers); ++layer)
      for (int head = 0; head < static_cast<int>(r->model.config.num_attention_heads); ++head) {
        const auto steps = viewer::build_lesson(r->input(layer, head));
        for (const auto& st : steps) {
          if (!st.applies) continue;
          CAPTURE(layer);
          CAPTURE(head);
          CAPTURE(st.title);
          if (st.integer) {
            for (const auto& m : st.mistakes) CHECK(viewer::judge_lesson_answer(st, rounded(m.value, 0)).mistake == m.name);
            continue;
          }
          // The right answer rounded to the asked precision is right (e.g. 2.7013 typed as 2.70).
          CHECK(viewer::judge_lesson_answer(st, rounded(st.answer, st.decimals)).kind == viewer::LessonVerdict::Right);
          CHECK(viewer::judge_lesson_answer(st, rounded(st.answer, st.decimals + 2)).kind == viewer::LessonVerdict::Right);
          // Half a unit past the asked precision (beyond what the printed inputs can add) is not.
          CHECK(viewer::judge_lesson_answer(st, exact(st.answer + 2.5 * std::pow(10.0, -st.decimals))).kind ==
                viewer::LessonVerdict::Wrong);
          for (const auto& m : st.mistakes) {
            CAPTURE(m.name);
            CAPTURE(m.value);
            // At the asked precision.
            const viewer::LessonVerdict v = viewer::judge_lesson_answer(st, rounded(m.value, st.decimals));
            CHECK(v.kind == viewer::LessonVerdict::Wrong);
            CHECK(v.mistake == m.name);
            ++named;
            // Rounded to two decimals (17.92, 2.59, −25.43): matched within 0.5 % of the mistake's own size.
            if (std::fabs(m.value) >= 1) {
              CHECK(viewer::judge_lesson_answer(st, rounded(m.value, 2)).mistake == m.name);
              ++two_decimals;
            }
          }
        }
      }
  MESSAGE(named << " mistakes named at the asked precision, " << two_decimals << " of them also at two decimals");
  CHECK(named > 200);
  CHECK(two_decimals > 100);
}

TEST_CASE("only decimal numbers are answers: not 0xA, 0x1.4p3, inf or nan (issue 42)") {
  using viewer::parse_lesson_answer;
  for (const char* bad : {"0xA", "0x1.4p3", "0x10", "inf", "-inf", "Infinity", "nan", "NAN", "1,5", "1e", "e5", ".", "-", "+",
                          "1e999", "--1", "1_000", "1 000", "١٢", "0b101"}) {
    CAPTURE(bad);
    CHECK(!parse_lesson_answer(bad));
  }
  CHECK(*parse_lesson_answer("\xE2\x88\x92" "25.43") == -25.43);  // the typographic minus the lesson prints
  CHECK(*parse_lesson_answer("+3") == 3.0);
  CHECK(*parse_lesson_answer("1e-3") == 0.001);
  CHECK(*parse_lesson_answer(".5") == 0.5);
  CHECK(*parse_lesson_answer("5.") == 5.0);
  CHECK(*parse_lesson_answer("\t17.92 ") == 17.92);
  viewer::LessonStep ten;
  ten.applies = true, ten.integer = true, ten.answer = 10;
  CHECK(viewer::judge_lesson_answer(ten, "0xA").kind == viewer::LessonVerdict::NotAnswer);
  CHECK(viewer::judge_lesson_answer(ten, "0x1.4p3").kind == viewer::LessonVerdict::NotAnswer);
  CHECK(viewer::judge_lesson_answer(ten, "10").kind == viewer::LessonVerdict::Right);
}

/// The bundled 512-token model on 508 tokens of the default sentence repeated (log buckets beyond k
/// and m): made once for the suite (two test cases read it; a forward of 508 tokens is seconds under
/// the sanitizers).
const Run& long_run() {
  static const Run r = [] {
    const std::string dir = source("notebooks_data/models/deberta-tiny-512");
    REQUIRE(std::filesystem::exists(dir + "/spm.model"));
    Run run;
    run.model = load_model(dir);
    const auto tok = load_tokenizer_for_model(dir, run.model.config.vocab_size);
    std::string text = kDefaultText;
    while (tok->encode(text).ids.size() < 508) text += std::string(" ") + kDefaultText;
    const Encoding enc = tok->encode(text);
    Inputs in;
    in.input_ids.assign(enc.ids.begin(), enc.ids.begin() + 508);
    run.tokens.assign(enc.tokens.begin(), enc.tokens.begin() + 508);
    run.trace = forward(run.model, in, {}, TraceLevel::Full, true);
    if (run.trace.emd) run.emd = run.trace.emd;
    return run;
  }();
  return r;
}

TEST_CASE("step 4 and its working hold for a bucketed model at 508 tokens, beyond k and beyond m (issue 42)") {
  const Run& r = long_run();
  const int N = 508;
  const auto& ctx = r.trace.context;
  const int64_t k = ctx.attention.k;
  REQUIRE(r.model.config.log_buckets());
  REQUIRE(k == 32);
  const auto steps = viewer::build_lesson(r.input(1, 2));
  for (const auto& st : steps) {
    CAPTURE(st.title);
    CHECK(st.applies);
    CHECK(viewer::judge_lesson_answer(st, viewer::lesson_answer_text(st)).kind == viewer::LessonVerdict::Right);
  }
  int64_t widest = 0;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) widest = std::max<int64_t>(widest, std::llabs(ctx.rel_pos(i, j)));
  CHECK(widest >= k);  // at 508 tokens the buckets pass k − 1 (step 5: 42)

  const auto& s4 = step_titled(steps, "4.");
  CAPTURE(s4.text);
  CAPTURE(s4.explanation);
  CHECK(has(s4.question, "This model has k = 32."));
  CHECK(s4.show.distance_k == k);
  CHECK(s4.answer == static_cast<double>(relative_distance(s4.show.i, s4.show.j, k)));
  CHECK(s4.answer == 0);
  // The aside states what the buckets of this input do (issue 42: "the buckets stay inside (−k, k)"
  // was false here).
  CHECK(!has(s4.text, "stay inside"));
  CHECK(!has(s4.text, "stays inside"));
  CHECK(has(s4.text, "the largest, " + std::to_string(widest) + ", is k = 32 or more"));
  // The working's claim about the keys further right, checked against the run's own rows: the cell
  // reads row `here`, and only from key `from` on does every key read one row, `last`.
  const int i4 = s4.show.i, j4 = s4.show.j;
  const int64_t last = ctx.c2p_row(i4, N - 1), here = ctx.c2p_row(i4, j4);
  int from = N - 1;
  while (from > 0 && ctx.c2p_row(i4, from - 1) == last) --from;
  CHECK(from > j4);    // a bucketed model: key j4 does not share the far keys' row ...
  CHECK(here != last);
  CHECK(!has(s4.explanation, "reads the same row as every key further right"));  // ... so this would be false
  CHECK(has(s4.explanation, "reads row " + std::to_string(here) + " (step 6)"));
  CHECK(has(s4.explanation, "only from key " + std::to_string(from) + " on does every key read one row, row " + std::to_string(last)));
  for (int j = from; j < N; ++j) CHECK(ctx.c2p_row(i4, j) == last);
  CHECK(ctx.c2p_row(i4, from - 1) != last);

  // Step 5: the bucket of the longest distance passes k − 1, and its working says the clamp takes it.
  const auto& s5 = step_titled(steps, "5.");
  CHECK(s5.answer == static_cast<double>(ctx.rel_pos(N - 1, 0)));
  CHECK(std::fabs(s5.answer) >= k);
  CHECK(has(s5.explanation, "sends it to the table's end, row " + std::to_string(ctx.c2p_row(N - 1, 0))));

  // The bundled model on its 33-token sentence: no bucket reaches k, and step 4 says so, truly.
  const Run short_run = run_text(source("notebooks_data/models/deberta-tiny"), kDefaultText);
  int64_t short_widest = 0;
  const int Ns = static_cast<int>(short_run.tokens.size());
  for (int i = 0; i < Ns; ++i)
    for (int j = 0; j < Ns; ++j) short_widest = std::max<int64_t>(short_widest, std::llabs(short_run.trace.context.rel_pos(i, j)));
  REQUIRE(short_widest < short_run.trace.context.attention.k);
  const auto short_steps = viewer::build_lesson(short_run.input(1, 2));
  CHECK(has(step_titled(short_steps, "4.").text, "every bucket stays inside (−k, k) (the largest is " + std::to_string(short_widest) +
                                                     " < k = " + std::to_string(short_run.trace.context.attention.k) + ")"));

  // A v1 model (no buckets) long enough for its own k: there the far keys do share row 0 with key j.
  const Run v1 = run_ids(source("notebooks_data/golden/v1_basic"), 20);  // k = 4
  const auto v1_steps = viewer::build_lesson(v1.input(0, 0));
  const auto& v4 = step_titled(v1_steps, "4.");
  CHECK(has(v4.question, "This model has k = 4."));
  CHECK(has(v4.explanation, "reads the same row as every key further right"));
  for (int j = v4.show.j; j < 20; ++j) CHECK(v1.trace.context.c2p_row(0, j) == 0);
}

TEST_CASE("token links: a term's signed part of the score; the panel's layout; the pipeline's sizes (issue 42)") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  const Run r = run_text(dir, kDefaultText);
  const int layer = 1, head = 2;
  const auto& a = r.trace.layers[layer].attention;
  const int N = static_cast<int>(r.tokens.size());
  // Signed: each link is the term / its largest |value|, negative terms stay negative (issue 42: the
  // "share" mode gave a negative term a positive share).
  const Matrix& c2p = a.terms[Term::c2p][head];
  const double top = c2p.cwiseAbs().maxCoeff();
  const viewer::Diagram d = viewer::signed_links_diagram(r.tokens, c2p, "c2p", 0.05);
  CHECK(d.signed_links);
  size_t expected = 0, negative = 0;
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) expected += std::fabs(c2p(i, j)) >= 0.05 * top;
  CHECK(d.links.size() == expected);
  for (const auto& l : d.links) {
    CHECK(l.weight == c2p(l.from, l.to) / top);
    negative += l.weight < 0;
  }
  CHECK(negative > 0);
  CHECK_THROWS_AS(viewer::signed_links_diagram({"a"}, c2p, "c2p"), std::invalid_argument);

  // Weight links as before.
  const viewer::Diagram links = viewer::links_diagram(r.tokens, a.probs[head], "links", 0.05);
  CHECK(links.left.size() == static_cast<size_t>(N));
  CHECK(!links.signed_links);
  for (const auto& l : links.links) CHECK(a.probs[head](l.from, l.to) >= 0.05);

  // The panel's layout: the lines use the panel's width; labels ≥ 11 px at 60 tokens; beyond what
  // fits, the drawing scrolls (issue 42: a third of the panel, ~7 px labels).
  const float W = 1000, Hgt = 700, ui = 15, label_w = 120;
  for (int n : {10, 60, 200, 500}) {
    CAPTURE(n);
    const viewer::LinksLayout l = viewer::links_layout(n, W, Hgt, ui, label_w);
    CHECK(l.font_px >= 11);
    CHECK(l.font_px <= ui);
    CHECK(l.row_px >= l.font_px);  // rows never overlap their labels
    CHECK(l.right_px - l.left_px >= W - 2 * label_w - 20);
    CHECK(l.scrolls == (l.height_px > Hgt));
    CHECK(std::fabs(l.height_px - (l.top_px + n * l.row_px) - 2.5f * l.font_px) < 1e-3f);
  }
  CHECK(!viewer::links_layout(10, W, Hgt, ui, label_w).scrolls);
  CHECK(viewer::links_layout(10, W, Hgt, ui, label_w).font_px == ui);
  CHECK(viewer::links_layout(500, W, Hgt, ui, label_w).scrolls);

  const viewer::Diagram p = viewer::pipeline_diagram(r.model.config, r.trace.context.attention, N, true, true);
  std::string all;
  for (const auto& b : p.boxes) all += b.title + " | " + b.detail + "\n";
  CAPTURE(all);
  CHECK(all.find("× L = " + std::to_string(r.model.config.num_hidden_layers)) != std::string::npos);
  CHECK(all.find("[4 heads × " + std::to_string(N) + " × " + std::to_string(N) + "]") != std::string::npos);
  CHECK(all.find("2k = " + std::to_string(2 * r.trace.context.attention.k)) != std::string::npos);
  CHECK(all.find("I_0 = H + P") != std::string::npos);
  CHECK(all.find("softmax(Ã / √(3d))") != std::string::npos);
  CHECK(all.find("released code") != std::string::npos);  // the EMD's arrangement is marked as the code's
  const viewer::Diagram q = viewer::pipeline_diagram(r.model.config, r.trace.context.attention, N, false, true);
  std::string none;
  for (const auto& b : q.boxes) none += b.title;
  CHECK(none.find("Enhanced Mask Decoder") == std::string::npos);
}

// Issue 42, items 5 and 6: the paper's passage beside every step and Equation-tab row; the "what if"
// control's row recomputed through the core.

namespace {

/// The models of items 5 and 6: a three-term bucketed model with a tokenizer, the pencil model, a
/// two-term model, and two c2c-only models (one without relative attention at factor 1, one v1 whose
/// factor counts pos_att_type).
struct QuoteCase {
  const char* dir;
  const char* text;  // nullptr: run on ids (no tokenizer)
  int ids;           // with text == nullptr: the number of ids
};
const QuoteCase kQuoteCases[] = {
    {"notebooks_data/models/deberta-tiny", viewer::kDefaultText, 0},
    {"notebooks_data/models/deberta-toy", "cat sat", 0},
    {"notebooks_data/golden/v1_basic", nullptr, 12},
    {"notebooks_data/golden/v1_c2p_only", nullptr, 12},
    {"notebooks_data/models/zoo/deberta-tiny-c2c-abs", "And God said, Let there be light: and there was [MASK].", 0},
    {"notebooks_data/golden_extra/v1_norel", nullptr, 12},
};

Run run_case(const QuoteCase& q) { return q.text ? run_text(source(q.dir), q.text) : run_ids(source(q.dir), q.ids); }

/// Whether `quotes` cite what `title` names: each "eq. N" of the title is some quote's "(N)", and
/// each "§x.y" or "appendix A.n" of the title is some quote's section.
void check_title_cited(const std::string& title, const std::vector<viewer::PaperQuote>& quotes) {
  const auto cited = [&](const std::string& what, bool equation) {
    for (const auto& q : quotes) {
      std::string where = equation ? q.equation : q.section;
      for (char& ch : where) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (has(where, what)) return true;
    }
    return false;
  };
  for (size_t p = title.find("eq. "); p != std::string::npos; p = title.find("eq. ", p + 1)) {
    const std::string n = title.substr(p + 4, 1);
    CAPTURE(n);
    CHECK(cited("(" + n + ")", true));
  }
  for (const char* sec : {"§3.1", "§3.2", "§5.2.1", "a.8", "a.9"}) {
    std::string lower = title;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!has(lower, sec)) continue;
    CAPTURE(sec);
    // §3.2 (the EMD's place) is taught in the step's text; its quotes are the appendix's details.
    if (std::string(sec) != "§3.2") CHECK(cited(sec, false));
  }
}

}  // namespace

TEST_CASE("every entry of the paper's table has a section and words; citations read as printed (issue 42, item 5)") {
  for (int q = 0; q < static_cast<int>(viewer::Quote::Count); ++q) {
    const viewer::PaperQuote& p = viewer::paper_quote(static_cast<viewer::Quote>(q));
    CAPTURE(q);
    CHECK(std::string(p.section).size() > 0);
    CHECK(std::string(p.text).size() > 10);
    CHECK((has(p.section, "§") || has(p.section, "Appendix A.")));
    // An equation is cited as v6 prints it, "(N)", never as "eq. N" without brackets.
    if (has(p.equation, "eq.")) CHECK(has(p.equation, "eq. ("));
  }
  CHECK(viewer::paper_quote(viewer::Quote::Scale).cite() == "§3.1, after eq. (4)");
  CHECK(viewer::paper_quote(viewer::Quote::K512).cite() == "§3.1.1");
  CHECK(viewer::paper_quote(viewer::Quote::NoBuckets).paraphrase);  // the buckets are not in the paper
  CHECK(!viewer::paper_quote(viewer::Quote::P2CIndex).paraphrase);
}

TEST_CASE("every lesson step and every Equation-tab row shows the paper's passage: 3-term, 2-term, c2c-only (issue 42, item 5)") {
  int skipped_somewhere = 0, rows_seen = 0;
  std::set<std::string> labels;
  for (const QuoteCase& k : kQuoteCases) {
    CAPTURE(k.dir);
    const Run r = run_case(k);
    const int N = static_cast<int>(r.trace.inputs.size());
    const auto steps = viewer::build_lesson(r.input(0, 0));
    REQUIRE(steps.size() == 15);
    for (const auto& s : steps) {
      CAPTURE(s.title);
      if (!s.applies) {
        ++skipped_somewhere;
        continue;  // a skipped step needs none (it has them anyway)
      }
      REQUIRE(!s.quotes.empty());
      for (const auto& q : s.quotes) {
        CHECK(std::string(q.section).size() > 0);
        CHECK(std::string(q.text).size() > 10);
      }
      check_title_cited(s.title, s.quotes);
    }
    // The Equation tab's rows for a few cells (its walk-through is the core's explanation_steps),
    // and with p2p switched on where the model has both projections (the "eq. 2 (p2p)" row).
    std::vector<ForwardTrace> traces;
    traces.push_back(r.trace);
    if (r.trace.context.attention.terms[Term::c2p] && r.trace.context.attention.terms[Term::p2c]) {
      Ablation p2p;
      p2p.terms[Term::p2p] = true;
      traces.push_back(forward(r.model, r.trace.inputs, p2p, TraceLevel::Full, false));
    }
    for (const ForwardTrace& tr : traces)
      for (const auto& [i, j] : {std::pair{0, 0}, {N - 1, 0}, {N / 2, N - 1}}) {
        const CellExplanation e = explain_cell(r.model, tr, 0, 0, i, j);
        for (const ExplainStep& st : explanation_steps(e)) {
          CAPTURE(st.equation);
          CAPTURE(st.formula);
          const viewer::PaperQuote* q = viewer::quote_for_explain_step(st);
          REQUIRE(q != nullptr);
          CHECK(std::string(q->section).size() > 0);
          CHECK(std::string(q->text).size() > 10);
          labels.insert(st.equation);
          ++rows_seen;
          // Ordinary attention (c2c alone at 1/√d) cites §3.1's display for its scale and softmax;
          // a model with position terms the scale sentence and eq. 4.
          const bool plain = !(e.active[Term::c2p] || e.active[Term::p2c] || e.active[Term::p2p]) && e.scale_factor == 1;
          if (st.equation == "scale")
            CHECK(q == &viewer::paper_quote(plain ? viewer::Quote::StandardAttention : viewer::Quote::Scale));
          if (st.equation == "softmax")
            CHECK(q == &viewer::paper_quote(plain ? viewer::Quote::StandardAttention : viewer::Quote::Eq4Softmax));
        }
      }
  }
  CHECK(skipped_somewhere > 0);  // the c2c-only models skip steps (no δ, no c2p, no p2c)
  CHECK(rows_seen > 0);
  // Every kind of row the walk-through makes was seen (so each was given its passage above).
  for (const char* l : {"eq. 3", "eq. 4 (p2c index)", "scale", "§3.1 (standard attention)", "eq. 4 (c2c)", "eq. 4 (c2p)",
                        "eq. 4 (p2c)", "eq. 2 (p2p)", "§3.1 (score)", "eq. 4 (sum)", "softmax"})
    CHECK_MESSAGE(labels.count(l) == 1, l);
  // A label the table does not know has no passage (so a new core row fails the loop above).
  CHECK(viewer::quote_for_explain_step(ExplainStep{"eq. 9 (new)", "x", "y"}) == nullptr);
}

TEST_CASE("what if: the redrawn row is the core's forward under the change, and moves only when it should (issue 42, item 6)") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  const Run r = run_text(dir, kDefaultText);
  const int layer = 1, head = 2;
  const auto steps = viewer::build_lesson(r.input(layer, head));
  const auto& att = r.trace.context.attention;
  std::map<viewer::WhatIfKnob, int> knobs;
  for (const auto& s : steps) {
    CAPTURE(s.title);
    const viewer::LessonWhatIf& w = s.what_if;
    if (w.knob == viewer::WhatIfKnob::None) continue;
    ++knobs[w.knob];
    CHECK(w.layer == s.show.layer);
    CHECK(w.head == s.show.head);
    CHECK(w.query == s.show.i);
    // The reference: the core's forward with the switch set here, by hand, not through what_if_ablation.
    const auto reference = [&](const viewer::WhatIfValue& v) {
      Ablation a;
      if (w.knob == viewer::WhatIfKnob::Span) a.max_relative_positions = v.window;
      if (w.knob == viewer::WhatIfKnob::Scale) a.scale_mode = ScaleMode::Fixed, a.scale_factor = v.scale_factor;
      if (w.knob == viewer::WhatIfKnob::P2CIndex) a.p2c_index = v.p2c_index;
      const ForwardTrace t = forward(r.model, r.trace.inputs, a, TraceLevel::Full, false);
      return Eigen::VectorXd(t.layers[static_cast<size_t>(w.layer)].attention.probs[static_cast<size_t>(w.head)].row(w.query).transpose());
    };
    const Eigen::VectorXd run_row = r.trace.layers[static_cast<size_t>(layer)].attention.probs[head].row(w.query).transpose();
    const auto as_vector = [](const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size())); };
    // The default change: another K, f or index; the row is the core's and it moves.
    const viewer::WhatIfValue changed = viewer::what_if_default(w);
    const viewer::WhatIfRow row = viewer::what_if_row(r.model, r.trace, w, changed);
    const Eigen::VectorXd want = reference(changed);
    REQUIRE(static_cast<Eigen::Index>(row.changed.size()) == want.size());
    CHECK((as_vector(row.changed) - want).cwiseAbs().maxCoeff() <= 1e-12);
    CHECK((as_vector(row.original) - run_row).cwiseAbs().maxCoeff() == 0.0);
    CHECK(row.max_change > 1e-6);
    CHECK(std::fabs(row.max_change - (as_vector(row.changed) - run_row).cwiseAbs().maxCoeff()) <= 1e-15);
    CHECK(std::fabs(as_vector(row.changed).sum() - 1.0) < 1e-12);
    // The run's own setting: the same row (nothing to redraw).
    viewer::WhatIfValue same;
    same.window = att.window, same.scale_factor = att.scale_factor, same.p2c_index = att.p2c_index;
    const viewer::WhatIfRow unchanged = viewer::what_if_row(r.model, r.trace, w, same);
    CHECK((as_vector(unchanged.changed) - run_row).cwiseAbs().maxCoeff() <= 1e-12);
    CHECK(unchanged.max_change <= 1e-12);
    if (w.knob == viewer::WhatIfKnob::Span) {
      CHECK(changed.window < att.k);
      // K = 1 keeps only rows k − 1 and k: every key but the query's neighbours reads one of two rows.
      viewer::WhatIfValue one;
      one.window = 1;
      CHECK((as_vector(viewer::what_if_row(r.model, r.trace, w, one).changed) - reference(one)).cwiseAbs().maxCoeff() <= 1e-12);
    }
    if (w.knob == viewer::WhatIfKnob::Scale) CHECK(changed.scale_factor != att.scale_factor);
    if (w.knob == viewer::WhatIfKnob::P2CIndex) CHECK(changed.p2c_index != att.p2c_index);
  }
  // Steps 3, 4, 6 depend on k; 7, 9, 10 on the scale; 8 on the p2c index.
  CHECK(knobs[viewer::WhatIfKnob::Span] == 3);
  CHECK(knobs[viewer::WhatIfKnob::Scale] == 3);
  CHECK(knobs[viewer::WhatIfKnob::P2CIndex] == 1);
  CHECK(step_titled(steps, "3.").what_if.knob == viewer::WhatIfKnob::Span);
  CHECK(step_titled(steps, "8.").what_if.knob == viewer::WhatIfKnob::P2CIndex);
  CHECK(step_titled(steps, "9.").what_if.knob == viewer::WhatIfKnob::Scale);

  // On an ablated run the change is made on top of the run's ablation: the paper's index, switched
  // back to the code's by the control, is the model as trained.
  Ablation paper;
  paper.p2c_index = P2CIndex::Paper;
  Run ablated = run_text(dir, kDefaultText);
  ablated.trace = forward(ablated.model, ablated.trace.inputs, paper, TraceLevel::Full, true);
  const auto& s8 = step_titled(viewer::build_lesson(ablated.input(layer, head)), "8.");
  REQUIRE(s8.what_if.knob == viewer::WhatIfKnob::P2CIndex);
  CHECK(s8.what_if.p2c_index == P2CIndex::Paper);
  const viewer::WhatIfValue back = viewer::what_if_default(s8.what_if);
  CHECK(back.p2c_index == P2CIndex::Code);
  const viewer::WhatIfRow row = viewer::what_if_row(ablated.model, ablated.trace, s8.what_if, back);
  const Eigen::VectorXd trained = r.trace.layers[static_cast<size_t>(layer)].attention.probs[head].row(s8.what_if.query).transpose();
  CHECK((Eigen::Map<const Eigen::VectorXd>(row.changed.data(), static_cast<Eigen::Index>(row.changed.size())) - trained)
            .cwiseAbs().maxCoeff() <= 1e-12);
  CHECK(row.max_change > 1e-6);
}

TEST_CASE("what if: where the number depends on no switch there is no control; bad values are refused (issue 42, item 6)") {
  // c2c only without relative attention: no span, no p2c index; the scale still applies.
  const Run c = run_text(source("notebooks_data/models/zoo/deberta-tiny-c2c-abs"), "And God said, Let there be light: and there was [MASK].");
  for (const auto& s : viewer::build_lesson(c.input(0, 0))) {
    CAPTURE(s.title);
    CHECK(s.what_if.knob != viewer::WhatIfKnob::Span);
    CHECK(s.what_if.knob != viewer::WhatIfKnob::P2CIndex);
    if (!s.applies) CHECK(s.what_if.knob == viewer::WhatIfKnob::None);
  }
  CHECK(step_titled(viewer::build_lesson(c.input(0, 0)), "9.").what_if.knob == viewer::WhatIfKnob::Scale);
  // A model without p2c: step 8 has no control.
  const Run np = run_text(source("notebooks_data/models/zoo/deberta-tiny-no-p2c"), kDefaultText);
  CHECK(step_titled(viewer::build_lesson(np.input(0, 0)), "8.").what_if.knob == viewer::WhatIfKnob::None);
  // A masked head: its row is all 0 whatever the switch, so no control.
  Run masked = run_text(source("notebooks_data/models/deberta-tiny"), kDefaultText);
  Ablation mask;
  mask.head_mask = {{1, 2}};
  masked.trace = forward(masked.model, masked.trace.inputs, mask, TraceLevel::Full, true);
  for (const auto& s : viewer::build_lesson(masked.input(1, 2)))
    if (s.show.layer == 1) CHECK(s.what_if.knob == viewer::WhatIfKnob::None);
  // Values the core refuses: K beyond k, f ≤ 0; a step without a control.
  const Run r = run_text(source("notebooks_data/models/deberta-tiny"), kDefaultText);
  const auto& s3 = step_titled(viewer::build_lesson(r.input(0, 0)), "3.");
  viewer::WhatIfValue v = viewer::what_if_default(s3.what_if);
  v.window = s3.what_if.k + 1;
  CHECK_THROWS(viewer::what_if_row(r.model, r.trace, s3.what_if, v));
  viewer::LessonWhatIf none;
  CHECK_THROWS_AS(viewer::what_if_row(r.model, r.trace, none, v), std::invalid_argument);
  const auto& s9 = step_titled(viewer::build_lesson(r.input(0, 0)), "9.");
  v = viewer::what_if_default(s9.what_if);
  v.scale_factor = 0;
  CHECK_THROWS(viewer::what_if_row(r.model, r.trace, s9.what_if, v));
}

namespace {

/// A 508-token run of the bucketed model (log buckets, k = 32): every bucket up to the table's ends.

/// The terms of a run as a caption lists them: "c2c + c2p".
std::string term_list(const ResolvedAttention& att) {
  std::string out;
  for (Term t : kAllTerms)
    if (att.terms[t]) out += std::string(out.empty() ? "" : " + ") + term_name(t);
  return out;
}

}  // namespace

TEST_CASE("every sentence holds on every kind of model: 3-term, 2-term, c2c-only, c2c + absolute, bucketed at 508 (issue 58)") {
  struct Case {
    const char* name;
    std::shared_ptr<const Run> run;
  };
  const auto own = [](Run r) { return std::make_shared<const Run>(std::move(r)); };
  const std::string mask_text = "And God said, Let there be light: and there was [MASK].";
  std::vector<Case> cases;
  cases.push_back({"3-term (v1_basic)", own(run_ids(source("notebooks_data/golden/v1_basic"), 12))});
  cases.push_back({"3-term (bundled)", own(run_text(source("notebooks_data/models/deberta-tiny"), kDefaultText))});
  cases.push_back({"2-term (v1_c2p_only)", own(run_ids(source("notebooks_data/golden/v1_c2p_only"), 12))});
  cases.push_back({"c2c-only (v1_norel)", own(run_ids(source("notebooks_data/golden_extra/v1_norel"), 12))});
  cases.push_back({"c2c + absolute (zoo c2c-abs)", own(run_text(source("notebooks_data/models/zoo/deberta-tiny-c2c-abs"), mask_text))});
  cases.push_back({"3-term + absolute (zoo no-emd-abs)", own(run_text(source("notebooks_data/models/zoo/deberta-tiny-no-emd-abs"), kDefaultText))});
  cases.push_back({"bucketed at 508 tokens", std::shared_ptr<const Run>(&long_run(), [](const Run*) {})});
  for (const Case& k : cases) {
    CAPTURE(k.name);
    const Run& r = *k.run;
    const ModelConfig& c = r.model.config;
    const ResolvedAttention& att = r.trace.context.attention;
    const bool pos = att.terms[Term::c2p] || att.terms[Term::p2c];
    const bool can_c2p = has_projections_for(r.model, Term::c2p);
    const auto steps = viewer::build_lesson(r.input(0, 0));
    // Step 2: the Ablations panel is offered only where it can switch a position term on.
    const auto& s2 = step_titled(steps, "2.");
    CHECK(s2.applies == pos);
    if (!pos) {
      CHECK(!has(s2.skip_reason, "Ablations"));
      CHECK(has(s2.skip_reason, "this model has no position term (c2c only"));
    }
    // Step 3: "not as absolute indices" only on a model that has no absolute positions at its input.
    const auto& s3 = step_titled(steps, "3.");
    CAPTURE(s3.text);
    if (c.position_biased_input) {
      CHECK(!has(s3.text, "Positions enter as distances, not as absolute indices."));
      CHECK(has(s3.text, "absolute position embeddings"));
    } else {
      CHECK(s3.text.rfind("Positions enter as distances, not as absolute indices.", 0) == 0);
    }
    // Step 4: on a bucketed model the rows change in steps, not key by key.
    const auto& s4 = step_titled(steps, "4.");
    if (c.log_buckets()) CHECK(!has(s4.explanation, "keep changing to the right"));
    // Step 9: the √3 argument is ours, stated with its condition, not presented as the paper's.
    const auto& s9 = step_titled(steps, "9.");
    CHECK(!has(s9.text, "is about √3 times larger"));
    CHECK(has(s9.text, "A reading of ours, not the paper's"));
    CHECK(has(s9.text, "standard deviation"));
    // Step 10 reconciles the paper's "attention score" (Ã) with the lesson's score (Ã/root).
    const auto& s10 = step_titled(steps, "10.");
    CHECK(has(s10.text, "The paper calls Ã_ij itself \"the attention score\""));
    CHECK(has(s10.text, "this lesson calls Ã/" + deberta::scale_root(att.scale_factor) + " the score"));
    // Step 12: "Reset the ablation" only where the model has c2p and an ablation took it away.
    const auto& s12 = step_titled(steps, "12.");
    CHECK(s12.applies == static_cast<bool>(att.terms[Term::c2p]));
    if (!s12.applies) {
      CHECK(has(s12.skip_reason, can_c2p ? "Reset the ablation" : "this model has no c2p term"));
      if (!can_c2p) CHECK(!has(s12.skip_reason, "Reset the ablation"));
    }
    // Captions from the model's own terms.
    const std::string terms = term_list(att);
    const std::string root = deberta::scale_root(att.scale_factor);
    CHECK(viewer::quantity_label(viewer::Quantity::Logits, att.scale_factor, false, &att.terms) ==
          "score Ã/" + root + " = s·(" + terms + "), s = 1/" + root);
    if (!att.terms[Term::c2p]) CHECK(!has(viewer::quantity_label(viewer::Quantity::Logits, att.scale_factor, false, &att.terms), "c2p"));
    CHECK(!has(viewer::quantity_label(viewer::Quantity::Logits, att.scale_factor), "c2p"));  // the model-free label lists no term
    // The CLI's walk-through: the sum names the model's terms, the scaled parts are written s · term.
    const deberta::CellExplanation e = deberta::explain_cell(r.model, r.trace, 0, 0, 5, 2);
    std::string walk;
    for (const auto& st : deberta::explanation_steps(e)) walk += "[" + st.equation + "] " + st.formula + " " + st.numbers + "\n";
    CAPTURE(walk);
    CHECK(!has(walk, "× s"));
    CHECK(!has(walk, "= s · Q"));
    if (pos || att.scale_factor != 1) CHECK(has(walk, "Ã_ij = " + terms + " (unscaled"));
    for (Term t : kAllTerms)
      if (!att.terms[t]) CHECK(!has(walk, std::string(term_name(t)) + " ="));
    // The pipeline's p2c box names the index it draws.
    if (c.relative_attention) {
      const viewer::Diagram p = viewer::pipeline_diagram(c, att, r.trace.inputs.size(), r.emd.has_value(), true);
      for (const auto& b : p.boxes)
        if (has(b.title, "p2c  K_c[j] Q_r[δ(i,j)]")) CHECK(has(b.detail, "the code's index; the paper: δ(j,i)"));
    }
  }
  // On a 3-term model whose c2p an ablation switched off, step 12 does say to reset it; step 2 on a
  // run without position terms offers the Ablations panel.
  Run off = run_text(source("notebooks_data/models/deberta-tiny"), kDefaultText);
  Ablation no_pos;
  no_pos.terms[Term::c2p] = false, no_pos.terms[Term::p2c] = false;
  off.trace = forward(off.model, off.trace.inputs, no_pos, TraceLevel::Full, true);
  const auto off_steps = viewer::build_lesson(off.input(0, 0));
  CHECK(has(step_titled(off_steps, "12.").skip_reason, "Reset the ablation"));
  CHECK(has(step_titled(off_steps, "2.").skip_reason, "Ablations panel"));
  // The what-if's errors carry no prefix of their own (the panel adds "what if: ").
  viewer::LessonWhatIf none;
  try {
    viewer::what_if_row(off.model, off.trace, none, {});
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).rfind("what if", 0) != 0);
  }
}

TEST_CASE("answers as students write them: 2 decimals, 2 significant figures, too few decimals, full-width digits (issue 58)") {
  using viewer::judge_lesson_answer;
  using viewer::parse_lesson_answer;
  // The examples of issue 58: mistakes below 1 rounded to 2 decimals, above 1 to 2 significant figures.
  viewer::LessonStep st;
  st.applies = true, st.answer = 1.4932, st.decimals = 4, st.tolerance = 0.00005;
  st.mistakes = {{0.1372, "a"}, {0.0083, "b"}, {-0.0412, "c"}, {0.0779, "d"}, {2.5931, "e"}, {31.74, "f"}, {-25.43, "g"}};
  const std::pair<const char*, const char*> named[] = {{"0.14", "a"}, {"0.01", "b"}, {"-0.04", "c"}, {"0.08", "d"}, {"2.6", "e"},
                                                       {"32", "f"},   {"-25", "g"},  {"0.0083", "b"}, {"2.59", "e"}, {"31.7", "f"},
                                                       {"−25.4", "g"}, {"0.137", "a"}};
  for (const auto& typed_name : named) {
    const char* typed = typed_name.first;  // (a plain variable: C++17 lambdas, CAPTURE's, cannot capture a binding)
    const char* name = typed_name.second;
    CAPTURE(typed);
    const viewer::LessonVerdict v = judge_lesson_answer(st, typed);
    CHECK(v.kind == viewer::LessonVerdict::Wrong);
    CHECK(v.mistake == name);
    CHECK(v.give_decimals == 0);
  }
  // Too coarse to name anything: one significant figure of a number above 1, "0" for a small one.
  for (const char* typed : {"3", "30", "0", "-20"}) {
    CAPTURE(typed);
    CHECK(judge_lesson_answer(st, typed).mistake.empty());
  }
  // The right value with fewer decimals than asked: "give 4 decimal places".
  for (const char* typed : {"1.5", "1.49", "1.493"}) {
    CAPTURE(typed);
    const viewer::LessonVerdict v = judge_lesson_answer(st, typed);
    CHECK(v.kind == viewer::LessonVerdict::Wrong);
    CHECK(v.give_decimals == 4);
    CHECK(v.text() == "wrong: give 4 decimals");
  }
  CHECK(judge_lesson_answer(st, "1.4932").kind == viewer::LessonVerdict::Right);
  CHECK(judge_lesson_answer(st, "1.4").give_decimals == 0);  // not the answer rounded
  CHECK(judge_lesson_answer(st, "1").give_decimals == 0);    // too coarse to tell
  // Full-width digits, sign and point (as CJK input methods type them) and the ideographic space.
  CHECK(*parse_lesson_answer("\xEF\xBC\x91\xEF\xBC\x91") == 11.0);                                     // １１
  CHECK(*parse_lesson_answer("\xEF\xBC\x8D\xEF\xBC\x90\xEF\xBC\x8E\xEF\xBC\x92\xEF\xBC\x95") == -0.25);  // －０．２５
  CHECK(*parse_lesson_answer("\xE3\x80\x80" "0.5\xE3\x80\x80") == 0.5);
  CHECK(!parse_lesson_answer("\xEF\xBC\x91\xEF\xBC\x8E\xEF\xBC\x8E\xEF\xBC\x92"));  // １．．２
  viewer::LessonStep eleven;
  eleven.applies = true, eleven.integer = true, eleven.answer = 11;
  CHECK(judge_lesson_answer(eleven, "\xEF\xBC\x91\xEF\xBC\x91").kind == viewer::LessonVerdict::Right);
  CHECK(judge_lesson_answer(st, "\xEF\xBC\x91\xEF\xBC\x8E\xEF\xBC\x95").give_decimals == 4);  // １．５
  // The decimals a text carries.
  int d = -1;
  REQUIRE(parse_lesson_answer("2.5e-2", &d));
  CHECK(d == 3);
  REQUIRE(parse_lesson_answer("32", &d));
  CHECK(d == 0);
  // The language's decimal sign: Italian writes a comma (also the full-width one); the others a point.
  REQUIRE(viewer::i18n::set_language("it"));
  CHECK(judge_lesson_answer(st, "0,14").mistake == "a");
  CHECK(judge_lesson_answer(st, "1,5").give_decimals == 4);
  CHECK(*parse_lesson_answer("0\xEF\xBC\x8C" "5") == 0.5);  // ０，５ with a full-width comma
  for (const char* lang : {"ko", "ja", "zh_CN"}) {
    CAPTURE(lang);
    REQUIRE(viewer::i18n::set_language(lang));
    CHECK(*parse_lesson_answer("\xEF\xBC\x90\xEF\xBC\x8E\xEF\xBC\x95") == 0.5);  // ０．５
    CHECK(judge_lesson_answer(st, "0.14").mistake == "a");
  }
  REQUIRE(viewer::i18n::set_language("en"));
}

TEST_CASE("what if closes the loop: the step's own number and the [MASK]'s top 3 follow the control (issue 58, item 4)") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  const Run r = run_text(dir, kDefaultText);
  const int layer = 1, head = 2;
  const auto steps = viewer::build_lesson(r.input(layer, head));
  const int mask = static_cast<int>(std::find(r.tokens.begin(), r.tokens.end(), "[MASK]") - r.tokens.begin());
  REQUIRE(mask < static_cast<int>(r.tokens.size()));
  std::set<viewer::WhatIfNumber> seen;
  for (const auto& s : steps) {
    const viewer::LessonWhatIf& w = s.what_if;
    if (w.knob == viewer::WhatIfKnob::None) continue;
    CAPTURE(s.title);
    CHECK(w.mask == mask);
    seen.insert(w.number);
    const viewer::WhatIfValue v = viewer::what_if_default(w);
    const viewer::WhatIfRow row = viewer::what_if_row(r.model, r.trace, w, v, &r.trace);
    // The reference: the core's forward under the same switch, set by hand, with the decoder.
    Ablation a;
    if (w.knob == viewer::WhatIfKnob::Span) a.max_relative_positions = v.window;
    if (w.knob == viewer::WhatIfKnob::Scale) a.scale_mode = ScaleMode::Fixed, a.scale_factor = v.scale_factor;
    if (w.knob == viewer::WhatIfKnob::P2CIndex) a.p2c_index = v.p2c_index;
    const ForwardTrace t = forward(r.model, r.trace.inputs, a, TraceLevel::Full, true);
    const auto number = [&](const ForwardTrace& x) {
      const auto& at = x.layers[static_cast<size_t>(w.layer)].attention;
      switch (w.number) {
        case viewer::WhatIfNumber::C2PRow: return static_cast<double>(x.context.c2p_row(w.query, w.key));
        case viewer::WhatIfNumber::P2CRow: return static_cast<double>(x.context.p2c_row(w.query, w.key));
        case viewer::WhatIfNumber::ScaledC2P: return at.terms[Term::c2p][static_cast<size_t>(w.head)](w.query, w.key);
        case viewer::WhatIfNumber::Scale: return x.context.attention.scale;
        case viewer::WhatIfNumber::ScoreGap:
          return at.logits[static_cast<size_t>(w.head)](w.query, w.key) - at.logits[static_cast<size_t>(w.head)](w.query, w.key2);
        case viewer::WhatIfNumber::None: break;
      }
      return static_cast<double>(NAN);
    };
    CHECK(w.number != viewer::WhatIfNumber::None);
    CHECK(row.number_before == number(r.trace));
    CHECK(std::fabs(row.number_after - number(t)) <= 1e-12 * std::max(1.0, std::fabs(number(t))));
    // The step's own number before the change is the step's answer (steps 6, 7, 8, 9, 10 ask exactly it).
    if (s.title.rfind("6.", 0) == 0 || s.title.rfind("7.", 0) == 0 || s.title.rfind("8.", 0) == 0 ||
        s.title.rfind("9.", 0) == 0 || s.title.rfind("10.", 0) == 0)
      CHECK(std::fabs(row.number_before - s.answer) <= 1e-12);
    // The [MASK]'s top 3 before and after, as the core predicts them from each decoder output.
    const auto before = predict_from_states(r.model, r.trace.decoder_output(), {mask}, 3).front().top;
    const auto after = predict_from_states(r.model, t.decoder_output(), {mask}, 3).front().top;
    REQUIRE(row.top_before.size() == 3);
    REQUIRE(row.top_after.size() == 3);
    for (size_t q = 0; q < 3; ++q) {
      CHECK(row.top_before[q].id == before[q].id);
      CHECK(row.top_before[q].probability == before[q].probability);
      CHECK(row.top_after[q].id == after[q].id);
      CHECK(std::fabs(row.top_after[q].probability - after[q].probability) <= 1e-12);
    }
    CHECK(row.predict_note.empty());
    CHECK(!viewer::what_if_number_label(w).empty());
  }
  CHECK(seen.size() == 5);  // C2PRow, P2CRow, ScaledC2P, Scale, ScoreGap
  // The scale step: the number under f = 1 is 1/√d; the prediction moves.
  const auto& s9 = step_titled(steps, "9.");
  viewer::WhatIfValue one;
  one.scale_factor = 1;
  const viewer::WhatIfRow r9 = viewer::what_if_row(r.model, r.trace, s9.what_if, one, &r.trace);
  CHECK(std::fabs(r9.number_after - 1 / std::sqrt(static_cast<double>(r.model.config.d_head()))) <= 1e-15);
  CHECK(r9.top_after[0].probability != r9.top_before[0].probability);
  // --lesson-what-if's values.
  std::string error;
  CHECK(viewer::parse_what_if(s9.what_if, "f=1.5", &error)->scale_factor == 1.5);
  CHECK(!viewer::parse_what_if(s9.what_if, "f=0", &error));
  CHECK(!viewer::parse_what_if(s9.what_if, "K=2", &error));
  CHECK(has(error, "this step's control is f"));
  const auto& s3 = step_titled(steps, "3.");
  CHECK(viewer::parse_what_if(s3.what_if, "K=2", &error)->window == 2);
  CHECK(!viewer::parse_what_if(s3.what_if, "K=" + std::to_string(s3.what_if.k + 1), &error));
  const auto& s8 = step_titled(steps, "8.");
  CHECK(viewer::parse_what_if(s8.what_if, "p2c=paper", &error)->p2c_index == P2CIndex::Paper);
  CHECK(!viewer::parse_what_if(s8.what_if, "p2c=other", &error));
  CHECK(!viewer::parse_what_if(step_titled(steps, "1.").what_if, "f=1", &error));
  // Without a [MASK] (or an LM head) the prediction says why.
  const Run plain = run_text(dir, "In the beginning God created the heaven and the earth.");
  const auto& p9 = step_titled(viewer::build_lesson(plain.input(0, 0)), "9.");
  CHECK(p9.what_if.mask == -1);
  const viewer::WhatIfRow rp = viewer::what_if_row(plain.model, plain.trace, p9.what_if, one);
  CHECK(rp.top_after.empty());
  CHECK(has(rp.predict_note, "no [MASK]"));
}

namespace {

/// log p of every piece at row 0 of `logits [1, V]`, by hand (max + log Σ exp), independent of the
/// core's log_softmax_rows.
std::vector<double> log_probs_by_hand(const Matrix& logits) {
  const double mx = logits.row(0).maxCoeff();
  double sum = 0;
  for (Eigen::Index v = 0; v < logits.cols(); ++v) sum += std::exp(logits(0, v) - mx);
  std::vector<double> out(static_cast<size_t>(logits.cols()));
  for (Eigen::Index v = 0; v < logits.cols(); ++v) out[static_cast<size_t>(v)] = logits(0, v) - mx - std::log(sum);
  return out;
}

/// The top piece of `lp` and the runner-up (lower id first on ties, as the core).
std::pair<int64_t, int64_t> top_two(const std::vector<double>& lp) {
  int64_t a = 0, b = -1;
  for (int64_t v = 1; v < static_cast<int64_t>(lp.size()); ++v)
    if (lp[static_cast<size_t>(v)] > lp[static_cast<size_t>(a)]) a = v;
  for (int64_t v = 0; v < static_cast<int64_t>(lp.size()); ++v)
    if (v != a && (b < 0 || lp[static_cast<size_t>(v)] > lp[static_cast<size_t>(b)])) b = v;
  return {a, b};
}

int mask_of(const Run& r) {
  for (size_t p = 0; p < r.tokens.size(); ++p)
    if (r.tokens[p] == "[MASK]") return static_cast<int>(p);
  return -1;
}

}  // namespace

TEST_CASE("steps 13-15: eq. 1's loss, the EMD's prediction and the capstone equal the core's (issue 58, item 5)") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  const Run r = run_text(dir, kDefaultText);
  REQUIRE(r.emd.has_value());
  const int mi = mask_of(r);
  REQUIRE(mi >= 0);
  const auto tok = load_tokenizer_for_model(dir, r.model.config.vocab_size);
  viewer::LessonInput in = r.input(1, 2);
  in.vocab = [&](int64_t id) { return tok->display(id); };
  const auto steps = viewer::build_lesson(in);
  REQUIRE(steps.size() == 15);

  // The decoder output recomputed: the EMD run again on the encoder trace, then the MLM head, then a
  // log-softmax by hand.
  const EMDTrace emd = enhanced_mask_decoder(r.model, r.trace);
  const std::vector<double> lp = log_probs_by_hand(mlm_logits(r.model, emd.output(), {mi}));
  const auto [w1, w2] = top_two(lp);

  // Step 13: the loss −ln p of the first guess, in nats.
  const viewer::LessonStep s13 = step_titled(steps, "13.");
  REQUIRE(s13.applies);
  CHECK(std::fabs(s13.answer - (-lp[static_cast<size_t>(w1)])) < 1e-12);
  CHECK(s13.answer > 0);
  CHECK(s13.question.find("'" + tok->display(w1) + "'") != std::string::npos);
  const double p1 = std::exp(lp[static_cast<size_t>(w1)]);
  CHECK(viewer::judge_lesson_answer(s13, std::to_string(-std::log10(p1))).mistake.find("base-10") != std::string::npos);
  CHECK(viewer::judge_lesson_answer(s13, std::to_string(std::log(p1))).mistake.find("minus sign") != std::string::npos);
  CHECK(viewer::judge_lesson_answer(s13, std::to_string(1 - p1)).mistake.find("1 − p") != std::string::npos);

  // Step 14: p(w1)/p(w2) = exp(z1 − z2), the logits of the two first guesses as the question prints them.
  const viewer::LessonStep s14 = step_titled(steps, "14.");
  REQUIRE(s14.applies);
  const double ratio = std::exp(lp[static_cast<size_t>(w1)] - lp[static_cast<size_t>(w2)]);
  CHECK(std::fabs(s14.answer - ratio) < 1e-12 * ratio);
  CHECK(s14.answer >= 1);
  const Matrix z = mlm_logits(r.model, emd.output(), {mi});
  CHECK(viewer::judge_lesson_answer(s14, std::to_string(z(0, w1) - z(0, w2))).mistake.find("exponential") != std::string::npos);
  CHECK(viewer::judge_lesson_answer(s14, std::to_string(1 / ratio)).mistake.find("inverted") != std::string::npos);

  // Step 15: a full forward with each position term off (every layer, the decoder after), the loss of
  // the same piece: the capstone asks the term that moves it most, and lists them all with −EMD.
  const viewer::LessonStep s15 = step_titled(steps, "15.");
  REQUIRE(s15.applies);
  double best = 0;
  std::string best_term;
  for (Term t : {Term::c2p, Term::p2c}) {
    Ablation a;
    a.terms[t] = false;
    const ForwardTrace off = forward(r.model, r.trace.inputs, a, TraceLevel::Full, true);
    REQUIRE(off.emd.has_value());
    const std::vector<double> lq = log_probs_by_hand(mlm_logits(r.model, off.emd->output(), {mi}));
    const double d = lp[static_cast<size_t>(w1)] - lq[static_cast<size_t>(w1)];
    CAPTURE(term_name(t));
    CHECK(s15.explanation.find("−" + std::string(term_name(t)) + ": p = ") != std::string::npos);
    if (std::fabs(d) > std::fabs(best)) best = d, best_term = term_name(t);
  }
  CHECK(std::fabs(s15.answer - best) < 1e-12);
  // Built without the run's cached reruns (build_lesson makes its own): the same numbers.
  in.reruns = nullptr;
  CHECK(step_titled(viewer::build_lesson(in), "15.").answer == s15.answer);
  // Deferred, as the viewer builds while the learner is on another step: step 15 pending (no question,
  // no reruns made), every other step as before; with the reruns given, deferring changes nothing.
  CHECK(!s15.pending);
  in.defer_capstone = true;
  const auto deferred = viewer::build_lesson(in);
  REQUIRE(deferred.size() == steps.size());
  CHECK(deferred[viewer::kCapstoneIndex].title == s15.title);
  CHECK(deferred[viewer::kCapstoneIndex].pending);
  CHECK(deferred[viewer::kCapstoneIndex].question.empty());
  for (size_t n = 0; n < steps.size(); ++n) {
    if (static_cast<int>(n) == viewer::kCapstoneIndex) continue;
    CAPTURE(steps[n].title);
    CHECK(!deferred[n].pending);
    CHECK(deferred[n].question == steps[n].question);
    CHECK(deferred[n].answer == steps[n].answer);
  }
  in.reruns = r.input(1, 2).reruns;
  CHECK(!viewer::build_lesson(in)[viewer::kCapstoneIndex].pending);
  CHECK(viewer::build_lesson(in)[viewer::kCapstoneIndex].answer == s15.answer);
  CHECK(s15.question.find("With " + best_term + " switched off") != std::string::npos);
  CHECK(s15.explanation.find("−EMD: p = ") != std::string::npos);
  CHECK(viewer::judge_lesson_answer(s15, std::to_string(-best)).mistake.find("sign") != std::string::npos);
}

TEST_CASE("steps 13-15 say why where they cannot ask: no EMD, no position term, no [MASK] or no MLM head (issue 58, item 5)") {
  // Trained without the EMD: eq. 1's step still applies (the head reads the last layer), the EMD's
  // prediction skips with the core's reason.
  const Run ne = run_text(source("notebooks_data/models/zoo/deberta-tiny-no-emd"), kDefaultText);
  REQUIRE(!runs_emd(ne.model));
  auto steps = viewer::build_lesson(ne.input(0, 0));
  const int mi = mask_of(ne);
  REQUIRE(mi >= 0);
  const viewer::LessonStep s13 = step_titled(steps, "13.");
  REQUIRE(s13.applies);
  const std::vector<double> lp = log_probs_by_hand(mlm_logits(ne.model, ne.trace.layers.back().output, {mi}));
  CHECK(std::fabs(s13.answer + lp[static_cast<size_t>(top_two(lp).first)]) < 1e-12);
  CHECK(!step_titled(steps, "14.").applies);
  CHECK(step_titled(steps, "14.").skip_reason == why_no_emd(ne.model));
  CHECK(step_titled(steps, "15.").applies);
  CHECK(step_titled(steps, "15.").explanation.find("−EMD") == std::string::npos);  // no EMD to take away

  // c2c only: nothing of eq. 4 to take away.
  const Run cc = run_text(source("notebooks_data/models/zoo/deberta-tiny-c2c-abs"), "And God said, Let there be light: and there was [MASK].");
  steps = viewer::build_lesson(cc.input(0, 0));
  CHECK(step_titled(steps, "13.").applies);
  CHECK(!step_titled(steps, "15.").applies);
  CHECK(step_titled(steps, "15.").skip_reason.find("no position term") != std::string::npos);

  // No [MASK] in the text.
  const Run nm = run_text(source("notebooks_data/models/deberta-tiny"), "In the beginning God created the heaven and the earth.");
  steps = viewer::build_lesson(nm.input(0, 0));
  for (const char* n : {"13.", "14.", "15."}) {
    CAPTURE(n);
    CHECK(!step_titled(steps, n).applies);
    CHECK(step_titled(steps, n).skip_reason.find("no [MASK]") != std::string::npos);
  }
}

TEST_CASE("every step links to the core function and the notebook section that compute it (issue 58, item 5)") {
  const Run r = run_text(source("notebooks_data/models/deberta-tiny"), kDefaultText);
  const auto steps = viewer::build_lesson(r.input(0, 0));
  const auto read = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  for (const auto& s : steps) {
    CAPTURE(s.title);
    const std::string fn = s.link.function;
    REQUIRE(fn.rfind("deberta::", 0) == 0);
    const std::string file = read(source(s.link.file));
    REQUIRE(!file.empty());
    // The file defines the function: its name at the start of a line's declarator, followed by "(".
    CHECK(file.find(" " + fn.substr(9) + "(") != std::string::npos);
    const std::string nb = read(source(s.link.notebook));
    REQUIRE(!nb.empty());
    // The section is a heading of a markdown cell: "# …" or "## …" ending the line.
    const size_t at = nb.find("# " + std::string(s.link.section));
    REQUIRE(at != std::string::npos);
    const char after = nb[at + 2 + std::string(s.link.section).size()];
    CHECK((after == '\\' || after == '"'));
  }
}

TEST_CASE("the pencil view: the toy model's rows and gathers by δ, as the sheet prints them and as the core computes (issue 58, item 6)") {
  const Model toy = load_model(source("notebooks_data/models/deberta-toy"));
  Inputs in;
  in.input_ids = {1, 6, 7, 2};  // [CLS] cat sat [SEP], docs/lesson.md's sheet
  const ForwardTrace t = forward(toy, in, {}, TraceLevel::Full, false);
  // Cell (1, 0), the sheet's worked cell: δ(1, 0) = 3 (i − j ≥ k = 2 clamps), δ(0, 1) = 1.
  const viewer::PencilCell p = viewer::pencil_cell(t, 0, 0, 1, 0);
  const std::vector<double> Q_c1 = {1.25, -1.0, 1.0, -1.5}, K_c0 = {1.5, 1.0, -0.25, -1.0};
  const std::vector<double> K_r3 = {0.5, -0.25, 0.25, 0.5}, Q_r3 = {0.0, 0.0, 0.0, 0.5}, Q_r1 = {0.0, 0.5, 0.0, 0.25};
  // The sheet prints the exact ±1 pattern of LayerNorm, whose ε = 1e-12 moves the run's H (and so every
  // projection) by a few 1e-12: the sheet's numbers are checked at 1e-10, the core against itself at 1e-12.
  const double sheet = 1e-10;
  const auto same = [&](const std::vector<double>& a, const std::vector<double>& b) {
    REQUIRE(a.size() == b.size());
    for (size_t q = 0; q < a.size(); ++q) CHECK(std::fabs(a[q] - b[q]) < sheet);
  };
  CHECK(p.row == 3);
  CHECK(p.row_paper == 1);
  same(p.Q_c_i, Q_c1);
  same(p.K_c_j, K_c0);
  same(p.K_r_row, K_r3);
  same(p.Q_r_row, Q_r3);
  same(p.Q_r_row_paper, Q_r1);
  CHECK(std::fabs(p.c2c - 2.125) < sheet);
  CHECK(std::fabs(p.c2p_dot - 0.375) < sheet);
  CHECK(std::fabs(p.p2c_code + 0.5) < sheet);
  CHECK(std::fabs(p.p2c_paper - 0.25) < sheet);
  // Every cell against the core's term maps (scaled by s): the run's, and a run with the paper's index.
  Ablation paper;
  paper.p2c_index = P2CIndex::Paper;
  const ForwardTrace tp = forward(toy, in, paper, TraceLevel::Full, false);
  const auto& a = t.layers[0].attention;
  const double s = t.context.attention.scale;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      const viewer::PencilCell c = viewer::pencil_cell(t, 0, 0, i, j);
      CHECK(std::fabs(c.c2c * s - a.terms[Term::c2c][0](i, j)) < 1e-12);
      CHECK(std::fabs(c.c2p_dot * s - a.terms[Term::c2p][0](i, j)) < 1e-12);
      CHECK(std::fabs(c.p2c_code * s - a.terms[Term::p2c][0](i, j)) < 1e-12);
      CHECK(std::fabs(c.p2c_paper * s - tp.layers[0].attention.terms[Term::p2c][0](i, j)) < 1e-12);
      CHECK(c.row == relative_distance(i, j, 2));
      CHECK(c.row_paper == relative_distance(j, i, 2));
      // The drawn gathers: row i of c2p and column j of p2c, each cell taken from the products at its row.
      const std::vector<double> c2p_line = c.c2p_gather.values(), p2c_line = c.p2c_gather.values();
      REQUIRE(c2p_line.size() == 4);
      REQUIRE(p2c_line.size() == 4);
      for (int m = 0; m < 4; ++m) {
        CAPTURE(m);
        CHECK(c.c2p_gather.rows[static_cast<size_t>(m)] == relative_distance(i, m, 2));
        CHECK(std::fabs(c2p_line[static_cast<size_t>(m)] * s - a.terms[Term::c2p][0](i, m)) < 1e-12);
        CHECK(std::fabs(p2c_line[static_cast<size_t>(m)] * s - a.terms[Term::p2c][0](m, j)) < 1e-12);
      }
      // The products span exactly the rows the line reads.
      const auto& g = c.c2p_gather;
      CHECK(g.first_row == *std::min_element(g.rows.begin(), g.rows.end()));
      CHECK(g.first_row + static_cast<int64_t>(g.products.size()) - 1 == *std::max_element(g.rows.begin(), g.rows.end()));
      // With the paper's index the p2c gather reads δ(j, i): the paper run's column j.
      const viewer::PencilCell cp = viewer::pencil_cell(tp, 0, 0, i, j);
      const std::vector<double> paper_line = cp.p2c_gather.values();
      for (int m = 0; m < 4; ++m) {
        CAPTURE(m);
        CHECK(cp.p2c_gather.rows[static_cast<size_t>(m)] == relative_distance(j, m, 2));
        CHECK(std::fabs(paper_line[static_cast<size_t>(m)] * s - tp.layers[0].attention.terms[Term::p2c][0](m, j)) < 1e-12);
      }
    }
  CHECK_THROWS_AS(viewer::pencil_cell(t, 0, 0, 4, 0), std::invalid_argument);
  CHECK_THROWS_AS(viewer::pencil_cell(t, 1, 0, 0, 0), std::invalid_argument);
}

TEST_CASE("steps 11 and 14 do not claim I_0 = H + P where the EMD adds no position (the zoo's depth-matched -EMD controls)") {
  for (const char* name : {"deberta-tiny-no-emd-depth", "deberta-tiny-no-emd-abs-depth"}) {
    CAPTURE(name);
    const Run r = run_text(source(std::string("notebooks_data/models/zoo/") + name), kDefaultText);
    REQUIRE(!r.model.config.emd_position);
    const auto steps = viewer::build_lesson(r.input(0, 0));
    for (const char* t : {"11.", "14."}) {
      CAPTURE(t);
      const viewer::LessonStep& s = step_titled(steps, t);
      CHECK(!s.applies);
      CHECK(has(s.skip_reason, "emd_position: false"));
      CHECK(has(s.skip_reason, "I_0 = H,"));
    }
    CHECK(step_titled(steps, "13.").applies);  // eq. 1's loss still reads the EMD's prediction
  }
  // The bundled model's EMD adds P: both steps apply there.
  const Run b = run_text(source("notebooks_data/models/deberta-tiny"), kDefaultText);
  const auto steps = viewer::build_lesson(b.input(0, 0));
  CHECK(step_titled(steps, "11.").applies);
  CHECK(step_titled(steps, "14.").applies);
}
