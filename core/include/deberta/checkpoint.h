// checkpoint.h — reader of PyTorch `torch.save` state dicts (pytorch_model.bin).
#pragma once

#include "deberta/model_io.h"
#include "deberta/tensor.h"

#include <string>

namespace deberta {

/// Reads a PyTorch state dict saved by `torch.save` (zip format of PyTorch ≥ 1.6, or the legacy
/// format). The pickle is a security boundary: only the opcodes a state dict uses and a whitelist
/// of globals are accepted. Floats widen to double (`Tensor::f`) — or, with `keep_stored` (the
/// model loader, issue 60), keep the file's bytes in `Tensor::stored` (fp16, bf16, fp32, fp64,
/// little-endian, row-major even for a strided view), so a model's weights are never held in float64
/// whole; integer tensors widen to int64 either way. Beside the tensors returned, the reader holds
/// one storage's raw bytes at a time. Errors name `path` and the problem.
TensorMap read_pytorch_checkpoint(const std::string& path, const ProgressFn& progress = {}, bool keep_stored = false);

}  // namespace deberta
