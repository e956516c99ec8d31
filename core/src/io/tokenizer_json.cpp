// tokenizer_json.cpp — Hugging Face `tokenizer.json` for fine-tuned models that ship neither
// spm.model nor vocab.json: the two model types DeBERTa derivatives use.
//
//   "BPE" with a ByteLevel pre-tokenizer → the GPT-2 byte-level BPE of tokenizer_bpe.cpp.
//   "Unigram" (SentencePiece converted) → Metaspace pre-tokenisation ("▁" for spaces, one prepended)
//       and a Viterbi segmentation maximising the sum of piece scores; a character no piece covers
//       is [UNK] with score min − 10, consecutive [UNK]s fused (as SentencePiece and HF do).
//
// Normalisers: Strip, Lowercase and the whitespace-collapsing Replace(" {2,}" → " ") are applied;
// "Precompiled" (SentencePiece's NFKC charsmap) is not, so text that NFKC would change (full-width
// letters, ligatures, …) can tokenize differently from the Python library.
#include "io/tokenizer_detail.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace deberta::tokenizer_detail {

namespace {

using json = nlohmann::json;

constexpr double kUnkPenalty = 10.0;

/// The normalisation steps we implement, collected from the "normalizer" tree.
struct Normalizer {
  bool strip_left = false, strip_right = false, collapse_spaces = false, lowercase = false;

  void collect(const json& n) {
    if (!n.is_object() || !n.contains("type") || !n["type"].is_string()) return;
    const std::string type = n["type"];
    if (type == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array()) {
      for (const auto& child : n["normalizers"]) collect(child);
    } else if (type == "Strip") {
      strip_left = n.value("strip_left", true);
      strip_right = n.value("strip_right", true);
    } else if (type == "Lowercase") {
      lowercase = true;
    } else if (type == "Replace" && n.contains("pattern") && n["pattern"].is_object() && n["pattern"].contains("Regex") &&
               n["pattern"]["Regex"] == " {2,}") {
      collapse_spaces = true;
    }
  }

