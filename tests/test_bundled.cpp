// The bundled model (notebooks_data/models/deberta-tiny, trained by notebooks_data/train_tiny.py)
// reproduced by the core: the float64 reference tensors its training script wrote for held-out
// sentences (notebooks_data/models/deberta-tiny-golden/golden_*.safetensors) at ≤ 1e-9.
#include "test_util.h"

#include "deberta/dump.h"
#include "deberta/model.h"
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
    const Model model = load_model(model_dir);
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(golden_dir))
      if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 5);
    for (const std::string& file : files) {
      CAPTURE(file);
      const TensorMap golden = read_safetensors(file);
      const Inputs inputs = inputs_from_tensors(golden, file);
      const auto positions = masked_positions_from_tensors(golden, file);
      const ForwardTrace trace = forward(model, inputs, {}, TraceLevel::Full, true);
      const TensorMap ours = trace_to_tensors(model, trace, positions, golden.count("mlm.logits") > 0);
      double worst = 0;
      int compared = 0;
      for (const auto& kv : golden) {
        const auto& name = kv.first;
        const auto& ref = kv.second;
        if (name == "mlm.labels" || !ours.count(name)) continue;
        worst = std::max(worst, test::check_close(name, ours.at(name), ref, 1e-9));
        ++compared;
      }
      CHECK(compared >= 10);
      CHECK(golden.count("mlm.masked_logits"));
      MESSAGE(fs::path(file).filename().string() << ": " << compared << " tensors, max abs error " << worst);
    }
  }

  TEST_CASE("the bundled model has a tokenizer with a [MASK] token and predicts at it") {
    const std::string model_dir = test::source_path("notebooks_data/models/deberta-tiny");
    REQUIRE(has_tokenizer(model_dir));
    const auto tok = load_tokenizer(model_dir);
    const Encoding enc = tok->encode("The cat sat on the [MASK].");
    CHECK(enc.ids.front() == tok->cls_id());
    CHECK(enc.ids.back() == tok->sep_id());
    CHECK(std::count(enc.ids.begin(), enc.ids.end(), tok->mask_id()) == 1);
  }
}
