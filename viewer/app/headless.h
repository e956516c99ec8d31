// headless.h — the driver of the headless modes: it waits for the model and the computation,
// applies --ablate like a switch flipped in a running viewer, then prints, exports, writes
// figures and the screenshot, and measures frames (--bench-frames), and says when to exit.
//
// main's loop calls it around each frame; it reads and edits the App as a learner would (the
// same actions the panels call), so what it writes is what the window shows.
#pragma once

#include "app/app.h"

#include "deberta/ablation.h"

#include <imgui.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace viewer {

/// One line of --export-list: a model, its input and ablation, and the folder its exports go to.
/// The inputs are the viewer's own fields (--text, --pair, --ids, --token-types, --mask-id).
struct ExportJob {
  std::string model;       ///< model directory
  std::string export_dir;  ///< every export of the selected map and the trace (created when the job starts)
  std::string screenshot;  ///< the window as a PNG once the exports are written ("" = none)
  std::string text, pair, ids, token_types;
  int mask_id = -1;
  std::string ablate;         ///< --ablate's flags as written (printed)
  deberta::Ablation ablation; ///< parsed: switched on after the first result, as --ablate does
};

/// Reads an --export-list file: one job a line, tab-separated KEY=VALUE fields; keys model and
/// export are required, screenshot, text, pair, ids, token_types, mask_id and ablate (the flags of
/// `deberta predict`, as --ablate) optional; blank lines and lines starting with # are skipped.
/// Errors (std::runtime_error): "PATH:LINE: …" for an unknown key, a field without '=', a missing
/// model or export, a mask_id that is not an integer, bad ablation flags; "cannot read PATH".
std::vector<ExportJob> read_export_list(const std::string& path);

/// What the headless run does (main's command-line flags).
struct HeadlessOptions {
  bool headless = false;            ///< any of --screenshot, --bench-frames, --figure, --figure-grid
  deberta::Ablation ablation;       ///< --ablate: applied once the first result is shown
  std::string screenshot;           ///< write the window (or the --panel's window with `crop`) here, then exit
  /// --log-text: write every string the last frame drew (ui/layout.h set_frame_text_log) here,
  /// then exit (with --screenshot: the frame of the screenshot; with --tour: every stop's last frame,
  /// each after a line "#### tour: <tab>[ step N, show the working | show me]").
  std::string log_text;
  int frames = 4;                   ///< frames to render once ready before the screenshot (at least 3)
  std::string panel;                ///< --panel: the window --crop cuts out
  bool crop = false;
  float mouse_x = -3.4e38f, mouse_y = -3.4e38f;  ///< pinned mouse (-FLT_MAX: none)
  float wheel = 0;                  ///< wheel notches at the mouse once the result is shown
  std::string export_dir;           ///< every export of the selected map and the trace (created by main)
  double timeout = 120;             ///< seconds to wait for the model and the computation
  std::vector<std::string> then_load;  ///< models to load in turn once the first is shown
  std::string lesson_answer;        ///< type this into the lesson step and press "check"
  bool lesson_show_me = false;      ///< press the lesson step's "show me"
  bool lesson_reveal = false;       ///< press "show the working" (after the answer: shown only after an attempt)
  std::string lesson_what_if;       ///< NAME=VALUE: set the step's "what if" and print what it changes
  std::string figure, figure_grid;  ///< figures to write (.pdf / .svg)
  std::string figure_pipeline, figure_links;  ///< the Pipeline / Token links diagrams (.pdf / .svg)
  Quantity figure_quantity = Quantity::Probs;
  int bench_frames = 0;             ///< render this many frames once ready, print mean and p95 frame time
  /// --tour: once ready, open every tab, then every lesson step twice (answer 0 and "show the
  /// working"; answer 0 and "show me"), each from the first selection, `frames` settled frames a
  /// stop; print a line a stop, then exit. One process instead of one a stop (issue 28's test).
  bool tour = false;
  /// --check-fit: on the frame of --log-text / --screenshot, or the last frame of every --tour stop,
  /// print each line of text cut at its side (ui/clip_check.h) as "fit: [STOP: ]window 'W' …"; the
  /// run then exits with 1.
  bool check_fit = false;
  /// --export-list: each job in turn in this one process (load, input, ablation, every export and
  /// the screenshot), from the first selection; a line a job ("export-list: ok DIR" or
  /// "export-list: FAIL DIR: why"); exit 1 if any failed. One process instead of one a model
  /// (issue 56: viewer_export_all).
  std::vector<ExportJob> export_list;
};

/// Drives one run of the viewer in the headless modes (and applies --ablate in the interactive one).
class HeadlessDriver {
 public:
  explicit HeadlessDriver(HeadlessOptions options);

