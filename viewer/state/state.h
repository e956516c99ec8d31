// state.h — what the explorer shows and what the learner chose, as plain data.
//
// [SECTION] index
//   LoadedModel   a model directory in memory (weights + tokenizer), shared read-only
//   TokenInput    the token sequence of one computation; InputFields: the input as typed
//   Result        one finished computation: the Probs trace, EMD passes, predictions; immutable once published
//   LayerDetail   some layers of a Result at TraceLevel::Full (materialize_layer), for the panels that show terms
//   ViewerState   the one plain state struct every panel reads and edits
//
// No ImGui, OpenGL or thread here: the GL resources (textures, fonts) and the background jobs
// (the compute worker, model loads) live beside this struct in `App` (app.h). The numbers come
// from the core (deberta::forward, rerun_from, materialize_layer, explain_cell, ...) and are only
// read here.
#pragma once

#include "deberta/analysis.h"
#include "deberta/compare.h"
#include "deberta/heads.h"
#include "deberta/model.h"
#include "deberta/tokenizer.h"
#include "figures/diagrams.h"
#include "lesson/lesson.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace viewer {

// ----------------------------------------------------------------------------------------------
// Data shared with the worker thread (read-only once built)

/// A model directory in memory: the weights and, when the folder has one, its tokenizer.
struct LoadedModel {
  deberta::Model model;
  std::unique_ptr<deberta::Tokenizer> tokenizer;  ///< null when the folder has no tokenizer files
  std::string tokenizer_note;                     ///< why there is no tokenizer (shown in the model panel)
  std::string tokenizer_error;  ///< the folder has tokenizer files that failed to load: the loader's message
  double load_seconds = 0;
};

/// The token sequence to run: ids, display names and the positions to predict.
struct TokenInput {
  deberta::Inputs inputs;
  std::vector<std::string> names;       ///< tokenizer display form, or "#id" without a tokenizer
  std::vector<int64_t> mask_positions;  ///< positions of [MASK]
};

/// The input as typed: tokenized on the worker thread (`tokenize_fields`, worker.h), never on the
/// UI thread, so a long paste cannot freeze the window.
struct InputFields {
  std::string text;              ///< segment A (with a tokenizer); the literal [MASK] is the mask token
  std::string pair;              ///< segment B of a sentence pair: [CLS] A [SEP] B [SEP]; empty = none
  std::string ids_text;          ///< "1,2,3": ids instead of the text (or without a tokenizer)
  std::string token_types_text;  ///< "0,0,1": token types for `ids_text`; empty = all 0
  int mask_id = -1;              ///< [MASK] id when there is no tokenizer
};

/// One finished computation. Built by the worker (`compute_result`, worker.h), then only read.
struct Result {
  uint64_t generation = 0;
  std::shared_ptr<const LoadedModel> model;
  TokenInput input;
  deberta::Ablation ablation;
  /// The run under `ablation` at TraceLevel::Probs, decoder stage run: hidden states of every layer
  /// and the attention probabilities of every layer and head (the grid, the overview, the EMD
  /// panel). The terms (c2c, c2p, p2c, p2p, logits, Q_c, ...) are in a `LayerDetail`.
  deberta::ForwardTrace trace;
  /// The EMD's two passes when the ablation decodes without them (for the side-by-side view);
  /// empty when `trace.emd` holds them. Read both through `emd()`.
  std::optional<deberta::EMDTrace> side_emd;
  /// [pass][head] `[N, N]`: attention probabilities of EMD pass t minus those of the encoder's last
  /// layer (same weights, queries I_t instead of H): what the absolute positions change. Empty without EMD.
  std::vector<std::vector<deberta::Matrix>> emd_attention_diff;
  std::string emd_note;                   ///< why there is no EMD (model without absolute positions, ...)
  std::string predict_note;               ///< why there are no predictions (no [MASK], no LM head, ...)
  std::vector<deberta::MaskPrediction> baseline;  ///< the model as trained (default ablation)
  std::vector<deberta::MaskPrediction> current;   ///< under `ablation`: a copy of emd_on or emd_off
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

