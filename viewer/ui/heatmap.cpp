// heatmap.cpp — texture upload, the heatmap widget and colour bars (the colour maps: colormap.cpp).
#include "ui/heatmap.h"

#include "i18n/i18n.h"

#include <GL/gl.h>
#include <imgui_internal.h>  // SetItemUsingMouseWheel (imgui 1.86)

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace viewer {

namespace {

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

namespace {

/// Adds `text` rotated 90° clockwise (reading top to bottom) with its top-left corner at `pos`.
void add_text_down(ImDrawList* dl, ImVec2 pos, ImU32 col, const char* text) {
  const int first = dl->VtxBuffer.Size;
  dl->AddText(pos, col, text);
  // (x, y) → (pos.x − (y − pos.y) + line height, pos.y + (x − pos.x)): a quarter turn clockwise.
  const float h = ImGui::GetTextLineHeight();
  for (int v = first; v < dl->VtxBuffer.Size; ++v) {
    ImVec2& p = dl->VtxBuffer[v].pos;
    const ImVec2 d(p.x - pos.x, p.y - pos.y);
    p = ImVec2(pos.x + h - d.y, pos.y + d.x);
  }
}

/// A 1-pixel frame of filled strips. ImGui's thin anti-aliased lines sample a baked texture in the
/// font atlas, which the viewer samples with GL_NEAREST (main.cpp): such lines can vanish in parts.
void frame(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col) {
  a = ImVec2(std::floor(a.x), std::floor(a.y)), b = ImVec2(std::floor(b.x), std::floor(b.y));
  dl->AddRectFilled(a, ImVec2(b.x, a.y + 1), col);
  dl->AddRectFilled(ImVec2(a.x, b.y - 1), b, col);
  dl->AddRectFilled(a, ImVec2(a.x + 1, b.y), col);
  dl->AddRectFilled(ImVec2(b.x - 1, a.y), b, col);
}

/// Black or white, whichever reads better on a cell of colour `packed` (ImGui ABGR).
ImU32 text_on(uint32_t packed) {
  const float lum = 0.2126f * (packed & 0xff) + 0.7152f * ((packed >> 8) & 0xff) + 0.0722f * ((packed >> 16) & 0xff);
  return lum > 140 ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

}  // namespace

namespace {

/// The cache entry of map `id`, its texture (re)uploaded when `m`, its version or `scale` changed.
TextureCache::Entry& map_texture(App& app, const std::string& id, const deberta::Matrix& m, const ColorScale& scale,
                                 uint64_t version) {
  TextureCache::Entry& e = app.gfx.textures.entries[id];
  if (!e.texture || e.version != version || e.data != m.data() || e.lo != scale.lo || e.hi != scale.hi ||
      e.colormap != static_cast<int>(scale.map) || e.width != m.cols() || e.height != m.rows()) {
    upload(e, colorize(m, scale), static_cast<int>(m.cols()), static_cast<int>(m.rows()));
    e.version = version, e.data = m.data(), e.lo = scale.lo, e.hi = scale.hi, e.colormap = static_cast<int>(scale.map);
  }
  return e;
}

/// The token labels' bands of a zoomed token × token map: on the left (query tokens) and on top
/// (key tokens, rotated), once a cell is a text line tall.
struct LabelBands {
  const ViewerState& s;
  int R, C;
  ImVec2 size;
  bool zoomable;
  float line = ImGui::GetTextLineHeight();

  std::string label(int t) const { return token_chip_label(s, t); }
  /// The bands' width under view `w`: as wide as the longest label in view (tokens in view: about
  /// N / zoom around the centre); 0 when the map is not a token map or its cells are too small.
  float width(const MapView& w) const {
    const int N = token_count(s);
    if (!(zoomable && R == N && C == N && w.zoom > 1.0001f && size.y * w.zoom / R >= line * 0.9f)) return 0.0f;
    float b = 0;
    const int lo = std::max(0, static_cast<int>((w.cy - 0.6f / w.zoom) * R)), hi = std::min(R - 1, static_cast<int>((w.cy + 0.6f / w.zoom) * R) + 1);
    for (int t = lo; t <= hi; ++t) b = std::max(b, ImGui::CalcTextSize(label(t).c_str()).x);
    const int lo2 = std::max(0, static_cast<int>((w.cx - 0.6f / w.zoom) * C)), hi2 = std::min(C - 1, static_cast<int>((w.cx + 0.6f / w.zoom) * C) + 1);
    for (int t = lo2; t <= hi2; ++t) b = std::max(b, ImGui::CalcTextSize(label(t).c_str()).x);
    b = std::min(b + 6, std::min(size.x, size.y) * 0.35f);
    // Only when the cells are still a text line tall in what the band leaves (small thumbnails: none).
    return (std::min(size.x, size.y) - b) * w.zoom / static_cast<float>(std::max(R, C)) >= line * 0.9f ? b : 0.0f;
  }
  /// Token t's label cut to a band `band` wide: the index stays, the token name is shortened with "…".
  std::string fitted(int t, float band) const {
    const std::string idx = std::to_string(t) + " ";
    std::string name = shown_token(token_name(s, t)), l = idx + name;
    while (!name.empty() && ImGui::CalcTextSize(l.c_str()).x > band - 6) {
      do name.pop_back();
      while (!name.empty() && (static_cast<unsigned char>(name.back()) & 0xc0) == 0x80);  // whole UTF-8 characters
      l = idx + name + "…";
    }
    return l;
  }
};

/// Keeps view `v` inside the map: zoom in [1, max_zoom], the visible window within 0…1.
void clamp_view(MapView& v, float max_zoom) {
  v.zoom = std::clamp(v.zoom, 1.0f, max_zoom);
  const float half = 0.5f / v.zoom;
  v.cx = std::clamp(v.cx, half, 1 - half);
  v.cy = std::clamp(v.cy, half, 1 - half);
}

/// Ctrl+wheel over the map at `p0`: zooms view `v` around the point under the cursor (which stays
/// under it, label bands included); a double click resets the view. Returns the bands' new width.
float zoom_with_wheel(MapView& v, const LabelBands& bands, ImVec2 p0, float max_zoom, float band) {
  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 size = bands.size;
  if (io.MouseWheel != 0 && io.KeyCtrl) {
    ImGui::SetItemUsingMouseWheel();  // Ctrl+wheel zooms the map; the wheel alone scrolls the panel
    // The map point under the cursor (map units 0…1) before the zoom…
    const float mu = v.cx - 0.5f / v.zoom + (io.MousePos.x - p0.x - band) / (size.x - band) / v.zoom;
    const float mv = v.cy - 0.5f / v.zoom + (io.MousePos.y - p0.y - band) / (size.y - band) / v.zoom;
    v.zoom = std::clamp(v.zoom * std::pow(1.25f, io.MouseWheel), 1.0f, max_zoom);
    // …stays under the cursor after it, in the cells' rectangle of the new zoom (label bands may appear).
    for (int pass = 0; pass < 2; ++pass) {  // the band depends on the view: settle it in two passes
      const float b = bands.width(v);
      v.cx = mu - (io.MousePos.x - p0.x - b) / (size.x - b) / v.zoom + 0.5f / v.zoom;
      v.cy = mv - (io.MousePos.y - p0.y - b) / (size.y - b) / v.zoom + 0.5f / v.zoom;
    }
  }
  if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) v = MapView{};
  return bands.width(v);
}

/// Where the cells of a map are on screen under a view: the widget's corner p0, the cells'
/// rectangle a0 … max, a cell's size (cw, ch), cell (0, 0)'s corner (ox, oy) and the cells in view.
struct CellGrid {
  ImVec2 p0, a0, max;
  int R = 0, C = 0;
  float u0 = 0, v0 = 0, cw = 0, ch = 0, ox = 0, oy = 0;
  int i_lo = 0, i_hi = 0, j_lo = 0, j_hi = 0;

  CellGrid(ImVec2 p0_, ImVec2 size, float band, const MapView& v, int rows, int cols)
      : p0(p0_), max(p0_.x + size.x, p0_.y + size.y), R(rows), C(cols) {
    a0 = ImVec2(p0.x + band, p0.y + band);
    const ImVec2 asz(size.x - band, size.y - band);
    u0 = v.cx - 0.5f / v.zoom, v0 = v.cy - 0.5f / v.zoom;
    cw = asz.x * v.zoom / static_cast<float>(C), ch = asz.y * v.zoom / static_cast<float>(R);
    ox = a0.x - u0 * C * cw, oy = a0.y - v0 * R * ch;  // screen position of cell (0, 0)
    j_lo = std::clamp(static_cast<int>((a0.x - ox) / cw), 0, C - 1);
    j_hi = std::clamp(static_cast<int>((max.x - 0.01f - ox) / cw), 0, C - 1);
    i_lo = std::clamp(static_cast<int>((a0.y - oy) / ch), 0, R - 1);
    i_hi = std::clamp(static_cast<int>((max.y - 0.01f - oy) / ch), 0, R - 1);
  }
  ImVec2 cell_min(int i, int j) const { return ImVec2(ox + j * cw, oy + i * ch); }
};

/// Token names in the bands beside the cells, the selected / highlighted token brighter.
void draw_label_bands(ImDrawList* dl, const CellGrid& g, const LabelBands& bands, float band, const Overlay& ov) {
  dl->AddRectFilled(g.p0, ImVec2(g.max.x, g.a0.y), IM_COL32(24, 26, 32, 255));
  dl->AddRectFilled(ImVec2(g.p0.x, g.a0.y), ImVec2(g.a0.x, g.max.y), IM_COL32(24, 26, 32, 255));
  auto col = [&](int t, bool row) {
    if (t == (row ? ov.sel_i : ov.sel_j)) return IM_COL32(255, 255, 255, 255);
    if (t == ov.highlight) return IM_COL32(255, 170, 0, 255);
    return IM_COL32(190, 190, 200, 255);
  };
  dl->PushClipRect(ImVec2(g.p0.x, g.a0.y), ImVec2(g.a0.x, g.max.y), true);
  for (int i = g.i_lo; i <= g.i_hi; ++i) {
    const std::string l = bands.fitted(i, band);
    const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
    dl->AddText(ImVec2(g.a0.x - ts.x - 3, g.oy + (i + 0.5f) * g.ch - ts.y * 0.5f), col(i, true), l.c_str());
  }
  dl->PopClipRect();
  dl->PushClipRect(ImVec2(g.a0.x, g.p0.y), ImVec2(g.max.x, g.a0.y), true);
  if (g.cw >= bands.line * 0.9f)
    for (int j = g.j_lo; j <= g.j_hi; ++j) {
      const std::string l = bands.fitted(j, band);
      const ImVec2 ts = ImGui::CalcTextSize(l.c_str());
      add_text_down(dl, ImVec2(g.ox + (j + 0.5f) * g.cw - bands.line * 0.5f, std::max(g.p0.y, g.a0.y - ts.x - 3)), col(j, false),
                    l.c_str());
    }
  dl->PopClipRect();
}

/// The decimals of the numbers in the cells, or −1 when no number fits. A map that can hold
/// negative values sizes its numbers for "−0.00", so that at a medium zoom negative cells are
/// labelled as well as positive ones (not only the positives whose shorter text happened to fit):
/// 3, 2 or 1 decimals, as the cell allows.
int cell_digits(const deberta::Matrix& m, const CellGrid& g, const Overlay& ov) {
  int digits = -1;
  if (g.ch >= ImGui::GetTextLineHeight() && g.cw >= ImGui::CalcTextSize("0").x + 4 && m.size() > 0) {
    // Sized for the widest number of the map (its sign and integer digits), checked only once the
    // cells are big enough for any number at all (a full scan of a 512² map costs ~0.3 ms).
    const bool negatives = m.minCoeff() < 0;
    const double biggest = m.cwiseAbs().maxCoeff();
    const std::string whole = std::string(negatives ? "\u2212" : "") +
                              std::string(static_cast<size_t>(biggest >= 1 ? std::floor(std::log10(biggest)) + 1 : 1), '0');
    if (ov.digits >= 0) {
      if (g.cw >= ImGui::CalcTextSize(whole.c_str()).x + 4) digits = ov.digits;
    } else {
      for (int d = 3; d >= 1 && digits < 0; --d)
        if (g.cw >= ImGui::CalcTextSize((whole + "." + std::string(static_cast<size_t>(d), '0')).c_str()).x + 4) digits = d;
    }
  }
  return digits;
}

/// Numbers in the cells once they fit (`cell_digits`), black or white on the cell's colour.
void draw_cell_numbers(ImDrawList* dl, const deberta::Matrix& m, const ColorScale& scale, const CellGrid& g, const Overlay& ov) {
  const int digits = cell_digits(m, g, ov);
  if (digits < 0) return;
  char buf[48];
  for (int i = g.i_lo; i <= g.i_hi; ++i)
    for (int j = g.j_lo; j <= g.j_hi; ++j) {
      const ImVec2 a = g.cell_min(i, j);
      if (a.x < g.a0.x - 0.5f || a.y < g.a0.y - 0.5f || a.x + g.cw > g.max.x + 0.5f || a.y + g.ch > g.max.y + 0.5f)
        continue;  // a cell cut by the edge: half a number would mislead
      const double x = m(i, j);
      std::snprintf(buf, sizeof buf, "%.*f", digits, x);
      std::string text = buf;
      if (text[0] == '-') text = std::strspn(buf + 1, "0.") == text.size() - 1 ? text.substr(1) : "\u2212" + text.substr(1);
      const ImVec2 ts = ImGui::CalcTextSize(text.c_str());
      if (ts.x > g.cw - 2) continue;
      dl->AddText(ImVec2(a.x + (g.cw - ts.x) * 0.5f, a.y + (g.ch - ts.y) * 0.5f), text_on(color_of(scale, x)), text.c_str());
    }
}

/// The hovered cell (`ev` gets it and the clicks), the highlighted token's row and column, the
/// selected cell and a masked head's cross.
void draw_marks(ImDrawList* dl, const CellGrid& g, const Overlay& ov, bool hovered, HeatmapEvent& ev) {
  const ImGuiIO& io = ImGui::GetIO();
  if (hovered && io.MousePos.x >= g.a0.x && io.MousePos.y >= g.a0.y) {
    const ImVec2 mp = io.MousePos;
    ev.j = std::clamp(static_cast<int>((mp.x - g.ox) / g.cw), 0, g.C - 1);
    ev.i = std::clamp(static_cast<int>((mp.y - g.oy) / g.ch), 0, g.R - 1);
    ev.hovered = true;
    ev.clicked = ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 9.0f;
    ev.right_clicked = ImGui::IsMouseClicked(ImGuiMouseButton_Right);
    const ImVec2 a = g.cell_min(ev.i, ev.j);
    dl->AddRect(a, ImVec2(a.x + g.cw, a.y + g.ch), IM_COL32(255, 255, 255, 200));
  }
  if (ov.highlight >= 0 && ov.highlight < g.R && ov.highlight < g.C) {
    const ImU32 col = IM_COL32(255, 170, 0, 220);
    dl->AddRect(ImVec2(g.a0.x, g.oy + ov.highlight * g.ch), ImVec2(g.max.x, g.oy + (ov.highlight + 1) * g.ch), col);
    dl->AddRect(ImVec2(g.ox + ov.highlight * g.cw, g.a0.y), ImVec2(g.ox + (ov.highlight + 1) * g.cw, g.max.y), col);
  }
  if (ov.sel_i >= 0 && ov.sel_j >= 0 && ov.sel_i < g.R && ov.sel_j < g.C) {
    const ImVec2 a = g.cell_min(ov.sel_i, ov.sel_j), b(a.x + g.cw, a.y + g.ch);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.0f);
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
  }
  if (ov.crossed) {
    dl->AddRectFilled(g.a0, g.max, IM_COL32(0, 0, 0, 120));
    dl->AddLine(g.a0, g.max, IM_COL32(230, 40, 40, 255), 2.0f);
    dl->AddLine(ImVec2(g.a0.x, g.max.y), ImVec2(g.max.x, g.a0.y), IM_COL32(230, 40, 40, 255), 2.0f);
  }
}

/// The caption over the cells' top-left corner, and the magnification in a corner (the empty
/// corner of the label bands when there are any).
void draw_corner_texts(ImDrawList* dl, const CellGrid& g, const Overlay& ov, const MapView& v, bool labels, bool zoomed) {
  if (ov.caption) {
    const ImVec2 ts = ImGui::CalcTextSize(ov.caption);
    dl->AddRectFilled(ImVec2(g.a0.x, g.a0.y), ImVec2(g.a0.x + ts.x + 6, g.a0.y + ts.y + 2), IM_COL32(0, 0, 0, 170));
    dl->AddText(ImVec2(g.a0.x + 3, g.a0.y + 1), IM_COL32(255, 255, 255, 255), ov.caption);
  }
  if (zoomed) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "×%.0f", v.zoom);
    const ImVec2 ts = ImGui::CalcTextSize(buf);
    const ImVec2 a = labels ? ImVec2(g.p0.x + 2, g.p0.y + 2) : ImVec2(g.max.x - ts.x - 6, g.max.y - ts.y - 2);
    dl->AddRectFilled(a, ImVec2(a.x + ts.x + 6, a.y + ts.y + 2), IM_COL32(0, 0, 0, 170));
    dl->AddText(ImVec2(a.x + 3, a.y + 1), IM_COL32(255, 220, 120, 255), buf);
  }
}

}  // namespace

