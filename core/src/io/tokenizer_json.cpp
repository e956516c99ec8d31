// tokenizer_json.cpp — Hugging Face `tokenizer.json`: the models DeBERTa checkpoints and their
// derivatives ship, with the normalizer / pre-tokenizer / decoder pipeline of tokenizer_pipeline.h.
//
//   "Unigram"   (SentencePiece converted) → a Viterbi segmentation of each word maximising the sum of
//       piece scores; a character no piece covers is unknown with score min − 10, consecutive unknowns
//       fused. With "byte_fallback": true an unknown stretch becomes the <0xNN> pieces of its UTF-8
//       bytes instead of [UNK] (the Japanese DeBERTa-v3, the bundled multilingual model).
//   "WordPiece" (BERT) → greedy longest-match-first inside each word, continuations spelt with the
//       prefix ("##"); a word longer than max_input_chars_per_word characters, or one with a stretch
//       no piece covers, is the unknown token (tokenizer_wordpiece.cpp).
//   "BPE" with a ByteLevel pre-tokenizer → the GPT-2 byte-level BPE of tokenizer_bpe.cpp.
//
// Every normalizer, pre-tokenizer and decoder type that is not implemented is refused, naming it;
// the ids are those of Hugging Face's tokenizers library (tests/test_tokenizer_hf.cpp runs it).
#include "io/tokenizer_detail.h"
#include "io/tokenizer_pipeline.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace deberta::tokenizer_detail {

namespace {

using json = nlohmann::json;

constexpr double kUnkPenalty = 10.0;

/// The pipeline's stages of tokenizer.json: its normalizer, pre_tokenizer and decoder.
void read_stages(const json& root, const std::string& source, std::unique_ptr<Normalizer>* normalizer,
                 std::unique_ptr<PreTokenizer>* pre, std::unique_ptr<DisplayDecoder>* decoder) {
  *normalizer = read_normalizer(root.contains("normalizer") ? root["normalizer"] : json(), source);
  *pre = read_pre_tokenizer(root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json(), source);
  *decoder = read_decoder(root.contains("decoder") ? root["decoder"] : json(), source);
}

/// The "type" of a component, or "" when it has none (or not a string).
std::string type_name(const json& node) {
  return node.is_object() && node.contains("type") && node["type"].is_string() ? node["type"].get<std::string>() : "";
}

/// The replacement character of the first Metaspace pre-tokenizer (for the display of a Unigram
/// tokenizer.json without a decoder), "▁" when there is none.
std::string metaspace_replacement(const json& node) {
  if (!node.is_object()) return "\xE2\x96\x81";
  if (type_name(node) == "Metaspace" && node.contains("replacement") && node["replacement"].is_string())
    return node["replacement"].get<std::string>();
  if (node.contains("pretokenizers") && node["pretokenizers"].is_array())
    for (const auto& child : node["pretokenizers"])
      if (type_name(child) == "Metaspace") return metaspace_replacement(child);
  return "\xE2\x96\x81";
}

class UnigramTokenizer final : public PipelineTokenizer {
 public:
  UnigramTokenizer(const json& root, SpecialTokens specials, const std::string& source) {
    const json& model = root["model"];
    if (!model.contains("vocab") || !model["vocab"].is_array()) throw Error(source + ": Unigram \"vocab\" must be a list");
    for (const auto& entry : model["vocab"]) {
      if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
        throw Error(source + ": Unigram vocab entries must be [piece, score]");
      const std::string piece = entry[0];
      if (!is_utf8(piece)) throw Error(source + ": Unigram piece is not valid UTF-8");
      const int64_t id = static_cast<int64_t>(pieces_.size());
      if (piece.size() > kMaxUnigramPieceBytes)
        throw Error(source + ": Unigram piece " + std::to_string(id) + " is " + std::to_string(piece.size()) +
                    " bytes long, more than the limit of " + std::to_string(kMaxUnigramPieceBytes) + " bytes a piece");
      ids_[piece] = id;  // a piece listed twice: the last entry's id (and score), as the library's token_to_ids
      pieces_.push_back(piece);
      scores_.push_back(entry[1].get<double>());
      min_score_ = std::min(min_score_, scores_.back());
    }
    for (const auto& [piece, id] : ids_)
      if (!piece.empty()) trie_.insert(piece, id);
    if (pieces_.empty()) throw Error(source + ": Unigram vocabulary is empty");
    std::optional<int64_t> unk;
    if (model.contains("unk_id") && !model["unk_id"].is_null()) {
      if (!model["unk_id"].is_number_integer()) throw Error(source + ": Unigram \"unk_id\" must be an integer");
      unk = model["unk_id"].get<int64_t>();
      if (*unk < 0 || *unk >= static_cast<int64_t>(pieces_.size())) throw Error(source + ": unk_id outside the vocabulary");
    }
    if (model.contains("byte_fallback") && !model["byte_fallback"].is_null()) {
      if (!model["byte_fallback"].is_boolean()) throw Error(source + ": Unigram \"byte_fallback\" must be true or false");
      byte_fallback_ = model["byte_fallback"].get<bool>();
    }
    if (byte_fallback_) {
      for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        const auto it = ids_.find(name);
        byte_ids_[static_cast<size_t>(b)] = it == ids_.end() ? -1 : it->second;
      }
    }
    read_stages(root, source, &normalizer_, &pre_tokenizer_, &decoder_);
    if (!decoder_) decoder_ = metaspace_display(metaspace_replacement(root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json()));
    specials_ = std::move(specials);
    resolve_specials(source, {}, {}, {}, unk);
    if (unk) unk_id_ = *unk;  // the model's unknown id is what an unknown character becomes
    model_has_unk_ = unk.has_value();
    source_ = source;
  }

