// cli_common.h — options shared by the `deberta` subcommands (model, input, ablation switches).
#pragma once

#include "deberta/ablation.h"
#include "deberta/analysis.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/tokenizer.h"

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace deberta::cli {

/// A CLI11 check for a floating option: a finite number in [lo, hi]. CLI::Range and
/// CLI::NonNegativeNumber let "nan" through (every comparison with NaN is false), and a NaN
/// tolerance or rate silently turns every test into "pass" or "never".
CLI::Validator finite_in(double lo, double hi);

/// A text input of the CLI (eval --data, eval-mlm --text-file) holds at most this many bytes.
constexpr uint64_t kMaxTextFileBytes = 256ull << 20;
/// A line longer than this many bytes per token of max_position_embeddings is too long for the
/// model without tokenizing it (no piece of a real vocabulary covers more; runs of spaces, which
/// SentencePiece collapses, are the one way to exceed it, and such a line is skipped too).
constexpr uint64_t kMaxBytesPerToken = 64;

/// One non-blank line of a text file and its 1-based number.
struct NumberedLine {
  int64_t number = 0;
  std::string text;
};

/// The non-blank lines of `path` ('\r' before '\n' dropped). Errors (naming the path): not a
/// regular file (a FIFO, a device), more than kMaxTextFileBytes, unreadable.
std::vector<NumberedLine> read_text_lines(const std::string& path);

/// tok.encode(text[, pair]) whose errors (invalid UTF-8, …) are prefixed with `where` (file:line).
Encoding encode_at(const Tokenizer& tok, const std::string& text, const std::string* pair, const std::string& where);

/// The ablation flags on a command line; `deberta::parse_ablation` (ablation.h) reads them, the
/// same parser the viewer and the Python module use.
struct AblationArgs {
  AblationSwitches switches;

  /// Registers --terms, --p2c-index, --scale-factor, --rescale, --head-mask,
  /// --window K (alias --max-relative-positions), --no-emd, --relative-positions on `app`.
  void add_to(CLI::App* app);
  /// Parses the flags into an `Ablation`. Errors: malformed values (`parse_ablation`).
  Ablation to_ablation() const { return parse_ablation(switches); }
};

/// Where the tokens come from: --model, --text, --ids (and which positions are masked).
struct InputArgs {
  std::string model;  ///< model directory or weights file; empty = the bundled default
  std::string text;
  std::string ids;    ///< "1,5,7"
  std::optional<int64_t> mask_id;  ///< --mask-id: id of [MASK] (default: the tokenizer's)
  std::string positions;  ///< --positions: explicit masked positions
  void add_to(CLI::App* app, bool with_text, bool with_masks = false);
};

/// Tokens of the resolved input, with display names.
struct ResolvedInput {
  Inputs inputs;
  std::vector<std::string> token_names;  ///< display strings (or ids as text)
  std::vector<int64_t> mask_positions;   ///< positions of [MASK] or --positions
  std::unique_ptr<Tokenizer> tokenizer;  ///< null when the model folder has none
};

/// Turns --text / --ids into inputs for `model`; finds the masked positions.
/// Errors: neither given, --text without a tokenizer, malformed ids.
ResolvedInput resolve_input(const InputArgs& args, const Model& model);
/// Text of one token for tables: the tokenizer's display form, else "#id".
std::string token_label(const ResolvedInput& in, int64_t id);

/// One position's top-k as JSON: [{"id", "token", "probability"}, …] (predict, compare).
nlohmann::json top_tokens_json(const MaskPrediction& prediction, const ResolvedInput& in);

/// `j` as indented JSON text; a string that is not valid UTF-8 (a tokenizer piece holding half a
/// character) is written with U+FFFD instead of failing the whole output (issue 28, class 17).
std::string json_text(const nlohmann::json& j, int indent = 2);
/// The model directory to use: `arg`, or the bundled default model.
std::string model_path_or_default(const std::string& arg);
/// Loads a model, printing a progress line on stderr when it is a terminal.
Model load_model_with_progress(const std::string& path, const LoadOptions& options = {});
using deberta::parse_int_list;  // ablation.h

}  // namespace deberta::cli
