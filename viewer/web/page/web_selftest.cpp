// web_selftest.cpp — `index.html?selftest`: every golden case bundled in the site (/golden/<case>:
// config.json, model.safetensors, golden.safetensors from the reference PyTorch implementations)
// run inside the page in float64, each of its tensors within 1e-10 (max absolute difference) of
// the reference, as tests/test_golden.cpp checks on the desktop.
#include "deberta/dump.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr double kTolerance = 1e-10;

// The largest |ours − reference| over one tensor, or infinity when the shapes differ.
double max_abs_difference(const deberta::Tensor& ours, const deberta::Tensor& ref) {
  if (ours.shape != ref.shape) return INFINITY;
  double worst = 0;
  if (!ref.f.empty()) {
    if (ours.f.size() != ref.f.size()) return INFINITY;
    for (size_t k = 0; k < ref.f.size(); ++k) {
      const double d = std::abs(ours.f[k] - ref.f[k]);
      if (std::isnan(d) && !(std::isnan(ours.f[k]) && std::isnan(ref.f[k]))) return INFINITY;
      if (!std::isnan(d) && !(std::isinf(ours.f[k]) && ours.f[k] == ref.f[k])) worst = std::max(worst, d);
    }
  } else {
    if (ours.i != ref.i) return INFINITY;
  }
  return worst;
}

// One case: "" when every tensor agrees, else what failed.
std::string run_case(const std::string& dir) {
  using namespace deberta;
  const Model model = load_model(dir);
  const TensorMap golden = read_safetensors(dir + "/golden.safetensors");
  const Inputs inputs = inputs_from_tensors(golden, dir);
  const auto positions = masked_positions_from_tensors(golden, dir);
  const ForwardTrace trace = forward(model, inputs, Ablation{}, TraceLevel::Full, !positions.empty());
  const TensorMap ours = trace_to_tensors(model, trace, positions, golden.count("mlm.logits") > 0);
  for (const auto& [name, ref] : golden) {
    if (name == "mlm.labels") continue;
    const auto it = ours.find(name);
    if (it == ours.end()) return name + ": not computed";
    const double d = max_abs_difference(it->second, ref);
    if (!(d <= kTolerance)) return name + ": max abs difference " + std::to_string(d);
  }
  return "";
}

}  // namespace

std::string web_run_selftest() {
  namespace fs = std::filesystem;
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/golden", ec))
    if (fs::exists(entry.path() / "golden.safetensors")) cases.push_back(entry.path().string());
  std::sort(cases.begin(), cases.end());
  int passed = 0, failed = 0;
  for (const std::string& dir : cases) {
    std::string problem;
    try {
      problem = run_case(dir);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (problem.empty()) {
      ++passed;
    } else {
      ++failed;
      std::fprintf(stderr, "selftest: %s: %s\n", dir.c_str(), problem.c_str());
    }
  }
  std::printf("selftest: %d passed, %d failed\n", passed, failed);
  return "selftest: " + std::to_string(passed) + " passed, " + std::to_string(failed) + " failed";
}
