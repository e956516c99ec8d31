// panel_equation.cpp — Equation walk-through: deberta::explain_cell / explanation_steps for the
// selected layer, head and cell, with the real numbers and the paper's equation numbers (the same
// steps `deberta explain` prints).
#include "heatmap.h"
#include "panels.h"

#include "deberta/explain.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace viewer {

void DrawEquationPanel(ViewerState& s) {
  if (!s.result) {
    WaitingNote(s);
    return;
  }
  const Result& r = *s.result;
  const int N = token_count(s);
  LayerHeadSliders(s);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("query i", &s.qi, 0, N - 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("key j", &s.kj, 0, N - 1);
  ImGui::TextDisabled("Arrow keys move the cell; click a cell in Head detail to pick it.");

  deberta::CellExplanation e;
  try {
    e = deberta::explain_cell(r.model->model, r.trace, s.layer, s.head, s.qi, s.kj);
  } catch (const std::exception& ex) {
    ErrorText(ex.what());
    return;
  }
  ImGui::Separator();
  ImGui::Text("Attention score of query i = %d '%s' for key j = %d '%s' in layer %d, head %d (N = %lld)", s.qi,
              token_name(s, static_cast<int>(e.i)).c_str(), s.kj, token_name(s, static_cast<int>(e.j)).c_str(), s.layer,
              s.head, static_cast<long long>(e.n));
  if (!r.ablation.is_default()) ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "under the ablation: %s", r.ablation.describe(r.model ? &r.model->model.config : nullptr).c_str());

  const auto steps = deberta::explanation_steps(e);
  if (ImGui::BeginTable("steps", 3,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("paper", ImGuiTableColumnFlags_WidthFixed, 150);
    ImGui::TableSetupColumn("formula", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("with the numbers", ImGuiTableColumnFlags_WidthStretch, 1.7f);
    ImGui::TableHeadersRow();
    for (const auto& st : steps) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImVec4(0.55f, 0.8f, 1.0f, 1), "%s", st.equation.c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", st.formula.c_str());
      ImGui::TableNextColumn();
      if (s.mono) ImGui::PushFont(s.mono);
      ImGui::TextWrapped("%s", st.numbers.c_str());
      if (s.mono) ImGui::PopFont();
    }
    ImGui::EndTable();
  }

  // The query's softmax row: where this cell's probability sits among all keys.
  ImGui::Spacing();
  ImGui::Text("softmax row of query i = %d: A_ij for every key j", s.qi);
  const float avail = ImGui::GetContentRegionAvail().x;
  const float bar_h = std::clamp(ImGui::GetContentRegionAvail().y - 40, 60.0f, 220.0f);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float w = std::min(avail, 40.0f * static_cast<float>(N));
  const float bw = w / static_cast<float>(std::max<int64_t>(e.n, 1));
  ImGui::InvisibleButton("probrow", ImVec2(w, bar_h));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + w, p0.y + bar_h), IM_COL32(30, 32, 38, 255));
  const double top = std::max(*std::max_element(e.probs_row.begin(), e.probs_row.end()), 1e-12);
  const ColorScale vir = ColorScale::sequential(0, top);
  for (int64_t j = 0; j < e.n; ++j) {
    const float h = static_cast<float>(e.probs_row[j] / top) * (bar_h - 4);
    const ImVec2 a(p0.x + j * bw + 1, p0.y + bar_h - h), b(p0.x + (j + 1) * bw - 1, p0.y + bar_h);
    dl->AddRectFilled(a, b, color_of(vir, e.probs_row[j]));
    if (j == e.j) dl->AddRect(ImVec2(a.x - 1, p0.y), ImVec2(b.x + 1, b.y), IM_COL32(255, 255, 255, 255), 0, 0, 2);
  }
  if (hovered) {
    const int j = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - p0.x) / bw), 0, static_cast<int>(e.n) - 1);
    ImGui::SetTooltip("key j = %d '%s'\nlogit Ã = %s\nprobability A = %s\nclick: select this key", j,
                      token_name(s, j).c_str(), fmt(e.logits_row[j], 5).c_str(), fmt(e.probs_row[j], 5, false).c_str());
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) s.kj = j;
  }
  ImGui::TextDisabled("bar height = probability (tallest = %s); the white outline is key j = %d", fmt(top, 3, false).c_str(), s.kj);
}

}  // namespace viewer
