// heatmap.cpp — colour maps, texture upload and the heatmap widget.
#include "heatmap.h"

#include <GL/gl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace viewer {

namespace {

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
  if (!std::isfinite(t)) return IM_COL32(128, 128, 128, 255);
  t = std::clamp(t, 0.0, 1.0) * (n - 1);
  const int a = std::min(static_cast<int>(t), n - 2);
  const float f = static_cast<float>(t - a);
  const RGB& x = table[a];
  const RGB& y = table[a + 1];
  return IM_COL32(static_cast<int>(x.r + (y.r - x.r) * f + 0.5f), static_cast<int>(x.g + (y.g - x.g) * f + 0.5f),
                  static_cast<int>(x.b + (y.b - x.b) * f + 0.5f), 255);
}

void upload(TextureCache::Entry& e, const std::vector<uint8_t>& rgba, int w, int h) {
  if (!e.texture) glGenTextures(1, &e.texture);
  glBindTexture(GL_TEXTURE_2D, e.texture);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, 0x812F /* GL_CLAMP_TO_EDGE */);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, 0x812F);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  e.width = w, e.height = h;
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

HeatmapEvent Heatmap(ViewerState& s, const std::string& id, const deberta::Matrix& m, const ColorScale& scale,
                     ImVec2 size, uint64_t version, const Overlay& ov) {
  HeatmapEvent ev;
  if (m.size() == 0) return ev;
  TextureCache::Entry& e = s.textures.entries[id];
  if (!e.texture || e.version != version || e.data != m.data() || e.lo != scale.lo || e.hi != scale.hi ||
      e.colormap != static_cast<int>(scale.map) || e.width != m.cols() || e.height != m.rows()) {
    upload(e, colorize(m, scale), static_cast<int>(m.cols()), static_cast<int>(m.rows()));
    e.version = version, e.data = m.data(), e.lo = scale.lo, e.hi = scale.hi, e.colormap = static_cast<int>(scale.map);
  }
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::PushID(id.c_str());
  ImGui::InvisibleButton("map", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  ImGui::PopID();
  ev.min = p0;
  ev.max = ImVec2(p0.x + size.x, p0.y + size.y);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(e.texture)), ev.min, ev.max);
  dl->AddRect(ImVec2(ev.min.x - 1, ev.min.y - 1), ImVec2(ev.max.x + 1, ev.max.y + 1), IM_COL32(90, 90, 100, 255));
  const float cw = size.x / static_cast<float>(m.cols()), ch = size.y / static_cast<float>(m.rows());
  if (ImGui::IsItemHovered()) {
    const ImVec2 mp = ImGui::GetIO().MousePos;
    ev.j = std::clamp(static_cast<int>((mp.x - p0.x) / cw), 0, static_cast<int>(m.cols()) - 1);
    ev.i = std::clamp(static_cast<int>((mp.y - p0.y) / ch), 0, static_cast<int>(m.rows()) - 1);
    ev.hovered = true;
    ev.clicked = ImGui::IsMouseClicked(ImGuiMouseButton_Left);
    ev.right_clicked = ImGui::IsMouseClicked(ImGuiMouseButton_Right);
    dl->AddRect(ImVec2(p0.x + ev.j * cw, p0.y + ev.i * ch), ImVec2(p0.x + (ev.j + 1) * cw, p0.y + (ev.i + 1) * ch),
                IM_COL32(255, 255, 255, 200));
  }
  if (ov.highlight >= 0 && ov.highlight < m.rows() && ov.highlight < m.cols()) {
    const ImU32 col = IM_COL32(255, 170, 0, 220);
    dl->AddRect(ImVec2(p0.x, p0.y + ov.highlight * ch), ImVec2(ev.max.x, p0.y + (ov.highlight + 1) * ch), col);
    dl->AddRect(ImVec2(p0.x + ov.highlight * cw, p0.y), ImVec2(p0.x + (ov.highlight + 1) * cw, ev.max.y), col);
  }
  if (ov.sel_i >= 0 && ov.sel_j >= 0 && ov.sel_i < m.rows() && ov.sel_j < m.cols()) {
    const ImVec2 a(p0.x + ov.sel_j * cw, p0.y + ov.sel_i * ch), b(a.x + cw, a.y + ch);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.0f);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
  }
  if (ov.crossed) {
    dl->AddRectFilled(ev.min, ev.max, IM_COL32(0, 0, 0, 120));
    dl->AddLine(ev.min, ev.max, IM_COL32(230, 40, 40, 255), 2.0f);
    dl->AddLine(ImVec2(ev.min.x, ev.max.y), ImVec2(ev.max.x, ev.min.y), IM_COL32(230, 40, 40, 255), 2.0f);
  }
  if (ov.caption) {
    const ImVec2 ts = ImGui::CalcTextSize(ov.caption);
    dl->AddRectFilled(ImVec2(p0.x, p0.y), ImVec2(p0.x + ts.x + 6, p0.y + ts.y + 2), IM_COL32(0, 0, 0, 170));
    dl->AddText(ImVec2(p0.x + 3, p0.y + 1), IM_COL32(255, 255, 255, 255), ov.caption);
  }
  return ev;
}

