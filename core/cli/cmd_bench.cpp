// deberta bench: time the forward pass, count its FLOPs, compare with this machine's GEMM.
#include "cli_common.h"
#include "commands.h"

#include "deberta/bench.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

namespace deberta::cli {

namespace {
struct BenchArgs {
  std::string model;
  std::string preset;
  int64_t seq = 128;
  int threads = 1;
  int repeat = 5;
  std::string trace = "probs";
  bool json = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best-of-3 GFLOP/s of a 1024² float64 product at the current thread count.
double gemm_gflops() {
  const int64_t n = 1024;
  const Matrix a = Matrix::Random(n, n), b = Matrix::Random(n, n);
  Matrix c(n, n);
  double best = 0;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    best = std::max(best, 2.0 * n * n * n / seconds_since(t0) / 1e9);
  }
  return best + 0 * c(0, 0);
}
}  // namespace

void register_bench(CLI::App* app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app->add_subcommand("bench", "Time the float64 forward pass (encoder + EMD + MLM head at 15% masked positions): "
                                               "ms per forward, FLOPs, GFLOP/s, GEMM GFLOP/s of this machine, roofline efficiency, peak RSS.");
  auto* source = cmd->add_option_group("model source");
  source->add_option("--model", args->model, "Model directory");
  source->add_option("--preset", args->preset, "Random weights with real shapes: tiny, xsmall (deberta-v3-xsmall), base (deberta-base)")
      ->check(CLI::IsMember({"tiny", "xsmall", "base"}));
  source->require_option(1);
  cmd->add_option("--seq", args->seq, "Sequence length N")->check(CLI::Range(1, 100000));
  cmd->add_option("--threads", args->threads, "Threads (heads in parallel; Eigen GEMM)")->check(CLI::Range(1, 256));
  cmd->add_option("--repeat", args->repeat, "Timed repetitions (after one warm-up)")->check(CLI::Range(1, 1000));
  cmd->add_option("--trace", args->trace, "What the forward keeps: none, probs (the viewer's trace), full")
      ->check(CLI::IsMember({"none", "probs", "full"}));
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] {
    set_num_threads(args->threads);
    const Model model = args->preset.empty() ? load_model_with_progress(args->model) : make_preset_model(args->preset, 1);
    const int64_t N = args->seq;
    if (N > model.config.max_position_embeddings)
      throw Error("--seq " + std::to_string(N) + " is longer than max_position_embeddings = " +
                  std::to_string(model.config.max_position_embeddings));
    Inputs in;
    std::mt19937_64 rng(7);
    for (int64_t n = 0; n < N; ++n) in.input_ids.push_back(static_cast<int64_t>(rng() % model.config.vocab_size));
    std::vector<int64_t> positions;
    for (int64_t n = 0; n < N; n += 7) positions.push_back(n);  // ~15% of the tokens
    const bool decoder = model.weights.lm_head.has_value();
    const bool emd = decoder && runs_emd(model);
    const TraceLevel level = args->trace == "full" ? TraceLevel::Full : args->trace == "none" ? TraceLevel::None : TraceLevel::Probs;
    std::vector<double> ms;
    for (int r = 0; r <= args->repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const ForwardTrace trace = forward(model, in, {}, level, decoder);
      const Matrix logits = model.weights.lm_head ? mlm_logits(model, trace.decoder_output(), positions) : Matrix();
      if (r > 0) ms.push_back(1e3 * seconds_since(t0));  // r = 0 is the warm-up
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2], best = ms.front();
    const double flops = forward_flops(model, N, model.weights.lm_head ? static_cast<int64_t>(positions.size()) : 0, emd);
    const double achieved = flops / (median / 1e3) / 1e9;
    const double gemm = gemm_gflops();
    const double rss_mb = peak_rss_bytes() / 1048576.0;
    const std::string name = args->preset.empty() ? args->model : args->preset;
    if (args->json) {
      nlohmann::json j = {{"model", name}, {"seq", N}, {"threads", args->threads}, {"trace", args->trace},
                          {"repeat", args->repeat}, {"median_ms", median}, {"min_ms", best}, {"gflop", flops / 1e9},
                          {"gflops", achieved}, {"gemm_gflops", gemm}, {"roofline_efficiency", achieved / gemm},
                          {"peak_rss_mb", rss_mb}, {"emd", emd}, {"masked_positions", positions.size()}};
      std::printf("%s\n", j.dump(2).c_str());
      return;
    }
    std::printf("model %s, N = %lld, %d thread(s), trace %s, EMD %s, %zu masked positions\n", name.c_str(),
                static_cast<long long>(N), args->threads, args->trace.c_str(), emd ? "on" : "off", positions.size());
    std::printf("forward: median %.2f ms, min %.2f ms over %d runs\n", median, best, args->repeat);
    std::printf("work: %.3f GFLOP -> %.1f GFLOP/s; GEMM 1024^2 here: %.1f GFLOP/s; roofline efficiency %.2f\n",
                flops / 1e9, achieved, gemm, achieved / gemm);
    std::printf("peak RSS: %.0f MB\n", rss_mb);
  });
}

}  // namespace deberta::cli
