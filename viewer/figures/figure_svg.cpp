// figure_svg.cpp — the figures' layout and drawing (figure_draw.h) and the SVG writer, without cairo:
// the desktop and the page compile this file (issue 41, item 8), and lay a figure out alike because
// both measure text with FigureFont (figure_font.h), not with cairo.
//
// Layout (points): title · key axis title · rotated key labels · maps (row labels at the left,
// a title under each map) · colour bar with ticks and its units · wrapped caption. The SVG is
// written directly — one <rect> per run of equal cells and every label a <text> element — because
// cairo's SVG surface turns text into glyph outlines and maps into embedded images, which a slide
// can neither search nor scale crisply (issue 31). The PDF (figure_pdf.cpp) and the PNG
// (figure_png.cpp) draw the same layout on their canvases.
#include "figures/figure_draw.h"
#include "figures/figure_font.h"

#include "figures/diagrams.h"

#include "deberta/output_file.h"
#include "deberta/tensor.h"  // Error
#include "deberta/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace viewer {

namespace {

/// `s` with &, <, >, " escaped for XML text and attributes; valid UTF-8 first.
std::string xml_escape(const std::string& raw) {
  std::string out;
  for (char c : deberta::valid_utf8(raw)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // XML 1.0 forbids most control characters, even escaped: a token can hold them.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += "\xEF\xBF\xBD";
        else out += c;
    }
  }
  return out;
}

struct SvgCanvas : Canvas {
  std::ostringstream out;
  std::string fill = "#000000";
  double opacity = 1, size = 10;
  bool bold = false;
  static std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s == "-0" ? "0" : s;
  }
  static std::string hex(uint32_t abgr) {  // color_of's 0xAABBGGRR
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", abgr & 0xff, (abgr >> 8) & 0xff, (abgr >> 16) & 0xff);
    return buf;
  }
  std::string paint() const { return "fill=\"" + fill + "\"" + (opacity < 1 ? " fill-opacity=\"" + num(opacity) + "\"" : ""); }
  std::string font_attrs() const {
    return "font-family=\"DejaVu Sans, sans-serif\" font-size=\"" + num(size) + "\"" + (bold ? " font-weight=\"bold\"" : "");
  }
  void color(double r, double g, double b, double a) override {
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(r * 255)), static_cast<int>(std::lround(g * 255)),
                  static_cast<int>(std::lround(b * 255)));
    fill = buf, opacity = a;
  }
  void font(double s, bool b) override { size = s, bold = b; }
  void text(double x, double y, const std::string& s) override {
    out << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" " << font_attrs() << " " << paint() << ">" << xml_escape(s)
        << "</text>\n";
  }
  void text_up(double x, double y, const std::string& s) override {
    out << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" transform=\"rotate(-90 " << num(x) << " " << num(y) << ")\" "
        << font_attrs() << " " << paint() << ">" << xml_escape(s) << "</text>\n";
  }
  void fill_rect(double x, double y, double w, double h) override {
    out << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h) << "\" "
        << paint() << "/>\n";
  }
  void stroke_rect(double x, double y, double w, double h, double lw) override {
    out << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h)
        << "\" fill=\"none\" stroke=\"" << fill << "\" stroke-width=\"" << num(lw) << "\"/>\n";
  }
  void line(double x0, double y0, double x1, double y1, double lw) override {
    out << "<line x1=\"" << num(x0) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(x1) << "\" y2=\"" << num(y1) << "\" stroke=\""
        << fill << "\"" << (opacity < 1 ? " stroke-opacity=\"" + num(opacity) + "\"" : "") << " stroke-width=\"" << num(lw)
        << "\"/>\n";
  }
  /// `v` rounded as `num` writes it, read back: edges written this way meet exactly.
  static double rounded(double v) { return std::strtod(num(v).c_str(), nullptr); }
  void cells(const deberta::Matrix& m, const ColorScale& scale, double x, double y, double w, double h) override {
    // One <rect> per run of equal colours along a row (vector cells, crisp at any zoom). Every edge
    // is rounded once, as written, and a rect's width and height are the differences of its rounded
    // edges: neighbours meet exactly, with no hairline gap for a renderer to show (issue 42).
    const double cw = w / static_cast<double>(m.cols()), ch = h / static_cast<double>(m.rows());
    out << "<g shape-rendering=\"crispEdges\">\n";
    for (int r = 0; r < m.rows(); ++r) {
      const double y0 = rounded(y + r * ch), y1 = rounded(y + (r + 1) * ch);
      for (int c = 0; c < m.cols();) {
        const uint32_t col = color_of(scale, m(r, c));
        int e = c + 1;
        while (e < m.cols() && color_of(scale, m(r, e)) == col) ++e;
        const double x0 = rounded(x + c * cw), x1 = rounded(x + e * cw);
        out << "<rect x=\"" << num(x0) << "\" y=\"" << num(y0) << "\" width=\"" << num(x1 - x0) << "\" height=\"" << num(y1 - y0)
            << "\" fill=\"" << hex(col) << "\"/>\n";
        c = e;
      }
    }
    out << "</g>\n";
  }
  // One rect filled with one vertical <linearGradient> of 65 stops (the colour map sampled evenly):
  // a single shape, so no seam can show between bands in any renderer (issue 42: a white seam in
  // Chromium between the 256 rects the bar used to be).
  void color_bar(const ColorScale& scale, double x, double y, double w, double h) override {
    const int n = 65;
    const deberta::Matrix ramp = bar_ramp(scale, n);
    out << "<defs><linearGradient id=\"colorbar\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">\n";
    for (int r = 0; r < n; ++r)
      out << "<stop offset=\"" << num(100.0 * r / (n - 1)) << "%\" stop-color=\"" << hex(color_of(scale, ramp(r, 0))) << "\"/>\n";
    out << "</linearGradient></defs>\n<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\""
        << num(h) << "\" fill=\"url(#colorbar)\"/>\n";
  }
};

