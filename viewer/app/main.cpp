// main.cpp — deberta-viewer: the command line, the window, the fixed layout of the panels, keyboard
// shortcuts and the frame loop. The headless modes (--screenshot, --export, --figure,
// --bench-frames, --tour) are driven by headless.cpp; --bench-rerun (no window) by bench_rerun.cpp.
//
//   deberta-viewer [--model DIR] [--text "…"] [--ids 1,2,3] [--mask-id N]
//   deberta-viewer --screenshot OUT.png [--frames N] [--panel NAME] [--select L:H[:I:J]] [--ablate "…"]
//   deberta-viewer --bench-frames N
//   deberta-viewer --tour [--frames N]
//   deberta-viewer --export-list JOBS.tsv
//   deberta-viewer --bench-rerun N [--model DIR | preset:xsmall] [--threads T]
//
// [SECTION] index: arguments · window · main loop (the layout and keys: layout.cpp, shared with the web edition)
#include "app/app.h"
#include "jobs/bench_rerun.h"
#include "figures/figure_export.h"
#include "app/headless.h"
#include "i18n/i18n.h"
#include "ui/layout.h"
#include "panels/panels.h"

#include "deberta/ablation.h"  // parse_ablation_flags: --ablate takes exactly `deberta predict`'s switches

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <malloc.h>
#include <optional>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

namespace {

using viewer::App;
using viewer::Tab;
using viewer::ViewerState;

// ----------------------------------------------------------------------------------------------
// Arguments

struct Args {
  std::string model, text, ids;
  std::string lang;  ///< --lang: the interface's language (i18n.h); "" = from the environment
  std::string ui_size;  ///< --ui-size: small, normal, large, larger or largest (ui/layout.h); "" = normal
  std::string pair, token_types;  // a sentence pair (segment B) / token types for --ids
  int mask_id = -1;
  std::string screenshot;
  std::string log_text;  ///< --log-text FILE: the strings of the last frame (headless)
  int frames = 4;
  std::string panel;
  std::string select;
  std::string ablate;
  int bench_frames = 0;
  int width = 1280, height = 800;
  std::string mouse;  ///< "X,Y": pin the mouse (to show a tooltip in a screenshot)
  float wheel = 0;    ///< headless: turn the mouse wheel by this many notches at --mouse once the result is shown
  bool crop = false;  ///< crop the screenshot to the --panel's window
  std::string export_dir;  ///< headless: write every export of the selected map and the trace here
  double timeout = 120;
  std::vector<std::string> then_load;  ///< headless: models to load, one after another, once the first is shown
  std::string compare;     ///< model B of the Compare tab
  std::string zoo;         ///< the trained-ablation zoo folder (default: next to the bundled model)
  int lesson_step = 0;     ///< --lesson-step N (1-based): open the Lesson tab at step N
  std::string lesson_answer;  ///< headless: type this answer into the lesson and press "check"
  bool lesson_reveal = false; ///< headless: press "reveal"
  bool lesson_show_me = false; ///< headless: press "show me" once the result is shown
  std::string lesson_what_if;  ///< headless: NAME=VALUE for the step's "what if" (K=2, f=1, p2c=paper)
  bool tour = false;           ///< --tour: every tab and lesson step in one run (headless.h)
  bool check_fit = false;      ///< --check-fit: report text cut at a box's side (headless.h)
  std::string export_list;     ///< --export-list FILE: every job's exports in one run (headless.h)
  std::string zoom;        ///< "X,Y,F": every map starts zoomed by F around (X, Y) in map units 0…1
  std::string figure, figure_grid;  ///< headless: write the selected map / the layers × heads grid (.pdf/.svg)
  std::string figure_pipeline, figure_links;  ///< headless: the Pipeline / Token links diagrams (.pdf/.svg)
  std::string figure_quantity = "probs";  ///< term of the figures: c2c, c2p, p2c, p2p, logits, probs
  int bench_rerun = 0;     ///< --bench-rerun N: time the re-run after an ablation toggle at N tokens (no window)
  int threads = 0;         ///< --threads: the core's thread count (0: the viewer's default)
  std::string backend;     ///< --backend: fast or reference (empty: DEBERTA_BACKEND, else fast)

