// panel_ablation.cpp — Ablations: switch parts of DeBERTa off at inference and compare the
// predictions with the model as trained (KL(baseline ‖ ablated), top-1 changes). Each change is
// re-run off the UI thread from the first layer it affects (deberta::first_affected_layer).
#include "heatmap.h"
#include "panels.h"

#include <imgui.h>

#include <algorithm>
#include <functional>

namespace viewer {

namespace {

/// Whether the model can run `a`; `why` gets the core's reason when it cannot.
bool runnable(const deberta::Model& m, const deberta::Ablation& a, std::string* why) {
  try {
    deberta::resolve_attention(m.config, m.weights, a);
    return true;
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return false;
  }
}

/// A checkbox for one switch, greyed out (with the reason) when the flipped value cannot run.
// One term's checkbox: `set` switches the term in an Ablation. Greyed out (with the reason in the
// tooltip) when the model cannot run the flipped setting; returns true when the user changed it.
bool term_checkbox(ViewerState& s, const deberta::Model& m, deberta::Ablation& a, const char* label, bool value,
                   const std::function<void(deberta::Ablation&, bool)>& set, const char* help) {
  deberta::Ablation flipped = a;
  set(flipped, !value);
  std::string why;
  const bool can = runnable(m, flipped, &why);
  if (!can) ImGui::BeginDisabled();
  bool v = value;
  const bool changed = ImGui::Checkbox(label, &v);
  RecordWidget(s, label);
  if (!can) ImGui::EndDisabled();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s%s%s", help, can ? "" : "\n\nnot available: ", can ? "" : why.c_str());
  if (changed) set(a, v);
  return changed;
}

}  // namespace

void DrawAblationPanel(App& app) {
  ViewerState& s = app.state;
  if (!s.model) {
    Note("Load a model first.");
    return;
  }
  const deberta::Model& m = s.model->model;
  const auto& c = m.config;
  deberta::Ablation& a = s.ablation;
  bool changed = false;

  ImGui::TextDisabled("inference-time ablations");
  HelpMarker("Each switch changes the trained model at inference: it shows how much the model depends on a "
             "component. Models trained without a component (the paper's Table 4): the Compare models tab.");
  ImGui::TextDisabled("attention terms summed into Ã (eq. 2 / eq. 4)");
  const bool c2p = a.c2p.value_or(c.has_c2p()), p2c = a.p2c.value_or(c.has_p2c());
  changed |= term_checkbox(s, m, a, "c2c", a.c2c, [](deberta::Ablation& x, bool v) { x.c2c = v; },
                           "content→content: Q_c[i]·K_c[j], the ordinary attention");
  ImGui::SameLine();
  changed |= term_checkbox(s, m, a, "c2p", c2p, [](deberta::Ablation& x, bool v) { x.c2p = v; },
                           "content→position: Q_c[i]·K_r[δ(i,j)] — how much token i cares about what sits at "
                           "relative distance i−j");
  ImGui::SameLine();
  changed |= term_checkbox(s, m, a, "p2c", p2c, [](deberta::Ablation& x, bool v) { x.p2c = v; },
                           "position→content: K_c[j]·Q_r[δ] — how much token j is wanted from its relative position");
  ImGui::SameLine();
  changed |= term_checkbox(s, m, a, "p2p", a.p2p.value_or(c.trained_with_p2p), [](deberta::Ablation& x, bool v) { x.p2p = v; },
                           "position→position: Q_r·K_r, the fourth term of eq. 2, which the paper drops (the model "
                           "was never trained with it)");

  if (c.has_p2c() || a.p2c.value_or(false)) {
    ImGui::TextDisabled("p2c index");
    HelpMarker("The released code makes p2c read Q_r at the row of i − j (δ(i,j)); eq. 4 of the paper writes "
               "δ(j,i). The model was trained with the code's choice.");
    ImGui::SameLine();
    const bool paper = a.p2c_index.value_or(c.trained_with_paper_p2c ? deberta::P2CIndex::Paper
                                                                    : deberta::P2CIndex::Code) == deberta::P2CIndex::Paper;
    if (ImGui::RadioButton("code δ(i,j)", !paper)) a.p2c_index = deberta::P2CIndex::Code, changed = true;
    ImGui::SameLine();
    if (ImGui::RadioButton("paper δ(j,i)", paper)) a.p2c_index = deberta::P2CIndex::Paper, changed = true;
  }

  ImGui::TextDisabled("scale s = 1/√(d·f)");
  HelpMarker("auto: the factor the model was trained with (the code uses 1 + number of position terms); "
             "√(3d): the paper's factor 3; active terms: 1 + the number of position terms switched on now.");
  ImGui::SameLine();
  if (ImGui::RadioButton("auto", a.scale_mode == deberta::ScaleMode::Auto)) a.scale_mode = deberta::ScaleMode::Auto, changed = true;
  ImGui::SameLine();
  if (ImGui::RadioButton("√(3d)", a.scale_mode == deberta::ScaleMode::Fixed))
    a.scale_mode = deberta::ScaleMode::Fixed, a.scale_factor = 3, changed = true;
  ImGui::SameLine();
  if (ImGui::RadioButton("active terms", a.scale_mode == deberta::ScaleMode::Rescale))
    a.scale_mode = deberta::ScaleMode::Rescale, changed = true;

  if (c.relative_attention) {
    const int k = static_cast<int>(c.relative_span());
    int K = a.max_relative_positions > 0 ? static_cast<int>(a.max_relative_positions) : k;
    ImGui::SetNextItemWidth(150);
    if (ImGui::SliderInt("K (distance seen)", &K, 1, k)) {
      a.max_relative_positions = K >= k ? 0 : K;
      changed = true;
    }
    HelpMarker("Read only the central 2K rows of the relative table: tokens further apart than K look "
               "equally far. K = k is the model as trained.");
  }
  if (c.log_buckets()) {  // the two references differ only for log-bucketed models
    const bool ms = a.relative_positions == deberta::RelativePositionRule::Microsoft;
    ImGui::TextDisabled("relative positions");
    ImGui::SameLine();
    if (ImGui::RadioButton("Hugging Face", !ms)) a.relative_positions = deberta::RelativePositionRule::HuggingFace, changed = true;
    ImGui::SameLine();
    if (ImGui::RadioButton("microsoft", ms)) a.relative_positions = deberta::RelativePositionRule::Microsoft, changed = true;
    const std::string help = "microsoft/DeBERTa clamps i - j to ±(m - 1) = ±" + std::to_string(c.max_relative_positions - 1) +
                             " before the log buckets; Hugging Face does not. They differ only where |i - j| >= m = " +
                             std::to_string(c.max_relative_positions) + " (docs/paper-vs-code.md §4).";
    HelpMarker(help.c_str());
  }
  {
    const bool can_emd = deberta::runs_emd(m);  // the one rule the CLI follows too
    bool emd = a.emd && can_emd;
    if (!can_emd) ImGui::BeginDisabled();
    if (ImGui::Checkbox("Enhanced Mask Decoder", &emd)) a.emd = emd, changed = true;
    if (!can_emd) ImGui::EndDisabled();
    const std::string why = "This model decodes without the EMD: " + deberta::why_no_emd(m) + ".";
    HelpMarker(can_emd ? "Off: the MLM head reads the last encoder layer directly (no absolute positions)."
                       : why.c_str());
  }

  ImGui::TextDisabled("masked heads (right-click a map in the grid)");
  if (a.head_mask.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled(": none");
  } else {
    std::pair<int64_t, int64_t> remove{-1, -1};
    for (const auto& [l, h] : a.head_mask) {
      ImGui::SameLine();
      const std::string label = std::to_string(l) + ":" + std::to_string(h) + " ×";
      if (ImGui::SmallButton(label.c_str())) remove = {l, h};
    }
    if (remove.first >= 0) a.head_mask.erase(remove), changed = true;
  }
  if (!a.is_default()) {
    if (ImGui::Button("Reset: the model as trained")) a = {}, changed = true;
  }
  if (changed) request_compute(app);
  if (!s.compute_error.empty()) ErrorText("This ablation cannot run: " + s.compute_error);

  // --- baseline vs ablated
  ImGui::Separator();
  if (!s.result) return;
  const Result& r = *s.result;
  const bool stale = app.jobs.worker.busy();
  if (stale) {
    ComputeProgress(app, "recomputing…");
  } else if (r.ablation.is_default()) {
    ImGui::TextWrapped("Baseline: the model as trained. Flip a switch above to see what changes.");
  } else {
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "ablation: %s", r.ablation.describe(r.model ? &r.model->model.config : nullptr).c_str());
    ImGui::TextDisabled("re-ran from layer %lld in %.1f ms", static_cast<long long>(r.first_layer), r.compute_ms);
  }
  if (!r.predict_note.empty()) {
    Note(r.predict_note);
    return;
  }
  if (r.baseline.empty()) return;
  ImGui::Text("mean KL %s nats · top-1 changed at %lld of %lld", fmt(r.effect.mean_kl, 4, false).c_str(),
              static_cast<long long>(r.effect.top1_changes), static_cast<long long>(r.effect.positions));
  HelpMarker("KL(baseline ‖ ablated): how far the ablated distribution over the vocabulary is from the "
             "model as trained, at each [MASK]. 0 = unchanged.");
  const LoadedModel* lm = r.model.get();
  if (ImGui::BeginTable("ab", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("pos", ImGuiTableColumnFlags_WidthFixed, 30);
    ImGui::TableSetupColumn("baseline");
    ImGui::TableSetupColumn("ablated");
    ImGui::TableSetupColumn("KL", ImGuiTableColumnFlags_WidthFixed, 50);
    ImGui::TableHeadersRow();
    for (size_t p = 0; p < r.baseline.size() && p < r.current.size(); ++p) {
      const auto& b = r.baseline[p].top;
      const auto& x = r.current[p].top;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(r.baseline[p].position));
      for (const auto* list : {&b, &x}) {
        ImGui::TableNextColumn();
        // Top-1 with its probability (orange when the ablation changed it), then the runner-up.
        const auto& ts = (*list)[0];
        const bool changed_top = b[0].id != x[0].id;
        ImGui::TextColored(changed_top ? ImVec4(1, 0.55f, 0.3f, 1) : ImVec4(0.5f, 1, 0.6f, 1), "%s %.2f",
                           vocab_name(lm, ts.id).c_str(), ts.probability);
        if (list->size() > 1) {
          ImGui::SameLine();
          ImGui::TextDisabled("%s %.2f", vocab_name(lm, (*list)[1].id).c_str(), (*list)[1].probability);
        }
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(p < r.kl.size() ? fmt(r.kl[p], 3, false).c_str() : "");
    }
    ImGui::EndTable();
  }
}

}  // namespace viewer
