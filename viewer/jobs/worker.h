// worker.h — the computations behind the viewer, and the thread that runs them.
//
// [SECTION] index
//   read_model          a model folder → weights + tokenizer
//   tokenize_fields     the typed input → tokens (errors name the field)
//   compute_result      one computation: a Probs forward, or a re-run from the first changed layer
//   materialize_detail  chosen layers of a Result at TraceLevel::Full (deberta::materialize_layer)
//   full_trace          every layer at Full: what the trace export writes (`deberta dump`'s tensors)
//   Worker              the compute thread: newest request wins, the UI never waits
//   read_zoo            the trained-ablation zoo folder and its table4.json (the Compare tab's list)
//
// GL- and ImGui-free: the headless benchmark (--bench-rerun) and viewer/tests/test_worker.cpp call
// the same functions the Worker runs.
#pragma once

#include "state/state.h"

#include "deberta/model_io.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace viewer {

/// What the worker computes: a model on an input under an ablation, then the full detail of
/// `detail_layers` of the result.
struct Request {
  uint64_t generation = 0;
  std::shared_ptr<const LoadedModel> model;
  InputFields fields;
  deberta::Ablation ablation;
  std::vector<int64_t> detail_layers;  ///< materialized right after the forward (ascending)
};

/// Reads a model folder: the weights (deberta::load_model, reporting done/total bytes into
/// `progress` when given) and its tokenizer when it has one (a tokenizer that fails to load leaves
/// a note, not an error). Errors: load_model's (deberta::Error naming the file and the problem).
std::shared_ptr<const LoadedModel> read_model(const std::string& path,
                                              const std::shared_ptr<std::atomic<double>>& progress = nullptr);

/// `read_model` one step at a time (deberta::ModelLoadSteps: one tensor a step, a long one in pieces
/// of `kReadPiece` bytes, then the weight map, then the position table in pieces of at most
/// `kPositionWork` multiply-adds; then the tokenizer in two steps, its load and
/// `deberta::Tokenizer::prepare`), so the web edition's one thread draws the
/// page, and the progress bar, between steps (issue 55, item 4: no step over 100 ms on a
/// base-sized model); `read_model` is this class run to completion. Errors: read_model's, from
/// the constructor (the folder, config.json, the weights' header) or from `step()`.
///
/// With `tokenizer_thread` (the page's threaded build) the tokenizer's load and `prepare` run on a
/// thread of their own instead: one libsentencepiece parse of a 128,100-piece spm.model is a single
/// call of 120–170 ms that no step can split. `step()` then starts the thread and afterwards only
/// looks whether it has finished (`waiting()` says so: nothing to do until then). A LoadJob destroyed
/// before that leaves the thread to finish alone; what it made is dropped with it. Where no thread
/// can be started (std::system_error) the two steps run as without the option.
class LoadJob {
 public:
  LoadJob(const std::string& path, std::shared_ptr<std::atomic<double>> progress, bool tokenizer_thread = false);
  /// Runs the next step; true once the model is loaded (then `take()` it).
  bool step();
  /// Whether the next `step()` can only wait: the tokenizer's thread is still running.
  bool waiting() const;
  /// The loaded model. Errors: deberta::Error before `step()` returned true.
  std::shared_ptr<const LoadedModel> take();
  /// What `step()` does next ("tensor 3 of 203 (…)", "weight map", "position table", "tokenizer",
  /// or `kThreadStage` while the tokenizer's own thread has been started).
  std::string stage() const;
  static constexpr const char* kThreadStage = "tokenizer (its own thread)";
  /// Multiply-adds of the position table a step (deberta::LoadOptions::position_work): 2^24, about
  /// 28 rows of a base model's 768 × 768 projection, ~15 ms in the page's WebAssembly.
  static constexpr int64_t kPositionWork = int64_t{1} << 24;
  /// Bytes of a long tensor read a step (deberta::LoadOptions::read_piece): 8 MiB, a base model's
  /// fp16 embedding table (0.2 GB) in 24 steps instead of one of over a second in the page.
  static constexpr uint64_t kReadPiece = uint64_t{8} << 20;

