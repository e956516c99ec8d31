// panel_ablation.cpp — Ablations: switch parts of DeBERTa off at inference and compare the
// predictions with the model as trained (KL(baseline ‖ ablated), top-1 changes). Each change is
// re-run off the UI thread from the first layer it affects (deberta::first_affected_layer).
#include "ui/heatmap.h"
#include "panels/panels.h"
#include "ui/wrapped_text.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
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
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    if (can)
      ImGui::SetTooltip("%s", help);
    else
      // TRANSLATORS: the switch's help, then why it cannot be flipped (English, from the core).
      ImGui::SetTooltip(tr("%s\n\nnot available: %s"), help, why.c_str());
  }
  if (changed) set(a, v);
  return changed;
}

/// The attention terms' switches (one a term of kAllTerms) and p2c's index. Returns whether one changed.
bool term_switches(ViewerState& s, const deberta::Model& m, deberta::Ablation& a) {
  const auto& c = m.config;
  bool changed = false;
  ImGui::TextDisabled("%s", tr("attention terms summed into Ã (eq. 2 / eq. 4)"));
  // One checkbox per term, named as the paper names it, with the interface's words for it (kTermTexts).
  for (deberta::Term t : deberta::kAllTerms) {
    if (t != deberta::kAllTerms[0]) ImGui::SameLine();
    changed |= term_checkbox(s, m, a, deberta::term_name(t), a.terms[t].value_or(c.trained_with(t)),
                             [t](deberta::Ablation& x, bool v) { x.terms[t] = v; }, tr(term_text(t).ablation_help));
  }

  if (c.has_p2c() || a.terms[deberta::Term::p2c].value_or(false)) {
    ImGui::TextDisabled("%s", tr("p2c index"));
    HelpMarker(tr("The released code makes p2c read Q_r at the row of i − j (δ(i,j)); eq. 4 of the paper writes "
                  "δ(j,i). The model was trained with the code's choice."));
    const bool paper = a.p2c_index.value_or(c.trained_with_paper_p2c ? deberta::P2CIndex::Paper
                                                                    : deberta::P2CIndex::Code) == deberta::P2CIndex::Paper;
    const std::string code_label = std::string(tr("code δ(i,j)")) + "###p2c_code";
    const std::string paper_label = std::string(tr("paper δ(j,i)")) + "###p2c_paper";
    SameLineIfFits(code_label.c_str());
    if (ImGui::RadioButton(code_label.c_str(), !paper)) a.p2c_index = deberta::P2CIndex::Code, changed = true;
    SameLineIfFits(paper_label.c_str());
    if (ImGui::RadioButton(paper_label.c_str(), paper)) a.p2c_index = deberta::P2CIndex::Paper, changed = true;
  }
  return changed;
}

