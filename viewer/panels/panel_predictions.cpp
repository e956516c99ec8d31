// panel_predictions.cpp — EMD & predictions: the top-k tokens at each [MASK] decoded with the
// Enhanced Mask Decoder and without it, side by side, and the attention maps of the decoder's two
// passes (appendix A.8: H = output of layer L−2, I_0 = H + P, I_{t+1} = layer_{L−1}(query I_t, key/value H)).
#include "ui/heatmap.h"
#include "panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace viewer {

namespace {

void prediction_table(const ViewerState& s, const char* id, const std::vector<deberta::MaskPrediction>& preds,
                      const std::vector<deberta::MaskPrediction>* other, float width) {
  const LoadedModel* m = s.result->model.get();
  const int k = 3;
  if (!ImGui::BeginTable(id, k + 1, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchSame,
                         ImVec2(width, 0)))
    return;
  // The position column as wide as its header (the font's size follows the interface's scale).
  ImGui::TableSetupColumn(tr("[MASK] at"), ImGuiTableColumnFlags_WidthFixed,
                          std::max(ImGui::CalcTextSize(tr("[MASK] at")).x, ImGui::CalcTextSize("0000").x));
  // TRANSLATORS: the first, second and third most probable tokens (column headers).
  ImGui::TableSetupColumn(tr("1st"));
  ImGui::TableSetupColumn(tr("2nd"));
  ImGui::TableSetupColumn(tr("3rd"));
  ImGui::TableHeadersRow();
  for (size_t p = 0; p < preds.size(); ++p) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(preds[p].position));
    const bool differs = other && p < other->size() && (*other)[p].top[0].id != preds[p].top[0].id;
    for (int t = 0; t < k; ++t) {
      ImGui::TableNextColumn();
      if (t >= static_cast<int>(preds[p].top.size())) continue;
      const auto& ts = preds[p].top[static_cast<size_t>(t)];
      const std::string raw = vocab_name(m, ts.id), name = shown_token(raw);  // a space shows as ▁
      // A narrow column (a phone) puts the probability on a line of its own rather than cut it.
      char cell[160];
      std::snprintf(cell, sizeof cell, "%s  %.3f", name.c_str(), ts.probability);
      if (ImGui::CalcTextSize(cell).x > ImGui::GetContentRegionAvail().x)
        std::snprintf(cell, sizeof cell, "%s\n%.3f", name.c_str(), ts.probability);
      if (t == 0)
        ImGui::TextColored(differs ? ImVec4(1, 0.55f, 0.3f, 1) : ImVec4(0.5f, 1.0f, 0.6f, 1), "%s", cell);
      else
        ImGui::Text("%s", cell);
      if (blank_token(raw) && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr(kBlankTokenNote));
    }
  }
  ImGui::EndTable();
}

/// A task head's output, baseline (as trained) beside the current ablation: label probabilities
/// for a sequence classifier, one row per token for a token classifier or the RTD discriminator.
void DrawHeadOutput(ViewerState& s, const Result& r) {
  const deberta::Model& m = r.model->model;
  const deberta::HeadOutput& h = *r.head;
  const deberta::HeadOutput& b = *r.head_baseline;
  // TRANSLATORS: %s is the head's kind as the core names it (English), e.g. "Sequence classification".
  ImGui::Text(tr("%s head"), head_title_worded(h.kind));
  const std::string note = deberta::head_note(m, h.kind);
  if (!note.empty()) Note(note);
  if (!r.ablation.is_default())
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), tr("ablated: %s (bars: as trained | ablated)"),
                       r.ablation.describe(&m.config).c_str());
  const auto& labels = deberta::head_labels(m);
  const bool rtd = h.kind == deberta::HeadKind::RTD;
  const int items = static_cast<int>(h.probs.rows());
  const int cols = static_cast<int>(h.probs.cols());
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (h.kind == deberta::HeadKind::SequenceClassification) {
    if (!ImGui::BeginTable("cls", 3, flags)) return;
    ImGui::TableSetupColumn(tr("label"));
    ImGui::TableSetupColumn(tr("as trained"));
    ImGui::TableSetupColumn(tr("now"));
    ImGui::TableHeadersRow();
    for (int k = 0; k < cols; ++k) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(k < static_cast<int>(labels.size()) ? labels[k].c_str() : std::to_string(k).c_str());
      for (const deberta::HeadOutput* o : {&b, &h}) {
        ImGui::TableNextColumn();
        const float p = static_cast<float>(o->probs(0, k));
        ImGui::ProgressBar(p, ImVec2(220, 0), fmt(p, 3, false).c_str());
      }
    }
    ImGui::EndTable();
    return;
  }
  // RTD / token classification: one row per token.
  if (!ImGui::BeginTable("tok", 3, flags)) return;
  ImGui::TableSetupColumn(tr("token"));
  ImGui::TableSetupColumn(rtd ? tr("P(replaced), as trained") : tr("label, as trained"));
  ImGui::TableSetupColumn(rtd ? tr("P(replaced), now") : tr("label, now"));
  ImGui::TableHeadersRow();
  for (int i = 0; i < items; ++i) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d %s", i, shown_token(token_name(s, i)).c_str());
    for (const deberta::HeadOutput* o : {&b, &h}) {
      ImGui::TableNextColumn();
      if (rtd) {
        const float p = static_cast<float>(o->probs(i, 0));
        ImGui::ProgressBar(p, ImVec2(180, 0), fmt(p, 3, false).c_str());
      } else {
        int best = 0;
        for (int k = 1; k < cols; ++k)
          if (o->probs(i, k) > o->probs(i, best)) best = k;
        ImGui::Text("%s %s", best < static_cast<int>(labels.size()) ? labels[best].c_str() : std::to_string(best).c_str(),
                    fmt(o->probs(i, best), 3, false).c_str());
      }
    }
  }
  ImGui::EndTable();
}

