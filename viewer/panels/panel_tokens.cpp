// panel_tokens.cpp — the token strip. Hovering a token outlines its row and column in every map;
// clicking sets the selected query i (right click: key j).
#include "ui/heatmap.h"
#include "panels/panels.h"
#include "ui/wrapped_text.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace viewer {

void DrawTokensPanel(App& app) {
  ViewerState& s = app.state;
  if (!ResultOrWaiting(app)) return;
  const int n = token_count(s);
  const auto& masks = s.result->input.mask_positions;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(3, 3));
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(4, 2));
  for (int t = 0; t < n; ++t) {
    const bool is_mask = std::find(masks.begin(), masks.end(), t) != masks.end();
    const bool is_q = t == s.qi, is_k = t == s.kj;
    const std::string label = token_chip_label(s, t);  // a blank token shows as ▁, never an empty chip
    const float w = ImGui::CalcTextSize(label.c_str()).x + 8;
    if (t > 0) {
      ImGui::SameLine();
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    ImVec4 col = is_mask ? ImVec4(0.55f, 0.25f, 0.55f, 1) : ImVec4(0.22f, 0.26f, 0.33f, 1);
    if (s.hover_token == t) col = ImVec4(0.85f, 0.55f, 0.1f, 1);
    ImGui::PushStyleColor(ImGuiCol_Button, col);
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(0.85f, 0.55f, 0.1f, 1));
    ImGui::PushID(t);
    if (ImGui::Button(label.c_str())) s.qi = t;
    if (ImGui::IsItemClicked(ImGuiMouseButton_Right)) s.kj = t;
    if (ImGui::IsItemHovered()) {
      s.hover_token_next = t;
      // TRANSLATORS: token position, its text, its vocabulary id, then "  [MASK]" or nothing; i and j are the paper's indices.
      const std::string name = token_name(s, t);
      ImGui::BeginTooltip();
      ImGui::Text(tr("token %d  '%s'  id %lld%s\nclick: query i = %d   right-click: key j = %d"), t,
                  shown_token(name).c_str(), static_cast<long long>(s.result->input.inputs.input_ids[t]),
                  is_mask ? "  [MASK]" : "", t, t);
      if (blank_token(name)) ImGui::TextUnformatted(tr(kBlankTokenNote));
      ImGui::EndTooltip();
    }
    if (is_q || is_k) {
      const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
      ImGui::GetWindowDrawList()->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1),
                                          is_q ? IM_COL32(255, 255, 255, 255) : IM_COL32(120, 200, 255, 255), 2, 0, 2);
    }
    ImGui::PopID();
    ImGui::PopStyleColor(2);
  }
  ImGui::PopStyleVar(2);
  // Wrapped: in Japanese and Italian the line is wider than the strip at 1280 px.
  char hint[512];
  std::snprintf(hint, sizeof hint,
                tr("white outline: query i = %d   blue: key j = %d   purple: [MASK]   hover a token to outline its row and column in every map"),
                s.qi, s.kj);
  WrappedTextDisabled(hint);
}

}  // namespace viewer
