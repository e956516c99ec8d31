// panel_grid.cpp — Attention grid: one thumbnail per layer × head of a chosen quantity, all on one
// shared colour scale. Click a thumbnail to open it in Head detail; right-click to mask that head.
#include "ui/heatmap.h"
#include "panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace viewer {

namespace {

/// The quantity selector: every quantity of kAllQuantities this run computed (a term switched
/// off has no map), its formula beside it, and how to use the grid.
void quantity_choice(ViewerState& s, const Result& r) {
  ImGui::TextUnformatted(tr("show"));
  for (Quantity q : kAllQuantities) {
    if (!computed(r, q)) continue;
    ImGui::SameLine();
    // The paper's term names stay; logits and probs in the reader's language (lesson.h quantity_word).
    if (ImGui::RadioButton((quantity_word(q) + "###" + quantity_name(q)).c_str(), s.grid_quantity == q)) s.grid_quantity = q;
  }
  if (!computed(r, s.grid_quantity)) s.grid_quantity = Quantity::Probs;
  // The formula beside the choices where it fits, else on a line of its own (a phone: it was cut
  // at the window's side).
  const std::string formula = std::string("  ") + tr(quantity_label(s.grid_quantity));
  ImGui::SameLine();
  if (ImGui::CalcTextSize(formula.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
  ImGui::TextDisabled("%s", formula.c_str());
  Note(tr("Click a map to open it in Head detail. Right-click to mask / unmask that head (the model re-runs). "
          "Ctrl+wheel: zoom all maps, drag: pan, double-click: reset."));
}

/// The hovered thumbnail's layer, head, cell and value, and what a click does there.
void grid_tooltip(const ViewerState& s, const Result& r, const deberta::Matrix& m, int hover_l, int hover_h, int hover_i,
                  int hover_j) {
  ImGui::BeginTooltip();
  ImGui::Text(r.trace.context.head_mask.count({hover_l, hover_h}) ? tr("layer %d, head %d  (masked)") : tr("layer %d, head %d"),
              hover_l, hover_h);
  ImGui::Text("%s(i=%d '%s', j=%d '%s') = %s", quantity_name(s.grid_quantity), hover_i, token_name(s, hover_i).c_str(),
              hover_j, token_name(s, hover_j).c_str(), fmt(m(hover_i, hover_j), 5).c_str());
  ImGui::TextDisabled("%s", r.trace.context.head_mask.count({hover_l, hover_h}) ? tr("click: open in Head detail · right-click: unmask this head")
                                                                                 : tr("click: open in Head detail · right-click: mask this head"));
  ImGui::EndTooltip();
}

/// The grid's geometry in pixels: the label column's width, each map's side and the gap between maps.
struct GridLayout {
  float label_w = 0, size = 0, gap = 6;
  bool short_heads = false;  ///< the heads numbered alone, the word "head" once in the label column
  /// Where head h's column (its label and its maps) starts, for ImGui::SameLine.
  float column_x(int h) const { return label_w + h * (size + gap) + ImGui::GetStyle().WindowPadding.x; }
};

/// The label column as wide as the widest row label ("layer 11"; the font follows the interface's
/// scale), the maps as large as the panel allows (24–220 px) beside the colour bar. Where
/// "head H−1" is wider than a map (a phone; "ヘッド 3" ran into "ヘッド 2"), the heads are numbered
/// alone and the column widens to hold the word. L, H: layers and heads. No errors.
GridLayout grid_layout(int L, int H) {
  char widest[64];
  std::snprintf(widest, sizeof widest, tr("layer %d"), L - 1);
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  GridLayout g;
  g.label_w = ImGui::CalcTextSize(widest).x + spacing;
  const float bar_w = 110 * ImGui::GetFontSize() / 15.0f;
  const auto side = [&] {
    const float avail_w = ImGui::GetContentRegionAvail().x - g.label_w - bar_w - g.gap * H;
    const float avail_h = ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 2 - g.gap * L;
    return std::clamp(std::min(avail_w / H, avail_h / L), 24.0f, 220.0f);
  };
  g.size = side();
  std::snprintf(widest, sizeof widest, tr("head %d"), H - 1);
  if (ImGui::CalcTextSize(widest).x + spacing > g.size + g.gap) {
    g.short_heads = true;
    g.label_w = std::max(g.label_w, ImGui::CalcTextSize(trc("grid", "head")).x + spacing);
    g.size = side();
  }
  return g;
}

/// The row of head labels over the maps ("head 0", or "head" then 0, 1, … where they would collide).
void head_labels(ViewerState& s, const GridLayout& g, int H) {
  if (g.short_heads)
    ImGui::TextUnformatted(trc("grid", "head"));
  else
    ImGui::Dummy(ImVec2(g.label_w, 0));
  for (int h = 0; h < H; ++h) {
    ImGui::SameLine(g.column_x(h));
    if (g.short_heads)
      ImGui::Text("%d", h);
    else
      ImGui::Text(tr("head %d"), h);
    if (h < 2) RecordWidget(s, "grid: head " + std::to_string(h));  // the page's test: labels apart
  }
}

}  // namespace

void DrawGridPanel(App& app) {
  ViewerState& s = app.state;
  const Result* shown = ResultOrWaiting(app);
  if (!shown) return;
  const Result& r = *shown;
  const auto& c = r.model->model.config;
  const int L = static_cast<int>(c.num_hidden_layers), H = static_cast<int>(c.num_attention_heads);

  quantity_choice(s, r);
  const bool prob = s.grid_quantity == Quantity::Probs;
  // Probabilities from the result's trace; any other term needs every layer in full (the worker
  // materializes them when this quantity is picked).
  std::vector<const deberta::Matrix*> maps;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) maps.push_back(shown_map(s, l, h, s.grid_quantity));
  for (int l = 0; l < L; ++l)
    if (!maps[static_cast<size_t>(l * H)]) {
      DetailNote(l);
      return;
    }
  const ColorScale scale = prob ? ColorScale::sequential(0, max_value(maps)) : ColorScale::diverging(max_abs(maps));

  const GridLayout g = grid_layout(L, H);
  const float label_w = g.label_w, size = g.size, gap = g.gap;

  ImGui::BeginGroup();
  head_labels(s, g, H);
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(gap, gap));
  int hover_l = -1, hover_h = -1, hover_i = -1, hover_j = -1;
  for (int l = 0; l < L; ++l) {
    ImGui::BeginGroup();
    ImGui::Dummy(ImVec2(label_w, size * 0.5f - ImGui::GetTextLineHeight()));
    ImGui::Text(tr("layer %d"), l);
    if (l == 0) RecordWidget(s, "grid: layer 0");  // the page's test: the label beside, not under, its maps
    ImGui::EndGroup();
    for (int h = 0; h < H; ++h) {
      ImGui::SameLine(g.column_x(h));
      const deberta::Matrix* m = maps[static_cast<size_t>(l * H + h)];
      Overlay ov;
      ov.highlight = s.hover_token;
      ov.crossed = r.trace.context.head_mask.count({l, h}) > 0;
      if (l == s.layer && h == s.head) ov.sel_i = s.qi, ov.sel_j = s.kj;
      ov.view = "grid";  // every thumbnail zooms and pans together
      const HeatmapEvent ev = Heatmap(app, "grid/" + std::to_string(l) + "/" + std::to_string(h), *m, scale,
                                      ImVec2(size, size), r.generation, ov);
      if (l == 0 && h == 0) RecordWidget(s, "grid: map 0 0");
      if (l == s.layer && h == s.head)
        ImGui::GetWindowDrawList()->AddRect(ImVec2(ev.min.x - 3, ev.min.y - 3), ImVec2(ev.max.x + 3, ev.max.y + 3),
                                            IM_COL32(255, 200, 60, 255), 0, 0, 2);
      if (ev.hovered) hover_l = l, hover_h = h, hover_i = ev.i, hover_j = ev.j;
      if (ev.clicked) {
        s.layer = l, s.head = h;
        s.tab = Tab::Head;
        s.switch_tab = true;
      }
      if (ev.right_clicked) toggle_head_mask(app, l, h);
    }
  }
  ImGui::PopStyleVar();
  ImGui::EndGroup();
  ImGui::SameLine();
  ColorBar(app, scale, std::min(size * L, 300.0f), prob ? trc("colour bar", "probability") : trc("colour bar", "score"));

  if (hover_l >= 0) grid_tooltip(s, r, *maps[static_cast<size_t>(hover_l * H + hover_h)], hover_l, hover_h, hover_i, hover_j);
}

}  // namespace viewer