/// The [MASK]s' predictions with the EMD and without it, side by side where each column has room for a
/// row of three tokens and their probabilities, one above the other on a narrow display (a phone);
/// one column that says why when this run has no decoder.
void prediction_columns(ViewerState& s, const Result& r) {
  const auto& c = r.model->model.config;
  const float full = ImGui::GetContentRegionAvail().x;
  const bool stacked = (full - 20) / 2 < 24 * ImGui::GetFontSize();
  const float half = stacked ? full : (full - 20) / 2;
  if (r.emd_on.empty() && !r.emd_off.empty()) {
    // No decoder in this run (the model has none, or the ablation switched it off): one column that
    // says so, never a "with the EMD" heading over a reason why there is none.
    ImGui::TextColored(ImVec4(0.55f, 0.8f, 1, 1), "%s", tr("Predictions without the Enhanced Mask Decoder"));
    ImGui::PushTextWrapPos(0);
    // TRANSLATORS: {reason} is why there is no EMD (English from the core, or "the decoder did not run").
    Note(trf("This run has no EMD: {reason}. The MLM head reads the last encoder layer (layer {layer}) directly: "
             "no absolute position enters.",
             arg("reason", r.emd_note.empty() ? std::string(tr("the decoder did not run")) : r.emd_note),
             arg("layer", c.num_hidden_layers - 1)));
    ImGui::PopTextWrapPos();
    prediction_table(s, "emd_off", r.emd_off, nullptr, std::min(full, 720.0f));
    if (!r.ablation.is_default())
      ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), tr("with the current ablation: %s"),
                         r.ablation.describe(r.model ? &r.model->model.config : nullptr).c_str());
  } else if (!r.emd_on.empty() || !r.emd_off.empty()) {
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + half);
    ImGui::TextColored(ImVec4(0.55f, 0.8f, 1, 1), "%s", tr("with the Enhanced Mask Decoder"));
    Note(trf("The MLM head reads the decoder's output: H = output of layer {input_layer}, I_0 = H + P (absolute positions), "
             "layer {last_layer} applied twice.",
             arg("input_layer", c.num_hidden_layers - 2), arg("last_layer", c.num_hidden_layers - 1)));
    ImGui::PopTextWrapPos();
    prediction_table(s, "emd_on", r.emd_on, nullptr, half);
    ImGui::EndGroup();
    if (!stacked) ImGui::SameLine(0, 20);
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + half);
    ImGui::TextColored(ImVec4(0.55f, 0.8f, 1, 1), "%s", tr("without the EMD"));
    Note(trf("The MLM head reads the last encoder layer (layer {layer}) directly: no absolute position enters. "
             "Orange: top-1 differs from the EMD column.",
             arg("layer", c.num_hidden_layers - 1)));
    ImGui::PopTextWrapPos();
    prediction_table(s, "emd_off", r.emd_off, r.emd_on.empty() ? nullptr : &r.emd_on, half);
    ImGui::EndGroup();
    if (!r.ablation.is_default())
      ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), tr("both columns use the current ablation: %s"), r.ablation.describe(r.model ? &r.model->model.config : nullptr).c_str());
  }
}

