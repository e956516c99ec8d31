// tokenizer.cpp — choosing a tokenizer for a model directory, and what every tokenizer shares:
// UTF-8 validation, special tokens from the Hugging Face side files, and DeBERTa's input layout
// `[CLS] A [SEP]` / `[CLS] A [SEP] B [SEP]` with token types 0 … 0 1 … 1.
#include "deberta/tokenizer.h"
#include "io/tokenizer_detail.h"
#include "io/tokenizer_unicode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace deberta {

namespace fs = std::filesystem;

namespace tokenizer_detail {

// ---------------------------------------------------------------------------------------------
// UTF-8

namespace {

/// Length of the well-formed UTF-8 sequence at `s[i]`, or 0 when it is not one (RFC 3629 table 3).
size_t utf8_sequence_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  const size_t left = s.size() - i;
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < left && byte(i + k) >= lo && byte(i + k) <= hi;
  };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

}  // namespace

size_t utf8_length_at(const std::string& text, size_t i) { return utf8_sequence_length(text, i); }

bool is_utf8(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

void require_utf8(const std::string& text, const std::string& what) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "text is not valid UTF-8 (byte 0x%02x at offset %zu)",
                    static_cast<unsigned char>(text[i]), i);
      throw Error(what + ": " + buf);
    }
    i += n;
  }
}

char32_t next_code_point(const std::string& text, size_t* pos) {
  const auto c = static_cast<unsigned char>(text[*pos]);
  const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < n && *pos + k < text.size(); ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(text[*pos + k]) & 0x3F);
  *pos += n;
  return cp;
}

std::string encode_utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::vector<std::string> utf8_chars(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    next_code_point(text, &i);
    out.push_back(text.substr(start, std::min(i, text.size()) - start));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Special tokens

namespace {

/// Parses a JSON file, or returns null when it does not exist. Errors: unreadable or not JSON.
nlohmann::json read_json_if_present(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  const std::string text = read_whole_file(path.string(), kMaxTokenizerFileBytes);
  check_json_depth(text, path.string());
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path.string() + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

/// A token in HF's two spellings: "[MASK]" or {"content": "[MASK]", "lstrip": true, …}.
std::optional<std::string> token_content(const nlohmann::json& v, const std::string& where, bool* lstrip = nullptr) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    if (lstrip && v.contains("lstrip") && v["lstrip"].is_boolean()) *lstrip = v["lstrip"].get<bool>();
    return v["content"].get<std::string>();
  }
  throw Error(where + ": expected a token string or {\"content\": …}");
}

void read_special_names(const nlohmann::json& j, const std::string& file, SpecialTokens* t) {
  if (!j.is_object()) throw Error(file + ": expected a JSON object");
  const std::pair<const char*, std::string*> names[] = {
      {"cls_token", &t->cls}, {"sep_token", &t->sep}, {"pad_token", &t->pad}, {"unk_token", &t->unk}, {"mask_token", &t->mask}};
  for (const auto& [key, target] : names) {
    if (!j.contains(key)) continue;
    bool* lstrip = std::string(key) == "mask_token" ? &t->mask_lstrip : nullptr;
    if (auto v = token_content(j[key], file + " \"" + key + "\"", lstrip)) *target = *v;
  }
}

int64_t parse_id(const nlohmann::json& v, const std::string& where) {
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<int64_t>();
  if (v.is_string()) {
    try {
      size_t used = 0;
      const long long id = std::stoll(v.get<std::string>(), &used);
      if (used == v.get<std::string>().size() && id >= 0) return id;
    } catch (const std::exception&) {
    }
  }
  throw Error(where + ": token id must be a non-negative integer");
}

}  // namespace

