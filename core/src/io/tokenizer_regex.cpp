// tokenizer_regex.cpp — the regular expressions of tokenizer.json's Replace and Split patterns,
// through PCRE2 (UTF + Unicode properties). Hugging Face's library compiles them with Oniguruma;
// the pattern syntax tokenizer.json files use (classes, \s, \p{…}, quantifiers, alternation) reads
// the same in both. The web edition has no PCRE2 and refuses them (viewer/web/web_io_unavailable.cpp).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "io/tokenizer_pipeline.h"

#include <pcre2.h>

namespace deberta::tokenizer_detail {

namespace {

pcre2_code* compile_pcre2(const std::string& pattern, int* err, PCRE2_SIZE* offset) {
  return pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, err, offset,
                       nullptr);
}

/// Oniguruma's \p{Katakana} is the Script property; PCRE2 (10.40 on) reads \p{Katakana} as
/// Script_Extensions, which also holds shared characters such as "ー" (U+30FC, Script Common). Each
/// \p{Name} / \P{Name} whose name PCRE2 knows as a script becomes \p{sc:Name}; general categories
/// (\p{L}, \p{Nd}, …) stay as they are.
std::string scripts_as_script_property(const std::string& pattern) {
  std::string out;
  for (size_t at = 0; at < pattern.size();) {
    if (pattern[at] == '\\' && at + 1 < pattern.size()) {
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
      out.append(pattern, at, 2);  // an escaped character stays with its backslash
      at += 2;
      continue;
    }
    out += pattern[at++];
  }
  return out;
}

class Pcre2Regex final : public Regex {
 public:
  Pcre2Regex(const std::string& pattern, const std::string& where) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    code_ = compile_pcre2(scripts_as_script_property(pattern), &err, &offset);
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
    for (size_t at = 0; at <= text.size();) {
      const int rc = pcre2_match(code_, subject, text.size(), at, PCRE2_NO_UTF_CHECK, match, nullptr);
      if (rc <= 0) break;
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
      out.emplace_back(ov[0], ov[1]);
      if (ov[1] > ov[0]) {
        at = ov[1];
      } else {  // an empty match: resume one character further
        if (ov[1] >= text.size()) break;
        at = ov[1] + std::max<size_t>(1, utf8_length_at(text, ov[1]));
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
