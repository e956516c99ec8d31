// inputs.h — one resolver from what a user typed (a text and its pair, or ids and token types, a
// mask id, positions to predict) to the model's inputs, for every frontend: the CLI's --text /
// --ids / --mask-id / --positions, the viewer's input fields and the Python module's text
// functions all call `tokenize_input`, so a given input means the same thing, and is refused with
// the same message, everywhere.
#pragma once

#include "deberta/model.h"
#include "deberta/tokenizer.h"

#include <optional>
#include <string>
#include <vector>

namespace deberta {

/// The input as given, before the tokenizer and the model's limits.
struct InputRequest {
  std::string text;                  ///< tokenized when non-empty (the literal [MASK] becomes the mask token)
  std::optional<std::string> pair;   ///< second segment of a sentence pair (with `text`)
  std::vector<int64_t> ids;          ///< the input as token ids (give a text or ids, not both)
  std::vector<int64_t> token_types;  ///< with `ids` only, one per id; empty: all 0
  std::optional<int64_t> mask_id;    ///< the mask token (any id of the vocabulary); none: the tokenizer's [MASK]
  std::vector<int64_t> positions;    ///< positions to predict; empty: every mask token
};

/// The model's inputs for a request, with a display name per token and the positions to predict.
struct TokenizedInput {
  Inputs inputs;                          ///< ids `[N]`, token types `[N]` (zeroed for a model without a type table)
  std::vector<std::string> names;         ///< the tokenizer's display form, else "#id"
  std::vector<int64_t> mask_positions;    ///< `positions`, else every [MASK] (empty without a mask id)
};

/// Resolves `request` for `model` with `tokenizer` (null: the model has none; `tokenizer_error`
/// says why when it failed to load). Source: the rules of `deberta predict` (README) and HF's
/// tokenizer for pairs ([CLS] a [SEP] b [SEP], types 0…0 1…1).
/// Errors, all `InvalidInput` of one line: neither text nor ids, or both (issue 44, class 5: one was
/// silently dropped); a mask id outside [0, vocab_size); text or a pair without a tokenizer
/// (naming `tokenizer_error` when given); token types of another length than the ids; an id
/// outside [0, vocab_size); a token type outside [0, max(type_vocab_size, 1)); more tokens than
/// max_position_embeddings where the embeddings read absolute positions (`check_input_length`; the
/// EMD's rule is checked by the forward that runs it); a position outside [0, N) or given twice.
TokenizedInput tokenize_input(const Model& model, const Tokenizer* tokenizer, const InputRequest& request,
                              const std::string& tokenizer_error = "");

/// How many of an input's tokens the model's vocabulary does not know (issue 40, item 3).
struct UnknownTokens {
  int64_t unknown = 0;  ///< [UNK] tokens
  int64_t bytes = 0;    ///< byte-fallback pieces "<0x00>" … "<0xFF>" (a character spelled in UTF-8 bytes)
  int64_t total = 0;    ///< tokens counted: all but [CLS], [SEP], [PAD] and [MASK]
  /// (unknown + bytes) / total, 0 for an input with no counted token.
  double share() const { return total ? static_cast<double>(unknown + bytes) / static_cast<double>(total) : 0.0; }
};

/// Counts the [UNK] and byte pieces of `ids` `[N]` under `tokenizer`. Errors: none.
UnknownTokens count_unknown_tokens(const Tokenizer& tokenizer, const std::vector<int64_t>& ids);

/// The share above which a frontend warns that the model does not know the text: 10 %.
constexpr double kUnknownTokenWarnShare = 0.10;

/// The note the CLI (stderr), the viewer and the page show beside the input when more than
/// kUnknownTokenWarnShare of its tokens are [UNK] or byte pieces, else "": the share, and advice that
/// fits the model in use. Mostly [UNK] (a vocabulary without byte fallback, such as the English
/// bundled model's): open the multilingual bundled model, or a model of the text's language. Mostly
/// byte pieces (a vocabulary with byte fallback: the multilingual model itself): the characters are
/// spelled as UTF-8 bytes, which the model knows only from bytes. One line, English (the viewer
/// translates its own copy).
std::string unknown_tokens_note(const UnknownTokens& counts);

}  // namespace deberta
