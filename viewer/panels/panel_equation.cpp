// panel_equation.cpp — Equation walk-through: deberta::explain_cell / explanation_steps for the
// selected layer, head and cell, with the real numbers and the paper's equation numbers as printed
// in arXiv 2006.03654 v6 (the same steps `deberta explain` prints; Ã unscaled, the score
// Ã/√(f·d) with the model's own factor, the weights its softmax); the vectors behind each dot product (Q_c[i], K_c[j], K_r[δ],
// Q_r[δ'] over the d dimensions and their element-wise products); the query's softmax row. Each row
// of the walk-through shows, in its last column, the paper's sentence or display that it computes
// (paper_quotes.h: quote_for_explain_step), with its section and equation as printed in v6.
#include "ui/heatmap.h"
#include "panels/panels.h"
#include "ui/quote_widget.h"
#include "ui/wrapped_text.h"
#include "lesson/lesson.h"

#include "deberta/explain.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace viewer {

namespace {

/// The cell's selectors: layer and head, query i and key j (0 … N − 1), and how to move them.
void draw_cell_selectors(ViewerState& s, int N) {
  LayerHeadSliders(s);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt((std::string(tr("query i")) + "###query_i").c_str(), &s.qi, 0, N - 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt((std::string(tr("key j")) + "###key_j").c_str(), &s.kj, 0, N - 1);
  ImGui::TextDisabled("%s", tr("Arrow keys move the cell; click a cell in Head detail to pick it."));
}

/// The walk-through: a row per step of deberta::explanation_steps(e) (its equation, formula, the
/// real numbers) with, in the last column, the paper's passage it computes (quote_for_explain_step).
void draw_steps_table(App& app, const deberta::CellExplanation& e) {
  const auto steps = deberta::explanation_steps(e);
  if (!ImGui::BeginTable("steps", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp))
    return;
  ImGui::TableSetupColumn(tr("step"), ImGuiTableColumnFlags_WidthFixed, 150);
  ImGui::TableSetupColumn(tr("formula"), ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableSetupColumn(tr("with the numbers"), ImGuiTableColumnFlags_WidthStretch, 1.4f);
  ImGui::TableSetupColumn(tr("in the paper's words (v6)"), ImGuiTableColumnFlags_WidthStretch, 1.5f);
  ImGui::TableHeadersRow();
  std::set<const PaperQuote*> shown;  // a passage two rows compute is written once
  for (const auto& st : steps) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::PushTextWrapPos(0.0f);  // every cell wraps at its column's edge
    // The core's steps in segments: their prose through the catalogues (lesson.h explain_worded).
    WrappedTextColored(ImVec4(0.55f, 0.8f, 1.0f, 1), explain_worded(st.equation_parts));
    ImGui::TableNextColumn();
    WrappedText(explain_worded(st.formula_parts));
    ImGui::TableNextColumn();
    if (app.gfx.mono) ImGui::PushFont(app.gfx.mono);
    WrappedText(explain_worded(st.numbers_parts));
    if (app.gfx.mono) ImGui::PopFont();
    ImGui::TableNextColumn();
    if (const PaperQuote* q = quote_for_explain_step(st); !q)
      ImGui::TextDisabled("%s", tr("(no passage recorded for this row)"));
    else if (!shown.insert(q).second)
      ImGui::TextDisabled(tr("the passage above (%s)"), q->cite().c_str());
    else
      PaperQuoteText(*q);
    ImGui::PopTextWrapPos();
  }
  ImGui::EndTable();
}

/// One dot product behind a term: the term's name, its two vectors (named, each [d] of the head)
/// and the trace's s · term.
struct TermVectors {
  const char* term;
  std::string a_name, b_name;
  Eigen::VectorXd va, vb;
  double value;
};

/// The dot products behind the cell's active terms (c2c, c2p, p2c, p2p), read from the layer's
/// attention trace `a` (Q_c, K_c [N, H·d]; K_r, Q_r [rows, H·d] from a.row_offset) for head
/// s.head of width `d`. A term whose table row lies outside the kept rows is left out.
std::vector<TermVectors> term_vectors(const ViewerState& s, const deberta::AttentionTrace& a, const deberta::CellExplanation& e,
                                      int64_t d) {
  std::vector<TermVectors> pairs;
  auto row = [&](const deberta::Matrix& m, int64_t r0) -> Eigen::VectorXd {
    return m.row(r0).segment(s.head * d, d).transpose();
  };
  const Eigen::VectorXd q = row(a.Q_c, e.i), k = row(a.K_c, e.j);
  if (e.active[deberta::Term::c2c]) pairs.push_back({"c2c", "Q_c[" + std::to_string(e.i) + "]", "K_c[" + std::to_string(e.j) + "]", q, k, e.scaled[deberta::Term::c2c]});
  const int64_t rc = e.c2p_row - a.row_offset, rp = e.p2c_row - a.row_offset;
  if (e.active[deberta::Term::c2p] && rc >= 0 && rc < a.K_r.rows())
    pairs.push_back({"c2p", "Q_c[" + std::to_string(e.i) + "]", "K_r[" + std::to_string(e.c2p_row) + "]", q, row(a.K_r, rc), e.scaled[deberta::Term::c2p]});
  if (e.active[deberta::Term::p2c] && rp >= 0 && rp < a.Q_r.rows())
    pairs.push_back({"p2c", "K_c[" + std::to_string(e.j) + "]", "Q_r[" + std::to_string(e.p2c_row) + "]", k, row(a.Q_r, rp), e.scaled[deberta::Term::p2c]});
  if (e.active[deberta::Term::p2p] && rp >= 0 && rp < a.Q_r.rows() && rc >= 0 && rc < a.K_r.rows())
    pairs.push_back({"p2p", "Q_r[" + std::to_string(e.p2c_row) + "]", "K_r[" + std::to_string(e.c2p_row) + "]", row(a.Q_r, rp),
                     row(a.K_r, rc), e.scaled[deberta::Term::p2p]});
  return pairs;
}

/// The vectors behind the dot products, a column per term: each term is the sum of an element-wise
/// product (bars over the d dimensions: the two vectors on one scale, the product on another),
/// times the scale s.
void draw_term_vectors(const ViewerState& s, const std::vector<TermVectors>& pairs, double scale, int64_t d) {
  double vmax = 1e-12, pmax = 1e-12;
  for (const auto& p : pairs) {
    vmax = std::max({vmax, p.va.cwiseAbs().maxCoeff(), p.vb.cwiseAbs().maxCoeff()});
    pmax = std::max(pmax, p.va.cwiseProduct(p.vb).cwiseAbs().maxCoeff());
  }
  const int cols = std::max(1, static_cast<int>(pairs.size()));
  const float col_w = (ImGui::GetContentRegionAvail().x - 8 * (cols - 1)) / static_cast<float>(cols);
  const float label_w = 78, bar_h = std::max(40.0f, ImGui::GetTextLineHeight() * 2.6f);  // each half ≥ 16 px
  for (size_t c = 0; c < pairs.size(); ++c) {
    const TermVectors& p = pairs[c];
    if (c) ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::PushID(static_cast<int>(c));
    const Eigen::VectorXd prod = p.va.cwiseProduct(p.vb);
    // One notation with `deberta explain` (issue 58): the term is the unscaled sum, the map holds s · term.
    ImGui::TextColored(ImVec4(0.55f, 0.8f, 1.0f, 1), "%s = ∑ (%s ∘ %s)", p.term, p.a_name.c_str(), p.b_name.c_str());
    VectorBars(p.a_name.c_str(), p.va, vmax, label_w, ImVec2(col_w, bar_h));
    VectorBars(p.b_name.c_str(), p.vb, vmax, label_w, ImVec2(col_w, bar_h));
    VectorBars(tr("product"), prod, pmax, label_w, ImVec2(col_w, bar_h));
    ImGui::Text("%s = %s,  s · %s = %s", p.term, fmt(prod.sum(), 4).c_str(), p.term, fmt(prod.sum() * scale, 4).c_str());
    // TRANSLATORS: %s is a term times the scale (s·c2c, s·c2p, …), then its value.
    ImGui::TextDisabled(tr("the trace's %s: %s"), ("s·" + std::string(p.term)).c_str(), fmt(p.value, 4).c_str());
    ImGui::PopID();
    ImGui::EndGroup();
  }
  ImGui::TextDisabled(tr("d = %lld dimensions of head %d; the vectors share one scale (±%s), the products another (±%s). "
                         "Hover a bar for its value."),
                      static_cast<long long>(d), s.head, fmt(vmax, 3, false).c_str(), fmt(pmax, 3, false).c_str());
}

/// The query's softmax row: where this cell's probability sits among all keys; a click on a bar
/// picks that key j.
void draw_softmax_row(ViewerState& s, const Result& r, const deberta::CellExplanation& e, int N) {
  ImGui::Spacing();
  ImGui::Text(tr("softmax row of query i = %d: the weight of every key j, %s"), s.qi,
              weights_label(r.trace.context.attention.scale_factor).c_str());
  const float w = std::min(ImGui::GetContentRegionAvail().x, 40.0f * static_cast<float>(N));
  const int key = ProbabilityBars(s, "equation/row", e.probs_row, static_cast<int>(e.j),
                                  ImVec2(w, std::clamp(ImGui::GetContentRegionAvail().y - 24, 80.0f, 260.0f)));
  if (key >= 0) s.kj = key;
  ImGui::TextDisabled(tr("bar height = the weight (tallest = %s); the white outline is key j = %d"),
                      fmt(*std::max_element(e.probs_row.begin(), e.probs_row.end()), 3, false).c_str(), s.kj);
}

}  // namespace

void DrawEquationPanel(App& app) {
  ViewerState& s = app.state;
  const Result* shown = ResultOrWaiting(app);
  if (!shown) return;
  const Result& r = *shown;
  const int N = token_count(s);
  draw_cell_selectors(s, N);

  const LayerDetail* detail = DetailOrNote(s, s.layer);
  if (!detail) return;
  deberta::CellExplanation e;
  try {
    e = deberta::explain_cell(r.model->model, detail->trace, s.layer, s.head, s.qi, s.kj);
  } catch (const std::exception& ex) {
    ErrorText(ex.what());
    return;
  }
  ImGui::Separator();
  ImGui::Text(tr("Attention score of query i = %d '%s' for key j = %d '%s' in layer %d, head %d (N = %lld)"), s.qi,
              token_name(s, static_cast<int>(e.i)).c_str(), s.kj, token_name(s, static_cast<int>(e.j)).c_str(), s.layer,
              s.head, static_cast<long long>(e.n));
  if (!r.ablation.is_default()) ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), tr("under the ablation: %s"), r.ablation.describe(r.model ? &r.model->model.config : nullptr).c_str());
  draw_steps_table(app, e);

  // The vectors behind the dot products: each term is the sum of an element-wise product, times s.
  const deberta::AttentionTrace& a = detail->trace.layers[static_cast<size_t>(s.layer)].attention;
  const int64_t d = r.model->model.config.d_head();
  if (ImGui::CollapsingHeader((std::string(tr("The vectors: each term is a sum of d element-wise products")) + "###vectors").c_str(),
                              ImGuiTreeNodeFlags_DefaultOpen))
    draw_term_vectors(s, term_vectors(s, a, e, d), e.scale, d);

  draw_softmax_row(s, r, e, N);
}

}  // namespace viewer
