// colormap.cpp — see colormap.h.
#include "figures/colormap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace viewer {

namespace {

// Opaque RGB in ImGui's packing (IM_COL32(r, g, b, 255)).
uint32_t pack(int r, int g, int b) {
  return static_cast<uint32_t>(r) | static_cast<uint32_t>(g) << 8 | static_cast<uint32_t>(b) << 16 | 0xFFu << 24;
}

struct RGB {
  float r, g, b;
};

// viridis (matplotlib), 11 stops at 0, 0.1, …, 1.
const RGB kViridis[] = {{0x44, 0x01, 0x54}, {0x48, 0x24, 0x75}, {0x41, 0x44, 0x87}, {0x35, 0x5f, 0x8d},
                        {0x2a, 0x78, 0x8e}, {0x21, 0x91, 0x8c}, {0x22, 0xa8, 0x84}, {0x44, 0xbf, 0x70},
                        {0x7a, 0xd1, 0x51}, {0xbd, 0xdf, 0x26}, {0xfd, 0xe7, 0x25}};
// ColorBrewer RdBu (11 classes) from negative (blue) to positive (red), white at the centre.
const RGB kDiverging[] = {{0x05, 0x30, 0x61}, {0x21, 0x66, 0xac}, {0x43, 0x93, 0xc3}, {0x92, 0xc5, 0xde},
                          {0xd1, 0xe5, 0xf0}, {0xf7, 0xf7, 0xf7}, {0xfd, 0xdb, 0xc7}, {0xf4, 0xa5, 0x82},
                          {0xd6, 0x60, 0x4d}, {0xb2, 0x18, 0x2b}, {0x67, 0x00, 0x1f}};

uint32_t lerp_table(const RGB* table, int n, double t) {
  if (!std::isfinite(t)) return pack(128, 128, 128);
  t = std::clamp(t, 0.0, 1.0) * (n - 1);
  const int a = std::min(static_cast<int>(t), n - 2);
  const float f = static_cast<float>(t - a);
  const RGB& x = table[a];
  const RGB& y = table[a + 1];
  return pack(static_cast<int>(x.r + (y.r - x.r) * f + 0.5f), static_cast<int>(x.g + (y.g - x.g) * f + 0.5f),
              static_cast<int>(x.b + (y.b - x.b) * f + 0.5f));
}

}  // namespace

ColorScale ColorScale::diverging(double m) {
  m = std::max(std::isfinite(m) ? m : 1.0, 1e-12);
  return {ColorMap::Diverging, -m, m};
}

ColorScale ColorScale::sequential(double lo, double hi) {
  if (!(hi > lo)) hi = lo + 1e-12;
  return {ColorMap::Viridis, lo, hi};
}

uint32_t color_of(const ColorScale& s, double v) {
  const double t = (v - s.lo) / (s.hi - s.lo);
  return s.map == ColorMap::Viridis ? lerp_table(kViridis, 11, t) : lerp_table(kDiverging, 11, t);
}

std::vector<uint8_t> colorize(const deberta::Matrix& m, const ColorScale& scale) {
  std::vector<uint8_t> px(static_cast<size_t>(m.size()) * 4);
  for (int64_t r = 0; r < m.rows(); ++r)
    for (int64_t c = 0; c < m.cols(); ++c) {
      const uint32_t col = color_of(scale, m(r, c));
      uint8_t* p = &px[static_cast<size_t>(r * m.cols() + c) * 4];
      p[0] = col & 0xff, p[1] = (col >> 8) & 0xff, p[2] = (col >> 16) & 0xff, p[3] = 255;
    }
  return px;
}

double max_abs(const std::vector<const deberta::Matrix*>& maps) {
  double m = 0;
  for (const auto* x : maps)
    if (x && x->size()) m = std::max(m, x->cwiseAbs().maxCoeff());
  return m > 0 ? m : 1e-12;
}

double max_value(const std::vector<const deberta::Matrix*>& maps) {
  double m = 0;
  for (const auto* x : maps)
    if (x && x->size()) m = std::max(m, x->maxCoeff());
  return m > 0 ? m : 1e-12;
}

std::string fmt(double v, int digits, bool sign) {
  char buf[64];
  const double a = std::fabs(v);
  if (v == 0)
    std::snprintf(buf, sizeof buf, "0");
  else if (a >= 1e-3 && a < 1e4)
    std::snprintf(buf, sizeof buf, sign ? "%+.*f" : "%.*f", digits, v);
  else
    std::snprintf(buf, sizeof buf, sign ? "%+.*e" : "%.*e", std::max(digits - 2, 1), v);
  std::string s = buf;
  if (!s.empty() && s[0] == '-') s = "\u2212" + s.substr(1);  // a real minus sign
  return s;
}

}  // namespace viewer