HeatmapEvent Heatmap(App& app, const std::string& id, const deberta::Matrix& m, const ColorScale& scale,
                     ImVec2 size, uint64_t version, const Overlay& ov) {
  ViewerState& s = app.state;
  HeatmapEvent ev;
  if (m.size() == 0) return ev;
  const TextureCache::Entry& e = map_texture(app, id, m, scale, version);
  const int R = static_cast<int>(m.rows()), C = static_cast<int>(m.cols());
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::PushID(id.c_str());
  ImGui::InvisibleButton("map", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  ImGui::PopID();
  ev.min = p0;
  ev.max = ImVec2(p0.x + size.x, p0.y + size.y);
  const ImGuiIO& io = ImGui::GetIO();
  const bool hovered = ImGui::IsItemHovered();

  // The view: zoom z ≥ 1 around centre (cx, cy) in map units; the visible window is 1/z wide.
  const bool zoomable = !(ov.view && ov.view[0] == '\0');
  MapView fixed;
  MapView& v = zoomable ? s.map_views.try_emplace(ov.view ? std::string(ov.view) : id, s.initial_view).first->second : fixed;
  const float max_zoom = std::max(1.0f, static_cast<float>(std::max(R, C)) / 2.0f);
  clamp_view(v, max_zoom);

  // Zoomed far enough that a cell is a text line tall: a band on the left (query tokens) and one on
  // top (key tokens, rotated) take part of the rectangle, the cells the rest.
  const LabelBands bands{s, R, C, size, zoomable};
  float band = bands.width(v);
  if (zoomable && hovered) band = zoom_with_wheel(v, bands, p0, max_zoom, band);
  const bool labels = band > 0;
  if (zoomable && ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3.0f)) {
    v.cx -= io.MouseDelta.x / (size.x - band) / v.zoom;
    v.cy -= io.MouseDelta.y / (size.y - band) / v.zoom;
  }
  clamp_view(v, max_zoom);
  ev.zoomed = v.zoom > 1.0001f;
  const CellGrid g(p0, size, band, v, R, C);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(e.texture)), g.a0, ev.max, ImVec2(g.u0, g.v0),
               ImVec2(g.u0 + 1 / v.zoom, g.v0 + 1 / v.zoom));
  frame(dl, ImVec2(g.a0.x - 1, g.a0.y - 1), ImVec2(ev.max.x + 1, ev.max.y + 1), IM_COL32(90, 90, 100, 255));
  if (labels) draw_label_bands(dl, g, bands, band, ov);
  dl->PushClipRect(g.a0, ev.max, true);
  draw_cell_numbers(dl, m, scale, g, ov);
  draw_marks(dl, g, ov, hovered, ev);
  dl->PopClipRect();
  draw_corner_texts(dl, g, ov, v, labels, ev.zoomed);
  return ev;
}

