// The bundled model (notebooks_data/models/deberta-tiny, trained by notebooks_data/train/train_tiny.py)
// reproduced by the core: the float64 reference tensors its training script wrote for held-out
// sentences (notebooks_data/models/deberta-tiny-golden/golden_*.safetensors) at ≤ 1e-9.
#include "test_util.h"

#include "deberta/analysis.h"
#include "deberta/dump.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"
#include "deberta/tokenizer.h"

#include <doctest/doctest.h>

#include <filesystem>

using namespace deberta;
namespace fs = std::filesystem;

TEST_SUITE("bundled") {
  TEST_CASE("the bundled model reproduces its PyTorch reference within 1e-9") {
    const std::string model_dir = test::source_path("notebooks_data/models/deberta-tiny");
    const std::string golden_dir = test::source_path("notebooks_data/models/deberta-tiny-golden");
    REQUIRE(fs::exists(model_dir + "/config.json"));
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(golden_dir))
      if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 5);
    for (const std::string& file : files) {
      CAPTURE(file);
      CHECK(test::check_case(model_dir, file, file, 1e-9) >= 10);
      CHECK(read_safetensors(file).count("mlm.masked_logits"));
    }
  }

  TEST_CASE("the 512-token bundled model reproduces its PyTorch reference within 1e-9, up to 512 tokens") {
    // notebooks_data/models/deberta-tiny-512 (train_long.py): six held-out sentences as for
    // deberta-tiny, and two sequences of 300 and 512 tokens (make_tiny_golden.py --long), whose files
    // hold the layer outputs, the EMD outputs and the logits at 12 masked positions.
    const std::string model_dir = test::source_path("notebooks_data/models/deberta-tiny-512");
    const std::string golden_dir = test::source_path("notebooks_data/models/deberta-tiny-512-golden");
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(golden_dir))
      if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() == 8);
    int64_t longest = 0;
    for (const std::string& file : files) {
      CAPTURE(file);
      const TensorMap g = read_safetensors(file);
      longest = std::max(longest, g.at("input_ids").shape.back());
      CHECK(test::check_case(model_dir, file, file, 1e-9) >= 9);
      CHECK(g.count("mlm.masked_logits"));
    }
    CHECK(longest == 512);
  }

  TEST_CASE("every model of the trained-ablation zoo reproduces its PyTorch reference within 1e-9") {
    // notebooks_data/models/zoo (docs/table4.md): each variant is run as its config.json says it was
    // trained (deberta_explorer keys, no position table = no EMD, absolute positions at the input),
    // and must match the float64 tensors of notebooks_data/zoo/make_zoo_golden.sh.
    const fs::path zoo = test::source_path("notebooks_data/models/zoo");
    const fs::path golden_root = test::source_path("notebooks_data/models/zoo-golden");
    REQUIRE(fs::is_directory(zoo));
    int models = 0;
    for (const auto& e : fs::directory_iterator(zoo)) {
      if (!fs::exists(e.path() / "config.json")) continue;
      const std::string name = e.path().filename().string();
      CAPTURE(name);
      const fs::path golden_dir = golden_root / name;
      REQUIRE_MESSAGE(fs::is_directory(golden_dir), "no reference tensors for " << name << " (run make_zoo_golden.sh)");
      int files = 0;
      for (const auto& g : fs::directory_iterator(golden_dir)) {
        if (g.path().extension() != ".safetensors") continue;
        CAPTURE(g.path().string());
        CHECK(test::check_case(e.path().string(), g.path().string(), g.path().string(), 1e-9) >= 10);
        ++files;
      }
      CHECK(files >= 2);
      ++models;
    }
    CHECK(models >= 7);
  }

  TEST_CASE("the shipped WordNet-match classifier reproduces its PyTorch reference within 1e-9") {
    // notebooks_data/train/finetune_cls.py: deberta-tiny fine-tuned as DebertaV2ForSequenceClassification
    // (F16 weights); its float64 reference holds the layer outputs, cls.pooled and cls.logits.
    const fs::path model = test::source_path("notebooks_data/models/deberta-tiny-wordnet-match");
    const fs::path golden = test::source_path("notebooks_data/models/deberta-tiny-wordnet-match-golden");
    int files = 0;
    for (const auto& g : fs::directory_iterator(golden)) {
      if (g.path().extension() != ".safetensors") continue;
      CAPTURE(g.path().string());
      CHECK(test::check_case(model.string(), g.path().string(), g.path().string(), 1e-9) >= 6);
      CHECK(read_safetensors(g.path().string()).count("cls.logits"));
      ++files;
    }
    CHECK(files == 2);
  }

  TEST_CASE("the bundled model has a tokenizer with a [MASK] token and predicts at it") {
    const std::string model_dir = test::source_path("notebooks_data/models/deberta-tiny");
    REQUIRE(has_tokenizer(model_dir));
    const auto tok = load_tokenizer(model_dir);
    const Encoding enc = tok->encode("The cat sat on the [MASK].");
    CHECK(enc.ids.front() == tok->cls_id());
    CHECK(enc.ids.back() == tok->sep_id());
    CHECK(std::count(enc.ids.begin(), enc.ids.end(), tok->mask_id()) == 1);
    // ... and predicts at it: a distribution over the vocabulary whose top-1 is an ordinary word
    // piece, and "the" ranks high after "on" (the model has seen the phrase thousands of times).
    const Model model = load_model(model_dir);
    Inputs in;
    in.input_ids = enc.ids;
    const auto pos = find_mask_positions(in, tok->mask_id());
    REQUIRE(pos.size() == 1);
    const auto preds = predict_masked(model, in, pos, {}, 5);
    REQUIRE(preds.size() == 1);
    CHECK(preds[0].log_probs.size() == model.config.vocab_size);
    CHECK(std::abs(preds[0].log_probs.array().exp().sum() - 1.0) < 1e-12);
    CHECK(preds[0].top[0].id > 4);  // not a special token
    const Encoding sat = tok->encode("He sat on [MASK] floor.");
    Inputs in2;
    in2.input_ids = sat.ids;
    const auto p2 = predict_masked(model, in2, find_mask_positions(in2, tok->mask_id()), {}, 5);
    const auto the = tok->encode("the").ids;  // [CLS] ▁the [SEP]
    REQUIRE(the.size() == 3);
    bool the_in_top5 = false;
    for (const auto& t : p2.at(0).top) the_in_top5 |= t.id == the[1];
    CHECK_MESSAGE(the_in_top5, "top-5 after 'He sat on' should contain 'the'");
  }
}
