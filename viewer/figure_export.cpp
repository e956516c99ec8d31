// figure_export.cpp — PDF / SVG figures through cairo (Debian's libcairo2-dev), see figure_export.h.
//
// Layout (points): title · key axis title · rotated key labels · maps (row labels at the left,
// a title under each map) · colour bar with ticks and its units · wrapped caption. The layout is
// measured once with cairo and drawn through a Canvas: the PDF through cairo (each map one image
// of N_k × N_q pixels painted with CAIRO_FILTER_NEAREST, so cells stay sharp squares at any zoom;
// text is real text), the SVG written directly — one <rect> per run of equal cells and every
// label a <text> element — because cairo's SVG surface turns text into glyph outlines and maps
// into embedded images, which a slide can neither search nor scale crisply (issue 31).
#include "figure_export.h"

#include "diagrams.h"

#include "deberta/explain.h"
#include "deberta/tokenizer.h"

#include <cairo-pdf.h>
#include <cairo.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace viewer {

namespace {

const char* kFont = "DejaVu Sans";

struct Text {
  cairo_t* cr;
  void font(double size, bool bold = false) {
    cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
  }
  // Labels are made valid UTF-8 first: cairo refuses an invalid string by putting the whole
  // context into an error state, after which nothing more is drawn (issue 28, class 14).
  double width(const std::string& s) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, deberta::valid_utf8(s).c_str(), &e);
    return e.x_advance;
  }
  void at(double x, double y, const std::string& s) {
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, deberta::valid_utf8(s).c_str());
  }
  /// Text rotated 90° counter-clockwise, its baseline starting at (x, y) and running upwards.
  void up(double x, double y, const std::string& s) {
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, -M_PI / 2);
    at(0, 0, s);
    cairo_restore(cr);
  }
  /// Greedy word wrap of `s` into lines no wider than `w`.
  std::vector<std::string> wrap(const std::string& s, double w) {
    std::vector<std::string> lines;
    std::string line, word;
    auto flush_word = [&] {
      if (word.empty()) return;
      const std::string cand = line.empty() ? word : line + " " + word;
      if (!line.empty() && width(cand) > w) {
        lines.push_back(line);
        line = word;
      } else {
        line = cand;
      }
      word.clear();
    };
    for (char c : s) {
      if (c == ' ') flush_word();
      else word += c;
    }
    flush_word();
    if (!line.empty()) lines.push_back(line);
    return lines;
  }
};

/// `m` coloured under `scale` as an RGB24 image, one pixel per cell.
cairo_surface_t* map_image(const deberta::Matrix& m, const ColorScale& scale) {
  const int w = static_cast<int>(m.cols()), h = static_cast<int>(m.rows());
  cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  cairo_surface_flush(img);
  unsigned char* data = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      const uint32_t col = color_of(scale, m(r, c));
      const uint32_t rgb = ((col & 0xff) << 16) | (col & 0xff00) | ((col >> 16) & 0xff);
      *reinterpret_cast<uint32_t*>(data + static_cast<size_t>(r) * stride + static_cast<size_t>(c) * 4) = rgb;
    }
  cairo_surface_mark_dirty(img);
  return img;
}

