// state.cpp — the background worker and the actions that change the viewer state.
#include "state.h"

#include "deberta/ablation.h"
#include "deberta/finite.h"  // parse_int_list (the CLI's parser, so the viewer reads ids the same way)
#include "deberta/model_io.h"

#include <GL/gl.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace viewer {

// ----------------------------------------------------------------------------------------------
// Quantities and tabs

const char* quantity_name(Quantity q) {
  switch (q) {
    case Quantity::C2C: return "c2c";
    case Quantity::C2P: return "c2p";
    case Quantity::P2C: return "p2c";
    case Quantity::P2P: return "p2p";
    case Quantity::Logits: return "logits";
    case Quantity::Probs: return "probs";
  }
  return "?";
}

const char* quantity_label(Quantity q) {
  switch (q) {
    case Quantity::C2C: return "c2c: content→content  s·Q_c[i]·K_c[j]";
    case Quantity::C2P: return "c2p: content→position  s·Q_c[i]·K_r[δ(i,j)]";
    case Quantity::P2C: return "p2c: position→content  s·K_c[j]·Q_r[δ]";
    case Quantity::P2P: return "p2p: position→position  s·Q_r·K_r";
    case Quantity::Logits: return "sum Ã = c2c + c2p + p2c (+ p2p)";
    case Quantity::Probs: return "softmax A = softmax_j(Ã)";
  }
  return "?";
}

const deberta::Matrix* attention_map(const deberta::AttentionTrace& a, int64_t head, Quantity q) {
  const std::vector<deberta::Matrix>* v = nullptr;
  switch (q) {
    case Quantity::C2C: v = &a.c2c; break;
    case Quantity::C2P: v = &a.c2p; break;
    case Quantity::P2C: v = &a.p2c; break;
    case Quantity::P2P: v = &a.p2p; break;
    case Quantity::Logits: v = &a.logits; break;
    case Quantity::Probs: v = &a.probs; break;
  }
  if (!v || head < 0 || head >= static_cast<int64_t>(v->size())) return nullptr;
  return &(*v)[head];
}

const deberta::Matrix* head_map(const deberta::ForwardTrace& trace, int64_t layer, int64_t head, Quantity q) {
  if (layer < 0 || layer >= static_cast<int64_t>(trace.layers.size())) return nullptr;
  return attention_map(trace.layers[layer].attention, head, q);
}

const char* tab_name(Tab t) {
  switch (t) {
    case Tab::Grid: return "grid";
    case Tab::Head: return "head";
    case Tab::Distance: return "distance";
    case Tab::Equation: return "equation";
    case Tab::Predictions: return "predictions";
    case Tab::Compare: return "compare";
    case Tab::Export: return "export";
    case Tab::Lesson: return "lesson";
    case Tab::Count: break;
  }
  return "?";
}

TextureCache::~TextureCache() {
  for (auto& [name, e] : entries)
    if (e.texture) glDeleteTextures(1, &e.texture);
}

// ----------------------------------------------------------------------------------------------
// Worker

Worker::Worker() { thread_ = std::thread([this] { run(); }); }

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Worker::submit(Request request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = std::move(request);
    busy_ = true;
  }
  wake_.notify_all();
}

std::shared_ptr<const Result> Worker::poll(uint64_t have, std::string* error, uint64_t* error_generation,
                                           bool* input_error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error) *error = error_;
  if (error_generation) *error_generation = error_generation_;
  if (input_error) *input_error = error_is_input_;
  if (latest_ && latest_->generation > have) return latest_;
  return nullptr;
}

void Worker::run() {
  for (;;) {
    Request r;
    std::shared_ptr<const Result> prev;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
      if (stop_) return;
      r = std::move(*pending_);
      pending_.reset();
      prev = latest_;
    }
    std::shared_ptr<const Result> out;
    std::string error;
    bool input_error = false;
    try {
      TokenInput input;
      try {
        input = tokenize_fields(*r.model, r.fields);
      } catch (const std::exception& e) {
        input_error = true;
        throw;
      }
      out = compute(r, std::move(input), prev);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (out) {
      latest_ = out;
      if (error_generation_ < r.generation) error_.clear();
    } else {
      error_ = error;
      error_generation_ = r.generation;
      error_is_input_ = input_error;
    }
    if (!pending_) busy_ = false;
  }
}