/// The scale's factor, the distance window K, the relative-position rule and the EMD's switch.
/// Returns whether one changed.
bool scale_and_positions(const deberta::Model& m, deberta::Ablation& a) {
  const auto& c = m.config;
  bool changed = false;
  ImGui::TextDisabled("%s", tr("scale s = 1/√(d·f)"));
  HelpMarker(tr("auto: the factor the model was trained with (the code uses 1 + number of position terms); "
                "√(3d): the paper's factor 3; active terms: 1 + the number of position terms switched on now."));
  const std::string auto_label = std::string(tr("auto")) + "###scale_auto";
  const std::string active_label = std::string(tr("active terms")) + "###scale_active";
  SameLineIfFits(auto_label.c_str());
  if (ImGui::RadioButton(auto_label.c_str(), a.scale_mode == deberta::ScaleMode::Auto)) a.scale_mode = deberta::ScaleMode::Auto, changed = true;
  SameLineIfFits("√(3d)");
  if (ImGui::RadioButton("√(3d)", a.scale_mode == deberta::ScaleMode::Fixed))
    a.scale_mode = deberta::ScaleMode::Fixed, a.scale_factor = 3, changed = true;
  SameLineIfFits(active_label.c_str());
  if (ImGui::RadioButton(active_label.c_str(), a.scale_mode == deberta::ScaleMode::Rescale))
    a.scale_mode = deberta::ScaleMode::Rescale, changed = true;

  if (c.relative_attention) {
    const int k = static_cast<int>(c.relative_span());
    int K = a.max_relative_positions > 0 ? static_cast<int>(a.max_relative_positions) : k;
    ImGui::SetNextItemWidth(150);
    if (ImGui::SliderInt((std::string(tr("K (distance seen)")) + "###window_K").c_str(), &K, 1, k)) {
      a.max_relative_positions = K >= k ? 0 : K;
      changed = true;
    }
    HelpMarker(tr("Read only the central 2K rows of the relative table: tokens further apart than K look "
                  "equally far. K = k is the model as trained."));
  }
  if (c.log_buckets()) {  // the two references differ only for log-bucketed models
    const bool ms = a.relative_positions == deberta::RelativePositionRule::Microsoft;
    ImGui::TextDisabled("%s", tr("relative positions"));
    SameLineIfFits("Hugging Face");
    if (ImGui::RadioButton("Hugging Face", !ms)) a.relative_positions = deberta::RelativePositionRule::HuggingFace, changed = true;  // i18n: not translated (a name)
    SameLineIfFits("microsoft");
    if (ImGui::RadioButton("microsoft", ms)) a.relative_positions = deberta::RelativePositionRule::Microsoft, changed = true;  // i18n: not translated (a name)
    // TRANSLATORS: {clamp} is m − 1 and {m} is m (max_relative_positions); keep microsoft/DeBERTa and Hugging Face.
    const std::string help = trf("microsoft/DeBERTa clamps i - j to ±(m - 1) = ±{clamp} before the log buckets; Hugging Face "
                                 "does not. They differ only where |i - j| >= m = {m} (docs/paper-vs-code.md §4).",
                                 arg("clamp", c.max_relative_positions - 1), arg("m", c.max_relative_positions));
    HelpMarker(help.c_str());
  }
  {
    const bool can_emd = deberta::runs_emd(m);  // the one rule the CLI follows too
    bool emd = a.emd && can_emd;
    if (!can_emd) ImGui::BeginDisabled();
    if (ImGui::Checkbox((std::string(tr("Enhanced Mask Decoder")) + "###emd").c_str(), &emd)) a.emd = emd, changed = true;
    if (!can_emd) ImGui::EndDisabled();
    // TRANSLATORS: {reason} is the core's reason (English).
    const std::string why = trf("This model decodes without the EMD: {reason}.", arg("reason", deberta::why_no_emd(m)));
    HelpMarker(can_emd ? tr("Off: the MLM head reads the last encoder layer directly (no absolute positions).")
                       : why.c_str());
  }
  return changed;
}

/// The masked heads (a button each unmasks one) and the reset. Returns whether one changed.
bool masked_heads(deberta::Ablation& a) {
  bool changed = false;
  // Wrapped (in Japanese and Italian the label is wider than the panel); the buttons follow on its
  // last line while they fit, then on the next lines.
  const std::string label = tr("masked heads (right-click a map in the grid)");
  if (a.head_mask.empty()) {
    WrappedTextDisabled(label + ": " + trc("masked heads", "none"));
  } else {
    WrappedTextDisabled(label + ":");
    std::pair<int64_t, int64_t> remove{-1, -1};
    bool first = true;
    for (const auto& [l, h] : a.head_mask) {
      const std::string button = std::to_string(l) + ":" + std::to_string(h) + " ×";
      if (!first) {
        ImGui::SameLine();
        const float w = ImGui::CalcTextSize(button.c_str()).x + 2 * ImGui::GetStyle().FramePadding.x;
        if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
      }
      first = false;
      if (ImGui::SmallButton(button.c_str())) remove = {l, h};
    }
    if (remove.first >= 0) a.head_mask.erase(remove), changed = true;
  }
  if (!a.is_default()) {
    if (ImGui::Button((std::string(tr("Reset: the model as trained")) + "###reset_ablation").c_str())) a = {}, changed = true;
  }
  return changed;
}

