// figure_font.cpp — see figure_font.h. stb_truetype's implementation is in Debian's libstb on the
// desktop and in web/web_stb.cpp for the page.
#include "figures/figure_font.h"

#include "deberta/tokenizer.h"

#include <stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

namespace viewer {

struct FigureFont::Face {
  std::vector<unsigned char> data;
  stbtt_fontinfo info{};
  int units_per_em = 0;
};

namespace {

const char* kSansPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const char* kFallbackPaths[] = {"/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
                                "/usr/share/fonts/truetype/nanum/NanumGothic.ttf"};

/// Next code point of valid UTF-8 `s` at `i` (advances `i`).
int next_codepoint(const std::string& s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
  int cp = n == 1 ? c : n == 2 ? (c & 0x1f) : n == 3 ? (c & 0x0f) : (c & 0x07);
  for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
  i += n;
  return cp;
}

// FreeType's fixed-point helpers (FT_DivFix, FT_MulFix) for non-negative operands: 16.16 results,
// rounded to nearest.
int64_t div_fix(int64_t a, int64_t b) { return (a * 65536 + b / 2) / b; }
int64_t mul_fix(int64_t a, int64_t b) { return (a * b + 0x8000) >> 16; }

}  // namespace

FigureFont::FigureFont(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error_ = "cannot read " + path;
    return;
  }
  auto* f = new Face;
  f->data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (f->data.empty() || !stbtt_InitFont(&f->info, f->data.data(), stbtt_GetFontOffsetForIndex(f->data.data(), 0))) {
    delete f;
    error_ = path + " is not a TrueType font";
    return;
  }
  const unsigned char* head = f->data.data() + f->info.head;
  f->units_per_em = head[18] * 256 + head[19];
  faces_.push_back(f);
}

FigureFont::~FigureFont() {
  for (Face* f : faces_) delete f;
}

const FigureFont& FigureFont::sans() {
  static FigureFont* font = [] {
    auto* f = new FigureFont(kSansPath);
    if (f->error_.empty())
      for (const char* p : kFallbackPaths) {
        FigureFont fb(p);
        if (!fb.error_.empty()) continue;
        f->faces_.push_back(fb.faces_[0]);
        fb.faces_.clear();
      }
    return f;
  }();
  return *font;
}

double FigureFont::advance(int codepoint, double size) const {
  const Face& f = *faces_[0];
  int adv = 0, lsb = 0;
  stbtt_GetGlyphHMetrics(&f.info, stbtt_FindGlyphIndex(&f.info, codepoint), &adv, &lsb);  // glyph 0: .notdef
  // The size in 26.6 as cairo requests it (x_scale · 64 + 0.5), FreeType's scale, the advance in
  // 26.6 and rounded to whole points (hinted metrics).
  const int64_t size26 = static_cast<int64_t>(size * 64.0 + 0.5);
  const int64_t scale = div_fix(size26, f.units_per_em);
  const int64_t adv26 = mul_fix(adv, scale);
  return static_cast<double>((adv26 + 32) & ~int64_t{63}) / 64.0;
}

double FigureFont::width(const std::string& utf8, double size) const {
  if (faces_.empty()) return 0;
  const std::string s = deberta::valid_utf8(utf8);
  double w = 0;
  for (size_t i = 0; i < s.size();) w += advance(next_codepoint(s, i), size);
  return w;
}

std::vector<std::string> FigureFont::wrap(const std::string& s, double w, double size) const {
  std::vector<std::string> lines;
  std::string line, word;
  auto flush_word = [&] {
    if (word.empty()) return;
    const std::string cand = line.empty() ? word : line + " " + word;
    if (!line.empty() && width(cand, size) > w) {
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

std::vector<FigureFont::Glyph> FigureFont::glyphs(const std::string& utf8, double size, double px_per_pt) const {
  std::vector<Glyph> out;
  if (faces_.empty()) return out;
  const std::string s = deberta::valid_utf8(utf8);
  const double px = size * px_per_pt;
  for (size_t i = 0; i < s.size();) {
    const int cp = next_codepoint(s, i);
    // Each glyph is rasterised once per size (a figure repeats its characters thousands of times).
    const auto key = std::make_tuple(cp, size, px_per_pt);
    if (const auto hit = cache_.find(key); hit != cache_.end()) {
      out.push_back(hit->second);
      continue;
    }
    Glyph g;
    g.advance = advance(cp, size);
    // The first face that has the character (DejaVu Sans, then the fallbacks); none: DejaVu's .notdef.
    const Face* face = faces_[0];
    int index = stbtt_FindGlyphIndex(&face->info, cp);
    for (size_t k = 1; index == 0 && k < faces_.size(); ++k)
      if (const int gi = stbtt_FindGlyphIndex(&faces_[k]->info, cp); gi != 0) face = faces_[k], index = gi;
    float scale = stbtt_ScaleForMappingEmToPixels(&face->info, static_cast<float>(px));
    if (face != faces_[0]) {  // shrink a fallback glyph to the advance the layout gave it
      int adv = 0, lsb = 0;
      stbtt_GetGlyphHMetrics(&face->info, index, &adv, &lsb);
      if (adv > 0) scale = std::min(scale, static_cast<float>(g.advance * px_per_pt / adv));
    }
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    stbtt_GetGlyphBitmapBox(&face->info, index, scale, scale, &x0, &y0, &x1, &y1);
    g.x0 = x0, g.y0 = y0, g.w = std::max(0, x1 - x0), g.h = std::max(0, y1 - y0);
    g.coverage.assign(static_cast<size_t>(g.w) * g.h, 0);
    if (g.w > 0 && g.h > 0) stbtt_MakeGlyphBitmap(&face->info, g.coverage.data(), g.w, g.h, g.w, scale, scale, index);
    cache_.emplace(key, g);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace viewer