namespace {

bool same_input(const TokenInput& a, const TokenInput& b) {
  return a.inputs.input_ids == b.inputs.input_ids && a.inputs.token_type_ids == b.inputs.token_type_ids &&
         a.mask_positions == b.mask_positions;
}

std::vector<deberta::MaskPrediction> predictions(const deberta::Model& m, const deberta::Matrix& hidden,
                                                 const std::vector<int64_t>& positions) {
  return deberta::top_k_predictions(deberta::mlm_logits(m, hidden, positions), positions, 5);
}

/// The EMD on a finished encoder trace when the model decodes with it (`deberta::runs_emd`, the
/// rule every CLI command follows), else nothing and the reason.
std::optional<deberta::EMDTrace> emd_or_note(const deberta::Model& m, const deberta::ForwardTrace& t, std::string* note) {
  *note = deberta::why_no_emd(m);
  if (!note->empty()) return std::nullopt;
  try {
    return deberta::enhanced_mask_decoder(m, t);
  } catch (const std::exception& e) {
    *note = e.what();
    return std::nullopt;
  }
}

}  // namespace

TokenInput tokenize_fields(const LoadedModel& lm, const InputFields& f) {
  TokenInput in;
  if (lm.tokenizer && f.ids_text.empty()) {
    if (f.text.empty()) throw deberta::Error("type a text and press Enter");
    const deberta::Encoding enc = f.pair.empty() ? lm.tokenizer->encode(f.text) : lm.tokenizer->encode(f.text, &f.pair);
    in.inputs.input_ids = enc.ids;
    in.inputs.token_type_ids = enc.token_type_ids;
    in.names = enc.tokens;
  } else {
    if (f.ids_text.empty()) throw deberta::Error("type token ids, e.g. 14,43,3,33 (this model has no tokenizer)");
    if (!f.pair.empty() && !lm.tokenizer)
      throw deberta::Error("a sentence pair needs a tokenizer; give the pair as ids with token types instead");
    in.inputs.input_ids = deberta::parse_int_list(f.ids_text, "ids");
    if (!f.token_types_text.empty()) {
      in.inputs.token_type_ids = deberta::parse_int_list(f.token_types_text, "token types");
      if (in.inputs.token_type_ids.size() != in.inputs.input_ids.size())
        throw deberta::Error("token types: " + std::to_string(in.inputs.token_type_ids.size()) + " values for " +
                             std::to_string(in.inputs.input_ids.size()) + " ids");
    }
    for (int64_t id : in.inputs.input_ids) in.names.push_back(vocab_name(&lm, id));
  }
  const auto& c = lm.model.config;
  for (int64_t id : in.inputs.input_ids)
    if (id < 0 || id >= c.vocab_size)
      throw deberta::Error("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                           std::to_string(c.vocab_size) + ")");
  // A model without a token-type table ignores the types (as `deberta classify` does).
  if (c.type_vocab_size == 0) std::fill(in.inputs.token_type_ids.begin(), in.inputs.token_type_ids.end(), 0);
  for (int64_t t : in.inputs.token_type_ids)
    if (t < 0 || t >= std::max<int64_t>(c.type_vocab_size, 1))
      throw deberta::Error("token type " + std::to_string(t) + " is outside [0, " +
                           std::to_string(std::max<int64_t>(c.type_vocab_size, 1)) + ") (type_vocab_size " +
                           std::to_string(c.type_vocab_size) + ")");
  if (in.inputs.size() > c.max_position_embeddings)
    throw deberta::Error(std::to_string(in.inputs.size()) + " tokens: more than max_position_embeddings = " +
                         std::to_string(c.max_position_embeddings));
  const int64_t mask = lm.tokenizer ? lm.tokenizer->mask_id() : f.mask_id;
  if (mask >= 0) in.mask_positions = deberta::find_mask_positions(in.inputs, mask);
  return in;
}

