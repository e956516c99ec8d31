// Task heads (issue 14): each head function against a direct loop over its formula (1e-12), the
// golden head tensors (1e-10), which head a folder has, and the errors of incomplete heads.
#include "test_util.h"

#include "deberta/equations.h"

#include "deberta/analysis.h"
#include "deberta/map_weights.h"
#include "deberta/config.h"
#include "deberta/dump.h"
#include "deberta/heads.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>

using namespace deberta;

namespace {

constexpr double kLoopTolerance = 1e-12;
constexpr double kGoldenTolerance = 1e-10;

std::string golden_dir(const std::string& name) { return test::source_path("notebooks_data/golden/" + name); }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// A model re-mapped from a golden case's files after `edit` changed its config JSON and tensors.
Model remapped(const std::string& name, const std::function<void(nlohmann::json&, TensorMap&)>& edit) {
  const std::string dir = golden_dir(name);
  nlohmann::json cfg = read_json(dir + "/config.json");
  TensorMap tensors = read_weights_file(dir + "/model.safetensors");
  edit(cfg, tensors);
  Model m;
  m.config = parse_config(cfg, dir + "/config.json");
  m.directory = dir;
  m.weights_path = dir + "/model.safetensors";
  m.weights = map_weights(m.config, std::move(tensors), m.weights_path);
  return m;
}

Inputs golden_inputs(const std::string& name) {
  return inputs_from_tensors(read_safetensors(golden_dir(name) + "/golden.safetensors"), name);
}

Tensor f64(std::vector<int64_t> shape, double seed) {
  Tensor t;
  t.dtype = DType::F64;
  t.shape = std::move(shape);
  t.f.resize(t.numel());
  for (size_t k = 0; k < t.f.size(); ++k) t.f[k] = 0.3 * std::sin(seed + 0.7 * static_cast<double>(k));
  return t;
}

// --- the formulas, one scalar loop each -----------------------------------------------------

double gelu_loop(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

std::vector<double> layer_norm_loop(const std::vector<double>& x, const LayerNormParams& p) {
  const size_t n = x.size();
  double mean = 0, var = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n);
  std::vector<double> y(n);
  for (size_t k = 0; k < n; ++k) y[k] = (x[k] - mean) / std::sqrt(var + p.eps) * p.weight(k) + p.bias(k);
  return y;
}

std::vector<double> linear_loop(const std::vector<double>& x, const Linear& l) {
  std::vector<double> y(l.weight.rows());
  for (int64_t o = 0; o < l.weight.rows(); ++o) {
    double s = l.bias.size() ? l.bias(o) : 0.0;
    for (int64_t i = 0; i < l.weight.cols(); ++i) s += l.weight(o, i) * x[i];
    y[o] = s;
  }
  return y;
}

std::vector<double> row(const Matrix& m, int64_t r) { return std::vector<double>(m.row(r).data(), m.row(r).data() + m.cols()); }

// s_i = LN(h_0 + h_i); t_i = gelu(s_i W_dᵀ + b_d); logit_i = t_i · w_c + b_c.
Vector rtd_loop(const RTDHeadWeights& w, const Matrix& h) {
  Vector out(h.rows());
  for (int64_t i = 0; i < h.rows(); ++i) {
    std::vector<double> x(h.cols());
    for (int64_t k = 0; k < h.cols(); ++k) x[k] = h(0, k) + h(i, k);
    std::vector<double> t = linear_loop(layer_norm_loop(x, w.norm), w.dense);
    for (double& v : t) v = gelu_loop(v);
    out(i) = linear_loop(t, w.classifier)[0];
  }
  return out;
}

}  // namespace

