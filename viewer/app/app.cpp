// app.cpp — the actions on the App: model loads, computations, details and comparisons started
// in the background and installed into the plain state when they finish.
#include "app/app.h"

#include "export/file_writers.h"
#include "i18n/i18n.h"

#include <GL/gl.h>
#include <imgui.h>

#include <algorithm>
#include <chrono>

namespace viewer {

TextureCache::~TextureCache() {
  for (auto& [name, e] : entries)
    if (e.texture) glDeleteTextures(1, &e.texture);
}

namespace {
/// Model B on model A's input, compared with A's trace (run on a background thread).
std::shared_ptr<const CompareResult> run_compare(std::shared_ptr<const Result> a, std::shared_ptr<const LoadedModel> b) {
  auto out = std::make_shared<CompareResult>();
  out->generation = a->generation;
  out->model_b = b;
  try {
    const deberta::Model& mb = b->model;
    const auto& in = a->input;
    // Model A's token ids feed both models: they must share a vocabulary (the zoo's models do).
    if (mb.config.vocab_size != a->model->model.config.vocab_size)
      // TRANSLATORS: vocab_size is the config key (keep it); {b} and {a} are the two models' sizes.
      throw deberta::Error(trf("model B has vocab_size {b}, model A {a}: the two models do not share a vocabulary, so one "
                               "input cannot feed both",
                               arg("b", mb.config.vocab_size), arg("a", a->model->model.config.vocab_size)));
    const bool lm = a->model->model.weights.lm_head && mb.weights.lm_head;
    const std::vector<int64_t> positions = lm ? in.mask_positions : std::vector<int64_t>{};
    out->trace_b = deberta::forward(mb, in.inputs, {}, deberta::TraceLevel::Probs, !positions.empty());
    out->cmp = deberta::compare_traces(a->model->model, a->trace, mb, out->trace_b, positions, 5);
  } catch (const std::exception& e) {
    out->error = e.what();
  }
  return out;
}
// Runs `job(args...)` in the background and returns its future. The web edition has one thread
// (docs/web.md): there the future is deferred, and `run_deferred_jobs` runs it at the start of the
// next frame, so the frame that started it is drawn first ("Loading the model…").
template <class F, class... A>
auto background(F&& job, A&&... args) {
#ifdef __EMSCRIPTEN__
  return std::async(std::launch::deferred, std::forward<F>(job), std::forward<A>(args)...);
#else
  return std::async(std::launch::async, std::forward<F>(job), std::forward<A>(args)...);
#endif
}

#ifdef __EMSCRIPTEN_PTHREADS__
constexpr bool kThreadedPage = true;  // deberta-explorer-mt.js (-pthread): threads to be had
#elif defined(__EMSCRIPTEN__)
constexpr bool kThreadedPage = false;  // deberta-explorer.js: one thread
#endif

// Reads `path` in the background. On the web (one thread) the load runs as steps (LoadJob: one
// tensor a step) that `run_deferred_jobs` runs a slice of each frame, from the frame after this
// one ("Loading the model…" is drawn first); its future is a promise's, set by the last step.
std::future<std::shared_ptr<const LoadedModel>> background_load(Jobs& j, const std::string& path,
                                                                std::shared_ptr<std::atomic<double>> progress) {
#ifdef __EMSCRIPTEN__
  auto done = std::make_shared<std::promise<std::shared_ptr<const LoadedModel>>>();
  auto job = std::make_shared<std::unique_ptr<LoadJob>>();
  j.steppers.push_back([done, job, path, progress, record = j.load_steps]() -> Jobs::Step {
    const auto t0 = std::chrono::steady_clock::now();
    std::string stage = "header";
    // Each step's time, the longest kept with what it did (issue 55, item 4).
    auto timed = [&] {
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ++record->steps;
      record->position_steps += stage == "position table";
      record->tokenizer_thread_steps += stage == LoadJob::kThreadStage;
      if (ms > record->longest_ms) record->longest_ms = ms, record->longest_stage = stage;
    };
    try {
      if (!*job) {
        // config.json and the weights' header. The threaded build parses the tokenizer on a thread of
        // its own (LoadJob's tokenizer_thread): one spm.model parse is longer than a step may be.
        *job = std::make_unique<LoadJob>(path, progress, /*tokenizer_thread=*/kThreadedPage);
        timed();
        return Jobs::Step::more;
      }
      stage = (*job)->stage();
      const bool finished = (*job)->step();
      timed();
      if (!finished) return (*job)->waiting() ? Jobs::Step::wait : Jobs::Step::more;
      done->set_value((*job)->take());
    } catch (...) {
      done->set_exception(std::current_exception());
    }
    return Jobs::Step::done;
  });
  return done->get_future();
#else
  (void)j;
  return background([path, progress] { return read_model(path, progress); });
#endif
}
}  // namespace

void run_deferred_jobs(App& app) {
  Jobs& j = app.jobs;
  // The loads' steps for ~25 ms, at least one (a tensor may take longer), then the page draws the
  // progress bar.
  const auto t0 = std::chrono::steady_clock::now();
  while (!j.steppers.empty()) {
    const Jobs::Step step = j.steppers.front()();
    if (step == Jobs::Step::done) j.steppers.erase(j.steppers.begin());
    if (step == Jobs::Step::wait) break;  // (looked at again next frame)
    if (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() >= j.step_ms) break;
  }
  auto run = [](auto& f) {
    if (f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::deferred) f.wait();
  };
  run(j.comparing);
  run(j.reading_zoo);
}

void start_load(App& app, const std::string& path) {
  Jobs& j = app.jobs;
  if (j.loading.valid()) return;  // one load at a time
  j.loading_path = path;
  app.state.model_error.clear();
  j.load_progress->store(0.0);
  auto progress = j.load_progress;
  j.loading = background_load(j, path, progress);
}

void start_load_b(App& app, const std::string& path) {
  Jobs& j = app.jobs;
  if (j.loading_b.valid()) return;
  j.loading_b_path = path;
  app.state.model_b_error.clear();
  auto progress = std::make_shared<std::atomic<double>>(0.0);
  j.loading_b = background_load(j, path, progress);
}

bool compare_busy(const App& app) {
  const Jobs& j = app.jobs;
  return j.loading_b.valid() || j.comparing.valid() || j.reading_zoo.valid() || !app.state.zoo ||
         app.state.zoo->dir != app.state.zoo_dir;
}

bool poll_compare(App& app) {
  ViewerState& s = app.state;
  Jobs& j = app.jobs;
  bool changed = false;
  // The zoo's listing: read off the UI thread (a slow or hung file system never stops a frame).
  if (j.reading_zoo.valid() && j.reading_zoo.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    s.zoo = std::make_shared<const ZooListing>(j.reading_zoo.get());
    j.reading_zoo = {};
    changed = true;
  }
  if (!j.reading_zoo.valid() && (!s.zoo || s.zoo->dir != s.zoo_dir)) j.reading_zoo = background(read_zoo, s.zoo_dir);
  if (j.loading_b.valid() && j.loading_b.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      s.model_b = j.loading_b.get();
      s.model_b_path = j.loading_b_path;
      s.model_b_error.clear();
    } catch (const std::exception& e) {
      s.model_b_error = e.what();  // the previous model B stays
    }
    j.loading_b = {};
    changed = true;
  }
  if (j.comparing.valid()) {
    if (j.comparing.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return changed;
    s.compare = j.comparing.get();
    j.comparing = {};
    changed = true;
  }
  // Start a comparison when A's shown result or model B is newer than the last comparison.
  if (s.model_b && s.result && s.result->model == s.model &&
      (!s.compare || s.compare->generation != s.result->generation || s.compare->model_b != s.model_b)) {
    j.comparing = background(run_compare, s.result, s.model_b);
  }
  return changed;
}

bool poll_load(App& app) {
  ViewerState& s = app.state;
  Jobs& j = app.jobs;
  if (!j.loading.valid()) return false;
  if (j.loading.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  try {
    s.model = j.loading.get();
    // The previous model's maps and comparison go with it: never shown under the new model's name.
    s.result.reset(), s.detail.reset(), s.compare.reset();
    s.model_error.clear();
    s.model_notice.clear();
    s.model_path = j.loading_path;
    s.recent.erase(std::remove(s.recent.begin(), s.recent.end(), j.loading_path), s.recent.end());
    s.recent.insert(s.recent.begin(), j.loading_path);
    if (s.recent.size() > 8) s.recent.resize(8);
    s.ablation = {};  // switches belong to a model (heads, k)
    // Long enough (33 tokens) that the log buckets and every lesson step have something to show.
    if (s.model->tokenizer && s.text.empty()) s.text = kDefaultText;
    if (s.model->tokenizer && s.mask_id < 0) s.mask_id = static_cast<int>(s.model->tokenizer->mask_id());
    // The weights loaded but the tokenizer did not: said in red at once, not only when text is typed.
    if (!s.model->tokenizer_error.empty())
      s.model_notice = trf("tokenizer not loaded: {error}", arg("error", s.model->tokenizer_error));
    request_compute(app);
  } catch (const std::exception& e) {
    s.model_error = e.what();
  }
  j.loading = {};
  return true;
}

void request_compute(App& app) {
  ViewerState& s = app.state;
  if (!s.model) return;
  Request r;
  r.generation = ++s.generation;
  r.model = s.model;
  r.fields = {s.text, s.pair, s.ids_text, s.token_types_text, s.mask_id};
  r.ablation = s.ablation;
  // The layers shown now, materialized right after the forward (the same model and input keep the
  // layer count; poll_detail asks again if they change).
  r.detail_layers = s.result ? wanted_layers(s) : std::vector<int64_t>{};
  s.request_time = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.0;
  app.jobs.detail_generation = r.generation;
  app.jobs.detail_layers = r.detail_layers;
  app.jobs.worker.submit(std::move(r));
}

bool poll_compute(App& app) {
  ViewerState& s = app.state;
  std::string error;
  uint64_t error_gen = 0;
  bool input_error = false;
  auto r = app.jobs.worker.poll(s.result ? s.result->generation : 0, &error, &error_gen, &input_error);
  if (error_gen == s.generation && !error.empty()) {
    (input_error ? s.input_error : s.compute_error) = error;
    (input_error ? s.compute_error : s.input_error).clear();
  }
  if (!r || r->model != s.model) return false;  // none, or of a model no longer open
  if (r->generation >= error_gen) s.compute_error.clear(), s.input_error.clear();
  s.result = r;
  s.input = r->input;
  clamp_selection(s);
  return true;
}

void toggle_head_mask(App& app, int layer, int head) {
  ViewerState& s = app.state;
  const std::pair<int64_t, int64_t> key{layer, head};
  if (s.ablation.head_mask.count(key))
    s.ablation.head_mask.erase(key);
  else
    s.ablation.head_mask.insert(key);
  request_compute(app);
}

bool poll_detail(App& app) {
  ViewerState& s = app.state;
  Jobs& j = app.jobs;
  bool changed = false;
  if (auto d = j.worker.poll_detail(); d && d != s.detail) s.detail = d, changed = true;
  if (!s.result) return changed;
  const std::vector<int64_t> want = wanted_layers(s);
  const bool have = want.empty() || (s.detail && s.detail->generation == s.result->generation &&
                                     std::all_of(want.begin(), want.end(), [&](int64_t l) { return s.detail->has(l); }));
  const bool asked = j.detail_generation == s.result->generation && j.detail_layers == want;
  // Not while a newer result is on its way: the worker materializes its layers right after it.
  const bool newer_coming = s.generation > s.result->generation && s.compute_error.empty() && s.input_error.empty();
  if (!have && !asked && !newer_coming) {
    j.worker.submit_detail(s.result, want);
    j.detail_generation = s.result->generation;
    j.detail_layers = want;
  }
  return changed;
}

std::string write_window_png(const std::string& path, int fb_height, int x, int y, int w, int h) {
  if (w <= 0 || h <= 0) return "cannot write " + path + ": empty region";
  std::vector<uint8_t> px(static_cast<size_t>(w) * static_cast<size_t>(h) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(x, fb_height - y - h, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  for (size_t p = 3; p < px.size(); p += 4) px[p] = 255;  // opaque
  return write_png_rgba(path, w, h, px, true);
}

bool settled(const App& app) {
  const ViewerState& s = app.state;
  if (app.jobs.loading.valid()) return false;
  if (!s.model) return true;  // nothing to compute: the screenshot shows the message
  if (!s.input_error.empty() || !s.compute_error.empty()) return true;
  if (compare_busy(app)) return false;
  if (s.model_b && s.result && (!s.compare || s.compare->generation != s.result->generation)) return false;
  if (app.jobs.worker.busy() || !s.result || s.result->generation != s.generation) return false;
  for (int64_t l : wanted_layers(s))
    if (!detail_for(s, l)) return false;
  return true;
}

}  // namespace viewer
