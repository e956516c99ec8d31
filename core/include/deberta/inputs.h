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
  std::vector<int64_t> ids;          ///< the input when `text` is empty
  std::vector<int64_t> token_types;  ///< with `ids` only, one per id; empty: all 0
  int64_t mask_id = -1;              ///< the mask token when there is no tokenizer; −1: the tokenizer's [MASK]
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
/// Errors, all `InvalidInput` of one line: neither text nor ids; text or a pair without a tokenizer
/// (naming `tokenizer_error` when given); token types of another length than the ids; an id
/// outside [0, vocab_size); a token type outside [0, max(type_vocab_size, 1)); more tokens than
/// max_position_embeddings; a position outside [0, N).
TokenizedInput tokenize_input(const Model& model, const Tokenizer* tokenizer, const InputRequest& request,
                              const std::string& tokenizer_error = "");

}  // namespace deberta