  /// The EMD's passes under `ablation` (the decoder's own when it ran, else `side_emd`); null
  /// when the model has no EMD (`emd_note` says why).
  const deberta::EMDTrace* emd() const { return trace.emd ? &*trace.emd : side_emd ? &*side_emd : nullptr; }
};

/// Some encoder layers of one `Result` at TraceLevel::Full, recomputed from its Probs trace with
/// deberta::materialize_layer (bitwise equal to a full forward's layers; viewer/tests/test_worker.cpp).
struct LayerDetail {
  uint64_t generation = 0;  ///< of the Result it was computed from
  /// Level Full; inputs and sequence context as the Result's. `layers` has one entry per encoder
  /// layer: the ones listed in `held` are full, the others empty (no maps). explain_cell and the
  /// lesson read it as they read a full trace.
  deberta::ForwardTrace trace;
  std::vector<int64_t> held;  ///< the full layers, ascending
  /// True when layer `layer` is full here.
  bool has(int64_t layer) const;
};

/// One model of the trained-ablation zoo folder, with its row of docs/table4.md when the zoo has
/// table4.json (-1: no number).
struct ZooEntry {
  std::string name, path, change;
  double top1 = -1, top5 = -1, ce = -1;
};
/// The zoo folder as read by `read_zoo` (jobs/worker.h), sorted by name; empty when `dir` is no folder.
struct ZooListing {
  std::string dir;
  std::vector<ZooEntry> models;
};

/// Model B run on the shown result's input and compared with model A (the Compare tab).
struct CompareResult {
  uint64_t generation = 0;                       ///< of the `Result` (model A) it was compared with
  std::shared_ptr<const LoadedModel> model_b;
  deberta::ForwardTrace trace_b;                 ///< model B as trained, `TraceLevel::Probs`
  deberta::ModelComparison cmp;                  ///< per-head mean |ΔP|, predictions, KL(A ‖ B)
  std::string error;                             ///< why B could not run on this input
};

// ----------------------------------------------------------------------------------------------
// What the learner chose

/// The per-head quantities the maps can show: one per eq. 4 term, then the non-term quantities, the
/// terms' scaled sum (Logits) and the attention weights (Probs). The terms are not named here: term
/// `t`'s quantity is `term_quantity(t)` (its value is `t`'s index), and every menu and list of
/// quantities iterates `kAllQuantities`, built from `deberta::kAllTerms`, so a new `Term` appears in
/// each of them once it has its entry in `kTermTexts` (the viewer_worker test fails until it does).
enum class Quantity {
  Logits = deberta::kTermCount,
  Probs,
  // Two term quantities by name, for panel_lesson.cpp's map of a step's map names alone (issue 54's
  // branch owns that file this round); they go when it reads `quantity_from_name`. Elsewhere:
  // `term_quantity(t)`.
  C2P = static_cast<int>(deberta::Term::c2p),
  P2C = static_cast<int>(deberta::Term::p2c),
};
/// Number of quantities: the terms, then Logits and Probs.
inline constexpr int kQuantityCount = deberta::kTermCount + 2;
/// The quantity that shows term `t`.
constexpr Quantity term_quantity(deberta::Term t) { return static_cast<Quantity>(static_cast<int>(t)); }
/// Every quantity, in the order the menus list them: `deberta::kAllTerms`' order, then Logits, Probs.
inline constexpr std::array<Quantity, kQuantityCount> kAllQuantities = [] {
  std::array<Quantity, kQuantityCount> all{};
  for (int t = 0; t < deberta::kTermCount; ++t) all[static_cast<size_t>(t)] = term_quantity(deberta::kAllTerms[t]);
  all[deberta::kTermCount] = Quantity::Logits;
  all[deberta::kTermCount + 1] = Quantity::Probs;
  return all;
}();

