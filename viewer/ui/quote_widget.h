// quote_widget.h — how the Lesson and Equation tabs show a passage of the paper (paper_quotes.h):
// the paper's words in quotation marks, wrapped, then where they are ("— §3.1, eq. (4)"); a
// paraphrase says so and goes without quotation marks. One look for both tabs.
#pragma once

#include "i18n/i18n.h"
#include "lesson/paper_quotes.h"
#include "ui/wrapped_text.h"

#include <imgui.h>

#include <cstdio>
#include <string>

namespace viewer {

/// Draws `q` wrapped at the right edge of the current column (or window), in the quote colour; with
/// `cite` false the "— §…" line is left for the next passage of the same place to write.
inline void PaperQuoteText(const PaperQuote& q, bool cite = true) {
  const ImVec4 words(0.93f, 0.84f, 0.62f, 1), where(0.62f, 0.66f, 0.72f, 1);
  ImGui::PushTextWrapPos(0.0f);
  if (q.paraphrase) {
    // TRANSLATORS: heads a paraphrase of the paper; %s is where it is in the paper ("§3.1, after eq. (4)").
    char head[256];
    std::snprintf(head, sizeof head, tr("Paraphrase, not the paper's words (%s):"), q.cite().c_str());
    WrappedTextColored(where, head);
    WrappedTextColored(words, tr(q.text));  // our words: translated (the paper's own stay English)
  } else {
    WrappedTextColored(words, "\xE2\x80\x9C" + std::string(q.text) + "\xE2\x80\x9D");
    if (cite) WrappedTextColored(where, "\xE2\x80\x94 " + q.cite());
  }
  ImGui::PopTextWrapPos();
}

}  // namespace viewer
