// figure_export.h — figures for slides and papers: a score map (or a layers × heads grid of them)
// as PDF or SVG through cairo, with token labels on both axes, a colour bar with its units and a
// caption naming the model, text, layer, head, term and ablation.
//
// No OpenGL here: the figure is drawn with cairo's PDF / SVG surfaces from the same matrices and
// the same colour maps (colormap.h's `color_of`) the viewer shows, so a figure and the screen agree.
#pragma once

#include "colormap.h"
#include "state.h"
#include "worker.h"

#include <string>
#include <vector>

namespace viewer {

/// One map of a figure.
struct FigureMap {
  const deberta::Matrix* values = nullptr;  ///< `[N_q, N_k]`, query i on the rows
  std::string title;                        ///< above the map, e.g. "layer 1 · head 2"
  bool crossed = false;                     ///< a masked head: drawn crossed out
};

/// What a figure shows. Maps are laid out row-major in `columns` columns, all on one `scale`.
struct FigureSpec {
  std::vector<FigureMap> maps;
  int columns = 1;
  std::vector<std::string> row_labels;  ///< token of each query (left axis)
  std::vector<std::string> col_labels;  ///< token of each key (top axis)
  std::vector<std::string> row_titles;  ///< grid: "layer l" left of each row of maps (may be empty)
  ColorScale scale;
  std::string title;                    ///< first line, bold
  std::string units;                    ///< colour-bar label, e.g. "attention probability"
  std::string caption;                  ///< wrapped under the maps
};

/// True when `path` ends in ".pdf" or ".svg" (the two formats write_figure knows).
bool figure_format_ok(const std::string& path);

/// Draws `f` into `path` (PDF or SVG by extension; sizes in points, 1/72 inch). Token labels are
/// drawn when a cell is at least 2 pt tall (font 2 … 9 pt, readable when the PDF is zoomed).
/// Returns "wrote PATH (W × H pt, map at X,Y size S pt)" (the first map's square) or a line starting with "figure:" naming the file and the
/// problem (unknown extension, no maps, an empty map, cairo's error such as an unwritable folder).
std::string write_figure(const FigureSpec& f, const std::string& path);

/// The selected layer/head's map of quantity `q` in the shown result as a figure, captioned with
/// the model, the text, layer, head, term and ablation. Errors as write_figure, plus "nothing
/// computed yet" and a term switched off.
std::string export_figure_map(const ViewerState& s, Quantity q, const std::string& path);

struct Diagram;

/// A pipeline or token-link diagram (diagrams.h) as PDF or SVG, the layout the tab draws: boxes,
/// arrows and links as vectors, every label a text element. Returns "wrote PATH (W × H pt, B boxes,
/// K links)" or "figure: PATH: problem" (unknown extension, nothing to draw, unwritable file).
std::string write_diagram(const Diagram& diagram, const std::string& path);

/// Every layer × head map of quantity `q` on one shared scale (the Attention-grid tab) as a figure.
std::string export_figure_grid(const ViewerState& s, Quantity q, const std::string& path);

}  // namespace viewer
