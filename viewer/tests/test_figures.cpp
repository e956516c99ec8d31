// test_figures.cpp — the figure writers (figure_export.h) on hand-made FigureSpecs, no viewer state:
//  * the map PNG (issue 41, item 8) decoded back: its size is the SVG's at 2 pixels a point; every
//    map cell's centre pixel is its value's colour; the colour bar's top and bottom rows are the
//    colour map's ends (the scale's hi and lo); the token labels left of and above the map, the
//    units beside the bar and the title are drawn (dark pixels where they go, white elsewhere);
//  * a masked head is crossed out in the PNG;
//  * the layout's text widths (FigureFont, no cairo: the page measures alike) equal cairo's on
//    the strings a figure holds, at the sizes it uses, so the desktop's figures stayed byte-identical;
//  * the writers' refusals: a spec's problem, no maps, an unknown extension.
#include "export/file_writers.h"
#include "figures/figure_export.h"
#include "figures/figure_font.h"

#include <cairo.h>
#include <stb_image.h>

#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>

using namespace viewer;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("deberta_test_figures_" + std::to_string(::getpid()) + "_" + name)).string();
}

/// A 5 × 7 map (queries × keys) whose values run from −1 to +1.2 (signed: the diverging map).
FigureSpec sample_spec(bool sequential = false) {
  auto m = std::make_shared<deberta::Matrix>(5, 7);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 7; ++c) (*m)(r, c) = -1.0 + 2.2 * (r * 7 + c) / 34.0;
  FigureSpec f;
  f.maps.push_back({m, "", false});
  f.row_labels = {"The", "cat", "sat", "on", "mat"};
  f.col_labels = {"[CLS]", "The", "cat", "sat", "on", "the", "mat"};
  f.scale = sequential ? ColorScale::sequential(-1.0, 1.2) : ColorScale::diverging(1.2);
  f.title = "Attention scores, layer 0 (of 0–1), head 1 (of 0–1)";
  f.units = "score Ã/√(3d)_ij (the logit before the softmax)";
  f.caption = "Model: test. Rows: query i; columns: key j.";
  return f;
}

struct Png {
  int w = 0, h = 0;
  std::vector<uint8_t> px;  // RGBA
  uint32_t at(int x, int y) const {  // as color_of packs: 0xAABBGGRR
    const uint8_t* p = &px[(static_cast<size_t>(y) * w + x) * 4];
    return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
  }
  bool dark(int x, int y) const {
    const uint8_t* p = &px[(static_cast<size_t>(y) * w + x) * 4];
    return p[0] < 128 && p[1] < 128 && p[2] < 128;
  }
  int dark_in(int x0, int y0, int x1, int y1) const {
    int n = 0;
    for (int y = std::max(0, y0); y < std::min(h, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(w, x1); ++x) n += dark(x, y);
    return n;
  }
};

Png read_png(const std::string& path) {
  Png p;
  int n = 0;
  unsigned char* data = stbi_load(path.c_str(), &p.w, &p.h, &n, 4);
  REQUIRE_MESSAGE(data != nullptr, "cannot decode " << path);
  p.px.assign(data, data + static_cast<size_t>(p.w) * p.h * 4);
  stbi_image_free(data);
  return p;
}

/// The first `count` numbers after `key` in `line` ("map at X,Y size S px": key "map at", 3).
std::vector<int> numbers_after(const std::string& line, const std::string& key, int count) {
  std::vector<int> v;
  const size_t at = line.find(key);
  REQUIRE_MESSAGE(at != std::string::npos, "no '" << key << "' in: " << line);
  std::istringstream in(line.substr(at + key.size()));
  for (int k = 0; k < count && in; ++k) {
    int x = 0;
    while (in && !(in.peek() >= '0' && in.peek() <= '9')) in.get();
    if (in >> x) v.push_back(x);
  }
  return v;
}

}  // namespace

