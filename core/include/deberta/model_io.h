// model_io.h — the I/O layer's entry points: reading a model directory or a weights file into the
// mathematics layer's `Model` (model.h). Defined in core/src/io/model_io.cpp, part of `deberta::io`
// (safetensors, PyTorch checkpoints through libzip, tokenizers); model.h itself needs none of it.
#pragma once

#include "deberta/model.h"
#include "deberta/tensor.h"

#include <cstdint>
#include <functional>
#include <string>

namespace deberta {

/// Reads and parses `path` (a config.json, a regular file of at most 16 MB). Errors as
/// `parse_config` (config.h), plus unreadable / not a regular file / too large / not JSON.
ModelConfig load_config(const std::string& path);

/// Progress of a long load: bytes (or steps) done of total. May be empty.

using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

/// Loads `path`: a model directory (config.json + model.safetensors or pytorch_model.bin,
/// safetensors preferred) or a weights file whose folder holds config.json.
/// Errors: no config.json, no weights file, and everything `load_config` / the readers /
/// `map_weights` raise — each naming the file.
Model load_model(const std::string& path, const ProgressFn& progress = {});

/// Reads a weights file by extension (.safetensors; .bin/.pt/.pth via the PyTorch reader).
/// Errors: an unknown extension, and everything `read_safetensors` / `read_pytorch_checkpoint` raise.
TensorMap read_weights_file(const std::string& path, const ProgressFn& progress = {});

}  // namespace deberta
