// worker.cpp — tokenizing, computing and materializing results, and the compute thread.
#include "jobs/worker.h"

#include "i18n/i18n.h"

#include "deberta/inputs.h"

#include "deberta/ablation.h"
#include "deberta/file_limits.h"
#include "deberta/finite.h"  // parse_int_list (the CLI's parser, so the viewer reads ids the same way)
#include "deberta/model_io.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

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

// The tokenizer's load and `prepare`, run by a thread of its own (LoadJob's `tokenizer_thread`): the
// thread writes these, then sets `done`; the LoadJob reads them only once `done` is set.
struct LoadJob::TokenizerTask {
  std::unique_ptr<deberta::Tokenizer> tokenizer;
  std::string error;  // the tokenizer files failed to load: the loader's message
  std::atomic<bool> done{false};
};

LoadJob::LoadJob(const std::string& path, std::shared_ptr<std::atomic<double>> progress, bool tokenizer_thread)
    : path_(path),
      progress_(std::move(progress)),
      t0_(std::chrono::steady_clock::now()),
      // The weights are nearly all of a load's time; the tokenizer and position tables the rest.
      steps_(path,
             [p = progress_](uint64_t done, uint64_t total) {
               if (p && total) p->store(0.95 * static_cast<double>(done) / static_cast<double>(total));
             },
             [] {
               deberta::LoadOptions o;
               o.position_work = kPositionWork;  // the position table in pieces (issue 55, item 4)
               o.read_piece = kReadPiece;        // and a long tensor's bytes
               return o;
             }()),
      tokenizer_thread_(tokenizer_thread) {}

std::string LoadJob::stage() const {
  if (out_) return "done";
  if (task_) return kThreadStage;
  return steps_.finished() ? "tokenizer" : steps_.next_stage();
}

bool LoadJob::waiting() const { return task_ && !out_ && !task_->done.load(std::memory_order_acquire); }

bool LoadJob::step() {
  if (out_) return true;
  if (!steps_.finished()) {
    steps_.step();
    return false;
  }
  if (task_) {  // the tokenizer's thread: its results once it is done
    if (!task_->done.load(std::memory_order_acquire)) return false;
    pending_->tokenizer = std::move(task_->tokenizer);
    if (!task_->error.empty()) tokenizer_failed(task_->error);
    return finish();
  }
  if (!pending_) {
    pending_ = std::make_shared<LoadedModel>();
    pending_->model = steps_.take();
    if (!deberta::has_tokenizer(pending_->model.directory)) {
      // English here (the tests read it); the Model & text panel shows tr(tokenizer_note).
      pending_->tokenizer_note = N_("no tokenizer files in this folder (spm.model, vocab.json + merges.txt or tokenizer.json): "
                                    "type token ids instead; tokens show as #id");
      return finish();
    }
    if (tokenizer_thread_) {
      auto task = std::make_shared<TokenizerTask>();
      try {
        std::thread([task, dir = pending_->model.directory, vocab = pending_->model.config.vocab_size] {
          try {
            task->tokenizer = deberta::load_tokenizer_for_model(dir, vocab);
            task->tokenizer->prepare();
          } catch (const std::exception& e) {
            task->tokenizer.reset();
            task->error = e.what();
          }
          task->done.store(true, std::memory_order_release);
        }).detach();
        task_ = std::move(task);
        return false;
      } catch (const std::system_error&) {
        // No thread to be had: the two steps below, on this thread.
      }
    }
    // The tokenizer in two steps: its load here, then `prepare` (a SentencePiece model's second
    // parse) in the next, so neither holds the page's one thread for both (issue 55, item 4).
    try {
      pending_->tokenizer = deberta::load_tokenizer_for_model(pending_->model.directory, pending_->model.config.vocab_size);
      return false;
    } catch (const std::exception& e) {
      tokenizer_failed(e.what());
    }
  } else if (pending_->tokenizer) {
    try {
      pending_->tokenizer->prepare();
    } catch (const std::exception& e) {
      pending_->tokenizer.reset();
      tokenizer_failed(e.what());
    }
  }
  return finish();
}