TEST_CASE("the map PNG: size, cells, colour bar ends, labels") {
  const FigureSpec f = sample_spec();
  const std::string png = temp_path("map.png"), svg = temp_path("map.svg");
  const std::string line = write_figure_png(f, png);
  INFO(line);
  REQUIRE(line.rfind("wrote ", 0) == 0);
  const std::string sline = write_figure(f, svg);
  REQUIRE(sline.rfind("wrote ", 0) == 0);
  const Png p = read_png(png);

  // Size: the SVG's page (points) at 2 pixels a point.
  std::ifstream in(svg);
  std::stringstream ss;
  ss << in.rdbuf();
  std::smatch m;
  const std::string doc = ss.str();
  REQUIRE(std::regex_search(doc, m, std::regex("width=\"([0-9.]+)pt\" height=\"([0-9.]+)pt\"")));
  CHECK(std::abs(p.w - 2 * std::stod(m[1])) <= 1.0);
  CHECK(std::abs(p.h - 2 * std::stod(m[2])) <= 1.0);
  CHECK(p.w > 700);  // not the bare 260 × 260 map it used to be

  // Every cell's centre carries its value's colour.
  const std::vector<int> map = numbers_after(line, "map at", 3);  // x, y, size (px)
  REQUIRE(map.size() == 3);
  const int mx = map[0], my = map[1], ms = map[2];
  const deberta::Matrix& v = *f.maps[0].values;
  for (int r = 0; r < v.rows(); ++r)
    for (int c = 0; c < v.cols(); ++c) {
      const int x = mx + static_cast<int>((c + 0.5) * ms / v.cols()), y = my + static_cast<int>((r + 0.5) * ms / v.rows());
      CHECK_MESSAGE(p.at(x, y) == color_of(f.scale, v(r, c)), "cell " << r << "," << c);
    }
  // The colour bar: its first row inside the frame is hi's colour, its last lo's (the colour map's ends).
  const std::vector<int> bar = numbers_after(line, "colour bar at", 4);  // x, y, w, h (px)
  REQUIRE(bar.size() == 4);
  const int bx = bar[0] + bar[2] / 2;
  CHECK(p.at(bx, bar[1] + 1) == color_of(f.scale, f.scale.hi));
  CHECK(p.at(bx, bar[1] + bar[3] - 2) == color_of(f.scale, f.scale.lo));
  CHECK(color_of(f.scale, f.scale.hi) != color_of(f.scale, f.scale.lo));
  // Labels: the query tokens left of the map, the key tokens above it, the units right of the bar,
  // the title at the top; the margins beyond stay white.
  CHECK(p.dark_in(mx - 60, my, mx - 2, my + ms) > 50);
  CHECK(p.dark_in(mx, my - 60, mx + ms, my - 2) > 50);
  CHECK(p.dark_in(bar[0] + bar[2] + 2, bar[1], p.w, bar[1] + bar[3]) > 50);
  CHECK(p.dark_in(0, 0, p.w, 60) > 100);
  CHECK(p.dark_in(0, 0, 40, 40) == 0);
  CHECK(p.dark_in(p.w - 30, 0, p.w, p.h) == 0);
  std::remove(png.c_str());
  std::remove(svg.c_str());
}

TEST_CASE("the map PNG: viridis ends and a masked head crossed out") {
  FigureSpec f = sample_spec(true);
  f.maps[0].crossed = true;
  const std::string png = temp_path("masked.png");
  const std::string line = write_figure_png(f, png);
  REQUIRE(line.rfind("wrote ", 0) == 0);
  const Png p = read_png(png);
  const std::vector<int> bar = numbers_after(line, "colour bar at", 4);
  REQUIRE(bar.size() == 4);
  CHECK(p.at(bar[0] + bar[2] / 2, bar[1] + 1) == color_of(f.scale, f.scale.hi));
  CHECK(p.at(bar[0] + bar[2] / 2, bar[1] + bar[3] - 2) == color_of(f.scale, f.scale.lo));
  // The cross: the map's centre lies on both diagonals and is drawn red, not its cell's colour.
  const std::vector<int> map = numbers_after(line, "map at", 3);
  const int cx = map[0] + map[2] / 2, cy = map[1] + map[2] / 2;
  const uint32_t c = p.at(cx, cy);
  CHECK((c & 0xff) > 150);          // red
  CHECK(((c >> 8) & 0xff) < 100);   // little green
  std::remove(png.c_str());
}