std::shared_ptr<const Result> Worker::compute(const Request& r, TokenInput input, const std::shared_ptr<const Result>& prev) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const deberta::Model& m = r.model->model;
  auto out = std::make_shared<Result>();
  out->generation = r.generation;
  out->model = r.model;
  out->input = std::move(input);
  out->ablation = deberta::normalized(m, r.ablation);  // a switch equal to the model is no ablation
  deberta::resolve_attention(m.config, m.weights, out->ablation);  // throws a readable error first

  // Re-run from the first layer the change affects when only the ablation changed. The encoder
  // runs without the decoder stage; the EMD is added below, so that a model without absolute
  // position embeddings (no EMD possible) still shows everything else.
  const bool reuse = prev && prev->model == r.model && same_input(prev->input, out->input);
  if (reuse) {
    out->trace = prev->trace;
    out->first_layer = deberta::first_affected_layer(m, prev->ablation, out->ablation);
    deberta::rerun_from(m, &out->trace, out->ablation, out->first_layer);
  } else {
    out->first_layer = 0;
    out->trace = deberta::forward(m, out->input.inputs, out->ablation, deberta::TraceLevel::Full, true);
  }
  // The decoder stage ran as `deberta predict` / `dump` run it (deberta::run_decoder: the EMD when
  // the model decodes with it and the ablation keeps it), so decoder_output() and the export agree
  // with the CLI. The EMD's passes are also computed when the ablation decodes without them, for
  // the side-by-side view.
  if (out->trace.emd)
    out->emd = out->trace.emd;
  else
    out->emd = emd_or_note(m, out->trace, &out->emd_note);

  // A task head (classifier, token classifier, RTD discriminator) is the model's own prediction.
  if (out->emd) {
    const auto& enc = out->trace.layers.back().attention.probs;
    for (const auto& pass : out->emd->passes) {
      std::vector<deberta::Matrix> per_head;
      for (size_t h = 0; h < pass.attention.probs.size() && h < enc.size(); ++h)
        per_head.push_back(pass.attention.probs[h] - enc[h]);
      out->emd_attention_diff.push_back(std::move(per_head));
    }
  }

  // A bare encoder (no head at all) still shows every map; it simply predicts nothing (MLM branch below).
  const auto heads = deberta::available_heads(m);
  const deberta::HeadKind kind = heads.empty() ? deberta::HeadKind::MLM : heads.front();
  if (kind != deberta::HeadKind::MLM) {
    out->head = deberta::run_head(m, kind, out->trace);
    // As trained: the current output, the previous result's baseline (same model and tokens), or a run.
    out->head_baseline = out->ablation.is_default()           ? out->head
                         : reuse && prev->head_baseline        ? prev->head_baseline
                                                               : deberta::predict_head(m, out->input.inputs, kind);
  }
  const auto& pos = out->input.mask_positions;
  if (kind != deberta::HeadKind::MLM) {
    out->predict_note.clear();
  } else if (pos.empty()) {
    out->predict_note = "no [MASK] in the input: put [MASK] in the text (or give --mask-id) to see predictions";
  } else if (!m.weights.lm_head) {
    out->predict_note = heads.empty() ? "this model is a bare encoder (no output head): the maps show everything it computes, "
                                        "there is nothing to predict"
                                      : "this model has no masked-LM head (lm_predictions.*): no predictions";
  } else {
    try {
      out->current = predictions(m, out->trace.decoder_output(), pos);
      out->emd_off = predictions(m, out->trace.layers.back().output, pos);
      if (out->emd) out->emd_on = predictions(m, out->emd->output(), pos);
      if (out->ablation.is_default()) {
        out->baseline = out->current;
      } else if (reuse && !prev->baseline.empty()) {
        out->baseline = prev->baseline;
      } else {
        // The model as trained, through the core's own decoder stage (as `deberta predict`).
        const deberta::ForwardTrace base = deberta::forward(m, out->input.inputs, {}, deberta::TraceLevel::None, true);
        out->baseline = predictions(m, base.decoder_output(), pos);
      }
      out->effect = deberta::compare_predictions(out->baseline, out->current);
      for (size_t t = 0; t < out->baseline.size(); ++t)
        out->kl.push_back(deberta::kl_divergence(out->baseline[t].log_probs, out->current[t].log_probs));
    } catch (const std::exception& e) {
      out->predict_note = e.what();
      out->current.clear(), out->emd_on.clear(), out->emd_off.clear(), out->baseline.clear();
    }
  }
  // NaN / Inf (e.g. overflowing F16 weights): the same warnings the CLI prints.
  if (std::string w = deberta::non_finite_trace(out->trace); !w.empty()) out->warnings.push_back(std::move(w));
  if (std::string w = deberta::non_finite_predictions(out->current); !w.empty()) out->warnings.push_back(std::move(w));
  out->compute_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  return out;
}