std::string label_of(const std::vector<std::string>& labels, int t) {
  std::string name = t < static_cast<int>(labels.size()) ? labels[static_cast<size_t>(t)] : "#" + std::to_string(t);
  // At most 14 characters (UTF-8 aware: cut only at a character start).
  size_t chars = 0, cut = name.size();
  for (size_t b = 0; b < name.size(); ++b)
    if ((static_cast<unsigned char>(name[b]) & 0xc0) != 0x80 && ++chars > 14) {
      cut = b;
      break;
    }
  if (cut < name.size()) name = name.substr(0, cut) + "…";
  return std::to_string(t) + " " + name;
}

}  // namespace

deberta::Matrix bar_ramp(const ColorScale& scale, int n) {
  deberta::Matrix ramp(n, 1);
  for (int r = 0; r < n; ++r) ramp(r, 0) = scale.hi + (scale.lo - scale.hi) * r / (n - 1.0);
  return ramp;
}

bool ends_with_nocase(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  std::string tail = s.substr(s.size() - suffix.size());
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == suffix;
}

bool figure_format_ok(const std::string& path) { return ends_with_nocase(path, ".pdf") || ends_with_nocase(path, ".svg"); }

std::string figure_problem(const FigureSpec& f, const std::string& path) {
  if (!f.problem.empty()) return "figure: " + f.problem;
  if (f.maps.empty()) return "figure: " + path + ": nothing to draw";
  for (const auto& m : f.maps)
    if (!m.values || m.values->size() == 0) return "figure: " + path + ": a map is empty or not computed";
  if (!FigureFont::sans().error().empty()) return "figure: " + path + ": " + FigureFont::sans().error();
  return "";
}

