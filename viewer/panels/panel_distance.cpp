// panel_distance.cpp — Relative distance: δ(i, j) of eq. 3 for the current sequence with a k
// slider, and the table rows the model really reads (log-bucketed in v2).
//
// eq. 3: δ(i, j) = 0 if i − j ≤ −k; 2k − 1 if i − j ≥ k; i − j + k otherwise. δ is a row of the
// relative table: c2p reads K_r[δ(i, j)], p2c reads Q_r[δ(i, j)] (code) or Q_r[δ(j, i)] (paper).
#include "ui/heatmap.h"
#include "panels/panels.h"
#include "ui/wrapped_text.h"

#include "deberta/equations.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cfloat>
#include <cstdio>

namespace viewer {

namespace {

deberta::Matrix as_double(const deberta::IndexMatrix& m) { return m.cast<double>(); }

std::string row_preview(const deberta::Matrix& table, int64_t row, int64_t offset, int64_t head, int64_t d) {
  const int64_t r = row - offset;
  if (table.size() == 0 || r < 0 || r >= table.rows()) return tr("(not projected)");
  std::string out = "[";
  for (int64_t t = 0; t < std::min<int64_t>(d, 4); ++t) out += (t ? ", " : "") + fmt(table(r, head * d + t), 3);
  return out + (d > 4 ? ", …]" : "]");
}

/// The bucket function of a log-bucketed model as a curve, i − j → bucketed position: the input's
/// span shaded, the end of the exact range dashed, the selected cell's distance as a white dot.
void bucket_curve(const ViewerState& s, const deberta::ModelConfig& c, int N, float size, int model_k) {
  const int span = static_cast<int>(std::max<int64_t>(N - 1, c.max_relative_positions));
  std::vector<int64_t> curve;
  for (int d = -span; d <= span; ++d)
    curve.push_back(deberta::log_bucket_position(d, c.position_buckets, c.max_relative_positions));
  int64_t ymax = 1;
  for (int64_t b : curve) ymax = std::max<int64_t>(ymax, std::abs(b));
  const int mid = static_cast<int>(c.position_buckets / 2);
  WrappedTextF(tr("bucket(i − j): exact up to ±%d, then logarithmic up to ±%lld; the shaded band is this input (±%d)"), mid,
              static_cast<long long>(c.max_relative_positions), N - 1);
  // Axes: x = i − j, y = the bucketed position; ticks at the ends, ±b/2 and the input's ±(N − 1).
  const float W = std::min(ImGui::GetContentRegionAvail().x, 2 * size + 120), Hc = 130, pad_l = 40, pad_b = 18;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##buckets", ImVec2(W, Hc));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float x0 = p0.x + pad_l, x1 = p0.x + W - 8, y0 = p0.y + 4, y1 = p0.y + Hc - pad_b;
  auto X = [&](double r) { return x0 + static_cast<float>((r + span) / (2.0 * span)) * (x1 - x0); };
  auto Y = [&](double b) { return y0 + static_cast<float>((ymax - b) / (2.0 * ymax)) * (y1 - y0); };
  const ImU32 axis = IM_COL32(120, 120, 130, 255), text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddRectFilled(ImVec2(X(-(N - 1)), y0), ImVec2(X(N - 1), y1), IM_COL32(90, 150, 230, 45));
  dl->AddLine(ImVec2(x0, Y(0)), ImVec2(x1, Y(0)), axis);
  dl->AddLine(ImVec2(X(0), y0), ImVec2(X(0), y1), axis);
  dl->AddLine(ImVec2(x0, y1), ImVec2(x1, y1), axis);
  dl->AddLine(ImVec2(x0, y0), ImVec2(x0, y1), axis);
  for (int sgn : {-1, 1}) {  // the end of the exact range, dashed
    for (float y = y0; y < y1; y += 6) dl->AddLine(ImVec2(X(sgn * mid), y), ImVec2(X(sgn * mid), std::min(y + 3, y1)), axis);
  }
  auto xtick = [&](int r) {
    const std::string l = std::to_string(r);
    dl->AddLine(ImVec2(X(r), y1), ImVec2(X(r), y1 + 3), axis);
    dl->AddText(ImVec2(X(r) - ImGui::CalcTextSize(l.c_str()).x * 0.5f, y1 + 2), text, l.c_str());
  };
  for (int r : {-span, -mid, 0, mid, span}) xtick(r);
  if (N - 1 > mid + 8 && N - 1 < span - 8) xtick(-(N - 1)), xtick(N - 1);
  auto ytick = [&](int64_t b) {
    const std::string l = std::to_string(b);
    dl->AddText(ImVec2(x0 - 4 - ImGui::CalcTextSize(l.c_str()).x, Y(static_cast<double>(b)) - ImGui::GetTextLineHeight() * 0.5f), text, l.c_str());
  };
  for (int64_t b : {-ymax, int64_t{0}, ymax}) ytick(b);
  for (size_t k = 1; k < curve.size(); ++k)
    dl->AddLine(ImVec2(X(static_cast<double>(k) - 1 - span), Y(static_cast<double>(curve[k - 1]))),
                ImVec2(X(static_cast<double>(k) - span), Y(static_cast<double>(curve[k]))), IM_COL32(255, 200, 80, 255), 1.5f);
  // The selected cell's distance.
  const int sel = s.qi - s.kj;
  const int64_t sb = curve[static_cast<size_t>(sel + span)];
  dl->AddCircleFilled(ImVec2(X(sel), Y(static_cast<double>(sb))), 4, IM_COL32(255, 255, 255, 255));
  if (hovered) {
    const int r = std::clamp(static_cast<int>(std::lround((ImGui::GetIO().MousePos.x - x0) / (x1 - x0) * 2 * span - span)), -span, span);
    ImGui::SetTooltip(tr("i − j = %d → bucketed position %lld → table row %lld"), r,
                      static_cast<long long>(curve[static_cast<size_t>(r + span)]),
                      static_cast<long long>(std::clamp<int64_t>(curve[static_cast<size_t>(r + span)] + model_k, 0, 2 * model_k - 1)));
  }
  WrappedTextDisabledF(tr("x: i − j (white dot: the selected cell, i − j = %d → %lld)   y: the position the model uses"), sel,
                      static_cast<long long>(sb));
}

/// The hovered cell (i, j) of either map: i − j, δ both ways, the bucket, and the rows of K_r, Q_r
/// the model reads there (from the layer's full detail).
void cell_tooltip(const ViewerState& s, const Result& r, const deberta::IndexMatrix& delta, int hi, int hj) {
  const auto& c = r.model->model.config;
  const auto& ctx = r.trace.context;
  const int model_k = static_cast<int>(ctx.attention.k);
  const LayerDetail* detail = detail_for(s, s.layer);  // K_r, Q_r of the layer in full
  const int64_t d = c.d_head();
  ImGui::BeginTooltip();
  ImGui::Text("i = %d '%s',  j = %d '%s'", hi, token_name(s, hi).c_str(), hj, token_name(s, hj).c_str());
  ImGui::Text("i − j = %d", hi - hj);
  ImGui::Text("δ(i,j) = %lld,  δ(j,i) = %lld   (k = %d)", static_cast<long long>(delta(hi, hj)),
              static_cast<long long>(delta(hj, hi)), s.distance_k);
  if (c.log_buckets()) ImGui::Text(tr("log bucket of i − j: %lld"), static_cast<long long>(ctx.rel_pos(hi, hj)));
  ImGui::Separator();
  ImGui::Text(tr("model (k = %d): c2p reads K_r row %lld, p2c reads Q_r row %lld"), model_k,
              static_cast<long long>(ctx.c2p_row(hi, hj)), static_cast<long long>(ctx.p2c_row(hi, hj)));
  ImGui::TextDisabled(tr("layer %d head %d:"), s.layer, s.head);
  if (detail) {
    const auto& a = detail->trace.layers[static_cast<size_t>(s.layer)].attention;
    ImGui::Text("K_r[%lld] = %s", static_cast<long long>(ctx.c2p_row(hi, hj)),
                row_preview(a.K_r, ctx.c2p_row(hi, hj), a.row_offset, s.head, d).c_str());
    ImGui::Text("Q_r[%lld] = %s", static_cast<long long>(ctx.p2c_row(hi, hj)),
                row_preview(a.Q_r, ctx.p2c_row(hi, hj), a.row_offset, s.head, d).c_str());
  } else {
    ImGui::TextDisabled(tr("K_r, Q_r: computing layer %d …"), s.layer);
  }
  ImGui::EndTooltip();
}

/// A map's title `fmt` (one %d: `k`) wrapped at the map's width `width` (wider than the map in
/// Japanese at the large interface size).
void map_title(float width, const char* fmt, int k) {
  char title[256];
  std::snprintf(title, sizeof title, fmt, k);
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  WrappedText(title);
  ImGui::PopTextWrapPos();
}

}  // namespace

void DrawDistancePanel(App& app) {
  ViewerState& s = app.state;
  const Result* shown = ResultOrWaiting(app);
  if (!shown) return;
  const Result& r = *shown;
  const auto& c = r.model->model.config;
  const int N = token_count(s);
  if (!c.relative_attention) {
    Note(tr("This model has no relative attention (relative_attention = false): there is no δ(i, j)."));
    return;
  }
  const auto& ctx = r.trace.context;
  const int model_k = static_cast<int>(ctx.attention.k);

  ImGui::TextWrapped("%s", tr("eq. 3:  δ(i, j) = 0 if i − j ≤ −k,  2k − 1 if i − j ≥ k,  else i − j + k.   "
                              "δ picks a row of the 2k-row relative table; c2p reads K_r[δ(i, j)] and p2c reads Q_r[δ]."));
  ImGui::SetNextItemWidth(260);
  ImGui::SliderInt((std::string(tr("k (illustration)")) + "###distance_k").c_str(), &s.distance_k, 1, std::max(N, 2));
  HelpMarker(tr("k of the left map only. The model's own k is fixed by training; to make the model see less "
                "distance, use the K slider of the Ablations panel."));
  if (c.log_buckets())
    WrappedTextDisabledF(tr("this model: k = %d, log buckets (position_buckets = %lld), relative table of 2k = %d rows"), model_k,
                        static_cast<long long>(c.position_buckets), 2 * model_k);
  else
    WrappedTextDisabledF(tr("this model: k = %d, relative table of 2k = %d rows"), model_k, 2 * model_k);

  // Left: eq. 3 for the slider's k. Right: the rows the model reads (c2p_row), bucketed in v2.
  deberta::IndexMatrix delta(N, N);
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) delta(i, j) = deberta::relative_distance(i, j, s.distance_k);
  const deberta::Matrix delta_d = as_double(delta);
  const deberta::Matrix rows_d = as_double(ctx.c2p_row);

