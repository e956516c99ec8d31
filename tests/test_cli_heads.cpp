// The task-head commands as a user runs them on the golden task checkpoints (no tokenizer: --ids):
// classify, rtd, predict / ablate / dump --head, and their errors.
#include "test_util.h"

#include "deberta/heads.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"
#include "deberta/tokenizer.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace deberta;

namespace {
const char* kRtdIds = " --ids 46,30,9,42,15,8,39,44,29,4,36,26";
const char* kNliIds = " --ids 9,46,23,50,19,31,9,41,51,39,10,53,55";
std::string golden(const char* name) { return test::source_path(std::string("notebooks_data/golden/") + name); }

nlohmann::json json_of(const test::CliRun& r) {
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  const auto start = r.output.find('{');
  REQUIRE_MESSAGE(start != std::string::npos, r.output);
  return nlohmann::json::parse(r.output.substr(start));
}
}  // namespace

TEST_SUITE("cli") {
  TEST_CASE("classify prints the golden classifier's label probabilities") {
    const nlohmann::json j = json_of(test::run_cli("classify --json --model " + golden("v2_cls_nli") + kNliIds));
    const TensorMap ref = read_safetensors(golden("v2_cls_nli") + "/golden.safetensors");
    const auto& logits = ref.at("cls.logits").f;
    REQUIRE(j["output"]["head"] == "cls");
    const auto& labels = j["output"]["labels"];
    REQUIRE(labels.size() == 3);
    const char* names[] = {"CONTRADICTION", "NEUTRAL", "ENTAILMENT"};
    double z = 0;
    for (double l : logits) z += std::exp(l);
    for (int c = 0; c < 3; ++c) {
      CAPTURE(c);
      CHECK(labels[c]["label"] == names[c]);
      CHECK(std::fabs(labels[c]["logit"].get<double>() - logits[c]) <= 1e-10);
      CHECK(std::fabs(labels[c]["probability"].get<double>() - std::exp(logits[c]) / z) <= 1e-10);
    }
    const int best = static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    CHECK(j["output"]["prediction"] == names[best]);
    const test::CliRun text = test::run_cli("classify --model " + golden("v2_cls_nli") + kNliIds);
    CHECK(text.exit_code == 0);
    for (const char* n : names) CHECK_MESSAGE(text.output.find(n) != std::string::npos, text.output);
  }

  TEST_CASE("rtd prints each token's replaced probability; predict defaults to the RTD head") {
    const TensorMap ref = read_safetensors(golden("v3_rtd") + "/golden.safetensors");
    const auto& logits = ref.at("rtd.logits").f;
    for (const std::string cmd : {"rtd", "predict"}) {
      CAPTURE(cmd);
      const nlohmann::json j = json_of(test::run_cli(cmd + " --json --model " + golden("v3_rtd") + kRtdIds));
      REQUIRE(j["output"]["head"] == "rtd");
      const auto& tokens = j["output"]["tokens"];
      REQUIRE(tokens.size() == logits.size());
      for (size_t i = 0; i < logits.size(); ++i) {
        CAPTURE(i);
        CHECK(std::fabs(tokens[i]["logit"].get<double>() - logits[i]) <= 1e-10);
        CHECK(std::fabs(tokens[i]["p_replaced"].get<double>() - 1 / (1 + std::exp(-logits[i]))) <= 1e-10);
        CHECK(tokens[i]["replaced"] == (logits[i] > 0));
      }
    }
    // --head mlm still reaches the (untrained) MLM head, with a note saying so.
    const test::CliRun mlm = test::run_cli("predict --head mlm --model " + golden("v3_rtd") + kRtdIds + " --positions 2");
    CHECK(mlm.exit_code == 0);
    CHECK_MESSAGE(mlm.output.find("never trained") != std::string::npos, mlm.output);
    CHECK_MESSAGE(mlm.output.find("position 2:") != std::string::npos, mlm.output);
  }

  TEST_CASE("ablate measures the model's head: label KL / flips, mean |dp| / flips at 0.5") {
    test::CliRun r = test::run_cli("ablate --json --model " + golden("v2_cls_nli") + kNliIds);
    nlohmann::json j = json_of(r);
    CHECK(j["head"] == "cls");
    REQUIRE(j["rows"].size() > 3);
    bool some_effect = false;
    for (const auto& row : j["rows"]) {
      CHECK(row.contains("mean_kl"));
      CHECK(row["items"] == 1);
      CHECK(row["ablation"] != "-EMD");
      some_effect = some_effect || row["mean_kl"].get<double>() > 1e-6;
    }
    CHECK(some_effect);
    r = test::run_cli("ablate --json --model " + golden("v3_rtd") + kRtdIds);
    j = json_of(r);
    CHECK(j["head"] == "rtd");
    for (const auto& row : j["rows"]) {
      CHECK(row.contains("mean_abs_dp"));
      CHECK(row["items"] == 12);
      CHECK(row["ablation"] != "-EMD");
    }
    r = test::run_cli("ablate --model " + golden("v3_rtd") + kRtdIds + " --no-heads");
    CHECK(r.exit_code == 0);
    for (const char* s : {"mean |dp|", "-c2p", "-p2c"}) CHECK_MESSAGE(r.output.find(s) != std::string::npos, s);
    // classify / rtd with an ablation: baseline, ablated and the effect.
    r = test::run_cli("classify --model " + golden("v2_cls_nli") + kNliIds + " --terms c2c,c2p");
    CHECK(r.exit_code == 0);
    CHECK_MESSAGE(r.output.find("mean KL(baseline || ablated)") != std::string::npos, r.output);
    r = test::run_cli("rtd --model " + golden("v3_rtd") + kRtdIds + " --head-mask 1:1");
    CHECK(r.exit_code == 0);
    CHECK_MESSAGE(r.output.find("decisions flipped at 0.5") != std::string::npos, r.output);
  }

  TEST_CASE("dump --head keeps one head's tensors") {
    const std::string out = "/tmp/deberta_cli_heads_rtd.safetensors";
    test::CliRun r = test::run_cli("dump --model " + golden("v3_rtd") + kRtdIds + " --head rtd --out " + out);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    const TensorMap t = read_safetensors(out);
    CHECK(t.count("rtd.logits"));
    CHECK(t.count("layer.1.output"));
    r = test::run_cli("dump --model " + golden("v3_rtd") + kRtdIds + " --head mlm --out " + out);
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    CHECK(!read_safetensors(out).count("rtd.logits"));
  }

  TEST_CASE("classify --text A --pair B: [CLS] A [SEP] B [SEP], token types 0 / 1, same numbers as the core") {
    // The bundled model with its tokenizer, given a token-type table, a pooler and a 2-label
    // classifier (deterministic values): a sentence-pair classifier with a real tokenizer.
    namespace fs = std::filesystem;
    const fs::path src = test::source_path("notebooks_data/models/deberta-tiny");
    const fs::path dir = test::fresh_temp_dir("deberta_cli_heads_pair");
    for (const char* f : {"spm.model", "special_tokens_map.json", "tokenizer_config.json"})
      if (fs::exists(src / f)) fs::copy_file(src / f, dir / f);
    nlohmann::json cfg = nlohmann::json::parse(std::ifstream(src / "config.json"));
    cfg["architectures"] = {"DebertaV2ForSequenceClassification"};
    cfg["id2label"] = {{"0", "no"}, {"1", "yes"}};
    cfg["type_vocab_size"] = 2;
    std::ofstream(dir / "config.json") << cfg.dump(2);
    TensorMap t = read_weights_file((src / "model.safetensors").string());
    const int64_t H = cfg["hidden_size"].get<int64_t>();
    const int64_t E = cfg.value("embedding_size", H);
    auto f64 = [](std::vector<int64_t> shape, double seed) {
      Tensor x;
      x.dtype = DType::F64;
      x.shape = std::move(shape);
      x.f.resize(x.numel());
      for (size_t k = 0; k < x.f.size(); ++k) x.f[k] = 0.2 * std::sin(seed + 0.37 * static_cast<double>(k));
      return x;
    };
    t["deberta.embeddings.token_type_embeddings.weight"] = f64({2, E}, 0.5);
    t["pooler.dense.weight"] = f64({H, H}, 1.0);
    t["pooler.dense.bias"] = f64({H}, 2.0);
    t["classifier.weight"] = f64({2, H}, 3.0);
    t["classifier.bias"] = f64({2}, 4.0);
    write_safetensors((dir / "model.safetensors").string(), t);

    const nlohmann::json j =
        json_of(test::run_cli("classify --json --model " + dir.string() + " --text 'a dog runs' --pair 'an animal moves'"));
    const auto ids = j["input_ids"].get<std::vector<int64_t>>();
    const auto types = j["token_type_ids"].get<std::vector<int64_t>>();
    const Model model = load_model(dir.string());
    const auto tok = load_tokenizer(dir.string());
    REQUIRE(ids.size() == types.size());
    REQUIRE(ids.size() >= 5);
    CHECK(ids.front() == tok->cls_id());
    CHECK(ids.back() == tok->sep_id());
    CHECK(std::count(ids.begin(), ids.end(), tok->sep_id()) == 2);
    const size_t first_sep = std::find(ids.begin(), ids.end(), tok->sep_id()) - ids.begin();
    for (size_t i = 0; i < ids.size(); ++i) CHECK(types[i] == (i <= first_sep ? 0 : 1));
    Inputs in;
    in.input_ids = ids;
    in.token_type_ids = types;
    const HeadOutput ref = predict_head(model, in, HeadKind::SequenceClassification);
    for (int c = 0; c < 2; ++c) {
      CHECK(std::fabs(j["output"]["labels"][c]["logit"].get<double>() - ref.logits(0, c)) <= 1e-12);
      CHECK(j["output"]["labels"][c]["label"] == (c ? "yes" : "no"));
    }
    // The token types matter: all-zero types give other logits.
    in.token_type_ids.assign(ids.size(), 0);
    CHECK(std::fabs(predict_head(model, in, HeadKind::SequenceClassification).logits(0, 0) - ref.logits(0, 0)) > 1e-9);
    // An empty pair is a pair: HF's tokenizer gives [CLS] a [SEP] [SEP], the last [SEP] of type 1.
    const nlohmann::json empty = json_of(test::run_cli("classify --json --model " + dir.string() + " --text 'a dog' --pair ''"));
    const auto e_ids = empty["input_ids"].get<std::vector<int64_t>>();
    const auto e_types = empty["token_type_ids"].get<std::vector<int64_t>>();
    REQUIRE(e_ids.size() >= 4);
    CHECK(e_ids[e_ids.size() - 1] == tok->sep_id());
    CHECK(e_ids[e_ids.size() - 2] == tok->sep_id());
    CHECK(e_types.back() == 1);
    CHECK(e_types[e_types.size() - 2] == 0);
    fs::remove_all(dir);
  }

  TEST_CASE("eval: the shipped classifier over labelled pairs, as trained and without c2p") {
    namespace fs = std::filesystem;
    const std::string model = test::source_path("notebooks_data/models/deberta-tiny-wordnet-match");
    const std::string data = model + "/heldout.tsv";
    const nlohmann::json base = json_of(test::run_cli("eval --json --labeled --max-lines 20 --model " + model + " --data " + data));
    CHECK(base["head"] == "cls");
    CHECK(base["examples"] == 20);
    CHECK(base["ablation"] == "baseline");
    CHECK(!base.contains("flips"));
    // The accuracy is the fraction of lines whose most probable label is the gold one: recount it
    // line by line with `classify`, through the same tokenizer.
    std::ifstream in(data);
    int correct = 0;
    std::string line;
    for (int n = 0; n < 20 && std::getline(in, line); ++n) {
      const auto t1 = line.find('\t'), t2 = line.rfind('\t');
      const std::string a = line.substr(0, t1), b = line.substr(t1 + 1, t2 - t1 - 1), gold = line.substr(t2 + 1);
      const std::string tmp = (fs::temp_directory_path() / "deberta_eval_pair.txt").string();
      std::ofstream(tmp) << a << "\n" << b << "\n";  // through a file: no shell quoting of the text
      const nlohmann::json c = json_of(test::run_cli("classify --json --model " + model + " --text \"$(sed -n 1p " + tmp +
                                                     ")\" --pair \"$(sed -n 2p " + tmp + ")\""));
      correct += c["output"]["prediction"] == gold;
    }
    CHECK(base["accuracy"].get<double>() == doctest::Approx(correct / 20.0).epsilon(1e-12));
    const nlohmann::json ablated =
        json_of(test::run_cli("eval --json --labeled --max-lines 20 --terms c2c,p2c --model " + model + " --data " + data));
    CHECK(ablated["ablation"] == "-c2p");
    CHECK(ablated["accuracy"] == base["accuracy"]);
    CHECK(ablated["mean_kl"].get<double>() > 0);
    CHECK(ablated["flips"].get<int>() <= 20);
    // |accuracy change| ≤ flips / examples: a line can change correctness only by flipping.
    CHECK(std::fabs(ablated["accuracy_ablated"].get<double>() - ablated["accuracy"].get<double>()) <=
          ablated["flips"].get<double>() / 20 + 1e-12);
  }

  TEST_CASE("eval on a masked-LM model points to eval-mlm; bad lines name the file and line") {
    const test::CliRun mlm = test::run_cli("eval --data " + test::source_path("notebooks_data/corpus/heldout.txt"));
    CHECK(mlm.exit_code == 1);
    CHECK(mlm.output.find("deberta eval-mlm") != std::string::npos);
    const std::string model = test::source_path("notebooks_data/models/deberta-tiny-wordnet-match");
    const std::string bad = (std::filesystem::temp_directory_path() / "deberta_eval_bad.tsv").string();
    std::ofstream(bad) << "word\tgloss\tMATCH\nword\tgloss\tPERHAPS\n";
    const test::CliRun r = test::run_cli("eval --labeled --model " + model + " --data " + bad);
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(r.output.find(bad + ":2: label 'PERHAPS'") != std::string::npos, r.output);
  }

  TEST_CASE("head errors exit 1 with one line") {
    const auto fails = test::check_fails_in_one_line;
    fails("classify --model " + golden("v3_rtd") + kRtdIds, "has no classifier head");
    fails("rtd --model " + golden("v2_cls_nli") + kNliIds, "has no replaced-token detection head");
    fails("predict --head tokcls --model " + golden("v2_cls_nli") + kNliIds, "it has: cls");
    fails("predict --head ner --model " + golden("v2_cls_nli") + kNliIds, "unknown head 'ner'");
    fails("classify --model " + golden("v2_cls_nli") + kNliIds + " --token-types 0,1", "--token-types has 2 entries");
    fails("classify --model " + golden("v2_cls_nli") + " --text a --pair b", "no tokenizer");
  }
}
