// test_worker.cpp — the viewer's computations (viewer/jobs/worker.cpp) against the core, bitwise:
//  * materialize_layer (what LayerDetail holds) equals the layer of a TraceLevel::Full forward —
//    every projection, term map, probability and output, on a model with the EMD and one with the
//    nGiE convolution (layer 0's special case);
//  * after an ablation toggle (a re-run from the first changed layer, the layers before it copied
//    from the previous result), the shown maps, EMD passes and predictions equal those of a fresh
//    computation under the same ablation, and of a full forward;
//  * `current` is the EMD's prediction when the EMD runs, the last layer's otherwise;
//  * the viewer's quantities are the core's terms (kAllTerms) plus Logits and Probs, and every
//    table of the viewer that lists the terms covers kAllTerms (issue 57, item 3).
// Exact equality throughout: the re-run and the materialization repeat the same arithmetic.
#include "test_paths.h"  // DEBERTA_SOURCE_DIR
#include "state/state.h"
#include "jobs/worker.h"

#include "deberta/model_io.h"

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>

using namespace deberta;

namespace {

std::string source(const std::string& rel) { return std::string(DEBERTA_SOURCE_DIR) + "/" + rel; }

/// "" when `a` and `b` have the same shape and bitwise the same values, else the first difference.
std::string diff(const Matrix& a, const Matrix& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    std::ostringstream o;
    o << "shape " << a.rows() << "x" << a.cols() << " vs " << b.rows() << "x" << b.cols();
    return o.str();
  }
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j)
      if (!(a(i, j) == b(i, j))) {
        std::ostringstream o;
        o.precision(17);
        o << "(" << i << ", " << j << "): ours " << a(i, j) << ", reference " << b(i, j) << ", error " << a(i, j) - b(i, j);
        return o.str();
      }
  return "";
}

void check_same(const std::string& name, const Matrix& ours, const Matrix& ref) {
  const std::string d = diff(ours, ref);
  CAPTURE(name);
  CAPTURE(d);
  CHECK(d.empty());
}

void check_same(const std::string& name, const std::vector<Matrix>& ours, const std::vector<Matrix>& ref) {
  CAPTURE(name);
  REQUIRE(ours.size() == ref.size());
  for (size_t h = 0; h < ours.size(); ++h) check_same(name + "[head " + std::to_string(h) + "]", ours[h], ref[h]);
}

/// Every field of a layer, full detail included.
void check_layer(const std::string& p, const LayerTrace& ours, const LayerTrace& ref) {
  const AttentionTrace &a = ours.attention, &b = ref.attention;
  check_same(p + ".Q_c", a.Q_c, b.Q_c), check_same(p + ".K_c", a.K_c, b.K_c), check_same(p + ".V_c", a.V_c, b.V_c);
  check_same(p + ".Q_r", a.Q_r, b.Q_r), check_same(p + ".K_r", a.K_r, b.K_r);
  CHECK(a.row_offset == b.row_offset);
  for (Term t : kAllTerms) check_same(p + "." + term_name(t), a.terms[t], b.terms[t]);
  check_same(p + ".logits", a.logits, b.logits), check_same(p + ".probs", a.probs, b.probs);
  check_same(p + ".context", a.context, b.context);
  check_same(p + ".attention_output", ours.attention_output, ref.attention_output);
  check_same(p + ".output", ours.output, ref.output);
  check_same(p + ".output_pre_conv", ours.output_pre_conv, ref.output_pre_conv);
}

void check_predictions(const std::string& name, const std::vector<MaskPrediction>& ours,
                       const std::vector<MaskPrediction>& ref) {
  CAPTURE(name);
  REQUIRE(ours.size() == ref.size());
  for (size_t t = 0; t < ours.size(); ++t) {
    CHECK(ours[t].position == ref[t].position);
    REQUIRE(ours[t].top.size() == ref[t].top.size());
    for (size_t k = 0; k < ours[t].top.size(); ++k) CHECK(ours[t].top[k].id == ref[t].top[k].id);
    check_same(name + " log_probs", Matrix(ours[t].log_probs.transpose()), Matrix(ref[t].log_probs.transpose()));
  }
}