 private:
  std::string path_;
  std::shared_ptr<std::atomic<double>> progress_;
  std::chrono::steady_clock::time_point t0_;
  deberta::ModelLoadSteps steps_;
  std::shared_ptr<LoadedModel> pending_;  ///< the weights loaded, the tokenizer's steps under way
  std::shared_ptr<LoadedModel> out_;
  bool tokenizer_thread_ = false;
  struct TokenizerTask;                   // what the tokenizer's thread makes (shared with it)
  std::shared_ptr<TokenizerTask> task_;   ///< null unless the thread was started
  void tokenizer_failed(const std::string& error);  // the note a tokenizer that failed to load leaves
  bool finish();                                    // the load's last step: `out_` set
};

/// Tokenizes `fields` for `model`. Errors (`deberta::Error`): ids that are not integers or
/// outside the vocabulary, token types of the wrong count, more tokens than
/// max_position_embeddings, a pair without a tokenizer, no input at all.
TokenInput tokenize_fields(const LoadedModel& model, const InputFields& fields);

/// Runs `r.model` on `input` under `r.ablation` (normalized against the model). When `prev` ran
/// the same model on the same tokens, only the layers from the first one the ablation change
/// affects are re-run (deberta::rerun_from; the layers before it are copied from `prev`, hidden
/// states and probabilities only) and the baseline predictions are taken from `prev`; otherwise a
/// fresh forward at TraceLevel::Probs with the decoder stage. The masked-LM head runs once per
/// distinct hidden state (EMD output, last layer). Errors: `resolve_attention`'s and `forward`'s
/// (deberta::Error); a failing prediction is reported in `predict_note` instead.
std::shared_ptr<Result> compute_result(const Request& r, TokenInput input, const std::shared_ptr<const Result>& prev);

/// `compute_result` one stage at a time (deberta::ForwardSteps: the embeddings, each layer to
/// run, the decoder; then the heads and predictions), so the worker can stop between stages for
/// a newer request and the web edition can draw a frame between them. Errors: the constructor
/// throws what `compute_result` throws before the forward (resolve_attention, the memory
/// check); `step` throws the forward's errors.
class ComputeJob {
 public:
  ComputeJob(const Request& r, TokenInput input, std::shared_ptr<const Result> prev);
  /// Runs the next stage; true once the result is complete.
  bool step();
  /// Share of the stages run, in [0, 1], and what runs next ("layer 3 of 12", "predictions").
  double fraction() const;
  std::string stage() const;
  /// The finished result (moved out). Errors: deberta::Error before `step` returned true.
  std::shared_ptr<Result> take();

 private:
  void finish();  // heads and predictions on the finished trace
  Request request_;
  std::shared_ptr<const Result> prev_;
  std::shared_ptr<Result> out_;
  bool reuse_ = false, done_ = false;
  std::optional<deberta::ForwardSteps> steps_;
  double seconds_ = 0;  ///< time spent inside the stages (Result::compute_ms)
};

/// `materialize_detail` one layer per `step` (true once every layer is done).
class DetailJob {
 public:
  DetailJob(std::shared_ptr<const Result> r, std::vector<int64_t> layers);
  /// Errors: a layer out of range (deberta::Error).
  bool step();
  /// Errors: deberta::Error before `step` returned true.
  std::shared_ptr<LayerDetail> take();

 private:
  std::shared_ptr<const Result> result_;
  std::vector<int64_t> layers_;
  size_t next_ = 0;
  std::shared_ptr<LayerDetail> out_;
};

/// Layers `layers` (each in [0, L), ascending) of `r` at TraceLevel::Full, recomputed from the
/// kept layer inputs (deberta::materialize_layer: ~40 ms a layer at N = 512 on xsmall).
/// Errors: a layer out of range (deberta::Error).
std::shared_ptr<LayerDetail> materialize_detail(const Result& r, const std::vector<int64_t>& layers);

/// `have` when it belongs to `r` and holds every one of `layers`, else `materialize_detail(r,
/// layers)` computed now on the calling thread (exports, which must not wait for the worker).
std::shared_ptr<const LayerDetail> detail_now(const Result& r, const std::shared_ptr<const LayerDetail>& have,
                                              const std::vector<int64_t>& layers);

