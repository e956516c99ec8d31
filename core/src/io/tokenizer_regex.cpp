// tokenizer_regex.cpp — the regular expressions of tokenizer.json's Replace and Split patterns,
// through PCRE2 (UTF + Unicode properties). Hugging Face's library compiles them with Oniguruma
// (its default syntax, Ruby's dialect); as_oniguruma rewrites a pattern so that PCRE2 reads it as
// Oniguruma does, and refuses, naming it, a construct it does not translate. Every match error
// (the match limit included) is an error naming the file and the pattern, never "no more matches".
// The web edition has no PCRE2 and refuses them (viewer/web/page/web_io_unavailable.cpp).
#define PCRE2_CODE_UNIT_WIDTH 8
#include "io/tokenizer_pipeline.h"

#include <pcre2.h>

#include <cctype>
#include <new>

namespace deberta::tokenizer_detail {

namespace {

/// Compiles `pattern` (already in PCRE2's dialect). `^` and `$` are Oniguruma's line anchors
/// (PCRE2_MULTILINE), and a line ends at "\n" only, as in Oniguruma (so `.` stops at "\n" alone).
pcre2_code* compile_pcre2(const std::string& pattern, int* err, PCRE2_SIZE* offset) {
  pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
  if (!context) throw std::bad_alloc();
  pcre2_set_newline(context, PCRE2_NEWLINE_LF);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, err, offset, context);
  pcre2_compile_context_free(context);
  return code;
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
///   - \h is a hex digit in Oniguruma (PCRE2: horizontal space), \H (outside a class) its
///     complement; \v is the vertical tab U+000B alone (PCRE2: any vertical space).
///   - the option letter m of (?m), (?m:…), (?-m) is Oniguruma's "dot matches newline", PCRE2's s;
///     i and x mean the same in both.
///   - ^ and $ are line anchors in Oniguruma: compile_pcre2 sets PCRE2_MULTILINE.
/// Refused, naming the construct (Error with `where`): other option letters (Oniguruma's syntax
/// rejects (?s); W, D, S, P, y are untranslated), \H and \V inside a class, \V, \Q…\E, and a
/// class inside a class or && (Oniguruma's set operations; PCRE2 reads them as literal characters).
std::string as_oniguruma(const std::string& pattern, const std::string& where) {
  const std::string word = std::string("[") + kWordClass + "]";
  auto refuse = [&](const std::string& construct, const std::string& why) {
    throw Error(where + ": regex /" + pattern + "/: " + construct + " is not supported (" + why + ")");
  };
  std::string out;
  bool in_class = false;
  for (size_t at = 0; at < pattern.size();) {
    const char c = pattern[at];
    if (c == '(' && !in_class && at + 1 < pattern.size() && pattern[at + 1] == '?') {
      size_t end = at + 2;
      while (end < pattern.size() && (std::isalpha(static_cast<unsigned char>(pattern[end])) || pattern[end] == '-')) ++end;
      if (end > at + 2 && end < pattern.size() && (pattern[end] == ')' || pattern[end] == ':')) {  // an option group
        out += "(?";
        for (size_t k = at + 2; k < end; ++k) {
          const char letter = pattern[k];
          if (letter == 'm') out += 's';
          else if (letter == 'i' || letter == 'x' || letter == '-') out += letter;
          else refuse(std::string("the option (?") + letter + ")", letter == 's' ? "Oniguruma's syntax has no option s; its m is dot-matches-newline"
                                                                             : "an Oniguruma option this reader does not translate");
        }
        out += pattern[end];
        at = end + 1;
        continue;
      }
    }
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
      if (next == 'h') out += in_class ? "0-9A-Fa-f" : "[0-9A-Fa-f]";
      else if (next == 'H' && !in_class) out += "[^0-9A-Fa-f]";
      else if (next == 'H') refuse("\\H inside a class", "Oniguruma: not a hex digit; PCRE2: not horizontal space");
      else if (next == 'v') out += "\\x{0B}";
      else if (next == 'V') refuse("\\V", "PCRE2: not vertical space; Oniguruma has no such escape");
      else if (next == 'Q') refuse("\\Q", "PCRE2 quotes up to \\E; Oniguruma's syntax does not");
      else if (next == 'w') out += in_class ? std::string(kWordInClass) : word;
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
    if (c == '[' && in_class && pattern.compare(at, 2, "[:") != 0)
      refuse("a class inside a class", "Oniguruma nests classes; PCRE2 reads '[' there as a character");
    if (c == '&' && in_class && pattern.compare(at, 2, "&&") == 0)
      refuse("&& inside a class", "Oniguruma intersects classes; PCRE2 reads '&&' as characters");
    if (c == '[' && in_class) {  // a POSIX class [:name:] stays whole
      const size_t close = pattern.find(":]", at + 2);
      if (close == std::string::npos) refuse("an unterminated [: in a class", "neither engine reads it the same");
      out.append(pattern, at, close + 2 - at);
      at = close + 2;
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
  Pcre2Regex(const std::string& pattern, const std::string& where) : pattern_(pattern), where_(where) {
    int err = 0;
    PCRE2_SIZE offset = 0;
    code_ = compile_pcre2(as_oniguruma(pattern, where), &err, &offset);
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
    if (!match) throw std::bad_alloc();
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    auto one_character_on = [&](size_t at) { return at + std::max<size_t>(1, utf8_length_at(text, at)); };
    bool matched = false;
    size_t last_end = 0;
    for (size_t at = 0; at <= text.size();) {
      const int rc = pcre2_match(code_, subject, text.size(), at, PCRE2_NO_UTF_CHECK, match, nullptr);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc < 0) {  // the match or depth limit, or no memory: an error, never "no more matches"
        pcre2_match_data_free(match);
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(rc, message, sizeof message);
        throw Error(where_ + ": regex /" + pattern_ + "/ failed at byte " + std::to_string(at) + " of a " +
                    std::to_string(text.size()) + "-byte text (" + reinterpret_cast<const char*>(message) + ")");
      }
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
  std::string pattern_;  ///< as tokenizer.json gives it, for messages
  std::string where_;
  pcre2_code* code_ = nullptr;
};

}  // namespace

std::unique_ptr<Regex> Regex::compile(const std::string& pattern, const std::string& where) {
  return std::make_unique<Pcre2Regex>(pattern, where);
}

}  // namespace deberta::tokenizer_detail
