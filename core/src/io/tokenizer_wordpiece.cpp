// tokenizer_wordpiece.cpp — BERT's WordPiece, from tokenizer.json ("type": "WordPiece") or from a
// BERT folder's vocab.txt + tokenizer_config.json (the Chinese DeBERTa-v2 checkpoints).
//
// Inside each pre-tokenized word, WordPiece takes the longest vocabulary piece that starts the
// rest of the word (after the first piece, spelt with the continuation prefix "##"); a word with
// a stretch no piece covers, or longer than max_input_chars_per_word characters, is one unknown
// token. Source: Hugging Face tokenizers, models/wordpiece (the reference the tests run).
//
// A vocab.txt folder gets the pipeline Hugging Face builds for BertTokenizer (transformers'
// BertConverter): BertNormalizer(clean_text, handle_chinese_chars = tokenize_chinese_chars,
// strip_accents, lowercase = do_lower_case), BertPreTokenizer, WordPiece("##", 100 characters).
#include "io/tokenizer_detail.h"
#include "io/tokenizer_pipeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace deberta::tokenizer_detail {

namespace {

using json = nlohmann::json;

class WordPieceTokenizer final : public PipelineTokenizer {
 public:
  WordPieceTokenizer(WordPieceModel model, std::unique_ptr<Normalizer> normalizer, std::unique_ptr<PreTokenizer> pre,
                     std::unique_ptr<DisplayDecoder> decoder, SpecialTokens specials, const std::string& source,
                     std::string kind, std::vector<std::string> pieces)
      : model_(std::move(model)), pieces_(std::move(pieces)), kind_(std::move(kind)) {
    if (model_.vocab.empty()) throw Error(source + ": the WordPiece vocabulary is empty");
    if (pieces_.empty()) {  // from tokenizer.json: invert the map
      int64_t top = 0;
      for (const auto& [piece, id] : model_.vocab) top = std::max(top, id);
      if (top >= static_cast<int64_t>(model_.vocab.size()) * 4 + 1024)
        throw Error(source + ": WordPiece ids reach " + std::to_string(top) + " for " + std::to_string(model_.vocab.size()) +
                    " pieces");
      pieces_.resize(static_cast<size_t>(top) + 1);
      std::vector<bool> seen(pieces_.size(), false);
      for (const auto& [piece, id] : model_.vocab) {
        if (seen[static_cast<size_t>(id)])
          throw Error(source + ": WordPiece id " + std::to_string(id) + " is given to two pieces");
        seen[static_cast<size_t>(id)] = true;
        pieces_[static_cast<size_t>(id)] = piece;
      }
    }
    const auto unk = model_.vocab.find(model_.unk_token);
    if (unk == model_.vocab.end())
      throw Error(source + ": the WordPiece unknown token \"" + model_.unk_token + "\" is not in the vocabulary");
    model_unk_ = unk->second;
    for (const auto& [piece, id] : model_.vocab) longest_piece_ = std::max(longest_piece_, piece.size());
    normalizer_ = std::move(normalizer);
    pre_tokenizer_ = std::move(pre);
    decoder_ = std::move(decoder);
    specials_ = std::move(specials);
    resolve_specials(source, {}, {}, {}, model_unk_);
  }

  std::string kind() const override { return kind_; }

 protected:
  void tokenize_word(const std::string& word, std::vector<int64_t>* ids) const override {
    // Character boundaries of the word, in bytes.
    std::vector<size_t> bounds;
    for (size_t pos = 0; pos < word.size();) {
      bounds.push_back(pos);
      next_code_point(word, &pos);
    }
    bounds.push_back(word.size());
    const size_t chars = bounds.size() - 1;
    if (chars > model_.max_input_chars_per_word) {
      ids->push_back(model_unk_);
      return;
    }
    std::vector<int64_t> out;
    std::string candidate;
    for (size_t start = 0; start < chars;) {
      // No piece is longer than the longest in the vocabulary: the search starts there, so a long
      // word costs (its length × the longest piece), whatever max_input_chars_per_word allows.
      size_t end = static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), bounds[start] + longest_piece_) -
                                       bounds.begin()) - 1;
      int64_t found = -1;
      for (; end > start; --end) {
        candidate.assign(start > 0 ? model_.prefix : std::string());
        candidate.append(word, bounds[start], bounds[end] - bounds[start]);
        const auto it = model_.vocab.find(candidate);
        if (it != model_.vocab.end()) {
          found = it->second;
          break;
        }
      }
      if (found < 0) {  // a stretch no piece covers: the whole word is unknown
        ids->push_back(model_unk_);
        return;
      }
      out.push_back(found);
      start = end;
    }
    ids->insert(ids->end(), out.begin(), out.end());
  }
  int64_t base_size() const override { return static_cast<int64_t>(pieces_.size()); }
  std::string base_piece(int64_t id) const override { return pieces_[static_cast<size_t>(id)]; }
  std::optional<int64_t> base_id(const std::string& piece) const override {
    const auto it = model_.vocab.find(piece);
    if (it == model_.vocab.end()) return std::nullopt;
    return it->second;
  }

 private:
  WordPieceModel model_;
  std::vector<std::string> pieces_;  ///< by id
  std::string kind_;
  int64_t model_unk_ = -1;
  size_t longest_piece_ = 0;  ///< bytes of the longest vocabulary piece
};

