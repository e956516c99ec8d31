// tokenizer_pipeline.cpp — the normalizers, pre-tokenizers and display decoders of tokenizer.json
// (tokenizer_pipeline.h), each as Hugging Face's tokenizers library defines it (normalizers/*.rs,
// pre_tokenizers/*.rs, decoders/*.rs, and NormalizedString::split for the split behaviours).
#include "io/tokenizer_pipeline.h"

#include "io/tokenizer_unicode.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace deberta::tokenizer_detail {

namespace {

using json = nlohmann::json;
namespace uc = unicode;

// ---------------------------------------------------------------------------------------------
// Reading fields

std::string type_of(const json& node, const std::string& source, const std::string& what) {
  if (!node.is_object() || !node.contains("type") || !node["type"].is_string())
    throw Error(source + ": " + what + " without a \"type\" string");
  return node["type"].get<std::string>();
}

bool bool_field(const json& node, const char* key, bool fallback, const std::string& where) {
  if (!node.contains(key) || node[key].is_null()) return fallback;
  if (!node[key].is_boolean()) throw Error(where + ": \"" + key + "\" must be true or false");
  return node[key].get<bool>();
}

/// Refuses a component without a field the library's reader requires (it refuses the whole file
/// then: "missing field `invert`"), where ours would take a default and give ids the library
/// never gives (issue 59, item 2).
void require_fields(const json& node, std::initializer_list<const char*> keys, const std::string& where) {
  for (const char* key : keys)
    if (!node.contains(key))
      throw Error(where + ": \"" + key + "\" is missing (Hugging Face's tokenizers library refuses the file without it)");
}

std::string string_field(const json& node, const char* key, const std::string& fallback, const std::string& where) {
  if (!node.contains(key) || node[key].is_null()) return fallback;
  if (!node[key].is_string()) throw Error(where + ": \"" + key + "\" must be a string");
  const std::string s = node[key].get<std::string>();
  if (!is_utf8(s)) throw Error(where + ": \"" + key + "\" is not valid UTF-8");
  return s;
}

/// A one-character field (Metaspace's replacement, Strip's content).
char32_t char_field(const json& node, const char* key, char32_t fallback, const std::string& where) {
  if (!node.contains(key) || node[key].is_null()) return fallback;
  const std::string s = string_field(node, key, "", where);
  const NormText t = NormText::from_utf8(s, 0);
  if (t.chars.size() != 1) throw Error(where + ": \"" + key + "\" must be one character");
  return t.chars[0];
}

std::u32string to_u32(const std::string& utf8) { return NormText::from_utf8(utf8, 0).chars; }

std::string to_utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) out += encode_utf8(c);
  return out;
}

/// A pattern field {"String": s} or {"Regex": r} (Replace, Split).
struct Pattern {
  std::u32string literal;        ///< the String pattern
  std::unique_ptr<Regex> regex;  ///< the Regex pattern (PCRE2), null for a literal
  bool space_runs = false;       ///< the Regex " {2,}" (SentencePiece's whitespace collapse), matched here
                                 ///< without a regex engine so that the web edition reads it

  static Pattern read(const json& node, const std::string& where) {
    Pattern p;
    if (!node.contains("pattern") || !node["pattern"].is_object() || node["pattern"].size() != 1)
      throw Error(where + ": \"pattern\" must be {\"String\": …} or {\"Regex\": …}");
    const json& pat = node["pattern"];
    if (pat.contains("String")) {
      const std::string s = string_field(pat, "String", "", where + " pattern");
      if (s.empty()) throw Error(where + ": an empty String pattern is not supported");
      p.literal = to_u32(s);
    } else if (pat.contains("Regex")) {
      const std::string r = string_field(pat, "Regex", "", where + " pattern");
      if (r == " {2,}") p.space_runs = true;
      else p.regex = Regex::compile(r, where);
    } else {
      throw Error(where + ": \"pattern\" must be {\"String\": …} or {\"Regex\": …}");
    }
    return p;
  }

  /// Non-overlapping matches in `s` as character ranges [begin, end), left to right.
  std::vector<std::pair<size_t, size_t>> find(const std::u32string& s) const {
    std::vector<std::pair<size_t, size_t>> out;
    if (space_runs) {
      for (size_t k = 0; k < s.size();) {
        size_t e = k;
        while (e < s.size() && s[e] == U' ') ++e;
        if (e - k >= 2) out.emplace_back(k, e);
        k = e > k ? e : k + 1;
      }
      return out;
    }
    if (!regex) {
      for (size_t at = s.find(literal); at != std::u32string::npos; at = s.find(literal, at + literal.size()))
        out.emplace_back(at, at + literal.size());
      return out;
    }
    // Byte offsets of the regex back to characters.
    std::string utf8;
    std::vector<size_t> char_at_byte;
    for (size_t k = 0; k < s.size(); ++k) {
      const std::string c = encode_utf8(s[k]);
      char_at_byte.insert(char_at_byte.end(), c.size(), k);
      utf8 += c;
    }
    char_at_byte.push_back(s.size());
    for (const auto& [b, e] : regex->find_all(utf8)) out.emplace_back(char_at_byte[b], char_at_byte[e]);
    return out;
  }
};

