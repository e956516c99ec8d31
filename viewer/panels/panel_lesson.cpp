// panel_lesson.cpp — Lesson: the guided walk from the standard attention of §3.1 to the EMD and
// the ablations (arXiv 2006.03654 v6's numbering: eq. 1 is the MLM objective of §2.2).
//
// The steps, their questions and their answers come from build_lesson (lesson.cpp), built from
// the shown result for the selected layer and head and cached in `state.lesson` until one of
// them changes (never per frame). The learner types a number, checks it, may reveal the answer
// with the computation behind it, and "show me" opens the tab, layer, head and cell the step
// talks about.
#include "ui/heatmap.h"
#include "ui/layout.h"
#include "i18n/i18n.h"
#include "lesson/lesson.h"
#include "panels/panels.h"
#include "ui/quote_widget.h"
#include "ui/wrapped_text.h"

#include "deberta/equations.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <string>

namespace viewer {

namespace {

/// Rebuilds the cached steps when the result, layer or head changed. Resets the answer state
/// when the question of the current step changed. Returns false while the selected layer and
/// layer 0 are not yet materialized in full (the steps read their terms).
bool refresh_lesson(ViewerState& s) {
  LessonState& L = s.lesson;
  const Result& r = *s.result;
  const bool same_language = L.built_language == i18n::generation();
  // Step 15 left pending (its reruns not made) and now open: build again, with the reruns.
  const bool opened_pending = L.step >= 0 && L.step < static_cast<int>(L.steps.size()) && L.steps[static_cast<size_t>(L.step)].pending;
  if (L.built_generation == r.generation && L.built_layer == s.layer && L.built_head == s.head && same_language &&
      !opened_pending)
    return true;
  const LayerDetail* full = detail_for(s, s.layer);
  if (!full || !full->has(0)) return false;
  const bool has_step = L.step >= 0 && L.step < static_cast<int>(L.steps.size());
  const std::string old_question = has_step ? L.steps[static_cast<size_t>(L.step)].question : "";
  // The named mistake of the last answer, by its place in the step's list (its name changes with the language).
  int mistake_index = -1;
  if (has_step)
    for (size_t m = 0; m < L.steps[static_cast<size_t>(L.step)].mistakes.size(); ++m)
      if (L.steps[static_cast<size_t>(L.step)].mistakes[m].name == L.mistake) mistake_index = static_cast<int>(m);
  LessonInput in;
  in.model = &r.model->model;
  in.trace = &r.trace;
  in.full = &full->trace;
  in.emd = r.emd();
  in.emd_note = r.emd_note;
  in.tokens = r.input.names;
  in.layer = s.layer, in.head = s.head;
  in.vocab = [m = r.model.get()](int64_t id) { return vocab_name(m, id); };
  try {
    // Step 15's forward passes (about three) depend on the result only: made once per result, not per
    // layer or head, and only once the learner is on step 15 (until then the step is left pending).
    if (L.reruns_generation != r.generation && L.step == kCapstoneIndex) {
      L.reruns_generation = 0;
      L.reruns = lesson_reruns(in);
      L.reruns_generation = r.generation;
    }
    if (L.reruns_generation == r.generation) in.reruns = &L.reruns;
    in.defer_capstone = true;
    L.steps = build_lesson(in);
    L.error.clear();
  } catch (const std::exception& e) {
    L.steps.clear();
    L.error = e.what();
  }
  // A new language rewrites the same steps: the learner's step, answer and attempts stay.
  const bool only_language = L.built_generation == r.generation && L.built_layer == s.layer && L.built_head == s.head;
  L.built_generation = r.generation, L.built_layer = s.layer, L.built_head = s.head;
  L.built_language = i18n::generation();
  L.step = std::clamp(L.step, 0, std::max(static_cast<int>(L.steps.size()) - 1, 0));
  if (!only_language && (L.steps.empty() || L.steps[static_cast<size_t>(L.step)].question != old_question)) {
    L.checked = 0, L.attempts = 0, L.revealed = false, L.give_decimals = 0;
    L.mistake.clear();
  } else if (only_language && mistake_index >= 0 && !L.steps.empty()) {
    const auto& now = L.steps[static_cast<size_t>(L.step)].mistakes;
    L.mistake = mistake_index < static_cast<int>(now.size()) ? now[static_cast<size_t>(mistake_index)].name : "";
  }
  return true;
}

/// What the step's map shows: the matrix (null when there is none), its colour scale, whether it
/// holds indices (rel_pos, table rows, δ: integers) and its caption.
struct StepMap {
  const deberta::Matrix* m = nullptr;
  ColorScale scale;
  bool index = false;
  std::string what;
};

/// The step's index map (t.map: "rel_pos", "rows" or "delta": δ(i, j) of eq. 3 with k = t.distance_k), as
/// numbers [N, N], converted once per (result, map, k) and kept in the lesson state (L.map).
const deberta::Matrix& index_map(ViewerState& s, const LessonTarget& t) {
  const Result& r = *s.result;
  LessonState& L = s.lesson;
  const std::string key = std::to_string(r.generation) + "/" + t.map + "/" + std::to_string(t.distance_k);
  const auto& ctx = r.trace.context;
  const int N = token_count(s);
  if (L.map_key != key) {
    if (t.map == "rel_pos") L.map = ctx.rel_pos.cast<double>();
    else if (t.map == "rows") L.map = ctx.c2p_row.cast<double>();
    else {
      L.map.resize(N, N);
      for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) L.map(i, j) = static_cast<double>(deberta::relative_distance(i, j, std::max(t.distance_k, 1)));
    }
    L.map_key = key;
  }
  return L.map;
}

/// The map the step names (t.map: the EMD's input, a term's map, or an index map), with its scale
/// and caption. False when there is nothing to draw (an index map of a model without relative
/// positions says so here).
bool step_map(ViewerState& s, const LessonTarget& t, StepMap& out) {
  const Result& r = *s.result;
  const std::map<std::string, Quantity> terms = {
      {"probs", Quantity::Probs}, {"logits", Quantity::Logits}, {"c2p", Quantity::C2P}, {"p2c", Quantity::P2C}};
  if (t.map == "emd_I") {
    out.m = r.emd() ? &r.emd()->query_states0 : nullptr;
    if (!out.m || out.m->size() == 0) return false;
    out.scale = ColorScale::diverging(max_abs({out.m}));
    out.what = tr("the EMD's query input I_0 = H + P (rows: tokens, columns: hidden components)");
  } else if (const auto q = terms.find(t.map); q != terms.end()) {
    out.m = shown_map(s, t.layer, t.head, q->second);
    if (!out.m || out.m->size() == 0) return false;
    out.scale = q->second == Quantity::Probs ? ColorScale::sequential(0, max_value({out.m})) : ColorScale::diverging(max_abs({out.m}));
    // TRANSLATORS: {quantity} names the map with its formula ("score Ã/√(3d) = s·(c2c + …)").
    out.what = trf("{quantity} — layer {layer}, head {head}",
                   arg("quantity", quantity_label(q->second, r.trace.context.attention.scale_factor, true, &r.trace.context.attention.terms)),
                   arg("layer", t.layer), arg("head", t.head));
  } else {
    out.m = &index_map(s, t);
    if (out.m->size() == 0) {  // a model without relative attention has no rel_pos or table rows
      ImGui::Spacing();
      // TRANSLATORS: relative_attention = false is a configuration key and value (keep them).
      ImGui::TextDisabled("%s", tr("no map to show: this model has no relative positions (relative_attention = false)"));
      return false;
    }
    out.index = true;
    out.scale = ColorScale::sequential(out.m->minCoeff(), out.m->maxCoeff());
    out.what = t.map == "rel_pos" ? std::string(tr("relative position i − j as the model uses it (bucketed in v2)"))
               : t.map == "rows"  ? trf("table row c2p reads, clamp(rel_pos + k, 0, 2k − 1), k = {k}", arg("k", r.trace.context.attention.k))
                                  : trf("δ(i, j) of eq. 3 with k = {k}", arg("k", t.distance_k));
  }
  return true;
}

/// The map's token labels: a column of row labels `label_w` wide left of the map (`size` pixels
/// square; every row when a row is a text line tall, else every few rows and always the outlined
/// one t.i) and the outlined column `col`'s label above. Leaves the cursor at the map's corner.
void draw_map_labels(const ViewerState& s, const LessonTarget& t, const deberta::Matrix& m, float size, float label_w, int col) {
  const bool emd_map = t.map == "emd_I";
  const float line = ImGui::GetTextLineHeight();
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const float ch = size / static_cast<float>(rows), cw = size / static_cast<float>(cols);
  const int every = std::max(1, static_cast<int>(std::ceil(line / std::max(ch, 1e-3f))));
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const std::string top = emd_map ? trf("component {c}", arg("c", col))
                                  : "j = " + std::to_string(col) + " " + token_name(s, col);
  const float top_x = std::clamp(p0.x + label_w + (static_cast<float>(col) + 0.5f) * cw - ImGui::CalcTextSize(top.c_str()).x * 0.5f,
                                 p0.x + label_w, p0.x + label_w + size);
  dl->AddText(ImVec2(top_x, p0.y), ink, top.c_str());
  for (int i = 0; i < rows; ++i) {
    if (i != t.i && (i % every != 0 || std::abs(i - t.i) < every)) continue;
    std::string lab = std::to_string(i) + " " + token_name(s, i);
    while (lab.size() > 4 && ImGui::CalcTextSize(lab.c_str()).x > label_w - 6) lab.pop_back();
    const ImVec2 ts = ImGui::CalcTextSize(lab.c_str());
    dl->AddText(ImVec2(p0.x + label_w - ts.x - 4, p0.y + 18 + (static_cast<float>(i) + 0.5f) * ch - ts.y * 0.5f),
                i == t.i ? ink : dim, lab.c_str());
  }
  ImGui::Dummy(ImVec2(label_w, 18));
  ImGui::SetCursorScreenPos(ImVec2(p0.x + label_w, p0.y + 18));
}

/// The map of the step beside the question, with its cell outlined (null when it has none).
void draw_step_map(App& app, const LessonStep& st) {
  ViewerState& s = app.state;
  const LessonTarget& t = st.show;
  if (t.map.empty()) return;
  const Result& r = *s.result;
  StepMap map;
  if (!step_map(s, t, map)) return;
  const deberta::Matrix* m = map.m;
  const bool index = map.index;
  ImGui::Spacing();
  const bool emd_map = t.map == "emd_I";
  const int col = emd_map ? t.component : t.j;  // the emd_I map's columns are hidden components, not keys
  ImGui::PushTextWrapPos(0.0f);  // wraps at the window's edge (the map may stand beside the "what if")
  // TRANSLATORS: the map's caption: the map's name, then the outlined cell ("i = 3, j = 5" or "i = 3, component = 7").
  {
    char caption[512];
    std::snprintf(caption, sizeof caption, tr("%s · cell (%s = %d, %s = %d) outlined · Ctrl+wheel zooms, drag pans"), map.what.c_str(), "i",
                  t.i,
                  // TRANSLATORS: a column of the EMD's map: an index of the hidden vector.
                  emd_map ? tr("component") : "j", col);
    WrappedTextDisabled(caption);
  }
  ImGui::PopTextWrapPos();
  const float label_w = 110;
  const float size = std::clamp(std::min(ImGui::GetContentRegionAvail().x - 130 - label_w, ImGui::GetContentRegionAvail().y - 8 - 18),
                                120.0f, 420.0f);
  draw_map_labels(s, t, *m, size, label_w, col);
  Overlay ov;
  ov.sel_i = t.i, ov.sel_j = col;
  ov.highlight = s.hover_token;
  ov.view = "lesson";
  if (index) ov.digits = 0;
  const uint64_t version = std::hash<std::string>{}(t.map + "/" + std::to_string(t.layer) + "/" + std::to_string(t.head) + "/" +
                                                    std::to_string(t.distance_k)) ^ r.generation;
  const HeatmapEvent ev = Heatmap(app, "lesson/" + t.map, *m, map.scale, ImVec2(size, size), version, ov);
  if (ev.hovered)
    // TRANSLATORS: a map's tooltip: the row (i = 3 'God'), the column ("j = 5 'the'" or "component 7"), the value.
    ImGui::SetTooltip(tr("i = %d '%s', %s\nvalue %s"), ev.i, token_name(s, ev.i).c_str(),
                      emd_map ? trf("component {c}", arg("c", ev.j)).c_str() : ("j = " + std::to_string(ev.j) + " '" + token_name(s, ev.j) + "'").c_str(),
                      index ? std::to_string(static_cast<long long>((*m)(ev.i, ev.j))).c_str() : fmt((*m)(ev.i, ev.j), 5).c_str());
  ImGui::SameLine();
  // TRANSLATORS: the colour bar's caption (a few words: a table row or a relative position; an attention weight; …).
  ColorBar(app, map.scale, size, index ? tr("row / position") : t.map == "probs" ? tr("weight") : emd_map ? tr("value") : tr("score"));
}

/// One query's softmax row before and after the "what if" change, on one scale: for each key j the
/// run's weight (blue, left) and the changed one (orange, right); key j's index under every few
/// bars, the query's favourite keys marked. Hover: both weights of the key.
void what_if_bars(ViewerState& s, const WhatIfRow& r, ImVec2 size) {
  const int n = static_cast<int>(r.original.size());
  if (n == 0) return;
  const float line = ImGui::GetTextLineHeight();
  const float bars_h = std::max(size.y - line - 2, 30.0f), bw = size.x / static_cast<float>(n);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("what_if_bars", ImVec2(size.x, bars_h + line + 2));
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + bars_h), IM_COL32(30, 32, 38, 255));
  double top = 1e-12;
  for (int j = 0; j < n; ++j) top = std::max({top, r.original[static_cast<size_t>(j)], r.changed[static_cast<size_t>(j)]});
  const ImU32 before = IM_COL32(90, 150, 230, 255), after = IM_COL32(240, 150, 60, 255);
  const float gap = bw > 4 ? 1.0f : 0.0f, half = std::max((bw - 2 * gap) * 0.5f, 0.5f);
  for (int j = 0; j < n; ++j) {
    const float x = p0.x + static_cast<float>(j) * bw + gap;
    const float h0 = static_cast<float>(r.original[static_cast<size_t>(j)] / top) * (bars_h - 4);
    const float h1 = static_cast<float>(r.changed[static_cast<size_t>(j)] / top) * (bars_h - 4);
    dl->AddRectFilled(ImVec2(x, p0.y + bars_h - h0), ImVec2(x + half, p0.y + bars_h), before);
    dl->AddRectFilled(ImVec2(x + half, p0.y + bars_h - h1), ImVec2(x + 2 * half, p0.y + bars_h), after);
  }
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const int every = std::max(1, static_cast<int>(std::ceil(ImGui::CalcTextSize("000").x / std::max(bw, 1e-3f))));
  for (int j = 0; j < n; j += every) {
    const std::string l = std::to_string(j);
    dl->AddText(ImVec2(p0.x + (static_cast<float>(j) + 0.5f) * bw - ImGui::CalcTextSize(l.c_str()).x * 0.5f, p0.y + bars_h + 1), text,
                l.c_str());
  }
  if (hovered) {
    const int j = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - p0.x) / bw), 0, n - 1);
    // TRANSLATORS: the "what if" bars' tooltip: the key, its weight in the run and under the change (two spaces align the numbers).
    ImGui::SetTooltip(tr("key j = %d '%s'\nweight in this run  %s\nweight with the change  %s"), j, token_name(s, j).c_str(),
                      fmt(r.original[static_cast<size_t>(j)], 5, false).c_str(), fmt(r.changed[static_cast<size_t>(j)], 5, false).c_str());
  }
}