  // Parsed from the above by parse_args
  bool headless = false;   ///< --screenshot, --bench-frames, --figure or --figure-grid
  viewer::MapView zoom_view;
  std::vector<viewer::ExportJob> export_jobs;  ///< --export-list's jobs
  viewer::Quantity figure_q = viewer::Quantity::Probs;
  deberta::Ablation ablation;
  std::vector<int> selection;  ///< --select parsed: L, H[, I, J]
  Tab start_tab = Tab::Grid;
  float mouse_x = -FLT_MAX, mouse_y = -FLT_MAX;
};

bool parse_tab(const std::string& name, Tab* tab) {
  if (name == "lesson") return *tab = Tab::Lesson, true;
  for (int t = 0; t < static_cast<int>(Tab::Count); ++t)
    if (name == viewer::tab_name(static_cast<Tab>(t))) return *tab = static_cast<Tab>(t), true;
  // Left-column panels: keep the default tab.
  return name == "model" || name == "tokens" || name == "ablations" || name == "ablation";
}

// ----------------------------------------------------------------------------------------------
// Window and fonts

void glfw_error(int code, const char* text) { std::fprintf(stderr, "deberta-viewer: GLFW error %d: %s\n", code, text); }

/// --select L:H or L:H:I:J (non-negative integers). Errors name the option and what it expects.
std::vector<int> parse_select(const std::string& text) {
  const std::string expected = "--select wants layer:head or layer:head:query:key (non-negative integers), found '" +
                               text + "'";
  std::vector<int> v;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t colon = text.find(':', start);
    const std::string part = text.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(expected);
    v.push_back(std::stoi(part));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (v.size() != 2 && v.size() != 4) throw std::invalid_argument(expected);
  return v;
}

/// The options of what the viewer shows: the model, the input, the tab and selection, the ablation,
/// model B and the zoo, the zoom, the language, the engine and the window's size.
void add_view_options(CLI::App& cli, Args& args) {
  cli.add_option("--model", args.model, "Model directory (default: the bundled model)");
  CLI::Option* text_option = cli.add_option("--text", args.text, "Input text; the literal [MASK] becomes the mask token");
  // Both given: one would be dropped silently; refused, as the CLI's resolver refuses it (issue 44, class 5).
  cli.add_option("--ids", args.ids, "Input token ids, comma-separated (models without a tokenizer)")->excludes(text_option);
  cli.add_option("--mask-id", args.mask_id, "Id of the mask token when the model has no tokenizer");
  cli.add_option("--pair", args.pair, "Second segment of a sentence pair (classifiers): [CLS] text [SEP] pair [SEP]");
  cli.add_option("--token-types", args.token_types, "Token types for --ids, comma-separated (e.g. 0,0,0,1,1)");
  cli.add_option("--panel", args.panel,
                 "Tab to show: grid, head, distance, equation, predictions, compare, export, lesson, pipeline, links (model, tokens, ablations: default tab)");
  cli.add_option("--select", args.select, "Selected layer:head[:query:key]");
  cli.add_option("--ablate", args.ablate,
                 "Ablation flags as for `deberta predict`, e.g. \"--terms c2c,c2p --head-mask 1:0 --no-emd\"");
  cli.add_option("--width", args.width, "Window width")->check(CLI::Range(640, 4096));
  cli.add_option("--height", args.height, "Window height")->check(CLI::Range(480, 4096));
  cli.add_option("--compare", args.compare,
                 "Model B of the Compare tab (\"compare with…\"), run on the same tokens, e.g. a zoo model: "
                 "--model notebooks_data/models/zoo/deberta-tiny-baseline --compare notebooks_data/models/zoo/deberta-tiny-no-c2p --panel compare");
  cli.add_option("--zoo", args.zoo, "Folder of the trained-ablation zoo listed in the Compare tab (default: models/zoo beside the bundled model)");
  cli.add_option("--zoom", args.zoom,
                 "X,Y,F: every map starts zoomed by F (>= 1) around (X, Y) in map units 0…1 (0,0 top-left), "
                 "e.g. 0.1,0.1,16");
  cli.add_option("--threads", args.threads, "Threads of the core's forward pass (deberta::set_num_threads; default: "
                                             "all cores for --bench-rerun, the core's default otherwise)")->check(CLI::Range(1, deberta::kMaxThreads));
  cli.add_option("--backend", args.backend,
                 "Engine of the forward pass: 'fast' (packed tiles, threads; default) or 'reference' (one Eigen "
                 "expression per op, one thread); also DEBERTA_BACKEND. As the CLI's --backend")
      ->check(CLI::IsMember({"fast", "reference"}));
  cli.add_option("--lang", args.lang,
                 "Language of the interface and the lesson: en, ko, ja, zh_CN, it (a locale name such as ko_KR.UTF-8 "
                 "works too; default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG). The CLI's messages and "
                 "--lesson-answer's verdict words stay English");
  cli.add_option("--ui-size", args.ui_size,
                 "Size of the interface's text and controls at start, as the A- / A+ buttons set it: small, normal "
                 "(default), large, larger, largest")
      ->check(CLI::IsMember({"small", "normal", "large", "larger", "largest"}));
}

/// The options of the headless modes: screenshots, exports, figures, the lesson's actions, the tour
/// and the benchmarks.
void add_headless_options(CLI::App& cli, Args& args) {
  cli.add_option("--screenshot", args.screenshot, "Render, write the window to this PNG and exit");
  cli.add_option("--frames", args.frames, "Frames to render before the screenshot (>= 3)");
  cli.add_option("--log-text", args.log_text,
                 "Headless: write every string the last frame drew (Dear ImGui's log: labels and text, a line a row) "
                 "to this file and exit (with --screenshot: the screenshot's frame)");
  cli.add_option("--bench-frames", args.bench_frames, "Render N frames of the default scene, print mean and p95 frame time");
  cli.add_option("--mouse", args.mouse, "Pin the mouse at X,Y (headless modes), e.g. to show a tooltip");
  cli.add_option("--wheel", args.wheel, "Headless: turn the mouse wheel by N notches at --mouse once the result is shown "
                                        "(zooms the map under the mouse around that point)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {  // CLI::Range lets "nan" through
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == '\0' && std::isfinite(v) && std::fabs(v) <= 1000
                       ? ""
                       : "must be a finite number of notches in [-1000, 1000]";
          },
          "NOTCHES"));
  cli.add_flag("--crop", args.crop, "Crop the screenshot to the window of --panel");
  cli.add_option("--export", args.export_dir,
                 "With --screenshot: also write the selected map (PNG, CSV, .npy of every quantity) and the trace "
                 "(safetensors) to this folder");
  cli.add_option("--then-load", args.then_load,
                 "Headless: after the first model is shown, load these models in turn (a failed load must keep the "
                 "previous model and the text); prints the resulting state")->expected(1, 16);
  cli.add_option("--timeout", args.timeout, "Headless modes: seconds to wait for the model and the computation")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {  // CLI::PositiveNumber lets "nan" through; a NaN timeout never fires
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == '\0' && std::isfinite(v) && v > 0 ? "" : "must be a positive finite number of seconds";
          },
          "POSITIVE SECONDS"));
  cli.add_option("--lesson-step", args.lesson_step, "Open the Lesson tab at step N (1-based)")->check(CLI::Range(1, 99));
  cli.add_option("--lesson-answer", args.lesson_answer, "Headless: type this answer into the lesson step and press check")
