// deberta bench: time the forward pass, count its FLOPs, compare with this machine's GEMM; with
// --rerun, time the viewer's re-run after an ablation toggle instead. The process-level calls a
// benchmark needs (glibc's mallopt, getrusage) live here, not in the library.
#include "cli_common.h"
#include "commands.h"

#include "analysis/bench.h"
#include "deberta/equations.h"

#include <malloc.h>
#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <thread>

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
  bool rerun = false;
  bool widen_weights = false;  ///< LoadOptions::widen_weights: every matrix float64 at load (before issue 60)
};

// Keeps large freed blocks in the process (glibc mallopt) instead of returning them to the kernel
// after every forward pass, so repeated runs do not page-fault the same temporaries back in. One
// arena for every thread: glibc gives a second thread an arena of its own, built of 64 MB heaps
// that these two thresholds do not govern, and at base N = 512 the second thread's temporaries
// kept landing in fresh memory (perf: alloc_new_heap and page clearing at 2 threads only; 2
// threads 1.54–1.68 s → 1.26–1.28 s per forward).
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  mallopt(M_ARENA_MAX, 1);
}

// Peak resident set size of this process so far, in MB (getrusage: ru_maxrss is in KiB on Linux).
double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best-of-3 GFLOP/s of a 1024² float64 product at the current thread count and backend, through
// the product every projection of the forward pass uses (`deberta::linear`, equations.h: the
// backend's ops; the fast one splits column blocks across threads).
double gemm_gflops() {
  const int64_t n = 1024;
  const Matrix a = Matrix::Random(n, n);
  const Linear b{Matrix::Random(n, n), Vector()};
  double best = 0, sink = 0;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const Matrix c = deberta::linear(b, a);
    best = std::max(best, 2.0 * n * n * n / seconds_since(t0) / 1e9);
    sink += c(0, 0);
  }
  return best + 0 * sink;
}

// The kernel family OpenBLAS should use on this CPU, for OPENBLAS_CORETYPE: Debian's build picks
// one at load time from the CPU model, and on a model it does not know (a virtual machine's
// "Intel(R) Xeon(R) Processor") it falls back to "Prescott", SSE3 kernels at ~1/5 of the speed.
// "" leaves OpenBLAS's choice alone (a CPU without AVX2, or a non-x86 one).
const char* openblas_core_for_this_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

// The memory side of the MLM head's floor (issue 43): the time to copy `bytes` from `from` to `to`
// on `threads` threads, each a contiguous share (memcpy), in ms — the better of two. The tied
// decoder reads the word table once per forward; a copy of the table's size, in the same round,
// is the time this machine takes to stream that many bytes through its cores now.
double copy_ms(const double* from, double* to, size_t doubles, int threads) {
  double best = 0;
  for (int run = 0; run < 2; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
      team.emplace_back([=] {
        const size_t first = doubles * t / threads, last = doubles * (t + 1) / threads;
        std::memcpy(to + first, from + first, (last - first) * sizeof(double));
      });
    for (std::thread& t : team) t.join();
    const double ms = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = run == 0 ? ms : std::min(best, ms);
  }
  return best;
}

/// The MLM head's product as the forward runs it: logits [M, V] = h [M, H] · Eᵀ, E the word table
/// [V, H], both row-major. M = 0: not measured.
struct HeadShape {
  int64_t M = 0, V = 0, H = 0;
};

// Debian's OpenBLAS (libopenblas0-pthread), opened at run time so that the project neither links
// nor needs it: the peer the forward's rate is compared with (issue 29, docs/performance.md). Its
// kernels are the best this CPU runs (OPENBLAS_CORETYPE from the CPU's features unless the caller
// set it), so the ratio is against the strongest peer, not a generic fallback; and its threads
// sleep as soon as a product ends (OPENBLAS_THREAD_TIMEOUT = 4, the least, unless the caller set
// it), so that the forward timed next to it does not share its cores with OpenBLAS's spinning
// threads. `available()` false: not installed.
/// Rounds that pair a forward with an OpenBLAS DGEMM (a 100 ms pause and two 1024² products each):
/// the first ones; later rounds time the forward alone, so `--repeat 1000 --seq 1` takes seconds,
/// not minutes of pauses (issue 44, class 6). 15 pairs give the median and range of the ratio.
constexpr int kPairedRounds = 15;

