// inputs.cpp — the one input resolver of every frontend (see inputs.h).
#include "deberta/inputs.h"

#include "deberta/tensor.h"

#include <algorithm>
#include <cmath>

namespace deberta {

TokenizedInput tokenize_input(const Model& model, const Tokenizer* tokenizer, const InputRequest& request,
                              const std::string& tokenizer_error) {
  const ModelConfig& c = model.config;
  const std::string no_tokenizer =
      tokenizer_error.empty() ? model.directory + ": no tokenizer files (spm.model, vocab.json + merges.txt or tokenizer.json)"
                              : "tokenizer not loaded: " + tokenizer_error;
  TokenizedInput r;
  if (!request.text.empty() && !request.ids.empty())
    throw InvalidInput("give the input as a text or as token ids, not both");
  if (request.mask_id && (*request.mask_id < 0 || *request.mask_id >= c.vocab_size))
    throw InvalidInput("mask id " + std::to_string(*request.mask_id) + " is outside the vocabulary [0, " +
                       std::to_string(c.vocab_size) + ")");
  if (!request.text.empty()) {
    if (!tokenizer) throw InvalidInput(no_tokenizer + "; give the input as token ids");
    const Encoding enc = request.pair ? tokenizer->encode(request.text, &*request.pair) : tokenizer->encode(request.text);
    r.inputs.input_ids = enc.ids;
    r.inputs.token_type_ids = enc.token_type_ids;
    r.names = enc.tokens;
  } else if (!request.ids.empty()) {
    if (request.pair) throw InvalidInput("a sentence pair is text: give it with a text, or as ids with token types");
    r.inputs.input_ids = request.ids;
    if (!request.token_types.empty()) {
      if (request.token_types.size() != request.ids.size())
        throw InvalidInput("token types: " + std::to_string(request.token_types.size()) + " values for " +
                           std::to_string(request.ids.size()) + " ids");
      r.inputs.token_type_ids = request.token_types;
    }
    for (int64_t id : request.ids) r.names.push_back(tokenizer ? tokenizer->display(id) : "#" + std::to_string(id));
  } else {
    throw InvalidInput("no input: give a text, or token ids such as 1,17,4,2");
  }
  for (size_t t = 0; t < r.inputs.input_ids.size(); ++t)
    if (r.inputs.input_ids[t] < 0 || r.inputs.input_ids[t] >= c.vocab_size)
      throw InvalidInput("input_ids[" + std::to_string(t) + "] = " + std::to_string(r.inputs.input_ids[t]) +
                         " is outside the vocabulary [0, " + std::to_string(c.vocab_size) + ")");
  // A model without a token-type table ignores the types (as HF does).
  zero_unused_token_types(c, &r.inputs);
  const int64_t types = std::max<int64_t>(c.type_vocab_size, 1);
  for (int64_t t : r.inputs.token_type_ids)
    if (t < 0 || t >= types)
      throw InvalidInput("token type " + std::to_string(t) + " is outside [0, " + std::to_string(types) + ") (type_vocab_size " +
                         std::to_string(c.type_vocab_size) + ")");
  check_input_length(c, r.inputs.size(), model.directory);
  if (!request.positions.empty()) {
    r.mask_positions = request.positions;
  } else {
    const int64_t mask_id = request.mask_id ? *request.mask_id : tokenizer ? tokenizer->mask_id() : -1;
    if (mask_id >= 0) r.mask_positions = find_mask_positions(r.inputs, mask_id);
  }
  check_mask_positions(r.mask_positions, r.inputs.size());
  return r;
}

UnknownTokens count_unknown_tokens(const Tokenizer& tokenizer, const std::vector<int64_t>& ids) {
  UnknownTokens c;
  for (int64_t id : ids) {
    if (id == tokenizer.cls_id() || id == tokenizer.sep_id() || id == tokenizer.pad_id() || id == tokenizer.mask_id())
      continue;
    ++c.total;
    if (id == tokenizer.unk_id())
      ++c.unknown;
    else if (id >= 0 && id < tokenizer.vocab_size() && byte_piece_value(tokenizer.piece(id)) >= 0)
      ++c.bytes;
  }
  return c;
}

std::string unknown_tokens_note(const UnknownTokens& counts) {
  if (counts.share() <= kUnknownTokenWarnShare) return "";
  const int percent = static_cast<int>(std::lround(100.0 * counts.share()));
  std::string what;
  if (counts.unknown) what = std::to_string(counts.unknown) + " [UNK]";
  if (counts.bytes) what += (what.empty() ? "" : " and ") + std::to_string(counts.bytes) + " byte pieces";
  const std::string share = std::to_string(percent) + " % of the input's tokens are unknown to this model (" + what +
                            " of " + std::to_string(counts.total) + "): ";
  // Byte pieces exist only in a vocabulary with byte fallback (the multilingual bundled model's):
  // the model is open already, and spells what it has no piece for in bytes.
  if (counts.bytes > counts.unknown)
    return share + "it spells the characters it has no piece for as UTF-8 bytes (<0xE9>), and knows them only "
                   "from those bytes, so its predictions here are weak. A model trained on more text of this "
                   "language would know them as whole pieces.";
  return share + "it has not learned this text's language. Open the multilingual bundled model "
                 "(notebooks_data/models/deberta-tiny-multilingual) or a model of that language.";
}

}  // namespace deberta
