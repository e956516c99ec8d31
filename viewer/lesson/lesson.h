// lesson.h — the guided lesson: fifteen steps from the standard self-attention of §3.1 to the EMD,
// the ablations, the masked-LM objective (eq. 1) and the prediction at the [MASK], each with a
// question whose answer is computed from the loaded model's own numbers. Equation and section numbers are those printed in arXiv 2006.03654 v6 (eq. 1 is the MLM
// objective of §2.2; the standard attention display of §3.1 is unnumbered).
//
// Notation, everywhere in the lesson: Ã is the unscaled sum of the active terms (eq. 4); the score
// is Ã scaled by the model's own factor, Ã/√(f·d) (the paper's Ã/√(3d)); the attention weights are
// the softmax of the score over the keys.
//
// GL-free and ImGui-free (core types only) so that tests/test_lesson.cpp can check every answer
// against the core. The Lesson tab (panel_lesson.cpp) only shows these steps and compares the
// learner's number with `Step::answer`. Nothing here is hard-coded: a question names a layer,
// head and cell chosen from the input's length, and its answer is read from the trace (the terms
// from the selected layer and layer 0 in full)
// (probs, c2c/c2p/p2c, logits, the sequence context's rel_pos / c2p_row / p2c_row, the resolved
// scale) or computed by the core (deberta::relative_distance, log_bucket_position, table_rows).
//
// Each step also carries the paper's passages it computes (`quotes`, from paper_quotes.h) and, where
// its number depends on k, the scale factor or the p2c index, a "what if" (`what_if`): what_if_row
// reruns the model through the core under that one ablation switch and returns the query's softmax
// row before and after (issue 42, items 5 and 6).
#pragma once

#include "deberta/ablation.h"
#include "deberta/analysis.h"
#include "deberta/explain.h"
#include "deberta/heads.h"
#include "deberta/model.h"
#include "lesson/paper_quotes.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace viewer {

/// The viewer's default sentence for a model with a tokenizer: long enough (more than 17 tokens)
/// that the bundled model's log buckets (position_buckets 32: exact up to |i − j| = 16) and the
/// clamp of eq. 3 both show, and with a [MASK] for the EMD's predictions.
inline constexpr const char* kDefaultText =
    "In the beginning God created the heaven and the earth. And the earth was without form, and void; "
    "and darkness was upon the face of the [MASK].";

/// Where a step's "show me" button takes the learner: a tab (by its --panel name), a layer,
/// head and cell (query i, key j), and optionally the k of the distance illustration.
struct LessonTarget {
  std::string tab = "head";  ///< "grid", "head", "distance", "equation", "predictions"
  int layer = 0, head = 0;
  int i = 0, j = 0;
  int distance_k = 0;        ///< > 0: set the Relative-distance tab's k slider
  /// The column of the "emd_I" map (a hidden component, not a key): −1 for the other maps. Kept
  /// apart from `j` so that "show me" never selects a component index as a key.
  int component = -1;
  /// The map the Lesson tab draws beside the question, cell (i, j) outlined: "probs", "logits",
  /// "c2p", "p2c" (of `layer`/`head`), "rel_pos", "rows" (the c2p table rows), "delta" (eq. 3 with
  /// `distance_k`), "emd_I" (cell (i, component)), or "" for none (a model without relative
  /// positions has no δ map).
  std::string map;
};

/// A typical wrong answer of a step, computed from the same numbers as the right one: a learner who
/// types `value` most likely made the mistake `name` (e.g. "forgot the scale 1/√(3d)").
/// `reading` marks a number that is not a mistake but another reading of the paper (step 11: I = P,
/// appendix A.8 taken literally), where the question asks for the released code's number.
struct LessonMistake {
  double value = 0;
  std::string name;
  bool reading = false;
};

/// The one core switch (deberta::Ablation) a step's "what if" control turns (issue 42, item 6).
enum class WhatIfKnob {
  None,      ///< the step's number depends on none of them
  Span,      ///< the relative span: read only the central 2K table rows, K ≤ k (max_relative_positions)
  Scale,     ///< the scale factor f of s = 1/√(f·d) (ScaleMode::Fixed)
  P2CIndex,  ///< the p2c index: the released code's δ(i, j) or the paper's δ(j, i)
};