// ---------------------------------------------------------------------------------------------
// Unicode normalization forms (UAX #15) over NormText, keeping each character's origin.

/// Full decomposition then canonical reordering (a stable sort of each run of non-starters by
/// combining class).
void decompose(NormText* t, bool compat) {
  NormText out;
  std::u32string d;
  for (size_t k = 0; k < t->chars.size(); ++k) {
    d.clear();
    uc::append_decomposition(t->chars[k], compat, &d);
    for (char32_t c : d) {
      out.chars.push_back(c);
      out.origin.push_back(t->origin[k]);
    }
  }
  for (size_t k = 0; k < out.chars.size();) {
    if (uc::combining_class(out.chars[k]) == 0) {
      ++k;
      continue;
    }
    size_t end = k;
    while (end < out.chars.size() && uc::combining_class(out.chars[end]) != 0) ++end;
    std::vector<std::pair<char32_t, size_t>> run;
    for (size_t j = k; j < end; ++j) run.emplace_back(out.chars[j], out.origin[j]);
    std::stable_sort(run.begin(), run.end(), [](const auto& a, const auto& b) {
      return uc::combining_class(a.first) < uc::combining_class(b.first);
    });
    for (size_t j = k; j < end; ++j) out.chars[j] = run[j - k].first, out.origin[j] = run[j - k].second;
    k = end;
  }
  *t = std::move(out);
}

/// Canonical composition of decomposed, reordered text: each character joins the last starter
/// unless a character between them has a combining class ≥ its own (it is blocked).
void compose(NormText* t) {
  if (t->chars.empty()) return;
  NormText out;
  size_t starter = std::u32string::npos;  // index in out of the last starter
  for (size_t k = 0; k < t->chars.size(); ++k) {
    const char32_t c = t->chars[k];
    const int cls = uc::combining_class(c);
    if (starter != std::u32string::npos) {
      // After reordering, the last character kept since the starter has the highest class among
      // them: c is blocked unless it follows the starter directly or that class is lower than its own.
      const bool adjacent = out.chars.size() == starter + 1;
      const int last = uc::combining_class(out.chars.back());
      if (adjacent || (last != 0 && last < cls)) {
        if (const char32_t composite = uc::compose_pair(out.chars[starter], c)) {
          out.chars[starter] = composite;
          continue;
        }
      }
    }
    if (cls == 0) starter = out.chars.size();
    out.chars.push_back(c);
    out.origin.push_back(t->origin[k]);
  }
  *t = std::move(out);
}

// ---------------------------------------------------------------------------------------------
// Normalizers

class SequenceNormalizer final : public Normalizer {
 public:
  std::vector<std::unique_ptr<Normalizer>> steps;
  void apply(NormText* t) const override {
    for (const auto& s : steps) s->apply(t);
  }
};

/// BertNormalizer (normalizers/bert.rs): clean_text, handle_chinese_chars, strip_accents,
/// lowercase, in that order.
class BertNormalizer final : public Normalizer {
 public:
  BertNormalizer(bool clean, bool chinese, bool strip, bool lower) : clean_(clean), chinese_(chinese), strip_(strip), lower_(lower) {}
  void apply(NormText* t) const override {
    if (clean_ || chinese_) {
      NormText out;
      for (size_t k = 0; k < t->chars.size(); ++k) {
        char32_t c = t->chars[k];
        if (clean_) {
          if (c == 0 || c == 0xFFFD || uc::is_bert_control(c)) continue;
          if (uc::is_bert_whitespace(c)) c = U' ';
        }
        const bool pad = chinese_ && uc::is_chinese_char(c);
        for (char32_t x : pad ? std::u32string{U' ', c, U' '} : std::u32string{c}) {
          out.chars.push_back(x);
          out.origin.push_back(t->origin[k]);
        }
      }
      *t = std::move(out);
    }
    if (strip_) {
      decompose(t, false);
      NormText out;
      for (size_t k = 0; k < t->chars.size(); ++k)
        if (!uc::is_nonspacing_mark(t->chars[k])) out.chars.push_back(t->chars[k]), out.origin.push_back(t->origin[k]);
      *t = std::move(out);
    }
    if (lower_) lowercase(t);
  }
  static void lowercase(NormText* t) {
    NormText out;
    std::u32string l;
    for (size_t k = 0; k < t->chars.size(); ++k) {
      l.clear();
      uc::append_lowercase(t->chars[k], &l);
      for (char32_t c : l) out.chars.push_back(c), out.origin.push_back(t->origin[k]);
    }
    *t = std::move(out);
  }