int ProbabilityBars(ViewerState& s, const char* id, const std::vector<double>& probs, int selected, ImVec2 size) {
  const int n = static_cast<int>(probs.size());
  if (n == 0) return -1;
  const float line = ImGui::GetTextLineHeight();
  const float bw = size.x / static_cast<float>(n);
  const bool names = bw >= line;
  // Label band under the bars: rotated token names, or index ticks.
  float label_h = line + 2;
  if (names)
    for (int j = 0; j < n; ++j)
      label_h = std::max(label_h, std::min(ImGui::CalcTextSize(token_chip_label(s, j).c_str()).x + 4, 72.0f));
  const float bars_h = std::max(size.y - label_h, 30.0f);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::PushID(id);
  ImGui::InvisibleButton("bars", ImVec2(size.x, bars_h + label_h));
  ImGui::PopID();
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p0, ImVec2(p0.x + size.x, p0.y + bars_h), IM_COL32(30, 32, 38, 255));
  const double top = std::max(*std::max_element(probs.begin(), probs.end()), 1e-12);
  const ColorScale vir = ColorScale::sequential(0, top);
  for (int j = 0; j < n; ++j) {
    const float h = static_cast<float>(probs[static_cast<size_t>(j)] / top) * (bars_h - 4);
    const ImVec2 a(p0.x + j * bw + (bw > 3 ? 1 : 0), p0.y + bars_h - h), b(p0.x + (j + 1) * bw - (bw > 3 ? 1 : 0), p0.y + bars_h);
    dl->AddRectFilled(a, b, color_of(vir, probs[static_cast<size_t>(j)]));
    if (j == selected) dl->AddRect(ImVec2(a.x - 1, p0.y), ImVec2(b.x + 1, b.y), IM_COL32(255, 255, 255, 255), 0, 0, 2);
  }
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->PushClipRect(ImVec2(p0.x, p0.y + bars_h), ImVec2(p0.x + size.x, p0.y + bars_h + label_h), true);
  if (names) {
    for (int j = 0; j < n; ++j) {
      const std::string l = token_chip_label(s, j);
      add_text_down(dl, ImVec2(p0.x + (j + 0.5f) * bw - line * 0.5f, p0.y + bars_h + 2),
                    j == selected ? IM_COL32(255, 255, 255, 255) : j == s.hover_token ? IM_COL32(255, 170, 0, 255) : text,
                    l.c_str());
    }
  } else {
    const int step = std::max(1, static_cast<int>(std::ceil(ImGui::CalcTextSize("0000").x / bw)));
    for (int j = 0; j < n; j += step) {
      const std::string l = std::to_string(j);
      dl->AddText(ImVec2(p0.x + (j + 0.5f) * bw - ImGui::CalcTextSize(l.c_str()).x * 0.5f, p0.y + bars_h + 1), text, l.c_str());
    }
  }
  dl->PopClipRect();
  int clicked = -1;
  if (hovered) {
    const int j = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - p0.x) / bw), 0, n - 1);
    // TRANSLATORS: A is the attention weight (the paper's symbol); j the key's position.
    ImGui::SetTooltip(tr("key j = %d '%s'\nA = %s\nclick: select this key"), j, shown_token(token_name(s, j)).c_str(),
                      fmt(probs[static_cast<size_t>(j)], 5, false).c_str());
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) clicked = j;
  }
  return clicked;
}