/// What the viewer says about one term: one row of `kTermTexts` a `deberta::Term`. English here
/// (figures, tests); the strings marked N_ are translated where they are shown (tr()).
struct TermText {
  deberta::Term term;
  /// The term with its formula, without the scale's factor ("s·c2c: content→content, c2c =
  /// Q_c[i]·K_c[j]"; the maps hold each term times s). Marked for translation.
  const char* label;
  /// In words, for figure titles: "Content-to-content term (c2c)".
  const char* words;
  /// Head detail's formula of the map: "s·Q_c[i]·K_c[j]".
  const char* formula;
  /// The formula when the model reads p2c with the paper's index δ(j, i) (`P2CIndex::Paper`).
  const char* formula_paper_index;
  /// Token links' line-weight choice: "c2c: its part of the score (signed)". Marked for translation.
  const char* link_weight;
  /// The Ablations tab's help of the term's switch, in the interface's words. Marked for translation.
  const char* ablation_help;
};
/// One row a term, in `deberta::kAllTerms`' order (viewer_worker checks that every term has exactly
/// one row, so a new term cannot be silently missing from the viewer's menus).
extern const TermText kTermTexts[deberta::kTermCount];
/// The row of `kTermTexts` for `t`. Errors: std::logic_error when the table has no row for `t`.
const TermText& term_text(deberta::Term t);

/// The term a quantity shows (none for Logits, Probs).
std::optional<deberta::Term> quantity_term(Quantity q);
const char* quantity_name(Quantity q);      ///< "c2c", ..., "logits", "probs" (file names, --figure-quantity)
/// The quantity named `name` (as `quantity_name` writes it), or none.
std::optional<Quantity> quantity_from_name(const std::string& name);
/// Every quantity's name, comma-separated ("c2c, c2p, p2c, p2p, logits, probs"): for error messages.
std::string quantity_names();
/// The quantity with its formula, without naming the scale's factor or the model's terms (a
/// term's `TermText::label`; "score s·Ã, …", "attention weights softmax_j(s·Ã)"): for places that
/// do not know the model. `quantity_label(q, f)` names it. English (figures, tests); marked for
/// translation: the panels show `tr(quantity_label(q))`.
const char* quantity_label(Quantity q);

// ----------------------------------------------------------------------------------------------
// Labels that name the scale: computed from the model's own factor f (s = 1/√(f·d)), never a
// hard-coded √(3d), and in one notation everywhere (arXiv 2006.03654 v6, eq. 4 and §3.1): Ã is the
// unscaled sum of the active terms, the score is Ã/√(f·d) (the paper's Ã/√(3d)), the attention
// weights are softmax_j of the score. deberta::scale_root writes the root.

/// "score Ã/√(3d)" (factor 3), "score Ã/√(2d)", "score Ã/√d". English (figures, tests) unless
/// `translated`: then in the interface's language (i18n.h), as the panels show it.
std::string score_label(double scale_factor, bool translated = false);
/// "softmax(Ã/√(3d))": the attention weights.
std::string weights_label(double scale_factor);
/// The quantity with its formula and the model's scale: "score Ã/√(2d) = s·(c2c + c2p), s = 1/√(2d)"
/// (the terms of `terms`, the run's own; without them "= s·Ã"), "attention weights
/// softmax_j(Ã/√(2d))", "s·c2p: content→position, c2p = Q_c[i]·K_r[δ(i,j)]". English (figures,
/// tests) unless `translated`.
std::string quantity_label(Quantity q, double scale_factor, bool translated = false,
                           const deberta::PerTerm<bool>* terms = nullptr);