/// The step's own number, recomputed under the "what if" (issue 58, item 4): what it is and where.
enum class WhatIfNumber {
  None,       ///< the step's number is not redrawn
  C2PRow,     ///< the table row c2p reads at (query, key): context.c2p_row (steps 3, 4, 6)
  P2CRow,     ///< the table row p2c reads at (query, key): context.p2c_row (step 8)
  ScaledC2P,  ///< s·c2p at (query, key) of (layer, head): the trace's c2p map (step 7)
  Scale,      ///< the scale s = 1/√(f·d) (step 9)
  ScoreGap,   ///< the score of key `key` minus that of `key2` in the query's row (step 10)
};

/// A step's "what if": which switch, whose softmax row (layer, head, query i) it redraws, which of the
/// step's numbers it recomputes, and the [MASK] whose prediction it redraws.
struct LessonWhatIf {
  WhatIfKnob knob = WhatIfKnob::None;
  int layer = 0, head = 0, query = 0;
  WhatIfNumber number = WhatIfNumber::None;
  int key = 0, key2 = -1;        ///< the step's key j (and ScoreGap's second key j')
  int mask = -1;                 ///< the first [MASK] of the input (−1: none), whose top 3 are redrawn
  int64_t k = 0;                 ///< Span: the model's k (K ranges over 1 … k)
  int64_t window = 0;            ///< Span: the K this run reads (k unless ablated)
  double scale_factor = 0;       ///< Scale: this run's f
  deberta::P2CIndex p2c_index = deberta::P2CIndex::Code;  ///< P2CIndex: this run's index
};

/// A value of the control: the K, the f or the index to try (only the knob's own field is read).
struct WhatIfValue {
  int64_t window = 0;
  double scale_factor = 0;
  deberta::P2CIndex p2c_index = deberta::P2CIndex::Code;
};

/// Where a step's number is computed and re-derived (issue 58, item 5): the core function and its
/// source file, and the notebook with the heading of its section. Paths are from the repository's
/// root; the lesson tests check that the file defines the function and the notebook has the heading.
struct LessonLink {
  const char* function = "";  ///< e.g. "deberta::relative_distance"
  const char* file = "";      ///< e.g. "core/src/equations/equations.cpp"
  const char* notebook = "";  ///< e.g. "notebooks_data/notebooks/01_relative_positions.ipynb"
  const char* section = "";   ///< the section's heading as the notebook writes it, without the #s
};

/// One step of the lesson.
struct LessonStep {
  std::string title;         ///< e.g. "3. Relative distance δ(i, j) (eq. 3)"
  std::string equation;      ///< the equation, in the paper's notation
  std::string text;          ///< a few sentences that teach it
  bool applies = true;       ///< false: this model or run has nothing to show here
  std::string skip_reason;   ///< why the step does not apply (shown instead of the question)
  std::string question;      ///< asked before the answer is revealed; says the precision it wants
  double answer = 0;         ///< the answer, read from the trace / computed by the core
  /// |given − answer| ≤ tolerance counts as right: half a unit of the asked decimal place, plus what
  /// the rounding of the numbers printed in the question can add (0 for integers).
  double tolerance = 0;
  int decimals = 0;          ///< the decimal places the question asks for (0 for integers)
  bool integer = false;      ///< the answer is an index or a count (shown without decimals)
  std::string explanation;   ///< how the answer follows, with the numbers (shown on reveal)
  LessonTarget show;         ///< what "show me" selects
  /// The typical wrong answers, each more than twice the tolerance away from `answer` and from each
  /// other (distinguishable at the asked precision); a typed number names the nearest one whose
  /// window (lesson_mistake_window) holds it.
  std::vector<LessonMistake> mistakes;
  /// The paper's passages this step computes (paper_quotes.h), shown beside the equation: one or
  /// two per step, on every model (also where the step does not apply).
  std::vector<PaperQuote> quotes;
  LessonWhatIf what_if;      ///< the step's "what if" control (knob None: it has none here)
  LessonLink link;           ///< the core function that computes the answer, the notebook that re-derives it
  /// Not computed yet (LessonInput::defer_capstone): the step's title, equation, text and quotes are
  /// there, its question and answer are not; build the lesson again with the reruns to ask it.
  bool pending = false;
};

/// How far from a mistake's value a typed number still names it: 0.5 % of the value's own size (so a
/// value rounded to two decimals is recognised once |value| ≥ 1), and never less than the step's
/// tolerance (the precision the question asks for). Integers: exactly.
double lesson_mistake_window(const LessonStep& step, double value);

