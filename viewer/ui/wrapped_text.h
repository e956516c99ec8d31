// wrapped_text.h — text wrapped by the language's rules (issue 54, item 3; i18n/line_break.h).
//
// Dear ImGui 1.86's TextWrapped breaks only at ASCII spaces; these draw the same text in lines laid
// out by wrap_lines (UAX #14 with the tailoring for numbers, formulas and Korean) with the current
// font, as one item (the spacing of TextWrapped). The margin is TextWrapped's: the wrap position
// pushed with PushTextWrapPos, or the right edge of the column or window when none is.
#pragma once

#include <imgui.h>

#include <string>
#include <string_view>

namespace viewer {

/// The lines of `text` as WrappedText lays them out at `width` pixels with the current font and
/// the interface's language, joined by '\n' (for the tests and the page's text bridge).
std::string WrapForWidth(std::string_view text, float width);

/// TextWrapped("%s", text) with the language's line breaks.
void WrappedText(std::string_view text);
/// A block of "label:  formula" lines (i18n/line_break.h labelled_lines; lesson steps 9 and 11):
/// the labels in one column, the formulas in a second one that starts after the widest label as
/// measured with the current font (spaces cannot align them where Han, Kana or Hangul are wider
/// than a monospace cell), each formula wrapped in its column. Any other text: WrappedText.
void WrappedLabelledText(std::string_view text);
/// The same in `color` (TextColored + wrapping).
void WrappedTextColored(const ImVec4& color, std::string_view text);
/// The same in the disabled colour (TextDisabled + wrapping).
void WrappedTextDisabled(std::string_view text);
/// WrappedText / WrappedTextDisabled of a printf format and its arguments (ImGui::Text's): a line
/// with numbers in it that must wrap, not run past the panel's edge, in a wider language or size.
void WrappedTextF(const char* fmt, ...) IM_FMTARGS(1);
void WrappedTextDisabledF(const char* fmt, ...) IM_FMTARGS(1);

}  // namespace viewer
