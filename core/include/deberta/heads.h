// heads.h — the task heads real DeBERTa checkpoints carry, on top of the encoder's last layer.
//
// Which heads a folder has is decided here, once, for the weight map, the CLI, the dump and the
// viewer: `task_head_plan` (which tensors to read), `available_heads` / `default_head` /
// `select_head` (which head a command uses). One function per head, each mirroring its reference:
//
//   replaced-token detection  `rtd_logits`       microsoft/DeBERTa `LMMaskPredictionHead` (v3 discriminator)
//   sequence classification   `sequence_pooled`, `sequence_logits`
//                                                Hugging Face `ContextPooler` + `classifier` of
//                                                `Deberta(V2)ForSequenceClassification`
//   token classification      `token_logits`     Hugging Face `DebertaV2ForTokenClassification`
//
// The masked-LM head (with or without the EMD) stays in model.h (`mlm_logits`); it appears here
// only as one of the `HeadKind`s a model can have. Formulas and released checkpoints: docs/heads.md.
#pragma once

#include "deberta/model.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace deberta {

/// The output heads a DeBERTa checkpoint can carry.
enum class HeadKind {
  MLM,                     ///< masked-LM: `lm_predictions.lm_head.*` / `cls.predictions.*` (model.h)
  RTD,                     ///< replaced-token detection: `mask_predictions.*`
  SequenceClassification,  ///< `pooler.dense.*` + `classifier.*`
  TokenClassification,     ///< `classifier.*` without a pooler
};

/// Command-line key of a head: "mlm", "rtd", "cls", "tokcls".
const char* head_key(HeadKind kind);
/// Readable name, e.g. "replaced-token detection".
const char* head_title(HeadKind kind);
/// Parses "mlm" | "rtd" | "cls" | "tokcls". Errors: any other string (the known keys are listed).
HeadKind parse_head_key(const std::string& key);

/// Which task-head tensors the weight map reads.
struct TaskHeadPlan {
  bool rtd = false;       ///< read `mask_predictions.*`
  bool sequence = false;  ///< read `pooler.dense.*` and `classifier.*`
  bool token = false;     ///< read `classifier.*` as a token classifier
};

/// Decides which heads to read from `architectures` and the tensor names present (`has(name)`,
/// names without the `deberta.` prefix):
/// - RTD when `architectures` names `DebertaV2ForPreTraining` (the microsoft RTD checkpoint layout)
///   or any `mask_predictions.*` tensor is present;
/// - sequence classification when `architectures` names a `...ForSequenceClassification` class, or
///   names no class and both `pooler.dense.weight` and `classifier.weight` are present;
/// - token classification when it names `...ForTokenClassification`, or names no class and
///   `classifier.weight` is present without a pooler.
/// A head the plan reads must be complete: `map_weights` reports its missing tensors by name.
/// Other classes (`...ForMultipleChoice`, `...ForQuestionAnswering`) get no head: their tensors
/// stay in `ModelWeights::unused`.
TaskHeadPlan task_head_plan(const ModelConfig& config, const std::function<bool(const std::string&)>& has);

/// The heads `model` has, in the order `default_head` prefers them: sequence classification,
/// token classification, RTD, MLM.
std::vector<HeadKind> available_heads(const Model& model);

/// The head a command uses when none is asked for: the first of `available_heads`. A v3
/// discriminator with both `mask_predictions.*` and `lm_predictions.*` therefore defaults to RTD.
/// Errors: a model without any head (a bare encoder), naming the weights file.
HeadKind default_head(const Model& model);

/// `key` ("" = `default_head`) checked against `available_heads`. Errors: unknown key; a head the
/// model lacks (the message lists the heads it has and names the weights file).
HeadKind select_head(const Model& model, const std::string& key);

/// A caveat to print when `kind` is used on `model`, or "" (e.g. the MLM head of a v3
/// discriminator that also has an RTD head: released v3 discriminators never trained it).
std::string head_note(const Model& model, HeadKind kind);

/// Labels of a classifier head: `id2label` of the config, one per logit.
const std::vector<std::string>& head_labels(const Model& model);

/// Replaced-token detection, microsoft/DeBERTa `replaced_token_detection_model.py`
/// `LMMaskPredictionHead.forward`: with h = `hidden [N, H]` (the last encoder layer),
///   s_i = LN_mp(h_0 + h_i),  t_i = act(s_i W_dᵀ + b_d),  logit_i = t_i · w_c + b_c,
/// act = the encoder's `hidden_act`, LN_mp = `mask_predictions.LayerNorm` (eps = layer_norm_eps).
/// Returns `[N]` logits; sigmoid(logit_i) = P(token i was replaced).
/// Errors: model without `mask_predictions.*`; `hidden` not `[N ≥ 1, H]`.
Vector rtd_logits(const Model& model, const Matrix& hidden);