/// The quantity in words, for figure titles: "Attention weights", "Attention scores",
/// "Content-to-content term (c2c)", "Content-to-position term (c2p)", …
std::string quantity_words(Quantity q);
/// Where a map is, counted as the viewer counts (from 0) and said so in the range:
/// "layer 1 (of 0–3), head 2 (of 0–3)".
std::string layer_head_words(int layer, int layers, int head, int heads);
/// Head detail's selected cell as a sum, in the notation above: "c2c +0.1234 + c2p −0.5 = score
/// Ã/√(3d) +2.7783 (Ã = 33.3392) → weight 0.1727", in the interface's language (Head detail shows
/// it). `scaled_terms`: (name, s·term) of the active terms; `scale` s; `score` the logit; `weight`
/// the softmax weight.
std::string cell_sum_text(const std::vector<std::pair<std::string, double>>& scaled_terms, double scale, double score,
                          double weight, double scale_factor);
/// The map of quantity `q` of `head` in `a` (`[N_q, N_k]`), or null when `a` does not hold it
/// (the term is off, the trace level does not keep it, head out of range).
const deberta::Matrix* attention_map(const deberta::AttentionTrace& a, int64_t head, Quantity q);
/// `attention_map` of layer `layer` of `trace`; null also when the layer is out of range.
const deberta::Matrix* head_map(const deberta::ForwardTrace& trace, int64_t layer, int64_t head, Quantity q);
/// Whether the run of `r` computes quantity `q` at all (its resolved attention switches: a term
/// switched off has no map; logits and probabilities always exist).
bool computed(const Result& r, Quantity q);

/// The tabs of the main area.
enum class Tab { Grid, Head, Distance, Equation, Predictions, Compare, Export, Lesson, Pipeline, Links, Count };
const char* tab_name(Tab t);  ///< short name used by --panel: grid, head, distance, ...

/// Zoom and pan of one map or of a group of maps that move together (heatmap.cpp): `zoom` ≥ 1
/// magnifies, (cx, cy) is the centre of the view in map units (0 … 1 across the columns / rows).
struct MapView {
  float zoom = 1, cx = 0.5f, cy = 0.5f;
};

/// The state of the whole viewer: plain data (no GL resource, no thread), copyable.
struct ViewerState {
  // --- model & text
  std::string model_path;              ///< what the path field holds
  std::vector<std::string> recent;     ///< recently opened directories, newest first
  std::shared_ptr<const LoadedModel> model;
  std::string model_error;             ///< last load error (the previous model stays in use)
  std::string model_notice;            ///< e.g. "the bundled model is not there yet"
  std::string text;                    ///< input text (with a tokenizer)
  std::string pair;                    ///< second segment of a sentence pair (classifiers), may be empty
  std::string ids_text;                ///< input ids "1,2,3" (without a tokenizer, or to override)
  std::string token_types_text;        ///< token types "0,0,1" for ids_text, may be empty
  int mask_id = -1;                    ///< [MASK] id when there is no tokenizer
  TokenInput input;                    ///< the tokens of the newest result (tokenized by the worker)
  std::string input_error;             ///< why the newest fields could not be tokenized

  // --- ablation and computation
  deberta::Ablation ablation;
  uint64_t generation = 0;             ///< of the newest request
  std::shared_ptr<const Result> result;
  std::shared_ptr<const LayerDetail> detail;  ///< full layers of `result` (may lag behind it: check `generation`)
  std::string compute_error;
  double request_time = 0;             ///< ImGui time the newest request was made (for "updating…")

  // --- a second model beside the first (Compare tab)
  std::shared_ptr<const LoadedModel> model_b;
  std::string model_b_path;            ///< the folder model B was read from
  std::string model_b_field;           ///< what the compare path field holds (starts as model_b_path)
  std::string model_b_error;           ///< last load error of model B
  std::shared_ptr<const CompareResult> compare;
  std::string zoo_dir;                 ///< folder of the trained-ablation zoo (docs/table4.md)
  /// `zoo_dir` as last read (read off the UI thread by app.cpp's poll_compare; null before).
  std::shared_ptr<const ZooListing> zoo;
  int offset_layer = 0;                ///< Compare's offset profile: 0 pooled over layers, l + 1 layer l