SpecialTokens SpecialTokens::read(const std::string& model_dir) {
  SpecialTokens t;
  const fs::path dir(model_dir);
  const auto config_path = dir / "tokenizer_config.json";
  if (const auto config = read_json_if_present(config_path); !config.is_null()) {
    read_special_names(config, config_path.string(), &t);
    if (config.contains("do_lower_case") && config["do_lower_case"].is_boolean())
      t.lower_case = config["do_lower_case"].get<bool>();
    if (config.contains("added_tokens_decoder")) {
      const auto& dec = config["added_tokens_decoder"];
      if (!dec.is_object()) throw Error(config_path.string() + ": \"added_tokens_decoder\" must be an object");
      for (const auto& [id, tok] : dec.items()) {
        const std::string where = config_path.string() + " added token " + id;
        if (auto content = token_content(tok, where)) t.added[*content] = parse_id(id, where);
      }
    }
  }
  const auto map_path = dir / "special_tokens_map.json";
  if (const auto map = read_json_if_present(map_path); !map.is_null()) read_special_names(map, map_path.string(), &t);
  const auto added_path = dir / "added_tokens.json";
  if (const auto added = read_json_if_present(added_path); !added.is_null()) {
    if (!added.is_object()) throw Error(added_path.string() + ": expected an object {token: id}");
    for (const auto& [token, id] : added.items()) t.added[token] = parse_id(id, added_path.string() + " \"" + token + "\"");
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// BasicTokenizer

void BasicTokenizer::resolve_specials(const std::string& source, std::optional<int64_t> fallback_cls,
                                      std::optional<int64_t> fallback_sep, std::optional<int64_t> fallback_pad,
                                      std::optional<int64_t> fallback_unk) {
  for (const auto& [token, id] : specials_.added) added_by_id_[id] = token;
  auto lookup = [&](const std::string& token) -> std::optional<int64_t> {
    if (auto it = specials_.added.find(token); it != specials_.added.end()) return it->second;
    return base_id(token);
  };
  auto require = [&](const std::string& token, std::optional<int64_t> fallback, const char* role) {
    if (auto id = lookup(token)) return *id;
    if (fallback && *fallback >= 0) return *fallback;
    throw Error(source + ": the vocabulary has no " + role + " token \"" + token + "\"");
  };
  cls_id_ = require(specials_.cls, fallback_cls, "CLS");
  sep_id_ = require(specials_.sep, fallback_sep, "SEP");
  unk_id_ = require(specials_.unk, fallback_unk, "UNK");
  pad_id_ = lookup(specials_.pad).value_or(fallback_pad.value_or(-1));
  if (auto id = lookup(specials_.mask)) {
    mask_id_ = *id;
  } else {
    // As Hugging Face does for a special token missing from the vocabulary (real DeBERTa-v3: 128000).
    mask_id_ = vocab_size();
    specials_.added[specials_.mask] = mask_id_;
    added_by_id_[mask_id_] = specials_.mask;
  }
  // Make sure the special strings are recognised in text even when only the base vocabulary has them.
  for (const auto& [token, id] : {std::pair{specials_.cls, cls_id_}, {specials_.sep, sep_id_}, {specials_.unk, unk_id_},
                                  {specials_.mask, mask_id_}})
    specials_.added.emplace(token, id);
  if (pad_id_ >= 0) specials_.added.emplace(specials_.pad, pad_id_);
  for (const auto& [token, id] : specials_.added)
    if (!token.empty()) added_trie_.insert(token, id);
}

void ByteTrie::insert(const std::string& bytes, int64_t id) {
  int32_t node = 0;
  for (unsigned char byte : bytes) {
    const auto [it, added] = child_.try_emplace(uint64_t{static_cast<uint32_t>(node)} << 8 | byte,
                                                static_cast<int32_t>(id_.size()));
    if (added) id_.push_back(-1);
    node = it->second;
  }
  if (id_[static_cast<size_t>(node)] < 0) id_[static_cast<size_t>(node)] = id;
}

std::pair<size_t, int64_t> ByteTrie::longest_at(const std::string& text, size_t pos) const {
  std::pair<size_t, int64_t> best{0, -1};
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    node = child(node, static_cast<unsigned char>(text[i]));
    if (node < 0) break;
    if (id(node) >= 0) best = {i + 1 - pos, id(node)};
  }
  return best;
}

int64_t BasicTokenizer::vocab_size() const {
  int64_t n = base_size();
  if (!added_by_id_.empty()) n = std::max(n, added_by_id_.rbegin()->first + 1);
  return n;
}

std::string BasicTokenizer::piece(int64_t id) const {
  if (auto it = added_by_id_.find(id); it != added_by_id_.end()) return it->second;
  if (id >= 0 && id < base_size()) return base_piece(id);
  return "<id " + std::to_string(id) + ">";
}

std::string BasicTokenizer::display(int64_t id) const {
  // Readable text, so always valid UTF-8: a byte-level piece may hold half of a character.
  if (auto it = added_by_id_.find(id); it != added_by_id_.end()) return valid_utf8(it->second);
  if (id >= 0 && id < base_size()) return valid_utf8(base_display(id));
  return "<id " + std::to_string(id) + ">";
}

// Splits `text` around the literal special / added tokens (leftmost, longest first) and tokenizes
// the plain stretches between them.
std::vector<int64_t> BasicTokenizer::encode_segment(const std::string& text) const {
  std::vector<int64_t> ids;
  std::string plain;
  bool after_special = false;  // the plain text follows an added token directly
  auto flush = [&] {
    if (plain.empty()) return;
    if (specials_.lower_case)
      for (char& c : plain) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    // Text glued to a special token ("[MASK]." ) is each reader's own: spm.model continues the
    // word as SentencePiece does on the whole text (tokenizer_spm.cpp), tokenizer.json gives what
    // its pre-tokenizer gives, as the library does (issue 59, class 4).
    const auto part = encode_plain_at(plain, !after_special);
    ids.insert(ids.end(), part.begin(), part.end());
    plain.clear();
  };
  for (size_t i = 0; i < text.size();) {
    const auto [length, best_id] = added_trie_.longest_at(text, i);
    if (length == 0) {
      plain += text[i++];
      continue;
    }
    // The mask's lstrip takes every White_Space character before it (Rust's char::is_whitespace,
    // as the library's added vocabulary: VT, FF, NEL, NBSP, U+2028 … too, not only " \t\n\r").
    if (text.compare(i, length, specials_.mask) == 0 && length == specials_.mask.size() && specials_.mask_lstrip)
      while (!plain.empty()) {
        size_t last = plain.size() - 1;
        while (last > 0 && (static_cast<unsigned char>(plain[last]) & 0xC0) == 0x80) --last;
        size_t at = last;
        if (!unicode::is_whitespace(next_code_point(plain, &at))) break;
        plain.erase(last);
      }
    flush();
    ids.push_back(best_id);
    i += length;
    after_special = true;
  }
  flush();
  return ids;
}

Encoding BasicTokenizer::encode(const std::string& text, const std::string* pair) const {
  require_utf8(text, "tokenizer input");
  if (pair) require_utf8(*pair, "tokenizer input (pair)");
  Encoding e;
  auto add = [&](int64_t id, int64_t type) {
    e.ids.push_back(id);
    e.token_type_ids.push_back(type);
    e.tokens.push_back(display(id));
  };
  add(cls_id_, 0);
  for (int64_t id : encode_segment(text)) add(id, 0);
  add(sep_id_, 0);
  if (pair) {
    for (int64_t id : encode_segment(*pair)) add(id, 1);
    add(sep_id_, 1);
  }
  return e;
}

}  // namespace tokenizer_detail

