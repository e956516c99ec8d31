// web_figure_unavailable.cpp — the page has no cairo, so PDF figures are refused with a message
// (docs/web.md); everything else of the figures is the desktop's code: the layout and the SVG
// (figure_svg.cpp) and the PNG (figure_png.cpp) download from the Export tab as on the desktop.
#include "figures/diagrams.h"
#include "figures/figure_draw.h"

namespace viewer {

namespace {

std::string refused(const std::string& path) {
  return "figure: " + path + ": PDF needs cairo, which the web edition does not have; use SVG or PNG here, or the desktop explorer";
}

}  // namespace

std::string write_figure_pdf(const FigureSpec&, const FigureLayout&, const std::string& path) { return refused(path); }

std::string write_diagram_pdf(const Diagram&, const std::string& path) { return refused(path); }

}  // namespace viewer