class OpenBlas {
 public:
  explicit OpenBlas(int threads) {
    if (const char* set = std::getenv("OPENBLAS_CORETYPE"); set && *set) {
      core_set_by = "OPENBLAS_CORETYPE (yours)";
    } else if (const char* core_type = openblas_core_for_this_cpu(); *core_type) {
      setenv("OPENBLAS_CORETYPE", core_type, 1);  // read by OpenBLAS when it loads, below
      core_set_by = "OPENBLAS_CORETYPE (by bench, from the CPU's features)";
    }
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);  // 2^4 cycles of spinning, then sleep
    for (const char* name : {"libopenblas.so.0", "libopenblas.so"})
      if ((lib_ = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
        library = name;
        break;
      }
    if (!lib_) return;
    using SetThreads = void (*)(int);
    using CoreName = char* (*)();
    dgemm_ = reinterpret_cast<Dgemm>(dlsym(lib_, "cblas_dgemm"));
    if (const auto core_name = reinterpret_cast<CoreName>(dlsym(lib_, "openblas_get_corename")))
      if (const char* c = core_name()) core = c;
    // Never more OpenBLAS threads than cores: each holds its own buffers, and 64 of them under a
    // 4 GB address-space cap failed to start and hung OpenBLAS's shutdown at exit (issue 44, class 6).
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (const auto set_threads = reinterpret_cast<SetThreads>(dlsym(lib_, "openblas_set_num_threads")))
      set_threads(std::min(threads, cores));
  }
  ~OpenBlas() {
    if (lib_) dlclose(lib_);
  }
  OpenBlas(const OpenBlas&) = delete;
  OpenBlas& operator=(const OpenBlas&) = delete;

  bool available() const { return dgemm_ != nullptr; }

  /// GFLOP/s of one C [m, n] = A [m, k] · B [n, k]ᵀ (all row-major) on operands made once per shape.
  double gflops(int m, int n, int k) {
    Operands& o = operands_[{m, n, k}];
    if (o.a.size() == 0) o.a = Matrix::Random(m, k), o.b = Matrix::Random(n, k), o.c.resize(m, n);
    const auto t0 = std::chrono::steady_clock::now();
    dgemm_(101, 111, 112, m, n, k, 1.0, o.a.data(), k, o.b.data(), k, 0.0, o.c.data(), n);  // RowMajor, NoTrans, Trans
    return 2.0 * m * n * static_cast<double>(k) / seconds_since(t0) / 1e9;
  }
  /// Best of 3 runs of `gflops`.
  double best_of_3(int m, int n, int k) {
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) best = std::max(best, gflops(m, n, k));
    return best;
  }

  std::string library;      ///< the file opened
  std::string core;         ///< the kernels it runs (openblas_get_corename), e.g. "SkylakeX"
  std::string core_set_by;  ///< "OPENBLAS_CORETYPE (yours)", "OPENBLAS_CORETYPE (by bench, from the CPU's features)" or ""

 private:
  using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
  struct Operands {
    Matrix a, b, c;
  };
  void* lib_ = nullptr;
  Dgemm dgemm_ = nullptr;
  std::map<std::array<int, 3>, Operands> operands_;
};

