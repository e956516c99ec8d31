// line_break.h — where a line of the interface may end, by the language's rules (issue 54, item 3).
//
// Dear ImGui 1.86 wraps only at ASCII spaces: Chinese and Japanese lines ran to the margin and then
// broke inside numbers ("P = 0." | "100500"), at the space before a counter ("2 | つ"), or far short
// of the margin. This file finds the break opportunities of Unicode's line breaking algorithm
// (UAX #14, through Debian's libunibreak where the build has it) and tailors them:
//   - never inside a number: no break inside a run of digits and decimal signs, none after a number
//     before the word that counts or measures it ("2 つ", "3 개", "12 层", "128 px");
//   - short formulas stay whole: no break at a space next to an operator standing alone ("I = H + P",
//     "s · Ã"); a formula wider than the line breaks after its "=" (a weak opportunity) before it
//     breaks anywhere else;
//   - Korean breaks at spaces (word-break: keep-all), not between the syllables of a word;
//   - mandatory breaks at '\n'.
// Without libunibreak (the WebAssembly page, whose build cannot fetch its sources: docs/i18n.md
// "Line breaking"), a small built-in approximation of UAX #14 stands in: breaks after spaces,
// between Han, Kana and Hangul characters, never before closing punctuation, small Kana and the
// prolonged sound mark or after opening punctuation; the tailoring above is the same.
// Nothing here draws (ui/wrapped_text.h lays the lines out with Dear ImGui's font).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace viewer {

/// The status of the position after byte k of a UTF-8 text (before byte k + 1).
enum class LineBreak : uint8_t {
  inside,   ///< inside a character (a UTF-8 sequence) or no break by the rules
  weak,     ///< a break inside a formula, taken only when the formula does not fit a line
  allowed,  ///< a break opportunity
  must,     ///< a mandatory break ('\n'; the end of the text)
};

/// True when this build finds the opportunities with libunibreak (UAX #14), false when it uses the
/// built-in approximation (the page).
bool line_break_uses_unibreak();

/// The break status after each byte of `text` (UTF-8; invalid bytes are taken as single
/// characters) in language `lang` ("ko", "ja", "zh_CN", "it", "en"): [text.size()]; the last is
/// `must`. Source: UAX #14 (libunibreak's set_linebreaks_utf8) with the tailoring of line_break.h.
std::vector<LineBreak> line_breaks(std::string_view text, std::string_view lang);

/// One laid-out line: bytes [begin, end) of the text, without its trailing spaces and newline.
struct LineSpan {
  size_t begin = 0, end = 0;
};

/// Lays `text` out in lines no wider than `width` (pixels, or any unit of `advance`) where it can:
/// greedy, at the farthest opportunity that fits; a weak one (inside a formula) only when no
/// opportunity fits; inside a word or a number only when no opportunity of either kind fits (a
/// line holds at least one character). `advance(c)` is the width of code point c. Trailing spaces
/// hang past the margin (they do not count). Errors: none (width ≤ 0 gives a character a line).
std::vector<LineSpan> wrap_lines(std::string_view text, std::string_view lang, float width,
                                 const std::function<float(uint32_t)>& advance);

/// A labelled formula block, one "label:  formula" a line ("paper (eq. 4):  H_o = …" over
/// "released code:  s = …"; lesson steps 9 and 11): each line split after its label's first colon
/// (':' or '：') followed by two or more spaces, the spaces dropped. Empty when a line has no such
/// colon or there is a single line: the text is then no such block. The viewer aligns the formulas
/// at the widest label's measured width (ui/wrapped_text.h LabelledLines): aligning with spaces
/// counts characters, and Han, Kana and Hangul are wider than a monospace cell.
struct LabelledLine {
  std::string_view label, formula;
};
std::vector<LabelledLine> labelled_lines(std::string_view text);

/// Decodes the UTF-8 character at `text[k]`: its code point and length in bytes (an invalid byte
/// decodes as U+FFFD, length 1).
uint32_t utf8_decode(std::string_view text, size_t k, size_t* length);

}  // namespace viewer
