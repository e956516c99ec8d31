// dump.h — the golden-reference interface: a forward trace as named tensors.
//
// Names, shapes and dtypes are those of the golden cases (`notebooks_data/golden/README.md`), so
// other implementations can diff their tensors against ours.
#pragma once

#include "deberta/model.h"
#include "deberta/tensor.h"

namespace deberta {

/// Reads model inputs from a tensor map: `input_ids` (required), `attention_mask`,
/// `token_type_ids` (optional), each I64 `[1, N]` or `[N]`. `source` names the file in errors.
/// Errors: missing `input_ids`, wrong dtype, rank or length, batch size ≠ 1.
Inputs inputs_from_tensors(const TensorMap& tensors, const std::string& source);

/// Positions to decode, from `mlm.masked_positions` (I64 `[M]`) when present. Empty otherwise.
std::vector<int64_t> masked_positions_from_tensors(const TensorMap& tensors, const std::string& source);

/// Converts a trace to golden tensors: inputs (`[1, N]` I64), `embedding_output [N, H]`,
/// `rel_embeddings [2k, H]`, `rel_pos`/`c2p_row`/`p2c_row` `[N, N]` I64, per layer
/// `layer.{l}.c2c|c2p|p2c|p2p|attn_logits|attn_probs` `[h, N, N]` (those computed at the trace
/// level) and `layer.{l}.output [N, H]`, `layer.0.output_pre_conv`; with the EMD and masked positions `emd.*`; with
/// masked positions `mlm.masked_positions [M]`, `mlm.logits [N, V]` (only
/// when `full_logits`) and `mlm.masked_logits [M, V]`; the task heads the model has
/// (`head_tensors`, heads.h): `rtd.logits [N]`, `cls.pooled [P]`, `cls.logits [C]`,
/// `tokcls.logits [N, C]`. (`mlm.labels` holds original ids, which only the input file knows:
/// the CLI copies it through.)
TensorMap trace_to_tensors(const Model& model, const ForwardTrace& trace, const std::vector<int64_t>& masked_positions,
                           bool full_logits = false);

}  // namespace deberta