 private:
  bool clean_, chinese_, strip_, lower_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  void apply(NormText* t) const override { BertNormalizer::lowercase(t); }
};

/// NFD, NFKD (decompose), NFC, NFKC (decompose, then compose).
class UnicodeForm final : public Normalizer {
 public:
  UnicodeForm(bool compat, bool composed) : compat_(compat), composed_(composed) {}
  void apply(NormText* t) const override {
    decompose(t, compat_);
    if (composed_) compose(t);
  }

 private:
  bool compat_, composed_;
};

/// Strip (normalizers/strip.rs): whitespace (char::is_whitespace) off either end.
class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void apply(NormText* t) const override {
    size_t b = 0, e = t->chars.size();
    if (left_)
      while (b < e && uc::is_whitespace(t->chars[b])) ++b;
    if (right_)
      while (e > b && uc::is_whitespace(t->chars[e - 1])) --e;
    t->chars = t->chars.substr(b, e - b);
    t->origin = std::vector<size_t>(t->origin.begin() + static_cast<std::ptrdiff_t>(b), t->origin.begin() + static_cast<std::ptrdiff_t>(e));
  }

 private:
  bool left_, right_;
};

/// Replace (normalizers/replace.rs): every match of the pattern becomes `content`.
class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(Pattern p, std::u32string content) : pattern_(std::move(p)), content_(std::move(content)) {}
  void apply(NormText* t) const override {
    if (t->chars.empty()) return;  // the library finds no match in empty text, not even an empty one
    const auto matches = pattern_.find(t->chars);
    if (matches.empty()) return;
    NormText out;
    size_t at = 0;
    for (const auto& [b, e] : matches) {
      for (; at < b; ++at) out.chars.push_back(t->chars[at]), out.origin.push_back(t->origin[at]);
      // The library removes the match and inserts the content (NormalizedString::replace:
      // transform_range with every new character an insertion after the removed ones), so each
      // new character takes the origin of the character before it: the match's last character
      // ("Ab" → "-" at the start is not at offset 0, "A" → "-" is: Metaspace "first" sees that;
      // issue 59, item 2). An empty match inserts after the character before it; at the start,
      // with the origin of the first character.
      const size_t from = e > b ? e - 1 : b > 0 ? b - 1 : 0;
      for (char32_t c : content_) out.chars.push_back(c), out.origin.push_back(t->origin[from]);
      at = e;
    }
    for (; at < t->chars.size(); ++at) out.chars.push_back(t->chars[at]), out.origin.push_back(t->origin[at]);
    *t = std::move(out);
  }

 private:
  Pattern pattern_;
  std::u32string content_;
};

/// Prepend (normalizers/prepend.rs): `prepend` before non-empty text.
class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::u32string p) : prepend_(std::move(p)) {}
  void apply(NormText* t) const override {
    if (t->chars.empty()) return;
    t->chars.insert(0, prepend_);
    t->origin.insert(t->origin.begin(), prepend_.size(), t->origin[0]);
  }

 private:
  std::u32string prepend_;
};

/// Base64 (RFC 4648, standard alphabet, "=" padding) to bytes. Errors name `where`.
std::string decode_base64(const std::string& text, const std::string& where) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  size_t k = 0;
  for (; k < text.size() && text[k] != '='; ++k) {
    const int v = value(text[k]);
    if (v < 0) throw Error(where + ": precompiled_charsmap is not base64");
    bits = (bits << 6) | static_cast<uint32_t>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  for (; k < text.size(); ++k)
    if (text[k] != '=') throw Error(where + ": precompiled_charsmap is not base64");
  return out;
}

