#include "deberta/model_io.h"
#include "deberta/map_weights.h"

#include "deberta/checkpoint.h"
#include "deberta/file_limits.h"
#include "deberta/model.h"
#include "deberta/safetensors.h"

#include <algorithm>
#include <filesystem>

namespace deberta {

namespace fs = std::filesystem;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

TensorMap read_weights_file(const std::string& path, const ProgressFn& progress, bool keep_stored) {
  if (ends_with(path, ".safetensors")) return read_safetensors(path);
  if (ends_with(path, ".bin") || ends_with(path, ".pt") || ends_with(path, ".pth"))
    return read_pytorch_checkpoint(path, progress, keep_stored);
  throw Error(path + ": unknown weights format (expected .safetensors or a PyTorch .bin)");
}

ModelLoadSteps::ModelLoadSteps(const std::string& path, const ProgressFn& progress, const LoadOptions& options)
    : progress_(progress), options_(options) {
  std::error_code ec;
  // path_exists: a symlink loop or an unreadable folder is named as such, not "no such file" (issue 44, class 8).
  if (path.empty()) throw FileNotFound("empty model path: give a model folder or weights file");
  if (!path_exists(path)) throw FileNotFound(path + ": no such file or directory");
  Model& model = model_;
  if (fs::is_directory(path, ec)) {
    model.directory = path;
    for (const char* name : {"model.safetensors", "pytorch_model.bin"}) {
      const fs::path candidate = fs::path(path) / name;
      if (path_exists(candidate.string())) {
        model.weights_path = candidate.string();
        break;
      }
    }
    if (model.weights_path.empty())
      throw FileNotFound(path + ": model directory has no weights (expected model.safetensors or pytorch_model.bin)");
  } else {
    model.weights_path = path;
    model.directory = fs::path(path).parent_path().string();
    if (model.directory.empty()) model.directory = ".";
  }
  const std::string config_path = (fs::path(model.directory) / "config.json").string();
  if (!path_exists(config_path)) throw FileNotFound(model.directory + ": model directory has no config.json");
  model.config = load_config(config_path);
  if (ends_with(model.weights_path, ".safetensors")) {
    // Only the tensors the model uses are read (issue 28, class 7), one per step.
    reader_ = std::make_unique<SafetensorsReader>(model.weights_path);
    tensors_ = reader_->index();
    names_ = tensors_used(model.config, tensors_, model.weights_path);
    for (const std::string& name : names_) values_total_ += static_cast<uint64_t>(tensors_.at(name).numel());
  }
}

ModelLoadSteps::~ModelLoadSteps() = default;
ModelLoadSteps::ModelLoadSteps(ModelLoadSteps&&) noexcept = default;
ModelLoadSteps& ModelLoadSteps::operator=(ModelLoadSteps&&) noexcept = default;

void ModelLoadSteps::step() {
  if (finished_) return;
  Model& model = model_;
  if (reader_ && next_ < names_.size()) {
    const std::string& name = names_[next_];
    Tensor& t = tensors_.at(name);
    const uint64_t piece = piece_bytes(name), size = reader_->byte_size(name);
    const uint64_t from = piece ? piece_at_ : 0, to = piece ? std::min(size, from + piece) : size;
    try {
      if (piece)
        reader_->load_stored_range(name, &t, from, to);
      else
        reader_->load(name, &t, /*keep_stored=*/true);  // the file's precision (issue 60)
    } catch (const BytesPending&) {
      return;  // the web page's byte source is fetching these bytes: the same step runs again
    }
    // The NaN / Inf count here, a tensor (or a piece) a step, not all in the map's step.
    if (!piece) {
      non_finite_[name] = non_finite_count(t);
      values_done_ += static_cast<uint64_t>(t.numel());
    } else {
      const int64_t width = dtype_size(t.dtype), values = static_cast<int64_t>(to - from) / width;
      non_finite_[name] = (from == 0 ? 0 : non_finite_[name]) + non_finite_count(t.dtype, t.stored.data() + from, values);
      values_done_ += static_cast<uint64_t>(values);
      piece_at_ = to < size ? to : 0;
    }
    if (piece_at_ == 0) ++next_;
    if (progress_) progress_(values_done_, 2 * values_total_);
    return;
  }
  if (!mapped_) {
    map_step();
    mapped_ = true;
    if (options_.position_work > 0) {  // the position table in steps of its own, from the next one
      if (progress_ && values_total_) progress_(3 * values_total_, 4 * values_total_);
      return;
    }
  }
  try {  // eq. 4's K_r / Q_r of the whole table, now (model.h)
    if (options_.position_work > 0) {
      if (!model.workspace.positions_step(model, options_.position_work)) return;
    } else {
      (void)model.workspace.positions(model);
    }
  } catch (const std::exception& e) {
    throw Error(model.weights_path + ": " + e.what());
  }
  finished_ = true;
  if (progress_ && values_total_) progress_(2 * values_total_, 2 * values_total_);
}

void ModelLoadSteps::map_step() {
  Model& model = model_;
  if (reader_) {
    SafetensorsReader& reader = *reader_;
    model.weights = map_weights(model.config, std::move(tensors_), model.weights_path,
                                [&reader](const std::string& name, Tensor* t) { reader.load(name, t, true); }, &non_finite_);
    reader_.reset();
  } else {
    // A .bin's tensors in the file's precision too: no float64 copy of the whole checkpoint (issue 60).
    model.weights = map_weights(model.config, read_weights_file(model.weights_path, progress_, /*keep_stored=*/true),
                                model.weights_path);
  }
  if (options_.widen_weights) widen_weights(&model.weights);
}

double ModelLoadSteps::fraction() const {
  if (finished_) return 1.0;
  // Each value is handled twice: read in its stored precision (one step per tensor), then moved
  // into its matrix (vectors widened) by the weight map (the last step).
  if (mapped_) return 0.75;  // the position table's steps (position_work)
  return values_total_ ? static_cast<double>(values_done_) / static_cast<double>(2 * values_total_) : 0.0;
}

uint64_t ModelLoadSteps::piece_bytes(const std::string& name) const {
  if (options_.read_piece == 0 || dtype_is_integer(tensors_.at(name).dtype)) return 0;
  const uint64_t piece = std::max<uint64_t>(8, options_.read_piece / 8 * 8);  // whole values of any dtype
  return reader_->byte_size(name) > piece ? piece : 0;
}

std::string ModelLoadSteps::next_stage() const {
  if (finished_) return "done";
  if (reader_ && next_ < names_.size()) {
    const std::string& name = names_[next_];
    std::string stage = "tensor " + std::to_string(next_ + 1) + " of " + std::to_string(names_.size()) + " (" + name + ")";
    if (const uint64_t piece = piece_bytes(name)) {
      const uint64_t size = reader_->byte_size(name);
      stage += ", part " + std::to_string(piece_at_ / piece + 1) + " of " + std::to_string((size + piece - 1) / piece);
    }
    return stage;
  }
  if (mapped_) return "position table";
  return reader_ ? "weight map" : "reading " + fs::path(model_.weights_path).filename().string();
}

Model ModelLoadSteps::take() {
  if (!finished_) throw Error(model_.weights_path + ": the model is not loaded yet (ModelLoadSteps::take before finished)");
  return std::move(model_);  // the workspace moves with the weights (model.h)
}

Model load_model(const std::string& path, const ProgressFn& progress, const LoadOptions& options) {
  ModelLoadSteps steps(path, progress, options);
  while (!steps.finished()) steps.step();
  return steps.take();
}

}  // namespace deberta
