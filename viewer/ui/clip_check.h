// clip_check.h — finds the text a frame drew cut off at its right or left edge (issue 54, item 5).
//
// Dear ImGui draws a label that is wider than its box clipped: a glyph half outside the box is cut
// at the box's edge (the quad and its texture coordinates shortened together), and the glyphs past it
// are not drawn at all. Nothing on screen says a word was cut, and in Japanese or Italian a label
// that fits in English often no longer does. This reads the frame's draw lists (after ImGui::Render)
// and reports every line of text with a glyph cut sideways: a glyph quad whose texture coordinates
// are narrower than the glyph's own (ImGui's fine clipping, RenderTextClipped: buttons, tabs, table
// cells) or whose quad reaches past its draw command's clip rectangle (a window's or a child's edge).
// Text cut at the top or bottom is a scrolled panel's ordinary state and is not reported.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace viewer {

/// Marks the last item (ImGui's item rectangle) as a text field of this frame: its text scrolls
/// inside the box by design (a path or a sentence longer than the box), so clipped_lines does not
/// report glyphs inside it. Call right after the InputText.
void note_text_field();

/// One line of text cut sideways: the window that drew it (ImDrawList's owner, e.g. "Model & text"),
/// the line's top y and the x of the cut in screen pixels, and how many of its glyphs were cut.
struct ClippedLine {
  std::string window;
  float y = 0, x = 0;
  int glyphs = 0;
};

/// The lines of `draw_data` (the frame just rendered) whose glyphs are cut at the left or right, one
/// entry per (window, line), top to bottom. Glyphs are the font atlas's (io.Fonts: every font and
/// size of the current atlas); images and shapes are not text and are skipped, and so are the text
/// fields of this frame (note_text_field). A cut that falls exactly between two glyphs leaves no trace
/// in the draw lists and is not seen; nor is a cut of less than a pixel (a side bearing). Errors: none (a null
/// `draw_data` gives none).
std::vector<ClippedLine> clipped_lines(const ImDrawData* draw_data);

/// "window 'W': a line at y = Y cut at x = X (N glyphs)", for a test's report.
std::string describe(const ClippedLine& line);

}  // namespace viewer