/// The [MASK]s' predictions of the baseline beside the ablated run's, with KL(baseline ‖ ablated).
void effect_table(const Result& r) {
  const LoadedModel* lm = r.model.get();
  if (ImGui::BeginTable("ab", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
    // TRANSLATORS: column header: the [MASK]'s position (narrow).
    ImGui::TableSetupColumn(tr("pos"), ImGuiTableColumnFlags_WidthFixed,
                            std::max(ImGui::CalcTextSize(tr("pos")).x, ImGui::CalcTextSize("0000").x));
    ImGui::TableSetupColumn(tr("baseline"));
    ImGui::TableSetupColumn(tr("ablated"));
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
          // Beside the top-1 where the column has room, else below it (never cut at the column's edge).
          char second[256];
          std::snprintf(second, sizeof second, "%s %.2f", vocab_name(lm, (*list)[1].id).c_str(), (*list)[1].probability);
          ImGui::SameLine();
          if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(second).x) ImGui::NewLine();
          ImGui::TextDisabled("%s", second);
        }
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(p < r.kl.size() ? fmt(r.kl[p], 3, false).c_str() : "");
    }
    ImGui::EndTable();
  }
}

/// Baseline vs ablated: what the shown ablation did to the predictions.
void ablation_effect(App& app) {
  const ViewerState& s = app.state;
  ImGui::Separator();
  if (!s.result) return;
  const Result& r = *s.result;
  const bool stale = app.jobs.worker.busy();
  if (stale) {
    ComputeProgress(app, tr("recomputing…"));
  } else if (r.ablation.is_default()) {
    ImGui::TextWrapped("%s", tr("Baseline: the model as trained. Flip a switch above to see what changes."));
  } else {
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), tr("ablation: %s"), r.ablation.describe(r.model ? &r.model->model.config : nullptr).c_str());
    ImGui::TextDisabled(tr("re-ran from layer %lld in %.1f ms"), static_cast<long long>(r.first_layer), r.compute_ms);
  }
  if (!r.predict_note.empty()) {
    Note(tr(r.predict_note.c_str()));  // English in the result (worker.cpp), marked there
    return;
  }
  if (r.baseline.empty()) return;
  ImGui::Text(tr("mean KL %s nats · top-1 changed at %lld of %lld"), fmt(r.effect.mean_kl, 4, false).c_str(),
              static_cast<long long>(r.effect.top1_changes), static_cast<long long>(r.effect.positions));
  HelpMarker(tr("KL(baseline ‖ ablated): how far the ablated distribution over the vocabulary is from the "
                "model as trained, at each [MASK]. 0 = unchanged."));
  effect_table(r);
}

}  // namespace

void DrawAblationPanel(App& app) {
  ViewerState& s = app.state;
  if (!s.model) {
    Note(tr("Load a model first."));
    return;
  }
  const deberta::Model& m = s.model->model;
  deberta::Ablation& a = s.ablation;

  ImGui::TextDisabled("%s", tr("inference-time ablations"));
  HelpMarker(tr("Each switch changes the trained model at inference: it shows how much the model depends on a "
                "component. Models trained without a component (the paper's Table 4): the Compare models tab."));
  bool changed = term_switches(s, m, a);
  changed |= scale_and_positions(m, a);
  changed |= masked_heads(a);
  if (changed) request_compute(app);
  if (!s.compute_error.empty()) ErrorText(trf("This ablation cannot run: {error}", arg("error", s.compute_error)));
  ablation_effect(app);  // baseline vs ablated
}

}  // namespace viewer
