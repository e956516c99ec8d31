// layout.h — the viewer's fixed arrangement of its windows (no docking in imgui 1.86), its style
// and its keyboard shortcuts: the desktop (main.cpp) and the web edition (web/web_main.cpp) draw
// the same frame with these.
#pragma once
#include "app.h"

#include <imgui.h>

struct GLFWwindow;

#include <map>
#include <string>

namespace viewer {

/// The dark style with square windows.
void set_style();
/// Screen rectangles (x, y, w, h) of the four windows as last drawn (for --crop).
std::map<std::string, ImVec4>& window_rects();
/// The four windows: Model & text, Ablations (left column), Tokens and the tabbed Explorer
/// (right), sized from the display size, then the popups.
void draw_layout(App& app);
/// Ctrl+O open model, Ctrl+E export, arrows move the selected cell.
void handle_keys(ViewerState& s);
/// One frame's user interface, between ImGui::NewFrame and ImGui::Render inclusive: the keys,
/// the layout, the hovered token carried to the next frame.
void build_frame(App& app);
/// Draws the rendered frame into `window`'s framebuffer (cleared to the window colour); returns
/// its size in `*fb_w`, `*fb_h`.
void render_frame(GLFWwindow* window, int* fb_w, int* fb_h);

}  // namespace viewer