// --rerun: what the viewer does after an ablation toggle on a kept trace (viewer/state/state.cpp,
// Worker::compute): `rerun_from` the first layer the change affects (`first_affected_layer`),
// decoder included, then the MLM head at the masked positions. Each toggle is timed switching on
// and switching back off (both are reruns); the copy of the kept trace the viewer makes first is
// timed on its own.
void bench_rerun(const BenchArgs& args, const Model& model, const Inputs& in, const std::vector<int64_t>& positions,
                 TraceLevel level, const std::string& name) {
  struct Toggle {
    std::string label;
    Ablation ablation;
  };
  std::vector<Toggle> toggles;
  const ModelConfig& c = model.config;
  if (c.has_c2p()) {
    Ablation a;
    a.terms[Term::c2p] = false;
    toggles.push_back({"-c2p (every layer)", a});
  }
  {
    Ablation a;
    a.head_mask = {{c.num_hidden_layers - 1, 0}};
    toggles.push_back({"mask " + std::to_string(c.num_hidden_layers - 1) + ":0 (last layer)", a});
  }
  const bool decoder = model.weights.lm_head.has_value();
  ForwardTrace trace = forward(model, in, {}, level, decoder);
  std::vector<double> copy_ms;
  for (int r = 0; r < args.repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const ForwardTrace copy = trace;
    copy_ms.push_back(1e3 * seconds_since(t0) + 0 * static_cast<double>(copy.layers.size()));
  }
  nlohmann::json rows = nlohmann::json::array();
  if (!args.json)
    std::printf("model %s, N = %lld, %d thread(s), trace %s: rerun after an ablation toggle (median of %d on + %d off)\n",
                name.c_str(), static_cast<long long>(in.size()), args.threads, args.trace.c_str(), args.repeat,
                args.repeat);
  for (const Toggle& t : toggles) {
    std::vector<double> rerun_ms, head_ms;
    const int64_t first = first_affected_layer(model, Ablation{}, t.ablation);
    for (int r = 0; r <= args.repeat; ++r)
      for (const Ablation* a : {&t.ablation, static_cast<const Ablation*>(nullptr)}) {
        const Ablation next = a ? *a : Ablation{};
        const auto t0 = std::chrono::steady_clock::now();
        rerun_from(model, &trace, next, first_affected_layer(model, trace.ablation, next));
        const double rerun = 1e3 * seconds_since(t0);
        const auto t1 = std::chrono::steady_clock::now();
        const Matrix logits = decoder ? mlm_logits(model, trace.decoder_output(), positions) : Matrix();
        const double head = 1e3 * seconds_since(t1);
        if (r > 0) rerun_ms.push_back(rerun), head_ms.push_back(head);  // r = 0 is the warm-up
      }
    const double rerun = median_of(rerun_ms), head = median_of(head_ms);
    rows.push_back({{"toggle", t.label}, {"first_layer", first}, {"rerun_ms", rerun}, {"min_rerun_ms", *std::min_element(rerun_ms.begin(), rerun_ms.end())},
                    {"mlm_head_ms", head}});
    if (!args.json)
      std::printf("  %-28s from layer %2lld: rerun_from %.1f ms (min %.1f), then MLM head %.1f ms\n", t.label.c_str(),
                  static_cast<long long>(first), rerun, *std::min_element(rerun_ms.begin(), rerun_ms.end()), head);
  }
  const double copy = median_of(copy_ms), rss = peak_rss_mb();
  if (args.json) {
    nlohmann::json j = {{"model", name}, {"seq", in.size()}, {"threads", args.threads}, {"trace", args.trace},
                        {"repeat", args.repeat}, {"toggles", rows}, {"trace_copy_ms", copy}, {"peak_rss_mb", rss}};
    std::printf("%s\n", json_text(j).c_str());
    return;
  }
  std::printf("  copying the kept trace (the viewer copies it before a rerun): %.1f ms\n", copy);
  std::printf("peak RSS: %.0f MB\n", rss);
}
}  // namespace

/// What a bench run measured and derived: the forward's parts and their FLOPs; per timed round the
/// forward, its encoder (+ EMD) and its MLM head, and where OpenBLAS was paired with the round, its
/// DGEMM rate, the forward's and the encoder's ratio to it and the head against its floor; the
/// medians and rates the report prints.
struct BenchReport {
  std::string name;
  int64_t N = 0, masked = 0;
  size_t positions = 0;
  bool decoder = false, emd = false;
  double flops = 0, encoder_flops = 0, head_flops = 0, rss_mb = 0, weights_mb = 0;
  std::vector<double> ms, encoder_ms, head_ms, blas_rate, forward_ratio, encoder_ratio, copy_rate, head_floor_ms,
      head_vs_floor;
  double median = 0, best = 0, encoder = 0, head = 0, achieved = 0, encoder_rate = 0, head_rate = 0, table_gb = 0,
         gemm = 0, blas_gflops = 0, forward_vs_blas = 0, encoder_vs_blas = 0, blas_head = 0;
  bool paired = false;
  HeadShape shape;
};

