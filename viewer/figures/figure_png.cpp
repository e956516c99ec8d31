// figure_png.cpp — render_figure and write_figure_png (figure_export.h): figure_svg.cpp's layout
// drawn into pixels by our own fills and stb_truetype's glyphs, so the desktop and the page make
// the same PNG from the same FigureSpec (no cairo, no OpenGL).
//
// The canvas keeps linear 0–1 RGB per pixel and composites with straight alpha: rectangles and
// axis-parallel lines cover the pixels they overlap in proportion (so a 0.5 pt frame is a light
// grey line, not a missing one), diagonal lines by their distance to each pixel's centre, glyphs by
// stb_truetype's coverage. Map cells and the colour bar are written opaque: each pixel takes the
// colour of the cell (or bar row) under its centre, so cells carry exactly their value's colour.
#include "figures/figure_draw.h"
#include "figures/figure_font.h"
#include "export/file_writers.h"

#include <algorithm>
#include <cmath>

namespace viewer {

namespace {

struct RasterCanvas : Canvas {
  int w, h;
  double s;                 // pixels a point
  std::vector<float> rgb;   // 3 per pixel, rows top to bottom
  double r_ = 0, g_ = 0, b_ = 0, a_ = 1, size_ = 10;
  bool bold_ = false;

  RasterCanvas(int width, int height, double px_per_pt) : w(width), h(height), s(px_per_pt), rgb(static_cast<size_t>(width) * height * 3, 1.0f) {}

  void blend(int x, int y, double r, double g, double b, double a) {
    if (x < 0 || y < 0 || x >= w || y >= h || a <= 0) return;
    float* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
    a = std::min(a, 1.0);
    p[0] = static_cast<float>(p[0] * (1 - a) + r * a);
    p[1] = static_cast<float>(p[1] * (1 - a) + g * a);
    p[2] = static_cast<float>(p[2] * (1 - a) + b * a);
  }
  void put(int x, int y, uint32_t abgr) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    float* p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
    p[0] = (abgr & 0xff) / 255.0f, p[1] = ((abgr >> 8) & 0xff) / 255.0f, p[2] = ((abgr >> 16) & 0xff) / 255.0f;
  }

  void color(double r, double g, double b, double a) override { r_ = r, g_ = g, b_ = b, a_ = a; }
  void font(double size, bool bold) override { size_ = size, bold_ = bold; }

