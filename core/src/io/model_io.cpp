#include "deberta/model_io.h"

#include "deberta/checkpoint.h"
#include "deberta/model.h"
#include "deberta/safetensors.h"

#include <filesystem>

namespace deberta {

namespace fs = std::filesystem;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

TensorMap read_weights_file(const std::string& path, const ProgressFn& progress) {
  if (ends_with(path, ".safetensors")) return read_safetensors(path);
  if (ends_with(path, ".bin") || ends_with(path, ".pt") || ends_with(path, ".pth"))
    return read_pytorch_checkpoint(path, progress);
  throw Error(path + ": unknown weights format (expected .safetensors or a PyTorch .bin)");
}

Model load_model(const std::string& path, const ProgressFn& progress) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw FileNotFound(path + ": no such file or directory");
  Model model;
  if (fs::is_directory(path, ec)) {
    model.directory = path;
    for (const char* name : {"model.safetensors", "pytorch_model.bin"}) {
      const fs::path candidate = fs::path(path) / name;
      if (fs::exists(candidate, ec)) {
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
  if (!fs::exists(config_path, ec)) throw FileNotFound(model.directory + ": model directory has no config.json");
  model.config = load_config(config_path);
  if (ends_with(model.weights_path, ".safetensors")) {
    // Only the tensors the model uses are read (issue 28, class 7).
    SafetensorsReader reader(model.weights_path);
    TensorMap index = reader.index();
    model.weights = map_weights(model.config, std::move(index), model.weights_path,
                                [&reader](const std::string& name, Tensor* t) { reader.load(name, t); });
  } else {
    model.weights = map_weights(model.config, read_weights_file(model.weights_path, progress), model.weights_path);
  }
  try {
    (void)model.workspace.positions(model);  // eq. 4's K_r / Q_r of the whole table, now (model.h)
  } catch (const std::exception& e) {
    throw Error(model.weights_path + ": " + e.what());
  }
  return model;
}

}  // namespace deberta