/// Precompiled (normalizers/precompiled.rs, the spm_precompiled crate): SentencePiece's compiled
/// normalization rules — a darts-clone double-array trie over UTF-8 byte strings whose values point
/// into a blob of NUL-terminated replacements. The text is walked by extended grapheme clusters:
/// a cluster shorter than 6 bytes whose bytes start with a key is replaced whole by the shortest
/// such key's replacement; otherwise each character that starts with a key is replaced alone.
class PrecompiledNormalizer final : public Normalizer {
 public:
  PrecompiledNormalizer(const std::string& base64, const std::string& where) {
    const std::string bytes = decode_base64(base64, where);
    if (bytes.size() < 4) throw Error(where + ": precompiled_charsmap is shorter than its header");
    uint32_t trie_bytes = 0;
    for (int k = 3; k >= 0; --k) trie_bytes = (trie_bytes << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(k)]);
    if (trie_bytes % 4 != 0 || trie_bytes > bytes.size() - 4 || trie_bytes == 0)
      throw Error(where + ": precompiled_charsmap's trie does not fit the map");
    units_.resize(trie_bytes / 4);
    for (size_t u = 0; u < units_.size(); ++u)
      for (int k = 3; k >= 0; --k)
        units_[u] = (units_[u] << 8) | static_cast<unsigned char>(bytes[4 + 4 * u + static_cast<size_t>(k)]);
    blob_ = bytes.substr(4 + trie_bytes);
    if (!is_utf8(blob_)) throw Error(where + ": precompiled_charsmap's replacements are not UTF-8");
  }

  void apply(NormText* t) const override {
    NormText out;
    size_t at = 0;
    auto append = [&](const std::string& utf8, size_t origin) {
      for (char32_t c : NormText::from_utf8(utf8, 0).chars) out.chars.push_back(c), out.origin.push_back(origin);
    };
    for (size_t length : uc::grapheme_lengths(t->chars)) {
      const std::string cluster = to_utf8(t->chars.substr(at, length));
      std::string replacement;
      if (cluster.size() < 6 && transform(cluster, &replacement)) {
        append(replacement, t->origin[at]);
      } else {
        for (size_t k = at; k < at + length; ++k) {
          if (transform(encode_utf8(t->chars[k]), &replacement)) append(replacement, t->origin[k]);
          else out.chars.push_back(t->chars[k]), out.origin.push_back(t->origin[k]);
        }
      }
      at += length;
    }
    *t = std::move(out);
  }

 private:
  static bool has_leaf(uint32_t u) { return (u >> 8) & 1; }
  static uint32_t value(uint32_t u) { return u & 0x7FFFFFFFu; }
  static uint32_t label(uint32_t u) { return u & 0x800000FFu; }
  static size_t offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

  /// The replacement of the shortest key that starts `chunk` (common prefix search, first result).
  bool transform(const std::string& chunk, std::string* replacement) const {
    size_t node = offset(units_[0]);
    for (unsigned char byte : chunk) {
      node ^= byte;
      if (node >= units_.size()) return false;
      const uint32_t unit = units_[node];
      if (label(unit) != byte) return false;
      node ^= offset(unit);
      if (node >= units_.size()) return false;
      if (has_leaf(unit)) {
        const size_t start = value(units_[node]);
        if (start >= blob_.size()) return false;
        const size_t end = blob_.find('\0', start);
        *replacement = blob_.substr(start, (end == std::string::npos ? blob_.size() : end) - start);
        return is_utf8(*replacement);
      }
    }
    return false;
  }

  std::vector<uint32_t> units_;
  std::string blob_;
};

std::unique_ptr<Normalizer> read_normalizer_node(const json& node, const std::string& source, bool in_sequence) {
  const std::string type = type_of(node, source, "normalizer");
  const std::string where = source + ": normalizer " + type;
  if (type == "Sequence") {
    if (!node.contains("normalizers") || !node["normalizers"].is_array())
      throw Error(where + ": \"normalizers\" must be a list");
    auto seq = std::make_unique<SequenceNormalizer>();
    for (const auto& child : node["normalizers"]) seq->steps.push_back(read_normalizer_node(child, source, true));
    return seq;
  }
  if (type == "BertNormalizer") {
    require_fields(node, {"clean_text", "handle_chinese_chars", "lowercase"}, where);
    const bool lower = bool_field(node, "lowercase", true, where);
    return std::make_unique<BertNormalizer>(bool_field(node, "clean_text", true, where),
                                            bool_field(node, "handle_chinese_chars", true, where),
                                            bool_field(node, "strip_accents", lower, where), lower);
  }
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "NFD") return std::make_unique<UnicodeForm>(false, false);
  if (type == "NFKD") return std::make_unique<UnicodeForm>(true, false);
  if (type == "NFC") return std::make_unique<UnicodeForm>(false, true);
  if (type == "NFKC") return std::make_unique<UnicodeForm>(true, true);
  if (type == "Strip") {
    require_fields(node, {"strip_left", "strip_right"}, where);
    return std::make_unique<StripNormalizer>(bool_field(node, "strip_left", true, where), bool_field(node, "strip_right", true, where));
  }
  // Bounded work (issue 59, class 6): a Prepend of 20,000 characters, added before each of a few
  // thousand segments of a 24 KB text, reached 2.26 GB. Real files prepend or replace with "▁".
  auto bounded = [&](const char* key) {
    const std::string text = string_field(node, key, "", where);
    if (text.size() > kMaxInsertedBytes)
      throw Error(where + ": \"" + key + "\" is " + std::to_string(text.size()) + " bytes long, more than the limit of " +
                  std::to_string(kMaxInsertedBytes) + " bytes");
    return to_u32(text);
  };
  if (type == "Replace") return std::make_unique<ReplaceNormalizer>(Pattern::read(node, where), bounded("content"));
  if (type == "Prepend") return std::make_unique<PrependNormalizer>(bounded("prepend"));
  if (type == "Precompiled") {
    if (!node.contains("precompiled_charsmap") || !node["precompiled_charsmap"].is_string())
      throw Error(where + ": \"precompiled_charsmap\" must be a base64 string");
    return std::make_unique<PrecompiledNormalizer>(node["precompiled_charsmap"].get<std::string>(), where);
  }
  throw Error(source + ": normalizer type '" + type + "'" + (in_sequence ? " inside Sequence" : "") + " is not supported");
}