/// How a typed answer is judged.
struct LessonVerdict {
  enum Kind { NotAnswer, Right, Wrong } kind = NotAnswer;
  std::string mistake;       ///< Wrong: the named mistake the answer matches, "" for none known
  bool reading = false;      ///< Wrong: the number is another reading of the paper, not a mistake
  /// Wrong: the number is the answer rounded to fewer decimals than the question asks for; this many
  /// are asked (0: not that case).
  int give_decimals = 0;
  /// ASCII English verdict words, then the mistake: "right", "wrong: <mistake or no known
  /// mistake>", "wrong: give N decimals", "other reading: <reading>", "not an answer".
  std::string text() const;
};

/// Judges the typed `text` for `step`: not an answer (blank, not a decimal number:
/// parse_lesson_answer), right (lesson_answer_ok) or wrong, naming the nearest mistake that the
/// number rounds (integers exactly): within its window (lesson_mistake_window), or the mistake
/// rounded to the digits the student typed when those are at least 2 decimals or 2 significant
/// figures (0.14 for 0.1372, 32 for 31.74, −25 for −25.43). The answer itself rounded to fewer
/// decimals than asked (1.5 for 1.493) is wrong with `give_decimals` set, unless a mistake is nearer.
LessonVerdict judge_lesson_answer(const LessonStep& step, const std::string& text);

/// Step 15's reruns: the log-probabilities at the input's first [MASK] of the run with each active
/// position term switched off in every layer, and without the EMD when the run has it (one
/// deberta::forward at TraceLevel::None each, then the MLM head). They depend on the run alone, not on
/// the layer or head, so a caller that rebuilds the lesson for another layer or head computes them
/// once (lesson_reruns) and passes them back (LessonInput::reruns) instead of paying the passes again.
struct LessonReruns {
  int mask = -1;  ///< the [MASK] they are for; −1: none made (no [MASK], no MLM head or no position term)
  struct Off {
    std::string term;           ///< "c2p", "p2c", "p2p" (switched off in every layer) or "EMD" (decoded without it)
    deberta::Vector log_probs;  ///< `[V]` log-softmax of the MLM head's logits at `mask`
  };
  std::vector<Off> off;         ///< in that order, only those that apply
};

/// What a lesson is built from: the model, the traced forward pass, the selected layer and layer 0
/// in full, the EMD passes when there are any, the token names, and the layer/head the learner
/// selected.
struct LessonInput {
  const deberta::Model* model = nullptr;
  /// The run at any level: the hidden states of every layer and the sequence context.
  const deberta::ForwardTrace* trace = nullptr;
  /// The same run at TraceLevel::Full holding at least the selected layer and layer 0 (the others
  /// may be empty: the viewer's LayerDetail, deberta::materialize_layer). Null: `trace` itself.
  const deberta::ForwardTrace* full = nullptr;
  const deberta::EMDTrace* emd = nullptr;  ///< null when the model has no EMD (then `emd_note` says why)
  std::string emd_note;
  std::vector<std::string> tokens;         ///< display names, one per position (may be empty: "#i")
  int layer = 0, head = 0;                 ///< the selection; clamped to the model
  /// The vocabulary's piece for a token id (steps 13–15 name the predicted tokens); empty: "#id".
  std::function<std::string(int64_t)> vocab;
  /// Step 15's reruns for this very run (lesson_reruns of this input); null: build_lesson makes them.
  /// Reruns of another run give wrong numbers: the caller keys them on its run (the viewer: the result's generation).
  const LessonReruns* reruns = nullptr;
  /// With `reruns` null: true leaves step 15 pending (LessonStep::pending) instead of making the reruns
  /// here. The viewer sets it while the learner is on another step, so a new sentence costs one forward
  /// pass, not four; it makes the reruns when step 15 is opened.
  bool defer_capstone = false;
};

/// Step 15's reruns for `in` (see LessonReruns): up to four forward passes of the model on the run's
/// inputs, on top of the run's own ablation. Errors: null model or trace (std::invalid_argument); those of
/// deberta::forward and predict_from_states.
LessonReruns lesson_reruns(const LessonInput& in);

/// The capstone's place in build_lesson's steps (step 15, 0-based 14): the one step a caller may leave
/// pending (LessonInput::defer_capstone).
inline constexpr int kCapstoneIndex = 14;