;
  cli.add_flag("--lesson-reveal", args.lesson_reveal, "Headless: press \"show the working\" after --lesson-answer (the working shows only after an attempt)");
  cli.add_option("--lesson-what-if", args.lesson_what_if,
                 "Headless: set the lesson step's \"what if\" control (K=2, f=1.5, p2c=paper or p2c=code) after "
                 "--lesson-answer and print the step's number and the [MASK]'s top 3 before and after");
  cli.add_flag("--lesson-show-me", args.lesson_show_me, "Headless: press the lesson step's \"show me\" (opens its tab, layer, head, cell)");
  cli.add_flag("--check-fit", args.check_fit,
               "Headless: report every line of text the last frame drew cut at the left or right of its box or window "
               "(a line \"fit: ...\" each; with --tour, at every stop) and exit with 1 if there is one");
  cli.add_flag("--tour", args.tour,
               "Headless: draw every tab, then every lesson step (answer 0, then \"show the working\"; answer 0, then \"show me\"), "
               "--frames frames each, printing a line a stop, and exit");
  cli.add_option("--export-list", args.export_list,
                 "Headless: one export a line of FILE (tab-separated KEY=VALUE: model, export, and screenshot, text, "
                 "pair, ids, token_types, mask_id, ablate), each model loaded in turn in this one process; prints "
                 "\"export-list: ok DIR\" or \"export-list: FAIL DIR: why\" a job; exit 1 if any failed");
  cli.add_option("--figure", args.figure,
                 "Headless: write the selected map as a figure for slides (.pdf or .svg, cairo) and exit");
  cli.add_option("--figure-grid", args.figure_grid, "Headless: write the layers × heads grid as a figure (.pdf or .svg)");
  cli.add_option("--figure-pipeline", args.figure_pipeline, "Headless: write the Pipeline diagram (.pdf or .svg)");
  cli.add_option("--figure-links", args.figure_links,
                 "Headless: write the Token links of the selected layer and head (--select), attention weights (.pdf or .svg)");
  cli.add_option("--figure-quantity", args.figure_quantity, "Quantity of --figure/--figure-grid: " + viewer::quantity_names());
  cli.add_option("--bench-rerun", args.bench_rerun,
                 "Time the re-run after an ablation toggle (-c2p on/off, a head mask in the last layer) at N tokens "
                 "and print a table, without a window. --model may be preset:tiny, preset:xsmall or preset:base "
                 "(random weights, real shapes)")->check(CLI::Range(1, 1 << 20));
}