// ---------------------------------------------------------------------------------------------
// Splitting words (NormalizedString::split and the patterns of pattern.rs)

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior read_behavior(const json& node, Behavior fallback, const std::string& where) {
  const std::string b = string_field(node, "behavior", "", where);
  if (b.empty()) return fallback;
  if (b == "Removed") return Behavior::Removed;
  if (b == "Isolated") return Behavior::Isolated;
  if (b == "MergedWithPrevious") return Behavior::MergedWithPrevious;
  if (b == "MergedWithNext") return Behavior::MergedWithNext;
  if (b == "Contiguous") return Behavior::Contiguous;
  throw Error(where + ": behavior \"" + b + "\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous");
}

struct Span {
  size_t begin, end;
  bool match;
};

/// Covers `n` characters with the matches (sorted, non-overlapping) and the stretches between.
std::vector<Span> cover(size_t n, const std::vector<std::pair<size_t, size_t>>& matches) {
  std::vector<Span> out;
  if (n == 0) return {{0, 0, false}};
  size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (prev != b) out.push_back({prev, b, false});
    out.push_back({b, e, true});
    prev = e;
  }
  if (prev != n) out.push_back({prev, n, false});
  return out;
}

/// Spans of single characters for which `pred` holds, and the stretches between.
template <typename Pred>
std::vector<Span> char_spans(const std::u32string& s, Pred pred) {
  std::vector<std::pair<size_t, size_t>> m;
  for (size_t k = 0; k < s.size(); ++k)
    if (pred(s[k])) m.emplace_back(k, k + 1);
  return cover(s.size(), m);
}

/// Applies a split behaviour (NormalizedString::split) to one word; empty pieces are dropped and a
/// slice's start is the origin of its first character.
void split_word(const Word& w, std::vector<Span> spans, Behavior behavior, std::vector<Word>* out) {
  std::vector<Span> keep;  // match = "remove"
  switch (behavior) {
    case Behavior::Isolated:
      for (const Span& s : spans) keep.push_back({s.begin, s.end, false});
      break;
    case Behavior::Removed:
      keep = spans;
      break;
    case Behavior::Contiguous: {
      bool previous = false;
      for (const Span& s : spans) {
        if (s.match == previous && !keep.empty()) keep.back().end = s.end;
        else keep.push_back({s.begin, s.end, false});
        previous = s.match;
      }
      break;
    }
    case Behavior::MergedWithPrevious: {
      bool previous = false;
      for (const Span& s : spans) {
        if (s.match && !previous && !keep.empty()) keep.back().end = s.end;
        else keep.push_back({s.begin, s.end, false});
        previous = s.match;
      }
      break;
    }
    case Behavior::MergedWithNext: {
      bool previous = false;
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->match && !previous && !keep.empty()) keep.back().begin = it->begin;
        else keep.push_back({it->begin, it->end, false});
        previous = it->match;
      }
      std::reverse(keep.begin(), keep.end());
      break;
    }
  }
  for (const Span& s : keep) {
    if (s.match || s.end <= s.begin) continue;
    Word piece;
    piece.text.chars = w.text.chars.substr(s.begin, s.end - s.begin);
    piece.text.origin.assign(w.text.origin.begin() + static_cast<std::ptrdiff_t>(s.begin),
                             w.text.origin.begin() + static_cast<std::ptrdiff_t>(s.end));
    piece.start = piece.text.origin[0];
    out->push_back(std::move(piece));
  }
}