// ----------------------------------------------------------------------------------------------
// Actions

namespace {
/// Reads a model folder (weights, tokenizer) off the UI thread.
std::shared_ptr<const LoadedModel> read_model(const std::string& path, const std::shared_ptr<std::atomic<double>>& progress) {
    const auto t0 = std::chrono::steady_clock::now();
    auto lm = std::make_shared<LoadedModel>();
    lm->model = deberta::load_model(path, [progress](uint64_t done, uint64_t total) {
      progress->store(total ? static_cast<double>(done) / static_cast<double>(total) : 0.0);
    });
    try {
      if (deberta::has_tokenizer(lm->model.directory))
        lm->tokenizer = deberta::load_tokenizer_for_model(lm->model.directory, lm->model.config.vocab_size);
      else
        lm->tokenizer_note = "no tokenizer files in this folder (spm.model, vocab.json + merges.txt or tokenizer.json): "
                             "type token ids instead; tokens show as #id";
    } catch (const std::exception& e) {
      lm->tokenizer_note = std::string("tokenizer not loaded: ") + e.what();
    }
    lm->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress->store(1.0);
    return lm;
}

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
      throw deberta::Error("model B has vocab_size " + std::to_string(mb.config.vocab_size) + ", model A " +
                           std::to_string(a->model->model.config.vocab_size) +
                           ": the two models do not share a vocabulary, so one input cannot feed both");
    const bool lm = a->model->model.weights.lm_head && mb.weights.lm_head;
    const std::vector<int64_t> positions = lm ? in.mask_positions : std::vector<int64_t>{};
    out->trace_b = deberta::forward(mb, in.inputs, {}, deberta::TraceLevel::Probs, !positions.empty());
    out->cmp = deberta::compare_traces(a->model->model, a->trace, mb, out->trace_b, positions, 5);
  } catch (const std::exception& e) {
    out->error = e.what();
  }
  return out;
}
}  // namespace

void start_load(ViewerState& s, const std::string& path) {
  if (s.loading.valid()) return;  // one load at a time
  s.loading_path = path;
  s.model_error.clear();
  s.load_progress->store(0.0);
  auto progress = s.load_progress;
  s.loading = std::async(std::launch::async, [path, progress] { return read_model(path, progress); });
}

void start_load_b(ViewerState& s, const std::string& path) {
  if (s.loading_b.valid()) return;
  s.loading_b_path = path;
  s.model_b_error.clear();
  auto progress = std::make_shared<std::atomic<double>>(0.0);
  s.loading_b = std::async(std::launch::async, [path, progress] { return read_model(path, progress); });
}

bool compare_busy(const ViewerState& s) { return s.loading_b.valid() || s.comparing.valid(); }