/// The "what if"'s colours: the run's own (blue) and under the change (orange).
const ImVec4 kWhatIfBlue(0.45f, 0.65f, 1.0f, 1), kWhatIfOrange(0.95f, 0.6f, 0.25f, 1);

/// The relative span's control: a window K ≤ k on the c2p / p2c table (its slider, "K = k").
/// Returns the value tried, as text ("K = 2").
std::string draw_what_if_span(const LessonWhatIf& w, WhatIfValue& v, float width) {
  // TRANSLATORS: continues "What if" (shown before it).
  WrappedText(tr("the table were read through a window K ≤ k (rows k − K … k + K − 1)?"));
  int K = static_cast<int>(v.window);
  ImGui::SetNextItemWidth(std::min(200.0f, width * 0.5f));
  if (ImGui::SliderInt("K", &K, 1, static_cast<int>(w.k))) v.window = K;
  ImGui::SameLine();
  if (ImGui::SmallButton("K = k")) v.window = w.k;
  ImGui::SameLine();
  ImGui::TextDisabled(tr("this run: K = %lld, k = %lld"), static_cast<long long>(w.window), static_cast<long long>(w.k));
  return "K = " + std::to_string(v.window);
}

/// The scale factor's control: f in √(f·d) (a slider and BERT's 1, 2, the paper's 3, the model's
/// own). Returns the value tried, as text ("f = 1.5").
std::string draw_what_if_scale(const LessonWhatIf& w, WhatIfValue& v, float width) {
  // TRANSLATORS: continues "What if" (shown before it).
  WrappedText(tr("the scores were divided by √(f·d) with another factor f?"));
  float fv = static_cast<float>(v.scale_factor);
  ImGui::SetNextItemWidth(std::min(200.0f, width * 0.5f));
  if (ImGui::SliderFloat("f", &fv, 0.25f, 8.0f, "%.2f")) v.scale_factor = std::max(0.25, static_cast<double>(fv));
  ImGui::SameLine();
  ImGui::TextDisabled(tr("this model: f = %g"), w.scale_factor);
  char buf[128];
  // TRANSLATORS: a button that sets the scale factor f back to this model's own (%g is the factor).
  std::snprintf(buf, sizeof buf, tr("the model's %g"), w.scale_factor);
  bool first = true;
  // TRANSLATORS: buttons setting the scale factor f: BERT's 1 and the paper's 3.
  const std::pair<const char*, double> choices[] = {{tr("1 (BERT)"), 1.0}, {"2", 2.0}, {tr("3 (paper)"), 3.0}, {buf, w.scale_factor}};
  for (size_t c = 0; c < std::size(choices); ++c) {
    if (!first) ImGui::SameLine();
    first = false;
    // A fixed ID per button: the same in every language.
    if (ImGui::SmallButton((std::string(choices[c].first) + "###f" + std::to_string(c)).c_str())) v.scale_factor = choices[c].second;
  }
  std::snprintf(buf, sizeof buf, "f = %g", v.scale_factor);
  return buf;
}