  /// Pixel rectangle [x0, x1) × [y0, y1) (pixel units, fractional), each pixel covered in proportion.
  void cover(double x0, double y0, double x1, double y1) {
    if (x1 <= x0 || y1 <= y0) return;
    const int ix0 = std::max(0, static_cast<int>(std::floor(x0))), ix1 = std::min(w, static_cast<int>(std::ceil(x1)));
    const int iy0 = std::max(0, static_cast<int>(std::floor(y0))), iy1 = std::min(h, static_cast<int>(std::ceil(y1)));
    for (int y = iy0; y < iy1; ++y) {
      const double cy = std::min(y + 1.0, y1) - std::max(static_cast<double>(y), y0);
      for (int x = ix0; x < ix1; ++x) {
        const double cx = std::min(x + 1.0, x1) - std::max(static_cast<double>(x), x0);
        blend(x, y, r_, g_, b_, a_ * cx * cy);
      }
    }
  }
  void fill_rect(double x, double y, double ww, double hh) override { cover(x * s, y * s, (x + ww) * s, (y + hh) * s); }
  void stroke_rect(double x, double y, double ww, double hh, double lw) override {
    const double d = lw / 2;
    fill_rect(x - d, y - d, ww + lw, lw);       // top
    fill_rect(x - d, y + hh - d, ww + lw, lw);  // bottom
    fill_rect(x - d, y + d, lw, hh - lw);       // left
    fill_rect(x + ww - d, y + d, lw, hh - lw);  // right
  }
  void line(double x0, double y0, double x1, double y1, double lw) override {
    if (x0 == x1 || y0 == y1) {
      fill_rect(std::min(x0, x1) - (y0 == y1 ? 0 : lw / 2), std::min(y0, y1) - (y0 == y1 ? lw / 2 : 0),
                std::fabs(x1 - x0) + (y0 == y1 ? 0 : lw), std::fabs(y1 - y0) + (y0 == y1 ? lw : 0));
      return;
    }
    // A diagonal: each pixel covered by how far its centre lies inside the stroke (1 px of ramp).
    const double ax = x0 * s, ay = y0 * s, bx = x1 * s, by = y1 * s, half = lw * s / 2;
    const double dx = bx - ax, dy = by - ay, len2 = dx * dx + dy * dy;
    const int px0 = std::max(0, static_cast<int>(std::floor(std::min(ax, bx) - half - 1)));
    const int px1 = std::min(w, static_cast<int>(std::ceil(std::max(ax, bx) + half + 1)));
    const int py0 = std::max(0, static_cast<int>(std::floor(std::min(ay, by) - half - 1)));
    const int py1 = std::min(h, static_cast<int>(std::ceil(std::max(ay, by) + half + 1)));
    for (int y = py0; y < py1; ++y)
      for (int x = px0; x < px1; ++x) {
        const double cx = x + 0.5, cy = y + 0.5;
        const double t = std::clamp(((cx - ax) * dx + (cy - ay) * dy) / len2, 0.0, 1.0);
        const double ex = cx - (ax + t * dx), ey = cy - (ay + t * dy);
        const double cov = std::clamp(half + 0.5 - std::sqrt(ex * ex + ey * ey), 0.0, 1.0);
        blend(x, y, r_, g_, b_, a_ * cov);
      }
  }
  /// The pixels whose centres lie in [x, x + ww) × [y, y + hh) (points): first and one-past-last.
  void span(double x, double ww, int limit, int* first, int* last) const {
    *first = std::max(0, static_cast<int>(std::ceil(x * s - 0.5)));
    *last = std::min(limit, static_cast<int>(std::ceil((x + ww) * s - 0.5)));
  }
  void cells(const deberta::Matrix& m, const ColorScale& scale, double x, double y, double ww, double hh) override {
    int x0, x1, y0, y1;
    span(x, ww, w, &x0, &x1);
    span(y, hh, h, &y0, &y1);
    const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
    std::vector<int> col_of(static_cast<size_t>(std::max(0, x1 - x0)));
    for (int px = x0; px < x1; ++px)
      col_of[static_cast<size_t>(px - x0)] = std::clamp(static_cast<int>(((px + 0.5) / s - x) / ww * cols), 0, cols - 1);
    std::vector<uint32_t> colour(static_cast<size_t>(cols));  // one row's colours, computed once
    int row = -1;
    for (int py = y0; py < y1; ++py) {
      const int r = std::clamp(static_cast<int>(((py + 0.5) / s - y) / hh * rows), 0, rows - 1);
      if (r != row)
        for (int c = 0; c < cols; ++c) colour[static_cast<size_t>(c)] = color_of(scale, m(r, c));
      row = r;
      for (int px = x0; px < x1; ++px) put(px, py, colour[static_cast<size_t>(col_of[static_cast<size_t>(px - x0)])]);
    }
  }
  void color_bar(const ColorScale& scale, double x, double y, double ww, double hh) override {
    int x0, x1, y0, y1;
    span(x, ww, w, &x0, &x1);
    span(y, hh, h, &y0, &y1);
    // The bar's frame (drawn next, 0.5 pt on its edge) covers its outermost pixel rows: hi and lo
    // are the first and last rows inside the frame, the rows under it repeat them.
    const int n = y1 - y0;
    const deberta::Matrix ramp = bar_ramp(scale, std::max(2, n - 2));  // row 0: hi, last row: lo
    for (int py = y0; py < y1; ++py)
      for (int px = x0; px < x1; ++px) put(px, py, color_of(scale, ramp(std::clamp(py - y0 - 1, 0, static_cast<int>(ramp.rows()) - 1), 0)));
  }