FigureLayout layout_figure(const FigureSpec& f) {
  const FigureFont& font = FigureFont::sans();
  FigureLayout l;
  const int nq = l.nq = static_cast<int>(f.maps[0].values->rows()), nk = l.nk = static_cast<int>(f.maps[0].values->cols());
  const int cols = l.cols = std::max(1, std::min(f.columns, static_cast<int>(f.maps.size())));
  const int rows = l.rows = (static_cast<int>(f.maps.size()) + cols - 1) / cols;
  const bool grid = f.maps.size() > 1;

  // Sizes: one map up to 520 pt wide, or 2.2 pt a token for long inputs (so that the 2-pt labels
  // still fit: a 512-token map is ~1130 pt, to be zoomed in a PDF viewer); a grid's thumbnails share ~760 pt.
  const double map = l.map = grid ? std::clamp(760.0 / cols, 90.0, 200.0)
                                  : std::clamp(14.0 * std::max(nq, nk), 300.0, std::max(520.0, 2.2 * std::max(nq, nk)));
  l.cell = map / std::max(nq, nk);
  l.labels = l.cell >= 2.0;
  const double fs = l.fs = std::clamp(l.cell * 0.8, 2.0, 8.0);  // token label font
  l.gap = grid ? 10 : 0, l.map_title_h = grid ? 12 : 0;
  const double margin = l.margin;

  if (l.labels) {
    for (int i = 0; i < nq; ++i) l.row_label_w = std::max(l.row_label_w, font.width(label_of(f.row_labels, i), fs));
    for (int j = 0; j < nk; ++j) l.col_label_h = std::max(l.col_label_h, font.width(label_of(f.col_labels, j), fs));
    l.row_label_w += 3, l.col_label_h += 3;
  }
  for (const auto& t : f.row_titles) l.row_title_w = std::max(l.row_title_w, font.width(t, 9) + 6);
  const bool div = f.scale.map == ColorMap::Diverging;
  for (int t = 0; t <= 4; ++t) {
    const double v = f.scale.lo + (f.scale.hi - f.scale.lo) * t / 4.0;
    l.tick_v.push_back(std::fabs(v) < 1e-12 * (f.scale.hi - f.scale.lo) ? 0.0 : v);
    l.ticks.push_back(fmt(l.tick_v.back(), 3, div));
  }
  for (const auto& t : l.ticks) l.tick_w = std::max(l.tick_w, font.width(t, 9));
  const double axis_h = 14;  // "key j →" / "query i ↓"
  l.x0 = margin + axis_h + l.row_title_w + l.row_label_w;
  l.y0 = margin + 20 + axis_h + l.col_label_h;
  l.maps_w = cols * map + (cols - 1) * l.gap, l.maps_h = rows * (map + l.map_title_h) + (rows - 1) * l.gap;
  l.bar_x = l.x0 + l.maps_w + 14, l.bar_h = std::min(l.maps_h, std::max(map, 240.0));
  l.width = std::max(l.bar_x + l.bar_w + 4 + l.tick_w + 8 + 14 + margin, 420.0);
  l.caption = font.wrap(f.caption, l.width - 2 * margin, 8.5);
  l.cap_y = l.y0 + l.maps_h + 18;
  l.height = l.cap_y + l.caption.size() * 11.5 + margin;
  return l;
}

void draw_figure(const FigureSpec& f, const FigureLayout& l, Canvas& t) {
  const FigureFont& font = FigureFont::sans();
  const int nq = l.nq, nk = l.nk, cols = l.cols;
  const double map = l.map, fs = l.fs, gap = l.gap, map_title_h = l.map_title_h, margin = l.margin;
  const double x0 = l.x0, y0 = l.y0, maps_h = l.maps_h, bar_x = l.bar_x, bar_w = l.bar_w, bar_h = l.bar_h;
  const double width = l.width, height = l.height, col_label_h = l.col_label_h, row_label_w = l.row_label_w;
  const double row_title_w = l.row_title_w, tick_w = l.tick_w, cap_y = l.cap_y;
  const bool labels = l.labels;
  const std::vector<std::string>& ticks = l.ticks;
  const std::vector<double>& tick_v = l.tick_v;
  const std::vector<std::string>& caption = l.caption;
  t.color(1, 1, 1);
  t.fill_rect(0, 0, width, height);
  t.color(0.1, 0.1, 0.1);
  t.font(12, true);
  t.text(margin, margin + 10, f.title);
  t.font(9);
  t.color(0.3, 0.3, 0.3);
  t.text(x0, y0 - col_label_h - 5, "key j →");
  t.text_up(margin + 9, y0 + std::min(maps_h, map), "← query i");

  for (size_t k = 0; k < f.maps.size(); ++k) {
    const int r = static_cast<int>(k) / cols, c = static_cast<int>(k) % cols;
    const double x = x0 + c * (map + gap), y = y0 + r * (map + map_title_h + gap);
    t.cells(*f.maps[k].values, f.scale, x, y, map, map);
    t.color(0.45, 0.45, 0.5);
    t.stroke_rect(x, y, map, map, 0.5);
    if (f.maps[k].crossed) {
      t.color(0, 0, 0, 0.35);
      t.fill_rect(x, y, map, map);
      t.color(0.85, 0.15, 0.15);
      t.line(x, y, x + map, y + map, 1.5);
      t.line(x, y + map, x + map, y, 1.5);
    }
    if (!f.maps[k].title.empty()) {
      t.color(0.15, 0.15, 0.15);
      t.font(8);
      t.text(x + (map - font.width(f.maps[k].title, 8)) / 2, y + map + 9, f.maps[k].title);
    }
    // Token labels: keys above the first row of maps, queries left of the first column.
    if (labels) {
      t.color(0.1, 0.1, 0.1);
      t.font(fs);
      const double ch = map / nq, cw = map / nk;
      if (c == 0)
        for (int i = 0; i < nq; ++i) {
          const std::string l = label_of(f.row_labels, i);
          t.text(x - 3 - font.width(l, fs), y + (i + 0.5) * ch + fs * 0.35, l);
        }
      if (r == 0)
        for (int j = 0; j < nk; ++j) t.text_up(x + (j + 0.5) * cw + fs * 0.35, y - 3, label_of(f.col_labels, j));
    }
    if (c == 0 && r < static_cast<int>(f.row_titles.size())) {
      t.color(0.15, 0.15, 0.15);
      t.font(9);
      t.text(x - row_label_w - row_title_w, y + map / 2 + 3, f.row_titles[static_cast<size_t>(r)]);
    }
  }

  // Colour bar: top = hi.
  {
    t.color_bar(f.scale, bar_x, y0, bar_w, bar_h);
    t.color(0.3, 0.3, 0.3);
    t.stroke_rect(bar_x, y0, bar_w, bar_h, 0.5);
    t.font(8);
    for (size_t k = 0; k < ticks.size(); ++k) {
      const double y = y0 + (f.scale.hi - tick_v[k]) / (f.scale.hi - f.scale.lo) * bar_h;
      t.line(bar_x + bar_w, y, bar_x + bar_w + 3, y, 0.5);
      t.text(bar_x + bar_w + 5, y + 3, ticks[k]);
    }
    t.font(9);
    t.color(0.15, 0.15, 0.15);
    const double uw = font.width(f.units, 9);
    t.text_up(bar_x + bar_w + 5 + tick_w + 14, y0 + bar_h / 2 + uw / 2, f.units);
  }

  // Caption.
  t.color(0.2, 0.2, 0.2);
  t.font(8.5);
  for (size_t l = 0; l < caption.size(); ++l) t.text(margin, cap_y + l * 11.5, caption[l]);
}