  /// Before the frame's UI, after the polls: notes when a requested ablation's result arrived
  /// (`result_changed`), and applies --ablate once the first result is settled.
  void before_frame(App& app, bool result_changed);
  /// Headless: pins the mouse and turns the wheel for this frame (after the backend's NewFrame).
  void set_input(ImGuiIO& io) const;
  /// Headless, after rendering and before the swap: prints the state lines, writes the exports,
  /// figures and the screenshot (reading the framebuffer `fb_w` × `fb_h`; `window_rects` are the
  /// layout's windows, x, y, w, h, for --crop). Returns true when the run is done.
  bool after_render(App& app, int fb_w, int fb_h, const std::map<std::string, ImVec4>& window_rects);
  /// After the swap (and glFinish): records the frame for --bench-frames (`frame_ms` whole frame,
  /// `ui_ms` the ImGui part) and prints the summary once enough frames were measured. Returns true
  /// when done.
  bool after_swap(const App& app, double frame_ms, double ui_ms);
  /// Where each frame's strings go (ui/layout.h set_frame_text_log): --log-text's file, or with
  /// --tour a scratch file beside it ("FILE.frame", removed at the end); "" without --log-text.
  std::string frame_log_path() const { return o_.log_text.empty() ? "" : o_.tour ? o_.log_text + ".frame" : o_.log_text; }
  /// 0, or 1 when something failed (a timeout, an export or screenshot error).
  int exit_code() const { return exit_code_ != 0 ? exit_code_ : clipped_ > 0 ? 1 : 0; }

 private:
  /// One stop of --tour: a tab, or a lesson step (0-based) with "show the working" or "show me".
  struct TourStop {
    Tab tab = Tab::Grid;
    int lesson_step = -1;
    bool show_me = false;
  };
  /// --tour, after a frame drawn once ready: counts the stop's settled frames, moves to the next
  /// stop (restoring the first selection) and says when the tour is over.
  bool tour_step(App& app, bool ready, double waited);
  /// --figure, --figure-grid, --figure-pipeline, --figure-links of the first settled frame; a write
  /// that fails sets the exit code. Returns whether any was asked for.
  bool write_figures(const ViewerState& s);
  /// The first settled frame: --export's files, then on stderr what the panels show in red
  /// (warnings, input and compute errors; a model that could not be loaded sets the exit code).
  void report_first(const ViewerState& s);
  /// --screenshot: the window's framebuffer (`fb_w` × `fb_h`), cropped to the --panel's window
  /// with --crop, as a PNG; a failure sets the exit code.
  void take_screenshot(int fb_w, int fb_h, const std::map<std::string, ImVec4>& window_rects);
  /// --log-text without --tour: reports the frame log written by the last frame (layout.h's frame
  /// text log); a failed write sets the exit code.
  void report_frame_log();
  /// --check-fit: prints the frame's lines cut at their side, each after `where` (the tour's stop or "").
  void report_clipped(const std::string& where);
  int clipped_ = 0;  ///< lines --check-fit found cut at their side (the run goes on; exit 1 at the end)
  /// --tour with --log-text: appends the frame log of the stop `current` to the tour's log under a
  /// `#### tour: …` line. Returns false (and sets the exit code) when the frame log failed.
  bool append_tour_log(const TourStop* current);
  /// --tour with --log-text, at the end: writes the stops' frames to --log-text.
  void write_tour_log();

  /// --export-list, after each frame: starts the next job once the last is done, applies the job's
  /// ablation after its first result, writes its exports and screenshot, says when all are done.
  bool export_list_step(App& app, int fb_w, int fb_h);
  /// --export-list, between jobs (the last one settled): the next job from the first selection, as
  /// a fresh viewer would start it; true when every job is done (the exit code set if one failed).
  bool start_next_job(App& app);
  /// Ends the current job as failed: prints why, counts it.
  void fail_job(const std::string& why);

  size_t job_next_ = 0;     ///< the next job of --export-list to start
  int job_phase_ = -1;      ///< −1 between jobs, 0 loading / first result, 1 ablated result, 2 drawing
  int job_frames_ = 0;      ///< settled frames drawn at phase 2
  int jobs_failed_ = 0;
  std::chrono::steady_clock::time_point job_began_{};
  std::vector<TourStop> tour_;
  std::string tour_log_;  ///< --tour with --log-text: the stops' frames so far
  size_t tour_next_ = 0;
  int tour_frames_ = -1;  ///< settled frames drawn at the current stop (−1: the tour has not begun)
  int start_layer_ = 0, start_head_ = 0, start_emd_head_ = 0, start_qi_ = 0, start_kj_ = 0, start_k_ = 0;  ///< each stop's (job's) selection
  Tab start_tab_ = Tab::Grid;
  std::chrono::steady_clock::time_point tour_stop_began_{};
  HeadlessOptions o_;
  bool applied_args_ = false;
  size_t then_load_next_ = 0;
  std::chrono::steady_clock::time_point ablation_requested_{};
  double ablation_latency_ms_ = -1;
  int frames_after_ready_ = 0;
  std::vector<double> frame_ms_, ui_ms_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int exit_code_ = 0;
};

}  // namespace viewer
