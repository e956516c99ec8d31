// deberta_consumer — checks an installed DeBERTa Explorer on one golden case.
//
//   deberta_consumer CASE_DIR [TENSOR]
//
// Loads the model of a case in notebooks_data/golden/ (golden.safetensors: inputs and expected
// tensors) or notebooks_data/golden_extra/ (inputs.safetensors + expected.safetensors), runs the
// traced forward pass through the public API only (deberta/dump.h, deberta/safetensors.h), and
// compares one tensor with the case's expected one: TENSOR, default the last encoder layer's output
// `layer.{L-1}.output [N, H]`. Exit 0 when max |ours − expected| ≤ 1e-10 (the golden tolerance of
// tests/test_golden.cpp), 1 when larger, 2 on any error (message on stderr).
#include <deberta/dump.h>
#include <deberta/model_io.h>
#include <deberta/safetensors.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s CASE_DIR [TENSOR]\n", argv[0]);
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    const bool single = std::filesystem::exists(dir / "golden.safetensors");
    const std::string expected_path = (dir / (single ? "golden.safetensors" : "expected.safetensors")).string();
    const std::string inputs_path = (dir / (single ? "golden.safetensors" : "inputs.safetensors")).string();

    const deberta::Model model = deberta::load_model(dir.string());
    const deberta::TensorMap expected = deberta::read_safetensors(expected_path);
    const deberta::TensorMap input_file = deberta::read_safetensors(inputs_path);
    const deberta::Inputs inputs = deberta::inputs_from_tensors(input_file, inputs_path);
    const auto positions = deberta::masked_positions_from_tensors(input_file, inputs_path);
    const deberta::ForwardTrace trace =
        deberta::forward(model, inputs, {}, deberta::TraceLevel::Full, !positions.empty());
    const deberta::TensorMap ours = deberta::trace_to_tensors(model, trace, positions);

    const std::string name =
        argc == 3 ? argv[2] : "layer." + std::to_string(model.config.num_hidden_layers - 1) + ".output";
    const auto e = expected.find(name);
    const auto o = ours.find(name);
    if (e == expected.end()) throw deberta::Error(expected_path + ": no tensor " + name);
    if (o == ours.end()) throw deberta::Error("the forward pass produced no tensor " + name);
    if (e->second.shape != o->second.shape)
      throw deberta::Error(name + ": shape " + o->second.shape_string() + " but expected " + e->second.shape_string());
    if (o->second.f.size() != e->second.f.size() || o->second.f.empty())
      throw deberta::Error(name + ": not a floating tensor on both sides");
    double worst = 0;
    size_t worst_at = 0;
    for (size_t k = 0; k < o->second.f.size(); ++k) {
      const double d = std::fabs(o->second.f[k] - e->second.f[k]);
      if (!(d <= worst)) {  // also catches NaN
        worst = std::isnan(d) ? INFINITY : d;
        worst_at = k;
      }
    }
    const double tolerance = 1e-10;
    std::printf("%s %s %s: max |ours - expected| = %.3e at flat index %zu (ours %.17g, expected %.17g), tolerance %.0e\n",
                dir.filename().string().c_str(), name.c_str(), o->second.shape_string().c_str(), worst, worst_at,
                o->second.f[worst_at], e->second.f[worst_at], tolerance);
    return worst <= tolerance ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "deberta_consumer: %s\n", ex.what());
    return 2;
  }
}
