// panel_compare.cpp — Compare: a second model (B) on the same tokens as the loaded model (A).
// For the selected layer and head: A's attention probabilities, B's, and A − B on one shared colour
// scale; the layers × heads table of mean |P_A − P_B|; both models' predictions at each [MASK] with
// KL(A ‖ B). The trained-ablation zoo (docs/table4.md) is listed with its table numbers, so that a
// model trained *without* c2p can be opened beside the one trained *with* it in one click.
#include "ui/heatmap.h"
#include "panels/panels.h"
#include "ui/wrapped_text.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>

namespace viewer {

// The "change" of each variant of the shipped zoo (notebooks_data/models/zoo/table4.json), marked
// for translation: the Compare tab draws them with tr(), so each must match the JSON's text byte for
// byte (a description not listed here is drawn as written; viewer_i18n_no_english reads the tab).
[[maybe_unused]] constexpr const char* kZooChanges[] = {
    N_("c2c + c2p + p2c, EMD with I = H + P (the bundled recipe)"),
    N_("no EMD and no absolute position anywhere; one layer application fewer"),
    N_("no EMD; absolute positions added at the input as BERT does (position_biased_input)"),
    N_("the EMD's two layer applications with I = H: the baseline's depth and weights, no absolute position "
       "(deberta_explorer.emd_position false)"),
    N_("absolute positions added at the input (position_biased_input) and the EMD's two layer applications with I = H: "
       "the baseline's depth and weights, the positions moved from the decoder to the input (deberta_explorer.emd_position false)"),
    N_("trained with the p2p term (deberta_explorer.p2p)"),
    N_("p2c reads δ(j,i) in training (deberta_explorer.p2c_index)"),
    N_("no relative attention; absolute positions at the input (BERT-style)"),
};

namespace {

namespace fs = std::filesystem;

std::string short_name(const std::string& dir) {
  const fs::path p(dir);
  return p.filename().empty() ? p.parent_path().filename().string() : p.filename().string();
}

void zoo_table(App& app) {
  ViewerState& s = app.state;
  // The listing is read off the UI thread (app.cpp's poll_compare, jobs/worker.h's read_zoo).
  if (!s.zoo || s.zoo->dir != s.zoo_dir) {
    ImGui::TextDisabled(tr("loading %s …"), s.zoo_dir.c_str());
    return;
  }
  const std::vector<ZooEntry>& zoo = s.zoo->models;
  if (zoo.empty()) {
    Note(trf("No trained-ablation zoo found at '{dir}' (notebooks_data/models/zoo).", arg("dir", s.zoo_dir)));
    return;
  }
  const auto find = [&](const char* name) -> const ZooEntry* {
    for (const auto& z : zoo)
      if (z.name == name) return &z;
    return nullptr;
  };
  const ZooEntry* base = find("deberta-tiny-baseline");
  const ZooEntry* no_c2p = find("deberta-tiny-no-c2p");
  if (base && no_c2p && ImGui::Button((std::string(tr("Baseline  vs  trained without c2p")) + "###zoo_pair").c_str())) {
    start_load(app, base->path);
    start_load_b(app, no_c2p->path);
  }
  ImGui::SameLine();
  HelpMarker(tr("Loads the zoo's baseline as model A and the model trained without c2p as model B: the paper's "
                "Table 4 question (what does c2p contribute?) answered by training, not by switching a term off."));
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (ImGui::BeginTable("zoo", 6, flags)) {
    // The numbers and buttons keep their width; the long "trained with" text takes what is left
    // and wraps (before, it pushed the number columns down to one letter at 1280 px).
    const float number = ImGui::CalcTextSize("100.0 %").x;
    ImGui::TableSetupColumn(tr("model"), ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn(tr("trained with"), ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("top-1", ImGuiTableColumnFlags_WidthFixed, number);  // i18n: not translated (a metric's name)
    ImGui::TableSetupColumn("top-5", ImGuiTableColumnFlags_WidthFixed, number);  // i18n: not translated (a metric's name)
    ImGui::TableSetupColumn("CE", ImGuiTableColumnFlags_WidthFixed, number);
    ImGui::TableSetupColumn(tr("open"), ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableHeadersRow();
    for (const auto& z : zoo) {
      ImGui::PushID(z.name.c_str());
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(z.name.c_str());
      ImGui::TableNextColumn();
      // The shipped zoo's descriptions in the reader's language (kZooChanges); another zoo's as written.
      WrappedText(z.change.empty() ? "-" : tr(z.change.c_str()));
      ImGui::TableNextColumn();
      z.top1 >= 0 ? ImGui::Text("%.1f %%", 100 * z.top1) : ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      z.top5 >= 0 ? ImGui::Text("%.1f %%", 100 * z.top5) : ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      z.ce >= 0 ? ImGui::Text("%.3f", z.ce) : ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      if (ImGui::SmallButton((std::string(tr("as A")) + "###as_a").c_str())) start_load(app, z.path);
      ImGui::SameLine();
      if (ImGui::SmallButton((std::string(tr("as B")) + "###as_b").c_str())) start_load_b(app, z.path);
      ImGui::PopID();
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("%s", tr("Held-out test numbers of the shipped run (seed 1) of each variant; docs/table4.md has every seed and the paired tests."));
}

void predictions_side_by_side(ViewerState& s, const CompareResult& c) {
  const auto& cmp = c.cmp;
  if (cmp.predictions_a.empty()) {
    Note(s.result->input.mask_positions.empty() ? tr("Put [MASK] in the text to compare predictions.")
                                                : tr("No predictions: a model has no masked-LM head."));
    return;
  }
  ImGui::Text(tr("mean KL(A || B) = %.4f nats, top-1 agrees at %lld of %zu [MASK] positions"), cmp.mean_kl,
              static_cast<long long>(cmp.top1_agree), cmp.predictions_a.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("cmp_preds", 4, flags)) return;
  ImGui::TableSetupColumn(tr("position"));
  ImGui::TableSetupColumn(tr("A top-5"));
  ImGui::TableSetupColumn(tr("B top-5"));
  ImGui::TableSetupColumn("KL(A||B)");
  ImGui::TableHeadersRow();
  const LoadedModel* lm = s.result->model.get();
  for (size_t m = 0; m < cmp.predictions_a.size(); ++m) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(cmp.predictions_a[m].position));
    for (const auto* p : {&cmp.predictions_a[m], &cmp.predictions_b[m]}) {
      ImGui::TableNextColumn();
      std::string line;
      for (const auto& t : p->top) line += vocab_name(lm, t.id) + " " + fmt(t.probability, 3, false) + "  ";
      const bool differs = cmp.predictions_a[m].top[0].id != cmp.predictions_b[m].top[0].id;
      if (p == &cmp.predictions_b[m] && differs)
        ImGui::TextColored(ImVec4(1, 0.65f, 0.2f, 1), "%s", line.c_str());
      else
        ImGui::TextUnformatted(line.c_str());
    }
    ImGui::TableNextColumn();
    ImGui::Text("%.4f", cmp.kl[m]);
  }
  ImGui::EndTable();
  ImGui::TextDisabled("%s", tr("Orange: B's most probable token differs from A's."));
}

/// Attention mass by relative offset i − j of both models (deberta::attention_mass_by_offset):
/// paired bars per offset, pooled over layers or of one layer. Head-free, so it compares models
/// whose heads are not aligned (separately trained ones), unlike the per-head |ΔP| table.
void offset_profile(ViewerState& s, const deberta::ModelComparison& cmp, const std::string& name_a, const std::string& name_b) {
  int& which = s.offset_layer;  // 0: pooled; l + 1: layer l
  const int layers = static_cast<int>(std::min(cmp.offsets_a.per_layer.size(), cmp.offsets_b.per_layer.size()));
  ImGui::TextUnformatted(tr("Attention mass by relative offset i − j (mean over heads and queries)"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  which = std::clamp(which, 0, layers);
  const std::string preview = which == 0 ? std::string(tr("pooled over layers")) : trf("layer {layer}", arg("layer", which - 1));
  if (ImGui::BeginCombo("##offset_layer", preview.c_str())) {
    for (int k = 0; k <= layers; ++k)
      if (ImGui::Selectable(k == 0 ? tr("pooled over layers") : trf("layer {layer}", arg("layer", k - 1)).c_str(), k == which))
        which = k;
    ImGui::EndCombo();
  }
  const int64_t layer = which - 1;
  const int64_t K = std::min<int64_t>(std::max(cmp.offsets_a.max_offset, cmp.offsets_b.max_offset), 16);
  double top = 1e-12;
  for (int64_t o = -K; o <= K; ++o) top = std::max({top, cmp.offsets_a.at(o, layer), cmp.offsets_b.at(o, layer)});
  const ImU32 col_a = IM_COL32(80, 150, 255, 255), col_b = IM_COL32(255, 160, 50, 255);
  const float h = 150, slot = std::max(18.0f, std::min(40.0f, (ImGui::GetContentRegionAvail().x - 60) / (2 * K + 1)));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float base = p0.y + h, left = p0.x + 50;
  ImGui::InvisibleButton("##offsets", ImVec2(50 + slot * (2 * K + 1), h + ImGui::GetTextLineHeightWithSpacing()));
  const bool hovered = ImGui::IsItemHovered();
  dl->AddLine(ImVec2(left, base), ImVec2(left + slot * (2 * K + 1), base), IM_COL32(160, 160, 160, 255));
  dl->AddText(ImVec2(p0.x, p0.y), IM_COL32(200, 200, 200, 255), fmt(top, 3, false).c_str());
  dl->AddText(ImVec2(p0.x, base - ImGui::GetTextLineHeight()), IM_COL32(200, 200, 200, 255), "0");
  int64_t hover_o = K + 1;
  for (int64_t o = -K; o <= K; ++o) {
    const float x = left + slot * static_cast<float>(o + K);
    const float ha = static_cast<float>(cmp.offsets_a.at(o, layer) / top) * (h - 4);
    const float hb = static_cast<float>(cmp.offsets_b.at(o, layer) / top) * (h - 4);
    dl->AddRectFilled(ImVec2(x + 2, base - ha), ImVec2(x + slot / 2, base), col_a);
    dl->AddRectFilled(ImVec2(x + slot / 2, base - hb), ImVec2(x + slot - 2, base), col_b);
    const std::string label = std::to_string(o);
    dl->AddText(ImVec2(x + slot / 2 - ImGui::CalcTextSize(label.c_str()).x / 2, base + 2), IM_COL32(220, 220, 220, 255),
                label.c_str());
    const ImVec2 m = ImGui::GetIO().MousePos;
    if (hovered && m.x >= x && m.x < x + slot) hover_o = o;
  }
  if (hover_o <= K) {
    ImGui::BeginTooltip();
    ImGui::Text(hover_o > 0   ? tr("offset i − j = %lld (key to the left of the query)")
                : hover_o < 0 ? tr("offset i − j = %lld (key to the right)")
                              : tr("offset i − j = %lld (the token itself)"),
                static_cast<long long>(hover_o));
    ImGui::TextColored(ImVec4(0.31f, 0.59f, 1, 1), "A %s: %s", name_a.c_str(), fmt(cmp.offsets_a.at(hover_o, layer), 4, false).c_str());
    ImGui::TextColored(ImVec4(1, 0.63f, 0.2f, 1), "B %s: %s", name_b.c_str(), fmt(cmp.offsets_b.at(hover_o, layer), 4, false).c_str());
    ImGui::EndTooltip();
  }
  ImGui::TextColored(ImVec4(0.31f, 0.59f, 1, 1), "A");
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(1, 0.63f, 0.2f, 1), "B");
  ImGui::SameLine();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped(tr("Offsets beyond ±%lld are in `deberta compare --json`. The per-head |ΔP| table above compares "
                        "head h of A with head h of B; heads of separately trained models are not aligned, so it mixes "
                        "'attends differently' with 'the same heads in another order'. This profile has no heads."),
                     static_cast<long long>(K));
  ImGui::PopStyleColor();
}

/// A's and B's attention probabilities of (layer, head) and A − B, side by side with their colour
/// bars; a click selects the cell, the hovered one gets a tooltip with the three numbers.
void probability_maps(App& app, const CompareResult& cr, int layer, int head) {
  ViewerState& s = app.state;
  const auto& a_model = s.result->model->model;
  const deberta::Matrix& pa = s.result->trace.layers[layer].attention.probs[head];
  const deberta::Matrix& pb = cr.trace_b.layers[layer].attention.probs[head];
  const deberta::Matrix diff = pa - pb;
  const ColorScale vir = ColorScale::sequential(0, std::max(max_value({&pa, &pb}), 1e-12));
  const ColorScale div = ColorScale::diverging(max_abs({&diff}));

  const float bar_w = 90, gap = ImGui::GetStyle().ItemSpacing.x;
  const float size = std::clamp(std::min((ImGui::GetContentRegionAvail().x - 2 * bar_w - 5 * gap) / 3,
                                         ImGui::GetContentRegionAvail().y - 260),
                                80.0f, 380.0f);
  const float title_h = ImGui::GetTextLineHeightWithSpacing() * 2;
  const uint64_t version = s.result->generation * 1000003u + cr.generation;
  int hover_i = -1, hover_j = -1, hover_map = -1;
  const std::string name_a = "A  " + short_name(a_model.directory), name_b = "B  " + short_name(s.model_b->model.directory);
  const struct {
    const char* id;
    std::string title;
    const char* sub;
    const deberta::Matrix* m;
    const ColorScale* scale;
  } maps[] = {{"cmp/a", name_a, "softmax A", &pa, &vir}, {"cmp/b", name_b, "softmax B", &pb, &vir},
              {"cmp/diff", "A − B", tr("difference of the probabilities"), &diff, &div}};
  for (int k = 0; k < 3; ++k) {
    if (k == 2) {
      ColorBar(app, vir, size + title_h, trc("colour bar", "probability"));
      ImGui::SameLine();
    }
    ImGui::BeginGroup();
    ImGui::TextUnformatted(maps[k].title.c_str());
    ImGui::TextDisabled("%s", maps[k].sub);
    Overlay ov;
    ov.highlight = s.hover_token;
    ov.sel_i = s.qi, ov.sel_j = s.kj;
    const HeatmapEvent ev = Heatmap(app, maps[k].id, *maps[k].m, *maps[k].scale, ImVec2(size, size), version, ov);
    if (ev.hovered) hover_i = ev.i, hover_j = ev.j, hover_map = k;
    if (ev.clicked) s.qi = ev.i, s.kj = ev.j;
    ImGui::EndGroup();
    ImGui::SameLine();
  }
  ColorBar(app, div, size + title_h, "A − B");
  if (hover_i >= 0) {
    ImGui::BeginTooltip();
    ImGui::Text(tr("%s  query %d '%s' → key %d '%s'"), maps[hover_map].title.c_str(), hover_i, token_name(s, hover_i).c_str(),
                hover_j, token_name(s, hover_j).c_str());
    ImGui::Text("P_A %s   P_B %s   A − B %s", fmt(pa(hover_i, hover_j), 4, false).c_str(),
                fmt(pb(hover_i, hover_j), 4, false).c_str(), fmt(diff(hover_i, hover_j), 4).c_str());
    ImGui::EndTooltip();
  }
  ImGui::TextDisabled(tr("layer %d, head %d. A and B share one probability scale; A − B: blue < 0 < red."), layer, head);
}

/// The layers × heads table of mean |P_A − P_B|; a click selects the head.
void head_table(ViewerState& s, const CompareResult& cr, int layer, int head) {
  ImGui::TextUnformatted(tr("mean |P_A − P_B| over valid pairs, per layer (rows) and head (columns); click to select"));
  const double worst = [&] {
    double w = 1e-12;
    for (const auto& row : cr.cmp.mean_abs_prob_diff)
      for (double v : row) w = std::max(w, v);
    return w;
  }();
  const ColorScale cell_scale = ColorScale::sequential(0, worst);
  if (ImGui::BeginTable("cmp_heads", static_cast<int>(cr.cmp.heads) + 1,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    for (int64_t l = 0; l < cr.cmp.layers; ++l) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text(tr("layer %lld"), static_cast<long long>(l));
      for (int64_t h = 0; h < cr.cmp.heads; ++h) {
        ImGui::TableNextColumn();
        const double v = cr.cmp.mean_abs_prob_diff[l][h];
        ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, color_of(cell_scale, v));
        const bool sel = l == layer && h == head;
        const std::string label = (sel ? "[" : " ") + fmt(v, 4, false) + (sel ? "]" : " ") + "##" +
                                  std::to_string(l) + "_" + std::to_string(h);
        ImGui::PushStyleColor(ImGuiCol_Text, v > 0.6 * worst ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255));
        if (ImGui::Selectable(label.c_str(), sel)) s.layer = static_cast<int>(l), s.head = static_cast<int>(h);
        ImGui::PopStyleColor();
      }
    }
    ImGui::EndTable();
  }
}

}  // namespace

void DrawComparePanel(App& app) {
  ViewerState& s = app.state;
  ImGui::TextDisabled("%s", tr("model B (compare with…)"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(200.0f, ImGui::GetContentRegionAvail().x - 260));
  std::string& field = s.model_b_field;
  if (field.empty()) field = s.model_b_path;
  const bool enter = InputString("##model_b", &field, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if ((ImGui::Button((std::string(tr("Load as B")) + "###load_b").c_str()) || enter) && !field.empty()) start_load_b(app, field);
  if (app.jobs.loading_b.valid()) ImGui::TextDisabled(tr("loading %s …"), app.jobs.loading_b_path.c_str());
  if (!s.model_b_error.empty()) ErrorText(trf("model B: {error}", arg("error", s.model_b_error)));
  if (ImGui::CollapsingHeader((std::string(tr("Trained-ablation zoo (mini Table 4)")) + "###zoo").c_str(), ImGuiTreeNodeFlags_DefaultOpen)) zoo_table(app);

  if (!ResultOrWaiting(app)) return;
  if (!s.model_b) {
    Note(tr("Choose model B: a zoo model above, or any model directory that shares model A's vocabulary."));
    return;
  }
  const std::shared_ptr<const CompareResult> c = s.compare;
  if (!c || c->model_b != s.model_b) {
    Note(tr("comparing …"));
    return;
  }
  if (!c->error.empty()) {
    ErrorText(c->error);
    return;
  }
  const auto& a_model = s.result->model->model;
  ImGui::Text("A: %s    B: %s", short_name(a_model.directory).c_str(), short_name(s.model_b->model.directory).c_str());
  if (!s.result->ablation.is_default())
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), tr("A is shown under the inference-time ablation %s; B as trained"),
                       s.result->ablation.describe(&a_model.config).c_str());
  if (!c->cmp.note.empty()) Note(c->cmp.note);
  if (c->generation != s.result->generation) ImGui::TextDisabled("%s", tr("(updating …)"));

  LayerHeadSliders(s);
  const int layer = std::min<int>(s.layer, static_cast<int>(c->cmp.layers) - 1);
  const int head = std::min<int>(s.head, static_cast<int>(c->cmp.heads) - 1);
  if (layer < 0 || head < 0) return;
  probability_maps(app, *c, layer, head);
  ImGui::Separator();
  head_table(s, *c, layer, head);
  ImGui::Separator();
  offset_profile(s, c->cmp, short_name(a_model.directory), short_name(s.model_b->model.directory));
  ImGui::Separator();
  predictions_side_by_side(s, *c);
}

}  // namespace viewer
