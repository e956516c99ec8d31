// layout.h — the viewer's fixed arrangement of its windows (no docking in imgui 1.86), its style
// and its keyboard shortcuts: the desktop (main.cpp) and the web edition (web/web_main.cpp) draw
// the same frame with these.
#pragma once
#include "app/app.h"

#include <imgui.h>

struct GLFWwindow;

#include <map>
#include <string>

namespace viewer {

/// The dark style with square windows, its sizes multiplied by ui_scale() (call again when it changes).
void set_style();

// --- The interface's size (issue 41): one factor for fonts, spacing and the layout's columns.
// ui_scale() = pixel ratio × size step. The pixel ratio is what one ImGui unit is in device pixels
// of the screen: the page's devicePixelRatio (the canvas's framebuffer is at device pixels, so text
// stays sharp on HiDPI screens and under browser zoom), 1 on the desktop. The size steps are the
// user's (Ctrl+= / Ctrl+− / Ctrl+0, the A- A+ buttons in the Tokens window's title bar).

/// The size steps' names, smallest first: "small", "normal", "large", "larger", "largest".
constexpr int kUiSizeCount = 5;
const char* ui_size_name(int step);
/// The factor of step `step` (clamped to [0, kUiSizeCount)): 0.85, 1, 1.25, 1.5, 2.
float ui_size_factor(int step);
/// The current step (1, "normal", at start) and a new one (clamped).
int ui_size();
void set_ui_size(int step);
/// The step named `name`, or −1 when no step has that name.
int ui_size_from_name(const char* name);
/// Device pixels per ImGui unit of the display: the page's devicePixelRatio (> 0), 1 on the desktop.
void set_pixel_ratio(float ratio);
float pixel_ratio();
/// pixel_ratio() × ui_size_factor(ui_size()): what the style, the fonts and the layout are multiplied by.
float ui_scale();
/// Applies ui_scale() when it changed since the last call: the style (set_style) and the font
/// atlas's pixel size (rebuilt here, before ImGui::NewFrame). Returns true when it changed.
/// build_frame calls it; call it yourself only outside build_frame.
bool apply_ui_scale(App& app);
/// The wheel scrolls ImGui's panels by 5 lines a unit of io.MouseWheel; one notch (1.0 from GLFW on
/// the desktop, web_main.cpp's normalised browser wheel in the page) scrolls 3 lines, as other
/// pages and programs do: build_frame multiplies the wheel by this before ImGui reads it.
constexpr float kWheelPerNotch = 0.6f;
/// Screen rectangles (x, y, w, h) of the four windows as last drawn (for --crop).
std::map<std::string, ImVec4>& window_rects();
/// The four windows: Model & text, Ablations (left column), Tokens and the tabbed Explorer
/// (right), sized from the display size and ui_scale(), then the popups. A display narrower than
/// two columns (a phone, a large size on a small window) gets one window whose tabs also hold
/// Model & text, Ablations and Tokens. The tabs wrap onto more rows when they do not fit in one,
/// so every tab stays reachable at every width and size.
void draw_layout(App& app);
/// The title of the page the tab strip shows ("Attention grid", or "Model & text" on a narrow display).
const char* shown_page();

/// The English title of the tab whose --panel name is `name` ("distance" → "Distance δ"), for
/// drawing with tr(); `name` itself when no tab has it.
const char* tab_title(const std::string& name);
/// Ctrl+O open model, Ctrl+E export, Ctrl+= / Ctrl+− / Ctrl+0 the interface's size (larger,
/// smaller, normal), arrows move the selected cell.
void handle_keys(ViewerState& s);
/// One frame's user interface, ImGui::NewFrame to ImGui::Render inclusive: the size (apply_ui_scale,
/// before NewFrame), the wheel scaled to 3 lines a notch, the keys, the layout, the hovered token
/// carried to the next frame.
void build_frame(App& app);
/// Draws the rendered frame into `window`'s framebuffer (cleared to the window colour); returns
/// its size in `*fb_w`, `*fb_h`.
void render_frame(GLFWwindow* window, int* fb_w, int* fb_h);
/// From the next frame on, every frame writes the strings it draws through Dear ImGui to `path`
/// (created anew each frame, so the file holds the last frame): its logging (ImGui::LogToFile) in
/// each of the layout's windows, a "## <window>" line before each, then a line per row on screen
/// (the widgets' labels and text; not text drawn straight into a draw list, not popups, not items
/// scrolled out of view). "" turns it off. Issue 54, item 6 (--log-text).
void set_frame_text_log(const std::string& path);
/// Why the last frame's log could not be written ("" when it was, or when logging is off).
const std::string& frame_text_log_error();

}  // namespace viewer
