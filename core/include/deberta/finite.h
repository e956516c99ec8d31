// finite.h — detecting NaN / Inf in what the model computed (issue 12).
//
// Weights that overflow (or NaN in a checkpoint) make every later value NaN, and a top-k of NaN
// probabilities is meaningless. The CLI prints these reports as warnings (the exit code stays 0:
// the file was read as written); the viewer can show the same report beside the predictions.
#pragma once

#include "deberta/analysis.h"
#include "deberta/model.h"

#include <string>
#include <vector>

namespace deberta {

/// "" when every log-probability of every prediction is finite; otherwise one line naming the
/// first position affected and how many values are not finite.
std::string non_finite_predictions(const std::vector<MaskPrediction>& predictions);

/// "" when the embedding output, every layer output and (if run) the decoder output are finite;
/// otherwise one line naming the first of them that holds NaN / Inf.
std::string non_finite_trace(const ForwardTrace& trace);

}  // namespace deberta
