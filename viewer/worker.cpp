// worker.cpp — tokenizing, computing and materializing results, and the compute thread.
#include "worker.h"

#include "deberta/inputs.h"

#include "deberta/ablation.h"
#include "deberta/finite.h"  // parse_int_list (the CLI's parser, so the viewer reads ids the same way)
#include "deberta/model_io.h"

#include <algorithm>
#include <chrono>

namespace viewer {

namespace {

bool same_input(const TokenInput& a, const TokenInput& b) {
  return a.inputs.input_ids == b.inputs.input_ids && a.inputs.token_type_ids == b.inputs.token_type_ids &&
         a.mask_positions == b.mask_positions;
}

constexpr int64_t kTopK = 5;  // predictions kept per [MASK]

std::vector<deberta::MaskPrediction> predictions(const deberta::Model& m, const deberta::Matrix& hidden,
                                                 const std::vector<int64_t>& positions) {
  return deberta::predict_from_states(m, hidden, positions, kTopK);
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

/// What `rerun_from(..., first)` keeps of `prev`: inputs, embeddings and layers 0 … first − 1
/// (rerun_from rebuilds the sequence context and the decoder stage).
deberta::ForwardTrace trace_prefix(const deberta::ForwardTrace& prev, int64_t first) {
  deberta::ForwardTrace t;
  t.inputs = prev.inputs;
  t.ablation = prev.ablation;
  t.level = prev.level;
  t.embedding_output = prev.embedding_output;
  const auto end = prev.layers.begin() + std::clamp<int64_t>(first, 0, static_cast<int64_t>(prev.layers.size()));
  t.layers.assign(prev.layers.begin(), end);
  t.decoder = prev.decoder;
  return t;
}

}  // namespace

std::shared_ptr<const LoadedModel> read_model(const std::string& path, const std::shared_ptr<std::atomic<double>>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  auto lm = std::make_shared<LoadedModel>();
  lm->model = deberta::load_model(path, [progress](uint64_t done, uint64_t total) {
    if (progress) progress->store(total ? static_cast<double>(done) / static_cast<double>(total) : 0.0);
  });
  try {
    if (deberta::has_tokenizer(lm->model.directory))
      lm->tokenizer = deberta::load_tokenizer_for_model(lm->model.directory, lm->model.config.vocab_size);
    else
      lm->tokenizer_note = "no tokenizer files in this folder (spm.model, vocab.json + merges.txt or tokenizer.json): "
                           "type token ids instead; tokens show as #id";
  } catch (const std::exception& e) {
    lm->tokenizer_error = e.what();
    lm->tokenizer_note = "tokenizer not loaded: " + lm->tokenizer_error + " (type token ids instead)";
  }
  lm->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (progress) progress->store(1.0);
  return lm;
}

TokenInput tokenize_fields(const LoadedModel& lm, const InputFields& f) {
  // The fields as a request for the core's one input resolver (deberta/inputs.h): the same rules and
  // messages as the CLI and the Python module.
  deberta::InputRequest q;
  if (f.ids_text.empty()) {
    if (f.text.empty()) throw deberta::Error("type a text and press Enter");
    q.text = f.text;
    if (!f.pair.empty()) q.pair = f.pair;
  } else {
    if (!f.pair.empty() && !lm.tokenizer)
      throw deberta::Error("a sentence pair needs a tokenizer; give the pair as ids with token types instead");
    q.ids = deberta::parse_int_list(f.ids_text, "ids");
    if (!f.token_types_text.empty()) q.token_types = deberta::parse_int_list(f.token_types_text, "token types");
  }
  q.mask_id = lm.tokenizer ? -1 : f.mask_id;
  deberta::TokenizedInput t = deberta::tokenize_input(lm.model, lm.tokenizer.get(), q, lm.tokenizer_error);
  TokenInput in;
  in.inputs = std::move(t.inputs);
  in.mask_positions = std::move(t.mask_positions);
  if (!q.ids.empty())
    for (int64_t id : in.inputs.input_ids) in.names.push_back(vocab_name(&lm, id));
  else
    in.names = std::move(t.names);
  return in;
}

std::shared_ptr<Result> compute_result(const Request& r, TokenInput input, const std::shared_ptr<const Result>& prev) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const deberta::Model& m = r.model->model;
  auto out = std::make_shared<Result>();
  out->generation = r.generation;
  out->model = r.model;
  out->input = std::move(input);
  out->ablation = deberta::normalized(m, r.ablation);  // a switch equal to the model is no ablation
  deberta::resolve_attention(m.config, m.weights, out->ablation);  // throws a readable error first