template <typename SpansOf>
void split_all(std::vector<Word>* words, Behavior behavior, SpansOf spans_of) {
  std::vector<Word> out;
  for (const Word& w : *words) split_word(w, spans_of(w.text.chars), behavior, &out);
  *words = std::move(out);
}

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers

class SequencePreTokenizer final : public PreTokenizer {
 public:
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  void apply(std::vector<Word>* words) const override {
    for (const auto& s : steps) s->apply(words);
  }
};

/// WhitespaceSplit: splits on whitespace, which is removed.
class WhitespaceSplit final : public PreTokenizer {
 public:
  void apply(std::vector<Word>* words) const override {
    split_all(words, Behavior::Removed, [](const std::u32string& s) { return char_spans(s, uc::is_whitespace); });
  }
};

/// Punctuation: each punctuation character split off with `behavior` (Isolated by default).
class PunctuationSplit final : public PreTokenizer {
 public:
  explicit PunctuationSplit(Behavior b) : behavior_(b) {}
  void apply(std::vector<Word>* words) const override {
    split_all(words, behavior_, [](const std::u32string& s) { return char_spans(s, uc::is_punctuation); });
  }

 private:
  Behavior behavior_;
};

/// BertPreTokenizer: WhitespaceSplit, then every punctuation character isolated.
class BertPreTokenizer final : public PreTokenizer {
 public:
  void apply(std::vector<Word>* words) const override {
    WhitespaceSplit().apply(words);
    PunctuationSplit(Behavior::Isolated).apply(words);
  }
};

/// Digits: numeric characters split off, each alone (individual_digits) or in runs.
class DigitsSplit final : public PreTokenizer {
 public:
  explicit DigitsSplit(bool individual) : individual_(individual) {}
  void apply(std::vector<Word>* words) const override {
    split_all(words, individual_ ? Behavior::Isolated : Behavior::Contiguous,
              [](const std::u32string& s) { return char_spans(s, uc::is_numeric); });
  }

 private:
  bool individual_;
};

/// Split: the matches of a String or Regex pattern (or, inverted, the text between them) split
/// with `behavior`.
class PatternSplit final : public PreTokenizer {
 public:
  PatternSplit(Pattern p, Behavior b, bool invert) : pattern_(std::move(p)), behavior_(b), invert_(invert) {}
  void apply(std::vector<Word>* words) const override {
    split_all(words, behavior_, [&](const std::u32string& s) {
      auto spans = cover(s.size(), pattern_.find(s));
      if (invert_)
        for (Span& sp : spans) sp.match = !sp.match;
      return spans;
    });
  }

 private:
  Pattern pattern_;
  Behavior behavior_;
  bool invert_;
};

enum class Prepend { Always, First, Never };

/// Metaspace (pre_tokenizers/metaspace.rs): spaces become the replacement; the replacement is
/// prepended to a word that does not start with it (always; first: only to the word at original
/// offset 0; never); then, with split, each word splits before every replacement.
class MetaspaceSplit final : public PreTokenizer {
 public:
  MetaspaceSplit(char32_t r, Prepend p, bool split) : replacement_(r), prepend_(p), split_(split) {}
  void apply(std::vector<Word>* words) const override {
    std::vector<Word> out;
    for (Word w : *words) {
      for (char32_t& c : w.text.chars)
        if (c == U' ') c = replacement_;
      const bool starts = !w.text.chars.empty() && w.text.chars[0] == replacement_;
      if (!w.text.chars.empty() && !starts &&
          (prepend_ == Prepend::Always || (prepend_ == Prepend::First && w.start == 0))) {
        w.text.chars.insert(w.text.chars.begin(), replacement_);
        w.text.origin.insert(w.text.origin.begin(), w.text.origin[0]);
      }
      if (split_) {
        const char32_t r = replacement_;
        split_word(w, char_spans(w.text.chars, [r](char32_t c) { return c == r; }), Behavior::MergedWithNext, &out);
      } else if (!w.text.chars.empty()) {
        out.push_back(std::move(w));
      }
    }
    *words = std::move(out);
  }

 private:
  char32_t replacement_;
  Prepend prepend_;
  bool split_;
};