  std::string kind() const override { return byte_fallback_ ? "tokenizer.json (unigram, byte fallback)" : "tokenizer.json (unigram)"; }

 protected:
  /// Best segmentation of one word: best[e] = max over pieces w = word[s, e) of best[s] + score(w);
  /// a character no single piece covers may stand alone as unknown with score min − 10. Runs of
  /// unknowns are fused, then each becomes [UNK] or, with byte fallback, its bytes' <0xNN> pieces.
  /// Errors: a model without "unk_id" where the library would place an unknown node (a character
  /// no one-character piece covers, whose end no better path reaches): the library refuses such
  /// text ("Encountered an unknown token but `unk_id` is missing", models/unigram/model.rs,
  /// byte fallback or not), so do we, naming the file, the character and the word (issue 59,
  /// class 4; a side file's [UNK] was used before).
  void tokenize_word(const std::string& word, std::vector<int64_t>* ids) const override {
    const size_t n = word.size();
    const double unk_score = min_score_ - kUnkPenalty;
    std::vector<double> best(n + 1, -std::numeric_limits<double>::infinity());
    std::vector<size_t> from(n + 1, 0);
    std::vector<int64_t> piece(n + 1, -1);
    std::vector<bool> reached(n + 1, false);
    reached[0] = true;
    best[0] = 0;
    for (size_t s = 0; s < n;) {
      size_t next = s;
      next_code_point(word, &next);
      next = std::min(next, n);
      if (reached[s]) {
        bool single = false;
        // Walk the trie along word[s, …): each step is one byte, so the pieces starting at s cost
        // at most min(n - s, longest piece) steps.
        int32_t node = 0;
        for (size_t e = s; e < n; ++e) {
          node = trie_.child(node, static_cast<unsigned char>(word[e]));
          if (node < 0) break;
          const int64_t id = trie_.id(node);  // pieces are UTF-8: e + 1 ends a character
          if (id < 0) continue;
          single = single || e + 1 == next;
          const double score = best[s] + scores_[static_cast<size_t>(id)];
          if (!reached[e + 1] || score > best[e + 1]) best[e + 1] = score, from[e + 1] = s, piece[e + 1] = id, reached[e + 1] = true;
        }
        if (!single && (!reached[next] || best[s] + unk_score > best[next])) {
          if (!model_has_unk_) refuse_unknown(word, s, next);
          best[next] = best[s] + unk_score, from[next] = s, piece[next] = -1, reached[next] = true;
        }
      }
      s = next;
    }
    // Back from the end: (begin, end, id) with id −1 for an unknown stretch, unknowns fused.
    struct Segment {
      size_t begin, end;
      int64_t id;
    };
    std::vector<Segment> path;
    for (size_t e = n; e > 0; e = from[e]) {
      if (piece[e] < 0 && !path.empty() && path.back().id < 0) path.back().begin = from[e];
      else path.push_back({from[e], e, piece[e]});
    }
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      if (it->id >= 0) {
        ids->push_back(it->id);
        continue;
      }
      if (byte_fallback_) {
        std::vector<int64_t> bytes;
        for (size_t k = it->begin; k < it->end; ++k) bytes.push_back(byte_ids_[static_cast<unsigned char>(word[k])]);
        if (std::find(bytes.begin(), bytes.end(), -1) == bytes.end()) {
          ids->insert(ids->end(), bytes.begin(), bytes.end());
          continue;
        }
      }
      ids->push_back(unk_id_);
    }
  }
  int64_t base_size() const override { return static_cast<int64_t>(pieces_.size()); }
  std::string base_piece(int64_t id) const override { return pieces_[static_cast<size_t>(id)]; }
  std::optional<int64_t> base_id(const std::string& piece) const override {
    auto it = ids_.find(piece);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }

 private:
  /// The refusal of a character (word[begin, end)) the model cannot encode without an unk_id.
  [[noreturn]] void refuse_unknown(const std::string& word, size_t begin, size_t end) const {
    size_t at = begin;
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(next_code_point(word, &at)));
    std::string shown = word;  // at most ~80 bytes of the word, cut at a character
    if (shown.size() > 80) {
      size_t cut = 0;
      while (cut < word.size() && cut < 80) next_code_point(word, &cut);
      shown = word.substr(0, cut) + "\xE2\x80\xA6";
    }
    throw Error(source_ + ": model Unigram has no \"unk_id\", and no piece covers the character \"" +
                word.substr(begin, end - begin) + "\" (" + code + ") of the pre-tokenized word \"" + shown +
                "\": Hugging Face's tokenizers library refuses this text (\"Encountered an unknown token but `unk_id` is "
                "missing\"), so does this reader");
  }

  std::string source_;          ///< the file, for errors
  bool model_has_unk_ = false;  ///< the model declares "unk_id"
  std::vector<std::string> pieces_;
  std::vector<double> scores_;
  ByteTrie trie_;  ///< the pieces, for the lattice walk
  std::unordered_map<std::string, int64_t> ids_;
  double min_score_ = std::numeric_limits<double>::infinity();
  bool byte_fallback_ = false;
  std::array<int64_t, 256> byte_ids_{};  ///< id of "<0xNN>" per byte, −1 when missing
};
bool has_byte_level(const json& node) {
  if (!node.is_object()) return false;
  if (type_name(node) == "ByteLevel") return true;
  if (node.contains("pretokenizers") && node["pretokenizers"].is_array())
    for (const auto& child : node["pretokenizers"])
      if (has_byte_level(child)) return true;
  return false;
}