TEST_CASE("text widths equal cairo's (the figures' layout did not move)") {
  const FigureFont& font = FigureFont::sans();
  REQUIRE(font.error().empty());
  cairo_surface_t* surf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
  cairo_t* cr = cairo_create(surf);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  const std::vector<std::string> texts = {"0 [CLS]", "12 ▁beginning", "511 earth", "layer 11", "+0.123", "−1.2e-05", "0",
                                          "attention weight softmax(Ã/√(3d))_ij (each row sums to 1)",
                                          "Model: deberta-tiny (4 layers, d = 64). Text (33 tokens): In the beginning …",
                                          "3 나는", "4 私は本", "5 Привет δ ∑ α_ij", "6 tab\there", "7 ½"};
  int checked = 0;
  for (double size : {2.0, 2.2, 2.64, 3.3, 4.4, 5.12, 6.0, 7.04, 7.5, 8.0, 8.5, 9.0}) {
    cairo_set_font_size(cr, size);
    for (const std::string& t : texts) {
      cairo_text_extents_t e;
      cairo_text_extents(cr, t.c_str(), &e);
      CHECK_MESSAGE(std::abs(font.width(t, size) - e.x_advance) < 1e-9, "'" << t << "' at " << size << " pt: ours "
                                                                              << font.width(t, size) << ", cairo " << e.x_advance);
      ++checked;
    }
  }
  CHECK(checked == 12 * 14);
  cairo_destroy(cr);
  cairo_surface_destroy(surf);
}

TEST_CASE("the writers refuse what they cannot draw") {
  FigureSpec f;
  f.problem = "nothing computed yet";
  CHECK(write_figure(f, temp_path("x.svg")) == "figure: nothing computed yet");
  CHECK(write_figure_png(f, temp_path("x.png")) == "PNG: nothing computed yet");
  const FigureSpec empty;
  CHECK(write_figure(empty, "a.svg") == "figure: a.svg: nothing to draw");
  CHECK(write_figure(sample_spec(), "a.eps") == "figure: a.eps: unknown format (use .pdf or .svg)");
  CHECK(!std::filesystem::exists(temp_path("x.svg")));
  CHECK(!std::filesystem::exists(temp_path("x.png")));
}

TEST_CASE("issue 59 class 5: every writer reports a full disk, naming the path, never \"wrote\"") {
  // The output path is a symlink to /dev/full: open succeeds, every write (or the flush at close)
  // fails with ENOSPC. stb, cairo and ofstream buffered, and the close went unchecked: "wrote …".
  const std::string dir = temp_path("full");
  std::filesystem::create_directories(dir);
  auto link = [&](const std::string& name) {
    const std::string p = dir + "/" + name;
    std::filesystem::remove(p);
    std::filesystem::create_symlink("/dev/full", p);
    return p;
  };
  deberta::Matrix m(3, 4);
  m.setConstant(0.25);
  const std::vector<uint8_t> rgba(4 * 3 * 4, 200);
  struct Kind {
    std::string path;
    std::string status;
  };
  std::vector<Kind> kinds;
  std::string p = link("map.pdf");
  kinds.push_back({p, write_figure(sample_spec(), p)});
  p = link("map.svg");
  kinds.push_back({p, write_figure(sample_spec(), p)});
  p = link("map.png");
  kinds.push_back({p, write_figure_png(sample_spec(), p)});
  p = link("window.png");
  kinds.push_back({p, write_png_rgba(p, 4, 3, rgba, true)});
  p = link("c2c.npy");
  kinds.push_back({p, write_npy(p, m)});
  p = link("c2c.csv");
  kinds.push_back({p, write_csv(p, m, "q", {"a", "b", "c"}, {"w", "x", "y", "z"})});
  for (const Kind& k : kinds) {
    CAPTURE(k.path);
    CHECK_MESSAGE(k.status.rfind("wrote", 0) == std::string::npos, k.status);
    CHECK_MESSAGE(k.status.find("cannot write " + k.path + ": No space left on device") != std::string::npos, k.status);
  }
  std::filesystem::remove_all(dir);
}
