// clip_check.cpp — text cut sideways in a rendered frame (see clip_check.h).
#include "ui/clip_check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

namespace viewer {

namespace {

/// A texture coordinate pair as exact bits: a glyph's vertices carry its U0/V0/U1 unchanged unless
/// ImGui cut the glyph.
uint64_t key(float u, float v) {
  uint32_t a = 0, b = 0;
  std::memcpy(&a, &u, sizeof a);
  std::memcpy(&b, &v, sizeof b);
  return (static_cast<uint64_t>(a) << 32) | b;
}

/// The text fields of frame `fields_frame` (note_text_field): min x, min y, max x, max y.
std::vector<ImVec4> fields;
int fields_frame = -1;

}  // namespace

void note_text_field() {
  if (ImGui::GetFrameCount() != fields_frame) fields.clear(), fields_frame = ImGui::GetFrameCount();
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  fields.push_back({a.x, a.y, b.x, b.y});
}

std::vector<ClippedLine> clipped_lines(const ImDrawData* draw_data) {
  std::vector<ClippedLine> out;
  if (!draw_data || !ImGui::GetCurrentContext()) return out;
  const ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  // Every glyph of the atlas by its left edge (U0, V0) and by its right edge (U1, V0).
  std::unordered_map<uint64_t, const ImFontGlyph*> by_left, by_right;
  for (const ImFont* font : atlas->Fonts)
    for (const ImFontGlyph& g : font->Glyphs) {
      if (!g.Visible) continue;
      by_left.emplace(key(g.U0, g.V0), &g);
      by_right.emplace(key(g.U1, g.V0), &g);
    }
  std::map<std::tuple<std::string, int>, ClippedLine> lines;  // (window, line top) → the line
  for (int l = 0; l < draw_data->CmdListsCount; ++l) {
    const ImDrawList* list = draw_data->CmdLists[l];
    const std::string owner = list->_OwnerName ? list->_OwnerName : "";
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (cmd.UserCallback || cmd.TextureId != atlas->TexID) continue;
      // A glyph is a quad: 4 vertices, indices a, a+1, a+2, a, a+2, a+3 (ImFont::RenderText).
      for (unsigned int e = 0; e + 6 <= cmd.ElemCount; e += 6) {
        const ImDrawIdx* ix = list->IdxBuffer.Data + cmd.IdxOffset + e;
        const unsigned int a = ix[0];
        if (ix[1] != a + 1 || ix[2] != a + 2 || ix[3] != a || ix[4] != a + 2 || ix[5] != a + 3) continue;
        const ImDrawVert& tl = list->VtxBuffer[static_cast<int>(cmd.VtxOffset + a)];
        const ImDrawVert& br = list->VtxBuffer[static_cast<int>(cmd.VtxOffset + a + 2)];
        if (tl.uv.x == br.uv.x) continue;  // a solid shape (the white pixel)
        // The glyph's whole width in texture units, and the part of it drawn.
        float whole = 0;
        if (auto g = by_left.find(key(tl.uv.x, tl.uv.y)); g != by_left.end()) {
          whole = g->second->U1 - g->second->U0;  // its right part may be cut off (fine clipping)
        } else if (auto h = by_right.find(key(br.uv.x, tl.uv.y)); h != by_right.end()) {
          whole = h->second->U1 - h->second->U0;  // its left part may be cut off
        } else {
          continue;  // not a glyph (or one cut at the top: a scrolled line)
        }
        const float cx = 0.5f * (tl.pos.x + br.pos.x), cy = 0.5f * (tl.pos.y + br.pos.y);
        if (fields_frame == ImGui::GetFrameCount() &&
            std::any_of(fields.begin(), fields.end(), [&](const ImVec4& f) { return cx >= f.x && cx <= f.z && cy >= f.y && cy <= f.w; }))
          continue;  // a text field's own scrolling
        const float drawn_px = br.pos.x - tl.pos.x;
        const float drawn = br.uv.x - tl.uv.x;
        float cut_px = drawn > 0 ? drawn_px * (whole / drawn - 1) : 0;
        // Or drawn whole but reaching past its command's clip rectangle (the GPU cuts it).
        cut_px = std::max({cut_px, br.pos.x - cmd.ClipRect.z, cmd.ClipRect.x - tl.pos.x});
        // Less than a pixel: a glyph's side bearing (a 'T' at a column's left edge), not a cut word.
        if (cut_px < 1.0f) continue;
        const int row = static_cast<int>(std::lround(tl.pos.y));
        ClippedLine& line = lines[{owner, row}];
        if (line.glyphs == 0) line.window = owner, line.y = tl.pos.y, line.x = br.pos.x;
        ++line.glyphs;
      }
    }
  }
  // Glyphs of one line start at slightly different tops (accents, CJK): merge rows within 2 px.
  for (auto& [k, line] : lines) {
    if (!out.empty() && out.back().window == line.window && std::fabs(out.back().y - line.y) <= 2.0f) {
      out.back().glyphs += line.glyphs;
      continue;
    }
    out.push_back(line);
  }
  return out;
}

std::string describe(const ClippedLine& line) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "' line at y = %.0f cut at x = %.0f (%d glyph%s)", line.y, line.x, line.glyphs,
                line.glyphs == 1 ? "" : "s");
  return "window '" + line.window + buf;
}

}  // namespace viewer
