// line_break.cpp — UAX #14 opportunities (libunibreak, or the page's approximation) and the
// tailoring of line_break.h: numbers, short formulas, Korean's keep-all, the greedy layout.
#include "i18n/line_break.h"

#include <algorithm>
#include <string>

#ifdef DEBERTA_HAVE_UNIBREAK
#include <linebreak.h>
#include <mutex>
#endif

namespace viewer {

uint32_t utf8_decode(std::string_view s, size_t k, size_t* length) {
  const auto b = [&](size_t at) { return static_cast<unsigned char>(s[at]); };
  const unsigned char c = b(k);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || k + n > s.size()) {
    *length = 1;
    return c < 0x80 ? c : 0xFFFD;
  }
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (size_t m = 1; m < n; ++m) {
    if ((b(k + m) & 0xC0) != 0x80) {
      *length = 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b(k + m) & 0x3Fu);
  }
  *length = n;
  return cp;
}

namespace {

bool is_space(uint32_t c) { return c == ' ' || c == '\t' || c == 0x3000; }
bool is_digit(uint32_t c) { return (c >= '0' && c <= '9') || (c >= 0xFF10 && c <= 0xFF19); }
/// Decimal signs and digit group separators between digits ("0.25", "0,25", "1 024" is not one).
bool is_decimal_sign(uint32_t c) { return c == '.' || c == ',' || c == 0xFF0E || c == 0xFF0C || c == 0x066B; }
bool is_hangul(uint32_t c) {
  return (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0x1100 && c <= 0x11FF) || (c >= 0x3130 && c <= 0x318F);
}
/// Characters that break on either side in Chinese and Japanese (UAX #14's ID, H2, H3 and most CJ).
bool is_ideographic(uint32_t c) {
  return (c >= 0x2E80 && c <= 0x2FFF) || (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF61 && c <= 0xFF9F) ||
         (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0x20000 && c <= 0x3FFFF);
}
/// CJK and full-width punctuation (a break is allowed beside it, unless no_break_before/after).
bool is_cjk_punctuation(uint32_t c) {
  return (c >= 0x3000 && c <= 0x303F) || (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0xFF1A && c <= 0xFF20) ||
         (c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65);
}
/// No break before (UAX #14's CL, CP, EX, IS, NS and the small Kana of CJ, strict).
bool no_break_before(uint32_t c) {
  static const std::u32string set =
      U",.;:!?)]}%、。，．：；！？）］｝」』】〕〉》〗〙〟”’ー々ゝゞヽヾぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶ・…‥〜～";
  return set.find(static_cast<char32_t>(c)) != std::u32string::npos;
}
/// No break after (UAX #14's OP and the opening quotation marks).
bool no_break_after(uint32_t c) {
  static const std::u32string set = U"([{（［｛「『【〔〈《〖〘〝“‘";
  return set.find(static_cast<char32_t>(c)) != std::u32string::npos;
}
/// The operators of a formula written with spaces around them ("I = H + P", "s · Ã").
bool is_operator(uint32_t c) {
  static const std::u32string set = U"=+-−×·/*÷±≤≥<>≈≠≡→←↦∘⋅∙";
  return set.find(static_cast<char32_t>(c)) != std::u32string::npos;
}
/// Operators that join their operands when written without spaces (a hyphen and a slash do not:
/// "content-to-position", paths).
bool is_tight_operator(uint32_t c) {
  static const std::u32string set = U"=+×·≤≥<>≈∘";
  return set.find(static_cast<char32_t>(c)) != std::u32string::npos;
}
/// Written right after a number, its counter or unit: a letter of any script, an ideograph, '%'
/// ("2つ", "3개", "3d", "50%").
bool counts_a_number(uint32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '%';
  if (c >= 0x3000 && c <= 0x303F) return c == 0x3005;  // CJK punctuation (々 excepted)
  if (c >= 0xFF00 && c <= 0xFF20) return false;         // full-width punctuation and digits
  return !no_break_after(c) && c != 0x2014 && c != 0x2013 && c != 0x2026 && c != 0x201C && c != 0x201D;
}
/// After a number and a space, the counter of Chinese, Japanese and Korean ("2 つ", "3 개", "12 层"),
/// kept on the number's line; a Latin word after a space is a word of its own ("0.25 il").
bool counts_a_number_after_space(uint32_t c) {
  return counts_a_number(c) && (is_ideographic(c) || is_hangul(c) || c == 0x3005);
}

/// A character of the text: its code point and bytes [begin, end).
struct Char {
  uint32_t cp;
  size_t begin, end;
};

std::vector<Char> decode(std::string_view text) {
  std::vector<Char> out;
  out.reserve(text.size());
  for (size_t k = 0; k < text.size();) {
    size_t n = 1;
    const uint32_t cp = utf8_decode(text, k, &n);
    out.push_back({cp, k, k + n});
    k += n;
  }
  return out;
}

/// The built-in approximation of UAX #14 (the page): the status between chars[m] and chars[m + 1].
LineBreak approximate(const std::vector<Char>& chars, size_t m) {
  const uint32_t a = chars[m].cp, b = chars[m + 1].cp;
  if (a == '\n') return LineBreak::must;
  if (b == '\n' || is_space(b)) return LineBreak::inside;  // spaces stay on the line they end
  if (no_break_before(b) || no_break_after(a)) return LineBreak::inside;
  if (is_space(a)) return LineBreak::allowed;
  if (is_ideographic(a) || is_ideographic(b) || is_cjk_punctuation(a) || is_cjk_punctuation(b)) return LineBreak::allowed;
  if (a == 0x2014 || a == 0x2013) return LineBreak::allowed;  // after a dash (UAX #14's B2, BA)
  return LineBreak::inside;
}

#ifdef DEBERTA_HAVE_UNIBREAK
std::vector<char> unibreak(std::string_view text, std::string_view lang) {
  static std::once_flag once;
  std::call_once(once, [] { init_linebreak(); });
  std::string code(lang.substr(0, lang.find('_')));  // "zh_CN" → "zh": libunibreak's tailoring keys
  std::vector<char> brks(text.size());
  set_linebreaks_utf8(reinterpret_cast<const utf8_t*>(text.data()), text.size(), code.c_str(), brks.data());
  return brks;
}
#endif

}  // namespace