/// A boolean key of tokenizer_config.json: absent or null gives `fallback`.
std::optional<bool> config_bool(const json& config, const char* key, const std::string& path) {
  if (!config.contains(key) || config[key].is_null()) return std::nullopt;
  if (!config[key].is_boolean()) throw Error(path + ": \"" + key + "\" must be true, false or null");
  return config[key].get<bool>();
}

}  // namespace

std::unique_ptr<Tokenizer> make_wordpiece(WordPieceModel model, std::unique_ptr<Normalizer> normalizer,
                                          std::unique_ptr<PreTokenizer> pre_tokenizer,
                                          std::unique_ptr<DisplayDecoder> decoder, SpecialTokens specials,
                                          const std::string& source, const std::string& kind) {
  return std::make_unique<WordPieceTokenizer>(std::move(model), std::move(normalizer), std::move(pre_tokenizer),
                                              std::move(decoder), std::move(specials), source, kind,
                                              std::vector<std::string>{});
}

std::unique_ptr<Tokenizer> load_bert_vocab(const std::string& model_dir) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(model_dir) / "vocab.txt").string();
  const std::string text = read_whole_file(path, kMaxTokenizerFileBytes);
  require_utf8(text, path);
  // One piece a line, its id the line number; "\r\n" endings read as "\n". A piece on two lines
  // keeps the later id (as a Python dict built line by line does), each line keeps its own piece.
  WordPieceModel model;
  std::vector<std::string> pieces;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    const size_t next = end == std::string::npos ? text.size() : end + 1;
    if (end == std::string::npos) end = text.size();
    std::string piece = text.substr(at, end - at);
    if (!piece.empty() && piece.back() == '\r') piece.pop_back();
    // A carriage return inside a line (CR-only line ends): the library's reader (lines split at
    // "\n") and transformers' (universal newlines) read different vocabularies. Refused, naming it.
    if (piece.find('\r') != std::string::npos)
      throw Error(path + ": line " + std::to_string(pieces.size() + 1) +
                  " holds a carriage return inside it (CR-only line ends?): write one piece a line, ending in \"\\n\"");
    model.vocab[piece] = static_cast<int64_t>(pieces.size());
    pieces.push_back(std::move(piece));
    at = next;
  }
  if (pieces.empty()) throw Error(path + ": the vocabulary is empty");

  const std::string config_path = (fs::path(model_dir) / "tokenizer_config.json").string();
  json config = json::object();
  std::error_code ec;
  if (fs::exists(config_path, ec)) {
    const std::string config_text = read_whole_file(config_path, kMaxTokenizerFileBytes);
    check_json_depth(config_text, config_path);
    try {
      config = json::parse(config_text);
    } catch (const json::exception& e) {
      throw Error(config_path + ": not valid JSON (" + std::string(e.what()) + ")");
    }
    if (!config.is_object()) throw Error(config_path + ": expected a JSON object");
  }
  const bool lower = config_bool(config, "do_lower_case", config_path).value_or(true);
  const bool chinese = config_bool(config, "tokenize_chinese_chars", config_path).value_or(true);
  const bool strip = config_bool(config, "strip_accents", config_path).value_or(lower);
  SpecialTokens specials = SpecialTokens::read(model_dir);
  specials.lower_case = false;  // the BertNormalizer lowercases (all of Unicode, not only ASCII)
  model.unk_token = specials.unk;
  return std::make_unique<WordPieceTokenizer>(std::move(model), bert_normalizer(true, chinese, strip, lower),
                                              bert_pre_tokenizer(), wordpiece_display("##"), std::move(specials), path,
                                              "vocab.txt (wordpiece)", std::move(pieces));
}

}  // namespace deberta::tokenizer_detail