std::unique_ptr<PreTokenizer> read_pre_tokenizer_node(const json& node, const std::string& source, bool in_sequence) {
  const std::string type = type_of(node, source, "pre_tokenizer");
  const std::string where = source + ": pre_tokenizer " + type;
  if (type == "Sequence") {
    if (!node.contains("pretokenizers") || !node["pretokenizers"].is_array())
      throw Error(where + ": \"pretokenizers\" must be a list");
    auto seq = std::make_unique<SequencePreTokenizer>();
    for (const auto& child : node["pretokenizers"]) seq->steps.push_back(read_pre_tokenizer_node(child, source, true));
    return seq;
  }
  if (type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Punctuation") return std::make_unique<PunctuationSplit>(read_behavior(node, Behavior::Isolated, where));
  if (type == "Digits") {
    require_fields(node, {"individual_digits"}, where);
    return std::make_unique<DigitsSplit>(bool_field(node, "individual_digits", false, where));
  }
  if (type == "Split") {
    if (!node.contains("behavior")) throw Error(where + ": \"behavior\" is missing");
    require_fields(node, {"invert"}, where);
    return std::make_unique<PatternSplit>(Pattern::read(node, where), read_behavior(node, Behavior::Isolated, where),
                                          bool_field(node, "invert", false, where));
  }
  if (type == "Metaspace") {
    const char32_t r = char_field(node, "replacement", U'\u2581', where);
    Prepend p = bool_field(node, "add_prefix_space", true, where) ? Prepend::Always : Prepend::Never;
    const std::string scheme = string_field(node, "prepend_scheme", "", where);
    if (scheme == "always") p = Prepend::Always;
    else if (scheme == "first") p = Prepend::First;
    else if (scheme == "never") p = Prepend::Never;
    else if (!scheme.empty()) throw Error(where + ": prepend_scheme \"" + scheme + "\" is not always, first or never");
    require_fields(node, {"replacement"}, where);
    return std::make_unique<MetaspaceSplit>(r, p, bool_field(node, "split", true, where));
  }
  throw Error(source + ": pre_tokenizer type '" + type + "'" + (in_sequence ? " inside Sequence" : "") + " is not supported");
}

// ---------------------------------------------------------------------------------------------
// Display decoders (one piece, not the first of its text)

class SequenceDecoder final : public DisplayDecoder {
 public:
  std::vector<std::unique_ptr<DisplayDecoder>> steps;
  std::string display(std::string piece) const override {
    for (const auto& s : steps) piece = s->display(std::move(piece));
    return piece;
  }
};

/// Metaspace: the replacement reads as a space.
class MetaspaceDisplay final : public DisplayDecoder {
 public:
  explicit MetaspaceDisplay(std::string r) : replacement_(std::move(r)) {}
  std::string display(std::string p) const override {
    for (size_t at = p.find(replacement_); at != std::string::npos; at = p.find(replacement_, at + 1)) p.replace(at, replacement_.size(), " ");
    return p;
  }

 private:
  std::string replacement_;
};

/// WordPiece: a continuation drops its prefix, a word start gains a space.
class WordPieceDisplay final : public DisplayDecoder {
 public:
  explicit WordPieceDisplay(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string display(std::string p) const override {
    if (!prefix_.empty() && p.compare(0, prefix_.size(), prefix_) == 0) return p.substr(prefix_.size());
    return " " + p;
  }

 private:
  std::string prefix_;
};

/// ByteFallback: "<0xNN>" of an ASCII byte reads as that character; a byte of a longer UTF-8
/// character stays "<0xNN>" (alone it is no character).
class ByteFallbackDisplay final : public DisplayDecoder {
 public:
  std::string display(std::string p) const override {
    const int byte = byte_piece_value(p);
    if (byte >= 0 && byte < 0x80) return std::string(1, static_cast<char>(byte));
    return p;
  }
};

/// Fuse joins the pieces of a text: nothing to do for one piece.
class FuseDisplay final : public DisplayDecoder {
 public:
  std::string display(std::string p) const override { return p; }
};

/// Strip: up to `start` leading and `stop` trailing copies of `content` removed.
class StripDisplay final : public DisplayDecoder {
 public:
  StripDisplay(char32_t c, size_t start, size_t stop) : content_(c), start_(start), stop_(stop) {}
  std::string display(std::string p) const override {
    const std::u32string s = to_u32(p);
    size_t b = 0, e = s.size();
    while (b < std::min(start_, s.size()) && s[b] == content_) ++b;
    for (size_t i = 0; i < stop_ && e > b && s[e - 1] == content_; ++i) --e;
    return to_utf8(s.substr(b, e - b));
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

/// Replace: every match of a String pattern becomes `content`.
class ReplaceDisplay final : public DisplayDecoder {
 public:
  ReplaceDisplay(Pattern p, std::u32string c) : pattern_(std::move(p)), content_(std::move(c)) {}
  std::string display(std::string piece) const override {
    NormText t = NormText::from_utf8(piece, 0);
    ReplaceNormalizer(Pattern{pattern_.literal, nullptr}, content_).apply(&t);
    return t.utf8();
  }

 private:
  Pattern pattern_;
  std::u32string content_;
};

size_t size_field(const json& node, const char* key, const std::string& where) {
  if (!node.contains(key) || !node[key].is_number_unsigned()) throw Error(where + ": \"" + key + "\" must be a non-negative integer");
  return node[key].get<size_t>();
}

std::unique_ptr<DisplayDecoder> read_decoder_node(const json& node, const std::string& source, bool in_sequence) {
  const std::string type = type_of(node, source, "decoder");
  const std::string where = source + ": decoder " + type;
  if (type == "Sequence") {
    if (!node.contains("decoders") || !node["decoders"].is_array()) throw Error(where + ": \"decoders\" must be a list");
    auto seq = std::make_unique<SequenceDecoder>();
    for (const auto& child : node["decoders"]) seq->steps.push_back(read_decoder_node(child, source, true));
    return seq;
  }
  if (type == "Metaspace") return metaspace_display(encode_utf8(char_field(node, "replacement", U'\u2581', where)));
  if (type == "WordPiece") return wordpiece_display(string_field(node, "prefix", "##", where));
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDisplay>();
  if (type == "Fuse") return std::make_unique<FuseDisplay>();
  if (type == "Strip")
    return std::make_unique<StripDisplay>(char_field(node, "content", U' ', where), size_field(node, "start", where),
                                          size_field(node, "stop", where));
  if (type == "Replace") {
    Pattern p = Pattern::read(node, where);
    if (p.regex || p.space_runs) throw Error(source + ": decoder Replace with a Regex pattern is not supported");
    return std::make_unique<ReplaceDisplay>(std::move(p), to_u32(string_field(node, "content", "", where)));
  }
  throw Error(source + ": decoder type '" + type + "'" + (in_sequence ? " inside Sequence" : "") + " is not supported");
}

}  // namespace

// ---------------------------------------------------------------------------------------------

NormText NormText::from_utf8(const std::string& utf8, size_t base) {
  NormText t;
  for (size_t pos = 0; pos < utf8.size();) {
    const size_t at = pos;
    t.chars.push_back(next_code_point(utf8, &pos));
    t.origin.push_back(base + at);
  }
  return t;
}

std::string NormText::utf8() const { return to_utf8(chars); }

std::unique_ptr<Normalizer> read_normalizer(const json& node, const std::string& source) {
  return node.is_null() ? nullptr : read_normalizer_node(node, source, false);
}

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const json& node, const std::string& source) {
  return node.is_null() ? nullptr : read_pre_tokenizer_node(node, source, false);
}

std::unique_ptr<DisplayDecoder> read_decoder(const json& node, const std::string& source) {
  return node.is_null() ? nullptr : read_decoder_node(node, source, false);
}

std::unique_ptr<DisplayDecoder> metaspace_display(const std::string& replacement) {
  return std::make_unique<MetaspaceDisplay>(replacement);
}

std::unique_ptr<DisplayDecoder> wordpiece_display(const std::string& prefix) {
  return std::make_unique<WordPieceDisplay>(prefix);
}

std::unique_ptr<Normalizer> bert_normalizer(bool clean_text, bool handle_chinese_chars, bool strip_accents, bool lowercase) {
  return std::make_unique<BertNormalizer>(clean_text, handle_chinese_chars, strip_accents, lowercase);
}

std::unique_ptr<PreTokenizer> bert_pre_tokenizer() { return std::make_unique<BertPreTokenizer>(); }

std::vector<int64_t> PipelineTokenizer::encode_plain_at(const std::string& text, bool at_start) const {
  // The library's segments between added tokens keep their offset in the input; only the first
  // can start at 0 (Metaspace "first"). A later segment's offsets here start at 1: all that
  // matters is that they are not 0.
  Word whole{NormText::from_utf8(text, at_start ? 0 : 1), 0};
  if (normalizer_) normalizer_->apply(&whole.text);
  std::vector<Word> words;
  if (!whole.text.chars.empty()) {
    // The library slices each segment once more after normalizing (to find normalized added
    // tokens), so even an unsplit word starts where its first character came from: "\tx" stripped
    // to "x" is not at offset 0.
    whole.start = whole.text.origin[0];
    words.push_back(std::move(whole));
  }
  if (pre_tokenizer_) pre_tokenizer_->apply(&words);
  std::vector<int64_t> ids;
  for (const Word& w : words)
    if (!w.text.chars.empty()) tokenize_word(w.text.utf8(), &ids);
  return ids;
}

}  // namespace deberta::tokenizer_detail
