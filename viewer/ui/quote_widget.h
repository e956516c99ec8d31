// quote_widget.h — how the Lesson and Equation tabs show a passage of the paper (paper_quotes.h):
// the paper's words in quotation marks, wrapped, then where they are ("— §3.1, eq. (4)"); a
// paraphrase says so and goes without quotation marks. One look for both tabs.
#pragma once

#include "i18n/i18n.h"
#include "lesson/paper_quotes.h"

#include <imgui.h>

#include <string>

namespace viewer {

/// Draws `q` wrapped at the right edge of the current column (or window), in the quote colour; with
/// `cite` false the "— §…" line is left for the next passage of the same place to write.
inline void PaperQuoteText(const PaperQuote& q, bool cite = true) {
  const ImVec4 words(0.93f, 0.84f, 0.62f, 1), where(0.62f, 0.66f, 0.72f, 1);
  ImGui::PushTextWrapPos(0.0f);
  if (q.paraphrase) {
    // TRANSLATORS: heads a paraphrase of the paper; %s is where it is in the paper ("§3.1, after eq. (4)").
    ImGui::TextColored(where, tr("Paraphrase, not the paper's words (%s):"), q.cite().c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, words);
    ImGui::TextUnformatted(tr(q.text));  // our words: translated (the paper's own stay English)
    ImGui::PopStyleColor();
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, words);
    ImGui::TextUnformatted(("\xE2\x80\x9C" + std::string(q.text) + "\xE2\x80\x9D").c_str());
    ImGui::PopStyleColor();
    if (cite) ImGui::TextColored(where, "\xE2\x80\x94 %s", q.cite().c_str());
  }
  ImGui::PopTextWrapPos();
}

}  // namespace viewer