/// The timed rounds (after the warm-up): each one forward, timed whole and in its two parts — the
/// encoder (+ EMD) and the MLM head, whose tied decoder streams the whole word table for a few rows
/// (memory-bound; see docs/performance.md) — then, in the first kPairedRounds, one 1024² DGEMM
/// through OpenBLAS. The forward's ratio to OpenBLAS is taken within each round and the median of
/// the rounds reported: a shared host's speed drifts by tens of per cent over seconds, and both
/// sides of a round see the same host.
void time_rounds(const BenchArgs& args, const Model& model, const Inputs& in, const std::vector<int64_t>& positions,
                 TraceLevel level, OpenBlas& blas, BenchReport* report) {
  BenchReport& rep = *report;
  // The word table and a buffer of its size for the copy that measures the head's memory floor
  // (allocated after the peak RSS was read, like OpenBLAS's buffers).
  const StoredMatrix& table = model.weights.embeddings.word;
  // (E in its stored precision: the head streams its bytes, `table.bytes()`.)
  std::vector<double> copy_to(rep.decoder ? table.bytes() / sizeof(double) : 0);
  for (int r = 1; r <= args.repeat; ++r) {
    const bool pair_this_round = r <= kPairedRounds;
    const auto t0 = std::chrono::steady_clock::now();
    const ForwardTrace trace = forward(model, in, {}, level, rep.decoder);
    const double encoder = 1e3 * seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    const Matrix logits = rep.decoder ? mlm_logits(model, trace.decoder_output(), positions) : Matrix();
    const double head = 1e3 * seconds_since(t1);
    double dgemm = 0;
    if (blas.available() && pair_this_round) {
      // The forward's OpenMP threads spin a few milliseconds after their last region before
      // they sleep; a DGEMM started at once would share its cores with them (measured: half its
      // rate with spinning threads). So a pause first, then the better of two runs.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      dgemm = std::max(blas.gflops(1024, 1024, 1024), blas.gflops(1024, 1024, 1024));
      if (rep.decoder && dgemm > 0) {
        // The head's floor in this round: the larger of streaming its table (a copy of that
        // size) and its products at this round's DGEMM rate.
        const double copy = copy_ms(reinterpret_cast<const double*>(table.data()), copy_to.data(), copy_to.size(), args.threads);
        const double floor = std::max(copy, rep.head_flops / (dgemm * 1e9) * 1e3);
        rep.copy_rate.push_back(static_cast<double>(copy_to.size()) * 8 / (copy / 1e3) / 1e9);
        rep.head_floor_ms.push_back(floor);
        rep.head_vs_floor.push_back(head / floor);
      }
    }
    rep.ms.push_back(encoder + head), rep.encoder_ms.push_back(encoder), rep.head_ms.push_back(head);
    if (dgemm > 0) {
      rep.blas_rate.push_back(dgemm);
      rep.forward_ratio.push_back(rep.flops / ((encoder + head) / 1e3) / 1e9 / dgemm);
      rep.encoder_ratio.push_back(rep.encoder_flops / (encoder / 1e3) / 1e9 / dgemm);
    }
  }
}

