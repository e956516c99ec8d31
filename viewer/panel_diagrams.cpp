// panel_diagrams.cpp — the Pipeline and Token links tabs: the layouts of diagrams.h drawn with
// ImGui (the same layouts the figure export writes as SVG / PDF).
//
// Pipeline: embedding → one encoder layer opened up (× L) → EMD → MLM head with the loaded
// model's sizes; a click on a box opens its tab. Token links (bertviz's view): queries left, keys
// right, a line per pair whose opacity is the attention weight or one term's share of it, for the
// selected layer and head; hovering a token shows only its links.
#include "diagrams.h"
#include "figure_export.h"
#include "heatmap.h"
#include "panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

namespace viewer {

namespace {

const char* kLinkWeights[] = {"attention weight softmax(Ã/√(3d))", "c2c share of the weight", "c2p share of the weight",
                              "p2c share of the weight"};

void open_target(ViewerState& s, const DiagramBox& b) {
  for (int k = 0; k < static_cast<int>(Tab::Count); ++k)
    if (b.target == tab_name(static_cast<Tab>(k))) s.tab = static_cast<Tab>(k), s.switch_tab = true;
  if (b.target == "grid" && b.quantity >= 0) s.grid_quantity = static_cast<Quantity>(b.quantity);
}

ImU32 abgr(uint32_t c, float alpha = 1) {
  return (c & 0x00ffffffu) | (static_cast<uint32_t>(std::clamp(alpha, 0.0f, 1.0f) * 255.0f) << 24);
}

/// Draws `d` scaled to the available width; returns the box clicked (−1 none) and the hovered
/// token row of a links diagram in `*hover_row` (−1 none).
int DrawDiagram(const Diagram& d, int* hover_row, bool* hover_left) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float sc = std::clamp(std::min(avail.x / d.width, std::max(avail.y - 40, 200.0f) / d.height), 0.4f, 1.8f);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("diagram", ImVec2(d.width * sc, d.height * sc));
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  const ImVec2 mp = ImGui::GetIO().MousePos;
  auto P = [&](float x, float y) { return ImVec2(p0.x + x * sc, p0.y + y * sc); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* font = ImGui::GetFont();
  const float fs = ImGui::GetFontSize();
  dl->AddRectFilled(p0, P(d.width, d.height), IM_COL32(255, 255, 255, 255));
  dl->AddText(font, fs * 1.05f, P(20, 12), IM_COL32(20, 20, 20, 255), d.title.c_str());
  int hit = -1;
  for (size_t k = 0; k < d.boxes.size(); ++k) {
    const DiagramBox& b = d.boxes[k];
    const ImVec2 a = P(b.x, b.y), z = P(b.x + b.w, b.y + b.h);
    const bool in = hovered && mp.x >= a.x && mp.x <= z.x && mp.y >= a.y && mp.y <= z.y;
    if (in && !b.target.empty()) hit = static_cast<int>(k);  // later (inner) boxes win
    dl->AddRectFilled(a, z, abgr(b.fill, b.off ? 0.4f : 1.0f), 3);
    dl->AddRect(a, z, IM_COL32(90, 90, 100, 255), 3, 0, b.container ? 1.5f : 1.0f);
    const ImU32 ink = b.off ? IM_COL32(140, 140, 140, 255) : IM_COL32(20, 20, 30, 255);
    // Readable size first; a box whose text would not fit shrinks its text to fit (never below 8 px).
    float f1 = std::clamp(11.0f * sc, fs * 0.85f, fs * 1.1f);
    const float room_w = (b.w - 12) * sc, room_h = (b.h - 6) * sc;
    const ImVec2 t1 = font->CalcTextSizeA(f1, FLT_MAX, 0, b.title.c_str());
    const ImVec2 t2 = b.container ? ImVec2(0, 0) : font->CalcTextSizeA(f1 * 0.88f, FLT_MAX, 0, b.detail.c_str());
    const float need_w = std::max(t1.x, t2.x), need_h = b.container ? t1.y : t1.y + 2 + t2.y;
    f1 *= std::max(8.0f / f1, std::min({1.0f, room_w / std::max(need_w, 1.0f), b.container ? 1.0f : room_h / std::max(need_h, 1.0f)}));
    const float f2 = f1 * 0.88f;
    dl->PushClipRect(a, z, true);
    dl->AddText(font, f1, P(b.x + 6, b.y + 3), ink, b.title.c_str());
    if (!b.container) dl->AddText(font, f2, ImVec2(a.x + 6 * sc, a.y + 3 * sc + f1 + 2), IM_COL32(60, 60, 70, 255), b.detail.c_str());
    dl->PopClipRect();
  }
  if (hit >= 0) {
    const DiagramBox& b = d.boxes[static_cast<size_t>(hit)];
    dl->AddRect(P(b.x, b.y), P(b.x + b.w, b.y + b.h), IM_COL32(255, 140, 0, 255), 3, 0, 2.5f);
    ImGui::SetTooltip("%s\nclick: open the %s tab", b.title.c_str(), b.target.c_str());
  }
  for (const DiagramArrow& a : d.arrows) {
    const ImVec2 u = P(a.x0, a.y0), v = P(a.x1, a.y1);
    dl->AddLine(u, v, IM_COL32(70, 70, 80, 255), 1.5f);
    const float dx = v.x - u.x, dy = v.y - u.y, len = std::max(std::hypot(dx, dy), 1e-3f), ux = dx / len, uy = dy / len;
    dl->AddTriangleFilled(v, ImVec2(v.x - 8 * ux + 4.5f * uy, v.y - 8 * uy - 4.5f * ux),
                          ImVec2(v.x - 8 * ux - 4.5f * uy, v.y - 8 * uy + 4.5f * ux), IM_COL32(70, 70, 80, 255));
  }
  // Token links.
  *hover_row = -1;
  if (!d.left.empty()) {
    const int n = static_cast<int>(d.left.size());
    if (hovered && mp.y >= P(0, d.top).y) {
      const int r = static_cast<int>((mp.y - P(0, d.top).y) / (d.row_h * sc));
      if (r >= 0 && r < n) *hover_row = r, *hover_left = mp.x < P((d.left_x + d.right_x) / 2, 0).x;
    }
    for (const DiagramLink& l : d.links) {
      const bool mine = *hover_row >= 0 && (*hover_left ? l.from == *hover_row : l.to == *hover_row);
      if (*hover_row >= 0 && !mine) continue;
      const float alpha = static_cast<float>(l.weight) * (mine ? 1.0f : 0.9f);
      dl->AddLine(P(d.left_x, d.top + (l.from + 0.5f) * d.row_h), P(d.right_x, d.top + (l.to + 0.5f) * d.row_h),
                  abgr(d.link_color, std::max(alpha, mine ? 0.15f : 0.0f)), mine ? 2.5f : 1.5f);
    }
    const float lf = std::clamp(d.row_h * sc * 0.8f, 6.0f, fs);
    for (int i = 0; i < n; ++i) {
      if (d.row_h * sc < lf * 0.9f && i % static_cast<int>(std::ceil(lf / (d.row_h * sc))) != 0 && i != *hover_row) continue;
      const float y = d.top + (i + 0.5f) * d.row_h;
      const std::string a = std::to_string(i) + " " + d.left[static_cast<size_t>(i)], b = std::to_string(i) + " " + d.right[static_cast<size_t>(i)];
      const ImU32 col = i == *hover_row ? IM_COL32(200, 90, 0, 255) : IM_COL32(20, 20, 30, 255);
      const float w = font->CalcTextSizeA(lf, FLT_MAX, 0, a.c_str()).x;
      dl->AddText(font, lf, ImVec2(P(d.left_x, y).x - 6 - w, P(0, y).y - lf / 2), col, a.c_str());
      dl->AddText(font, lf, ImVec2(P(d.right_x, y).x + 6, P(0, y).y - lf / 2), col, b.c_str());
    }
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", d.caption.c_str());
  ImGui::PopTextWrapPos();
  return clicked ? hit : -1;
}

void ExportButtons(ViewerState& s, const Diagram& d, const std::string& stem) {
  for (const char* ext : {".svg", ".pdf"}) {
    ImGui::SameLine();
    if (ImGui::Button((std::string("export ") + (ext + 1)).c_str())) {
      const std::string path = s.export_dir + "/" + stem + ext;
      ExportDone(s, write_diagram(d, path), path);
    }
  }
  if (!s.export_status.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", s.export_status.c_str());
  }
}

}  // namespace

Diagram current_pipeline(const ViewerState& s) {
  const Result& r = *s.result;
  const deberta::Model& m = r.model->model;
  return pipeline_diagram(m.config, r.trace.context.attention, token_count(s), r.emd() != nullptr, m.weights.lm_head.has_value());
}

std::optional<Diagram> current_links(const ViewerState& s, std::string* why) {
  const Result& r = *s.result;
  const int l = s.layer, h = s.head;
  const deberta::Matrix* probs = shown_map(s, l, h, Quantity::Probs);
  if (!probs || probs->size() == 0) return *why = "no attention weights for layer " + std::to_string(l), std::nullopt;
  std::vector<std::string> names = r.input.names;
  names.resize(static_cast<size_t>(probs->rows()), "?");
  const std::string where = "layer " + std::to_string(l) + ", head " + std::to_string(h);
  if (s.links_weight == 0) return links_diagram(names, *probs, "Token links: attention weights, " + where);
  const Quantity qs[] = {Quantity::C2C, Quantity::C2P, Quantity::P2C, Quantity::P2P};
  std::vector<const deberta::Matrix*> terms;
  size_t which = 0;
  for (Quantity q : qs) {
    const deberta::Matrix* t = shown_map(s, l, h, q);
    if (!t || t->size() == 0) {
      if (static_cast<int>(q) == s.links_weight - 1) return *why = std::string(quantity_name(q)) + " is off in this run", std::nullopt;
      continue;
    }
    if (static_cast<int>(q) == s.links_weight - 1) which = terms.size();
    terms.push_back(t);
  }
  if (terms.empty()) return *why = "the terms of layer " + std::to_string(l) + " are not computed yet", std::nullopt;
  return links_diagram(names, term_share(*probs, terms, which),
                       "Token links: " + std::string(quantity_name(qs[s.links_weight - 1])) + "'s share of the weight, " + where);
}

void DrawPipelinePanel(App& app) {
  ViewerState& s = app.state;
  if (!s.result) {
    WaitingNote(app);
    return;
  }
  const Diagram d = current_pipeline(s);
  ImGui::TextDisabled("Click a box to open its view.");
  ExportButtons(s, d, "pipeline");
  int row = -1;
  bool left = true;
  const int clicked = DrawDiagram(d, &row, &left);
  if (clicked >= 0) open_target(s, d.boxes[static_cast<size_t>(clicked)]);
}

void DrawLinksPanel(App& app) {
  ViewerState& s = app.state;
  if (!s.result) {
    WaitingNote(app);
    return;
  }
  LayerHeadSliders(s);
  ImGui::SetNextItemWidth(280);
  ImGui::Combo("line weight", &s.links_weight, kLinkWeights, IM_ARRAYSIZE(kLinkWeights));
  HelpMarker("A term's share of query i's weight on key j: weight · |term| / (|c2c| + |c2p| + |p2c| (+ |p2p|)), so the "
             "shares of all terms add up to the weight. Hover a token to see only its links.");
  if (s.links_weight > 0 && !detail_for(s, s.layer)) {
    DetailNote(s.layer);
    return;
  }
  ViewerState::LinksCache& c = s.links_cache;
  if (c.result != s.result || c.detail != s.detail || c.layer != s.layer || c.head != s.head || c.weight != s.links_weight) {
    c.why.clear();
    c.diagram = current_links(s, &c.why);
    c.result = s.result, c.detail = s.detail, c.layer = s.layer, c.head = s.head, c.weight = s.links_weight;
  }
  if (!c.diagram) {
    Note(c.why);
    return;
  }
  ExportButtons(s, *c.diagram, "links");
  int row = -1;
  bool left = true;
  DrawDiagram(*c.diagram, &row, &left);
  if (row >= 0) s.hover_token = row;
}

}  // namespace viewer
