// panel_diagrams.cpp — the Pipeline and Token links tabs: the layouts of diagrams.h drawn with
// ImGui (the same layouts the figure export writes as SVG / PDF).
//
// Pipeline: embedding → one encoder layer opened up (× L) → EMD → MLM head with the loaded
// model's sizes; a click on a box opens its tab. Token links (bertviz's view): queries left, keys
// right across the panel's whole width (labels ≥ 11 px, a long input scrolls), a line per pair whose
// opacity is the attention weight, or one term's signed part of the score (orange raises it, blue
// lowers it), for the selected layer and head; hovering a token shows only its links.
#include "figures/diagrams.h"

#include "deberta/explain.h"
#include "figures/figure_export.h"
#include "ui/heatmap.h"
#include "ui/layout.h"
#include "ui/wrapped_text.h"
#include "panels/panels.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

namespace viewer {

namespace {

void open_target(ViewerState& s, const DiagramBox& b) {
  for (int k = 0; k < static_cast<int>(Tab::Count); ++k)
    if (b.target == tab_name(static_cast<Tab>(k))) s.tab = static_cast<Tab>(k), s.switch_tab = true;
  if (b.target == "grid" && b.quantity >= 0) s.grid_quantity = static_cast<Quantity>(b.quantity);
}

ImU32 abgr(uint32_t c, float alpha = 1) {
  return (c & 0x00ffffffu) | (static_cast<uint32_t>(std::clamp(alpha, 0.0f, 1.0f) * 255.0f) << 24);
}

/// Draws the pipeline's boxes and arrows scaled to the available room; returns the box clicked
/// (−1 none).
int DrawBoxes(const Diagram& d) {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float sc = diagram_scale(d, avail.x, avail.y);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("diagram", ImVec2(d.width * sc, d.height * sc));
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  const ImVec2 mp = ImGui::GetIO().MousePos;
  auto P = [&](float x, float y) { return ImVec2(p0.x + x * sc, p0.y + y * sc); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImFont* font = ImGui::GetFont();
  const float fs = ImGui::GetFontSize();
  dl->AddRectFilled(p0, P(d.width, d.height), IM_COL32(255, 255, 255, 255));
  const auto width = [font](const std::string& text, float px) { return font->CalcTextSizeA(px, FLT_MAX, 0, text.c_str()).x; };
  dl->AddText(font, heading_px(d, sc, fs, width), P(20, 12), IM_COL32(20, 20, 20, 255), d.title.c_str());
  ImGui::LogText("%s\n", d.title.c_str());
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
    const BoxFont bf = box_font(b, sc, fs, width);
    const float f1 = bf.title_px, f2 = bf.detail_px;
    // Read by tests and screen readers (--log-text): the labels are drawn into the draw list.
    ImGui::LogText("%s\n%s\n", b.title.c_str(), b.container ? "" : b.detail.c_str());
    dl->PushClipRect(a, z, true);
    dl->AddText(font, f1, P(b.x + 6, b.y + 3), ink, b.title.c_str());
    if (!b.container) dl->AddText(font, f2, ImVec2(a.x + 6 * sc, a.y + 3 * sc + f1 + 2), IM_COL32(60, 60, 70, 255), b.detail.c_str());
    dl->PopClipRect();
  }
  if (hit >= 0) {
    const DiagramBox& b = d.boxes[static_cast<size_t>(hit)];
    dl->AddRect(P(b.x, b.y), P(b.x + b.w, b.y + b.h), IM_COL32(255, 140, 0, 255), 3, 0, 2.5f);
    // TRANSLATORS: a pipeline box's title (translated), then the tab's name (Attention grid, Head detail, …).
    ImGui::SetTooltip(tr("%s\nclick: open the %s tab"), b.title.c_str(), tr(tab_title(b.target)));
  }
  for (const DiagramArrow& a : d.arrows) {
    const ImVec2 u = P(a.x0, a.y0), v = P(a.x1, a.y1);
    dl->AddLine(u, v, IM_COL32(70, 70, 80, 255), 1.5f);
    const float dx = v.x - u.x, dy = v.y - u.y, len = std::max(std::hypot(dx, dy), 1e-3f), ux = dx / len, uy = dy / len;
    dl->AddTriangleFilled(v, ImVec2(v.x - 8 * ux + 4.5f * uy, v.y - 8 * uy - 4.5f * ux),
                          ImVec2(v.x - 8 * ux - 4.5f * uy, v.y - 8 * uy + 4.5f * ux), IM_COL32(70, 70, 80, 255));
  }
  WrappedTextDisabled(d.caption);
  return clicked ? hit : -1;
}

/// Draws a links diagram across the panel's whole width (links_layout: labels at the UI font,
/// never below 11 px; a long input scrolls inside its own child window). Returns the hovered token
/// row (−1 none); `*hover_left` tells which column.
int DrawLinks(const Diagram& d, bool* hover_left) {
  const int n = static_cast<int>(d.left.size());
  WrappedTextDisabled(d.title);
  ImFont* font = ImGui::GetFont();
  const float fs = std::max(ImGui::GetFontSize(), 11.0f);
  float label_w = 0;
  for (int i = 0; i < n; ++i) {
    const std::string a = std::to_string(i) + " " + d.left[static_cast<size_t>(i)];
    label_w = std::max(label_w, font->CalcTextSizeA(fs, FLT_MAX, 0, a.c_str()).x);
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  label_w = std::min(label_w + 4, avail.x * 0.3f);
  const LinksLayout lay = links_layout(n, avail.x - ImGui::GetStyle().ScrollbarSize, avail.y, fs, label_w);
  int hover_row = -1;
  ImGui::BeginChild("links_scroll", ImVec2(0, avail.y), false);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  ImGui::InvisibleButton("links", ImVec2(w, lay.height_px));
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 mp = ImGui::GetIO().MousePos;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + w, p0.y + lay.height_px), IM_COL32(255, 255, 255, 255));
  const float row_y0 = p0.y + lay.top_px;
  if (hovered && mp.y >= row_y0) {
    const int r = static_cast<int>((mp.y - row_y0) / lay.row_px);
    if (r >= 0 && r < n) hover_row = r, *hover_left = mp.x < p0.x + (lay.left_px + lay.right_px) / 2;
  }
  const ImU32 dim = IM_COL32(90, 90, 90, 255);
  const char* query_i = tr("query i");
  ImGui::LogText("%s  %s\n", query_i, tr("key j"));
  dl->AddText(font, fs, ImVec2(p0.x + lay.left_px - font->CalcTextSizeA(fs, FLT_MAX, 0, query_i).x, p0.y + fs * 0.5f), dim, query_i);
  dl->AddText(font, fs, ImVec2(p0.x + lay.right_px + 6, p0.y + fs * 0.5f), dim, tr("key j"));
  auto Y = [&](int r) { return row_y0 + (static_cast<float>(r) + 0.5f) * lay.row_px; };
  for (const DiagramLink& l : d.links) {
    const bool mine = hover_row >= 0 && (*hover_left ? l.from == hover_row : l.to == hover_row);
    if (hover_row >= 0 && !mine) continue;
    const bool negative = d.signed_links && l.weight < 0;
    const float alpha = static_cast<float>(std::fabs(l.weight)) * (mine ? 1.0f : 0.9f);
    dl->AddLine(ImVec2(p0.x + lay.left_px, Y(l.from)), ImVec2(p0.x + lay.right_px, Y(l.to)),
                abgr(negative ? d.link_color_negative : d.link_color, std::max(alpha, mine ? 0.15f : 0.0f)), mine ? 2.5f : 1.5f);
  }
  for (int i = 0; i < n; ++i) {
    const std::string a = std::to_string(i) + " " + d.left[static_cast<size_t>(i)], b = std::to_string(i) + " " + d.right[static_cast<size_t>(i)];
    const ImU32 col = i == hover_row ? IM_COL32(200, 90, 0, 255) : IM_COL32(20, 20, 30, 255);
    const float tw = font->CalcTextSizeA(fs, FLT_MAX, 0, a.c_str()).x;
    const ImVec4 clip_l(p0.x, Y(i) - lay.row_px, p0.x + lay.left_px - 4, Y(i) + lay.row_px);
    dl->AddText(font, fs, ImVec2(p0.x + lay.left_px - 6 - tw, Y(i) - fs / 2), col, a.c_str(), nullptr, 0, &clip_l);
    const ImVec4 clip_r(p0.x + lay.right_px + 4, Y(i) - lay.row_px, p0.x + w, Y(i) + lay.row_px);
    dl->AddText(font, fs, ImVec2(p0.x + lay.right_px + 6, Y(i) - fs / 2), col, b.c_str(), nullptr, 0, &clip_r);
  }
  // The caption in the language's lines (line_break.h), read by tests and screen readers (--log-text).
  const std::string caption = WrapForWidth(d.caption, (w - 8) * ImGui::GetFontSize() / (fs * 0.9f));
  dl->AddText(font, fs * 0.9f, ImVec2(p0.x + 4, row_y0 + lay.row_px * static_cast<float>(n) + fs * 0.5f), dim, caption.c_str());
  ImGui::LogText("%s\n", d.caption.c_str());
  ImGui::EndChild();
  return hover_row;
}

/// The export buttons: `english()` is the diagram with the slide figure's English labels (the tab
/// draws it in the reader's language).
void ExportButtons(ViewerState& s, const std::function<std::optional<Diagram>()>& english, const std::string& stem) {
  for (const char* ext : {".svg", ".pdf"}) {
    ImGui::SameLine();
    // TRANSLATORS: {format} is svg or pdf.
    if (ImGui::Button((trf("export {format}", arg("format", ext + 1)) + "###export_" + (ext + 1)).c_str())) {
      const std::string path = s.export_dir + "/" + stem + ext;
      if (const std::optional<Diagram> d = english()) ExportDone(s, write_diagram(*d, path), path);
    }
  }
  if (!s.export_status.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", s.export_status.c_str());
  }
}

/// Why the shown state has no result to draw, in one sentence (the same facts WaitingNote shows).
/// English: the panels never show it (they draw WaitingNote first); the headless mode prints it.
std::string why_nothing(const ViewerState& s) {
  if (!s.model) return s.model_error.empty() ? "no model loaded" : "no model loaded (" + s.model_error + ")";
  // A model without a tokenizer and no ids: the text field cannot help, say what can.
  if (!s.model->tokenizer && s.ids_text.find_first_not_of(" \t,") == std::string::npos)
    return "nothing to draw: this model has no tokenizer and no token ids were given — give them with --ids (e.g. "
           "--ids 4,9,14,3) or in the Model & text panel";
  if (!s.input_error.empty()) return "nothing to draw: the input could not be used: " + s.input_error;
  if (!s.compute_error.empty()) return "nothing to draw: the model could not run: " + s.compute_error;
  if (s.input.inputs.input_ids.empty()) return "nothing to draw: no input yet (give --text or --ids)";
  return "nothing computed yet";
}

/// `msgid` with {layer} / {term} filled: translated for the Token links tab, English for the
/// headless mode (its messages stay English for scripts).
template <class... A>
std::string say(bool translated, const char* msgid, const A&... args) {
  return translated ? trf(msgid, args...) : fmt::format(fmt::runtime(msgid), args...);
}

}  // namespace

