// worker.h — the computations behind the viewer, and the thread that runs them.
//
// [SECTION] index
//   read_model          a model folder → weights + tokenizer
//   tokenize_fields     the typed input → tokens (errors name the field)
//   compute_result      one computation: a Probs forward, or a re-run from the first changed layer
//   materialize_detail  chosen layers of a Result at TraceLevel::Full (deberta::materialize_layer)
//   full_trace          every layer at Full: what the trace export writes (`deberta dump`'s tensors)
//   Worker              the compute thread: newest request wins, the UI never waits
//
// GL- and ImGui-free: the headless benchmark (--bench-rerun) and viewer/tests/test_worker.cpp call
// the same functions the Worker runs.
#pragma once

#include "state.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
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
  /// The web edition's worker has no thread (one thread in the page): the frame loop calls
  /// `pump` once a frame, which runs the newest pending request (or detail) to completion.
  /// On the desktop the thread does this and `pump` does nothing.
  void pump();

 private:
  struct DetailRequest {
    std::shared_ptr<const Result> result;
    std::vector<int64_t> layers;
  };
  void run();
  /// Takes the newest request (waiting for one when `wait`) and runs it. False: stop.
  bool run_one(bool wait);

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
  bool stop_ = false;
  std::thread thread_;  ///< last: started after every member above is constructed
};

}  // namespace viewer