bool poll_compare(ViewerState& s) {
  bool changed = false;
  if (s.loading_b.valid() && s.loading_b.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try {
      s.model_b = s.loading_b.get();
      s.model_b_path = s.loading_b_path;
      s.model_b_error.clear();
    } catch (const std::exception& e) {
      s.model_b_error = e.what();  // the previous model B stays
    }
    s.loading_b = {};
    changed = true;
  }
  if (s.comparing.valid()) {
    if (s.comparing.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return changed;
    s.compare = s.comparing.get();
    s.comparing = {};
    changed = true;
  }
  // Start a comparison when A's shown result or model B is newer than the last comparison.
  if (s.model_b && s.result && s.result->model == s.model &&
      (!s.compare || s.compare->generation != s.result->generation || s.compare->model_b != s.model_b)) {
    s.comparing = std::async(std::launch::async, run_compare, s.result, s.model_b);
  }
  return changed;
}

bool poll_load(ViewerState& s) {
  if (!s.loading.valid()) return false;
  if (s.loading.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  try {
    s.model = s.loading.get();
    s.model_error.clear();
    s.model_notice.clear();
    s.model_path = s.loading_path;
    s.recent.erase(std::remove(s.recent.begin(), s.recent.end(), s.loading_path), s.recent.end());
    s.recent.insert(s.recent.begin(), s.loading_path);
    if (s.recent.size() > 8) s.recent.resize(8);
    s.ablation = {};  // switches belong to a model (heads, k)
    // Long enough (33 tokens) that the log buckets and every lesson step have something to show.
    if (s.model->tokenizer && s.text.empty()) s.text = kDefaultText;
    if (s.model->tokenizer && s.mask_id < 0) s.mask_id = static_cast<int>(s.model->tokenizer->mask_id());
    set_input_from_fields(s);
  } catch (const std::exception& e) {
    s.model_error = e.what();
  }
  s.loading = {};
  return true;
}

void set_input_from_fields(ViewerState& s) {
  // The worker tokenizes (tokenize_fields): the UI thread only hands over the fields.
  if (!s.model) return;
  request_compute(s);
}

void request_compute(ViewerState& s) {
  if (!s.model) return;
  Request r;
  r.generation = ++s.generation;
  r.model = s.model;
  r.fields = {s.text, s.pair, s.ids_text, s.token_types_text, s.mask_id};
  r.ablation = s.ablation;
  s.request_time = ImGui::GetCurrentContext() ? ImGui::GetTime() : 0.0;
  s.worker.submit(std::move(r));
}

bool poll_compute(ViewerState& s) {
  std::string error;
  uint64_t error_gen = 0;
  bool input_error = false;
  auto r = s.worker.poll(s.result ? s.result->generation : 0, &error, &error_gen, &input_error);
  if (error_gen == s.generation && !error.empty()) {
    (input_error ? s.input_error : s.compute_error) = error;
    (input_error ? s.compute_error : s.input_error).clear();
  }
  if (!r) return false;
  if (r->generation >= error_gen) s.compute_error.clear(), s.input_error.clear();
  s.result = r;
  s.input = r->input;
  clamp_selection(s);
  return true;
}

void toggle_head_mask(ViewerState& s, int layer, int head) {
  const std::pair<int64_t, int64_t> key{layer, head};
  if (s.ablation.head_mask.count(key))
    s.ablation.head_mask.erase(key);
  else
    s.ablation.head_mask.insert(key);
  request_compute(s);
}

int token_count(const ViewerState& s) { return s.result ? static_cast<int>(s.result->input.inputs.size()) : 0; }

std::string token_name(const ViewerState& s, int t) {
  if (!s.result || t < 0 || t >= static_cast<int>(s.result->input.names.size())) return "?";
  return s.result->input.names[t];
}

std::string vocab_name(const LoadedModel* m, int64_t id) {
  if (m && m->tokenizer) return m->tokenizer->display(id);
  return "#" + std::to_string(id);
}

void clamp_selection(ViewerState& s) {
  if (!s.result) return;
  const auto& c = s.result->model->model.config;
  const int L = static_cast<int>(c.num_hidden_layers), H = static_cast<int>(c.num_attention_heads);
  const int N = token_count(s);
  s.layer = std::clamp(s.layer, 0, std::max(L - 1, 0));
  s.head = std::clamp(s.head, 0, std::max(H - 1, 0));
  s.emd_head = std::clamp(s.emd_head, 0, std::max(H - 1, 0));
  s.qi = std::clamp(s.qi, 0, std::max(N - 1, 0));
  s.kj = std::clamp(s.kj, 0, std::max(N - 1, 0));
}

}  // namespace viewer