  // Re-run from the first layer the change affects when only the ablation changed: the layers
  // before it are copied (hidden states and probabilities), nothing else. The decoder stage runs
  // as `deberta predict` / `dump` run it (deberta::run_decoder: the EMD when the model decodes
  // with it and the ablation keeps it), so decoder_output() and the export agree with the CLI.
  const bool reuse = prev && prev->model == r.model && same_input(prev->input, out->input);
  if (reuse) {
    out->first_layer = deberta::first_affected_layer(m, prev->ablation, out->ablation);
    out->trace = trace_prefix(prev->trace, out->first_layer);
    deberta::rerun_from(m, &out->trace, out->ablation, out->first_layer);
  } else {
    out->first_layer = 0;
    out->trace = deberta::forward(m, out->input.inputs, out->ablation, deberta::TraceLevel::Probs, true);
  }
  // The EMD's passes are also computed when the ablation decodes without them, for the
  // side-by-side view.
  if (!out->trace.emd) out->side_emd = emd_or_note(m, out->trace, &out->emd_note);
  const deberta::EMDTrace* emd = out->emd();
  if (emd) {
    const auto& enc = out->trace.layers.back().attention.probs;
    for (const auto& pass : emd->passes) {
      std::vector<deberta::Matrix> per_head;
      for (size_t h = 0; h < pass.attention.probs.size() && h < enc.size(); ++h)
        per_head.push_back(pass.attention.probs[h] - enc[h]);
      out->emd_attention_diff.push_back(std::move(per_head));
    }
  }

