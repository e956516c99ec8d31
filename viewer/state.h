// state.h — everything the explorer shows and every choice the learner has made, in one struct.
//
// [SECTION] index
//   LoadedModel   a model directory in memory (weights + tokenizer), shared read-only
//   Request       what the background worker should compute (model, tokens, ablation)
//   Result        one finished computation: traces, EMD passes, predictions; immutable once published
//   Worker        the compute thread: newest request wins (generation counter), the UI never waits
//   ViewerState   the one state struct every Draw*Panel(state) reads and edits
//
// The viewer does not own the numbers: they come from the core (deberta::forward, rerun_from,
// explain_cell, ...) and are only read here. Like imgui_club's memory editor, each panel is a
// function of this struct; none of them keeps state of its own.
#pragma once

#include "deberta/analysis.h"
#include "deberta/compare.h"
#include "deberta/heads.h"
#include "deberta/model.h"
#include "deberta/tokenizer.h"
#include "lesson.h"

#include <imgui.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace viewer {

// ----------------------------------------------------------------------------------------------
// Data shared with the worker thread (read-only once built)

/// A model directory in memory: the weights and, when the folder has one, its tokenizer.
struct LoadedModel {
  deberta::Model model;
  std::unique_ptr<deberta::Tokenizer> tokenizer;  ///< null when the folder has no tokenizer files
  std::string tokenizer_note;                     ///< why there is no tokenizer (shown in the model panel)
  double load_seconds = 0;
};

/// The token sequence to run: ids, display names and the positions to predict.
struct TokenInput {
  deberta::Inputs inputs;
  std::vector<std::string> names;       ///< tokenizer display form, or "#id" without a tokenizer
  std::vector<int64_t> mask_positions;  ///< positions of [MASK]
};

/// The input as typed: tokenized on the worker thread (`tokenize_fields`), never on the UI thread,
/// so a long paste cannot freeze the window.
struct InputFields {
  std::string text;              ///< segment A (with a tokenizer); the literal [MASK] is the mask token
  std::string pair;              ///< segment B of a sentence pair: [CLS] A [SEP] B [SEP]; empty = none
  std::string ids_text;          ///< "1,2,3": ids instead of the text (or without a tokenizer)
  std::string token_types_text;  ///< "0,0,1": token types for `ids_text`; empty = all 0
  int mask_id = -1;              ///< [MASK] id when there is no tokenizer
};

/// What the worker computes.
struct Request {
  uint64_t generation = 0;
  std::shared_ptr<const LoadedModel> model;
  InputFields fields;
  deberta::Ablation ablation;
};

/// Tokenizes `fields` for `model` (the worker calls it). Errors (`deberta::Error`): ids that are
/// not integers or outside the vocabulary, token types of the wrong count, more tokens than
/// max_position_embeddings, a pair without a tokenizer, no input at all.
TokenInput tokenize_fields(const LoadedModel& model, const InputFields& fields);

/// One finished computation. Built by the worker, then only read by the UI.
struct Result {
  uint64_t generation = 0;
  std::shared_ptr<const LoadedModel> model;
  TokenInput input;
  deberta::Ablation ablation;
  deberta::ForwardTrace trace;            ///< full trace under `ablation`, decoder stage run
  std::optional<deberta::EMDTrace> emd;   ///< the EMD's two passes under `ablation` (also when EMD is switched off)
  /// [pass][head] `[N, N]`: attention probabilities of EMD pass t minus those of the encoder's last
  /// layer (same weights, queries I_t instead of H): what the absolute positions change. Empty without EMD.
  std::vector<std::vector<deberta::Matrix>> emd_attention_diff;
  std::string emd_note;                   ///< why there is no EMD (model without absolute positions, ...)
  std::string predict_note;               ///< why there are no predictions (no [MASK], no LM head, ...)
  std::vector<deberta::MaskPrediction> baseline;  ///< the model as trained (default ablation)
  std::vector<deberta::MaskPrediction> current;   ///< under `ablation`
  std::vector<deberta::MaskPrediction> emd_on;    ///< under `ablation` with the EMD
  std::vector<deberta::MaskPrediction> emd_off;   ///< under `ablation`, decoded from the last layer
  std::vector<double> kl;                          ///< KL(baseline ‖ current) per masked position
  deberta::AblationEffect effect;                  ///< mean/max KL and top-1 changes
  /// The model's task head when it is not a masked-LM model (classifier, token classifier, RTD):
  /// its output under `ablation` and as trained (deberta::run_head / predict_head, as `deberta
  /// classify` / `rtd` compute them).
  std::optional<deberta::HeadOutput> head, head_baseline;
  int64_t first_layer = 0;                         ///< layer the encoder was re-run from (0: fresh pass)
  double compute_ms = 0;
  /// NaN / Inf in what the model computed (deberta::non_finite_trace / non_finite_predictions, the
  /// CLI's warnings), shown beside the predictions; empty when everything is finite.
  std::vector<std::string> warnings;
};