  // --- selection
  int layer = 0, head = 0;
  int qi = 0, kj = 0;                  ///< selected cell: query i (row), key j (column)
  int hover_token = -1;                ///< token under the mouse anywhere (row and column highlight)
  int hover_token_next = -1;           ///< set during the frame, becomes hover_token at its end
  Quantity grid_quantity = Quantity::Probs;
  Quantity export_quantity = Quantity::Probs;
  int links_weight = 0;                ///< Token links (a combo's index): 0 the weight; 1 + a `Term`'s index: its signed part of the score
  /// The Token links diagram last built, and what it was built from: the tab rebuilds it only when
  /// the result, its detail, the layer, the head or the weight change (building is O(N²)).
  struct LinksCache {
    std::shared_ptr<const Result> result;
    std::shared_ptr<const LayerDetail> detail;
    int layer = -1, head = -1, weight = -1;
    std::optional<Diagram> diagram;
    std::string why;  ///< why there is no diagram
    unsigned language = 0;  ///< i18n::generation() it was built at (`why` is in the interface's language)
  } links_cache;
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
  /// Files the exports wrote since the frame loop last took them (the web edition offers each as
  /// a browser download, then clears the list; the desktop clears it).
  std::vector<std::string> written_files;
  std::string window_png_request;      ///< non-empty: write the whole window to this file after the frame
  /// Where named widgets were drawn in the last frame (screen pixels: x0, y0, x1, y1), e.g. "c2p":
  /// scripted clicks (the web page's browser test, xdotool walkthroughs) ask for a switch's place.
  std::map<std::string, std::array<float, 4>> widget_rects;
  bool headless = false;               ///< screenshot / bench mode
};

// ----------------------------------------------------------------------------------------------
// Reading the state (state.cpp)

/// Number of tokens of the shown result (0 without one).
int token_count(const ViewerState& s);
/// Display name of token t of the shown result ("#id" without a tokenizer); "?" out of range.
std::string token_name(const ViewerState& s, int t);
/// Display name of vocabulary id `id` for model `m` ("#id" without a tokenizer or model).
std::string vocab_name(const LoadedModel* m, int64_t id);
/// True when a token's display name `name` would draw as nothing: empty, or only white space and
/// invisible characters (ASCII blanks, U+00A0, U+1680, U+2000–U+200B, U+2028, U+2029, U+202F,
/// U+205F, U+3000, U+FEFF) — SentencePiece's word-boundary piece "▁" alone displays as " ".
bool blank_token(const std::string& name);
/// `name` as the panels draw it (token chips, map labels, predictions; issue 55, item 8): itself,
/// unless `blank_token(name)`: then each space shows as "▁" (the piece as the vocabulary spells
/// it), a tab, line break or carriage return as "\t", "\n", "\r", another blank character as
/// its code point ("U+3000"), and an empty name as "\"\"". Never empty. No errors.
std::string shown_token(const std::string& name);
/// The Tokens panel's chip of token t: "t name", the name as `shown_token` draws it.
std::string token_chip_label(const ViewerState& s, int t);
/// Keeps the selection inside the current model and sequence.
void clamp_selection(ViewerState& s);

/// The encoder layers the shown tab needs at TraceLevel::Full, ascending: the selected layer in
/// Head detail, Relative distance (K_r, Q_r in the tooltip), Equation walk-through, Lesson and Export;
/// layer 0 too in the Lesson (its step 12); every layer when the Attention grid shows a term other
/// than the probabilities. Empty in the other tabs and without a result.
std::vector<int64_t> wanted_layers(const ViewerState& s);
/// The shown result's detail when it is current (same generation) and holds `layer`; else null
/// (the worker is still materializing it: panels show a "computing" note).
const LayerDetail* detail_for(const ViewerState& s, int64_t layer);
/// The map of quantity `q` the panels show for (layer, head): probabilities from the result's
/// trace, every other quantity from the current detail. Null when not computed in this run
/// (`computed`) or not materialized yet.
const deberta::Matrix* shown_map(const ViewerState& s, int64_t layer, int64_t head, Quantity q);

}  // namespace viewer