/// Checks the parsed options and reads the composite ones (--lang, --zoom, --figure-quantity, the
/// figures' formats, --ablate, --select, --panel, --export, --mouse) into `args`. Returns -1 to go
/// on, else 2 after printing what is wrong.
int check_args(Args& args) {
  {
    const std::string lang = args.lang.empty() ? viewer::i18n::from_environment() : viewer::i18n::resolve(args.lang);
    if (lang.empty() || !viewer::i18n::set_language(lang)) {
      std::string have;
      for (const auto& l : viewer::i18n::languages()) have += (have.empty() ? "" : ", ") + l.code;
      std::fprintf(stderr, "deberta-viewer: --lang: no catalogue for '%s' (available: %s)\n", args.lang.c_str(), have.c_str());
      return 2;
    }
  }
  if (!args.ui_size.empty()) viewer::set_ui_size(viewer::ui_size_from_name(args.ui_size.c_str()));
  if (!args.export_list.empty()) {
    try {
      args.export_jobs = viewer::read_export_list(args.export_list);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "deberta-viewer: --export-list: %s\n", e.what());
      return 2;
    }
    if (args.export_jobs.empty()) {
      std::fprintf(stderr, "deberta-viewer: --export-list: %s holds no job\n", args.export_list.c_str());
      return 2;
    }
  }
  viewer::MapView& zoom_view = args.zoom_view;
  if (!args.zoom.empty() &&
      (std::sscanf(args.zoom.c_str(), "%f,%f,%f", &zoom_view.cx, &zoom_view.cy, &zoom_view.zoom) != 3 ||
       !(zoom_view.zoom >= 1 && zoom_view.zoom <= 4096) || !(zoom_view.cx >= 0 && zoom_view.cx <= 1) ||
       !(zoom_view.cy >= 0 && zoom_view.cy <= 1))) {
    std::fprintf(stderr, "deberta-viewer: --zoom wants X,Y,F with X, Y in [0, 1] and F in [1, 4096], got '%s'\n",
                 args.zoom.c_str());
    return 2;
  }
  viewer::Quantity& figure_q = args.figure_q;
  if (const std::optional<viewer::Quantity> q = viewer::quantity_from_name(args.figure_quantity)) {
    figure_q = *q;
  } else {
    std::fprintf(stderr, "deberta-viewer: unknown --figure-quantity '%s' (%s)\n", args.figure_quantity.c_str(),
                 viewer::quantity_names().c_str());
    return 2;
  }
  for (const std::string* f : {&args.figure, &args.figure_grid, &args.figure_pipeline, &args.figure_links})
    if (!f->empty() && !viewer::figure_format_ok(*f)) {
      std::fprintf(stderr, "deberta-viewer: %s: a figure must end in .pdf or .svg\n", f->c_str());
      return 2;
    }
  try {
    if (!args.ablate.empty()) args.ablation = deberta::parse_ablation_flags(args.ablate);
    if (!args.select.empty()) args.selection = parse_select(args.select);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deberta-viewer: %s\n", e.what());
    return 2;
  }
  if (args.lesson_step > 0) args.panel = args.panel.empty() ? "lesson" : args.panel;
  if (!args.panel.empty() && !parse_tab(args.panel, &args.start_tab)) {
    std::fprintf(stderr, "deberta-viewer: unknown --panel '%s' (grid, head, distance, equation, predictions, compare, export, lesson, pipeline, links, "
                         "model, tokens, ablations)\n", args.panel.c_str());
    return 2;
  }
  if (!args.export_dir.empty()) {  // before any window: an existing file here must not abort later
    std::error_code ec;
    std::filesystem::create_directories(args.export_dir, ec);
    if (ec || !std::filesystem::is_directory(args.export_dir, ec)) {
      std::fprintf(stderr, "deberta-viewer: --export %s: not a directory that can be created (%s)\n", args.export_dir.c_str(),
                   ec ? ec.message().c_str() : "a file of that name exists");
      return 2;
    }
  }
  if (!args.mouse.empty() && std::sscanf(args.mouse.c_str(), "%f,%f", &args.mouse_x, &args.mouse_y) != 2) {
    std::fprintf(stderr, "deberta-viewer: --mouse wants X,Y\n");
    return 2;
  }
  return -1;
}