/// The p2c index's control: the released code's δ(i, j) or the paper's δ(j, i). Returns the value
/// tried, as text.
std::string draw_what_if_p2c(const LessonWhatIf& w, WhatIfValue& v) {
  // TRANSLATORS: continues "What if" (shown before it).
  WrappedText(tr("p2c read the other row of Q_r?"));
  if (ImGui::RadioButton((std::string(tr("released code: δ(i, j)")) + "###code").c_str(), v.p2c_index == deberta::P2CIndex::Code))
    v.p2c_index = deberta::P2CIndex::Code;
  ImGui::SameLine();
  if (ImGui::RadioButton((std::string(tr("paper, eq. 4: δ(j, i)")) + "###paper").c_str(), v.p2c_index == deberta::P2CIndex::Paper))
    v.p2c_index = deberta::P2CIndex::Paper;
  if (w.p2c_index == deberta::P2CIndex::Code)
    ImGui::TextDisabled("%s", tr("this run: the code's δ(i, j)"));
  else
    ImGui::TextDisabled("%s", tr("this run: the paper's δ(j, i)"));
  return v.p2c_index == deberta::P2CIndex::Code ? tr("p2c index δ(i, j)") : tr("p2c index δ(j, i)");
}

/// Recomputes L.what_if_row (or L.what_if_error) through the core (what_if_row: a forward pass
/// under the change `v`) when the value, the step or the result (`owner`) changed, not per frame.
void refresh_what_if_row(ViewerState& s, const LessonWhatIf& w, const WhatIfValue& v, const std::string& owner) {
  LessonState& L = s.lesson;
  const Result& r = *s.result;
  char key[160];
  std::snprintf(key, sizeof key, "%s/%d/%d/%d/%lld/%.17g/%d", owner.c_str(), w.layer, w.head, w.query, static_cast<long long>(v.window),
                v.scale_factor, static_cast<int>(v.p2c_index));
  if (L.what_if_key == key) return;
  L.what_if_key = key;
  L.what_if_error.clear();
  try {
    const LayerDetail* full = detail_for(s, w.layer);  // the step's number before the change (term maps)
    L.what_if_row = what_if_row(r.model->model, r.trace, w, v, full && full->has(w.layer) ? &full->trace : nullptr);
  } catch (const std::exception& e) {
    L.what_if_row = {};
    L.what_if_error = e.what();
  }
}

