// Golden tests: every tensor of every case in notebooks_data/golden/ (produced in float64 by the
// Hugging Face and microsoft/DeBERTa PyTorch code) reproduced at max abs error ≤ 1e-10.
#include "test_util.h"

#include "deberta/dump.h"
#include "deberta/model.h"
#include "deberta/safetensors.h"

#include <doctest/doctest.h>

#include <filesystem>

using namespace deberta;
namespace fs = std::filesystem;

namespace {

constexpr double kGoldenTolerance = 1e-10;

std::vector<std::string> golden_cases() {
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(test::source_path("notebooks_data/golden")))
    if (fs::exists(entry.path() / "golden.safetensors")) cases.push_back(entry.path().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("every golden tensor within 1e-10") {
    const auto cases = golden_cases();
    REQUIRE(cases.size() >= 5);
    for (const std::string& dir : cases) {
      CAPTURE(dir);
      const Model model = load_model(dir);
      const std::string golden_path = dir + "/golden.safetensors";
      const TensorMap golden = read_safetensors(golden_path);
      const Inputs inputs = inputs_from_tensors(golden, golden_path);
      const auto positions = masked_positions_from_tensors(golden, golden_path);
      const ForwardTrace trace = forward(model, inputs, {}, TraceLevel::Full, !positions.empty());
      TensorMap ours = trace_to_tensors(model, trace, positions, golden.count("mlm.logits") > 0);
      int compared = 0;
      double worst = 0;
      for (const auto& [name, ref] : golden) {
        if (name == "mlm.labels") continue;  // original ids: an input, not an output
        CAPTURE(name);
        auto it = ours.find(name);
        CHECK_MESSAGE(it != ours.end(), "we do not produce golden tensor " << name);
        if (it == ours.end()) continue;
        worst = std::max(worst, test::check_close(name, it->second, ref, kGoldenTolerance));
        ++compared;
      }
      MESSAGE(fs::path(dir).filename().string() << ": " << compared << " tensors, max abs error " << worst);
      CHECK(compared + (golden.count("mlm.labels") ? 1 : 0) == static_cast<int>(golden.size()));
    }
  }
}
