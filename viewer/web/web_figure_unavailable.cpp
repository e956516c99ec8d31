// web_figure_unavailable.cpp — PDF / SVG figures need cairo, which the web edition does not have
// (docs/web.md). The Export tab's figure buttons say so; PNG and CSV exports work (downloads).
#include "figure_export.h"

namespace viewer {

bool figure_format_ok(const std::string& path) {
  return path.size() > 4 && (path.compare(path.size() - 4, 4, ".pdf") == 0 || path.compare(path.size() - 4, 4, ".svg") == 0);
}

std::string write_figure(const FigureSpec&, const std::string& path) {
  return "figure: " + path + ": PDF / SVG figures need cairo, which the web edition does not have; use the desktop explorer";
}

std::string write_diagram(const Diagram&, const std::string& path) { return write_figure({}, path); }

std::string export_figure_map(const ViewerState&, Quantity, const std::string& path) { return write_figure({}, path); }

std::string export_figure_grid(const ViewerState&, Quantity, const std::string& path) { return write_figure({}, path); }

}  // namespace viewer