/// The loop closed (issue 58, item 4), above the bars so that it stays in view: the step's own
/// number and the [MASK] prediction in this run and under the change `now` (its text).
void draw_what_if_numbers(const Result& r, const LessonWhatIf& w, const WhatIfRow& row, const std::string& now) {
  const auto number = [&](double x) {
    if (!std::isfinite(x)) return std::string("—");
    return w.number == WhatIfNumber::C2PRow || w.number == WhatIfNumber::P2CRow ? std::to_string(std::llround(x)) : fmt(x, 5, false);
  };
  if (w.number != WhatIfNumber::None) {
    // TRANSLATORS: {what} names the step's number ("s·c2p at i = 5, j = 3"); {before} and {after} are its values
    // in this run and with the change.
    WrappedText(trf("{what}: {before} → {after}", arg("what", what_if_number_label(w)), arg("before", number(row.number_before)),
                    arg("after", number(row.number_after))));
  }
  if (!row.predict_note.empty()) {
    WrappedTextDisabled(row.predict_note);
  } else {
    const LoadedModel* m = r.model.get();
    const auto top = [&](const std::vector<deberta::TokenScore>& t) {
      std::string out;
      for (const auto& ts : t) out += (out.empty() ? "" : ",  ") + vocab_name(m, ts.id) + " " + fmt(ts.probability, 3, false);
      return out;
    };
    // TRANSLATORS: the top 3 predicted tokens at the [MASK] (position {i}) in this run, then with the change.
    WrappedText(trf("[MASK] at {i}: {before}", arg("i", w.mask), arg("before", top(row.top_before))));
    WrappedTextColored(kWhatIfOrange, trf("with {value}: {after}", arg("value", now), arg("after", top(row.top_after))));
  }
}