std::string figure_written(const std::string& path, const FigureLayout& l) {
  auto pt = [](double v) { return std::to_string(static_cast<int>(std::lround(v))); };
  return "wrote " + path + " (" + pt(l.width) + " × " + pt(l.height) + " pt, map at " + pt(l.x0) + "," + pt(l.y0) + " size " +
         pt(l.map) + " pt)";
}

namespace {

/// The SVG document of `body` drawn on a `width` × `height` pt page titled `title`.
std::string svg_document(double width, double height, const std::string& title, const std::string& body) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         SvgCanvas::num(width) + "pt\" height=\"" + SvgCanvas::num(height) + "pt\" viewBox=\"0 0 " + SvgCanvas::num(width) +
         " " + SvgCanvas::num(height) + "\">\n<title>" + xml_escape(title) + "</title>\n" + body + "</svg>\n";
}

/// Writes `text` to `path`: "" or "figure: cannot write PATH: reason" (OutputFile: the close checked).
std::string write_text_file(const std::string& path, const std::string& text) {
  try {
    deberta::write_whole_file(path, text);
  } catch (const deberta::Error& e) {
    return std::string("figure: ") + e.what();
  }
  return "";
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (true) {
    const size_t b = s.find('\n', a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) return out;
    a = b + 1;
  }
}

void rgb_of(uint32_t abgr, double* r, double* g, double* b) {
  *r = (abgr & 0xff) / 255.0, *g = ((abgr >> 8) & 0xff) / 255.0, *b = ((abgr >> 16) & 0xff) / 255.0;
}

}  // namespace