/// Reads and checks the command line into `*args`. Returns -1 to go on, else the exit code (0 after
/// --help; 2 after printing what is wrong with a flag).
int parse_args(int argc, char** argv, Args* out) {
  Args& args = *out;
  CLI::App cli{"deberta-viewer: explore DeBERTa's disentangled attention, relative distances, the Enhanced Mask "
               "Decoder and ablations, layer by layer and head by head."};
  add_view_options(cli, args);
  add_headless_options(cli, args);
  CLI11_PARSE(cli, argc, argv);
  // A blank --lesson-answer "" is still an attempt, judged "not an answer".
  if (cli.get_option("--lesson-answer")->count() > 0 && args.lesson_answer.empty()) args.lesson_answer = " ";

  args.headless = !args.export_list.empty() || args.tour || !args.screenshot.empty() || !args.log_text.empty() || args.bench_frames > 0 || !args.figure.empty() || !args.figure_grid.empty() ||
                  !args.figure_pipeline.empty() || !args.figure_links.empty();
  return check_args(args);
}

/// The state the command line asks for (text, selection, tab, lesson step, zoom, recent models),
/// and the loads of model A (or the notice that the bundled model is missing) and model B.
void init_state(App& app, const Args& args) {
  ViewerState& s = app.state;
  s.headless = args.headless;
  s.tab = args.start_tab;
  s.text = args.text;
  s.ids_text = args.ids;
  s.pair = args.pair;
  s.token_types_text = args.token_types;
  s.mask_id = args.mask_id;
  s.initial_view = args.zoom_view;
  if (args.lesson_step > 0) s.lesson.step = args.lesson_step - 1;
  if (!args.selection.empty()) {
    s.layer = args.selection[0], s.head = args.selection[1];
    s.emd_head = args.selection[1];  // the EMD panel shows the same head
    if (args.selection.size() == 4) s.qi = args.selection[2], s.kj = args.selection[3];
  }
  // Suggestions for the recent list: the golden models next to the bundled one.
  const std::filesystem::path def = DEBERTA_DEFAULT_MODEL;
  const std::filesystem::path golden = def.parent_path().parent_path() / "golden";
  // The shipped classifier and the zoo's baseline and -c2p models, one click away.
  for (const char* m : {"deberta-tiny-wordnet-match", "zoo/deberta-tiny-baseline", "zoo/deberta-tiny-no-c2p"})
    if (std::filesystem::exists(def.parent_path() / m / "config.json")) s.recent.push_back((def.parent_path() / m).string());
  for (const char* g : {"v1_basic", "v2_basic", "v3_emd"})
    if (std::filesystem::exists(golden / g / "config.json")) s.recent.push_back((golden / g).string());
  s.zoo_dir = args.zoo.empty() ? (def.parent_path() / "zoo").string() : args.zoo;
  if (!args.compare.empty()) viewer::start_load_b(app, args.compare);
  s.model_path = args.model.empty() ? def.string() : args.model;
  if (!args.export_jobs.empty()) {
    // --export-list: the driver loads each job's model in turn.
  } else if (args.model.empty() && !std::filesystem::exists(def / "config.json")) {
    s.model_notice = "The bundled model is not there yet (" + def.string() +
                     " has no config.json). Open a model directory above, e.g. one of the golden models "
                     "in the recent list (they have no tokenizer: type ids such as 14,43,3,33 with [MASK] id 3).";
  } else {
    start_load(app, s.model_path);
  }
}