/// The step's "what if" control (issue 42, item 6), in a column `width` pixels wide: one core switch
/// (the relative span K, the scale factor f or the p2c index) set to another value; the query's
/// softmax row is recomputed through the core (what_if_row: a forward pass under that ablation) as
/// soon as the value changes, and drawn beside the run's own row on one scale.
void draw_what_if(App& app, const LessonStep& st, float width) {
  ViewerState& s = app.state;
  LessonState& L = s.lesson;
  const Result& r = *s.result;
  const LessonWhatIf& w = st.what_if;
  // A new step (or result) starts from the default change.
  const std::string owner = std::to_string(r.generation) + "/" + std::to_string(L.step) + "/" + std::to_string(static_cast<int>(w.knob));
  if (L.what_if_for != owner) L.what_if = what_if_default(w), L.what_if_for = owner;
  WhatIfValue& v = L.what_if;
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
  ImGui::PushID("what_if");
  // TRANSLATORS: starts a question continued beside it ("What if" + "the scores were divided by … ?").
  ImGui::TextColored(kWhatIfOrange, "%s", tr("What if"));
  ImGui::SameLine();
  const std::string now = w.knob == WhatIfKnob::Span    ? draw_what_if_span(w, v, width)
                          : w.knob == WhatIfKnob::Scale ? draw_what_if_scale(w, v, width)
                                                        : draw_what_if_p2c(w, v);
  ImGui::PopID();
  refresh_what_if_row(s, w, v, owner);
  if (!L.what_if_error.empty()) {
    // TRANSLATORS: {error} is the reason the row could not be recomputed.
    ErrorText(trf("what if: {error}", arg("error", L.what_if_error)));  // what_if_row's errors carry no prefix
    ImGui::PopTextWrapPos();
    return;
  }
  const WhatIfRow& row = L.what_if_row;
  draw_what_if_numbers(r, w, row, now);
  ImGui::TextDisabled(tr("softmax row of query i = %d '%s', layer %d, head %d (every layer rerun):"), w.query,
                      token_name(s, w.query).c_str(), w.layer, w.head);
  ImGui::TextColored(kWhatIfBlue, "%s", tr("this run (blue)"));
  ImGui::SameLine();
  // TRANSLATORS: %s is the value tried ("K = 2", "f = 3", "p2c index δ(j, i)").
  ImGui::TextColored(kWhatIfOrange, tr("beside %s (orange)"), now.c_str());
  what_if_bars(s, row, ImVec2(width, 80));
  // TRANSLATORS: the key the query favours before → after the change (index and token), then the largest change of a weight.
  ImGui::TextDisabled(tr("favourite key %d %s → %d %s; largest change %s, at key %d %s"), row.favourite_before,
                      token_name(s, row.favourite_before).c_str(), row.favourite_after, token_name(s, row.favourite_after).c_str(),
                      fmt(row.max_change, 3, false).c_str(), row.most_changed, token_name(s, row.most_changed).c_str());
  ImGui::PopTextWrapPos();
}

void show_me(ViewerState& s, const LessonTarget& t) {
  for (int k = 0; k < static_cast<int>(Tab::Count); ++k)
    if (t.tab == tab_name(static_cast<Tab>(k))) s.tab = static_cast<Tab>(k), s.switch_tab = true;
  s.layer = t.layer, s.head = t.head, s.qi = t.i, s.kj = t.j;
  if (t.tab == "predictions") s.emd_head = t.head;  // the decoder passes' head slider
  if (t.distance_k > 0) s.distance_k = t.distance_k;
  clamp_selection(s);
}

/// The lesson's header: previous / next, the list of steps, "step n of N" with the model in
/// short, and the ablation the numbers come from.
void draw_lesson_navigation(ViewerState& s, const LessonStep& st) {
  LessonState& L = s.lesson;
  const int n = static_cast<int>(L.steps.size());
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && L.step > 0) L.go_to(L.step - 1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##next", ImGuiDir_Right) && L.step + 1 < n) L.go_to(L.step + 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::min(ImGui::GetContentRegionAvail().x * 0.6f, 460.0f));
  if (ImGui::BeginCombo("##steps", st.title.c_str())) {
    for (int k = 0; k < n; ++k) {
      const LessonStep& o = L.steps[static_cast<size_t>(k)];
      const std::string label = o.title + (o.applies ? "" : "   " + std::string(tr("(does not apply here)"))) + "###step" + std::to_string(k);
      if (ImGui::Selectable(label.c_str(), k == L.step)) L.go_to(k);
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  // TRANSLATORS: the step's number, the number of steps, then the model's configuration in short.
  {  // wrapped beside the step's menu, not clipped at the window's edge (issue 54, item 5)
    char header[512];
    std::snprintf(header, sizeof header, tr("step %d of %d · %s"), L.step + 1, n, model_summary(s.result->model->model.config).c_str());
    WrappedTextDisabled(header);
  }
  if (!s.result->ablation.is_default())
    // TRANSLATORS: %s describes the ablation (the switches changed).
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), tr("The numbers below are from the ablated run (%s)."),
                       s.result->ablation.describe(&s.result->model->model.config).c_str());
  ImGui::Separator();
}

/// The step itself: its title, its equation (in a blue-edged box), the paper's own words for what
/// it computes (paper_quotes.h, in a sand-edged box) and a few sentences.
void draw_step_text(App& app, const LessonStep& st) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.55f, 0.8f, 1.0f, 1));
  ImGui::TextUnformatted(st.title.c_str());
  ImGui::PopStyleColor();
  ImGui::Spacing();
  {
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::Indent(12);
    if (app.gfx.mono) ImGui::PushFont(app.gfx.mono);
    ImGui::PushTextWrapPos(ImGui::GetCursorPos().x + ImGui::GetContentRegionAvail().x - 12);
    WrappedLabelledText(st.equation);  // steps 9 and 11: "paper:" over "released code:", aligned by measured width
    ImGui::PopTextWrapPos();
    if (app.gfx.mono) ImGui::PopFont();
    ImGui::Unindent(12);
    const ImVec2 p1(p0.x + ImGui::GetContentRegionAvail().x, ImGui::GetCursorScreenPos().y);
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p0.x, p0.y - 3), ImVec2(p0.x + 4, p1.y - 2), IM_COL32(90, 150, 230, 255));
  }
  // The paper's own words for what this step computes (paper_quotes.h), beside the equation.
  if (!st.quotes.empty()) {
    ImGui::Spacing();
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    ImGui::Indent(12);
    ImGui::TextDisabled("%s", tr("In the paper (arXiv 2006.03654 v6):"));
    for (size_t k = 0; k < st.quotes.size(); ++k)  // two passages of one place: cited once, after the second
      PaperQuoteText(st.quotes[k], k + 1 == st.quotes.size() || st.quotes[k + 1].paraphrase || st.quotes[k].paraphrase ||
                                       st.quotes[k].cite() != st.quotes[k + 1].cite());
    ImGui::Unindent(12);
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p0.x, p0.y), ImVec2(p0.x + 4, ImGui::GetCursorScreenPos().y - 4),
                                              IM_COL32(200, 170, 110, 255));
  }
  ImGui::Spacing();
  WrappedText(st.text);
  // Where the number comes from: the core function, and the notebook that re-derives it (issue 58, item 5).
  if (*st.link.function)
    // TRANSLATORS: under a lesson step: {function} is a C++ function's name, {file} and {notebook} file paths,
    // {section} a notebook section's heading (kept in English, as the notebook writes it).
    WrappedTextDisabled(trf("Computed by {function} ({file}); re-derived in {notebook}, section \"{section}\".",
                            arg("function", st.link.function), arg("file", st.link.file), arg("notebook", st.link.notebook),
                            arg("section", st.link.section)));
  ImGui::Spacing();
  ImGui::Separator();
}