/// The medians of the rounds and the rates derived from them; this machine's GEMM rate through
/// `linear`; OpenBLAS on the head's own product (best of 3), when OpenBLAS was paired.
void summarize(const Model& model, OpenBlas& blas, BenchReport* report) {
  BenchReport& rep = *report;
  rep.median = median_of(rep.ms), rep.best = *std::min_element(rep.ms.begin(), rep.ms.end());
  rep.encoder = median_of(rep.encoder_ms), rep.head = median_of(rep.head_ms);
  rep.achieved = rep.flops / (rep.median / 1e3) / 1e9;
  rep.encoder_rate = rep.encoder_flops / (rep.encoder / 1e3) / 1e9;
  rep.head_rate = rep.decoder ? rep.head_flops / (rep.head / 1e3) / 1e9 : 0;
  // The word table the tied decoder reads once per forward, in GB, and the rate it was read at.
  const auto& c = model.config;
  rep.table_gb = rep.decoder ? static_cast<double>(model.weights.embeddings.word.bytes()) / 1e9 : 0;
  rep.weights_mb = static_cast<double>(weight_bytes(model.weights)) / 1e6;  // as held: stored precision (issue 60)
  rep.gemm = gemm_gflops();
  rep.shape = rep.decoder ? HeadShape{rep.masked, c.vocab_size, c.hidden_size} : HeadShape{};
  rep.paired = !rep.blas_rate.empty();
  rep.blas_gflops = rep.paired ? median_of(rep.blas_rate) : 0;
  rep.forward_vs_blas = rep.paired ? median_of(rep.forward_ratio) : 0;
  rep.encoder_vs_blas = rep.paired ? median_of(rep.encoder_ratio) : 0;
  // The head's own peer: OpenBLAS on the head's product, best of 3.
  const HeadShape& shape = rep.shape;
  rep.blas_head = rep.paired && shape.M > 0
                      ? blas.best_of_3(static_cast<int>(shape.M), static_cast<int>(shape.V), static_cast<int>(shape.H))
                      : 0;
}

/// The report as one JSON object on stdout (--json).
void print_bench_json(const BenchArgs& args, const OpenBlas& blas, const BenchReport& rep) {
  const auto or_null = [](bool ok, double v) { return ok ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"model", rep.name}, {"seq", rep.N}, {"threads", args.threads}, {"trace", args.trace},
                      {"repeat", args.repeat}, {"median_ms", rep.median}, {"min_ms", rep.best}, {"gflop", rep.flops / 1e9},
                      {"gflops", rep.achieved}, {"gemm_gflops", rep.gemm}, {"roofline_efficiency", rep.achieved / rep.gemm},
                      {"peak_rss_mb", rep.rss_mb}, {"weights_mb", rep.weights_mb}, {"emd", rep.emd}, {"masked_positions", rep.positions},
                      {"encoder_ms", rep.encoder}, {"encoder_gflops", rep.encoder_rate}};
  j["head_ms"] = or_null(rep.decoder, rep.head);
  j["head_gflops"] = or_null(rep.decoder, rep.head_rate);
  j["head_table_gb_per_s"] = or_null(rep.decoder, rep.table_gb / (rep.head / 1e3));
  j["openblas_gflops"] = or_null(rep.paired, rep.blas_gflops);
  j["forward_vs_openblas"] = or_null(rep.paired, rep.forward_vs_blas);
  j["encoder_vs_openblas"] = or_null(rep.paired, rep.encoder_vs_blas);
  j["openblas_rounds"] = nlohmann::json::array();  // per round: DGEMM GFLOP/s, forward / it, encoder / it
  for (size_t r = 0; r < rep.blas_rate.size(); ++r)
    j["openblas_rounds"].push_back({{"dgemm_gflops", rep.blas_rate[r]}, {"forward_vs_openblas", rep.forward_ratio[r]},
                                    {"encoder_vs_openblas", rep.encoder_ratio[r]}});
  // The head against its floor (issue 43): per round, max(copy of the table's size, the head's
  // FLOPs at the round's DGEMM rate); medians over the rounds.
  const bool floored = !rep.head_vs_floor.empty();
  j["copy_gb_per_s"] = or_null(floored, floored ? median_of(rep.copy_rate) : 0);
  j["head_floor_ms"] = or_null(floored, floored ? median_of(rep.head_floor_ms) : 0);
  j["head_vs_floor"] = or_null(floored, floored ? median_of(rep.head_vs_floor) : 0);
  j["openblas_head_gflops"] = or_null(rep.blas_head > 0, rep.blas_head);
  j["head_vs_openblas_head"] = or_null(rep.blas_head > 0, rep.head_rate / rep.blas_head);
  j["openblas_core"] = blas.core.empty() ? nlohmann::json(nullptr) : nlohmann::json(blas.core);
  j["openblas_core_set_by"] = blas.core_set_by;
  std::printf("%s\n", json_text(j).c_str());
  std::fflush(stdout);  // the figures are out before any library's exit handlers run
}