/// Hugging Face `ContextPooler.forward`: pooled = ACT2FN[pooler_hidden_act](h_0 W_pᵀ + b_p),
/// h_0 = row 0 of `hidden [N, H]` (token 0, whatever its id). Returns `[P]`, P = pooler_hidden_size.
/// Errors: model without `pooler.dense.*` / `classifier.*`; `hidden` not `[N ≥ 1, H]`.
Vector sequence_pooled(const Model& model, const Matrix& hidden);

/// Hugging Face `Deberta(V2)ForSequenceClassification.classifier`: logits = pooled W_cᵀ + b_c,
/// `pooled [P]` → `[C]` (C = num_labels; C = 1 is a regression value, no softmax).
/// Errors: model without a sequence classifier; `pooled` not `[P]`.
Vector sequence_logits(const Model& model, const Vector& pooled);

/// Hugging Face `DebertaV2ForTokenClassification`: logits_i = h_i W_cᵀ + b_c for every row of
/// `hidden [N, H]` (padding rows included). Returns `[N, C]`.
/// Errors: model without a token classifier; `hidden` not `[N, H]`.
Matrix token_logits(const Model& model, const Matrix& hidden);

/// The hidden states every task head reads: the output of the last encoder layer `[N, H]` (never
/// the EMD's, which only the MLM head uses). Errors: a trace without layers.
const Matrix& head_hidden_states(const ForwardTrace& trace);

/// One task head's output on one sequence, in one layout for the three task heads:
/// rows are the items the head decides on — RTD: N tokens × 1; sequence classification: 1 × C;
/// token classification: N tokens × C.
struct HeadOutput {
  HeadKind kind = HeadKind::RTD;
  Matrix logits;   ///< `[items, C]` as above (RTD: C = 1)
  Matrix probs;    ///< RTD: sigmoid; classifiers: row softmax; regression (C = 1 classifier): = logits
  Vector pooled;   ///< sequence classification: `[P]` pooler output; empty otherwise
  Vector item_mask;  ///< `[items]` 1 for items that count in comparisons (RTD/tokcls: unpadded tokens)
  bool regression = false;  ///< a sequence/token classifier with one output
};

/// Applies task head `kind` (not MLM) to a finished trace. Errors: `kind` is MLM or the model
/// lacks the head.
HeadOutput run_head(const Model& model, HeadKind kind, const ForwardTrace& trace);

/// Runs the encoder under `ablation` (no decoder) and applies task head `kind`.
/// Errors: those of `forward` and `run_head`.
HeadOutput predict_head(const Model& model, const Inputs& inputs, HeadKind kind, const Ablation& ablation = {});

/// What an ablation changes in a task head's output, against the baseline.
struct HeadEffect {
  std::string name;     ///< e.g. "-c2p", "mask 1:0"
  Ablation ablation;
  HeadKind kind = HeadKind::RTD;
  bool regression = false;  ///< a one-output classifier (measured by |Δ value|)
  /// Classifiers: KL(baseline ‖ ablated) of the label distribution in nats (token classification:
  /// mean and max over counted tokens). 0 for RTD and regression.
  double mean_kl = 0, max_kl = 0;
  /// RTD: |Δ P(replaced)| over counted tokens; regression: |Δ value|. 0 for classifiers.
  double mean_abs_dp = 0, max_abs_dp = 0;
  /// Classifiers: items whose most probable label changed; RTD: tokens whose decision at
  /// P = 0.5 (replaced or not) changed.
  int64_t flips = 0;
  int64_t items = 0;    ///< items counted (1 for sequence classification, unpadded tokens otherwise)
  std::string error;    ///< non-empty when the ablation cannot run on this model
  /// The number the rows are sorted by: mean_kl for classifiers, mean_abs_dp for RTD / regression.
  double score() const;
};

/// Compares two outputs of the same head on the same input. Errors: different heads or shapes.
HeadEffect compare_head_outputs(const HeadOutput& baseline, const HeadOutput& ablated);

/// Runs every ablation of `ablations` (e.g. `standard_ablations`) through task head `kind` and
/// compares each with the baseline; sorted by `score()`, largest first. Ablations that only switch
/// the EMD are left out (task heads read the encoder). Ablations the model cannot run are kept
/// with `error` set. Errors: those of `predict_head` for the baseline.
std::vector<HeadEffect> run_head_ablations(const Model& model, const Inputs& inputs, HeadKind kind,
                                           const std::vector<std::pair<std::string, Ablation>>& ablations);

/// The golden-format tensors of every task head `model` has (README "Task-head cases"):
/// `rtd.logits [N]`, `cls.pooled [P]`, `cls.logits [C]`, `tokcls.logits [N, C]`, computed from
/// `head_hidden_states(trace)`. Used by `trace_to_tensors`.
TensorMap head_tensors(const Model& model, const ForwardTrace& trace);

}  // namespace deberta