  /// The glyphs of `str` along the baseline from (x, y) pt: `up` runs them upwards (text_up).
  void glyphs(double x, double y, const std::string& str, bool up) {
    const auto gs = FigureFont::sans().glyphs(str, size_, s);
    const int passes = bold_ ? 2 : 1;  // bold: the regular face drawn twice, one pixel apart
    for (int pass = 0; pass < passes; ++pass) {
      double pen = 0;  // pixels along the baseline
      const long bx = std::lround(x * s) + (up ? 0 : pass), by = std::lround(y * s) - (up ? pass : 0);
      for (const auto& g : gs) {
        const long p = std::lround(pen);
        for (int gy = 0; gy < g.h; ++gy)
          for (int gx = 0; gx < g.w; ++gx) {
            const uint8_t c = g.coverage[static_cast<size_t>(gy) * g.w + gx];
            if (!c) continue;
            const long u = p + g.x0 + gx, v = g.y0 + gy;  // along the baseline, below it
            const long px = up ? bx + v : bx + u, py = up ? by - u : by + v;
            blend(static_cast<int>(px), static_cast<int>(py), r_, g_, b_, a_ * c / 255.0);
          }
        pen += g.advance * s;
      }
    }
  }
  void text(double x, double y, const std::string& str) override { glyphs(x, y, str, false); }
  void text_up(double x, double y, const std::string& str) override { glyphs(x, y, str, true); }

  FigureImage image() const {
    FigureImage img;
    img.width = w, img.height = h;
    img.rgba.resize(static_cast<size_t>(w) * h * 4);
    for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i) {
      for (int c = 0; c < 3; ++c) img.rgba[i * 4 + c] = static_cast<uint8_t>(std::lround(std::clamp(rgb[i * 3 + c], 0.0f, 1.0f) * 255.0f));
      img.rgba[i * 4 + 3] = 255;
    }
    return img;
  }
};

}  // namespace

FigureImage render_figure(const FigureSpec& f, double px_per_pt) {
  const FigureLayout l = layout_figure(f);
  RasterCanvas canvas(static_cast<int>(std::ceil(l.width * px_per_pt)), static_cast<int>(std::ceil(l.height * px_per_pt)), px_per_pt);
  draw_figure(f, l, canvas);
  return canvas.image();
}

std::string write_figure_png(const FigureSpec& f, const std::string& path) {
  if (const std::string p = figure_problem(f, path); !p.empty()) return "PNG: " + p.substr(p.find(':') + 2);
  const double ppt = 2;
  const FigureLayout l = layout_figure(f);
  const FigureImage img = render_figure(f, ppt);
  if (const std::string e = write_png_rgba(path, img.width, img.height, img.rgba); !e.empty()) return "PNG: " + e;
  // Where the map and the bar are, in pixels: the first pixel whose centre lies inside, and how many.
  auto first = [&](double v) { return static_cast<int>(std::ceil(v * ppt - 0.5)); };
  auto n = [&](double v, double len) { return std::to_string(first(v + len) - first(v)); };
  auto at = [&](double x, double y) { return std::to_string(first(x)) + "," + std::to_string(first(y)); };
  return "wrote " + path + " (" + std::to_string(img.width) + "×" + std::to_string(img.height) + ", colour range " +
         fmt(f.scale.lo, 3) + " … " + fmt(f.scale.hi, 3) + ", map at " + at(l.x0, l.y0) + " size " + n(l.x0, l.map) +
         " px, colour bar at " + at(l.bar_x, l.y0) + " size " + n(l.bar_x, l.bar_w) + "×" + n(l.y0, l.bar_h) + " px)";
}

}  // namespace viewer
