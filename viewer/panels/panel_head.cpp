// panel_head.cpp — Head detail: eq. 4's terms of one head side by side, their sum and the softmax.
//
// c2c, c2p, p2c (and p2p), each times the scale s, and their sum, the score Ã/√(f·d) (eq. 4: Ã the
// unscaled sum of the terms, f the model's scale factor — the paper's √(3d) for three terms; the
// labels are computed from the model, state.h), share one diverging colour scale centred on 0, so
// the same colour means the same number in every map; the weights softmax(Ã/√(f·d)) use viridis.
// Hover a cell for each term's value and share of |the terms|; click to select it (arrow keys move
// the selection). The maps zoom and pan together (Ctrl+wheel, drag, double-click resets).
#include "ui/heatmap.h"
#include "panels/panels.h"
#include "ui/wrapped_text.h"

#include "deberta/explain.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace viewer {

namespace {

struct Term {
  Quantity q;
  std::string title;
  std::string formula;
  const deberta::Matrix* m;
};

void cell_tooltip(const ViewerState& s, const std::vector<Term>& terms, const deberta::Matrix& logits,
                  const deberta::Matrix& probs, int i, int j, double scale_factor) {
  ImGui::BeginTooltip();
  WrappedTextF(tr("query i = %d '%s'  →  key j = %d '%s'"), i, token_name(s, i).c_str(), j, token_name(s, j).c_str());
  ImGui::TextDisabled("i − j = %d", i - j);
  double total_abs = 0;
  for (const auto& t : terms)
    if (t.m && t.q != Quantity::Logits && t.q != Quantity::Probs) total_abs += std::fabs((*t.m)(i, j));
  if (ImGui::BeginTable("cell", 3, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn(tr("term"));
    ImGui::TableSetupColumn(tr("value"));
    ImGui::TableSetupColumn(tr("share of |Ã| terms"));
    ImGui::TableHeadersRow();
    for (const auto& t : terms) {
      if (!t.m || t.q == Quantity::Logits || t.q == Quantity::Probs) continue;
      const double v = (*t.m)(i, j);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(t.title.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(fmt(v, 5).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%5.1f %%", total_abs > 0 ? 100.0 * std::fabs(v) / total_abs : 0.0);
    }
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(score_label(scale_factor, true).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(fmt(logits(i, j), 5).c_str());
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(trf("weight {formula}", arg("formula", weights_label(scale_factor))).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(fmt(probs(i, j), 5, false).c_str());
    ImGui::EndTable();
  }
  ImGui::TextDisabled("%s", tr("click: select this cell for the equation walk-through"));
  ImGui::EndTooltip();
}

/// The maps' arrangement in Head detail: one size for every map, one row or two, and whether the
/// token names stand left of the first map of each row.
struct MapsLayout {
  float size = 0;
  float title_h = 0;       ///< a map's title and formula above it
  float label_w = 96;      ///< the row labels' width
  bool labels = false;     ///< token names left of each row's first map
  bool wrap = false;       ///< two rows
};

/// Fits `n` maps of N × N cells to the window: one row, or two rows when that gives bigger maps
/// (row 1: c2c c2p p2c + the score bar; row 2: (p2p) sum softmax + the probability bar); row
/// labels when the cells are tall enough to read them and the maps are not zoomed.
MapsLayout fit_maps(const ViewerState& s, int n, int N) {
  MapsLayout lay;
  const float bar_w = 90;
  const float gap = ImGui::GetStyle().ItemSpacing.x;
  const float title_h = ImGui::GetTextLineHeightWithSpacing() * 2;
  lay.title_h = title_h;
  const float Hgt = ImGui::GetContentRegionAvail().y - 200;  // below: the cell as a sum, the softmax bars
  // Token names left of the first map of each row when the cells are tall enough to read them.
  const float label_w = lay.label_w;
  bool& labels = lay.labels;
  bool& wrap = lay.wrap;
  float& size = lay.size;
  for (int pass = 0; pass < 2; ++pass) {
    const float W = ImGui::GetContentRegionAvail().x - (labels ? label_w + gap : 0);
    const float one_row = std::min((W - 2 * bar_w - gap * (n + 2)) / n, Hgt - title_h);
    const int cols2 = (n + 1) / 2;
    const float two_rows = std::min((W - bar_w - gap * (cols2 + 1)) / cols2, (Hgt - 2 * title_h) / 2 - gap);
    wrap = two_rows > one_row * 1.15f;
    size = std::clamp(wrap ? two_rows : one_row, 60.0f, 420.0f);
    // Zoomed maps draw their own labels (heatmap.cpp); labels beside them would not line up.
    const auto view = s.map_views.find("head");
    const bool zoomed = view != s.map_views.end() && view->second.zoom > 1.0001f;
    if (pass == 0) labels = !zoomed && size / static_cast<float>(N) >= ImGui::GetTextLineHeight() * 0.9f;
    if (!labels) break;
  }
  return lay;
}

/// Row labels "i token", right-aligned against the map at the cursor.
void row_labels(const ViewerState& s, int N, float size, float title_h, float label_w) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(label_w, title_h + size));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float ch = size / static_cast<float>(N);
  for (int i = 0; i < N; ++i) {
    // "i token", the token shortened (whole characters, then "…") until the label fits its column:
    // the index always shows.
    std::string name = token_name(s, i);
    std::string lab = std::to_string(i) + " " + name;
    while (ImGui::CalcTextSize(lab.c_str()).x > label_w - 2 && !name.empty()) {
      size_t end = name.size() - 1;
      while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;  // a UTF-8 character's start
      name.erase(end);
      lab = std::to_string(i) + " " + name + "…";
    }
    const ImVec2 ts = ImGui::CalcTextSize(lab.c_str());
    const ImU32 col = i == s.qi ? IM_COL32(255, 255, 255, 255)
                      : i == s.hover_token ? IM_COL32(255, 170, 0, 255) : ImGui::GetColorU32(ImGuiCol_TextDisabled);
    dl->AddText(ImVec2(p0.x + label_w - ts.x - 2, p0.y + title_h + (i + 0.5f) * ch - ts.y * 0.5f), col, lab.c_str());
  }
}

/// The selected cell as a sum of the scaled terms (cell_sum_text), and its query's softmax row as
/// bars; a click on a bar selects its key.
void selected_cell(ViewerState& s, const Result& r, const std::vector<Term>& terms, const deberta::Matrix& logits,
                   const deberta::Matrix& probs) {
  const double f = r.trace.context.attention.scale_factor;
  std::vector<std::pair<std::string, double>> scaled;
  for (const auto& t : terms)
    if (t.q != Quantity::Logits && t.q != Quantity::Probs) scaled.push_back({t.title, (*t.m)(s.qi, s.kj)});
  WrappedTextF(tr("cell (i=%d, j=%d):  %s"), s.qi, s.kj,
              cell_sum_text(scaled, r.trace.context.attention.scale, logits(s.qi, s.kj), probs(s.qi, s.kj), f).c_str());
  WrappedTextDisabledF(tr("softmax row of query i = %d '%s' (key j on the x axis, bar height = the weight of key j)"), s.qi,
                      token_name(s, s.qi).c_str());
  std::vector<double> row(static_cast<size_t>(probs.cols()));
  for (int64_t j = 0; j < probs.cols(); ++j) row[static_cast<size_t>(j)] = probs(s.qi, j);
  const int key = ProbabilityBars(s, "head/row", row, s.kj,
                                  ImVec2(std::min(ImGui::GetContentRegionAvail().x, 40.0f * static_cast<float>(row.size())),
                                         std::clamp(ImGui::GetContentRegionAvail().y - 4, 120.0f, 160.0f)));
  if (key >= 0) s.kj = key;
}

/// The maps of the selected head, in order: each term of kAllTerms the run computed (its formula
/// from kTermTexts, p2c's with the model's index), the score and the weights.
std::vector<Term> head_maps(const ViewerState& s, const Result& r, const deberta::AttentionTrace& a) {
  const double f = r.trace.context.attention.scale_factor;
  std::vector<Term> terms;
  auto add = [&](Quantity q, const std::string& title, const std::string& formula) {
    const deberta::Matrix* m = attention_map(a, s.head, q);
    if (m && m->size()) terms.push_back({q, title, formula, m});
  };
  const bool paper_index = r.trace.context.attention.p2c_index == deberta::P2CIndex::Paper;
  for (deberta::Term t : deberta::kAllTerms)
    add(term_quantity(t), deberta::term_name(t), paper_index ? term_text(t).formula_paper_index : term_text(t).formula);
  std::string summed;  // the active terms, as Ã adds them
  for (const auto& t : terms) summed += (summed.empty() ? "" : " + ") + t.title;
  add(Quantity::Logits, score_label(f, true), "s·Ã = s·(" + summed + "), s = 1/" + deberta::scale_root(f));
  add(Quantity::Probs, weights_label(f), tr("the weights: softmax over j"));
  return terms;
}

}  // namespace

void DrawHeadPanel(App& app) {
  ViewerState& s = app.state;
  const Result* shown = ResultOrWaiting(app);
  if (!shown) return;
  const Result& r = *shown;
  LayerHeadSliders(s);
  ImGui::SameLine();
  // TRANSLATORS: keep the two leading spaces (they separate the text from the sliders).
  ImGui::TextDisabled(tr("  selected: query i = %d '%s' → key j = %d '%s'"), s.qi, token_name(s, s.qi).c_str(), s.kj,
                      token_name(s, s.kj).c_str());
  // Every term of the layer from its full detail (materialized by the worker for the selection).
  const LayerDetail* detail = DetailOrNote(s, s.layer);
  if (!detail) return;
  const deberta::AttentionTrace& a = detail->trace.layers[static_cast<size_t>(s.layer)].attention;
  const bool masked = r.trace.context.head_mask.count({s.layer, s.head}) > 0;

  const double f = r.trace.context.attention.scale_factor;
  const std::vector<Term> terms = head_maps(s, r, a);
  const deberta::Matrix& logits = a.logits[s.head];
  const deberta::Matrix& probs = a.probs[s.head];

  std::vector<const deberta::Matrix*> signed_maps;
  for (const auto& t : terms)
    if (t.q != Quantity::Probs) signed_maps.push_back(t.m);
  const ColorScale div = ColorScale::diverging(max_abs(signed_maps));
  const ColorScale vir = ColorScale::sequential(0, std::max(max_value({&probs}), 1e-12));

  const int n = static_cast<int>(terms.size());
  const int N = static_cast<int>(probs.rows());
  const MapsLayout lay = fit_maps(s, n, N);
  const float size = lay.size, title_h = lay.title_h, label_w = lay.label_w;
  const bool labels = lay.labels, wrap = lay.wrap;
  const int per_row = wrap ? n - n / 2 : n;  // first row holds the first terms
  // The layer is part of the version: a detail of another layer may reuse the freed one's memory.
  const uint64_t version = (r.generation << 16) ^ static_cast<uint64_t>(s.layer);

  int hover_i = -1, hover_j = -1;
  for (int t = 0; t < n; ++t) {
    const Term& term = terms[static_cast<size_t>(t)];
    const bool is_prob = term.q == Quantity::Probs;
    if (labels && (t == 0 || (wrap && t == per_row))) {
      row_labels(s, N, size, title_h, label_w);
      ImGui::SameLine();
    }
    if (is_prob && !wrap) {
      ColorBar(app, div, size + title_h, trc("colour bar", "score"));
      ImGui::SameLine();
    }
    ImGui::BeginGroup();
    ImGui::TextUnformatted(term.title.c_str());
    ImGui::TextDisabled("%s", term.formula.c_str());
    Overlay ov;
    ov.highlight = s.hover_token;
    ov.sel_i = s.qi, ov.sel_j = s.kj;
    ov.crossed = masked && is_prob;
    ov.view = "head";  // the six maps zoom and pan together
    const HeatmapEvent ev = Heatmap(app, "head/" + std::string(quantity_name(term.q)), *term.m, is_prob ? vir : div,
                                    ImVec2(size, size), version, ov);
    if (ev.hovered) hover_i = ev.i, hover_j = ev.j;
    if (ev.clicked) s.qi = ev.i, s.kj = ev.j;
    ImGui::EndGroup();
    ImGui::SameLine();
    if (wrap && t == per_row - 1) {
      ColorBar(app, div, size + title_h, trc("colour bar", "score"));  // ends row 1
    }
  }
  ColorBar(app, vir, size + title_h, trc("colour bar", "probability"));
  if (hover_i >= 0) cell_tooltip(s, terms, logits, probs, hover_i, hover_j, f);

  if (masked)
    WrappedTextDisabled(tr("rows: query i (top = 0), columns: key j (left = 0). Signed maps share one colour scale: "
                                 "blue < 0 < red. This head is masked: its probabilities are zeroed."));
  else
    WrappedTextDisabled(tr("rows: query i (top = 0), columns: key j (left = 0). Signed maps share one colour scale: "
                                  "blue < 0 < red."));

  ImGui::Separator();
  selected_cell(s, r, terms, logits, probs);
}

}  // namespace viewer
