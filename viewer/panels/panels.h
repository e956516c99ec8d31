// panels.h — one Draw*Panel(app) per panel, each in its own file. A panel reads and edits the plain
// state (`app.state`), draws with the GL resources (`app.gfx`: heatmap textures, fonts) and starts
// background work through the actions of app.h (a load, a re-run, a head mask).
//
// [SECTION] index (file → panel)
//   panel_model.cpp        DrawModelPanel        model directory, recent list, config summary, text / ids
//   panel_tokens.cpp       DrawTokensPanel       the token strip (hover highlights row and column everywhere)
//   panel_distance.cpp     DrawDistancePanel     δ(i, j) of eq. 3 with a k slider; v2 log buckets
//   panel_grid.cpp         DrawGridPanel         layers × heads thumbnails; click opens, right-click masks
//   panel_head.cpp         DrawHeadPanel         c2c | c2p | p2c | p2p | sum | softmax of one head
//   panel_equation.cpp     DrawEquationPanel     explain_cell's steps for the selected cell
//   panel_predictions.cpp  DrawPredictionsPanel  top-k at each [MASK], EMD on/off, the decoder passes
//   panel_ablation.cpp     DrawAblationPanel     switches; baseline vs ablated with KL, top-1 changes
//   panel_compare.cpp      DrawComparePanel      model B beside model A: maps, A − B, mean |ΔP| per head, KL
//   panel_export.cpp       DrawExportPanel       PNG / CSV / .npy of a map, SVG / PDF figures, window PNG, trace
//   panel_lesson.cpp       DrawLessonPanel       the guided lesson: §3.1 … EMD, questions checked on the model
#pragma once

#include "app/app.h"
#include "figures/diagrams.h"
#include "i18n/i18n.h"

#include <optional>
#include <string>

namespace viewer {

/// The tooltip of a token shown by `shown_token` (a blank one: a space drawn as ▁), in the Tokens
/// panel and the predictions table (issue 55, item 8).
// TRANSLATORS: ▁ is the character drawn for a space (SentencePiece writes the start of a word with it).
inline constexpr const char* kBlankTokenNote = N_("only white space: each space is shown as ▁, SentencePiece's mark for the start of a word");

/// Model directory, recent list, config summary, the text / ids fields (Enter re-runs).
void DrawModelPanel(App& app);
/// The token strip; hovering a token outlines its row and column in every map.
void DrawTokensPanel(App& app);
/// δ(i, j) of eq. 3 for a chosen k beside the table rows the model reads; v2 log buckets.
void DrawDistancePanel(App& app);
/// Layers × heads thumbnails of one quantity on one scale; click opens, right-click masks a head.
void DrawGridPanel(App& app);
/// Every term of the selected layer/head (from the layer in full) and its softmax.
void DrawHeadPanel(App& app);
/// deberta::explain_cell's steps and vectors for the selected cell (from the layer in full).
void DrawEquationPanel(App& app);
/// Top-k at each [MASK] with and without the EMD, the decoder passes, or the task head's output.
void DrawPredictionsPanel(App& app);
/// The ablation switches (each change re-runs); baseline vs ablated predictions with KL.
void DrawAblationPanel(App& app);
/// PNG / CSV / .npy of the selected map, figures, the window PNG and the trace.
void DrawExportPanel(App& app);
/// Model B beside model A on the same tokens: maps, A − B, mean |ΔP| per head, KL.
void DrawComparePanel(App& app);
/// The guided lesson (lesson.h), its steps built from the selected layer and layer 0 in full.
void DrawLessonPanel(App& app);
/// Pipeline: the model's stages with its real sizes; a click opens a box's tab (panel_diagrams.cpp).
void DrawPipelinePanel(App& app);
/// Token links: bertviz-style lines query → key for the selected layer and head (panel_diagrams.cpp).
void DrawLinksPanel(App& app);
/// The Pipeline tab's diagram for the shown result; nullopt with the reason in `why` when nothing
/// has been computed (no model, no input — e.g. a model without a tokenizer and no ids —, a failed
/// input or run). Its labels are English (the slide figure, figure_export.h, keeps the paper's
/// words; the headless mode writes it) unless `translated` (the tab draws it).
std::optional<Diagram> current_pipeline(const ViewerState& s, std::string* why, bool translated = false);
/// The Token links tab's diagram (needs s.result and, for a term's contribution, the selected layer
/// in full); nullopt with the reason in `why` when it cannot be drawn. `why`, the heading and the
/// caption are English (the headless mode prints `why`; the slide figure keeps the paper's words)
/// unless `translated` (the tab shows them).
std::optional<Diagram> current_links(const ViewerState& s, std::string* why, bool translated = false);

/// The "Open model" popup (Ctrl+O) and the "Export" popup (Ctrl+E); Esc closes them.
void DrawPopups(App& app);

// Small shared widgets (widgets.cpp)

/// ImGui::InputText on a std::string (Debian's libimgui has no imgui_stdlib).
bool InputString(const char* label, std::string* str, int flags = 0);
/// ImGui::SameLine(), unless a control `label` of the radio-button / checkbox kind (box, spacing, label)
/// no longer fits on the line: then the next line (a row of options wraps instead of running past the
/// panel's edge in a wider language or interface size).
void SameLineIfFits(const char* label);
/// A "(?)" marker with a wrapped tooltip.
void HelpMarker(const char* text);
/// Sets `s.export_status` to `status` and, when it reports success ("wrote …"), lists `path` in
/// `s.written_files`.
void ExportDone(ViewerState& s, const std::string& status, const std::string& path);
/// Records the last item's screen rectangle as `s.widget_rects[name]` (for scripted clicks).
void RecordWidget(ViewerState& s, const std::string& name);
/// Grey wrapped text.
void Note(const std::string& text);
/// Red wrapped text.
void ErrorText(const std::string& text);
/// What a panel shows while there is no result: loading, no model, no input, an error, computing.
void WaitingNote(const App& app);
/// The one guard of a panel that needs a result: the shown result, or null after drawing
/// `WaitingNote` (the panel then returns). `const Result* r = ResultOrWaiting(app); if (!r) return;`
const Result* ResultOrWaiting(const App& app);
/// `label` in amber and, while the worker computes, a progress bar naming its stage ("layer 3 of 12").
void ComputeProgress(const App& app, const char* label);
/// What a panel shows while the worker materializes layer `layer` in full (a few frames at most).
void DetailNote(int layer);
/// The shown result's detail holding layer `layer` in full (`detail_for`), or null after drawing
/// `DetailNote` when it has not arrived yet.
const LayerDetail* DetailOrNote(const ViewerState& s, int layer);
/// A line "layer L, head H, query i 'tok' → key j 'tok'" for the current selection.
std::string selection_text(const ViewerState& s);
/// Layer and head sliders bound to the selection. Returns true on change.
bool LayerHeadSliders(ViewerState& s);
// The data exporters (export_map_png, …, export_trace): exporters.h.

}  // namespace viewer
