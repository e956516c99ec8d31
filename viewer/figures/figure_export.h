// figure_export.h — figures for slides and papers: a score map (or a layers × heads grid of them)
// as SVG, PDF or PNG, with token labels on both axes, a colour bar with its units and a caption
// naming the model, text, layer, head, term and ablation.
//
// The writers take a figure description (FigureSpec) and nothing of the viewer's state; the view's
// description is made in one place, figure_view.h. No OpenGL, ImGui or viewer state here: the maps
// are drawn from the same matrices and colour maps (colormap.h's `color_of`) the viewer shows, so a
// figure and the screen agree. SVG and PNG need no cairo (the page writes them too); PDF goes
// through cairo on the desktop (figure_pdf.cpp) and is refused in the page.
#pragma once

#include "figures/colormap.h"

#include <memory>
#include <string>
#include <vector>

namespace viewer {

/// One map of a figure.
struct FigureMap {
  std::shared_ptr<const deberta::Matrix> values;  ///< `[N_q, N_k]`, query i on the rows (kept alive by the spec)
  std::string title;                              ///< above the map, e.g. "layer 1 · head 2"
  bool crossed = false;                           ///< a masked head: drawn crossed out
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
  /// Why there is no figure ("nothing computed yet", "c2p is not computed in this run (term
  /// switched off)"): the writers return it after their format's prefix. Empty when drawable.
  std::string problem;
};

/// True when `path` ends in ".pdf" or ".svg" (the two formats write_figure knows).
bool figure_format_ok(const std::string& path);

/// Draws `f` into `path` (PDF or SVG by extension; sizes in points, 1/72 inch). Token labels are
/// drawn when a cell is at least 2 pt tall (font 2 … 9 pt, readable when the PDF is zoomed).
/// Returns "wrote PATH (W × H pt, map at X,Y size S pt)" (the first map's square) or a line starting
/// with "figure:" naming the file and the problem (unknown extension, `f.problem`, no maps, an empty
/// map, the font unreadable, cairo's error such as an unwritable folder; in the page: PDF).
std::string write_figure(const FigureSpec& f, const std::string& path);

/// An RGBA image, rows top to bottom, 4 bytes a pixel.
struct FigureImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;
};

/// `f` drawn to pixels at `px_per_pt` pixels a point, the layout of write_figure: axes, token
/// labels, the colour bar with ticks and units, the caption. Cells are filled with their value's
/// colour (nearest cell at each pixel's centre), the colour bar's first row is `color_of(scale.hi)`
/// and its last `color_of(scale.lo)`; text is DejaVu Sans rasterised by stb_truetype, the same in
/// the desktop and the page. `f` must be drawable (write_figure_png checks).
FigureImage render_figure(const FigureSpec& f, double px_per_pt);

/// `f` as a PNG at 2 pixels a point (render_figure). Returns "wrote PATH (W×H, colour range LO … HI)"
/// or "PNG: problem" (`f.problem`, no maps, an empty map, the font unreadable, the file's error).
std::string write_figure_png(const FigureSpec& f, const std::string& path);

struct Diagram;

/// A pipeline or token-link diagram (diagrams.h) as PDF or SVG, the layout the tab draws: boxes,
/// arrows and links as vectors, every label a text element. Returns "wrote PATH (W × H pt, B boxes,
/// K links)" or "figure: PATH: problem" (unknown extension, nothing to draw, unwritable file).
std::string write_diagram(const Diagram& diagram, const std::string& path);

}  // namespace viewer
