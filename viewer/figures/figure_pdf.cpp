// figure_pdf.cpp — the PDF figures through cairo (Debian's libcairo2-dev): figure_svg.cpp's layout
// drawn on cairo's PDF surface. Each map is one image of N_k × N_q pixels painted with
// CAIRO_FILTER_NEAREST, so cells stay sharp squares at any zoom; text is real text. Desktop only:
// the page compiles web/web_figure_unavailable.cpp instead, which refuses PDF with a message.
#include "figures/diagrams.h"
#include "figures/figure_draw.h"

#include "deberta/output_file.h"
#include "deberta/tensor.h"  // Error
#include "deberta/tokenizer.h"

#include <cairo-pdf.h>
#include <cairo.h>

#include <cmath>
#include <memory>
#include <string>

namespace viewer {

namespace {

const char* kFont = "DejaVu Sans";

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

struct CairoCanvas : Canvas {
  cairo_t* cr;
  explicit CairoCanvas(cairo_t* c) : cr(c) {}
  void color(double r, double g, double b, double a) override { cairo_set_source_rgba(cr, r, g, b, a); }
  void font(double size, bool bold) override {
    cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
  }
  // Labels are made valid UTF-8 first: cairo refuses an invalid string by putting the whole
  // context into an error state, after which nothing more is drawn (issue 28, class 14).
  void text(double x, double y, const std::string& s) override {
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, deberta::valid_utf8(s).c_str());
  }
  void text_up(double x, double y, const std::string& s) override {
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, -M_PI / 2);
    text(0, 0, s);
    cairo_restore(cr);
  }
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

/// Draws `draw` on a new PDF surface of `width` × `height` pt written to `path`: "" or "figure:
/// cannot write PATH (reason)". cairo writes through OutputFile (cairo's own file stream buffers, and
/// a full disk at its close was reported as written): every write, the flush and the close checked.
template <class Draw>
std::string pdf(const std::string& path, double width, double height, Draw draw) {
  std::unique_ptr<deberta::OutputFile> file;
  try {
    file = std::make_unique<deberta::OutputFile>(path);
  } catch (const deberta::Error& e) {
    return std::string("figure: ") + e.what();
  }
  struct Sink {
    deberta::OutputFile* file;
    std::string error;  ///< the first failed write's message
  } sink{file.get(), ""};
  auto write = [](void* closure, const unsigned char* data, unsigned int length) {
    auto* s = static_cast<Sink*>(closure);
    if (!s->error.empty()) return CAIRO_STATUS_WRITE_ERROR;
    try {
      s->file->write(data, length);
    } catch (const deberta::Error& e) {
      s->error = e.what();
      return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
  };
  cairo_surface_t* surf = cairo_pdf_surface_create_for_stream(write, &sink, width, height);
  if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
    const std::string err = cairo_status_to_string(cairo_surface_status(surf));
    cairo_surface_destroy(surf);
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
  if (!sink.error.empty()) return "figure: " + sink.error;
  if (st != CAIRO_STATUS_SUCCESS) return "figure: cannot write " + path + " (" + cairo_status_to_string(st) + ")";
  try {
    file->close();
  } catch (const deberta::Error& e) {
    return std::string("figure: ") + e.what();
  }
  return "";
}

}  // namespace

std::string write_figure_pdf(const FigureSpec& f, const FigureLayout& l, const std::string& path) {
  const std::string e = pdf(path, l.width, l.height, [&](Canvas& c) { draw_figure(f, l, c); });
  return e.empty() ? figure_written(path, l) : e;
}

std::string write_diagram_pdf(const Diagram& d, const std::string& path) {
  return pdf(path, d.width, d.height, [&](Canvas& c) { draw_diagram(d, c); });
}

}  // namespace viewer