std::shared_ptr<const viewer::LoadedModel> load(const std::string& dir) {
  REQUIRE(std::filesystem::exists(dir + "/config.json"));
  return viewer::read_model(dir);
}

struct Session {
  viewer::Request req;
  viewer::TokenInput input;
  Session(std::shared_ptr<const viewer::LoadedModel> m, const std::string& ids, int mask_id, const std::string& text = "") {
    req.model = std::move(m);
    req.fields.ids_text = ids;
    req.fields.text = text;
    req.fields.mask_id = mask_id;
    input = viewer::tokenize_fields(*req.model, req.fields);
  }
  std::shared_ptr<const viewer::Result> run(const Ablation& a, const std::shared_ptr<const viewer::Result>& prev) {
    req.ablation = a;
    ++req.generation;
    return viewer::compute_result(req, input, prev);
  }
};

std::vector<int64_t> all_layers(const viewer::Result& r) {
  std::vector<int64_t> v;
  for (size_t l = 0; l < r.trace.layers.size(); ++l) v.push_back(static_cast<int64_t>(l));
  return v;
}

/// `r` (maps, EMD, predictions, detail of every layer) against a fresh computation and a full forward.
void check_against_fresh(Session& s, const viewer::Result& r) {
  const Model& m = s.req.model->model;
  const auto fresh = s.run(r.ablation, nullptr);
  CHECK(fresh->first_layer == 0);
  REQUIRE(r.trace.layers.size() == fresh->trace.layers.size());
  CHECK(r.trace.level == TraceLevel::Probs);
  const ForwardTrace full = forward(m, s.input.inputs, r.ablation, TraceLevel::Full, true);
  const auto detail = viewer::materialize_detail(r, all_layers(r));
  CHECK(detail->held == all_layers(r));
  for (size_t l = 0; l < r.trace.layers.size(); ++l) {
    const std::string p = "layer " + std::to_string(l);
    check_same(p + ".probs (shown)", r.trace.layers[l].attention.probs, fresh->trace.layers[l].attention.probs);
    check_same(p + ".output (shown)", r.trace.layers[l].output, fresh->trace.layers[l].output);
    check_layer(p + " (materialized)", detail->trace.layers[l], full.layers[l]);
  }
  REQUIRE((r.emd() != nullptr) == (fresh->emd() != nullptr));
  CHECK(r.trace.emd.has_value() == full.emd.has_value());
  if (r.emd()) {
    for (size_t t = 0; t < r.emd()->passes.size(); ++t) {
      check_same("emd pass " + std::to_string(t) + ".probs", r.emd()->passes[t].attention.probs,
                 fresh->emd()->passes[t].attention.probs);
      check_same("emd pass " + std::to_string(t) + ".output", r.emd()->passes[t].output, fresh->emd()->passes[t].output);
    }
    REQUIRE(r.emd_attention_diff.size() == fresh->emd_attention_diff.size());
    for (size_t t = 0; t < r.emd_attention_diff.size(); ++t)
      check_same("emd_attention_diff " + std::to_string(t), r.emd_attention_diff[t], fresh->emd_attention_diff[t]);
  }
  check_predictions("current", r.current, fresh->current);
  check_predictions("emd_on", r.emd_on, fresh->emd_on);
  check_predictions("emd_off", r.emd_off, fresh->emd_off);
  check_predictions("baseline", r.baseline, fresh->baseline);
  CHECK(r.kl == fresh->kl);
  if (!s.input.mask_positions.empty() && m.weights.lm_head) {
    // What `deberta predict` decodes: the full forward's decoder output.
    const auto ref = top_k_predictions(mlm_logits(m, full.decoder_output(), s.input.mask_positions), s.input.mask_positions, 5);
    check_predictions("current vs full forward", r.current, ref);
  }
}

}  // namespace

