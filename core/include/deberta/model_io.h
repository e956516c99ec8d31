// model_io.h — the I/O layer's entry points: reading a model directory or a weights file into the
// mathematics layer's `Model` (model.h). Defined in core/src/io/model_io.cpp, part of `deberta::io`
// (safetensors, PyTorch checkpoints through libzip, tokenizers); model.h itself needs none of it.
#pragma once

#include "deberta/model.h"
#include "deberta/tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace deberta {

/// Reads and parses `path` (a config.json, a regular file of at most 16 MB). Errors as
/// `parse_config` (config.h), plus unreadable / not a regular file / too large / not JSON.
ModelConfig load_config(const std::string& path);

/// Progress of a long load: bytes (or steps) done of total. May be empty.

using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

/// How a model is held once loaded.
struct LoadOptions {
  /// false (the default): every weight matrix stays in the precision the file stored it in
  /// (fp16, bf16, fp32, fp64; weights.h `StoredMatrix`), widened by the engines where they read it.
  /// true: every matrix widened to float64 at load (`widen_weights`), as before issue 60 — the same
  /// numbers bit for bit at 8 bytes a value; kept for the comparison (tests/test_stored_weights.cpp,
  /// `deberta bench --widen-weights`).
  bool widen_weights = false;
  /// 0 (the default): the position table (`ModelWorkspace::positions`) is built in the weight map's
  /// step. > 0: `ModelLoadSteps` builds it in steps of its own after the weight map, each at most
  /// this many multiply-adds (`ModelWorkspace::positions_step`; the same bits), so that a caller
  /// with one thread (the web page) never runs a long step (issue 55, item 4).
  int64_t position_work = 0;
  /// 0 (the default): `ModelLoadSteps` reads a safetensors tensor whole in one step. > 0: a floating
  /// tensor longer than this many bytes (rounded down to a multiple of 8, at least 8) is read in
  /// pieces of that length, a step each, its NaN / Inf count kept piece by piece (the same bits as
  /// one read); the web page's base-model embedding table, 0.2–0.4 GB, is otherwise one step of
  /// over a second (issue 55, item 4).
  uint64_t read_piece = 0;
};

/// Loads `path`: a model directory (config.json + model.safetensors or pytorch_model.bin,
/// safetensors preferred) or a weights file whose folder holds config.json.
/// Memory: the weight matrices' bytes as stored (a safetensors file's tensors are read straight
/// into them), plus float64 vectors and the position tables (docs/performance.md, "Memory").
/// Errors: no config.json, no weights file, and everything `load_config` / the readers /
/// `map_weights` raise — each naming the file.
Model load_model(const std::string& path, const ProgressFn& progress = {}, const LoadOptions& options = {});

class SafetensorsReader;

/// `load_model` one step at a time, so a caller with one thread (the web edition) can draw between
/// steps and show `fraction()`; `load_model` is this class run to completion (one code path).
/// Steps: for a safetensors file, one per tensor the model uses (`tensors_used`, map_weights.h: the
/// names, shapes and dtypes are checked before any value is read), then one step that maps the
/// weights and builds the position table (eq. 4's K_r / Q_r of the whole relative table,
/// `ModelWorkspace`); for a PyTorch checkpoint, one step: the whole file read, mapped and the
/// position table built. With `LoadOptions::position_work`, the position table is built after the
/// map in steps of its own of bounded work (`ModelWorkspace::positions_step`).
class ModelLoadSteps {
 public:
  /// Finds the weights and reads config.json and the safetensors header (no tensor values yet).
  /// Errors: as `load_model` (no such path, no config.json, no weights file, a bad config or
  /// header, tensors missing or of the wrong shape or dtype), each naming the file.
  explicit ModelLoadSteps(const std::string& path, const ProgressFn& progress = {}, const LoadOptions& options = {});
  ~ModelLoadSteps();
  ModelLoadSteps(ModelLoadSteps&&) noexcept;
  ModelLoadSteps& operator=(ModelLoadSteps&&) noexcept;

  /// Runs the next step (nothing once finished). A tensor whose bytes a `ByteSource` is still
  /// fetching (`BytesPending`, safetensors.h) leaves the step undone: the next call runs it again.
  /// Errors: a read error or a bad value, naming the file and the tensor; `map_weights`'s; in the
  /// last step, a position table whose width is not the projections' input.
  void step();
  bool finished() const { return finished_; }
  /// Progress in [0, 1] by values handled: each is read once (a step per tensor) and copied once
  /// (the weight map), so the tensor steps reach 0.5 and the last step 1 (a PyTorch checkpoint:
  /// 0 until its one reading step, then 1); with `position_work`, the weight map's step reaches
  /// 0.75 and the position table's last step 1. `progress`, when given, gets the same as done/total.
  double fraction() const;
  /// What `step()` does next, for a progress line: "tensor 3 of 75 (encoder.layer.0.…)" (with
  /// `read_piece`, a long tensor's pieces add ", part 2 of 9"), "weight map", "position table".
  std::string next_stage() const;
  /// The loaded model (moved out), its position tables built (eq. 4's K_r, Q_r of the whole
  /// table, in the last step). Errors: `Error` before `finished()`.
  Model take();

 private:
  void map_step();  // map_weights (or the PyTorch checkpoint read whole and mapped)
  uint64_t piece_bytes(const std::string& name) const;  // read_piece for this tensor, or 0: read it whole
  Model model_;
  ProgressFn progress_;
  LoadOptions options_;
  std::unique_ptr<SafetensorsReader> reader_;  ///< safetensors only
  TensorMap tensors_;                           ///< the index, values filled in step by step
  std::vector<std::string> names_;              ///< tensors_used, in order
  std::map<std::string, int64_t> non_finite_;   ///< each read tensor's NaN/Inf count (map_weights' `counted`)
  size_t next_ = 0;
  uint64_t piece_at_ = 0;  ///< with options_.read_piece: the next byte of tensor names_[next_] to read
  uint64_t values_done_ = 0, values_total_ = 0;
  bool mapped_ = false;  ///< the weight map's step has run (then the position table's, with position_work)
  bool finished_ = false;
};

/// Reads a weights file by extension (.safetensors; .bin/.pt/.pth via the PyTorch reader). Floats
/// widen to double; with `keep_stored`, a .bin's floating tensors keep the file's bytes
/// (`read_pytorch_checkpoint`; .safetensors is read widened either way: the model loader streams it
/// through `SafetensorsReader` instead).
/// Errors: an unknown extension, and everything `read_safetensors` / `read_pytorch_checkpoint` raise.
TensorMap read_weights_file(const std::string& path, const ProgressFn& progress = {}, bool keep_stored = false);

}  // namespace deberta
