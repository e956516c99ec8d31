// The shipped replaced-token-detection discriminator (notebooks_data/models/deberta-tiny-rtd,
// trained by notebooks_data/train/train_rtd.py the DeBERTa-v3 way with deberta-tiny as the generator)
// reproduced by the core: the float64 tensors its training script wrote with the PyTorch twin on
// the stored F16 weights (notebooks_data/models/deberta-tiny-rtd-golden/golden_*.safetensors:
// embedding_output, layer.{l}.output, rtd.logits) at ≤ 1e-9; the checkpoint is read as a v3
// discriminator (RTD by default, MLM head flagged as untrained); the tokenizer gives the ids the
// references were computed on.
#include "test_util.h"

#include "deberta/heads.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"
#include "deberta/tokenizer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

using namespace deberta;
namespace fs = std::filesystem;

namespace {

const char* kModel = "notebooks_data/models/deberta-tiny-rtd";
const char* kGolden = "notebooks_data/models/deberta-tiny-rtd-golden";

std::vector<std::string> golden_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(test::source_path(kGolden)))
    if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_SUITE("bundled") {
  TEST_CASE("the shipped RTD discriminator reproduces its PyTorch reference within 1e-9") {
    const std::string model_dir = test::source_path(kModel);
    REQUIRE(fs::exists(model_dir + "/config.json"));
    const auto files = golden_files();
    // train_rtd.py writes GOLDEN_TEXTS (3 sentences) + one generator-corrupted held-out sentence.
    REQUIRE(files.size() == 4);
    for (const std::string& file : files) {
      CAPTURE(file);
      // embedding_output + 4 layer outputs + rtd.logits
      CHECK(test::check_case(model_dir, file, file, 1e-9) >= 6);
      const TensorMap g = read_safetensors(file);
      REQUIRE(g.count("rtd.logits"));
      CHECK(g.at("rtd.logits").shape == std::vector<int64_t>{g.at("input_ids").shape.at(1)});
    }
  }

  TEST_CASE("the shipped RTD discriminator is read as a v3 discriminator: RTD by default, MLM flagged") {
    const Model model = load_model(test::source_path(kModel));
    REQUIRE(model.config.architectures.size() == 1);
    CHECK(model.config.architectures[0] == "DebertaV2ForPreTraining");
    CHECK(default_head(model) == HeadKind::RTD);
    const auto heads = available_heads(model);
    // Like the released v3 discriminators it also carries an lm_predictions head it never trained.
    CHECK(std::find(heads.begin(), heads.end(), HeadKind::MLM) != heads.end());
    CHECK(!head_note(model, HeadKind::MLM).empty());
    CHECK(head_note(model, HeadKind::RTD).empty());
  }

  TEST_CASE("the tokenizer of the shipped RTD discriminator gives the ids its references were computed on") {
    // golden_0..2 are train_rtd.py's GOLDEN_TEXTS, in that order; the card's `deberta rtd --text`
    // outputs are for these sentences.
    const char* texts[] = {"the king sat on his throne", "the king sat on his banana",
                           "She poured the milk into a glass and drank it."};
    const auto tok = load_tokenizer(test::source_path(kModel));
    const auto files = golden_files();
    REQUIRE(files.size() >= 3);
    for (int k = 0; k < 3; ++k) {
      CAPTURE(texts[k]);
      const TensorMap golden = read_safetensors(files[k]);
      const Tensor& ids = golden.at("input_ids");
      const Encoding enc = tok->encode(texts[k]);
      REQUIRE(static_cast<int64_t>(enc.ids.size()) == ids.shape.at(1));
      for (size_t i = 0; i < enc.ids.size(); ++i) {
        CAPTURE(i);
        CHECK(enc.ids[i] == ids.i.at(i));
      }
    }
  }
}