std::optional<Diagram> current_pipeline(const ViewerState& s, std::string* why, bool translated) {
  if (!s.result) return *why = why_nothing(s), std::nullopt;
  const Result& r = *s.result;
  const deberta::Model& m = r.model->model;
  return pipeline_diagram(m.config, r.trace.context.attention, token_count(s), r.emd() != nullptr, m.weights.lm_head.has_value(),
                          translated);
}

std::optional<Diagram> current_links(const ViewerState& s, std::string* why, bool translated) {
  if (!s.result) return *why = why_nothing(s), std::nullopt;
  const Result& r = *s.result;
  const int l = s.layer, h = s.head;
  const deberta::Matrix* probs = shown_map(s, l, h, Quantity::Probs);
  if (!probs || probs->size() == 0)
    return *why = say(translated, "no attention weights for layer {layer}", arg("layer", l)), std::nullopt;
  std::vector<std::string> names = r.input.names;
  names.resize(static_cast<size_t>(probs->rows()), "?");
  const int L = static_cast<int>(r.trace.layers.size()), H = static_cast<int>(r.model->model.config.num_attention_heads);
  // TRANSLATORS: in the Token links diagram's heading: the layer and head shown, and their ranges.
  const std::string where = say(translated, N_("layer {layer} (of 0–{last_layer}), head {head} (of 0–{last_head})"), arg("layer", l),
                                arg("last_layer", std::max(L - 1, 0)), arg("head", h), arg("last_head", std::max(H - 1, 0)));
  const double f = r.trace.context.attention.scale_factor;
  if (s.links_weight <= 0)
    // TRANSLATORS: the Token links diagram's heading; {formula} is softmax(Ã/√(3d)), {where} the layer and head.
    return links_diagram(names, *probs, say(translated, N_("Token links: attention weights {formula}, {where}"),
                                            arg("formula", weights_label(f)), arg("where", where)),
                         0.01, translated);
  const Quantity q = term_quantity(deberta::kAllTerms[std::min(s.links_weight, deberta::kTermCount) - 1]);
  const deberta::Matrix* t = shown_map(s, l, h, q);
  // TRANSLATORS: {term} is c2c, c2p, p2c or p2p.
  if (!computed(r, q)) return *why = say(translated, "{term} is off in this run", arg("term", quantity_name(q))), std::nullopt;
  if (!t || t->size() == 0)
    return *why = say(translated, "the terms of layer {layer} are not computed yet", arg("layer", l)), std::nullopt;
  // TRANSLATORS: the Token links diagram's heading for one term: {term} is c2c, c2p, p2c or p2p, {scale}
  // the scale's root (√(3d)), {where} the layer and head.
  return signed_links_diagram(names, *t,
                              say(translated, N_("Token links: {term}'s signed part of the score Ã/{scale} (s·{term}), {where}"),
                                  arg("term", quantity_name(q)), arg("scale", deberta::scale_root(f)), arg("where", where)),
                              0.05, translated);
}