TEST_SUITE("heads") {
  TEST_CASE("golden head tensors within 1e-10, and no head tensor the reference lacks") {
    for (const char* name : {"v3_rtd", "v2_cls_nli"}) {
      CAPTURE(name);
      const Model model = load_model(golden_dir(name));
      const TensorMap golden = read_safetensors(golden_dir(name) + "/golden.safetensors");
      const ForwardTrace trace = forward(model, inputs_from_tensors(golden, name), {}, TraceLevel::None);
      const TensorMap heads = head_tensors(model, trace);
      int found = 0;
      for (const char* t : {"rtd.logits", "cls.pooled", "cls.logits", "tokcls.logits"}) {
        CAPTURE(t);
        CHECK(heads.count(t) == golden.count(t));
        if (!golden.count(t) || !heads.count(t)) continue;
        test::check_close(t, heads.at(t), golden.at(t), kGoldenTolerance);
        ++found;
      }
      CHECK(found == (std::string(name) == "v3_rtd" ? 1 : 2));
    }
  }

  TEST_CASE("which head a folder has: architectures and weights") {
    const Model rtd = load_model(golden_dir("v3_rtd"));
    CHECK(rtd.weights.rtd_head.has_value());
    CHECK(rtd.weights.lm_head.has_value());  // the untrained MLM head of released v3 discriminators
    CHECK(available_heads(rtd) == std::vector<HeadKind>{HeadKind::RTD, HeadKind::MLM});
    CHECK(default_head(rtd) == HeadKind::RTD);
    CHECK(select_head(rtd, "mlm") == HeadKind::MLM);
    CHECK(head_note(rtd, HeadKind::MLM).find("never trained") != std::string::npos);
    CHECK(head_note(rtd, HeadKind::RTD).empty());
    CHECK(rtd.weights.unused.empty());  // deberta.embeddings.position_embeddings.weight is read (EMD table)

    const Model cls = load_model(golden_dir("v2_cls_nli"));
    CHECK(available_heads(cls) == std::vector<HeadKind>{HeadKind::SequenceClassification});
    CHECK(cls.config.id2label == std::vector<std::string>{"CONTRADICTION", "NEUTRAL", "ENTAILMENT"});
    CHECK(cls.config.pooler_hidden_size == 32);
    CHECK(cls.config.pooler_hidden_act == Activation::GeluErf);
    CHECK(cls.weights.seq_classifier->classifier.weight.rows() == 3);
    CHECK(test::error_of([&] { select_head(cls, "rtd"); }).find("has no replaced-token detection head") != std::string::npos);
    CHECK(test::error_of([&] { select_head(cls, "mlm"); }).find("it has: cls") != std::string::npos);
    CHECK(test::error_of([&] { select_head(cls, "ner"); }).find("unknown head 'ner'") != std::string::npos);

    const Model bare = load_model(golden_dir("v2_basic"));
    CHECK(available_heads(bare).empty());
    CHECK(test::error_of([&] { default_head(bare); }).find("bare encoder") != std::string::npos);

    ModelConfig c = cls.config;
    auto names = [](std::set<std::string> s) { return [s](const std::string& n) { return s.count(n) > 0; }; };
    c.architectures = {};
    TaskHeadPlan p = task_head_plan(c, names({"pooler.dense.weight", "classifier.weight"}));
    CHECK((p.sequence && !p.token && !p.rtd));
    p = task_head_plan(c, names({"classifier.weight"}));
    CHECK((!p.sequence && p.token && !p.rtd));
    p = task_head_plan(c, names({"mask_predictions.dense.weight"}));
    CHECK((p.rtd && !p.sequence && !p.token));
    c.architectures = {"DebertaV2ForMultipleChoice"};
    p = task_head_plan(c, names({"pooler.dense.weight", "classifier.weight"}));
    CHECK((!p.sequence && !p.token));  // not a head we know: left in `unused`
    c.architectures = {"DebertaV2ForTokenClassification"};
    p = task_head_plan(c, names({}));
    CHECK((p.token && !p.sequence));  // named: its missing tensors become an error
    c.architectures = {"DebertaV2ForPreTraining"};
    CHECK(task_head_plan(c, names({})).rtd);
  }

  TEST_CASE("RTD head equals a loop over LN(h0 + hi) -> dense -> gelu -> classifier") {
    const Model model = load_model(golden_dir("v3_rtd"));
    const ForwardTrace trace = forward(model, golden_inputs("v3_rtd"), {}, TraceLevel::None);
    const Matrix& h = head_hidden_states(trace);
    CHECK(&h == &trace.layers.back().output);
    test::check_close("rtd.logits (loop)", Matrix(rtd_logits(model, h)), Matrix(rtd_loop(*model.weights.rtd_head, h)),
                      kLoopTolerance);
    // The order matters: dense -> act -> LayerNorm (the MLM transform's order) gives other numbers.
    const RTDHeadWeights& w = *model.weights.rtd_head;
    Matrix s = h;
    s.rowwise() += h.row(0);
    const Matrix wrong_order = linear(w.classifier, layer_norm(activation(linear(w.dense, s), Activation::GeluErf), w.norm));
    CHECK((wrong_order.col(0) - rtd_logits(model, h)).cwiseAbs().maxCoeff() > 1e-3);
    const HeadOutput out = run_head(model, HeadKind::RTD, trace);
    for (int64_t i = 0; i < h.rows(); ++i) CHECK(std::fabs(out.probs(i, 0) - 1 / (1 + std::exp(-out.logits(i, 0)))) < 1e-15);
  }

  TEST_CASE("token classification: v2_cls_nli's classifier without its pooler, against a loop") {
    const Model model = remapped("v2_cls_nli", [](nlohmann::json& cfg, TensorMap& t) {
      cfg["architectures"] = {"DebertaV2ForTokenClassification"};
      t.erase("pooler.dense.weight");
      t.erase("pooler.dense.bias");
    });
    REQUIRE(model.weights.token_classifier.has_value());
    CHECK(!model.weights.seq_classifier.has_value());
    CHECK(default_head(model) == HeadKind::TokenClassification);
    const ForwardTrace trace = forward(model, golden_inputs("v2_cls_nli"), {}, TraceLevel::None);
    const Matrix& h = head_hidden_states(trace);
    const Matrix ours = token_logits(model, h);
    REQUIRE(ours.rows() == h.rows());
    REQUIRE(ours.cols() == 3);
    Matrix loop(h.rows(), 3);
    for (int64_t i = 0; i < h.rows(); ++i) {
      const auto y = linear_loop(row(h, i), model.weights.token_classifier->classifier);
      for (int64_t c = 0; c < 3; ++c) loop(i, c) = y[c];
    }
    test::check_close("tokcls.logits (loop)", ours, loop, kLoopTolerance);
    // The dump writes it with shape [N, C], and no sequence-classifier tensors.
    const TensorMap dumped = trace_to_tensors(model, trace, {});
    REQUIRE(dumped.count("tokcls.logits"));
    CHECK(dumped.at("tokcls.logits").shape == std::vector<int64_t>{h.rows(), 3});
    CHECK(!dumped.count("cls.logits"));
    // Same weights read as a sequence classifier: the classifier on the pooled token 0.
    const Model seq = load_model(golden_dir("v2_cls_nli"));
    const Vector pooled = sequence_pooled(seq, h);
    test::check_close("classifier(pooled) = token classifier on a pooled row",
                      Matrix(sequence_logits(seq, pooled).transpose()), token_logits(model, Matrix(pooled.transpose())),
                      kLoopTolerance);
    // Without architectures, the weights alone decide: classifier.* and no pooler is token classification.
    const Model inferred = remapped("v2_cls_nli", [](nlohmann::json& cfg, TensorMap& t) {
      cfg.erase("architectures");
      t.erase("pooler.dense.weight");
      t.erase("pooler.dense.bias");
    });
    CHECK(inferred.weights.token_classifier.has_value());
  }

  TEST_CASE("token-classifier effects: per-token KL and label flips over unpadded tokens only") {
    const Model model = remapped("v2_cls_nli", [](nlohmann::json& cfg, TensorMap& t) {
      cfg["architectures"] = {"DebertaV2ForTokenClassification"};
      t.erase("pooler.dense.weight");
      t.erase("pooler.dense.bias");
    });
    Inputs in = golden_inputs("v2_cls_nli");
    in.attention_mask.assign(in.size(), 1);
    in.attention_mask[in.size() - 1] = in.attention_mask[in.size() - 2] = in.attention_mask[in.size() - 3] = 0;
    const HeadOutput base = predict_head(model, in, HeadKind::TokenClassification);
    CHECK(base.item_mask.sum() == in.size() - 3);
    Ablation a;
    a.terms[Term::c2p] = false;
    const HeadOutput abl = predict_head(model, in, HeadKind::TokenClassification, a);
    const HeadEffect e = compare_head_outputs(base, abl);
    CHECK(e.items == in.size() - 3);
    double sum = 0, mx = 0;
    int64_t flips = 0;
    for (int64_t i = 0; i < in.size() - 3; ++i) {
      double kl = 0;
      for (int64_t c = 0; c < 3; ++c) kl += base.probs(i, c) * std::log(base.probs(i, c) / abl.probs(i, c));
      sum += kl;
      mx = std::max(mx, kl);
      Eigen::Index p = 0, q = 0;
      base.logits.row(i).maxCoeff(&p);
      abl.logits.row(i).maxCoeff(&q);
      flips += p != q;
    }
    CHECK(e.mean_kl > 0);
    CHECK(std::fabs(e.mean_kl - sum / (in.size() - 3)) < 1e-14);
    CHECK(std::fabs(e.max_kl - mx) < 1e-14);
    CHECK(e.flips == flips);
    CHECK(e.mean_abs_dp == 0);
  }

  TEST_CASE("v1 sequence classifier with a tanh pooler and a padded pair, against a loop") {
    // v1_basic's encoder plus a pooler and a 4-label classifier: HF DebertaForSequenceClassification.
    const Model model = remapped("v1_basic", [](nlohmann::json& cfg, TensorMap& t) {
      cfg["architectures"] = {"DebertaForSequenceClassification"};
      cfg["id2label"] = {{"0", "a"}, {"1", "b"}, {"2", "c"}, {"3", "d"}};
      cfg["pooler_hidden_act"] = "tanh";
      const int64_t H = cfg["hidden_size"].get<int64_t>();
      t["deberta.pooler.dense.weight"] = f64({H, H}, 1.0);  // either prefix form is accepted
      t["pooler.dense.bias"] = f64({H}, 2.0);
      t["classifier.weight"] = f64({4, H}, 3.0);
      t["classifier.bias"] = f64({4}, 4.0);
    });
    REQUIRE(model.weights.seq_classifier.has_value());
    Inputs in = golden_inputs("v1_basic");
    const int64_t N = in.size();
    in.attention_mask.assign(N, 1);
    in.attention_mask[N - 1] = in.attention_mask[N - 2] = 0;
    const ForwardTrace trace = forward(model, in, {}, TraceLevel::None);
    const Matrix& h = head_hidden_states(trace);
    std::vector<double> pooled = linear_loop(row(h, 0), model.weights.seq_classifier->pooler);
    for (double& v : pooled) v = std::tanh(v);
    const std::vector<double> logits = linear_loop(pooled, model.weights.seq_classifier->classifier);
    const Vector ours_pooled = sequence_pooled(model, h);
    test::check_close("cls.pooled (loop)", Matrix(ours_pooled), Matrix(Eigen::Map<const Vector>(pooled.data(), pooled.size())),
                      kLoopTolerance);
    test::check_close("cls.logits (loop)", Matrix(sequence_logits(model, ours_pooled)),
                      Matrix(Eigen::Map<const Vector>(logits.data(), logits.size())), kLoopTolerance);
    const HeadOutput out = run_head(model, HeadKind::SequenceClassification, trace);
    CHECK(std::fabs(out.probs.sum() - 1) < 1e-15);
    CHECK(!out.regression);
  }

  TEST_CASE("incomplete or mis-shaped heads: errors name the file and the tensor") {
    auto fails = [](const std::function<void(nlohmann::json&, TensorMap&)>& edit, const std::string& name,
                    const std::string& needle) {
      const std::string err = test::error_of([&] { remapped(name, edit); });
      CAPTURE(err);
      CHECK(err.find("model.safetensors") != std::string::npos);
      CHECK(err.find(needle) != std::string::npos);
    };
    fails([](nlohmann::json&, TensorMap& t) { t.erase("mask_predictions.classifier.weight"); }, "v3_rtd",
          "mask_predictions.classifier.weight");
    fails([](nlohmann::json&, TensorMap& t) { t["mask_predictions.dense.bias"] = f64({7}, 0); }, "v3_rtd",
          "tensor 'mask_predictions.dense.bias' has shape [7]");
    fails([](nlohmann::json&, TensorMap& t) { t.erase("pooler.dense.bias"); }, "v2_cls_nli", "pooler.dense.bias");
    fails([](nlohmann::json& c, TensorMap&) { c["id2label"] = {{"0", "x"}, {"1", "y"}}; }, "v2_cls_nli",
          "tensor 'classifier.weight' has shape [3, 32], expected [2, 32]");
    fails([](nlohmann::json& c, TensorMap& t) {
      c["architectures"] = {"DebertaV2ForTokenClassification"};
      t.erase("classifier.weight");
      t.erase("classifier.bias");
      t.erase("pooler.dense.weight");
      t.erase("pooler.dense.bias");
    }, "v2_cls_nli", "missing 2 required tensor(s): classifier.weight, classifier.bias");
    const std::string pooler = test::error_of([] {
      remapped("v2_cls_nli", [](nlohmann::json& c, TensorMap&) { c["pooler_hidden_size"] = 16; });
    });
    CHECK(pooler.find("pooler_hidden_size 16 differs from hidden_size 32") != std::string::npos);
  }

  TEST_CASE("config: id2label, num_labels, pooler keys as Hugging Face reads them") {
    nlohmann::json base = read_json(golden_dir("v2_cls_nli") + "/config.json");
    auto parse = [&](const std::function<void(nlohmann::json&)>& edit) {
      nlohmann::json j = base;
      edit(j);
      return parse_config(j, "config.json");
    };
    CHECK(parse([](nlohmann::json& j) { j["id2label"] = {{"1", "B"}, {"0", "A"}}; }).id2label ==
          std::vector<std::string>{"A", "B"});
    const ModelConfig counted = parse([](nlohmann::json& j) {
      j.erase("id2label");
      j["num_labels"] = 1;
    });
    CHECK(counted.id2label == std::vector<std::string>{"LABEL_0"});
    CHECK(!counted.has_id2label);
    const ModelConfig dflt = parse([](nlohmann::json& j) {
      j.erase("id2label");
      j.erase("pooler_hidden_size");
      j.erase("pooler_hidden_act");
    });
    CHECK(dflt.id2label.size() == 2);
    CHECK(dflt.pooler_hidden_size == dflt.hidden_size);
    CHECK(dflt.pooler_hidden_act_name == "gelu");
    // id2label wins over a disagreeing num_labels (HF only warns).
    CHECK(parse([](nlohmann::json& j) { j["num_labels"] = 7; }).id2label.size() == 3);
    auto error = [&](const std::function<void(nlohmann::json&)>& edit) {
      return test::error_of([&] { parse(edit); });
    };
    CHECK(error([](nlohmann::json& j) { j["id2label"] = {{"0", "A"}, {"2", "C"}}; }).find("id2label key '2'") !=
          std::string::npos);
    CHECK(error([](nlohmann::json& j) { j["id2label"] = {{"x", "A"}}; }).find("id2label key 'x'") != std::string::npos);
    CHECK(error([](nlohmann::json& j) { j["id2label"] = {{"0", 5}}; }).find("must be a string") != std::string::npos);
    CHECK(error([](nlohmann::json& j) { j["id2label"] = nlohmann::json::object(); }).find("0 entries") != std::string::npos);
    CHECK(error([](nlohmann::json& j) { j["pooler_hidden_act"] = "gelu2"; }).find("unknown activation 'gelu2'") !=
          std::string::npos);
    CHECK(error([](nlohmann::json& j) { j["architectures"] = "DebertaV2Model"; }).find("architectures") !=
          std::string::npos);
  }

  TEST_CASE("head effects: none for the baseline; RTD flips at 0.5; label KL and flips by hand") {
    const Model rtd = load_model(golden_dir("v3_rtd"));
    const Inputs in = golden_inputs("v3_rtd");
    const HeadOutput base = predict_head(rtd, in, HeadKind::RTD);
    const HeadEffect none = compare_head_outputs(base, base);
    CHECK(none.mean_abs_dp == 0);
    CHECK(none.flips == 0);
    CHECK(none.items == in.size());
    HeadOutput moved = base;
    moved.probs(3, 0) = base.probs(3, 0) > 0.5 ? 0.2 : 0.8;  // one decision flipped
    moved.probs(5, 0) = base.probs(5, 0) + 0.01;             // one moved, not flipped
    const HeadEffect e = compare_head_outputs(base, moved);
    CHECK(e.flips == 1);
    CHECK(std::fabs(e.mean_abs_dp - (std::fabs(moved.probs(3, 0) - base.probs(3, 0)) + 0.01) / in.size()) < 1e-15);

    HeadOutput a;
    a.kind = HeadKind::SequenceClassification;
    a.logits = Matrix(1, 2);
    a.logits << 0.0, std::log(3.0);  // p = (1/4, 3/4)
    a.probs = Matrix(1, 2);
    a.probs << 0.25, 0.75;
    a.item_mask = Vector::Ones(1);
    HeadOutput b = a;
    b.logits << std::log(3.0), 0.0;  // q = (3/4, 1/4)
    b.probs << 0.75, 0.25;
    const HeadEffect kl = compare_head_outputs(a, b);
    const double expected = 0.25 * std::log(0.25 / 0.75) + 0.75 * std::log(0.75 / 0.25);
    CHECK(std::fabs(kl.mean_kl - expected) < 1e-15);
    CHECK(kl.flips == 1);
    CHECK(kl.score() == kl.mean_kl);

    // The ablation table: no "-EMD" row for a task head, every row measured on every token.
    const auto standard = standard_ablations(rtd, false);
    CHECK(std::any_of(standard.begin(), standard.end(), [](const auto& a) { return a.first == "-EMD"; }));
    const auto rows = run_head_ablations(rtd, in, HeadKind::RTD, standard);
    REQUIRE(!rows.empty());
    for (const auto& r : rows) {
      CAPTURE(r.name);
      CHECK(r.name != "-EMD");
      if (r.error.empty()) CHECK(r.items == in.size());
    }
    for (size_t k = 1; k < rows.size(); ++k)
      if (rows[k].error.empty()) CHECK(rows[k - 1].score() >= rows[k].score());
  }
}