void VectorBars(const char* label, const Eigen::VectorXd& v, double max_abs, float label_w, ImVec2 size) {
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::PushID(label);
  ImGui::InvisibleButton("vec", size);
  ImGui::PopID();
  const bool hovered = ImGui::IsItemHovered();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 ts = ImGui::CalcTextSize(label);
  dl->AddText(ImVec2(p0.x + label_w - ts.x - 4, p0.y + (size.y - ts.y) * 0.5f), ImGui::GetColorU32(ImGuiCol_Text), label);
  const float x0 = p0.x + label_w, w = size.x - label_w, mid = p0.y + size.y * 0.5f;
  dl->AddRectFilled(ImVec2(x0, p0.y), ImVec2(x0 + w, p0.y + size.y), IM_COL32(30, 32, 38, 255));
  dl->AddLine(ImVec2(x0, mid), ImVec2(x0 + w, mid), IM_COL32(90, 90, 100, 255));
  const int d = static_cast<int>(v.size());
  if (d == 0) return;
  const float bw = w / static_cast<float>(d);
  const ColorScale div = ColorScale::diverging(max_abs);
  for (int k = 0; k < d; ++k) {
    const float h = static_cast<float>(std::clamp(v(k) / div.hi, -1.0, 1.0)) * (size.y * 0.5f - 1);
    dl->AddRectFilled(ImVec2(x0 + k * bw + (bw > 3 ? 0.5f : 0), std::min(mid, mid - h)),
                      ImVec2(x0 + (k + 1) * bw - (bw > 3 ? 0.5f : 0), std::max(mid, mid - h)), color_of(div, v(k)));
  }
  if (hovered && ImGui::GetIO().MousePos.x >= x0) {
    const int k = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - x0) / bw), 0, d - 1);
    // TRANSLATORS: a vector's name (Q_c[i], K_r[δ], …), the dimension index, its value.
    ImGui::SetTooltip(tr("%s, dimension %d: %s"), label, k, fmt(v(k), 5).c_str());
  }
}

void ColorBar(App& app, const ColorScale& scale, float height, const char* caption) {
  // A 1 × 256 texture, top = hi.
  deberta::Matrix ramp(256, 1);
  for (int r = 0; r < 256; ++r) ramp(r, 0) = scale.hi + (scale.lo - scale.hi) * r / 255.0;
  const std::string id = std::string("colorbar") + (scale.map == ColorMap::Viridis ? "V" : "D");
  TextureCache::Entry& e = app.gfx.textures.entries[id];
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
  frame(dl, ImVec2(p0.x - 1, top - 1), ImVec2(p0.x + w + 1, top + h + 1), IM_COL32(90, 90, 100, 255));
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

}  // namespace viewer
