// forward_bench.cpp — the forward pass timed as the web edition runs it (issue 41, item 7;
// docs/web.md "Speed", docs/performance.md "In the browser").
//
// One source, three builds: the desktop (`forward_bench`, the reference logits), WebAssembly for
// node (`forward_bench_wasm.js`, one thread; `forward_bench_wasm_mt.js`, emscripten pthreads) and
// the same programs in a browser page (viewer/web/bench/bench.html). It times what `deberta bench` times
// (core/cli/cmd_bench.cpp) with the core's own pieces: `make_preset_model` (seeded random weights
// with a real model's shapes, seed 1 as `bench`), `bench_inputs` / `bench_positions` (N token ids,
// every 7th position masked), `forward` keeping the probability trace, then the MLM head
// (`mlm_logits`) at the masked positions.
//
//   forward_bench [--preset xsmall | --model DIR] [--seq 128] [--threads 1] [--repeat 5]
//                 [--save FILE | --check FILE]
//
// --model DIR times a model folder instead of a preset (`deberta bench --model`; node reads it
// through NODERAWFS): the bundled multilingual model and the base-shaped one of bench_page.py.
//
// --save writes the warm-up run's MLM logits (magic "DBLOGIT1", rows, cols as int64, then the
// doubles, row-major); --check reads such a file and compares every logit: the largest absolute
// difference must be ≤ 1e-10, else it prints the worst entry (ours, the reference, the error) and
// exits 1. The last line is `RESULT {json}` (median, minimum, the two parts, GFLOP/s, threads,
// SIMD) for scripts. Bad arguments: one line naming the argument, exit 2.
#include "analysis/bench.h"
#include "deberta/backend.h"
#include "deberta/model.h"
#include "deberta/model_io.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Args {
  std::string preset = "xsmall";
  std::string model;  ///< a model folder instead of the preset
  int64_t seq = 128;
  int threads = 1;
  int repeat = 5;
  std::string save, check;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "forward_bench: %s\n", message.c_str());
  std::exit(2);
}

int64_t parse_int(const std::string& flag, const char* text, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (!*text || *end || v < lo || v > hi)
    usage_error(flag + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], found '" + text + "'");
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage_error(flag + " needs a value (flags: --preset --model --seq --threads --repeat --save --check)");
    const char* value = argv[++i];
    if (flag == "--preset") a.preset = value;
    else if (flag == "--model") a.model = value;
    else if (flag == "--seq") a.seq = parse_int(flag, value, 1, 512);
    else if (flag == "--threads") a.threads = static_cast<int>(parse_int(flag, value, 1, deberta::kMaxThreads));
    else if (flag == "--repeat") a.repeat = static_cast<int>(parse_int(flag, value, 1, 1000));
    else if (flag == "--save") a.save = value;
    else if (flag == "--check") a.check = value;
    else usage_error("unknown flag '" + flag + "' (flags: --preset --model --seq --threads --repeat --save --check)");
  }
  if (!a.save.empty() && !a.check.empty()) usage_error("--save and --check exclude each other");
  return a;
}

constexpr char kMagic[8] = {'D', 'B', 'L', 'O', 'G', 'I', 'T', '1'};

void save_logits(const std::string& path, const deberta::Matrix& logits) {
  std::ofstream f(path, std::ios::binary);
  const int64_t shape[2] = {logits.rows(), logits.cols()};
  f.write(kMagic, sizeof kMagic);
  f.write(reinterpret_cast<const char*>(shape), sizeof shape);
  f.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * sizeof(double)));
  if (!f) usage_error("--save " + path + ": could not write the file");
}

