// heatmap.h — score maps as OpenGL textures (GL_NEAREST) and colour bars, in ImGui. The colour maps
// themselves are GL-free: colormap.h.
//
// A map of N_q × N_k values becomes one RGBA texture of N_k × N_q texels drawn with ImGui::Image,
// not N² rectangles (under software rendering 12 × 128² rectangles cost ~100 ms a frame, textures
// ~7 ms). Row i of the map (the query) is row i of the image, top to bottom.
#pragma once

#include "app/app.h"
#include "figures/colormap.h"

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace viewer {

/// What to draw on top of a map.
struct Overlay {
  int highlight = -1;       ///< token whose row and column are outlined (hover in the token strip)
  int sel_i = -1, sel_j = -1;  ///< selected cell (outlined)
  bool crossed = false;     ///< draw a red cross (a masked head)
  const char* caption = nullptr;  ///< text drawn over the map's top-left corner
  /// Zoom group: maps with the same `view` zoom and pan together (e.g. the six maps of Head
  /// detail); null = the map's own id. "" disables zoom and pan (thumbnails that open on click).
  const char* view = nullptr;
  /// Decimals of the numbers drawn in cells once they are big enough: −1 = automatic (2–3,
  /// signed for a diverging scale), 0 = integers (table rows, δ).
  int digits = -1;
};

/// What happened to a map this frame.
struct HeatmapEvent {
  bool hovered = false;
  int i = -1, j = -1;       ///< hovered cell
  bool clicked = false, right_clicked = false;  ///< a click (press and release without dragging)
  ImVec2 min, max;          ///< screen rectangle
  bool zoomed = false;      ///< the view is magnified (labels beside the map no longer line up)
};

/// Draws `m` as a texture of size `size` (pixels) under `scale`. `id` names the texture in the
/// cache; `version` changes whenever the data of `m` changed (e.g. the result generation).
///
/// Zoom and pan (state in `app.state.map_views`, shared by `overlay.view`): the mouse wheel zooms around
/// the cursor (×1.25 a notch, up to two cells across the map), a left drag pans, a double click
/// resets. When a cell is at least a text line tall the token names of a square map of the input
/// are drawn along the left and top edges (columns rotated); when it is wide enough for a number
/// the value is written in the cell. Only visible cells are visited, so a zoomed 512² map costs
/// what its visible cells cost.
HeatmapEvent Heatmap(App& app, const std::string& id, const deberta::Matrix& m, const ColorScale& scale,
                     ImVec2 size, uint64_t version, const Overlay& overlay = {});

/// A bar chart of one query's softmax row `probs` (`[N]`, key j on the x axis, bar height =
/// probability on a 0 … max scale, viridis like the maps), key `selected` outlined. Token names
/// are written under the bars (rotated) when a bar is at least a text line wide, else every k-th
/// index. Hover: key, token and value. Returns the key clicked, or −1.
int ProbabilityBars(ViewerState& s, const char* id, const std::vector<double>& probs, int selected, ImVec2 size);

/// One vector as a strip of bars over its d dimensions, centred on a zero line, coloured by the
/// diverging map under ±`max_abs` (so strips drawn with the same `max_abs` compare). Hover: the
/// dimension and value. `label` is drawn left of the strip in `label_w` pixels.
void VectorBars(const char* label, const Eigen::VectorXd& v, double max_abs, float label_w, ImVec2 size);

/// A vertical colour bar of height `height` with tick labels at lo, (0,) hi and a caption.
void ColorBar(App& app, const ColorScale& scale, float height, const char* caption);

}  // namespace viewer