/// What the headless driver does, from the command line.
viewer::HeadlessOptions headless_options(const Args& args) {
  viewer::HeadlessOptions ho;
  ho.headless = args.headless;
  ho.ablation = args.ablation;
  ho.screenshot = args.screenshot, ho.log_text = args.log_text, ho.frames = args.frames, ho.panel = args.panel, ho.crop = args.crop;
  ho.mouse_x = args.mouse_x, ho.mouse_y = args.mouse_y, ho.wheel = args.wheel;
  ho.export_dir = args.export_dir, ho.timeout = args.timeout, ho.then_load = args.then_load;
  ho.lesson_answer = args.lesson_answer, ho.lesson_show_me = args.lesson_show_me, ho.lesson_reveal = args.lesson_reveal;
  ho.lesson_what_if = args.lesson_what_if;
  ho.figure = args.figure, ho.figure_grid = args.figure_grid, ho.figure_quantity = args.figure_q;
  ho.figure_pipeline = args.figure_pipeline, ho.figure_links = args.figure_links;
  ho.bench_frames = args.bench_frames;
  ho.tour = args.tour;
  ho.check_fit = args.check_fit;
  ho.export_list = args.export_jobs;
  return ho;
}

/// The process's allocator and threads: large freed blocks kept, one arena, Eigen single-threaded,
/// --threads and --backend applied.
void tune_process(const Args& args) {
  // Keep large freed blocks in the process (glibc) instead of returning them to the kernel: every
  // re-run and materialized layer allocates the same N × N maps again, and on a VM each page fault
  // of a fresh block is expensive (as `deberta bench` does; the peak RSS is the same). One arena for
  // all threads: a second thread's own arena (64 MB heaps) is not governed by these thresholds
  // (`deberta bench`'s keep_freed_memory).
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  mallopt(M_ARENA_MAX, 1);
  // Eigen's own GEMM threading stays off: the core splits its products itself, the same bits at
  // any thread count (deberta/backend.h). --threads sets the count for the whole process, so the
  // worker that recomputes (beside the UI thread, which only draws) uses it too; without it,
  // OpenMP's default (every core, or OMP_NUM_THREADS).
  Eigen::setNbThreads(1);
  if (args.threads > 0) deberta::set_num_threads(args.threads);
  if (!args.backend.empty()) deberta::set_backend(deberta::parse_backend(args.backend, "--backend"));
}