/// The question and the answer box with its "check" button; a check (or Enter) judges the typed
/// answer (judge_lesson_answer) into the lesson state.
void draw_answer_box(ViewerState& s, const LessonStep& st) {
  LessonState& L = s.lesson;
  ImGui::TextUnformatted(tr("Question"));
  WrappedText(st.question);
  ImGui::SetNextItemWidth(160);
  // The keyboard goes to the answer box on a new step and after a wrong answer: type, Enter, retype.
  if (L.focus_answer) {
    ImGui::SetKeyboardFocusHere();
    L.focus_answer = false;
  }
  // The value applies as it is typed (so "check" sees it); Enter also checks.
  // Text, not a number field: a blank or unparsable entry must not count as "0".
  // The empty box says that Enter checks (issue 55, item 2).
  // TRANSLATORS: shown in the empty answer box; Enter is the key.
  ImGui::InputTextWithHint((std::string(tr("your answer")) + "###your answer").c_str(), tr("a number, then Enter"), L.given,
                           sizeof L.given, ImGuiInputTextFlags_AutoSelectAll);  // refocused after a wrong answer: typing replaces it
  RecordWidget(s, "your answer");
  const bool enter = ImGui::IsItemDeactivated() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter));
  ImGui::SameLine();
  // TRANSLATORS: the button that checks the typed answer.
  const bool check = ImGui::Button((std::string(trc("lesson", "check")) + "###check").c_str());
  RecordWidget(s, "check");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("Checks the answer; Enter in the answer box does the same."));
  if (check || enter) {
    const LessonVerdict v = judge_lesson_answer(st, L.given);
    L.checked = v.kind == LessonVerdict::Right ? 1 : v.kind == LessonVerdict::Wrong ? -1 : -2;
    if (v.kind != LessonVerdict::NotAnswer) ++L.attempts;
    L.mistake = v.mistake;
    L.give_decimals = v.give_decimals;
    L.focus_answer = v.kind != LessonVerdict::Right;
  }
}

/// "show the working" and "show me", open only once a number was committed (`attempted`):
/// predict, then observe.
void draw_working_buttons(ViewerState& s, const LessonStep& st, bool attempted) {
  LessonState& L = s.lesson;
  ImGui::BeginDisabled(!attempted);
  ImGui::SameLine();
  // One ID for both labels, so the button keeps its ID when it toggles (and in every language).
  if (ImGui::Button((std::string(L.revealed ? tr("hide the working") : tr("show the working")) + "###working").c_str()))
    L.revealed = !L.revealed;
  ImGui::SameLine();
  // TRANSLATORS: the button that opens the tab, layer, head and cell the step talks about.
  if (ImGui::Button((std::string(tr("show me")) + "###show me").c_str()) || (L.press_show_me && attempted)) show_me(s, st.show);
  ImGui::EndDisabled();
  L.press_show_me = false;
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    // TRANSLATORS: the first %s is a tab's title, translated (Head detail, Distance δ, Equation, …).
    ImGui::SetTooltip(attempted ? tr("opens the %s tab at layer %d, head %d, query i = %d, key j = %d")
                                // TRANSLATORS: as above, before the learner has answered.
                                : tr("answer first: predict, then observe (opens the %s tab at layer %d, head %d, i = %d, j = %d)"),
                      tr(tab_title(st.show.tab)), st.show.layer, st.show.head, st.show.i, st.show.j);
  if (!attempted) WrappedTextDisabled(tr("Commit a number first: the answer, its working and the map open after your attempt."));
}

/// The verdict on a wrong answer: the precision asked for, the value rounded too far, another
/// reading of the paper (not a mistake: step 11's I = P) or the likely mistake by name.
void draw_wrong_verdict(const LessonState& L, const LessonStep& st) {
  // A number that is another reading of the paper (step 11: I = P) is not called a mistake.
  bool reading = false;
  for (const LessonMistake& m : st.mistakes)
    if (m.name == L.mistake) reading = m.reading;
  // TRANSLATORS: {decimals} is the number of decimal places asked for, {tolerance} the margin ("±0.00005").
  const std::string precision = trf("Not the number asked for ({decimals} decimal places, right within {tolerance}).",
                                    arg("decimals", st.decimals), arg("tolerance", lesson_tolerance_text(st)));
  // TRANSLATORS: the verdict on a wrong answer; {decimals} and {tolerance} as in "Not the number asked for …".
  const std::string not_quite = trf("Not quite ({decimals} decimal places, right within {tolerance}).",
                                    arg("decimals", st.decimals), arg("tolerance", lesson_tolerance_text(st)));
  if (L.give_decimals > 0)
    // TRANSLATORS: the verdict on the right value written with fewer decimal places than asked ({decimals}).
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%s",
                       trf("That is the answer rounded too far: give {decimals} decimal places.", arg("decimals", L.give_decimals))
                           .c_str());
  else if (reading)
    ImGui::TextColored(ImVec4(0.55f, 0.8f, 1.0f, 1), "%s", precision.c_str());
  else
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", st.integer ? tr("Not quite.") : not_quite.c_str());
  ImGui::PushTextWrapPos(0);
  if (!L.mistake.empty()) {
    // TRANSLATORS: {mistake} is another reading of the paper ("I = P is the paper's literal reading of A.8 …").
    const std::string other = trf("Another reading of the paper, not a mistake: {mistake}.", arg("mistake", L.mistake));
    // TRANSLATORS: {mistake} is a named mistake ("forgot the square root").
    const std::string likely = trf("Likely mistake: {mistake}.", arg("mistake", L.mistake));
    WrappedTextColored(reading ? ImVec4(0.7f, 0.85f, 1.0f, 1) : ImVec4(1, 0.7f, 0.6f, 1), reading ? other : likely);
  }
  ImGui::PopTextWrapPos();
  // TRANSLATORS: "show the working" is the button of that name: use its translation.
  WrappedText(tr("Try again, or press \"show the working\"."));
}