void DrawPipelinePanel(App& app) {
  ViewerState& s = app.state;
  if (!ResultOrWaiting(app)) return;
  std::string why;
  const std::optional<Diagram> d = current_pipeline(s, &why, true);
  if (!d) {
    Note(why);
    return;
  }
  ImGui::TextDisabled("%s", tr("Click a box to open its view."));
  ExportButtons(s, [&s] { std::string unused; return current_pipeline(s, &unused, false); }, "pipeline");
  const int clicked = DrawBoxes(*d);
  if (clicked >= 0) open_target(s, d->boxes[static_cast<size_t>(clicked)]);
}

void DrawLinksPanel(App& app) {
  ViewerState& s = app.state;
  if (!ResultOrWaiting(app)) return;
  LayerHeadSliders(s);
  ImGui::SetNextItemWidth(300);
  // TRANSLATORS: {formula} is the weights' formula, e.g. softmax(Ã/√(3d)).
  const std::string weights = trf("attention weight {formula}", arg("formula", weights_label(s.result->trace.context.attention.scale_factor)));
  // The "line weight" choices: the weights, or one term's signed contribution to the score (kAllTerms' order).
  std::vector<const char*> items = {weights.c_str()};
  for (deberta::Term t : deberta::kAllTerms) items.push_back(tr(term_text(t).link_weight));
  ImGui::Combo((std::string(tr("line weight")) + "###line_weight").c_str(), &s.links_weight, items.data(),
               static_cast<int>(items.size()));
  HelpMarker(tr("A term's line shows its signed part of query i's score for key j: the term times the scale s, in logit "
                "units. Orange raises the score (more attention to key j), blue lowers it; opacity is its size against "
                "the largest. The terms add up to the score, not to the weight: the softmax is not additive. Hover a "
                "token to see only its links."));
  if (s.links_weight > 0 && !detail_for(s, s.layer)) {
    DetailNote(s.layer);
    return;
  }
  ViewerState::LinksCache& c = s.links_cache;
  if (c.result != s.result || c.detail != s.detail || c.layer != s.layer || c.head != s.head || c.weight != s.links_weight ||
      c.language != i18n::generation()) {
    c.why.clear();
    c.diagram = current_links(s, &c.why, true);
    c.result = s.result, c.detail = s.detail, c.layer = s.layer, c.head = s.head, c.weight = s.links_weight;
    c.language = i18n::generation();
  }
  if (!c.diagram) {
    Note(c.why);
    return;
  }
  ExportButtons(s, [&s] { std::string unused; return current_links(s, &unused, false); }, "links");
  bool left = true;
  const int row = DrawLinks(*c.diagram, &left);
  if (row >= 0) s.hover_token = row;
}

}  // namespace viewer
