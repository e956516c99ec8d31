// panels.h — one Draw*Panel(state) per panel, each in its own file.
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
//   panel_lesson.cpp       DrawLessonPanel       the guided lesson: eq. 1 … EMD, questions checked on the model
#pragma once

#include "state.h"

#include <string>

namespace viewer {

void DrawModelPanel(ViewerState& s);
void DrawTokensPanel(ViewerState& s);
void DrawDistancePanel(ViewerState& s);
void DrawGridPanel(ViewerState& s);
void DrawHeadPanel(ViewerState& s);
void DrawEquationPanel(ViewerState& s);
void DrawPredictionsPanel(ViewerState& s);
void DrawAblationPanel(ViewerState& s);
void DrawExportPanel(ViewerState& s);
void DrawComparePanel(ViewerState& s);
void DrawLessonPanel(ViewerState& s);

/// The "Open model" popup (Ctrl+O) and the "Export" popup (Ctrl+E); Esc closes them.
void DrawPopups(ViewerState& s);

// Small shared widgets (widgets.cpp)

/// ImGui::InputText on a std::string (Debian's libimgui has no imgui_stdlib).
bool InputString(const char* label, std::string* str, int flags = 0);
/// A "(?)" marker with a wrapped tooltip.
void HelpMarker(const char* text);
/// Grey wrapped text.
void Note(const std::string& text);
/// Red wrapped text.
void ErrorText(const std::string& text);
/// What a panel shows while there is no result: loading, no model, no input, an error, computing.
void WaitingNote(const ViewerState& s);
/// A line "layer L, head H, query i 'tok' → key j 'tok'" for the current selection.
std::string selection_text(const ViewerState& s);
/// Layer and head sliders bound to the selection. Returns true on change.
bool LayerHeadSliders(ViewerState& s);
/// Writes exports; returns a status line.
std::string export_map_png(const ViewerState& s, Quantity q, const std::string& path);
std::string export_map_csv(const ViewerState& s, Quantity q, const std::string& path);
std::string export_map_npy(const ViewerState& s, Quantity q, const std::string& path);
std::string export_trace(const ViewerState& s, const std::string& path);
/// Reads the framebuffer and writes it as PNG (rows flipped). Returns "" or an error.
std::string write_framebuffer_png(const std::string& path, int width, int height);

}  // namespace viewer