TEST_CASE("the viewer's quantities and term tables cover deberta::kAllTerms, each term once") {
  // kTermTexts: one row a term, in kAllTerms' order, every text filled in.
  REQUIRE(std::size(viewer::kTermTexts) == static_cast<size_t>(kTermCount));
  for (int i = 0; i < kTermCount; ++i) {
    const Term t = kAllTerms[i];
    CAPTURE(term_name(t));
    int rows = 0;
    for (const viewer::TermText& row : viewer::kTermTexts) rows += row.term == t;
    CHECK(rows == 1);
    CHECK(viewer::kTermTexts[i].term == t);
    const viewer::TermText& text = viewer::term_text(t);
    for (const char* field : {text.label, text.words, text.formula, text.formula_paper_index, text.link_weight,
                              text.ablation_help}) {
      REQUIRE(field != nullptr);
      CHECK(std::string(field).size() > 0);
    }
    CHECK(std::string(text.label).find(term_name(t)) != std::string::npos);
    CHECK(std::string(text.words).find(std::string("(") + term_name(t) + ")") != std::string::npos);
    CHECK(std::string(text.link_weight).rfind(term_name(t), 0) == 0);
  }
  // kAllQuantities: each term's quantity once, in kAllTerms' order, then Logits and Probs; names
  // round-trip and are distinct, so every menu built from it lists every term.
  REQUIRE(viewer::kAllQuantities.size() == static_cast<size_t>(kTermCount + 2));
  for (int i = 0; i < kTermCount; ++i) {
    const viewer::Quantity q = viewer::kAllQuantities[static_cast<size_t>(i)];
    CHECK(q == viewer::term_quantity(kAllTerms[i]));
    REQUIRE(viewer::quantity_term(q).has_value());
    CHECK(*viewer::quantity_term(q) == kAllTerms[i]);
    CHECK(std::string(viewer::quantity_name(q)) == term_name(kAllTerms[i]));
    CHECK(std::string(viewer::quantity_label(q)) == viewer::term_text(kAllTerms[i]).label);
  }
  CHECK(viewer::kAllQuantities[kTermCount] == viewer::Quantity::Logits);
  CHECK(viewer::kAllQuantities[kTermCount + 1] == viewer::Quantity::Probs);
  CHECK(!viewer::quantity_term(viewer::Quantity::Logits));
  CHECK(!viewer::quantity_term(viewer::Quantity::Probs));
  std::set<std::string> names;
  for (viewer::Quantity q : viewer::kAllQuantities) {
    CAPTURE(viewer::quantity_name(q));
    CHECK(names.insert(viewer::quantity_name(q)).second);
    REQUIRE(viewer::quantity_from_name(viewer::quantity_name(q)).has_value());
    CHECK(*viewer::quantity_from_name(viewer::quantity_name(q)) == q);
    CHECK(viewer::quantity_names().find(viewer::quantity_name(q)) != std::string::npos);
  }
  CHECK(!viewer::quantity_from_name("p3c"));
  CHECK(viewer::quantity_names() == "c2c, c2p, p2c, p2p, logits, probs");
}