  const float bar_w = 110;
  const float size = std::clamp(std::min((ImGui::GetContentRegionAvail().x - 2 * bar_w - 30) / 2,
                                         ImGui::GetContentRegionAvail().y - 130),
                                80.0f, 460.0f);
  const ColorScale sc1 = ColorScale::sequential(0, 2 * s.distance_k - 1);
  const ColorScale sc2 = ColorScale::sequential(0, 2 * model_k - 1);
  int hi = -1, hj = -1;

  ImGui::BeginGroup();
  ImGui::Text(tr("δ(i, j) with k = %d"), s.distance_k);
  Overlay ov;
  ov.highlight = s.hover_token;
  ov.sel_i = s.qi, ov.sel_j = s.kj;
  ov.view = "distance";  // both maps zoom and pan together; numbers appear once cells are big enough
  ov.digits = 0;
  HeatmapEvent e1 = Heatmap(app, "distance/delta", delta_d, sc1, ImVec2(size, size), r.generation * 1000 + s.distance_k, ov);
  if (e1.hovered) hi = e1.i, hj = e1.j;
  if (e1.clicked) s.qi = e1.i, s.kj = e1.j;
  ImGui::EndGroup();
  ImGui::SameLine();
  ColorBar(app, sc1, size, "δ");
  ImGui::SameLine();
  ImGui::BeginGroup();
  map_title(size, c.log_buckets() ? tr("rows the model reads: δ of the log-bucketed i − j (k = %d)") : tr("rows the model reads (k = %d)"),
            model_k);
  HeatmapEvent e2 = Heatmap(app, "distance/rows", rows_d, sc2, ImVec2(size, size), r.generation, ov);
  if (e2.hovered) hi = e2.i, hj = e2.j;
  if (e2.clicked) s.qi = e2.i, s.kj = e2.j;
  ImGui::EndGroup();
  ImGui::SameLine();
  ColorBar(app, sc2, size, trc("colour bar", "row"));

  if (c.log_buckets()) {
    bucket_curve(s, c, N, size, model_k);
  } else {
    ImGui::TextDisabled("%s", ctx.attention.window != ctx.attention.k
                                  ? tr("v1 models do not bucket: the right map is δ(i, j) with the model's k and the ablation's window K.")
                                  : tr("v1 models do not bucket: the right map is δ(i, j) with the model's k."));
  }
  if (hi >= 0) cell_tooltip(s, r, delta, hi, hj);
}

}  // namespace viewer