bool LoadJob::finish() {
  pending_->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  if (progress_) progress_->store(1.0);
  out_ = std::move(pending_);
  return true;
}

void LoadJob::tokenizer_failed(const std::string& error) {
  pending_->tokenizer_error = error;
  // The Model & text panel shows this in the reader's language from tokenizer_error (panel_model.cpp).
  pending_->tokenizer_note = "tokenizer not loaded: " + pending_->tokenizer_error + " (type token ids instead)";
}

std::shared_ptr<const LoadedModel> LoadJob::take() {
  if (!out_) throw deberta::Error(path_ + ": the model is not loaded yet (LoadJob::take before the last step)");
  return out_;
}

std::shared_ptr<const LoadedModel> read_model(const std::string& path, const std::shared_ptr<std::atomic<double>>& progress) {
  LoadJob job(path, progress);
  while (!job.step()) {
  }
  return job.take();
}

TokenInput tokenize_fields(const LoadedModel& lm, const InputFields& f) {
  // The fields as a request for the core's one input resolver (deberta/inputs.h): the same rules and
  // messages as the CLI and the Python module. The viewer's own two messages are English here (the
  // headless mode prints them) and marked: the panels show tr(input_error).
  deberta::InputRequest q;
  if (f.ids_text.empty()) {
    if (f.text.empty()) throw deberta::Error(N_("type a text and press Enter"));
    q.text = f.text;
    if (!f.pair.empty()) q.pair = f.pair;
  } else {
    if (!f.pair.empty() && !lm.tokenizer)
      throw deberta::Error(N_("a sentence pair needs a tokenizer; give the pair as ids with token types instead"));
    q.ids = deberta::parse_int_list(f.ids_text, "ids");
    if (!f.token_types_text.empty()) q.token_types = deberta::parse_int_list(f.token_types_text, "token types");
  }
  // The [MASK] id field (shown for models without a tokenizer): −1 means "none given".
  if (!lm.tokenizer && f.mask_id != -1) q.mask_id = f.mask_id;
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

ComputeJob::ComputeJob(const Request& r, TokenInput input, std::shared_ptr<const Result> prev)
    : request_(r), prev_(std::move(prev)), out_(std::make_shared<Result>()) {
  const auto t0 = std::chrono::steady_clock::now();
  const deberta::Model& m = r.model->model;
  out_->generation = r.generation;
  out_->model = r.model;
  out_->input = std::move(input);
  out_->ablation = deberta::normalized(m, r.ablation);  // a switch equal to the model is no ablation
  deberta::resolve_attention(m.config, m.weights, out_->ablation);  // throws a readable error first

  // Re-run from the first layer the change affects when only the ablation changed: the layers
  // before it are copied (hidden states and probabilities), nothing else. The decoder stage runs
  // as `deberta predict` / `dump` run it (deberta::run_decoder: the EMD when the model decodes
  // with it and the ablation keeps it), so decoder_output() and the export agree with the CLI.
  reuse_ = prev_ && prev_->model == r.model && same_input(prev_->input, out_->input);
  if (reuse_) {
    out_->first_layer = deberta::first_affected_layer(m, prev_->ablation, out_->ablation);
    steps_.emplace(m, trace_prefix(prev_->trace, out_->first_layer), out_->ablation, out_->first_layer);
  } else {
    out_->first_layer = 0;
    steps_.emplace(m, out_->input.inputs, out_->ablation, deberta::TraceLevel::Probs, true);
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double ComputeJob::fraction() const {
  if (done_) return 1.0;
  return static_cast<double>(steps_->stages_done()) / static_cast<double>(steps_->stages() + 1);
}

std::string ComputeJob::stage() const {
  // English (the tests read it); the progress bars show tr(stage), the core's stages stay English.
  if (done_) return N_("done");
  return steps_->finished() ? std::string(N_("predictions")) : steps_->next_stage();
}

bool ComputeJob::step() {
  if (done_) return true;
  const auto t0 = std::chrono::steady_clock::now();
  if (!steps_->finished()) {
    steps_->step();
  } else {
    out_->trace = steps_->take();
    finish();
    done_ = true;
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (done_) out_->compute_ms = 1000.0 * seconds_;
  return done_;
}

std::shared_ptr<Result> ComputeJob::take() {
  if (!done_) throw deberta::Error("ComputeJob::take: the computation has not finished");
  return std::move(out_);
}

std::shared_ptr<Result> compute_result(const Request& r, TokenInput input, const std::shared_ptr<const Result>& prev) {
  ComputeJob job(r, std::move(input), prev);
  while (!job.step()) {
  }
  return job.take();
}

void ComputeJob::finish() {
  const deberta::Model& m = request_.model->model;
  Result* out = out_.get();
  const bool reuse = reuse_;
  const std::shared_ptr<const Result>& prev = prev_;
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
    // The notes are English here (the page's test bridge reads them) and marked: the panels show tr(note).
    out->predict_note = N_("no [MASK] in the input: put [MASK] in the text (or give --mask-id) to see predictions");
  } else if (!m.weights.lm_head) {
    out->predict_note = heads.empty() ? N_("this model is a bare encoder (no output head): the maps show everything it computes, "
                                           "there is nothing to predict")
                                      : N_("this model has no masked-LM head (lm_predictions.*): no predictions");
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
}

DetailJob::DetailJob(std::shared_ptr<const Result> r, std::vector<int64_t> layers)
    : result_(std::move(r)), layers_(std::move(layers)), out_(std::make_shared<LayerDetail>()) {
  const Result& r0 = *result_;
  out_->generation = r0.generation;
  out_->trace.inputs = r0.trace.inputs;
  out_->trace.context = r0.trace.context;
  out_->trace.ablation = r0.trace.ablation;
  out_->trace.level = deberta::TraceLevel::Full;
  out_->trace.layers.resize(r0.trace.layers.size());
}

bool DetailJob::step() {
  if (next_ < layers_.size()) {
    const int64_t l = layers_[next_++];
    deberta::LayerTrace full = deberta::materialize_layer(result_->model->model, result_->trace, l);  // throws on a layer out of range
    out_->trace.layers[static_cast<size_t>(l)] = std::move(full);
    if (std::find(out_->held.begin(), out_->held.end(), l) == out_->held.end()) out_->held.push_back(l);
  }
  if (next_ < layers_.size()) return false;
  std::sort(out_->held.begin(), out_->held.end());
  return true;
}

std::shared_ptr<LayerDetail> DetailJob::take() {
  if (next_ < layers_.size()) throw deberta::Error("DetailJob::take: layers not materialized yet");
  return std::move(out_);
}

std::shared_ptr<LayerDetail> materialize_detail(const Result& r, const std::vector<int64_t>& layers) {
  // A non-owning pointer: `r` outlives this call.
  DetailJob job(std::shared_ptr<const Result>(std::shared_ptr<const Result>(), &r), layers);
  while (!job.step()) {
  }
  return job.take();
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
  // One thread: stages of the active job until ~25 ms have passed, then back to the page, which
  // draws the frame (and the progress line) before the next pump.
  run_one(false, 0.025);
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

double Worker::progress(std::string* stage) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stage) *stage = stage_;
  return busy_ ? fraction_ : -1.0;
}

void Worker::run() {
  while (run_one(true, 0)) {
  }
}

void Worker::set_progress(double fraction, std::string stage) {
  std::lock_guard<std::mutex> lock(mutex_);
  fraction_ = fraction;
  stage_ = std::move(stage);
}

bool Worker::take_work(bool wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (wait && !job_ && !detail_job_) wake_.wait(lock, [this] { return stop_ || pending_ || pending_detail_; });
  if (stop_) return false;
  if (pending_) {  // a new computation first (newest wins): a running job or detail is then stale
    Request r = std::move(*pending_);
    pending_.reset();
    pending_detail_.reset();
    detail_job_.reset();
    const std::shared_ptr<const Result> prev = latest_;
    lock.unlock();
    job_.reset();
    std::string error;
    bool input_error = false;
    try {
      TokenInput input;
      try {
        input = tokenize_fields(*r.model, r.fields);
      } catch (const std::exception&) {
        input_error = true;
        throw;
      }
      job_.emplace(r, std::move(input), prev);
      job_generation_ = r.generation;
      job_detail_layers_ = r.detail_layers;
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    if (!job_) {
      error_ = error;
      error_generation_ = r.generation;
      error_is_input_ = input_error;
    }
  } else if (pending_detail_ && !job_ && !detail_job_) {
    DetailRequest d = std::move(*pending_detail_);
    pending_detail_.reset();
    if (!latest_ || d.result->generation >= latest_->generation) detail_job_.emplace(std::move(d.result), std::move(d.layers));
  }
  return true;
}

bool Worker::run_one(bool wait, double budget_seconds) {
  if (!take_work(wait)) return false;
  const auto t0 = std::chrono::steady_clock::now();
  auto in_budget = [&] {
    return budget_seconds <= 0 || std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < budget_seconds;
  };
  auto newer_request = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_.has_value() || stop_;
  };
  if (job_) {
    std::shared_ptr<const Result> out;
    std::string error;
    try {
      bool finished = false;
      do {
        set_progress(job_->fraction(), job_->stage());
        finished = job_->step();
      } while (!finished && in_budget() && !newer_request());
      if (finished) out = job_->take();
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (out || !error.empty()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (out) {
        latest_ = out;  // shown now; its detail follows
        if (error_generation_ < job_generation_) error_.clear();
        if (!pending_ && !job_detail_layers_.empty()) pending_detail_ = DetailRequest{out, job_detail_layers_};
      } else {
        error_ = error;
        error_generation_ = job_generation_;
        error_is_input_ = false;
      }
      job_.reset();
    }
  } else if (detail_job_) {
    std::shared_ptr<const LayerDetail> d;
    bool over = false;
    try {
      bool finished = false;
      do {
        set_progress(0.0, N_("terms of the shown layers"));
        finished = detail_job_->step();
      } while (!finished && in_budget() && !newer_request());
      if (finished) d = detail_job_->take(), over = true;
    } catch (const std::exception&) {
      over = true;  // layers out of range for this result (the selection is clamped on the next frame): nothing to show
    }
    if (over) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (d) latest_detail_ = d;
      detail_job_.reset();
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pending_ && !pending_detail_ && !job_ && !detail_job_) busy_ = false;
  return true;
}

ZooListing read_zoo(const std::string& dir) {
  namespace fs = std::filesystem;
  ZooListing out;
  out.dir = dir;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  nlohmann::json table;
  try {
    // A regular file of bounded size only (a FIFO here would block the reader forever).
    const std::string path = dir + "/table4.json";
    if (fs::is_regular_file(path, ec))
      table = nlohmann::json::parse(deberta::read_whole_file(path, 16ull << 20)).value("models", nlohmann::json::object());
  } catch (const std::exception&) {
    table = nlohmann::json::object();  // numbers are optional; the models still load
  }
  if (!table.is_object()) table = nlohmann::json::object();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!fs::is_regular_file(e.path() / "config.json", ec)) continue;
    ZooEntry z;
    z.name = e.path().filename().string();
    z.path = e.path().string();
    if (table.contains(z.name) && table[z.name].is_object()) {
      try {
        const auto& row = table[z.name];
        z.change = row.value("change", "");
        z.top1 = row.value("top1", -1.0), z.top5 = row.value("top5", -1.0), z.ce = row.value("cross_entropy", -1.0);
      } catch (const std::exception&) {
        z.change.clear(), z.top1 = z.top5 = z.ce = -1;  // a value of the wrong type: no numbers for this row
      }
    }
    out.models.push_back(std::move(z));
  }
  std::sort(out.models.begin(), out.models.end(), [](const ZooEntry& a, const ZooEntry& b) { return a.name < b.name; });
  return out;
}

}  // namespace viewer