bool line_break_uses_unibreak() {
#ifdef DEBERTA_HAVE_UNIBREAK
  return true;
#else
  return false;
#endif
}

std::vector<LineBreak> line_breaks(std::string_view text, std::string_view lang) {
  std::vector<LineBreak> out(text.size(), LineBreak::inside);
  if (text.empty()) return out;
  const std::vector<Char> chars = decode(text);
  const size_t n = chars.size();
#ifdef DEBERTA_HAVE_UNIBREAK
  const std::vector<char> brks = unibreak(text, lang);
#endif
  // Tokens (runs of non-space characters): whether each is an operator standing alone.
  std::vector<int> token_of(n, -1);
  std::vector<bool> token_is_operator;
  for (size_t m = 0; m < n;) {
    if (is_space(chars[m].cp) || chars[m].cp == '\n') {
      ++m;
      continue;
    }
    size_t e = m;
    bool op = true;
    while (e < n && !is_space(chars[e].cp) && chars[e].cp != '\n') op &= is_operator(chars[e].cp), ++e;
    op &= e - m <= 2;
    for (size_t q = m; q < e; ++q) token_of[q] = static_cast<int>(token_is_operator.size());
    token_is_operator.push_back(op);
    m = e;
  }
  const bool korean = lang.substr(0, 2) == "ko";
  for (size_t m = 0; m + 1 < n; ++m) {
    const uint32_t a = chars[m].cp, b = chars[m + 1].cp;
    LineBreak s;
#ifdef DEBERTA_HAVE_UNIBREAK
    const char u = brks[chars[m].end - 1];
    s = u == LINEBREAK_MUSTBREAK ? LineBreak::must : u == LINEBREAK_ALLOWBREAK ? LineBreak::allowed : LineBreak::inside;
    if (a == '\n') s = LineBreak::must;
#else
    s = approximate(chars, m);
#endif
    // Japanese and Chinese, strict (JIS X 4051's kinsoku): no small kana, prolonged sound mark or
    // closing punctuation at a line's start, no opening bracket at its end (libunibreak takes
    // UAX #14's CJ as ID, the loose rule).
    if (s == LineBreak::allowed && (no_break_before(b) || no_break_after(a))) s = LineBreak::inside;
    // Mathematics: no break into a function's parenthesis ("clamp(", "√(", "softmax_j(") nor after
    // a root sign (UAX #14 takes √ as ambiguous, an ideograph in Chinese and Japanese).
    if (s == LineBreak::allowed && ((b == '(' && !is_space(a) && !is_ideographic(a) && !is_cjk_punctuation(a)) || a == 0x221A))
      s = LineBreak::inside;
    // Operators written without spaces stay with their operands ("c2c+c2p+p2c", "H=192").
    if (s == LineBreak::allowed && !is_space(a) && !is_space(b) && (is_tight_operator(a) || is_tight_operator(b)))
      s = LineBreak::inside;
    // A fraction stays whole ("1/√(3d)", "1/2"); a path still breaks after its slashes.
    if (s == LineBreak::allowed && a == '/' && (b == 0x221A || b == '(' || is_digit(b))) s = LineBreak::inside;
    if (s == LineBreak::allowed) {
      // Numbers: no break inside a run of digits and decimal signs, none after a digit before the
      // word that counts it ("2つ", "3개"), with or without spaces between them ("2 つ", "128 px").
      const bool after_digit = is_digit(a) || (is_decimal_sign(a) && m > 0 && is_digit(chars[m - 1].cp));
      if (after_digit && (is_digit(b) || counts_a_number(b))) s = LineBreak::inside;
      if (is_digit(b) && is_decimal_sign(a) && m > 0 && is_digit(chars[m - 1].cp)) s = LineBreak::inside;
      if (is_space(a)) {
        size_t p = m;
        while (p > 0 && is_space(chars[p].cp)) --p;
        if (!is_space(chars[p].cp) && is_digit(chars[p].cp) && counts_a_number_after_space(b)) s = LineBreak::inside;
        // Formulas: a space next to an operator standing alone ("I = H + P"). A break after the
        // operator is weak (a formula wider than the line breaks there); before it, none.
        const bool before_op = token_of[m + 1] >= 0 && token_is_operator[static_cast<size_t>(token_of[m + 1])];
        const bool after_op = !is_space(chars[p].cp) && token_of[p] >= 0 && token_is_operator[static_cast<size_t>(token_of[p])];
        if (before_op) s = LineBreak::inside;
        else if (after_op) s = LineBreak::weak;
      }
      // Korean: at spaces (keep-all), not between the syllables of a word.
      if (korean && s == LineBreak::allowed && !is_space(a) && (is_hangul(a) || is_hangul(b))) s = LineBreak::inside;
    }
    out[chars[m].end - 1] = s;
  }
  out.back() = LineBreak::must;
  return out;
}

