#include "deberta/checkpoint.h"

namespace deberta {

TensorMap read_pytorch_checkpoint(const std::string& path, const ProgressFn&) {
  throw Error(path + ": PyTorch checkpoints (.bin) are not supported yet; convert to model.safetensors");
}

}  // namespace deberta