/// The verdict on the last check: right, not a number, or wrong (draw_wrong_verdict).
void draw_verdict(const LessonState& L, const LessonStep& st) {
  if (L.checked > 0)
    // TRANSLATORS: the verdict on a right answer.
    ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.4f, 1), "%s", tr("Right."));
  else if (L.checked == -2)
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%s",
                       std::string(L.given).find_first_not_of(" \t") == std::string::npos
                           ? tr("Type a number first: an empty box is not an answer.")
                           // TRANSLATORS: {given} is what the learner typed.
                           : trf("'{given}' is not a number: type one, e.g. 3 or -0.25.", arg("given", std::string(L.given))).c_str());
  else if (L.checked < 0)
    draw_wrong_verdict(L, st);
}

/// The step's question part: the question, the answer box, the buttons, the verdict and, once
/// revealed after an attempt, the answer with its working.
void draw_question(App& app, const LessonStep& st) {
  ViewerState& s = app.state;
  LessonState& L = s.lesson;
  draw_answer_box(s, st);
  // Predict, then observe: the working and "show me" open only once a number was committed.
  const bool attempted = L.attempts > 0;
  draw_working_buttons(s, st, attempted);
  draw_verdict(L, st);
  if (L.revealed && attempted) {
    ImGui::Spacing();
    ImGui::Text(tr("Answer: %s"), lesson_answer_text(st).c_str());
    if (app.gfx.mono) ImGui::PushFont(app.gfx.mono);
    WrappedText(st.explanation);
    if (app.gfx.mono) ImGui::PopFont();
  }
}

/// Below the step, once the learner has answered right or revealed (the map would give the
/// answer away): the step's map, and its "what if" beside it (left and right) when it has both.
void draw_step_extras(App& app, const LessonStep& st) {
  const LessonState& L = app.state.lesson;
  const bool what_if = L.answer_visible(st) && st.applies && st.what_if.knob != WhatIfKnob::None;
  if (what_if && !st.show.map.empty()) {
    ImGui::Spacing();
    ImGui::BeginGroup();
    draw_what_if(app, st, std::floor(ImGui::GetContentRegionAvail().x * 0.46f));
    ImGui::EndGroup();
    ImGui::SameLine(0, 18);
    ImGui::BeginGroup();
    draw_step_map(app, st);
    ImGui::EndGroup();
  } else if (what_if) {
    ImGui::Spacing();
    draw_what_if(app, st, ImGui::GetContentRegionAvail().x);
  } else if (L.answer_visible(st)) {
    draw_step_map(app, st);
  }
}

/// One row of the pencil view: its name, then its d numbers in small numbered boxes (component 1 … d).
void pencil_row(const std::string& name, const std::vector<double>& v, ImU32 edge) {
  ImGui::TextUnformatted(name.c_str());
  ImGui::SameLine(150);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (size_t q = 0; q < v.size(); ++q) {
    const std::string cell = fmt(v[q], 3, false);
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    const ImVec2 size(74, ImGui::GetTextLineHeight() + 4);
    dl->AddRect(p0, ImVec2(p0.x + size.x, p0.y + size.y), edge);
    dl->AddText(ImVec2(p0.x + 3, p0.y + 2), IM_COL32(140, 140, 140, 255), std::to_string(q + 1).c_str());
    dl->AddText(ImVec2(p0.x + size.x - 4 - ImGui::CalcTextSize(cell.c_str()).x, p0.y + 2), IM_COL32(230, 230, 230, 255), cell.c_str());
    ImGui::Dummy(size);
    if (q + 1 < v.size()) ImGui::SameLine(0, 4);
  }
}

/// The gather by δ drawn (issue 58, item 6): the products of the fixed row with the table rows the line
/// reads (top boxes, numbered by table row), the line of cells (bottom boxes, numbered by position),
/// and a line from each cell to the row it takes; the selected cell's line is drawn bold.
void draw_gather(const PencilGather& g, int selected, const std::string& top, const std::string& bottom, ImU32 edge) {
  if (g.rows.empty()) return;
  const std::vector<double> values = g.values();
  const float label = 150, gap = 4, line_h = ImGui::GetTextLineHeight() + 4, drop = 2.5f * line_h;
  const size_t most = std::max(g.products.size(), g.rows.size());
  const float w = std::clamp((ImGui::GetContentRegionAvail().x - label) / static_cast<float>(most) - gap, 44.0f, 74.0f);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 grey = IM_COL32(140, 140, 140, 255), text = IM_COL32(230, 230, 230, 255);
  const auto box = [&](float x, float y, int64_t number, double v, ImU32 colour) {
    const std::string cell = fmt(v, w < 60 ? 2 : 3, false);
    dl->AddRect(ImVec2(x, y), ImVec2(x + w, y + line_h), colour);
    dl->AddText(ImVec2(x + 3, y + 2), grey, std::to_string(number).c_str());
    dl->AddText(ImVec2(x + w - 4 - ImGui::CalcTextSize(cell.c_str()).x, y + 2), text, cell.c_str());
  };
  const auto x_of = [&](size_t k) { return o.x + label + static_cast<float>(k) * (w + gap); };
  dl->AddText(ImVec2(o.x, o.y + 2), text, top.c_str());
  dl->AddText(ImVec2(o.x, o.y + line_h + drop + 2), text, bottom.c_str());
  for (size_t k = 0; k < g.products.size(); ++k) box(x_of(k), o.y, g.first_row + static_cast<int64_t>(k), g.products[k], edge);
  const ImU32 bold = IM_COL32(255, 190, 60, 255);
  for (size_t m = 0; m < g.rows.size(); ++m) {
    const bool chosen = static_cast<int>(m) == selected;
    box(x_of(m), o.y + line_h + drop, static_cast<int64_t>(m), values[m], chosen ? bold : edge);
    const float from = x_of(m) + w / 2, to = x_of(static_cast<size_t>(g.rows[m] - g.first_row)) + w / 2;
    dl->AddLine(ImVec2(from, o.y + line_h + drop), ImVec2(to, o.y + line_h), chosen ? bold : grey, chosen ? 2.5f : 1.0f);
  }
  ImGui::Dummy(ImVec2(label + static_cast<float>(most) * (w + gap), 2 * line_h + drop));
  ImGui::Spacing();
}