/// The id the model's own vocabulary gives `content` (Unigram: the last entry, WordPiece and BPE:
/// the vocab object's), and the vocabulary's size; what the library numbers added tokens against.
struct ModelVocab {
  std::unordered_map<std::string, int64_t> ids;
  int64_t size = 0;
  explicit ModelVocab(const json& model) {
    if (!model.contains("vocab")) return;
    const json& vocab = model["vocab"];
    if (vocab.is_array()) {
      for (const auto& entry : vocab)
        if (entry.is_array() && !entry.empty() && entry[0].is_string()) ids[entry[0].get<std::string>()] = size++;
        else ++size;
    } else if (vocab.is_object()) {
      for (const auto& [piece, id] : vocab.items())
        if (id.is_number_integer()) ids[piece] = id.get<int64_t>();
      size = static_cast<int64_t>(vocab.size());
    }
  }
};

/// Refuses (naming the file, the token and the value) what the reader of added tokens does not do
/// as the library does (issue 59, class 3): the flags rstrip, single_word, lstrip (read for the mask
/// only) and normalized (where a normalizer runs); and an id other than the one the library gives
/// the token — the vocabulary's id of its content, else the next id past the vocabulary and the
/// added tokens before it — where the library renumbers and we would use the declared one.
void check_added_tokens(const json& root, const std::string& path, const std::string& mask) {
  const ModelVocab vocab(root["model"]);
  const bool normalizes = root.contains("normalizer") && !root["normalizer"].is_null();
  std::unordered_map<std::string, int64_t> given;
  int64_t next = vocab.size;
  for (const auto& t : root["added_tokens"]) {
    const std::string content = t["content"].get<std::string>();
    const std::string where = path + ": added token \"" + valid_utf8(content) + "\"";
    auto flag = [&](const char* key) { return t.contains(key) && t[key].is_boolean() && t[key].get<bool>(); };
    for (const char* key : {"rstrip", "single_word", "lstrip", "normalized"}) {
      if (!flag(key)) continue;
      const std::string k = key;
      if (k == "lstrip" && content == mask) continue;  // the mask's lstrip is read (SpecialTokens::mask_lstrip)
      if (k == "normalized" && !normalizes) continue;  // nothing normalizes the text: the same matches
      throw Error(where + ": \"" + k + "\": true is not supported (this reader matches added tokens as written" +
                  (k == "normalized" ? ", on the text before the normalizer)" : ", without stripping or word bounds)"));
    }
    int64_t expected;
    if (const auto it = vocab.ids.find(content); it != vocab.ids.end()) expected = it->second;
    else if (const auto seen = given.find(content); seen != given.end()) expected = seen->second;
    else expected = next;
    const int64_t declared = t["id"].get<int64_t>();
    if (declared != expected)
      throw Error(where + " declares id " + std::to_string(declared) + ", but the library numbers it " + std::to_string(expected) +
                  (vocab.ids.count(content) ? " (its id in the model's vocabulary)" : " (the next id past the vocabulary and the added tokens before it)"));
    given.emplace(content, expected);
    next = std::max(next, expected + 1);
  }
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& model_dir) {
  const std::string path = (std::filesystem::path(model_dir) / "tokenizer.json").string();
  const std::string text = read_whole_file(path, kMaxTokenizerFileBytes);
  check_json_depth(text, path);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object())
    throw Error(path + ": no \"model\" object (not a Hugging Face tokenizer.json)");
  SpecialTokens specials = SpecialTokens::read(model_dir);
  if (root.contains("added_tokens")) {
    if (!root["added_tokens"].is_array()) throw Error(path + ": \"added_tokens\" must be a list");
    for (const auto& t : root["added_tokens"]) {
      if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || t["id"].get<int64_t>() < 0 ||
          !t.contains("content") || !t["content"].is_string())
        throw Error(path + ": added token without an integer id and a content string");
      specials.added[t["content"].get<std::string>()] = t["id"].get<int64_t>();
      if (t["content"] == specials.mask && t.contains("lstrip") && t["lstrip"].is_boolean())
        specials.mask_lstrip = t["lstrip"].get<bool>();
    }
    check_added_tokens(root, path, specials.mask);
  }
  const json& model = root["model"];
  if (!model.contains("type") || !model["type"].is_string()) throw Error(path + ": the model has no \"type\" string");
  const std::string type = model["type"].get<std::string>();
  if (type == "Unigram") return std::make_unique<UnigramTokenizer>(root, std::move(specials), path);
  if (type == "WordPiece") {
    WordPieceModel wp;
    if (!model.contains("vocab") || !model["vocab"].is_object()) throw Error(path + ": WordPiece \"vocab\" must be an object");
    for (const auto& [piece, id] : model["vocab"].items()) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0) throw Error(path + ": WordPiece id of \"" + piece + "\" is not valid");
      if (!is_utf8(piece)) throw Error(path + ": WordPiece piece is not valid UTF-8");
      wp.vocab.emplace(piece, id.get<int64_t>());
    }
    auto text_field = [&](const char* key, std::string* out) {
      if (!model.contains(key) || model[key].is_null()) return;
      if (!model[key].is_string()) throw Error(path + ": WordPiece \"" + std::string(key) + "\" must be a string");
      *out = model[key].get<std::string>();
    };
    text_field("unk_token", &wp.unk_token);
    text_field("continuing_subword_prefix", &wp.prefix);
    if (model.contains("max_input_chars_per_word") && !model["max_input_chars_per_word"].is_null()) {
      if (!model["max_input_chars_per_word"].is_number_unsigned())
        throw Error(path + ": WordPiece \"max_input_chars_per_word\" must be a non-negative integer");
      wp.max_input_chars_per_word = model["max_input_chars_per_word"].get<size_t>();
    }
    std::unique_ptr<Normalizer> normalizer;
    std::unique_ptr<PreTokenizer> pre;
    std::unique_ptr<DisplayDecoder> decoder;
    read_stages(root, path, &normalizer, &pre, &decoder);
    if (!decoder) decoder = wordpiece_display(wp.prefix);
    return make_wordpiece(std::move(wp), std::move(normalizer), std::move(pre), std::move(decoder), std::move(specials), path,
                          "tokenizer.json (wordpiece)");
  }
  if (type == "BPE") {
    if (!has_byte_level(root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json()))
      throw Error(path + ": model BPE is supported only as byte-level BPE (a ByteLevel pre_tokenizer)");
    BpeModel bpe;
    if (!model.contains("vocab") || !model["vocab"].is_object()) throw Error(path + ": BPE \"vocab\" must be an object");
    for (const auto& [piece, id] : model["vocab"].items()) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0) throw Error(path + ": BPE id of \"" + piece + "\" is not valid");
      bpe.vocab[piece] = id.get<int64_t>();
    }
    if (model.contains("merges")) {
      if (!model["merges"].is_array()) throw Error(path + ": BPE \"merges\" must be a list");
      for (const auto& m : model["merges"]) {
        if (m.is_string()) {
          const std::string s = m;
          const auto space = s.find(' ');
          if (space == std::string::npos || space == 0 || space + 1 == s.size())
            throw Error(path + ": BPE merge \"" + s + "\" is not two symbols");
          bpe.merges.emplace_back(s.substr(0, space), s.substr(space + 1));
        } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
          bpe.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
        } else {
          throw Error(path + ": BPE merges must be \"a b\" strings or [a, b] pairs");
        }
      }
    }
    if (model.contains("unk_token") && model["unk_token"].is_string()) specials.unk = model["unk_token"];
    return make_byte_level_bpe(std::move(bpe), std::move(specials), path, "tokenizer.json (byte-level bpe)");
  }
  throw Error(path + ": model type '" + type + "' is not supported (Unigram, WordPiece and byte-level BPE are)");
}

}  // namespace deberta::tokenizer_detail