void require_utf8(const std::string& text, const std::string& what) { tokenizer_detail::require_utf8(text, what); }

int byte_piece_value(const std::string& p) {
  const auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>' || hex(p[3]) < 0 || hex(p[4]) < 0) return -1;
  return hex(p[3]) * 16 + hex(p[4]);
}

std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = tokenizer_detail::utf8_length_at(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

namespace {
/// The folder of `path`: itself when it is a directory, else its parent (a weights file).
fs::path model_folder(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path;
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}
}  // namespace

bool has_tokenizer(const std::string& model_dir) {
  const fs::path dir = model_folder(model_dir);
  std::error_code ec;
  return fs::exists(dir / "spm.model", ec) || (fs::exists(dir / "vocab.json", ec) && fs::exists(dir / "merges.txt", ec)) ||
         fs::exists(dir / "tokenizer.json", ec) || fs::exists(dir / "vocab.txt", ec);
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir) {
  const fs::path dir = model_folder(model_dir);
  std::error_code ec;
  if (fs::exists(dir / "spm.model", ec)) return tokenizer_detail::load_sentencepiece(dir.string());
  if (fs::exists(dir / "vocab.json", ec) && fs::exists(dir / "merges.txt", ec))
    return tokenizer_detail::load_gpt2_bpe(dir.string());
  if (fs::exists(dir / "tokenizer.json", ec)) return tokenizer_detail::load_tokenizer_json(dir.string());
  if (fs::exists(dir / "vocab.txt", ec)) return tokenizer_detail::load_bert_vocab(dir.string());
  throw Error(dir.string() + ": no tokenizer (expected spm.model, vocab.json + merges.txt, tokenizer.json, or vocab.txt)");
}

void check_tokenizer_fits_model(const Tokenizer& tokenizer, int64_t model_vocab_size, const std::string& model_dir) {
  // vocab_size() is one past the highest id of the vocabulary and of every added token.
  int64_t highest = tokenizer.vocab_size() - 1;
  for (int64_t id : {tokenizer.mask_id(), tokenizer.cls_id(), tokenizer.sep_id(), tokenizer.pad_id(), tokenizer.unk_id()})
    highest = std::max(highest, id);
  if (highest >= model_vocab_size)
    throw Error(model_dir + ": the " + tokenizer.kind() + " tokenizer gives ids up to " + std::to_string(highest) +
                " but the model's vocab_size is " + std::to_string(model_vocab_size) +
                " (tokenizer and weights do not belong together)");
}

std::unique_ptr<Tokenizer> load_tokenizer_for_model(const std::string& model_dir, int64_t model_vocab_size) {
  auto tokenizer = load_tokenizer(model_dir);
  check_tokenizer_fits_model(*tokenizer, model_vocab_size, model_folder(model_dir).string());
  return tokenizer;
}

}  // namespace deberta