void paint_image(cairo_t* cr, cairo_surface_t* img, double x, double y, double w, double h) {
  const int iw = cairo_image_surface_get_width(img), ih = cairo_image_surface_get_height(img);
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_scale(cr, w / iw, h / ih);
  cairo_set_source_surface(cr, img, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_rectangle(cr, 0, 0, iw, ih);
  cairo_fill(cr);
  cairo_restore(cr);
}

/// What the figure is drawn on: the PDF through cairo, the SVG as text (see the file comment).
/// Coordinates in points, y down; text at its baseline start.
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
deberta::Matrix bar_ramp(const ColorScale& scale, int n) {
  deberta::Matrix ramp(n, 1);
  for (int r = 0; r < n; ++r) ramp(r, 0) = scale.hi + (scale.lo - scale.hi) * r / (n - 1.0);
  return ramp;
}

struct CairoCanvas : Canvas {
  cairo_t* cr;
  Text t;
  explicit CairoCanvas(cairo_t* c) : cr(c), t{c} {}
  void color(double r, double g, double b, double a) override { cairo_set_source_rgba(cr, r, g, b, a); }
  void font(double size, bool bold) override { t.font(size, bold); }
  void text(double x, double y, const std::string& s) override { t.at(x, y, s); }
  void text_up(double x, double y, const std::string& s) override { t.up(x, y, s); }
  void fill_rect(double x, double y, double w, double h) override {
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
  }
  void stroke_rect(double x, double y, double w, double h, double lw) override {
    cairo_set_line_width(cr, lw);
    cairo_rectangle(cr, x, y, w, h);
    cairo_stroke(cr);
  }
  void line(double x0, double y0, double x1, double y1, double lw) override {
    cairo_set_line_width(cr, lw);
    cairo_move_to(cr, x0, y0), cairo_line_to(cr, x1, y1);
    cairo_stroke(cr);
  }
  void cells(const deberta::Matrix& m, const ColorScale& scale, double x, double y, double w, double h) override {
    cairo_surface_t* img = map_image(m, scale);
    paint_image(cr, img, x, y, w, h);
    cairo_surface_destroy(img);
  }
  // One image of 256 rows painted as a whole: no edges between rows.
  void color_bar(const ColorScale& scale, double x, double y, double w, double h) override { cells(bar_ramp(scale, 256), scale, x, y, w, h); }
};

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

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  std::string tail = s.substr(s.size() - suffix.size());
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return tail == suffix;
}

}  // namespace

bool figure_format_ok(const std::string& path) { return ends_with(path, ".pdf") || ends_with(path, ".svg"); }