// Compares with a --save file; returns whether every logit is within 1e-10 (absolute).
bool check_logits(const std::string& path, const deberta::Matrix& logits) {
  std::ifstream f(path, std::ios::binary);
  char magic[8] = {};
  int64_t shape[2] = {0, 0};
  f.read(magic, sizeof magic);
  f.read(reinterpret_cast<char*>(shape), sizeof shape);
  if (!f || std::memcmp(magic, kMagic, sizeof magic) != 0)
    usage_error("--check " + path + ": not a logits file of forward_bench --save (missing or wrong header)");
  if (shape[0] != logits.rows() || shape[1] != logits.cols())
    usage_error("--check " + path + ": logits [" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) +
                "], this run has [" + std::to_string(logits.rows()) + ", " + std::to_string(logits.cols()) + "]");
  deberta::Matrix ref(shape[0], shape[1]);  // row-major, as the file
  f.read(reinterpret_cast<char*>(ref.data()), static_cast<std::streamsize>(ref.size() * sizeof(double)));
  if (!f) usage_error("--check " + path + ": the file ends before its " + std::to_string(ref.size()) + " logits");
  double worst = -1;
  int64_t wr = 0, wc = 0;
  for (int64_t r = 0; r < ref.rows(); ++r)
    for (int64_t c = 0; c < ref.cols(); ++c) {
      const double d = std::abs(logits(r, c) - ref(r, c));
      if (!(d <= worst)) worst = d, wr = r, wc = c;  // NaN counts as the worst
    }
  const bool ok = worst <= 1e-10;
  std::printf("%s: logits [%lld, %lld] vs %s: max |ours - reference| = %.3g at [%lld, %lld] (ours %.17g, reference %.17g), "
              "tolerance 1e-10\n",
              ok ? "PASS" : "FAIL", static_cast<long long>(ref.rows()), static_cast<long long>(ref.cols()), path.c_str(), worst,
              static_cast<long long>(wr), static_cast<long long>(wc), logits(wr, wc), ref(wr, wc));
  return ok;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

const char* build_kind() {
#if defined(__EMSCRIPTEN__)
#if defined(__wasm_simd128__) && defined(__EMSCRIPTEN_PTHREADS__)
  return "wasm SIMD + pthreads";
#elif defined(__wasm_simd128__)
  return "wasm SIMD";
#else
  return "wasm scalar";
#endif
#else
  return "desktop";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  try {
    using namespace deberta;
    set_num_threads(args.threads);
    // A preset has an MLM head and a position table: its EMD runs and reads P's first N rows.
    const std::string what = args.model.empty() ? args.preset : args.model;
    if (args.model.empty()) check_input_length(preset_config(args.preset), args.seq, "preset " + args.preset, true);
    const Model model = args.model.empty() ? make_preset_model(args.preset, 1) : load_model(args.model);
    if (!args.model.empty()) check_input_length(model.config, args.seq, args.model, true);
    const Inputs in = bench_inputs(model.config, args.seq);
    const std::vector<int64_t> positions = bench_positions(args.seq);
    const double flops = forward_flops(model, args.seq, static_cast<int64_t>(positions.size()), runs_emd(model));

    // The warm-up run gives the logits that are saved or checked.
    Matrix logits;
    {
      const ForwardTrace warm = forward(model, in, {}, TraceLevel::Probs, true);
      logits = mlm_logits(model, warm.decoder_output(), positions);
    }
    bool ok = true;
    if (!args.save.empty()) save_logits(args.save, logits);
    if (!args.check.empty()) ok = check_logits(args.check, logits);

    std::vector<double> total, encoder, head;
    for (int r = 0; r < args.repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const ForwardTrace trace = forward(model, in, {}, TraceLevel::Probs, true);
      const double e = ms_since(t0);
      const auto t1 = std::chrono::steady_clock::now();
      const Matrix l = mlm_logits(model, trace.decoder_output(), positions);
      const double h = ms_since(t1);
      total.push_back(e + h), encoder.push_back(e), head.push_back(h);
      if (l.size() == 0) ok = false;  // keeps the head's work observable
    }
    const double median = median_of(total), best = *std::min_element(total.begin(), total.end());
    std::printf("forward_bench (%s; Eigen's vector instructions: %s)\n", build_kind(), Eigen::SimdInstructionSetsInUse());
    std::printf("forward_bench (%s): %s, N = %lld, %d thread(s), %d runs: median %.1f ms (min %.1f), encoder + EMD %.1f ms, "
                "MLM head (%zu rows) %.1f ms, %.2f GFLOP -> %.1f GFLOP/s\n",
                build_kind(), what.c_str(), static_cast<long long>(args.seq), num_threads(), args.repeat, median, best,
                median_of(encoder), positions.size(), median_of(head), flops / 1e9, flops / (median / 1e3) / 1e9);
    std::printf("RESULT {\"build\": \"%s\", \"preset\": \"%s\", \"seq\": %lld, \"threads\": %d, \"median_ms\": %.3f, "
                "\"min_ms\": %.3f, \"encoder_ms\": %.3f, \"head_ms\": %.3f, \"gflops\": %.3f}\n",
                build_kind(), what.c_str(), static_cast<long long>(args.seq), num_threads(), median, best,
                median_of(encoder), median_of(head), flops / (median / 1e3) / 1e9);
    std::fflush(stdout);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "forward_bench: %s\n", e.what());
    return 1;
  }
}