/// The decoder passes' attention (head `emd_head`) beside the encoder's last layer, on one
/// probability scale. Returns the maps' size (the differences below use it).
float decoder_maps(App& app, const Result& r) {
  ViewerState& s = app.state;
  const auto& c = r.model->model.config;
  ImGui::TextUnformatted(tr("Attention of the decoder passes"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  ImGui::SliderInt((std::string(tr("head")) + "###emd_head").c_str(), &s.emd_head, 0, static_cast<int>(c.num_attention_heads) - 1);
  Note(tr("The shared last layer attends from the queries I_t to the keys/values H. Compare with the encoder's own "
          "last layer (left): the decoder's queries carry absolute positions."));
  const int h = s.emd_head;
  const deberta::Matrix& enc = r.trace.layers.back().attention.probs[h];
  std::vector<const deberta::Matrix*> maps = {&enc};
  for (const auto& p : r.emd()->passes) maps.push_back(&p.attention.probs[h]);
  const ColorScale vir = ColorScale::sequential(0, max_value(maps));
  // Every map and the colour bar in the width (a phone too): sizes in units of the font, which
  // follows the interface's scale; a title wider than its map wraps under it.
  const float em = ImGui::GetFontSize() / 15.0f, spacing = ImGui::GetStyle().ItemSpacing.x;
  const float size = std::clamp(std::min((ImGui::GetContentRegionAvail().x - 110 * em) / static_cast<float>(maps.size()) - spacing,
                                         ImGui::GetContentRegionAvail().y - 50 * em),
                                40.0f * em, 360.0f * em);
  int hover_map = -1, hi = -1, hj = -1;
  for (size_t t = 0; t < maps.size(); ++t) {
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + size);
    if (t == 0)
      ImGui::TextWrapped(tr("encoder layer %lld (no EMD)"), static_cast<long long>(c.num_hidden_layers - 1));
    else
      ImGui::TextWrapped(tr("EMD pass %zu: query I_%zu, key H"), t, t - 1);
    ImGui::PopTextWrapPos();
    Overlay ov;
    ov.highlight = s.hover_token;
    const HeatmapEvent ev = Heatmap(app, "emd/" + std::to_string(t), *maps[t], vir, ImVec2(size, size), r.generation, ov);
    if (ev.hovered) hover_map = static_cast<int>(t), hi = ev.i, hj = ev.j;
    ImGui::EndGroup();
    ImGui::SameLine();
  }
  ColorBar(app, vir, size + ImGui::GetTextLineHeightWithSpacing(), trc("colour bar", "probability"));
  if (hover_map >= 0)
    // TRANSLATORS: the first %s is the map's name ("encoder last layer" or "EMD pass 1"); A is the weight.
    ImGui::SetTooltip(tr("%s\nquery i = %d '%s' → key j = %d '%s'\nA = %s"),
                      hover_map == 0 ? tr("encoder last layer") : trf("EMD pass {pass}", arg("pass", hover_map)).c_str(), hi,
                      token_name(s, hi).c_str(), hj, token_name(s, hj).c_str(), fmt((*maps[hover_map])(hi, hj), 5, false).c_str());
  return size;
}

/// What the absolute positions change: each pass minus the encoder's last layer, on one signed
/// scale, the maps `size` wide under the passes' own.
void decoder_differences(App& app, const Result& r, float size) {
  const ViewerState& s = app.state;
  const int h = s.emd_head;
  int hi = -1, hj = -1;
  if (r.emd_attention_diff.empty() || h >= static_cast<int>(r.emd_attention_diff[0].size())) return;
  ImGui::NewLine();
  ImGui::Text(tr("Difference: EMD pass − encoder last layer (head %d)"), h);
  HelpMarker(tr("A_pass(i, j) − A_encoder(i, j): the same layer and weights, queries I_t = H + P instead of H. Red: the "
                "decoder attends more to key j, blue: less. Rows sum to 0."));
  std::vector<const deberta::Matrix*> diffs;
  for (const auto& pass : r.emd_attention_diff) diffs.push_back(&pass[h]);
  const ColorScale div = ColorScale::diverging(max_abs(diffs));
  ImGui::Dummy(ImVec2(size, 1));  // under the encoder's map: nothing to subtract there
  ImGui::SameLine();
  int hover_diff = -1;
  for (size_t t = 0; t < diffs.size(); ++t) {
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + size);
    ImGui::TextWrapped(tr("pass %zu − encoder"), t + 1);
    ImGui::PopTextWrapPos();
    Overlay ov;
    ov.highlight = s.hover_token;
    const HeatmapEvent ev = Heatmap(app, "emd_diff/" + std::to_string(t), *diffs[t], div, ImVec2(size, size), r.generation, ov);
    if (ev.hovered) hover_diff = static_cast<int>(t), hi = ev.i, hj = ev.j;
    ImGui::EndGroup();
    ImGui::SameLine();
  }
  ColorBar(app, div, size + ImGui::GetTextLineHeightWithSpacing(), trc("colour bar", "Δ probability"));
  if (hover_diff >= 0)
    ImGui::SetTooltip(tr("EMD pass %d − encoder last layer\nquery i = %d '%s' → key j = %d '%s'\nΔA = %s"), hover_diff + 1, hi,
                      token_name(s, hi).c_str(), hj, token_name(s, hj).c_str(), fmt((*diffs[hover_diff])(hi, hj), 5, true).c_str());
}

}  // namespace

void DrawPredictionsPanel(App& app) {
  ViewerState& s = app.state;
  if (!ResultOrWaiting(app)) return;
  const Result& r = *s.result;
  for (const std::string& w : r.warnings) ErrorText(trf("warning: {warning}", arg("warning", w)));
  if (r.head) {
    DrawHeadOutput(s, r);
    return;
  }
  if (!r.predict_note.empty()) Note(tr(r.predict_note.c_str()));  // English in the result (worker.cpp), marked there
  prediction_columns(s, r);
  ImGui::Separator();
  if (!r.emd()) return;  // said above: no decoder passes to show
  const float size = decoder_maps(app, r);
  decoder_differences(app, r, size);
}

}  // namespace viewer