std::string write_figure(const FigureSpec& f, const std::string& path) {
  if (!figure_format_ok(path)) return "figure: " + path + ": unknown format (use .pdf or .svg)";
  if (f.maps.empty()) return "figure: " + path + ": nothing to draw";
  for (const auto& m : f.maps)
    if (!m.values || m.values->size() == 0) return "figure: " + path + ": a map is empty or not computed";
  const int nq = static_cast<int>(f.maps[0].values->rows()), nk = static_cast<int>(f.maps[0].values->cols());
  const int cols = std::max(1, std::min(f.columns, static_cast<int>(f.maps.size())));
  const int rows = (static_cast<int>(f.maps.size()) + cols - 1) / cols;
  const bool grid = f.maps.size() > 1;

  // Sizes: one map up to 520 pt wide, or 2.2 pt a token for long inputs (so that the 2-pt labels
  // still fit: a 512-token map is ~1130 pt, to be zoomed in a PDF viewer); a grid's thumbnails share ~760 pt.
  const double map = grid ? std::clamp(760.0 / cols, 90.0, 200.0)
                          : std::clamp(14.0 * std::max(nq, nk), 300.0, std::max(520.0, 2.2 * std::max(nq, nk)));
  const double cell = map / std::max(nq, nk);
  const bool labels = cell >= 2.0;
  const double fs = std::clamp(cell * 0.8, 2.0, 8.0);  // token label font
  const double gap = grid ? 10 : 0, map_title_h = grid ? 12 : 0;
  const double margin = 24;

  // Measure with a scratch context.
  cairo_surface_t* scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t* mcr = cairo_create(scratch);
  Text m{mcr};
  m.font(fs);
  double row_label_w = 0, col_label_h = 0;
  if (labels) {
    for (int i = 0; i < nq; ++i) row_label_w = std::max(row_label_w, m.width(label_of(f.row_labels, i)));
    for (int j = 0; j < nk; ++j) col_label_h = std::max(col_label_h, m.width(label_of(f.col_labels, j)));
    row_label_w += 3, col_label_h += 3;
  }
  m.font(9);
  double row_title_w = 0;
  for (const auto& t : f.row_titles) row_title_w = std::max(row_title_w, m.width(t) + 6);
  std::vector<std::string> ticks;
  std::vector<double> tick_v;
  const bool div = f.scale.map == ColorMap::Diverging;
  for (int t = 0; t <= 4; ++t) {
    const double v = f.scale.lo + (f.scale.hi - f.scale.lo) * t / 4.0;
    tick_v.push_back(std::fabs(v) < 1e-12 * (f.scale.hi - f.scale.lo) ? 0.0 : v);
    ticks.push_back(fmt(tick_v.back(), 3, div));
  }
  double tick_w = 0;
  for (const auto& t : ticks) tick_w = std::max(tick_w, m.width(t));
  const double axis_h = 14;  // "key j →" / "query i ↓"
  const double x0 = margin + axis_h + row_title_w + row_label_w;
  const double y0 = margin + 20 + axis_h + col_label_h;
  const double maps_w = cols * map + (cols - 1) * gap, maps_h = rows * (map + map_title_h) + (rows - 1) * gap;
  const double bar_x = x0 + maps_w + 14, bar_w = 12, bar_h = std::min(maps_h, std::max(map, 240.0));
  const double width = std::max(bar_x + bar_w + 4 + tick_w + 8 + 14 + margin, 420.0);
  m.font(8.5);
  const auto caption = m.wrap(f.caption, width - 2 * margin);
  const double cap_y = y0 + maps_h + 18;
  const double height = cap_y + caption.size() * 11.5 + margin;

  // Draw, on either canvas.
  auto draw = [&](Canvas& t) {
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
        m.font(8);
        t.font(8);
        t.text(x + (map - m.width(f.maps[k].title)) / 2, y + map + 9, f.maps[k].title);
      }
      // Token labels: keys above the first row of maps, queries left of the first column.
      if (labels) {
        t.color(0.1, 0.1, 0.1);
        t.font(fs);
        m.font(fs);
        const double ch = map / nq, cw = map / nk;
        if (c == 0)
          for (int i = 0; i < nq; ++i) {
            const std::string l = label_of(f.row_labels, i);
            t.text(x - 3 - m.width(l), y + (i + 0.5) * ch + fs * 0.35, l);
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
      m.font(9);
      t.color(0.15, 0.15, 0.15);
      const double uw = m.width(f.units);
      t.text_up(bar_x + bar_w + 5 + tick_w + 14, y0 + bar_h / 2 + uw / 2, f.units);
    }

    // Caption.
    t.color(0.2, 0.2, 0.2);
    t.font(8.5);
    for (size_t l = 0; l < caption.size(); ++l) t.text(margin, cap_y + l * 11.5, caption[l]);
  };

  if (ends_with(path, ".svg")) {
    SvgCanvas svg;
    draw(svg);
    cairo_destroy(mcr);
    cairo_surface_destroy(scratch);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file) return "figure: cannot write " + path + " (" + std::strerror(errno) + ")";
    file << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
         << SvgCanvas::num(width) << "pt\" height=\"" << SvgCanvas::num(height) << "pt\" viewBox=\"0 0 " << SvgCanvas::num(width)
         << " " << SvgCanvas::num(height) << "\">\n<title>" << xml_escape(f.title) << "</title>\n"
         << svg.out.str() << "</svg>\n";
    file.close();
    if (!file) return "figure: cannot write " + path + " (" + std::strerror(errno) + ")";
  } else {
    cairo_surface_t* surf = cairo_pdf_surface_create(path.c_str(), width, height);
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
      const std::string err = cairo_status_to_string(cairo_surface_status(surf));
      cairo_surface_destroy(surf);
      cairo_destroy(mcr);
      cairo_surface_destroy(scratch);
      return "figure: cannot write " + path + " (" + err + ")";
    }
    cairo_t* cr = cairo_create(surf);
    CairoCanvas canvas(cr);
    draw(canvas);
    const cairo_status_t drawn = cairo_status(cr);  // an error while drawing stays on the context
    cairo_destroy(cr);
    cairo_surface_finish(surf);
    const cairo_status_t st = drawn != CAIRO_STATUS_SUCCESS ? drawn : cairo_surface_status(surf);
    cairo_surface_destroy(surf);
    const cairo_status_t measured = cairo_status(mcr);
    cairo_destroy(mcr);
    cairo_surface_destroy(scratch);
    if (st != CAIRO_STATUS_SUCCESS) return "figure: cannot write " + path + " (" + cairo_status_to_string(st) + ")";
    if (measured != CAIRO_STATUS_SUCCESS) return "figure: " + path + ": measuring the text failed (" + cairo_status_to_string(measured) + ")";
  }
  auto pt = [](double v) { return std::to_string(static_cast<int>(std::lround(v))); };
  return "wrote " + path + " (" + pt(width) + " × " + pt(height) + " pt, map at " + pt(x0) + "," + pt(y0) + " size " +
         pt(map) + " pt)";
}