/// The pencil view (issue 58, item 6) under steps 7 and 8 on a model small enough to work by hand
/// (d ≤ 8, N ≤ 16: the toy model): the rows of Q_c, K_c, K_r and Q_r the cell reads as numbered boxes,
/// the gather by δ written out, and p2c with the paper's δ(j, i) beside the code's δ(i, j).
void draw_pencil(App& app, const LessonStep& st) {
  ViewerState& s = app.state;
  const Result& r = *s.result;
  if (!s.lesson.answer_visible(st) || !st.applies || (st.show.map != "c2p" && st.show.map != "p2c")) return;
  const LayerDetail* full = detail_for(s, st.show.layer);
  if (!full || !full->has(st.show.layer) || r.model->model.config.d_head() > 8 || token_count(s) > 16) return;
  PencilCell p;
  try {
    p = pencil_cell(full->trace, st.show.layer, st.show.head, st.show.i, st.show.j);
  } catch (const std::exception& e) {
    return ErrorText(e.what());
  }
  ImGui::Spacing();
  // TRANSLATORS: heads the pencil view of one cell; {layer}, {head}, {i}, {j} are numbers.
  ImGui::TextColored(ImVec4(0.55f, 0.8f, 1.0f, 1), "%s",
                     trf("With a pencil: the rows eq. 4 reads for i = {i}, j = {j} (layer {layer}, head {head})", arg("i", p.i),
                         arg("j", p.j), arg("layer", p.layer), arg("head", p.head)).c_str());
  const std::string i = std::to_string(p.i), j = std::to_string(p.j), row = std::to_string(p.row), paper = std::to_string(p.row_paper);
  pencil_row("Q_c[" + i + "]", p.Q_c_i, IM_COL32(90, 150, 230, 255));
  pencil_row("K_c[" + j + "]", p.K_c_j, IM_COL32(90, 150, 230, 255));
  WrappedText("c2c = Q_c[" + i + "] · K_c[" + j + "] = " + fmt(p.c2c, 4, false));
  if (!p.K_r_row.empty()) {
    WrappedText("δ(" + i + ", " + j + ") = " + row + "  →  K_r[" + row + "]");
    pencil_row("K_r[" + row + "]", p.K_r_row, IM_COL32(230, 150, 90, 255));
    WrappedText("c2p = Q_c[" + i + "] · K_r[δ(" + i + "," + j + ")] = " + fmt(p.c2p_dot, 4, false));
    // TRANSLATORS: introduces a drawing: the top boxes are numbered by table row r, the bottom ones by key j.
    WrappedText(trf("The gather by δ: row {i} of c2p takes, for each key j, the product with table row δ({i}, j).", arg("i", p.i)));
    draw_gather(p.c2p_gather, p.j, "Q_c[" + i + "]·K_r[r]", "c2p[" + i + ", j]", IM_COL32(230, 150, 90, 255));
  }
  if (!p.Q_r_row.empty()) {
    pencil_row("Q_r[" + row + "]", p.Q_r_row, IM_COL32(120, 200, 120, 255));
    pencil_row("Q_r[" + paper + "]", p.Q_r_row_paper, IM_COL32(200, 200, 120, 255));
    // TRANSLATORS: the released code's p2c and the paper's (eq. 4 as printed), each with its row of Q_r.
    WrappedText(trf("p2c, released code: K_c[{j}] · Q_r[δ({i},{j}) = {row}] = {code};   as printed (eq. 4): K_c[{j}] · "
                    "Q_r[δ({j},{i}) = {paper}] = {value}",
                    arg("i", p.i), arg("j", p.j), arg("row", p.row), arg("code", fmt(p.p2c_code, 4, false)),
                    arg("paper", p.row_paper), arg("value", fmt(p.p2c_paper, 4, false))));
    // TRANSLATORS: introduces a drawing: the top boxes are numbered by table row r, the bottom ones by query i.
    WrappedText(trf("The gather by δ: column {j} of p2c takes, for each query i, the product with the table row this run "
                    "reads for (i, {j}).", arg("j", p.j)));
    draw_gather(p.p2c_gather, p.i, "K_c[" + j + "]·Q_r[r]", "p2c[i, " + j + "]", IM_COL32(120, 200, 120, 255));
  }
}

}  // namespace

void DrawLessonPanel(App& app) {
  ViewerState& s = app.state;
  if (!ResultOrWaiting(app)) return;
  if (!refresh_lesson(s)) {
    DetailNote(s.layer);
    return;
  }
  LessonState& L = s.lesson;
  if (!L.error.empty()) {
    // TRANSLATORS: {error} says why (an error message).
    ErrorText(trf("The lesson cannot be built for this run: {error}", arg("error", L.error)));
    return;
  }
  const int n = static_cast<int>(L.steps.size());
  const LessonStep& st = L.steps[static_cast<size_t>(L.step)];
  draw_lesson_navigation(s, st);
  draw_step_text(app, st);
  if (!st.applies) {
    // TRANSLATORS: heads the reason a lesson step does not apply (shown below it).
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%s", tr("Not with this model or input:"));
    WrappedText(st.skip_reason);
    if (L.step + 1 < n && ImGui::Button((std::string(tr("next step")) + "###next step").c_str())) L.go_to(L.step + 1);
  } else {
    draw_question(app, st);
  }
  ImGui::Spacing();
  ImGui::Separator();
  Note(trf("Answers are computed from the loaded model's own numbers (the trace of layer {layer}, head {head}). Change the "
           "layer or head in any tab and the questions follow.",
           arg("layer", s.layer), arg("head", s.head)));
  draw_step_extras(app, st);
  draw_pencil(app, st);
}

}  // namespace viewer
