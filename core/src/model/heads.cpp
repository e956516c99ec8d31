#include "deberta/heads.h"

#include "deberta/equations.h"

#include <algorithm>
#include <cmath>

namespace deberta {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool names_any(const ModelConfig& c, const std::function<bool(const std::string&)>& pred) {
  return std::any_of(c.architectures.begin(), c.architectures.end(), pred);
}

void check_hidden(const Model& model, const Matrix& hidden, const char* what) {
  if (hidden.rows() < 1 || hidden.cols() != model.config.hidden_size)
    throw Error(std::string(what) + ": hidden states must be [N >= 1, " + std::to_string(model.config.hidden_size) +
                "], found [" + std::to_string(hidden.rows()) + ", " + std::to_string(hidden.cols()) + "]");
}

[[noreturn]] void no_head(const Model& model, HeadKind kind) {
  throw Error(model.weights_path + ": the model has no " + head_title(kind) + " head (" +
              (kind == HeadKind::RTD                      ? "mask_predictions.*"
               : kind == HeadKind::SequenceClassification ? "pooler.dense.* + classifier.*"
               : kind == HeadKind::TokenClassification    ? "classifier.* without a pooler"
                                                          : "lm_predictions.lm_head.* or cls.predictions.*") +
              ")");
}

Matrix softmax_rows(const Matrix& logits) { return log_softmax_rows(logits).array().exp().matrix(); }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

const char* head_key(HeadKind kind) {
  switch (kind) {
    case HeadKind::MLM: return "mlm";
    case HeadKind::RTD: return "rtd";
    case HeadKind::SequenceClassification: return "cls";
    case HeadKind::TokenClassification: return "tokcls";
  }
  return "?";
}

const char* head_title(HeadKind kind) {
  switch (kind) {
    case HeadKind::MLM: return "masked-LM";
    case HeadKind::RTD: return "replaced-token detection";
    case HeadKind::SequenceClassification: return "sequence classification";
    case HeadKind::TokenClassification: return "token classification";
  }
  return "?";
}

HeadKind parse_head_key(const std::string& key) {
  for (HeadKind k : {HeadKind::MLM, HeadKind::RTD, HeadKind::SequenceClassification, HeadKind::TokenClassification})
    if (key == head_key(k)) return k;
  throw Error("--head: unknown head '" + key + "' (known: mlm, rtd, cls, tokcls)");
}

TaskHeadPlan task_head_plan(const ModelConfig& c, const std::function<bool(const std::string&)>& has) {
  const bool names_seq = names_any(c, [](const std::string& a) { return ends_with(a, "ForSequenceClassification"); });
  const bool names_tok = names_any(c, [](const std::string& a) { return ends_with(a, "ForTokenClassification"); });
  const bool names_rtd = names_any(c, [](const std::string& a) { return a == "DebertaV2ForPreTraining"; });
  // A class that is not a task head we know (base model, masked LM, multiple choice, QA, ...):
  // classifier-like tensors are then not ours to interpret.
  const bool names_other = !c.architectures.empty() && !names_seq && !names_tok && !names_rtd;
  TaskHeadPlan plan;
  plan.rtd = names_rtd;
  for (const char* n : {"mask_predictions.LayerNorm.weight", "mask_predictions.LayerNorm.bias",
                        "mask_predictions.dense.weight", "mask_predictions.dense.bias",
                        "mask_predictions.classifier.weight", "mask_predictions.classifier.bias"})
    plan.rtd = plan.rtd || has(n);
  const bool free = !names_seq && !names_tok && !names_other;  // architectures does not decide
  const bool pooler = has("pooler.dense.weight"), classifier = has("classifier.weight");
  plan.sequence = names_seq || (free && pooler && classifier);
  plan.token = !plan.sequence && (names_tok || (free && classifier && !pooler));
  return plan;
}

std::vector<HeadKind> available_heads(const Model& model) {
  std::vector<HeadKind> out;
  const ModelWeights& w = model.weights;
  if (w.seq_classifier) out.push_back(HeadKind::SequenceClassification);
  if (w.token_classifier) out.push_back(HeadKind::TokenClassification);
  if (w.rtd_head) out.push_back(HeadKind::RTD);
  if (w.lm_head) out.push_back(HeadKind::MLM);
  return out;
}

HeadKind default_head(const Model& model) {
  const auto heads = available_heads(model);
  if (heads.empty())
    throw Error(model.weights_path + ": the model has no output head (no lm_predictions.*, cls.predictions.*, "
                                     "mask_predictions.*, pooler.dense.* or classifier.*): it is a bare encoder");
  return heads.front();
}

HeadKind select_head(const Model& model, const std::string& key) {
  if (key.empty()) return default_head(model);
  const HeadKind kind = parse_head_key(key);
  const auto heads = available_heads(model);
  if (std::find(heads.begin(), heads.end(), kind) == heads.end()) {
    std::string list;
    for (HeadKind h : heads) list += (list.empty() ? "" : ", ") + std::string(head_key(h));
    throw Error(model.weights_path + ": the model has no " + head_title(kind) + " head (--head " + key +
                "); it has: " + (list.empty() ? "none" : list));
  }
  return kind;
}

std::string head_note(const Model& model, HeadKind kind) {
  if (kind == HeadKind::MLM && model.weights.rtd_head)
    return "this checkpoint is a replaced-token-detection discriminator (DeBERTa-v3 style): the MLM head of the "
           "released v3 discriminators (xsmall, small, base) was never trained, so its predictions are "
           "not meaningful; use --head rtd";
  if ((kind == HeadKind::SequenceClassification || kind == HeadKind::TokenClassification) &&
      !model.config.has_id2label)
    return "config.json has no id2label: labels are named LABEL_0 ... LABEL_" +
           std::to_string(model.config.id2label.size() - 1);
  return "";
}

const std::vector<std::string>& head_labels(const Model& model) { return model.config.id2label; }

Vector rtd_logits(const Model& model, const Matrix& hidden) {
  if (!model.weights.rtd_head) no_head(model, HeadKind::RTD);
  check_hidden(model, hidden, "rtd_logits");
  const RTDHeadWeights& w = *model.weights.rtd_head;
  Matrix s = hidden;
  s.rowwise() += hidden.row(0);                                      // h_0 + h_i
  s = layer_norm(s, w.norm);                                         // LN_mp
  const Matrix t = activation(linear(w.dense, s), model.config.hidden_act);  // act(s W_dᵀ + b_d)
  return linear(w.classifier, t).col(0);                               // t · w_c + b_c
}

Vector sequence_pooled(const Model& model, const Matrix& hidden) {
  if (!model.weights.seq_classifier) no_head(model, HeadKind::SequenceClassification);
  check_hidden(model, hidden, "sequence_pooled");
  const Matrix h0 = hidden.topRows(1);
  return activation(linear(model.weights.seq_classifier->pooler, h0), model.config.pooler_hidden_act).row(0).transpose();
}

Vector sequence_logits(const Model& model, const Vector& pooled) {
  if (!model.weights.seq_classifier) no_head(model, HeadKind::SequenceClassification);
  const Linear& c = model.weights.seq_classifier->classifier;
  if (pooled.size() != c.weight.cols())
    throw Error("sequence_logits: pooled vector has " + std::to_string(pooled.size()) + " entries, the classifier takes " +
                std::to_string(c.weight.cols()));
  const Matrix x = pooled.transpose();
  return linear(c, x).row(0).transpose();
}

Matrix token_logits(const Model& model, const Matrix& hidden) {
  if (!model.weights.token_classifier) no_head(model, HeadKind::TokenClassification);
  check_hidden(model, hidden, "token_logits");
  return linear(model.weights.token_classifier->classifier, hidden);
}

const Matrix& head_hidden_states(const ForwardTrace& trace) {
  if (trace.layers.empty()) throw Error("task head: the trace has no encoder layers");
  return trace.layers.back().output;
}

HeadOutput run_head(const Model& model, HeadKind kind, const ForwardTrace& trace) {
  const Matrix& h = head_hidden_states(trace);
  const int64_t N = h.rows();
  Vector token_mask = Vector::Ones(N);
  for (int64_t i = 0; i < N && i < static_cast<int64_t>(trace.inputs.attention_mask.size()); ++i)
    token_mask(i) = trace.inputs.attention_mask[i] != 0 ? 1.0 : 0.0;
  HeadOutput out;
  out.kind = kind;
  switch (kind) {
    case HeadKind::RTD: {
      out.logits = rtd_logits(model, h);
      out.probs = out.logits.unaryExpr([](double x) { return sigmoid(x); });
      out.item_mask = token_mask;
      return out;
    }
    case HeadKind::SequenceClassification: {
      out.pooled = sequence_pooled(model, h);
      out.logits = sequence_logits(model, out.pooled).transpose();
      out.item_mask = Vector::Ones(1);
      break;
    }
    case HeadKind::TokenClassification: {
      out.logits = token_logits(model, h);
      out.item_mask = token_mask;
      break;
    }
    case HeadKind::MLM:
      throw Error("run_head: the masked-LM head is applied by mlm_logits / predict_masked, not run_head");
  }
  out.regression = out.logits.cols() == 1;
  out.probs = out.regression ? out.logits : softmax_rows(out.logits);
  return out;
}

HeadOutput predict_head(const Model& model, const Inputs& inputs, HeadKind kind, const Ablation& ablation) {
  if (kind == HeadKind::MLM) throw Error("predict_head: use predict_masked for the masked-LM head");
  const auto heads = available_heads(model);
  if (std::find(heads.begin(), heads.end(), kind) == heads.end()) no_head(model, kind);
  const ForwardTrace trace = forward(model, inputs, ablation, TraceLevel::None, false);
  return run_head(model, kind, trace);
}

double HeadEffect::score() const { return kind == HeadKind::RTD || regression ? mean_abs_dp : mean_kl; }

HeadEffect compare_head_outputs(const HeadOutput& base, const HeadOutput& abl) {
  if (base.kind != abl.kind || base.logits.rows() != abl.logits.rows() || base.logits.cols() != abl.logits.cols())
    throw Error("compare_head_outputs: the two outputs come from different heads or inputs");
  HeadEffect e;
  e.kind = base.kind;
  e.regression = base.regression;
  double sum = 0;
  for (int64_t r = 0; r < base.logits.rows(); ++r) {
    if (base.item_mask(r) == 0) continue;
    ++e.items;
    if (base.kind == HeadKind::RTD || base.regression) {
      const double d = std::fabs(abl.probs(r, 0) - base.probs(r, 0));
      sum += d;
      e.max_abs_dp = std::max(e.max_abs_dp, d);
      if (base.kind == HeadKind::RTD && (base.probs(r, 0) > 0.5) != (abl.probs(r, 0) > 0.5)) ++e.flips;
    } else {
      // KL from the logits' log-softmax keeps tiny probabilities exact.
      const Vector base_log = log_softmax_rows(base.logits.row(r)).row(0).transpose();
      const Vector abl_log = log_softmax_rows(abl.logits.row(r)).row(0).transpose();
      const double kl = kl_divergence(base_log, abl_log);
      sum += kl;
      e.max_kl = std::max(e.max_kl, kl);
      Eigen::Index a = 0, b = 0;
      base.logits.row(r).maxCoeff(&a);
      abl.logits.row(r).maxCoeff(&b);
      if (a != b) ++e.flips;
    }
  }
  const double mean = e.items ? sum / static_cast<double>(e.items) : 0.0;
  if (base.kind == HeadKind::RTD || base.regression) e.mean_abs_dp = mean;
  else e.mean_kl = mean;
  return e;
}

std::vector<HeadEffect> run_head_ablations(const Model& model, const Inputs& inputs, HeadKind kind,
                                           const std::vector<std::pair<std::string, Ablation>>& ablations) {
  const HeadOutput baseline = predict_head(model, inputs, kind, {});
  std::vector<HeadEffect> out;
  for (const auto& [name, ablation] : ablations) {
    Ablation without_emd = ablation;
    without_emd.emd = true;
    if (!ablation.emd && normalized(model, without_emd).is_default()) continue;  // only the EMD: not read by task heads
    HeadEffect e;
    try {
      e = compare_head_outputs(baseline, predict_head(model, inputs, kind, ablation));
    } catch (const Error& err) {
      e.kind = kind;
      e.error = err.what();
    }
    e.name = name;
    e.ablation = ablation;
    out.push_back(std::move(e));
  }
  std::stable_sort(out.begin(), out.end(), [](const HeadEffect& a, const HeadEffect& b) {
    if (a.error.empty() != b.error.empty()) return a.error.empty();
    return a.score() > b.score();
  });
  return out;
}

TensorMap head_tensors(const Model& model, const ForwardTrace& trace) {
  TensorMap out;
  if (trace.layers.empty()) return out;
  const Matrix& h = head_hidden_states(trace);
  if (model.weights.rtd_head) out["rtd.logits"] = Tensor::from_vector(rtd_logits(model, h));
  if (model.weights.seq_classifier) {
    const Vector pooled = sequence_pooled(model, h);
    out["cls.pooled"] = Tensor::from_vector(pooled);
    out["cls.logits"] = Tensor::from_vector(sequence_logits(model, pooled));
  }
  if (model.weights.token_classifier) out["tokcls.logits"] = Tensor::from_matrix(token_logits(model, h));
  return out;
}

}  // namespace deberta