/// A map of a result and what keeps it alive (the result's trace, or a detail).
struct HeldMap {
  const deberta::Matrix* m = nullptr;  ///< `[N, N]`, query i on the rows; null: not computed in this run
  std::shared_ptr<const LayerDetail> detail;
};

/// The map of quantity `q` of (layer, head) in `r`: probabilities from `r.trace`, any other term
/// from `have` or from the layer materialized now (`detail_now`). Errors: a layer out of range.
HeldMap map_now(const Result& r, const std::shared_ptr<const LayerDetail>& have, int64_t layer, int64_t head, Quantity q);

/// Every encoder layer of `r` at TraceLevel::Full (the Probs trace with each layer materialized;
/// the EMD passes keep their outputs and probabilities, all the dump writes of them): the trace
/// `deberta dump` computes, for the trace export. Costs L layers of `materialize_detail`.
deberta::ForwardTrace full_trace(const Result& r);

/// The compute thread. `submit` replaces any request not yet started; `submit_detail` asks for
/// other layers of a finished result (newest wins, dropped when a newer result exists); `poll` and
/// `poll_detail` hand the UI the newest finished result (or error) and detail.
class Worker {
 public:
  Worker();
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void submit(Request request);
  void submit_detail(std::shared_ptr<const Result> result, std::vector<int64_t> layers);
  /// Returns a newer result than `have` if one finished; sets `error` when the newest request failed
  /// and `input_error` to whether it failed while tokenizing (an input error, not a compute error).
  std::shared_ptr<const Result> poll(uint64_t have, std::string* error, uint64_t* error_generation,
                                     bool* input_error = nullptr);
  /// The newest finished detail (null before the first); the caller checks its generation.
  std::shared_ptr<const LayerDetail> poll_detail() const;
  /// True while a request or a detail request is pending or running.
  bool busy() const { return busy_.load(); }
  /// While busy: the share of the running job done, in [0, 1], and in `stage` what runs now
  /// ("layer 3 of 12"); −1 when idle.
  double progress(std::string* stage = nullptr) const;
  /// The web edition's worker has no thread (one thread in the page): the frame loop calls
  /// `pump` once a frame, which runs stages of the newest job for ~25 ms and returns, so the
  /// page draws between them. On the desktop the thread does this and `pump` does nothing.
  void pump();

 private:
  struct DetailRequest {
    std::shared_ptr<const Result> result;
    std::vector<int64_t> layers;
  };
  void run();
  /// Starts the newest request (or detail) as the active job when there is one (waiting for work
  /// when `wait` and nothing is active). False: stop.
  bool take_work(bool wait);
  /// take_work, then stages of the active job until it finishes, a newer request arrives or
  /// `budget_seconds` pass (0: no budget). False: stop.
  bool run_one(bool wait, double budget_seconds);
  void set_progress(double fraction, std::string stage);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<Request> pending_;
  std::optional<DetailRequest> pending_detail_;
  std::shared_ptr<const Result> latest_;  ///< newest finished result
  std::shared_ptr<const LayerDetail> latest_detail_;
  std::string error_;
  uint64_t error_generation_ = 0;
  bool error_is_input_ = false;  ///< error_ came from tokenizing the fields
  std::atomic<bool> busy_{false};
  double fraction_ = 0;  ///< progress of the active job (under mutex_)
  std::string stage_;
  // The active job: touched only by the thread that runs jobs (the worker thread, or the page's).
  std::optional<ComputeJob> job_;
  uint64_t job_generation_ = 0;
  std::vector<int64_t> job_detail_layers_;
  std::optional<DetailJob> detail_job_;
  bool stop_ = false;
  std::thread thread_;  ///< last: started after every member above is constructed
};

/// The models of the zoo folder `dir` (each subfolder holding config.json), sorted by name, with
/// their row of table4.json ({"models": {name: {change, top1, top5, cross_entropy}}}) when the
/// folder has one. Reads the file system: run off the UI thread (app.cpp's poll_compare). Errors:
/// none raised — a missing folder gives no models, an unreadable or malformed table4.json (a regular
/// file of at most 16 MB only: a FIFO would block) gives the models without numbers.
ZooListing read_zoo(const std::string& dir);

}  // namespace viewer
