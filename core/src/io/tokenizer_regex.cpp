// tokenizer_regex.cpp — the regular expressions of tokenizer.json's Replace and Split patterns,
// through PCRE2 (UTF + Unicode properties). Hugging Face's library compiles them with Oniguruma;
// the pattern syntax tokenizer.json files use (classes, \s, \p{…}, quantifiers, alternation) reads
// the same in both once scripts and word characters are spelt as Oniguruma means them
// (as_oniguruma). The web edition has no PCRE2 and refuses them (viewer/web/page/web_io_unavailable.cpp).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "io/tokenizer_pipeline.h"

#include <pcre2.h>

namespace deberta::tokenizer_detail {

namespace {

pcre2_code* compile_pcre2(const std::string& pattern, int* err, PCRE2_SIZE* offset) {
  return pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, err, offset,
                       nullptr);
}

/// Oniguruma's word characters: Alphabetic (letters, letter numbers such as "Ⅻ", circled letters),
/// marks, decimal digits and connector punctuation; a \w outside a class also takes Latin-1's
/// "¹²³¼½¾" (read off the library). PCRE2 10.42's \w in UCP mode is letters, numbers and "_" only
/// (it leaves out U+FE0F and "‿", takes in "①").
constexpr const char* kWordInClass = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}";
constexpr const char* kWordClass = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}\\x{BD}\\x{BE}";

/// `pattern` rewritten so that PCRE2 reads it as Oniguruma (the library's engine) does:
///   - \p{Name} / \P{Name} of a script becomes \p{sc:Name}: Oniguruma's \p{Katakana} is the Script
///     property, PCRE2 (10.40 on) would take Script_Extensions, which also hold shared characters
///     such as "ー" (U+30FC, Script Common). General categories (\p{L}, \p{Nd}, …) stay.
///   - \w, \W (outside a class), \w (inside one), \b and \B use Oniguruma's word characters.
std::string as_oniguruma(const std::string& pattern) {
  const std::string word = std::string("[") + kWordClass + "]";
  std::string out;
  bool in_class = false;
  for (size_t at = 0; at < pattern.size();) {
    const char c = pattern[at];
    if (c == '\\' && at + 1 < pattern.size()) {
      const char next = pattern[at + 1];
      const size_t close = pattern.find('}', at);
      if ((next == 'p' || next == 'P') && at + 2 < pattern.size() && pattern[at + 2] == '{' && close != std::string::npos) {
        std::string name = pattern.substr(at + 3, close - at - 3);
        const bool negated = !name.empty() && name[0] == '^';
        if (negated) name.erase(0, 1);
        int err = 0;
        PCRE2_SIZE offset = 0;
        const std::string probe = "\\p{sc:" + name + "}";
        pcre2_code* script = name.find(':') == std::string::npos ? compile_pcre2(probe, &err, &offset) : nullptr;
        if (script) {
          pcre2_code_free(script);
          out += std::string("\\") + next + "{" + (negated ? "^" : "") + "sc:" + name + "}";
        } else {
          out.append(pattern, at, close + 1 - at);
        }
        at = close + 1;
        continue;
      }
      if (next == 'w') out += in_class ? std::string(kWordInClass) : word;
      else if (next == 'W' && !in_class) out += std::string("[^") + kWordClass + "]";
      else if (next == 'b' && !in_class) out += "(?:(?<=" + word + ")(?!" + word + ")|(?<!" + word + ")(?=" + word + "))";
      else if (next == 'B' && !in_class) out += "(?:(?<=" + word + ")(?=" + word + ")|(?<!" + word + ")(?!" + word + "))";
      else out.append(pattern, at, 2);  // any other escape stays as it is
      at += 2;
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      ++at;
      if (at < pattern.size() && pattern[at] == '^') out += pattern[at++];
      if (at < pattern.size() && pattern[at] == ']') out += pattern[at++];  // a leading ']' is literal
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
    ++at;
  }
  return out;
}

class Pcre2Regex final : public Regex {
 public:
  Pcre2Regex(const std::string& pattern, const std::string& where) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    code_ = compile_pcre2(as_oniguruma(pattern), &err, &offset);
    if (!code_) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(err, message, sizeof message);
      throw Error(where + ": regex /" + pattern + "/ does not compile (" + reinterpret_cast<const char*>(message) +
                  " at offset " + std::to_string(offset) + ")");
    }
  }
  ~Pcre2Regex() override { pcre2_code_free(code_); }
  Pcre2Regex(const Pcre2Regex&) = delete;
  Pcre2Regex& operator=(const Pcre2Regex&) = delete;

  std::vector<std::pair<size_t, size_t>> find_all(const std::string& text) const override {
    std::vector<std::pair<size_t, size_t>> out;
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(code_, nullptr);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    auto one_character_on = [&](size_t at) { return at + std::max<size_t>(1, utf8_length_at(text, at)); };
    bool matched = false;
    size_t last_end = 0;
    for (size_t at = 0; at <= text.size();) {
      const int rc = pcre2_match(code_, subject, text.size(), at, PCRE2_NO_UTF_CHECK, match, nullptr);
      if (rc <= 0) break;
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
      const size_t begin = ov[0], end = ov[1];
      if (begin == end && matched && begin == last_end) {  // empty, right where the last match ended: skipped
        if (begin >= text.size()) break;
        at = one_character_on(begin);
        continue;
      }
      out.emplace_back(begin, end);
      matched = true;
      last_end = end;
      if (end > begin) {
        at = end;
      } else {  // an empty match: the search resumes one character further
        if (end >= text.size()) break;
        at = one_character_on(end);
      }
    }
    pcre2_match_data_free(match);
    return out;
  }

 private:
  pcre2_code* code_ = nullptr;
};

}  // namespace

std::unique_ptr<Regex> Regex::compile(const std::string& pattern, const std::string& where) {
  return std::make_unique<Pcre2Regex>(pattern, where);
}

}  // namespace deberta::tokenizer_detail
