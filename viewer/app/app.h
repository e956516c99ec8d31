// app.h — what main owns besides the plain state: the GL resources and the background jobs, and
// the actions that start, poll and install those jobs' results.
//
// [SECTION] index
//   Graphics   textures of the heatmaps and the fonts (OpenGL / ImGui resources)
//   Jobs       the compute worker and the model loads / comparison running in the background
//   App        ViewerState + Jobs + Graphics: what every Draw*Panel(app) receives
//   actions    start_load, poll_load, request_compute, poll_compute, request_detail, ...
//
// Destroy an App before the GL context: its textures are deleted in ~TextureCache.
#pragma once

#include "ui/fonts.h"
#include "state/state.h"
#include "jobs/worker.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct ImFont;

namespace viewer {

/// GL textures of the heatmaps, re-uploaded only when their data changed (heatmap.cpp).
struct TextureCache {
  struct Entry {
    unsigned int texture = 0;
    int width = 0, height = 0;
    uint64_t version = 0;
    double lo = 0, hi = 0;
    int colormap = 0;
    const void* data = nullptr;
  };
  std::map<std::string, Entry> entries;
  TextureCache() = default;
  TextureCache(const TextureCache&) = delete;
  TextureCache& operator=(const TextureCache&) = delete;
  ~TextureCache();  ///< deletes the textures: needs the GL context that made them
};

/// The GL and ImGui resources the panels draw with.
struct Graphics {
  TextureCache textures;
  FontAtlas fonts;         ///< the atlas, grown with the characters on screen (fonts.h)
  ImFont* mono = nullptr;  ///< DejaVu Sans Mono for numbers (null: the default font)
};

/// What runs in the background. Each future is valid while its job runs.
struct Jobs {
  Worker worker;  ///< the computations of model A (compute_result, materialize_detail)
  std::future<std::shared_ptr<const LoadedModel>> loading;  ///< model A being read
  std::string loading_path;
  std::shared_ptr<std::atomic<double>> load_progress = std::make_shared<std::atomic<double>>(0.0);
  std::future<std::shared_ptr<const LoadedModel>> loading_b;  ///< model B being read
  std::string loading_b_path;
  std::future<std::shared_ptr<const CompareResult>> comparing;  ///< model B on model A's input
  std::future<ZooListing> reading_zoo;  ///< the zoo folder being listed (read_zoo), for the Compare tab
  /// What a load's step says: more steps can run now; nothing to do before a later frame (the
  /// tokenizer's own thread is working, LoadJob::waiting); or the load finished.
  enum class Step { more, wait, done };
  /// The web edition's loads: each runs one step per call (viewer::LoadJob) and says what is next;
  /// `run_deferred_jobs` runs `step_ms` of them a frame, or until one waits. Empty on the desktop.
  std::vector<std::function<Step()>> steppers;
  /// Milliseconds of the loads' steps a frame runs, at least one step (the browser test sets 0:
  /// exactly one step a frame, so a load spans as many frames as it has steps on any machine).
  double step_ms = 25;
  /// The longest single step of the loads run since the record was last reset (the web page's
  /// `web_load_longest_step`, issue 55 item 4: no step over 100 ms): its milliseconds, what it
  /// did (`LoadJob::stage`), how many steps ran, and how many of them built the position table.
  struct StepRecord {
    double longest_ms = 0;
    std::string longest_stage;
    int64_t steps = 0, position_steps = 0;
    int64_t tokenizer_thread_steps = 0;  ///< steps that looked at the tokenizer's own thread (LoadJob::kThreadStage)
  };
  std::shared_ptr<StepRecord> load_steps = std::make_shared<StepRecord>();
  uint64_t detail_generation = 0;      ///< the result generation of the newest detail request
  std::vector<int64_t> detail_layers;  ///< and its layers
};

/// The viewer: plain state, background jobs, GL resources. Owned by main.
struct App {
  ViewerState state;
  Jobs jobs;
  Graphics gfx;
};

// ----------------------------------------------------------------------------------------------
// Actions (app.cpp)

/// The web edition (one thread): runs `Jobs::step_ms` (~25 ms) of the model loads' steps, at least one, and
/// the comparisons started in an earlier frame, now, on this thread (their futures are deferred
/// there). The desktop's run on threads: nothing to do.
void run_deferred_jobs(App& app);
/// Starts loading `path` in the background; the current model stays in use until it succeeds.
/// Does nothing while another load of model A runs.
void start_load(App& app, const std::string& path);
/// Checks a pending load; on success installs the model (resetting the ablation) and re-runs; on
/// failure sets `model_error` and keeps the previous model. Returns true when a load finished.
bool poll_load(App& app);
/// Loads `path` as model B of the Compare tab in the background (model A stays as it is).
void start_load_b(App& app, const std::string& path);
/// Installs a finished model-B load and (re)starts the comparison when model A's result or model
/// B changed; installs a finished listing of the zoo folder (`ViewerState::zoo`) and starts one
/// when `zoo_dir` is not the folder listed. Returns true when something changed.
bool poll_compare(App& app);
/// True while a model-B load, a comparison or a listing of the zoo is under way.
bool compare_busy(const App& app);
/// Requests a computation for the current model, input fields and ablation (the worker
/// tokenizes the fields). Does nothing without a model.
void request_compute(App& app);
/// Takes finished results from the worker. Returns true when the shown result changed.
bool poll_compute(App& app);
/// Asks the worker for the layers the shown panels need in full (`wanted_layers`) when the
/// current detail lacks them and they were not asked for already; installs a finished detail.
/// Never waits. Returns true when the shown detail changed.
bool poll_detail(App& app);
/// Flips the mask of head (layer, head) and re-runs.
void toggle_head_mask(App& app, int layer, int head);
/// Reads the rectangle (x, y, w, h; top-left origin, pixels) of the rendered back buffer of height
/// `fb_height` and writes it as an opaque PNG (`write_png_rgba`, rows flipped). Call after
/// rendering, before the swap. Returns "" or the error.
std::string write_window_png(const std::string& path, int fb_height, int x, int y, int w, int h);
/// True when nothing the shown state depends on is still being computed or loaded (the
/// headless driver's "ready"): the model, its newest result, the detail the panels want, the
/// comparison. An input or compute error counts as settled.
bool settled(const App& app);

}  // namespace viewer