/// OpenBLAS's lines of the text report: its DGEMM rate, the forward's and the encoder's ratio to
/// it, the MLM head against its floor and against OpenBLAS on the head's product.
void print_openblas_lines(const BenchArgs& args, const OpenBlas& blas, const BenchReport& rep) {
  const auto [f_lo, f_hi] = std::minmax_element(rep.forward_ratio.begin(), rep.forward_ratio.end());
  const auto [e_lo, e_hi] = std::minmax_element(rep.encoder_ratio.begin(), rep.encoder_ratio.end());
  std::printf("OpenBLAS DGEMM 1024^2 at %d thread(s) (%s, kernels %s%s%s), one after each forward: median %.1f GFLOP/s\n",
              args.threads, blas.library.c_str(), blas.core.empty() ? "?" : blas.core.c_str(),
              blas.core_set_by.empty() ? "" : " by ", blas.core_set_by.c_str(), rep.blas_gflops);
  std::printf("  forward / OpenBLAS = %.2f (median of %zu rounds, each a forward and the DGEMM after it; %.2f-%.2f)\n",
              rep.forward_vs_blas, rep.forward_ratio.size(), *f_lo, *f_hi);
  std::printf("  encoder%s / OpenBLAS = %.2f (%.2f-%.2f)\n", rep.emd ? " + EMD" : "", rep.encoder_vs_blas, *e_lo, *e_hi);
  if (!rep.head_vs_floor.empty()) {
    const auto [h_lo, h_hi] = std::minmax_element(rep.head_vs_floor.begin(), rep.head_vs_floor.end());
    std::printf("  MLM head / its floor = %.2f (%.2f-%.2f); floor %.2f ms = max(copying the %.2f GB table at %.1f GB/s, "
                "its products at the DGEMM rate), medians of the rounds\n",
                median_of(rep.head_vs_floor), *h_lo, *h_hi, median_of(rep.head_floor_ms), rep.table_gb,
                median_of(rep.copy_rate));
  }
  const HeadShape& shape = rep.shape;
  if (rep.blas_head > 0)
    std::printf("  OpenBLAS on the MLM head's product [%lld, %lld] x [%lld, %lld]^T: %.1f GFLOP/s; MLM head / that = %.2f\n",
                static_cast<long long>(shape.M), static_cast<long long>(shape.H), static_cast<long long>(shape.V),
                static_cast<long long>(shape.H), rep.blas_head, rep.head_rate / rep.blas_head);
}

