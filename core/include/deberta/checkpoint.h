// checkpoint.h — reader of PyTorch `torch.save` state dicts (pytorch_model.bin).
#pragma once

#include "deberta/model_io.h"
#include "deberta/tensor.h"

#include <string>

namespace deberta {

/// Reads a PyTorch state dict saved by `torch.save` (zip format of PyTorch ≥ 1.6, or the legacy
/// format). The pickle is a security boundary: only the opcodes a state dict uses and a whitelist
/// of globals are accepted. Floats widen to double. Errors name `path` and the problem.
TensorMap read_pytorch_checkpoint(const std::string& path, const ProgressFn& progress = {});

}  // namespace deberta