/// Model B run on the shown result's input and compared with model A (the Compare tab).
struct CompareResult {
  uint64_t generation = 0;                       ///< of the `Result` (model A) it was compared with
  std::shared_ptr<const LoadedModel> model_b;
  deberta::ForwardTrace trace_b;                 ///< model B as trained, `TraceLevel::Probs`
  deberta::ModelComparison cmp;                  ///< per-head mean |ΔP|, predictions, KL(A ‖ B)
  std::string error;                             ///< why B could not run on this input
};

/// The compute thread. `submit` replaces any request not yet started; `poll` hands the UI the
/// newest finished result (or error). Stale results (older generation) are dropped.
class Worker {
 public:
  Worker();
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void submit(Request request);
  /// Returns a newer result than `have` if one finished; sets `error` when the newest request failed
  /// and `input_error` to whether it failed while tokenizing (an input error, not a compute error).
  std::shared_ptr<const Result> poll(uint64_t have, std::string* error, uint64_t* error_generation,
                                     bool* input_error = nullptr);
  bool busy() const { return busy_.load(); }

 private:
  void run();
  std::shared_ptr<const Result> compute(const Request& r, TokenInput input, const std::shared_ptr<const Result>& prev);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Request> pending_;
  std::shared_ptr<const Result> latest_;  ///< newest finished result
  std::string error_;
  uint64_t error_generation_ = 0;
  bool error_is_input_ = false;  ///< error_ came from tokenizing the fields
  std::atomic<bool> busy_{false};
  bool stop_ = false;
  std::thread thread_;  ///< last: started after every member above is constructed
};

// ----------------------------------------------------------------------------------------------
// What the learner chose

/// The per-head quantities the maps can show.
enum class Quantity { C2C, C2P, P2C, P2P, Logits, Probs };
const char* quantity_name(Quantity q);      ///< "c2c", ..., "logits", "probs"
const char* quantity_label(Quantity q);     ///< "c2c  (Q_c·K_c)", ...
/// The map of quantity `q` in `layer`/`head` of `trace`, or null when the term is off.
const deberta::Matrix* head_map(const deberta::ForwardTrace& trace, int64_t layer, int64_t head, Quantity q);
const deberta::Matrix* attention_map(const deberta::AttentionTrace& a, int64_t head, Quantity q);

/// The tabs of the main area.
enum class Tab { Grid, Head, Distance, Equation, Predictions, Compare, Export, Lesson, Count };
const char* tab_name(Tab t);  ///< short name used by --panel: grid, head, distance, ...

/// GL textures of the heatmaps, re-uploaded only when their data changed.
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
  ~TextureCache();
};

/// Zoom and pan of one map or of a group of maps that move together (heatmap.cpp): `zoom` ≥ 1
/// magnifies, (cx, cy) is the centre of the view in map units (0 … 1 across the columns / rows).
struct MapView {
  float zoom = 1, cx = 0.5f, cy = 0.5f;
};

/// The state of the whole viewer.
struct ViewerState {
  // --- model & text
  std::string model_path;              ///< what the path field holds
  std::vector<std::string> recent;     ///< recently opened directories, newest first
  std::shared_ptr<const LoadedModel> model;
  std::string model_error;             ///< last load error (the previous model stays in use)
  std::string model_notice;            ///< e.g. "the bundled model is not there yet"
  std::future<std::shared_ptr<const LoadedModel>> loading;  ///< pending load
  std::string loading_path;
  std::shared_ptr<std::atomic<double>> load_progress = std::make_shared<std::atomic<double>>(0.0);
  std::string text;                    ///< input text (with a tokenizer)
  std::string pair;                    ///< second segment of a sentence pair (classifiers), may be empty
  std::string ids_text;                ///< input ids "1,2,3" (without a tokenizer, or to override)
  std::string token_types_text;        ///< token types "0,0,1" for ids_text, may be empty
  int mask_id = -1;                    ///< [MASK] id when there is no tokenizer
  TokenInput input;                    ///< the tokens of the newest result (tokenized by the worker)
  std::string input_error;             ///< why the newest fields could not be tokenized