std::vector<LineSpan> wrap_lines(std::string_view text, std::string_view lang, float width,
                                 const std::function<float(uint32_t)>& advance) {
  std::vector<LineSpan> lines;
  const std::vector<LineBreak> brk = line_breaks(text, lang);
  const std::vector<Char> chars = decode(text);
  const auto trimmed = [&](size_t begin, size_t end) {
    while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\n')) --end;
    if (end >= begin + 3 && text.substr(end - 3, 3) == "\xE3\x80\x80") end -= 3;  // an ideographic space
    return LineSpan{begin, end};
  };
  size_t m = 0;
  const size_t n = chars.size();
  while (m < n) {
    const size_t start = m;
    float w = 0;  // the line's width (trailing spaces hang past the margin: not counted before a break)
    // The farthest break that fits, by kind: an opportunity, a weak one, between two characters
    // outside a number, between any two characters (as character indices: the next line's start).
    size_t at_allowed = 0, at_weak = 0, at_word = 0, at_char = 0;
    size_t next = n;
    bool hard = false;
    for (; m < n; ++m) {
      const Char& c = chars[m];
      if (c.cp == '\n') {
        next = m + 1, hard = true;
        break;
      }
      const float adv = advance(c.cp);
      if (!is_space(c.cp) && w + adv > width && m > start) {
        next = at_allowed ? at_allowed : at_weak ? at_weak : at_word ? at_word : at_char ? at_char : m;
        break;
      }
      w += adv;
      const LineBreak s = brk[c.end - 1];
      if (s == LineBreak::must) {
        next = m + 1, hard = true;
        break;
      }
      if (m + 1 < n) {
        if (s == LineBreak::allowed) at_allowed = m + 1;
        if (s == LineBreak::weak) at_weak = m + 1;
        const uint32_t b = chars[m + 1].cp;
        const bool in_number = (is_digit(c.cp) || is_decimal_sign(c.cp)) && (is_digit(b) || is_decimal_sign(b));
        if (!in_number && !is_space(b)) at_word = m + 1;
        if (!is_space(b)) at_char = m + 1;
      }
    }
    const size_t end_byte = next < n ? chars[next].begin : text.size();
    lines.push_back(trimmed(chars[start].begin, end_byte));
    m = next;
    if (!hard)
      while (m < n && is_space(chars[m].cp)) ++m;  // a soft break swallows the spaces it follows
  }
  if (lines.empty()) lines.push_back({0, 0});
  return lines;
}

std::vector<LabelledLine> labelled_lines(std::string_view text) {
  std::vector<LabelledLine> out;
  for (size_t begin = 0; begin <= text.size();) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line = text.substr(begin, end - begin);
    size_t split = std::string_view::npos, after = 0;
    for (const std::string_view colon : {std::string_view(":"), std::string_view("\xEF\xBC\x9A")}) {  // ':' and '：'
      for (size_t k = line.find(colon); k != std::string_view::npos; k = line.find(colon, k + 1)) {
        const size_t f = line.find_first_not_of(' ', k + colon.size());
        if (f != std::string_view::npos && f >= k + colon.size() + 2) {
          if (k < split) split = k + colon.size(), after = f;
          break;
        }
      }
    }
    if (split == std::string_view::npos) return {};
    out.push_back({line.substr(0, split), line.substr(after)});
    begin = end + 1;
  }
  if (out.size() < 2) out.clear();
  return out;
}

}  // namespace viewer