namespace {

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

/// Draws a Diagram (diagrams.h) on a canvas; `m` measures text (for right-aligned labels).
void draw_diagram(const Diagram& d, Canvas& t, Text& m) {
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
    m.font(fs);
    t.color(0.1, 0.1, 0.1);
    for (size_t i = 0; i < d.left.size(); ++i) {
      const double y = d.top + (static_cast<double>(i) + 0.5) * d.row_h + fs * 0.35;
      const std::string lab = std::to_string(i) + " " + d.left[i];
      t.text(d.left_x - 6 - m.width(lab), y, lab);
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

}  // namespace

std::string write_diagram(const Diagram& d, const std::string& path) {
  if (!figure_format_ok(path)) return "figure: " + path + ": unknown format (use .pdf or .svg)";
  if (d.width <= 0 || d.height <= 0) return "figure: " + path + ": nothing to draw";
  cairo_surface_t* scratch = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t* mcr = cairo_create(scratch);
  Text m{mcr};
  std::string result;
  if (ends_with(path, ".svg")) {
    SvgCanvas svg;
    draw_diagram(d, svg, m);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file)
      file << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
           << SvgCanvas::num(d.width) << "pt\" height=\"" << SvgCanvas::num(d.height) << "pt\" viewBox=\"0 0 "
           << SvgCanvas::num(d.width) << " " << SvgCanvas::num(d.height) << "\">\n<title>" << xml_escape(d.title)
           << "</title>\n" << svg.out.str() << "</svg>\n";
    file.close();
    if (!file) result = "figure: cannot write " + path + " (" + std::strerror(errno) + ")";
  } else {
    cairo_surface_t* surf = cairo_pdf_surface_create(path.c_str(), d.width, d.height);
    cairo_t* cr = cairo_create(surf);
    CairoCanvas canvas(cr);
    if (cairo_surface_status(surf) == CAIRO_STATUS_SUCCESS) draw_diagram(d, canvas, m);
    const cairo_status_t drawn = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_finish(surf);
    const cairo_status_t st = drawn != CAIRO_STATUS_SUCCESS ? drawn : cairo_surface_status(surf);
    cairo_surface_destroy(surf);
    if (st != CAIRO_STATUS_SUCCESS) result = "figure: cannot write " + path + " (" + cairo_status_to_string(st) + ")";
  }
  cairo_destroy(mcr);
  cairo_surface_destroy(scratch);
  if (!result.empty()) return result;
  return "wrote " + path + " (" + std::to_string(static_cast<int>(d.width)) + " × " + std::to_string(static_cast<int>(d.height)) +
         " pt, " + std::to_string(d.boxes.size()) + " boxes, " + std::to_string(d.links.size()) + " links)";
}

namespace {

/// The colour bar's units, with the model's own scale (s = 1/√(f·d); the paper's f is 3).
std::string units_of(Quantity q, double scale, double scale_factor) {
  switch (q) {
    case Quantity::Probs: return "attention weight " + weights_label(scale_factor) + "_ij (each row sums to 1)";
    case Quantity::Logits: return score_label(scale_factor) + "_ij (the logit before the softmax)";
    default:
      return std::string(quantity_name(q)) + " term (logit units, already × s = 1/" + deberta::scale_root(scale_factor) + " = " +
             fmt(scale, 4, false) + ")";
  }
}

std::string caption_of(const ViewerState& s, const std::string& where, Quantity q) {
  const Result& r = *s.result;
  std::string text;
  for (const auto& n : r.input.names) text += (text.empty() ? "" : " ") + n;
  if (text.size() > 600) {  // a long input: its start (cut at a character boundary)
    size_t cut = 600;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    text = text.substr(0, cut) + " …";
  }
  std::string dir = r.model->model.directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string name = dir.substr(dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/') + 1);
  const std::string ab = r.ablation.is_default() ? "none (the model as trained)" : r.ablation.describe(&r.model->model.config);
  return "Model: " + name + " (" + r.model->model.config.summary() + "). Text (" + std::to_string(r.input.names.size()) +
         " tokens): " + text + ". " + where + ", " + quantity_label(q, r.trace.context.attention.scale_factor) + ". Ablation: " +
         ab + ". Rows: query i; columns: key j. Layers and heads are counted from 0, as the viewer counts them. Made with "
         "DeBERTa Explorer.";
}

ColorScale scale_for(Quantity q, const std::vector<const deberta::Matrix*>& maps) {
  return q == Quantity::Probs ? ColorScale::sequential(0, max_value(maps)) : ColorScale::diverging(max_abs(maps));
}

}  // namespace

std::string export_figure_map(const ViewerState& s, Quantity q, const std::string& path) {
  if (!s.result) return "figure: nothing computed yet";
  HeldMap held;
  try {
    held = map_now(*s.result, s.detail, s.layer, s.head, q);
  } catch (const std::exception& e) {
    return std::string("figure: ") + e.what();
  }
  const deberta::Matrix* m = held.m;
  if (!m) return "figure: " + std::string(quantity_name(q)) + " is not computed in this run (term switched off)";
  FigureSpec f;
  const bool masked = s.result->trace.context.head_mask.count({s.layer, s.head}) > 0;
  f.maps.push_back({m, "", masked && q == Quantity::Probs});
  f.row_labels = f.col_labels = s.result->input.names;
  f.scale = scale_for(q, {m});
  const int L = static_cast<int>(s.result->trace.layers.size());
  const int H = static_cast<int>(s.result->model->model.config.num_attention_heads);
  const std::string where = layer_head_words(s.layer, L, s.head, H);
  f.title = quantity_words(q) + ", " + where;
  const deberta::ResolvedAttention& att = s.result->trace.context.attention;
  f.units = units_of(q, att.scale, att.scale_factor);
  f.caption = caption_of(s, "Shown: " + where, q);
  return write_figure(f, path);
}

std::string export_figure_grid(const ViewerState& s, Quantity q, const std::string& path) {
  if (!s.result) return "figure: nothing computed yet";
  const Result& r = *s.result;
  const int L = static_cast<int>(r.trace.layers.size()), H = static_cast<int>(r.model->model.config.num_attention_heads);
  // Probabilities from the result's trace; another term from every layer in full (materialized now).
  std::shared_ptr<const LayerDetail> detail;
  if (q != Quantity::Probs && computed(r, q)) {
    std::vector<int64_t> all;
    for (int l = 0; l < L; ++l) all.push_back(l);
    try {
      detail = detail_now(r, s.detail, all);
    } catch (const std::exception& e) {
      return std::string("figure: ") + e.what();
    }
  }
  const deberta::ForwardTrace& source = detail ? detail->trace : r.trace;
  FigureSpec f;
  std::vector<const deberta::Matrix*> all;
  for (int l = 0; l < L; ++l) {
    f.row_titles.push_back("layer " + std::to_string(l));  // counted from 0, as the viewer counts
    for (int h = 0; h < H; ++h) {
      const deberta::Matrix* m = head_map(source, l, h, q);
      if (!m || m->size() == 0)
        return "figure: " + std::string(quantity_name(q)) + " is not computed in this run (term switched off)";
      all.push_back(m);
      f.maps.push_back({m, "layer " + std::to_string(l) + " · head " + std::to_string(h),
                        q == Quantity::Probs && r.trace.context.head_mask.count({l, h}) > 0});
    }
  }
  f.columns = H;
  f.row_labels = f.col_labels = r.input.names;
  f.scale = scale_for(q, all);
  f.title = quantity_words(q) + ", every layer and head: layers 0–" + std::to_string(L - 1) + " × heads 0–" + std::to_string(H - 1);
  f.units = units_of(q, r.trace.context.attention.scale, r.trace.context.attention.scale_factor);
  f.caption = caption_of(s, "Shown: all " + std::to_string(L) + " layers × " + std::to_string(H) + " heads on one colour scale", q);
  return write_figure(f, path);
}

}  // namespace viewer
