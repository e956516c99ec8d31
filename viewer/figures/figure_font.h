// figure_font.h — the figures' one font, DejaVu Sans, read with stb_truetype (Debian's libstb):
// text widths for the figure layout (SVG, PDF and PNG alike) and glyph coverage for the PNG.
//
// No cairo, OpenGL or ImGui here, so the web edition lays figures out exactly as the desktop does.
// The widths are those cairo reported when it measured the figures (cairo 1.16 + FreeType 2.12 on
// Debian 12, fontconfig's default hintslight and hinted metrics on an image surface): every glyph
// advances by its hmtx advance scaled in FreeType's 26.6 fixed point and rounded to whole points,
// and a glyph the font lacks advances as the font's .notdef (cairo's toy text API does not fall
// back to another font). Checked against cairo on every glyph of the font at 2–12 pt in steps of
// 0.0103 pt: 13 of 5.7 million advances differ by 1 pt (U+2422 and three polytonic Greek composites,
// whose hinting moves their advance); figures are otherwise byte-identical to cairo's layout.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace viewer {

class FigureFont {
 public:
  /// The font at `path` (a TrueType file). Check `error()`: "" or "cannot read PATH" / "PATH is not
  /// a TrueType font".
  explicit FigureFont(const std::string& path);
  FigureFont(const FigureFont&) = delete;
  FigureFont& operator=(const FigureFont&) = delete;
  ~FigureFont();

  /// DejaVu Sans at /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf (fonts-dejavu-core; the page
  /// has it at the same path), read once; CJK fallbacks (DroidSansFallbackFull, NanumGothic) for the
  /// PNG's glyphs. Never null; check `error()`.
  static const FigureFont& sans();

  const std::string& error() const { return error_; }

  /// Width in points of `utf8` (made valid UTF-8 first) at `size` points, as described above.
  double width(const std::string& utf8, double size) const;

  /// Greedy word wrap of `s` at spaces into lines no wider than `w` points at `size`.
  std::vector<std::string> wrap(const std::string& s, double w, double size) const;

  /// One glyph's coverage for the PNG: `w` × `h` bytes (0–255), its top-left corner at (x0, y0)
  /// pixels from the pen on the baseline (y down); `advance` the layout's advance in points.
  struct Glyph {
    int w = 0, h = 0, x0 = 0, y0 = 0;
    std::vector<uint8_t> coverage;
    double advance = 0;
  };
  /// The glyphs of `utf8` at `size` points drawn at `px_per_pt` pixels a point. A character DejaVu
  /// Sans lacks is drawn from a fallback font, shrunk to fit the advance the layout gave it.
  std::vector<Glyph> glyphs(const std::string& utf8, double size, double px_per_pt) const;

 private:
  struct Face;
  std::vector<Face*> faces_;  // [0] DejaVu Sans, then fallbacks (glyphs only)
  std::string error_;
  // Glyphs rasterised so far, by (code point, size, pixels a point). Not thread-safe: figures are
  // written from the interface's thread (and the page has one thread).
  mutable std::map<std::tuple<int, double, double>, Glyph> cache_;
  double advance(int codepoint, double size) const;
};

}  // namespace viewer