TEST_CASE("materialize_detail equals the full forward's layers bitwise (EMD model, conv model)") {
  for (const char* dir : {"notebooks_data/golden/v3_emd", "notebooks_data/golden/v2_conv_pad"}) {
    CAPTURE(dir);
    Session s(load(source(dir)), "14,43,3,33,29,3,18,3,26,16", 3);
    const auto r = s.run({}, nullptr);
    const Model& m = s.req.model->model;
    const ForwardTrace full = forward(m, s.input.inputs, {}, TraceLevel::Full, true);
    const auto one = viewer::materialize_detail(*r, {1});
    CHECK(one->has(1));
    CHECK(!one->has(0));
    CHECK(one->trace.layers[0].attention.probs.empty());  // the layers not asked for stay empty
    check_layer("layer 1", one->trace.layers[1], full.layers[1]);
    const auto all = viewer::materialize_detail(*r, all_layers(*r));
    for (size_t l = 0; l < full.layers.size(); ++l) check_layer("layer " + std::to_string(l), all->trace.layers[l], full.layers[l]);
    // The map the panels show: probabilities from the Probs trace, terms from the detail.
    viewer::ViewerState st;
    st.result = r;
    st.detail = all;
    st.layer = 1;
    CHECK(viewer::shown_map(st, 1, 0, viewer::Quantity::Probs) == &r->trace.layers[1].attention.probs[0]);
    REQUIRE(viewer::shown_map(st, 1, 0, viewer::term_quantity(Term::c2p)) != nullptr);
    check_same("shown c2p", *viewer::shown_map(st, 1, 0, viewer::term_quantity(Term::c2p)), full.layers[1].attention.terms[Term::c2p][0]);
    CHECK(viewer::shown_map(st, 1, 0, viewer::term_quantity(Term::p2p)) == nullptr);  // off in this model
    // The export's trace: every layer in full, as `deberta dump` computes it.
    const ForwardTrace exported = viewer::full_trace(*r);
    CHECK(exported.level == TraceLevel::Full);
    for (size_t l = 0; l < full.layers.size(); ++l) check_layer("exported layer " + std::to_string(l), exported.layers[l], full.layers[l]);
    CHECK_THROWS_AS(viewer::materialize_detail(*r, {static_cast<int64_t>(full.layers.size())}), deberta::Error);
  }
}

TEST_CASE("after an ablation toggle the shown maps and predictions equal a fresh computation") {
  Session s(load(source("notebooks_data/golden/v3_emd")), "14,43,3,33,29,3,18,3,26,16", 3);
  const Model& m = s.req.model->model;
  const int64_t L = m.config.num_hidden_layers;
  const auto base = s.run({}, nullptr);
  REQUIRE(base->trace.emd.has_value());
  REQUIRE(!base->current.empty());

  Ablation no_c2p;
  no_c2p.terms[Term::c2p] = false;
  const auto off = s.run(no_c2p, base);
  CHECK(off->first_layer == 0);
  check_against_fresh(s, *off);

  // Back on: the same numbers as the first run.
  const auto on = s.run({}, off);
  check_against_fresh(s, *on);
  for (size_t l = 0; l < on->trace.layers.size(); ++l)
    check_same("layer " + std::to_string(l) + " back on", on->trace.layers[l].attention.probs, base->trace.layers[l].attention.probs);

  // A head mask in the last layer: layers 0 … L−2 are copied, the last one and the EMD re-run.
  Ablation masked;
  masked.head_mask.insert({L - 1, 1});
  const auto m1 = s.run(masked, on);
  CHECK(m1->first_layer == L - 1);
  check_against_fresh(s, *m1);
  CHECK(m1->trace.layers[L - 1].attention.probs[1].isZero(0));

  // Without the EMD: `current` is the last layer's prediction; the EMD still shows beside it.
  Ablation no_emd;
  no_emd.emd = false;
  const auto ne = s.run(no_emd, m1);
  CHECK(!ne->trace.emd.has_value());
  REQUIRE(ne->emd() != nullptr);
  check_predictions("current = emd_off without the EMD", ne->current, ne->emd_off);
  check_against_fresh(s, *ne);
  check_predictions("current = emd_on with the EMD", base->current, base->emd_on);
}

TEST_CASE("a tokenized model: the bundled model with [MASK], toggles of p2c and of a head in layer 1") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  REQUIRE(std::filesystem::exists(dir + "/spm.model"));
  Session s(load(dir), "", -1, viewer::kDefaultText);
  REQUIRE(!s.input.mask_positions.empty());
  const auto base = s.run({}, nullptr);
  Ablation no_p2c;
  no_p2c.terms[Term::p2c] = false;
  const auto off = s.run(no_p2c, base);
  check_against_fresh(s, *off);
  Ablation head;
  head.head_mask.insert({1, 2});
  const auto h = s.run(head, off);
  CHECK(h->first_layer == 0);  // p2c back on changes every layer
  check_against_fresh(s, *h);
  const auto h2 = s.run({}, h);
  CHECK(h2->first_layer == 1);
  check_against_fresh(s, *h2);
}

