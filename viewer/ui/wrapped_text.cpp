// wrapped_text.cpp — Dear ImGui text laid out by i18n/line_break.h.
#include "ui/wrapped_text.h"

#include "i18n/i18n.h"
#include "i18n/line_break.h"

#include <imgui_internal.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace viewer {

std::string WrapForWidth(std::string_view text, float width) {
  ImFont* font = ImGui::GetFont();
  const float scale = ImGui::GetFontSize() / font->FontSize;
  const auto advance = [&](uint32_t c) {
    return font->GetCharAdvance(static_cast<ImWchar>(c <= IM_UNICODE_CODEPOINT_MAX ? c : 0xFFFD)) * scale;
  };
  std::string out;
  out.reserve(text.size() + 16);
  for (const LineSpan& l : wrap_lines(text, i18n::language(), width, advance)) {
    if (!out.empty()) out += '\n';
    out.append(text.substr(l.begin, l.end - l.begin));
  }
  return out;
}

void WrappedText(std::string_view text) {
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  if (window->SkipItems) return;
  const float wrap_pos = window->DC.TextWrapPos < 0.0f ? 0.0f : window->DC.TextWrapPos;
  const float width = ImGui::CalcWrapWidthForPos(window->DC.CursorPos, wrap_pos);
  const std::string lines = WrapForWidth(text, width);
  ImGui::PushTextWrapPos(-1.0f);  // laid out already: Dear ImGui must not wrap again
  ImGui::TextUnformatted(lines.data(), lines.data() + lines.size());
  ImGui::PopTextWrapPos();
}

void WrappedLabelledText(std::string_view text) {
  const std::vector<LabelledLine> rows = labelled_lines(text);
  if (rows.empty()) return WrappedText(text);
  float label_w = 0;
  for (const LabelledLine& r : rows) label_w = std::max(label_w, ImGui::CalcTextSize(r.label.data(), r.label.data() + r.label.size()).x);
  label_w += ImGui::CalcTextSize("  ").x;
  for (const LabelledLine& r : rows) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::TextUnformatted(r.label.data(), r.label.data() + r.label.size());
    ImGui::SameLine(0, 0);
    ImGui::SetCursorScreenPos(ImVec2(p.x + label_w, p.y));
    WrappedText(r.formula);
  }
}

void WrappedTextColored(const ImVec4& color, std::string_view text) {
  ImGui::PushStyleColor(ImGuiCol_Text, color);
  WrappedText(text);
  ImGui::PopStyleColor();
}

void WrappedTextDisabled(std::string_view text) {
  WrappedTextColored(ImGui::GetStyle().Colors[ImGuiCol_TextDisabled], text);
}

namespace {
std::string vformat(const char* fmt, va_list args) {
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, again);
  va_end(again);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  return out;
}
}  // namespace

void WrappedTextF(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string text = vformat(fmt, args);
  va_end(args);
  WrappedText(text);
}

void WrappedTextDisabledF(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  const std::string text = vformat(fmt, args);
  va_end(args);
  WrappedTextDisabled(text);
}

}  // namespace viewer