void draw_diagram(const Diagram& d, Canvas& t) {
  const FigureFont& font = FigureFont::sans();
  t.color(1, 1, 1);
  t.fill_rect(0, 0, d.width, d.height);
  t.color(0.1, 0.1, 0.1);
  t.font(12, true);
  t.text(20, 24, d.title);
  for (const DiagramBox& b : d.boxes) {
    double r, g, bl;
    rgb_of(b.fill, &r, &g, &bl);
    t.color(r, g, bl, b.off ? 0.4 : 1.0);
    t.fill_rect(b.x, b.y, b.w, b.h);
    t.color(0.35, 0.35, 0.4);
    t.stroke_rect(b.x, b.y, b.w, b.h, b.container ? 1.0 : 0.6);
    t.color(b.off ? 0.55 : 0.1, b.off ? 0.55 : 0.1, b.off ? 0.55 : 0.12);
    t.font(9, true);
    t.text(b.x + 6, b.y + 14, b.title);
    if (b.container) continue;
    t.font(8);
    const auto lines = split_lines(b.detail);
    for (size_t l = 0; l < lines.size(); ++l) t.text(b.x + 6, b.y + 27 + 11 * static_cast<double>(l), lines[l]);
  }
  t.color(0.3, 0.3, 0.35);
  for (const DiagramArrow& a : d.arrows) {
    t.line(a.x0, a.y0, a.x1, a.y1, 1.2);
    const double dx = a.x1 - a.x0, dy = a.y1 - a.y0, len = std::max(std::hypot(dx, dy), 1e-9);
    const double ux = dx / len, uy = dy / len;
    t.line(a.x1, a.y1, a.x1 - 6 * ux + 3.5 * uy, a.y1 - 6 * uy - 3.5 * ux, 1.2);
    t.line(a.x1, a.y1, a.x1 - 6 * ux - 3.5 * uy, a.y1 - 6 * uy + 3.5 * ux, 1.2);
  }
  if (!d.left.empty()) {
    double r, g, bl, rn, gn, bn;
    rgb_of(d.link_color, &r, &g, &bl);
    rgb_of(d.link_color_negative, &rn, &gn, &bn);
    for (const DiagramLink& l : d.links) {
      // A signed diagram: the sign picks the colour, |weight| the opacity.
      if (d.signed_links && l.weight < 0)
        t.color(rn, gn, bn, std::clamp(-l.weight, 0.0, 1.0));
      else
        t.color(r, g, bl, std::clamp(l.weight, 0.0, 1.0));
      t.line(d.left_x, d.top + (l.from + 0.5) * d.row_h, d.right_x, d.top + (l.to + 0.5) * d.row_h, 1.5);
    }
    const double fs = std::clamp(d.row_h * 0.75, 2.0, 10.0);
    t.font(fs);
    t.color(0.1, 0.1, 0.1);
    for (size_t i = 0; i < d.left.size(); ++i) {
      const double y = d.top + (static_cast<double>(i) + 0.5) * d.row_h + fs * 0.35;
      const std::string lab = std::to_string(i) + " " + d.left[i];
      t.text(d.left_x - 6 - font.width(lab, fs), y, lab);
      t.text(d.right_x + 6, y, std::to_string(i) + " " + d.right[i]);
    }
    t.font(9);
    t.color(0.3, 0.3, 0.3);
    t.text(d.left_x - 60, d.top - 10, "query i");
    t.text(d.right_x + 6, d.top - 10, "key j");
  }
  t.color(0.2, 0.2, 0.2);
  t.font(8.5);
  t.text(20, d.height - 12, d.caption);
}

std::string write_figure(const FigureSpec& f, const std::string& path) {
  if (!figure_format_ok(path)) return "figure: " + path + ": unknown format (use .pdf or .svg)";
  if (const std::string p = figure_problem(f, path); !p.empty()) return p;
  const FigureLayout l = layout_figure(f);
  if (ends_with_nocase(path, ".pdf")) return write_figure_pdf(f, l, path);
  SvgCanvas svg;
  draw_figure(f, l, svg);
  if (const std::string e = write_text_file(path, svg_document(l.width, l.height, f.title, svg.out.str())); !e.empty()) return e;
  return figure_written(path, l);
}

std::string write_diagram(const Diagram& d, const std::string& path) {
  if (!figure_format_ok(path)) return "figure: " + path + ": unknown format (use .pdf or .svg)";
  if (d.width <= 0 || d.height <= 0) return "figure: " + path + ": nothing to draw";
  if (!FigureFont::sans().error().empty()) return "figure: " + path + ": " + FigureFont::sans().error();
  if (ends_with_nocase(path, ".pdf")) {
    if (const std::string e = write_diagram_pdf(d, path); !e.empty()) return e;
  } else {
    SvgCanvas svg;
    draw_diagram(d, svg);
    if (const std::string e = write_text_file(path, svg_document(d.width, d.height, d.title, svg.out.str())); !e.empty()) return e;
  }
  return "wrote " + path + " (" + std::to_string(static_cast<int>(d.width)) + " × " + std::to_string(static_cast<int>(d.height)) +
         " pt, " + std::to_string(d.boxes.size()) + " boxes, " + std::to_string(d.links.size()) + " links)";
}

}  // namespace viewer