/// The steps of the lesson for `in`, in reading order (always the same number of steps, 15; the
/// ones that do not apply say why). Steps 13–15 (eq. 1, the EMD's prediction, the capstone) read the
/// decoder output at the input's first [MASK] through the MLM head (deberta::predict_from_states);
/// the capstone reads the reruns of `in.reruns`, or makes them (lesson_reruns: about three forward passes). Errors: null model or trace, a full trace (`full`, else
/// `trace`) that is not at TraceLevel::Full or lacks the selected layer or layer 0, an empty
/// input — std::invalid_argument naming the problem.
std::vector<LessonStep> build_lesson(const LessonInput& in);

/// One gather by δ of the pencil view (issue 58, item 6): a position term's fixed row (Q_c[i] for c2p,
/// K_c[j] for p2c) times every table row the line of cells reads, and the row each cell takes. The
/// released code computes the whole product `[N, 2k]` and gathers from it (disentangled_attention_bias
/// in both reference implementations); eq. 4 names the gathered cell alone. Products are unscaled.
struct PencilGather {
  int64_t first_row = 0;          ///< the table row of products[0]
  std::vector<double> products;   ///< `[R]` the fixed row · table rows first_row … first_row + R − 1
  std::vector<int64_t> rows;      ///< `[N]` per cell of the line (key j for c2p, query i for p2c): its table row
  /// `[N]` the gathered values: products[rows[n] − first_row] (the term's line of Ã, unscaled).
  std::vector<double> values() const;
};

/// The pencil view of one cell (issue 58, item 6): the rows of eq. 4 that cell (i, j) of one head
/// reads, and the gathers by δ, for a model small enough to check by hand (the toy model's sheet,
/// docs/lesson.md). Rows are the head's d components; the dot products are unscaled (Ã's terms).
struct PencilCell {
  int layer = 0, head = 0, i = 0, j = 0;
  std::vector<double> Q_c_i, K_c_j;        ///< `[d]` rows i of Q_c and j of K_c (eq. 4, term (a))
  bool c2p = false, p2c = false;           ///< whether each term is on in the run
  int64_t row = 0;                         ///< δ(i, j): the row of K_r c2p reads (and the code's p2c row of Q_r)
  int64_t row_paper = 0;                   ///< δ(j, i): the row of Q_r the paper's p2c reads (eq. 4 as printed)
  std::vector<double> K_r_row;             ///< `[d]` K_r[δ(i, j)] (empty without c2p)
  std::vector<double> Q_r_row, Q_r_row_paper;  ///< `[d]` Q_r[δ(i, j)] and Q_r[δ(j, i)] (empty without p2c)
  double c2c = 0, c2p_dot = 0;             ///< Q_c[i]·K_c[j], Q_c[i]·K_r[δ(i, j)]
  double p2c_code = 0, p2c_paper = 0;      ///< K_c[j]·Q_r[δ(i, j)] (released code), K_c[j]·Q_r[δ(j, i)] (paper)
  PencilGather c2p_gather;                 ///< row i of c2p: Q_c[i]·K_r[r], rows[j] = δ(i, j) (empty without c2p)
  PencilGather p2c_gather;                 ///< column j of p2c: K_c[j]·Q_r[r], rows[i] = the run's p2c row (empty without p2c)
};

/// The pencil view of cell (i, j) of `head` in `layer` of a run at TraceLevel::Full holding that
/// layer: the rows read from the trace's Q_c, K_c, K_r, Q_r and the table rows from its context
/// (c2p_row(i, j) for δ(i, j), c2p_row(j, i) for δ(j, i)). Errors: indices outside the run, a layer
/// without its projections (std::invalid_argument, naming it).
PencilCell pencil_cell(const deberta::ForwardTrace& full, int layer, int head, int i, int j);

/// The control's first value, chosen to differ from the run so that the redrawn row shows a change:
/// Span K = 2 (1 when k ≤ 2; the run's K − 1 when it is already a window: every key more than K
/// away then reads one of the table's two end rows), Scale f = 3 (the paper's) or 1
/// (BERT's) on a model whose f is 3, P2CIndex the other index.
WhatIfValue what_if_default(const LessonWhatIf& w);

/// The run's ablation with the one switch of `w` set to `v`: max_relative_positions = K (Span),
/// ScaleMode::Fixed with factor f (Scale), p2c_index (P2CIndex); every other switch as in `base`.
deberta::Ablation what_if_ablation(const deberta::Ablation& base, const LessonWhatIf& w, const WhatIfValue& v);