  // --- ablation and computation
  deberta::Ablation ablation;
  Worker worker;
  uint64_t generation = 0;             ///< of the newest request
  std::shared_ptr<const Result> result;
  std::string compute_error;
  double request_time = 0;             ///< ImGui time the newest request was made (for "updating…")

  // --- a second model beside the first (Compare tab)
  std::shared_ptr<const LoadedModel> model_b;
  std::string model_b_path;            ///< what the compare path field holds
  std::string model_b_error;           ///< last load error of model B
  std::future<std::shared_ptr<const LoadedModel>> loading_b;
  std::string loading_b_path;
  std::future<std::shared_ptr<const CompareResult>> comparing;
  std::shared_ptr<const CompareResult> compare;
  std::string zoo_dir;                 ///< folder of the trained-ablation zoo (docs/table4.md)

  // --- selection
  int layer = 0, head = 0;
  int qi = 0, kj = 0;                  ///< selected cell: query i (row), key j (column)
  int hover_token = -1;                ///< token under the mouse anywhere (row and column highlight)
  int hover_token_next = -1;           ///< set during the frame, becomes hover_token at its end
  Quantity grid_quantity = Quantity::Probs;
  Quantity export_quantity = Quantity::Probs;
  int distance_k = 4;                  ///< k of the δ(i, j) illustration
  int emd_head = 0;
  LessonState lesson;                  ///< the Lesson tab: step, answer, cached steps
  std::map<std::string, MapView> map_views;  ///< zoom and pan per map (or map group), by id
  MapView initial_view;                ///< --zoom: the view a map starts with

  // --- layout and navigation
  Tab tab = Tab::Grid;
  bool switch_tab = true;              ///< select `tab` in the tab bar on the next frame
  bool open_model_popup = false, open_export_popup = false;
  std::string export_dir = ".";
  std::string export_status;
  std::string window_png_request;      ///< non-empty: write the whole window to this file after the frame
  bool headless = false;               ///< screenshot / bench mode

  TextureCache textures;
  ImFont* mono = nullptr;              ///< DejaVu Sans Mono for numbers
};

// ----------------------------------------------------------------------------------------------
// Actions (state.cpp)

/// Starts loading `path` in the background; the current model stays in use until it succeeds.
void start_load(ViewerState& s, const std::string& path);
/// Checks a pending load; on success installs the model and re-runs. Returns true when one finished.
bool poll_load(ViewerState& s);
/// Loads `path` as model B of the Compare tab in the background (model A stays as it is).
void start_load_b(ViewerState& s, const std::string& path);
/// Installs a finished model-B load and (re)starts the comparison when model A's result or model
/// B changed. Returns true when something changed.
bool poll_compare(ViewerState& s);
/// True while a model-B load or a comparison is under way.
bool compare_busy(const ViewerState& s);
/// Tokenizes the text (or parses the ids) for the current model and requests a computation.
void set_input_from_fields(ViewerState& s);
/// Requests a computation for the current model, input and ablation.
void request_compute(ViewerState& s);
/// Takes finished results from the worker. Returns true when the shown result changed.
bool poll_compute(ViewerState& s);
/// Flips the mask of head (layer, head) and re-runs.
void toggle_head_mask(ViewerState& s, int layer, int head);
/// Number of tokens of the shown result (0 without one).
int token_count(const ViewerState& s);
/// Display name of token t of the shown result ("#id" without a tokenizer).
std::string token_name(const ViewerState& s, int t);
/// Display name of vocabulary id `id` for the current model.
std::string vocab_name(const LoadedModel* m, int64_t id);
/// Keeps the selection inside the current model and sequence.
void clamp_selection(ViewerState& s);

}  // namespace viewer