  std::string apply(std::string s) const {
    if (lowercase)
      for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    if (strip_left) s.erase(0, std::min(s.size(), s.find_first_not_of(" \t\n\r")));
    if (strip_right) {
      while (!s.empty() && is_space(s.back())) s.pop_back();
    }
    if (collapse_spaces) {
      std::string out;
      for (char c : s)
        if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
      s = std::move(out);
    }
    return s;
  }
};

class UnigramTokenizer final : public BasicTokenizer {
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
      if (ids_.emplace(piece, id).second && !piece.empty()) trie_.insert(piece, id);
      pieces_.push_back(piece);
      scores_.push_back(entry[1].get<double>());
      min_score_ = std::min(min_score_, scores_.back());
    }
    if (pieces_.empty()) throw Error(source + ": Unigram vocabulary is empty");
    std::optional<int64_t> unk;
    if (model.contains("unk_id") && model["unk_id"].is_number_integer()) {
      unk = model["unk_id"].get<int64_t>();
      if (*unk < 0 || *unk >= static_cast<int64_t>(pieces_.size())) throw Error(source + ": unk_id outside the vocabulary");
    }
    if (root.contains("normalizer")) normalizer_.collect(root["normalizer"]);
    const json& pre = root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json();
    const json* meta = nullptr;
    if (pre.is_object() && pre.value("type", "") == "Metaspace") meta = &pre;
    if (pre.is_object() && pre.value("type", "") == "Sequence" && pre.contains("pretokenizers") && pre["pretokenizers"].is_array())
      for (const auto& p : pre["pretokenizers"])
        if (p.is_object() && p.value("type", "") == "Metaspace") meta = &p;
    if (meta) {
      if (meta->contains("replacement") && (*meta)["replacement"].is_string() &&
          !(*meta)["replacement"].get<std::string>().empty())
        replacement_ = (*meta)["replacement"];
      if (meta->contains("prepend_scheme") && (*meta)["prepend_scheme"].is_string())
        prefix_ = (*meta)["prepend_scheme"] != "never";
      else
        prefix_ = meta->value("add_prefix_space", true);
    }
    specials_ = std::move(specials);
    resolve_specials(source, {}, {}, {}, unk);
  }

  std::string kind() const override { return "tokenizer.json (unigram)"; }

 protected:
  std::vector<int64_t> encode_plain(const std::string& raw) const override {
    const std::string text = normalizer_.apply(raw);
    if (text.empty()) return {};
    // Metaspace: spaces become the replacement, one is prepended, and each word starts at one.
    std::string spaced = prefix_ && text.compare(0, replacement_.size(), replacement_) != 0 ? replacement_ : "";
    for (char c : text) {
      if (c == ' ') spaced += replacement_;
      else spaced += c;
    }
    std::vector<int64_t> ids;
    size_t word_start = 0;
    for (size_t at = 1; at <= spaced.size(); ++at) {  // ▁ cannot match inside a character
      if (at == spaced.size() || spaced.compare(at, replacement_.size(), replacement_) == 0) {
        viterbi(spaced.substr(word_start, at - word_start), &ids);
        word_start = at;
        if (at == spaced.size()) break;
        at += replacement_.size() - 1;
      }
    }
    return ids;
  }
  int64_t base_size() const override { return static_cast<int64_t>(pieces_.size()); }
  std::string base_piece(int64_t id) const override { return pieces_[static_cast<size_t>(id)]; }
  std::string base_display(int64_t id) const override {
    std::string p = base_piece(id);
    for (size_t at = p.find(replacement_); !replacement_.empty() && at != std::string::npos; at = p.find(replacement_, at + 1))
      p.replace(at, replacement_.size(), " ");
    return p;
  }
  std::optional<int64_t> base_id(const std::string& piece) const override {
    auto it = ids_.find(piece);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }

 private:
  /// Best segmentation of one word: best[e] = max over pieces w = word[s, e) of best[s] + score(w).
  void viterbi(const std::string& word, std::vector<int64_t>* ids) const {
    if (word.empty()) return;
    const size_t n = word.size();
    const double unk_score = min_score_ - kUnkPenalty;
    std::vector<double> best(n + 1, -std::numeric_limits<double>::infinity());
    std::vector<size_t> from(n + 1, 0);
    std::vector<int64_t> piece(n + 1, -1);
    best[0] = 0;
    for (size_t s = 0; s < n;) {
      size_t next = s;
      next_code_point(word, &next);
      next = std::min(next, n);
      if (best[s] > -std::numeric_limits<double>::infinity()) {
        bool single = false;
        // Walk the trie along word[s, …): each step is one byte, so the pieces starting at s cost
        // at most min(n - s, longest piece) steps (a hash lookup per end would cost their square).
        int32_t node = 0;
        for (size_t e = s; e < n; ++e) {
          node = trie_.child(node, static_cast<unsigned char>(word[e]));
          if (node < 0) break;
          const int64_t id = trie_.id(node);  // pieces are UTF-8: e + 1 ends a character
          if (id >= 0 && id != unk_id_) {
            single = single || e + 1 == next;
            const double score = best[s] + scores_[static_cast<size_t>(id)];
            if (score > best[e + 1]) best[e + 1] = score, from[e + 1] = s, piece[e + 1] = id;
          }
        }
        if (!single && best[s] + unk_score > best[next]) best[next] = best[s] + unk_score, from[next] = s, piece[next] = unk_id_;
      }
      s = next;
    }
    std::vector<int64_t> out;
    for (size_t e = n; e > 0; e = from[e]) out.push_back(piece[e]);
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (!(*it == unk_id_ && !ids->empty() && ids->back() == unk_id_ && it != out.rbegin())) ids->push_back(*it);
  }

  std::vector<std::string> pieces_;
  std::vector<double> scores_;
  ByteTrie trie_;  ///< the pieces, for the lattice walk
  std::unordered_map<std::string, int64_t> ids_;
  double min_score_ = 0;
  Normalizer normalizer_;
  std::string replacement_ = "\xE2\x96\x81";
  bool prefix_ = true;
};

bool has_byte_level(const json& node) {
  if (!node.is_object()) return false;
  if (node.value("type", "") == "ByteLevel") return true;
  if (node.contains("pretokenizers") && node["pretokenizers"].is_array())
    for (const auto& child : node["pretokenizers"])
      if (has_byte_level(child)) return true;
  return false;
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
  }
  const json& model = root["model"];
  const std::string type = model.value("type", "");
  if (type == "Unigram") return std::make_unique<UnigramTokenizer>(root, std::move(specials), path);
  if (type == "BPE") {
    if (!has_byte_level(root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json()))
      throw Error(path + ": only byte-level BPE (a ByteLevel pre-tokenizer) is supported");
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
  throw Error(path + ": tokenizer model type \"" + type + "\" is not supported (only Unigram and byte-level BPE)");
}

}  // namespace deberta::tokenizer_detail