/// The query's softmax row before and after the change.
struct WhatIfRow {
  std::vector<double> original;  ///< `[N]` weights of query `w.query`, layer `w.layer`, head `w.head` in the run
  std::vector<double> changed;   ///< `[N]` the same row under `what_if_ablation(run.ablation, w, v)`
  int favourite_before = 0, favourite_after = 0;  ///< the key each gives the largest weight (first on ties)
  double max_change = 0;         ///< max_j |changed − original|
  int most_changed = 0;          ///< the key where it is reached
  /// The step's own number (w.number) in the run and under the change; NaN when it has none.
  double number_before = NAN, number_after = NAN;
  /// The top 3 tokens at the [MASK] (w.mask), most probable first, in the run and under the change
  /// (the decoder output: the EMD's when the run has it). Empty when the input has no [MASK] or the
  /// model no masked-LM head (`predict_note` then says which).
  std::vector<deberta::TokenScore> top_before, top_after;
  std::string predict_note;
};

/// Recomputes the row through the core: deberta::forward(model, run.inputs, what_if_ablation(…)) —
/// every layer under the change, not this layer alone, with the decoder when `run` has its EMD —
/// and reads query `w.query` of layer `w.layer`, head `w.head`; `original` is the same row of `run`
/// (any trace level: it holds the probabilities). It also recomputes the step's own number
/// (`w.number`: from `full`, the run at TraceLevel::Full holding `w.layer`, before; from the changed
/// pass after) and the top 3 at `w.mask` (deberta::predict_from_states on both decoder outputs).
/// Cost: one forward pass (term maps kept only for ScaledC2P and ScoreGap). Errors: a knob None,
/// indices outside the run, and what resolve_attention refuses (K outside [1, k], f ≤ 0, a p2c index
/// on a run without p2c) — std::invalid_argument or deberta's Error, naming the problem.
WhatIfRow what_if_row(const deberta::Model& model, const deberta::ForwardTrace& run, const LessonWhatIf& w,
                      const WhatIfValue& v, const deberta::ForwardTrace* full = nullptr);

/// What the step's own number is, as the "what if" names it ("the row c2p reads at i = 5, j = 3");
/// translated. "" for WhatIfNumber::None.
std::string what_if_number_label(const LessonWhatIf& w);

/// The value of `--lesson-what-if NAME=VALUE` for a step's control: K=2 (Span), f=1.5 (Scale),
/// p2c=paper or p2c=code (P2CIndex). nullopt with `*error` set (English) when NAME is not the step's
/// knob, the value is not one, or the step has no control.
std::optional<WhatIfValue> parse_what_if(const LessonWhatIf& w, const std::string& spec, std::string* error);

/// The value as the control shows it: "K = 2", "f = 3", "p2c index δ(j, i)"; translated.
std::string what_if_value_text(const LessonWhatIf& w, const WhatIfValue& v);

/// True when `given` answers `step` (within `step.tolerance`; integers exactly).
bool lesson_answer_ok(const LessonStep& step, double given);

/// A typed answer as a number: a decimal number as a student writes it — optional sign (+, - or the
/// typographic minus U+2212 the lesson prints), digits with at most one decimal point, an optional
/// decimal exponent (1.5e-3) — spaces around it allowed. Full-width forms, as CJK input methods type
/// them (１１, －０．５, the ideographic space), read as their ASCII digits and signs. Anything else
/// is not an answer (nullopt): blank text, "abc", "1.2.3", "4x", hexadecimal ("0xA", "0x1.4p3"),
/// "inf", "nan", a comma — except that in a language whose catalogue gives "," as its decimal
/// separator (Italian) "0,25" is 0.25. `decimals`, when given, receives the number of decimal places
/// the text carries (its digits after the point, less its exponent: "1.5" 1, "32" 0, "2.5e-2" 3).
std::optional<double> parse_lesson_answer(const std::string& text, int* decimals = nullptr);

/// The tolerance as the check uses it, for display: "±0.00005" (not "±0.0"); "" for integers.
std::string lesson_tolerance_text(const LessonStep& step);

/// The answer as text at the precision the question asks for ("7", "0.0833", "33.34").
std::string lesson_answer_text(const LessonStep& step);

