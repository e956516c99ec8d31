// head_report.h — printing what a task head (RTD, sequence / token classification) says, for
// `classify`, `rtd`, `predict --head` and `ablate --head`. The numbers come from deberta/heads.h.
#pragma once

#include "cli_common.h"

#include "deberta/heads.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace deberta::cli {

/// --text / --ids as `resolve_input`, plus a second segment: with `pair` non-empty the tokenizer
/// encodes `[CLS] text [SEP] pair [SEP]`; `token_types` ("0,0,1,1") sets the types of --ids input.
/// Token types are forced to 0 when the model has no token-type table (type_vocab_size = 0), as
/// its embeddings ignore them. Errors: those of `resolve_input`; --pair without a tokenizer or
/// without --text; --token-types of the wrong length.
ResolvedInput resolve_pair_input(const InputArgs& args, const std::string* pair, const std::string& token_types,
                                 const Model& model);

/// JSON of one head output: classifiers {"labels": [{label, logit, probability}], "prediction"}
/// (token classification per token), RTD {"tokens": [{position, token, logit, p_replaced, replaced}]}.
nlohmann::json head_output_json(const Model& model, const HeadOutput& out, const ResolvedInput& in);

/// The same as a table on stdout, under `title`.
void print_head_output(const Model& model, const HeadOutput& out, const ResolvedInput& in, const std::string& title);

/// Baseline (and, when `ablation` is not the baseline, ablated output and their difference) of
/// head `kind`, printed as text or JSON. Shared by classify, rtd and predict --head.
void report_head(const Model& model, const ResolvedInput& in, HeadKind kind, const Ablation& ablation, bool json);

/// The ablation table of a task head (`run_head_ablations`), as text or JSON.
void report_head_ablations(const Model& model, const ResolvedInput& in, HeadKind kind, bool heads, bool json);

}  // namespace deberta::cli
