// map_weights.h — a checkpoint's tensors, by their Hugging Face state-dict names, onto the typed
// weights of weights.h (the model layer: which tensors a model reads depends on its config and
// task heads, heads.h). Implemented in core/src/model/weights.cpp.
#pragma once

#include "deberta/config.h"
#include "deberta/tensor.h"
#include "deberta/weights.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace deberta {

/// Maps a checkpoint's tensors onto typed weights. Names may carry the task-model prefix
/// `deberta.`. Tensors are moved out of `tensors`. `source` names the file in errors.
/// Task heads are read as `task_head_plan` (heads.h) decides from `architectures` and the names
/// present; a head named by `architectures` whose tensors are missing is an error.
/// Errors: required tensors missing (all listed by name), a tensor with the wrong shape (name,
/// expected and found shape), an integer tensor where floats are needed; a pooler whose size is
/// not hidden_size.
///
/// `load`, when given, fills in the values of a tensor of `tensors` that holds only its dtype and
/// shape (`SafetensorsReader::load`): only the tensors the model uses are then read from the file
/// (issue 28, class 7), one at a time.
///
/// `counted`, when given: the NaN/Inf counts (`non_finite_count`) of tensors, by key, that the
/// caller counted already as it read them (`ModelLoadSteps`, a tensor a step): the map takes those
/// counts instead of reading the values again (issue 55, item 4: a base model's map was one step of
/// most of a second in the page).
using TensorLoader = std::function<void(const std::string& name, Tensor* tensor)>;
using NonFiniteCounts = std::map<std::string, int64_t>;
ModelWeights map_weights(const ModelConfig& config, TensorMap&& tensors, const std::string& source,
                         const TensorLoader& load = {}, const NonFiniteCounts* counted = nullptr);

/// The keys of `index` (a file's tensors, dtype and shape; values not needed) that `map_weights`
/// reads for `config`, in the order it reads them: a loader can read them one at a time, in
/// steps (`ModelLoadSteps`, model_io.h), and skip the rest (issue 28, class 7).
/// Errors: `map_weights`'s that need no values — missing tensors (listed), wrong shapes, integer
/// dtypes, names given twice, too few encoder layers, a pooler not of hidden_size.
std::vector<std::string> tensors_used(const ModelConfig& config, const TensorMap& index, const std::string& source);

}  // namespace deberta