/// Mirror of the Explorer's selection for the Lesson tab: the step shown, what the learner typed,
/// whether the answer was checked / revealed, and the steps built for one (result, layer, head).
struct LessonState {
  int step = 0;
  char given[64] = "";       ///< the answer as typed
  int checked = 0;           ///< 0 not yet, +1 right, −1 wrong, −2 not an answer (blank or not a number)
  int attempts = 0;          ///< answers judged right or wrong on this step (not-answers do not count)
  std::string mistake;       ///< the named mistake of the last wrong answer ("" none known)
  int give_decimals = 0;     ///< the last answer was the right value with too few decimals: this many are asked
  bool revealed = false;     ///< the learner asked for the answer (shown only after an attempt)
  /// Predict, then observe: the answer, its working and the step's map are shown only once the
  /// learner has committed a number (right or wrong), or when the step does not apply.
  bool answer_visible(const LessonStep& st) const { return !st.applies || checked > 0 || (revealed && attempts > 0); }
  bool press_show_me = false;  ///< headless (--lesson-show-me): press "show me" on the next frame
  /// Opens step `to` (0-based) afresh: no answer, no attempt, the working hidden, the keyboard in
  /// the answer box (also when `to` is the step shown).
  void start_step(int to) {
    step = to;
    checked = 0;
    attempts = 0;
    mistake.clear();
    give_decimals = 0;
    revealed = false;
    given[0] = '\0';
    focus_answer = true;
  }
  /// The step buttons: opens step `to` afresh; the step shown keeps its answer.
  void go_to(int to) {
    if (to != step) start_step(to);
  }
  bool focus_answer = true;    ///< put the keyboard in the answer box (a new step, or after a wrong answer)
  /// Cached, not rebuilt every frame: rebuilt (panel_lesson.cpp's refresh_lesson) when the result's
  /// generation, the layer, the head or the language differ from the built_* fields below.
  std::vector<LessonStep> steps;
  uint64_t built_generation = 0;
  int built_layer = -1, built_head = -1;
  unsigned built_language = 0;  ///< i18n::generation() the steps' text was written in
  std::string error;         ///< build_lesson's error, if any
  /// Step 15's reruns (lesson_reruns) for the result of generation `reruns_generation` (0: none yet):
  /// made once per result, not again for every layer or head.
  LessonReruns reruns;
  uint64_t reruns_generation = 0;
  deberta::Matrix map;       ///< the step's index map (rel_pos, rows, delta) as numbers, cached
  std::string map_key;       ///< what `map` holds ("" = nothing yet)
  /// The step's "what if": the value tried, the row it gave, and for what (result generation, step,
  /// value) both were made; recomputed only when that changes.
  WhatIfValue what_if;
  std::string what_if_for;   ///< the step whose control `what_if` belongs to ("" = not set yet)
  WhatIfRow what_if_row;
  std::string what_if_key;   ///< what `what_if_row` was computed for ("" = nothing yet)
  std::string what_if_error; ///< what_if_row's error for `what_if_key`, if any
};

/// A line of the core's walk-through (deberta::explanation_steps' *_parts) in the interface's
/// language: its mathematics as written, its prose through the catalogues, {name} placeholders
/// filled (issue 54, item 2; `deberta explain` keeps the English). A prose template the catalogue
/// lacks, or whose translation's placeholders do not match, is written in English.
std::string explain_worded(const deberta::ExplainLine& line);

/// The model's configuration in short, in the interface's language: what ModelConfig::summary()
/// says in English ("deberta-v2 (v2/v3), 4 layers, H=192, 4 heads of d=48, V=16000, terms
/// c2c+c2p+p2c, k=32 log buckets (max 512)").
std::string model_summary(const deberta::ModelConfig& c);

/// What the bundled multilingual model (deberta-tiny-multilingual, recognised by its folder's name)
/// was trained on and what it cannot know, in the interface's language (issue 54, item 7; its model
/// card and docs/multilingual-model.md); "" for any other model.
std::string model_card_note(const deberta::Model& m);

enum class Quantity;  // state/state.h

/// A map's quantity as a radio button names it: the paper's c2c, c2p, p2c, p2p as written, logits
/// and probs in the interface's language.
std::string quantity_word(Quantity q);

/// deberta::head_title (the core's English: "masked-LM", "sequence classification", …) in the
/// interface's language.
const char* head_title_worded(deberta::HeadKind kind);

}  // namespace viewer
