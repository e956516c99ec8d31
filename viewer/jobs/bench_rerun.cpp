// bench_rerun.cpp — the re-run benchmark (see bench_rerun.h).
#include "jobs/bench_rerun.h"

#include "jobs/worker.h"

#include "analysis/bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace viewer {

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

/// N ids: `base` repeated (or seeded pseudo-random ids in [5, V) without it), then `masked`
/// positions spread evenly over the sequence set to `mask`. Never `mask` elsewhere.
std::vector<int64_t> make_ids(const std::vector<int64_t>& base, int64_t n, int64_t vocab, int64_t mask, int64_t masked) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int64_t t = 0; t < n; ++t) {
    int64_t id;
    if (!base.empty()) {
      id = base[static_cast<size_t>(t) % base.size()];
    } else {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      id = 5 + static_cast<int64_t>(x % static_cast<uint64_t>(std::max<int64_t>(vocab - 5, 1)));
    }
    ids[static_cast<size_t>(t)] = id == mask ? (id + 1) % vocab : id;
  }
  for (int64_t k = 0; k < masked; ++k) ids[static_cast<size_t>((2 * k + 1) * n / (2 * masked))] = mask;
  return ids;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

struct Stat {
  double median = 0, min = 0;
};

Stat stat(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  const size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front()};
}

}  // namespace

int run_bench_rerun(const BenchRerunOptions& o) {
  using clock = std::chrono::steady_clock;
  try {
    std::shared_ptr<const LoadedModel> lm;
    if (o.model.rfind("preset:", 0) == 0) {
      auto m = std::make_shared<LoadedModel>();
      m->model = deberta::make_preset_model(o.model.substr(7));
      m->tokenizer_note = "preset: random weights, no tokenizer";
      lm = m;
    } else {
      lm = read_model(o.model);
    }
    const deberta::ModelConfig& c = lm->model.config;
    const int64_t n = o.tokens, L = c.num_hidden_layers;
    const int64_t mask = lm->tokenizer ? lm->tokenizer->mask_id() : o.mask_id >= 0 ? o.mask_id : std::min<int64_t>(3, c.vocab_size - 1);
    std::vector<int64_t> base;
    if (!o.text.empty() || !o.ids.empty()) {
      InputFields f;
      f.text = o.text, f.ids_text = o.ids, f.mask_id = static_cast<int>(mask);
      base = tokenize_fields(*lm, f).inputs.input_ids;
    }
    // The core's one length rule; the worker runs the decoder, so the EMD's I = H + P counts.
    deberta::check_input_length(c, n, o.model, deberta::runs_emd(lm->model));
    const int64_t layer = std::clamp<int64_t>(o.layer, 0, std::max<int64_t>(L - 1, 0));
    std::printf("bench-rerun: %s (%s), N = %lld, %d threads, %d toggles each way.\n"
                "ms until the worker publishes the result (\"shown\": grid, predictions) and until the terms of "
                "layer %lld follow (\"+terms\": Head detail, equation, lesson); median and min\n",
                o.model.c_str(), c.summary().c_str(), static_cast<long long>(n), deberta::num_threads(), o.repeats,
                static_cast<long long>(layer));
    std::printf("%6s %7s | %15s | %31s | %31s | %9s\n", "", "", "first run", "-c2p on/off (from layer 0)",
                ("head " + std::to_string(L - 1) + ":0 on/off (from layer " + std::to_string(L - 1) + ")").c_str(), "");
    std::printf("%6s %7s | %7s %7s | %7s %7s %7s %7s | %7s %7s %7s %7s | %9s\n", "N", "masked", "shown", "+terms",
                "shown", "min", "+terms", "min", "shown", "min", "+terms", "min", "peak RSS");
    for (double fraction : {0.01, 0.15}) {
      const int64_t masked = std::max<int64_t>(1, std::llround(fraction * static_cast<double>(n)));
      Request req;
      req.model = lm;
      req.fields.ids_text = join(make_ids(base, n, c.vocab_size, mask, masked));
      req.fields.mask_id = static_cast<int>(mask);
      req.detail_layers = {layer};
      // One computation as the worker runs it: `shown` when the result is published (the grid, the
      // predictions), `full` once the selected layer's terms follow (Head detail, the equation).
      struct Times {
        std::vector<double> shown, full;
      };
      auto run = [&](const deberta::Ablation& a, const std::shared_ptr<const Result>& prev, Times* t) {
        const auto t0 = clock::now();
        req.ablation = a;
        ++req.generation;
        std::shared_ptr<const Result> r = compute_result(req, tokenize_fields(*lm, req.fields), prev);
        t->shown.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
        const std::shared_ptr<const LayerDetail> d = materialize_detail(*r, req.detail_layers);
        t->full.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
        return r;
      };
      Times first, c2p, head;
      std::shared_ptr<const Result> r = run({}, nullptr, &first);
      deberta::Ablation no_c2p;
      no_c2p.terms[deberta::Term::c2p] = false;
      deberta::Ablation head_masked;
      head_masked.head_mask.insert({L - 1, 0});
      for (int rep = 0; rep < o.repeats; ++rep) {
        r = run(no_c2p, r, &c2p);
        r = run({}, r, &c2p);
      }
      for (int rep = 0; rep < o.repeats; ++rep) {
        r = run(head_masked, r, &head);
        r = run({}, r, &head);
      }
      const Stat as = stat(c2p.shown), af = stat(c2p.full), bs = stat(head.shown), bf = stat(head.full);
      std::printf("%6lld %7lld | %7.0f %7.0f | %7.0f %7.0f %7.0f %7.0f | %7.0f %7.0f %7.0f %7.0f | %6.0f MB\n",
                  static_cast<long long>(n), static_cast<long long>(masked), first.shown[0], first.full[0], as.median,
                  as.min, af.median, af.min, bs.median, bs.min, bf.median, bf.min, peak_rss_mb());
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deberta-viewer: --bench-rerun: %s\n", e.what());
    return 1;
  }
}

}  // namespace viewer