TEST_CASE("a model load in steps (the web edition's): one tensor a step, progress rises, read_model's model") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  auto progress = std::make_shared<std::atomic<double>>(0.0);
  viewer::LoadJob job(dir, progress);
  CHECK_THROWS_WITH_AS(job.take(), doctest::Contains("not loaded yet"), Error);
  int steps = 0;
  double last = progress->load();
  bool rose_before_end = false;
  int tokenizer_steps = 0;
  while (true) {
    tokenizer_steps += job.stage() == "tokenizer";
    if (job.step()) break;
    ++steps;
    CHECK(progress->load() >= last);
    rose_before_end = rose_before_end || (progress->load() > 0.0 && progress->load() < 0.95);
    last = progress->load();
  }
  CHECK(steps > 50);  // the bundled model has ~75 tensors: many frames, not one
  // spm.model's load and its second parse (Tokenizer::prepare) are two steps (issue 55, item 4).
  CHECK(tokenizer_steps == 2);
  CHECK(rose_before_end);
  CHECK(progress->load() == 1.0);
  const auto stepped = job.take();
  const auto whole = viewer::read_model(dir);
  REQUIRE(stepped->tokenizer != nullptr);
  CHECK(stepped->tokenizer->encode(viewer::kDefaultText).ids == whole->tokenizer->encode(viewer::kDefaultText).ids);
  Inputs in;
  in.input_ids = {1, 10, 20, 30, 2};
  CHECK(forward(stepped->model, in).decoder_output() == forward(whole->model, in).decoder_output());
}

