// deberta diff: compares two tensor files (safetensors) name by name — how another implementation
// checks its dump against ours, and how the tests check the viewer's export against `deberta dump`.
#include "cli_common.h"
#include "commands.h"

#include "deberta/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

namespace deberta::cli {

namespace {
struct DiffArgs {
  std::string a, b;
  double tolerance = 1e-10;
  bool common_only = false;
};
}  // namespace

void register_diff(CLI::App* app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app->add_subcommand(
      "diff", "Compare two tensor files (safetensors, e.g. a `deberta dump` and your implementation's tensors) "
              "name by name: shape, then max |a - b| against a tolerance. Exit 1 when a tensor differs or is "
              "missing from one side.");
  cmd->add_option("A", args->a, "First file")->required();
  cmd->add_option("B", args->b, "Second file")->required();
  cmd->add_option("--tol", args->tolerance, "Largest accepted max |a - b| per tensor")
      ->check(finite_in(0.0, std::numeric_limits<double>::max()));
  cmd->add_flag("--common-only", args->common_only, "Compare the names both files have; do not fail on the others");
  cmd->callback([args] {
    const TensorMap a = read_safetensors(args->a);
    const TensorMap b = read_safetensors(args->b);
    int compared = 0, failed = 0;
    double worst = 0;
    for (const auto& [name, ta] : a) {
      const auto it = b.find(name);
      if (it == b.end()) {
        if (!args->common_only) std::printf("%-32s only in A\n", name.c_str()), ++failed;
        continue;
      }
      const Tensor& tb = it->second;
      ++compared;
      if (ta.shape != tb.shape) {
        std::printf("%-32s shape %s vs %s\n", name.c_str(), ta.shape_string().c_str(), tb.shape_string().c_str());
        ++failed;
        continue;
      }
      // Integer tensors (ids, relative positions) hold `i`, floating ones `f`: compare as doubles.
      const auto value = [](const Tensor& t, size_t k) { return t.f.empty() ? static_cast<double>(t.i[k]) : t.f[k]; };
      const size_t n = static_cast<size_t>(ta.numel());
      double err = 0;
      for (size_t k = 0; k < n; ++k) {
        const double x = value(ta, k), y = value(tb, k);
        const double d = x == y ? 0.0 : std::fabs(x - y);  // equal infinities are equal (numpy.allclose)
        if (!(d <= err)) err = std::isnan(d) ? INFINITY : d;  // NaN on one side counts as infinite
      }
      worst = std::max(worst, err);
      const bool ok = err <= args->tolerance;
      failed += !ok;
      std::printf("%-32s %-14s max |a - b| %.3e%s\n", name.c_str(), ta.shape_string().c_str(), err, ok ? "" : "  FAIL");
    }
    if (!args->common_only)
      for (const auto& [name, tb] : b)
        if (!a.count(name)) std::printf("%-32s only in B\n", name.c_str()), ++failed;
    std::printf("%d tensors compared, worst %.3e, tolerance %.1e: %s\n", compared, worst, args->tolerance,
                failed ? "DIFFERENT" : "equal within tolerance");
    if (failed && a.count("rel_pos") && b.count("rel_pos") && a.at("rel_pos").i != b.at("rel_pos").i)
      std::printf("hint: rel_pos differs: the files were made with different relative-position rules (hf or microsoft: "
                  "`deberta dump --relative-positions microsoft`; a golden case records its rule in run.json)\n");
    if (failed) throw Error(std::to_string(failed) + " tensor(s) differ or are missing");
  });
}

}  // namespace deberta::cli