/// A window with an OpenGL 3.3 context, ImGui on it (no imgui.ini in the headless modes) and the
/// viewer's style. Null, after saying why on stderr, when there is no display or no such context.
GLFWwindow* open_window(const Args& args) {
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr, "deberta-viewer: cannot initialise GLFW (no display? run under xvfb-run)\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* window = glfwCreateWindow(args.width, args.height, "DeBERTa Explorer", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "deberta-viewer: cannot open an OpenGL 3.3 window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(args.headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  if (args.headless) ImGui::GetIO().IniFilename = nullptr;
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  viewer::set_style();
  return window;
}

/// The frame loop until the window closes or the headless driver is done. Owns the App: its
/// textures and worker thread end before the GL context does.
void run_window(GLFWwindow* window, const Args& args, viewer::HeadlessDriver& driver) {
  ImGuiIO& io = ImGui::GetIO();
  App app;  // textures and the worker thread: destroyed before the GL context below
  app.gfx.mono = app.gfx.fonts.init();
  init_state(app, args);
  ViewerState& s = app.state;

  bool font_nearest = false;
  bool done = false;
  // Quiet when idle (issue 30): once nothing loads or computes and the last input has had two
  // frames to settle ImGui's layout, the loop sleeps in glfwWaitEventsTimeout until the next
  // event instead of drawing frames nobody sees. It still wakes every second, to pick up work
  // finished in the background; a focused text field wakes twice a second for its cursor.
  int quiet_frames = 0;  // frames drawn since the last input event or new result
  while (!done && !glfwWindowShouldClose(window)) {
    if (!args.headless && quiet_frames >= 2 && viewer::settled(app)) {
      const double timeout = io.WantTextInput ? 0.5 : 1.0;
      const auto w0 = std::chrono::steady_clock::now();
      glfwWaitEventsTimeout(timeout);
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      if (waited < 0.95 * timeout) quiet_frames = 0;  // woken by an event, not the timeout
    } else {
      glfwPollEvents();
    }
    const auto t0 = std::chrono::steady_clock::now();
    viewer::poll_load(app);
    viewer::poll_compare(app);
    const bool result_changed = viewer::poll_compute(app);
    viewer::poll_detail(app);
    if (result_changed || !viewer::settled(app)) quiet_frames = 0;
    driver.before_frame(app, result_changed);

    // The atlas follows the characters on screen (fonts.h).
    app.gfx.fonts.require_state(s);
    if (app.gfx.fonts.rebuild_if_needed()) {
      app.gfx.mono = app.gfx.fonts.mono();
      font_nearest = false;
    }
    ImGui_ImplOpenGL3_NewFrame();
    if (!font_nearest && io.Fonts->TexID) {
      // Glyphs are drawn at integer pixel positions: nearest sampling looks the same and is cheaper
      // for software rasterisers than the backend's GL_LINEAR.
      glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<intptr_t>(io.Fonts->TexID)));
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      font_nearest = true;
    }
    ImGui_ImplGlfw_NewFrame();
    driver.set_input(io);
    viewer::build_frame(app);
    const auto t_ui = std::chrono::steady_clock::now();
    int fb_w = 0, fb_h = 0;
    viewer::render_frame(window, &fb_w, &fb_h);

    if (!s.window_png_request.empty()) {
      const std::string err = viewer::write_window_png(s.window_png_request, fb_h, 0, 0, fb_w, fb_h);
      s.export_status = err.empty() ? "wrote " + s.window_png_request : err;
      s.window_png_request.clear();
    }
    s.written_files.clear();  // the files are on disk already (the web edition downloads them)
    done = driver.after_render(app, fb_w, fb_h, viewer::window_rects());
    glfwSwapBuffers(window);
    if (args.bench_frames > 0) {
      glFinish();
      const auto now = std::chrono::steady_clock::now();
      done = driver.after_swap(app, std::chrono::duration<double, std::milli>(now - t0).count(),
                               std::chrono::duration<double, std::milli>(t_ui - t0).count()) || done;
    }
    if (args.headless && !viewer::settled(app)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ++quiet_frames;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (const int rc = parse_args(argc, argv, &args); rc >= 0) return rc;
  tune_process(args);
  if (args.bench_rerun > 0) {
    viewer::BenchRerunOptions b;
    b.model = args.model.empty() ? std::string(DEBERTA_DEFAULT_MODEL) : args.model;
    b.tokens = args.bench_rerun;
    b.text = args.text, b.ids = args.ids, b.mask_id = args.mask_id;
    b.layer = args.selection.empty() ? 0 : args.selection[0];
    return viewer::run_bench_rerun(b);
  }
  GLFWwindow* window = open_window(args);
  if (!window) return 1;
  viewer::HeadlessDriver driver(headless_options(args));
  viewer::set_frame_text_log(driver.frame_log_path());
  run_window(window, args, driver);

  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return driver.exit_code();
}
