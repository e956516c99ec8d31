// figure_draw.h — inside the figure writers (figure_export.h): the layout of a FigureSpec, the
// Canvas every format draws on, and the drawing of figures and diagrams. Not for the panels.
//
// figure_svg.cpp (layout, drawing, SVG; no cairo: the desktop and the page), figure_png.cpp (the
// same drawing rasterised), figure_pdf.cpp (the same drawing through cairo's PDF surface; desktop
// only, web/web_figure_unavailable.cpp refuses PDF in the page).
#pragma once

#include "figures/figure_export.h"

#include <string>
#include <vector>

namespace viewer {

struct Diagram;

/// What a figure or a diagram is drawn on. Coordinates in points, y down; text at its baseline start.
struct Canvas {
  virtual ~Canvas() = default;
  virtual void color(double r, double g, double b, double a = 1) = 0;
  virtual void font(double size, bool bold = false) = 0;
  virtual void text(double x, double y, const std::string& s) = 0;
  /// Text rotated 90° counter-clockwise, its baseline starting at (x, y) and running upwards.
  virtual void text_up(double x, double y, const std::string& s) = 0;
  virtual void fill_rect(double x, double y, double w, double h) = 0;
  virtual void stroke_rect(double x, double y, double w, double h, double line_width) = 0;
  virtual void line(double x0, double y0, double x1, double y1, double line_width) = 0;
  /// `m` (`[rows, cols]`) coloured under `scale`, cell (r, c) a w/cols × h/rows rectangle.
  virtual void cells(const deberta::Matrix& m, const ColorScale& scale, double x, double y, double w, double h) = 0;
  /// The colour bar: `scale` from hi at the top to lo at the bottom, one continuous strip.
  virtual void color_bar(const ColorScale& scale, double x, double y, double w, double h) = 0;
};

/// The colour bar's ramp: `n` rows from scale.hi (row 0) to scale.lo.
deberta::Matrix bar_ramp(const ColorScale& scale, int n);

/// Where everything of a figure goes (points), measured with FigureFont::sans().
struct FigureLayout {
  int nq = 0, nk = 0, cols = 1, rows = 1;
  double map = 0, cell = 0, fs = 0, gap = 0, map_title_h = 0, margin = 24;
  bool labels = false;
  double row_label_w = 0, col_label_h = 0, row_title_w = 0, tick_w = 0;
  std::vector<std::string> ticks;
  std::vector<double> tick_v;
  double x0 = 0, y0 = 0, maps_w = 0, maps_h = 0, bar_x = 0, bar_w = 12, bar_h = 0, width = 0, height = 0, cap_y = 0;
  std::vector<std::string> caption;
};

/// "" when `f` can be drawn, else the line write_figure returns for it ("figure: …": its problem,
/// no maps, an empty map, the font unreadable). `path` names the file in the line.
std::string figure_problem(const FigureSpec& f, const std::string& path);
/// The layout of a drawable `f` (figure_problem(f) == "").
FigureLayout layout_figure(const FigureSpec& f);
/// Draws `f` laid out as `l` on `t`.
void draw_figure(const FigureSpec& f, const FigureLayout& l, Canvas& t);
/// "wrote PATH (W × H pt, map at X,Y size S pt)".
std::string figure_written(const std::string& path, const FigureLayout& l);
/// Draws a Diagram (diagrams.h) on `t`.
void draw_diagram(const Diagram& d, Canvas& t);
/// True when `s` ends in `suffix`, ignoring ASCII case.
bool ends_with_nocase(const std::string& s, const std::string& suffix);

/// The PDF writers (figure_pdf.cpp through cairo; the page's web_figure_unavailable.cpp refuses).
std::string write_figure_pdf(const FigureSpec& f, const FigureLayout& l, const std::string& path);
std::string write_diagram_pdf(const Diagram& d, const std::string& path);

}  // namespace viewer