void ColorBar(ViewerState& s, const ColorScale& scale, float height, const char* caption) {
  // A 1 × 256 texture, top = hi.
  deberta::Matrix ramp(256, 1);
  for (int r = 0; r < 256; ++r) ramp(r, 0) = scale.hi + (scale.lo - scale.hi) * r / 255.0;
  const std::string id = std::string("colorbar") + (scale.map == ColorMap::Viridis ? "V" : "D");
  TextureCache::Entry& e = s.textures.entries[id];
  if (!e.texture) {
    const ColorScale unit = scale.map == ColorMap::Viridis ? ColorScale::sequential(0, 1) : ColorScale::diverging(1);
    deberta::Matrix u(256, 1);
    for (int r = 0; r < 256; ++r) u(r, 0) = unit.hi + (unit.lo - unit.hi) * r / 255.0;
    upload(e, colorize(u, unit), 1, 256);
  }
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float w = 14;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float text_h = ImGui::GetTextLineHeight();
  const float top = p0.y + text_h + 4;  // caption above the bar
  const float h = std::max(height - text_h - 4, 40.0f);
  dl->AddText(p0, ImGui::GetColorU32(ImGuiCol_Text), caption);
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(e.texture)), ImVec2(p0.x, top), ImVec2(p0.x + w, top + h));
  dl->AddRect(ImVec2(p0.x - 1, top - 1), ImVec2(p0.x + w + 1, top + h + 1), IM_COL32(90, 90, 100, 255));
  auto tick = [&](double v) {
    const float y = top + static_cast<float>((scale.hi - v) / (scale.hi - scale.lo)) * h;
    dl->AddLine(ImVec2(p0.x + w, y), ImVec2(p0.x + w + 4, y), ImGui::GetColorU32(ImGuiCol_Text));
    char ibuf[32];
    std::snprintf(ibuf, sizeof ibuf, "%.0f", v);
    const bool integral = std::fabs(v) < 1e6 && v == std::floor(v) && std::fabs(scale.hi - scale.lo) >= 1;
    const std::string t = integral ? std::string(ibuf) : fmt(v, 3, scale.map == ColorMap::Diverging);
    dl->AddText(ImVec2(p0.x + w + 6, y - text_h * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), t.c_str());
  };
  tick(scale.hi);
  if (scale.map == ColorMap::Diverging) tick(0.0);
  tick(scale.lo);
  const float caption_w = ImGui::CalcTextSize(caption).x;
  ImGui::Dummy(ImVec2(std::max(w + 6 + ImGui::CalcTextSize("+0.000e-00").x, caption_w), height));
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
