// bench_rerun.h — `deberta-viewer --bench-rerun N`: how long the viewer's worker takes to show an
// ablation toggle at N tokens (issue 17). No window: it calls the functions the Worker runs
// (compute_result, then materialize_detail of the selected layer) and prints one table.
#pragma once

#include <string>

namespace viewer {

/// What --bench-rerun runs.
struct BenchRerunOptions {
  /// A model directory, or "preset:tiny" / "preset:xsmall" / "preset:base" (deberta::make_preset_model:
  /// random weights with a real model's shapes, no tokenizer).
  std::string model;
  int tokens = 512;       ///< N
  std::string text, ids;  ///< the input's tokens, repeated to N (default: synthetic ids)
  int mask_id = -1;       ///< [MASK] id without a tokenizer (default: 3 when the vocabulary has it)
  int layer = 0;          ///< the selected layer, materialized after each run as the worker does
  int repeats = 3;        ///< toggles of each kind, each way
};

/// Runs the benchmark and prints, for ~1 % and 15 % of the N positions masked: the first full
/// computation, then the median and minimum time of an ablation toggle (−c2p on and off) and of a
/// head-mask toggle in the last layer (each = compute_result + materialize_detail), the thread count
/// and the peak RSS. Returns 0, or 1 after printing the error (a model that does not load, N
/// beyond max_position_embeddings, a bad --ids).
int run_bench_rerun(const BenchRerunOptions& options);

}  // namespace viewer