/// The report as lines of text.
void print_bench_text(const BenchArgs& args, const OpenBlas& blas, const BenchReport& rep) {
  std::printf("model %s, N = %lld, %d thread(s), trace %s, EMD %s, %zu masked positions\n", rep.name.c_str(),
              static_cast<long long>(rep.N), args.threads, args.trace.c_str(), rep.emd ? "on" : "off", rep.positions);
  std::printf("forward: median %.2f ms, min %.2f ms over %d runs\n", rep.median, rep.best, args.repeat);
  std::printf("weights: %.1f MB as held (%s)\n", rep.weights_mb,
              args.widen_weights ? "widened to float64 at load" : "in their stored precision");
  std::printf("work: %.3f GFLOP -> %.1f GFLOP/s; GEMM 1024^2 here: %.1f GFLOP/s; roofline efficiency %.2f\n",
              rep.flops / 1e9, rep.achieved, rep.gemm, rep.achieved / rep.gemm);
  std::printf("  encoder%s: median %.2f ms, %.3f GFLOP -> %.1f GFLOP/s\n", rep.emd ? " + EMD" : "", rep.encoder,
              rep.encoder_flops / 1e9, rep.encoder_rate);
  if (rep.decoder)
    std::printf("  MLM head (%lld rows x %lld words): median %.2f ms, %.3f GFLOP -> %.1f GFLOP/s; the %.2f GB word "
                "table read at %.1f GB/s\n",
                static_cast<long long>(rep.masked), static_cast<long long>(rep.shape.V), rep.head, rep.head_flops / 1e9,
                rep.head_rate, rep.table_gb, rep.table_gb / (rep.head / 1e3));
  if (rep.paired)
    print_openblas_lines(args, blas, rep);
  else
    std::printf("OpenBLAS: not found (Debian's libopenblas0-pthread), forward / OpenBLAS not measured\n");
  std::printf("peak RSS: %.0f MB (after the warm-up forward, before OpenBLAS is loaded)\n", rep.rss_mb);
  std::fflush(stdout);
}

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
  cmd->add_option("--threads", args->threads, "Threads (heads in parallel; Eigen GEMM)")->check(CLI::Range(1, kMaxThreads));
  cmd->add_option("--repeat", args->repeat, "Timed repetitions (after one warm-up)")->check(CLI::Range(1, 1000));
  cmd->add_option("--trace", args->trace, "What the forward keeps: none, probs (the viewer's trace), full")
      ->check(CLI::IsMember({"none", "probs", "full"}));
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--widen-weights", args->widen_weights,
                "Widen every weight to float64 at load (as before issue 60; the numbers are the same, the memory 8 bytes a value)");
  cmd->add_flag("--rerun", args->rerun,
                "Time the viewer's rerun after an ablation toggle (rerun_from the first affected layer, then the MLM "
                "head) instead of a whole forward");
  cmd->callback([args] {
    keep_freed_memory();
    set_num_threads(args->threads);
    const int64_t N = args->seq;
    // The one length rule (check_input_length), before a preset's weights are made: --seq 100000
    // allocated 1 GB before it was refused (issue 44, class 3). A preset has an MLM head and an
    // absolute position table (make_preset_model), so its EMD runs and reads P's first N rows.
    if (!args->preset.empty()) check_input_length(preset_config(args->preset), N, "preset " + args->preset, true);
    Model model = args->preset.empty() ? load_model_with_progress(args->model, {args->widen_weights})
                                       : make_preset_model(args->preset, 1);
    if (args->widen_weights && !args->preset.empty()) widen_weights(&model.weights);
    BenchReport rep;
    rep.N = N;
    rep.decoder = model.weights.lm_head.has_value();
    rep.emd = rep.decoder && runs_emd(model);
    check_input_length(model.config, N, args->preset.empty() ? args->model : "preset " + args->preset, rep.emd);
    const Inputs in = bench_inputs(model.config, N);
    const std::vector<int64_t> positions = bench_positions(N);  // ~15% of the tokens
    const TraceLevel level = args->trace == "full" ? TraceLevel::Full : args->trace == "none" ? TraceLevel::None : TraceLevel::Probs;
    rep.name = args->preset.empty() ? args->model : args->preset;
    if (args->rerun) return bench_rerun(*args, model, in, positions, level, rep.name);
    rep.positions = positions.size();
    rep.masked = rep.decoder ? static_cast<int64_t>(positions.size()) : 0;
    rep.flops = forward_flops(model, N, rep.masked, rep.emd);
    rep.encoder_flops = forward_flops(model, N, 0, rep.emd), rep.head_flops = rep.flops - rep.encoder_flops;
    // A warm-up forward first; the process's peak RSS after it is the forward's (model, trace and
    // temporaries), read before OpenBLAS's buffers and the peers' operands exist.
    {
      const ForwardTrace warm = forward(model, in, {}, level, rep.decoder);
      if (rep.decoder) mlm_logits(model, warm.decoder_output(), positions);
    }
    rep.rss_mb = peak_rss_mb();
    OpenBlas blas(args->threads);
    time_rounds(*args, model, in, positions, level, blas, &rep);
    summarize(model, blas, &rep);
    if (args->json)
      print_bench_json(*args, blas, rep);
    else
      print_bench_text(*args, blas, rep);
  });
}

}  // namespace deberta::cli