// The page's threaded build (issue 55, item 4): the tokenizer's load and prepare on a thread of
// their own, the steps only looking whether it finished.
TEST_CASE("a model load whose tokenizer runs on its own thread: the steps wait, the same model and tokenizer") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  viewer::LoadJob job(dir, nullptr, /*tokenizer_thread=*/true);
  int thread_stages = 0, waits = 0, plain_tokenizer_stages = 0;
  while (true) {
    const std::string stage = job.stage();
    thread_stages += stage == viewer::LoadJob::kThreadStage;
    plain_tokenizer_stages += stage == "tokenizer";
    if (job.step()) break;
    if (job.waiting()) {
      ++waits;
      CHECK(job.stage() == viewer::LoadJob::kThreadStage);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  CHECK(plain_tokenizer_stages == 1);  // the step that started the thread
  CHECK(thread_stages >= 1);           // and at least the one that took its results
  MESSAGE("the steps looked " << waits << " time(s) while the tokenizer's thread ran");
  CHECK_FALSE(job.waiting());
  const auto threaded = job.take();
  const auto whole = viewer::read_model(dir);
  REQUIRE(threaded->tokenizer != nullptr);
  for (const std::string& text : {std::string(viewer::kDefaultText), std::string("[CLS]glued[SEP] text, 12.5 km")})
    CHECK(threaded->tokenizer->encode(text).ids == whole->tokenizer->encode(text).ids);
  Inputs in;
  in.input_ids = {1, 10, 20, 30, 2};
  CHECK(forward(threaded->model, in).decoder_output() == forward(whole->model, in).decoder_output());
}

TEST_CASE("a load dropped while its tokenizer's thread runs: the thread finishes alone, the next load is whole") {
  const std::string dir = source("notebooks_data/models/deberta-tiny");
  for (int round = 0; round < 3; ++round) {
    auto job = std::make_unique<viewer::LoadJob>(dir, nullptr, /*tokenizer_thread=*/true);
    while (job->stage() != viewer::LoadJob::kThreadStage) REQUIRE_FALSE(job->step());
    job.reset();  // the thread still parses spm.model; what it makes is dropped with its task
  }
  viewer::LoadJob again(dir, nullptr, true);
  while (!again.step()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(again.take()->tokenizer != nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // (the dropped threads end before the test does)
}

TEST_CASE("a tokenizer that fails to load is named when the model loads and when text is typed (issue 28, class 17)") {
  // The bundled model's weights with an spm.model that is not a SentencePiece model.
  const std::string good = source("notebooks_data/models/deberta-tiny");
  const auto dir = std::filesystem::temp_directory_path() / "deberta_viewer_bad_spm";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* name : {"config.json", "model.safetensors"})
    std::filesystem::copy_file(good + "/" + name, dir / name);
  std::ofstream(dir / "spm.model") << "not a protobuf";
  const auto lm = viewer::read_model(dir.string());  // the weights load; the tokenizer does not
  CHECK(lm->tokenizer == nullptr);
  {  // the same note when the tokenizer is loaded on a thread of its own (the page's threaded build)
    viewer::LoadJob job(dir.string(), nullptr, /*tokenizer_thread=*/true);
    while (!job.step()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(job.take()->tokenizer == nullptr);
    CHECK(job.take()->tokenizer_error == lm->tokenizer_error);
    CHECK(job.take()->tokenizer_note == lm->tokenizer_note);
  }
  CHECK(lm->tokenizer_error.find("spm.model") != std::string::npos);
  CHECK(lm->tokenizer_note.find("tokenizer not loaded") != std::string::npos);
  viewer::InputFields f;
  f.text = "The cat sat on the [MASK].";
  try {
    (void)viewer::tokenize_fields(*lm, f);
    FAIL("typed text was accepted without a tokenizer");
  } catch (const std::exception& e) {
    const std::string what = e.what();
    CHECK(what.find("tokenizer not loaded") != std::string::npos);
    CHECK(what.find("spm.model") != std::string::npos);
  }
  f.text.clear();
  f.ids_text = "1,5,6,2";  // ids still work
  CHECK(viewer::tokenize_fields(*lm, f).inputs.input_ids.size() == 4);
  std::filesystem::remove_all(dir);
}

namespace {

/// Runs `job` stage by stage, recording the stage names and fractions it reports before each step.
std::shared_ptr<viewer::Result> run_stepped(viewer::ComputeJob& job, std::vector<std::string>* stages,
                                            std::vector<double>* fractions) {
  do {
    stages->push_back(job.stage());
    fractions->push_back(job.fraction());
  } while (!job.step());
  return job.take();
}

}  // namespace

TEST_CASE("a computation in stages: names each stage, progress rises, and gives compute_result's bits (web edition)") {
  Session s(load(source("notebooks_data/golden/v3_emd")), "14,43,3,33,29,3,18,3,26,16", 3);
  const int64_t L = s.req.model->model.config.num_hidden_layers;
  const auto whole = s.run({}, nullptr);

  // A fresh forward: embeddings, each layer, the decoder, the predictions.
  viewer::ComputeJob job(s.req, s.input, nullptr);
  CHECK_THROWS_AS(job.take(), deberta::Error);
  std::vector<std::string> stages;
  std::vector<double> fractions;
  const auto stepped = run_stepped(job, &stages, &fractions);
  std::vector<std::string> want{"embeddings"};
  for (int64_t l = 1; l <= L; ++l) want.push_back("layer " + std::to_string(l) + " of " + std::to_string(L));
  want.push_back("decoder");
  want.push_back("predictions");
  CHECK(stages == want);
  CHECK(fractions.front() == 0.0);
  for (size_t k = 1; k < fractions.size(); ++k) CHECK(fractions[k] > fractions[k - 1]);
  CHECK(fractions.back() < 1.0);
  CHECK(job.fraction() == 1.0);
  for (size_t l = 0; l < whole->trace.layers.size(); ++l)
    check_same("stepped layer " + std::to_string(l), stepped->trace.layers[l].output, whole->trace.layers[l].output);
  check_predictions("stepped predictions", stepped->current, whole->current);

  // A head mask in the last layer re-runs only that layer: the sequence context, layer L, decoder.
  Ablation masked;
  masked.head_mask.insert({L - 1, 0});
  ++s.req.generation;
  s.req.ablation = masked;
  viewer::ComputeJob rerun(s.req, s.input, whole);
  stages.clear(), fractions.clear();
  const auto r = run_stepped(rerun, &stages, &fractions);
  CHECK(stages == std::vector<std::string>{"sequence context", "layer " + std::to_string(L) + " of " + std::to_string(L),
                                           "decoder", "predictions"});
  CHECK(r->first_layer == L - 1);
  check_against_fresh(s, *r);
}

TEST_CASE("the worker thread: a result, then progress back to idle (−1)") {
  Session s(load(source("notebooks_data/golden/v3_emd")), "14,43,3,33,29,3,18,3,26,16", 3);
  viewer::Worker w;
  s.req.generation = 1;
  w.submit(s.req);
  std::shared_ptr<const viewer::Result> got;
  for (int k = 0; k < 2000 && !got; ++k) {
    got = w.poll(0, nullptr, nullptr);
    if (!got) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(got);
  for (int k = 0; k < 2000 && w.busy(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::string stage;
  CHECK(w.progress(&stage) == -1.0);
  const auto direct = viewer::compute_result(s.req, s.input, nullptr);
  check_predictions("worker = compute_result", got->current, direct->current);
}

TEST_CASE("a blank token is never an empty chip: ▁ for a space, code points for other blanks (issue 55, item 8)") {
  CHECK(viewer::blank_token(" "));
  CHECK(viewer::blank_token(""));
  CHECK(viewer::blank_token("\t\n"));
  CHECK(viewer::blank_token("\u3000"));
  CHECK(viewer::blank_token("\u200b"));
  CHECK_FALSE(viewer::blank_token(" the"));
  CHECK_FALSE(viewer::blank_token("\u2581"));  // the mark itself is drawn
  CHECK_FALSE(viewer::blank_token("\xff"));    // a bad byte is drawn as U+FFFD
  CHECK(viewer::shown_token(" ") == "\u2581");
  CHECK(viewer::shown_token("  ") == "\u2581\u2581");
  CHECK(viewer::shown_token("") == "\"\"");
  CHECK(viewer::shown_token("\t") == "\\t");
  CHECK(viewer::shown_token(" \n") == "\u2581\\n");
  CHECK(viewer::shown_token("\u3000") == "U+3000");
  CHECK(viewer::shown_token(" the") == " the");  // a word keeps its leading space
  CHECK(viewer::shown_token("[MASK]") == "[MASK]");

  // The bundled model's tokenizer on texts where SentencePiece writes the word-boundary piece ▁
  // alone (a space before a character no "▁x" piece starts with): its display name is " ", and
  // the Tokens panel's chip must show it.
  const auto lm = viewer::read_model(source("notebooks_data/models/deberta-tiny-512"));
  REQUIRE(lm->tokenizer != nullptr);
  int blanks = 0;
  for (const char* text : {"The cat sat on the [MASK] .", "It costs 3 € .", "x ~ y", "Hello 。 world", "a 😀 b"}) {
    CAPTURE(text);
    viewer::InputFields f;
    f.text = text;
    viewer::ViewerState s;
    auto r = std::make_shared<viewer::Result>();
    r->input = viewer::tokenize_fields(*lm, f);
    s.result = r;
    for (int t = 0; t < viewer::token_count(s); ++t) {
      const std::string name = viewer::token_name(s, t), chip = viewer::token_chip_label(s, t);
      CAPTURE(name);
      CAPTURE(chip);
      blanks += viewer::blank_token(name);
      const std::string shown = chip.substr(std::to_string(t).size() + 1);  // after "t "
      CHECK_FALSE(viewer::blank_token(shown));  // an empty chip fails here
      if (name == " ") CHECK(shown == "\u2581");
    }
  }
  CHECK(blanks > 0);  // the texts do give the piece ▁ alone (else the check above tests nothing)
}