  // A task head (classifier, token classifier, RTD discriminator) is the model's own prediction.
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
      // Two hidden states at most: the EMD output and the last layer. decoder_output() is one of
      // them (the EMD's when it ran), so `current` is a copy, not a third run of the head.
      // One pass of the head over the embedding table for both states (the same bits as two).
      std::vector<const deberta::Matrix*> states{&out->trace.layers.back().output};
      if (emd) states.push_back(&emd->output());
      std::vector<deberta::Matrix> logits = deberta::mlm_logits(m, states, pos);
      out->emd_off = deberta::top_k_predictions(logits[0], pos, kTopK);
      if (emd) out->emd_on = deberta::top_k_predictions(logits[1], pos, kTopK);
      out->current = out->trace.emd ? out->emd_on : out->emd_off;
      if (out->ablation.is_default()) {
        out->baseline = out->current;
      } else if (reuse && !prev->baseline.empty()) {
        out->baseline = prev->baseline;
      } else {
        // The model as trained, through the core's own decoder stage (as `deberta predict`).
        const deberta::ForwardTrace base = deberta::forward(m, out->input.inputs, {}, deberta::TraceLevel::None, true);
        out->baseline = predictions(m, base.decoder_output(), pos);
      }
      out->kl = deberta::kl_divergences(out->baseline, out->current);
      out->effect = deberta::compare_predictions(out->baseline, out->current, out->kl);
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

std::shared_ptr<LayerDetail> materialize_detail(const Result& r, const std::vector<int64_t>& layers) {
  const deberta::Model& m = r.model->model;
  auto d = std::make_shared<LayerDetail>();
  d->generation = r.generation;
  d->trace.inputs = r.trace.inputs;
  d->trace.context = r.trace.context;
  d->trace.ablation = r.trace.ablation;
  d->trace.level = deberta::TraceLevel::Full;
  d->trace.layers.resize(r.trace.layers.size());
  for (int64_t l : layers) {
    deberta::LayerTrace full = deberta::materialize_layer(m, r.trace, l);  // throws on a layer out of range
    d->trace.layers[static_cast<size_t>(l)] = std::move(full);
    if (std::find(d->held.begin(), d->held.end(), l) == d->held.end()) d->held.push_back(l);
  }
  std::sort(d->held.begin(), d->held.end());
  return d;
}

std::shared_ptr<const LayerDetail> detail_now(const Result& r, const std::shared_ptr<const LayerDetail>& have,
                                              const std::vector<int64_t>& layers) {
  if (have && have->generation == r.generation &&
      std::all_of(layers.begin(), layers.end(), [&](int64_t l) { return have->has(l); }))
    return have;
  return materialize_detail(r, layers);
}

HeldMap map_now(const Result& r, const std::shared_ptr<const LayerDetail>& have, int64_t layer, int64_t head, Quantity q) {
  HeldMap out;
  if (!computed(r, q)) return out;
  if (q == Quantity::Probs) {
    out.m = head_map(r.trace, layer, head, q);
  } else {
    out.detail = detail_now(r, have, {layer});
    out.m = head_map(out.detail->trace, layer, head, q);
  }
  if (out.m && out.m->size() == 0) out.m = nullptr;
  return out;
}

deberta::ForwardTrace full_trace(const Result& r) {
  deberta::ForwardTrace t = r.trace;
  t.level = deberta::TraceLevel::Full;
  for (size_t l = 0; l < t.layers.size(); ++l)
    t.layers[l] = deberta::materialize_layer(r.model->model, r.trace, static_cast<int64_t>(l));
  return t;
}

// ----------------------------------------------------------------------------------------------
// Worker

Worker::Worker() {
#ifndef __EMSCRIPTEN__
  thread_ = std::thread([this] { run(); });
#endif
}

void Worker::pump() {
#ifdef __EMSCRIPTEN__
  run_one(false);
#endif
}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Worker::submit(Request request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_ = std::move(request);
    busy_ = true;
  }
  wake_.notify_all();
}

void Worker::submit_detail(std::shared_ptr<const Result> result, std::vector<int64_t> layers) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_detail_ = DetailRequest{std::move(result), std::move(layers)};
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

std::shared_ptr<const LayerDetail> Worker::poll_detail() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_detail_;
}

void Worker::run() {
  while (run_one(true)) {
  }
}

bool Worker::run_one(bool wait) {
  {
    std::optional<Request> r;
    std::optional<DetailRequest> detail;
    std::shared_ptr<const Result> prev;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (wait) wake_.wait(lock, [this] { return stop_ || pending_ || pending_detail_; });
      if (stop_) return false;
      if (!pending_ && !pending_detail_) return true;
      if (pending_) {  // a new computation first: a detail of an older result is then stale
        r = std::move(pending_);
        pending_.reset();
        pending_detail_.reset();
        prev = latest_;
      } else {
        detail = std::move(pending_detail_);
        pending_detail_.reset();
        if (latest_ && detail->result->generation < latest_->generation) detail.reset();
      }
    }
    std::shared_ptr<const Result> out;
    std::string error;
    bool input_error = false;
    if (r) {
      try {
        TokenInput input;
        try {
          input = tokenize_fields(*r->model, r->fields);
        } catch (const std::exception& e) {
          input_error = true;
          throw;
        }
        out = compute_result(*r, std::move(input), prev);
      } catch (const std::exception& e) {
        error = e.what();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (out) {
        latest_ = out;  // shown now; its detail follows below
        if (error_generation_ < r->generation) error_.clear();
        if (!pending_ && !r->detail_layers.empty()) pending_detail_ = DetailRequest{out, r->detail_layers};
      } else {
        error_ = error;
        error_generation_ = r->generation;
        error_is_input_ = input_error;
      }
    } else if (detail) {
      std::shared_ptr<const LayerDetail> d;
      try {
        d = materialize_detail(*detail->result, detail->layers);
      } catch (const std::exception&) {
        // Layers out of range for this result (the selection is clamped on the next frame): nothing to show.
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (d) latest_detail_ = d;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pending_ && !pending_detail_) busy_ = false;
  }
  return true;
}

}  // namespace viewer
