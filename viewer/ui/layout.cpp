// layout.cpp — see layout.h.
#include "ui/layout.h"

#include "i18n/i18n.h"
#include "panels/panels.h"

#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#else
#include <GL/gl.h>
#endif
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui_internal.h>  // the Tokens window's title bar rectangle (the size buttons sit in it)

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstring>

namespace viewer {

namespace {
constexpr const char* kUiSizeNames[kUiSizeCount] = {"small", "normal", "large", "larger", "largest"};
constexpr float kUiSizeFactors[kUiSizeCount] = {0.85f, 1.0f, 1.25f, 1.5f, 2.0f};
int g_ui_size = 1;
float g_pixel_ratio = 1.0f;
float g_applied_scale = 0.0f;  // the ui_scale() the style and the fonts were last set for (0: never)
int clamp_size(int step) { return std::clamp(step, 0, kUiSizeCount - 1); }
}  // namespace

const char* ui_size_name(int step) { return kUiSizeNames[clamp_size(step)]; }
float ui_size_factor(int step) { return kUiSizeFactors[clamp_size(step)]; }
int ui_size() { return g_ui_size; }
void set_ui_size(int step) { g_ui_size = clamp_size(step); }
int ui_size_from_name(const char* name) {
  for (int k = 0; k < kUiSizeCount; ++k)
    if (name && std::strcmp(name, kUiSizeNames[k]) == 0) return k;
  return -1;
}
void set_pixel_ratio(float ratio) {
  if (ratio > 0 && std::isfinite(ratio)) g_pixel_ratio = ratio;
}
float pixel_ratio() { return g_pixel_ratio; }
float ui_scale() { return g_pixel_ratio * ui_size_factor(g_ui_size); }

bool apply_ui_scale(App& app) {
  const float scale = ui_scale();
  if (scale == g_applied_scale) return false;
  g_applied_scale = scale;
  set_style();
  app.gfx.fonts.set_scale(scale);
  if (app.gfx.fonts.rebuild_if_needed()) app.gfx.mono = app.gfx.fonts.mono();
  return true;
}

std::map<std::string, ImVec4>& window_rects() {
  static std::map<std::string, ImVec4> rects;
  return rects;
}

void set_style() {
  // From ImGui's default sizes each time: ScaleAllSizes multiplies (and floors) what is there, so
  // scaling the last frame's style again would accumulate over zoom and A+ / A- round trips (issue
  // 55, item 6).
  ImGuiStyle& st = ImGui::GetStyle();
  st = ImGuiStyle();
  ImGui::StyleColorsDark(&st);
  st.WindowRounding = 0;
  st.FrameRounding = 3;
  st.TabRounding = 3;
  st.WindowPadding = ImVec2(8, 6);
  st.ItemSpacing = ImVec2(7, 5);
  st.Colors[ImGuiCol_WindowBg] = ImVec4(0.10f, 0.11f, 0.13f, 1);
  st.Colors[ImGuiCol_TitleBg] = ImVec4(0.16f, 0.20f, 0.28f, 1);
  st.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.16f, 0.20f, 0.28f, 1);
  st.ScaleAllSizes(ui_scale());
}


namespace {
std::string g_log_path, g_log_error;  // set_frame_text_log, frame_text_log_error

void remember_rect(const char* name) {
  const ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
  window_rects()[name] = ImVec4(p.x, p.y, sz.x, sz.y);
  // Dear ImGui's log ends with the window (End calls LogFinish): one log a window, appended.
  if (!g_log_path.empty() && g_log_error.empty()) {
    ImGui::LogToFile(-1, g_log_path.c_str());
    ImGui::LogText("## %s\n", name);
  }
}

struct Page {
  const char* title;
  void (*draw)(App&);
};
// The Explorer's tabs, in order (Tab's order).
// The titles are the English keys the tests record ("tab: Head detail"); they are drawn translated.
constexpr Page kTabs[] = {{N_("Attention grid"), DrawGridPanel},   {N_("Head detail"), DrawHeadPanel},
                          {N_("Distance δ"), DrawDistancePanel},   {N_("Equation"), DrawEquationPanel},
                          {N_("EMD & predictions"), DrawPredictionsPanel}, {N_("Compare"), DrawComparePanel},
                          {N_("Export"), DrawExportPanel},         {N_("Lesson"), DrawLessonPanel},
                          {N_("Pipeline"), DrawPipelinePanel},     {N_("Token links"), DrawLinksPanel}};
static_assert(sizeof kTabs / sizeof kTabs[0] == static_cast<size_t>(Tab::Count), "one page per Tab");
// The left column's and the Tokens strip's windows, which a narrow display shows as tabs too.
constexpr Page kSidePages[] = {
    {N_("Model & text"), DrawModelPanel}, {N_("Ablations"), DrawAblationPanel}, {N_("Tokens"), DrawTokensPanel}};
int g_side_page = -1;  // narrow display: the side page shown instead of the Explorer's tab (−1: none)
const char* g_shown_page = "";

/// A label drawn in the current language whose ImGui ID stays the English key's ("###key"), so that
/// a window, a tab or a button keeps its state when the language changes.
std::string translated_id(const char* key) { return std::string(tr(key)) + "###" + key; }

/// One button of the tab strip, wrapped onto a new row when the row has no room for it; drawn in
/// the tab colours (the others dimmer), `selected` as the active tab. Returns true when clicked.
bool strip_button(const std::string& label_text, bool selected, bool first, float right) {
  const char* label = label_text.c_str();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float w = ImGui::CalcTextSize(label, nullptr, true).x + 2 * st.FramePadding.x;
  if (!first && ImGui::GetItemRectMax().x + st.ItemInnerSpacing.x + w <= right) ImGui::SameLine(0, st.ItemInnerSpacing.x);
  ImVec4 idle = st.Colors[ImGuiCol_Tab];
  idle.w *= 0.55f;
  ImGui::PushStyleColor(ImGuiCol_Button, selected ? st.Colors[ImGuiCol_TabActive] : idle);
  ImGui::PushStyleColor(ImGuiCol_ButtonHovered, st.Colors[ImGuiCol_TabHovered]);
  ImGui::PushStyleColor(ImGuiCol_ButtonActive, st.Colors[ImGuiCol_TabActive]);
  const bool clicked = ImGui::Button(label);
  ImGui::PopStyleColor(3);
  return clicked;
}

/// The language of the interface and the lesson (issue 40): a button with the current language's
/// code that opens a list of the languages by their own names; recorded as "language" and each
/// entry as "language: CODE". Follows the last item on the same row.
void language_button(ViewerState& s) {
  std::string code = i18n::language();
  for (auto& ch : code) ch = static_cast<char>(ch == '_' ? '-' : std::toupper(static_cast<unsigned char>(ch)));
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::Button((code + "###language").c_str())) ImGui::OpenPopup("language menu");
  RecordWidget(s, "language");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tr("Language of the interface and the lesson"));
  if (ImGui::BeginPopup("language menu")) {
    for (const auto& l : i18n::languages()) {
      if (ImGui::MenuItem(l.native_name.c_str(), nullptr, l.code == i18n::language())) i18n::set_language(l.code);
      RecordWidget(s, "language: " + l.code);
    }
    ImGui::EndPopup();
  }
}

/// The interface's size: "A-" smaller, "A+" larger (Ctrl+- and Ctrl+= do the same), recorded as
/// "size: smaller" / "size: larger". `first`: they begin a row; else they follow the last item,
/// wrapped when the row (up to screen x `right`) has no room.
void size_buttons(ViewerState& s, bool first, float right) {
  const char* size_names[kUiSizeCount] = {N_("small"), N_("normal"), N_("large"), N_("larger"), N_("largest")};
  // TRANSLATORS: {size} is one of small, normal, large, larger, largest (translated).
  const std::string tip = trf("Size of the interface: {size}. Ctrl+= larger, Ctrl+- smaller, Ctrl+0 normal.",
                              arg("size", tr(size_names[ui_size()])));
  if (strip_button("A-##size", false, first, right)) set_ui_size(ui_size() - 1);
  RecordWidget(s, "size: smaller");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip.c_str());
  if (strip_button("A+##size", false, false, right)) set_ui_size(ui_size() + 1);
  RecordWidget(s, "size: larger");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip.c_str());
  language_button(s);
}

/// The size buttons at the right end of the current window's title bar (the Tokens window's).
void size_buttons_in_title_bar(ViewerState& s) {
  ImGuiWindow* w = ImGui::GetCurrentWindow();
  const ImRect bar = w->TitleBarRect();
  const ImGuiStyle& st = ImGui::GetStyle();
  const float width = ImGui::CalcTextSize("A-A+ZH-CN").x + 6 * st.FramePadding.x + 2 * st.ItemInnerSpacing.x;
  const ImVec2 keep = ImGui::GetCursorScreenPos();
  ImGui::PushClipRect(bar.Min, bar.Max, false);
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(st.FramePadding.x, 0));
  ImGui::SetCursorScreenPos(ImVec2(bar.Max.x - st.WindowPadding.x - width, bar.Min.y + 1));
  size_buttons(s, true, bar.Max.x);
  ImGui::PopStyleVar();
  ImGui::PopClipRect();
  ImGui::SetCursorScreenPos(keep);
}

/// The tabs as rows of buttons (imgui 1.86's tab bar shrinks tabs that do not fit to a letter or
/// two, and has no second row): `side` pages first when the display is narrow, then the Explorer's
/// tabs (then the size buttons, which otherwise sit in the Tokens window's title bar). Each is recorded as "tab: <title>" (the browser test clicks
/// them). Then the selected page, in a child that scrolls.
void draw_pages(App& app, bool side) {
  ViewerState& s = app.state;
  if (s.switch_tab) g_side_page = -1, s.switch_tab = false;  // a panel asked for a tab (s.tab): show it
  if (!side) g_side_page = -1;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  bool first = true;
  if (side)
    for (int k = 0; k < 3; ++k) {
      if (strip_button(translated_id(kSidePages[k].title), g_side_page == k, first, right)) g_side_page = k;
      RecordWidget(s, std::string("tab: ") + kSidePages[k].title);
      first = false;
    }
  for (int k = 0; k < static_cast<int>(Tab::Count); ++k) {
    if (strip_button(translated_id(kTabs[k].title), g_side_page < 0 && s.tab == static_cast<Tab>(k), first, right))
      s.tab = static_cast<Tab>(k), g_side_page = -1;
    RecordWidget(s, std::string("tab: ") + kTabs[k].title);
    first = false;
  }
  if (side) size_buttons(s, false, right);  // no title bar to hold them: after the tabs
  ImGui::Separator();
  g_shown_page = g_side_page >= 0 ? kSidePages[g_side_page].title : kTabs[static_cast<int>(s.tab)].title;
  ImGui::BeginChild("content", ImVec2(0, 0), false);
  if (g_side_page >= 0)
    kSidePages[g_side_page].draw(app);
  else
    kTabs[static_cast<int>(s.tab)].draw(app);
  ImGui::EndChild();
}
}  // namespace

// ----------------------------------------------------------------------------------------------
// Layout: a fixed arrangement (no docking in imgui 1.86) that follows the window size and ui_scale().
//   left column: Model & text, Ablations · right: Tokens strip, then the tabbed main area.
//   narrow (less than 720 units × scale wide): one window; its tabs hold the side panels too.

void draw_layout(App& app) {
  const ImVec2 full = ImGui::GetIO().DisplaySize;
  const float k = ui_scale();
  // NoBackground: the windows tile the screen, so glClear paints their background. Under
  // software rendering (llvmpipe) this halves the frame time: a window background is a textured,
  // blended quad over every pixel, a clear is a memset.
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoBackground;
  if (full.x < 720.0f * k) {
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(full);
    if (ImGui::Begin("Explorer", nullptr, fixed | ImGuiWindowFlags_NoTitleBar)) {
      remember_rect("Explorer");
      draw_pages(app, true);
    }
    ImGui::End();
    DrawPopups(app);
    return;
  }
  const float left_w = std::clamp(full.x * 0.33f, 360.0f * k, 480.0f * k);
  const float model_h = std::clamp(full.y * 0.46f, 300.0f * k, 420.0f * k);
  const float tokens_h = std::clamp(full.y * 0.11f, 70.0f * k, 110.0f * k);

  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(left_w, model_h));
  if (ImGui::Begin(translated_id("Model & text").c_str(), nullptr, fixed)) remember_rect("Model & text"), DrawModelPanel(app);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, model_h));
  ImGui::SetNextWindowSize(ImVec2(left_w, full.y - model_h));
  if (ImGui::Begin(translated_id("Ablations").c_str(), nullptr, fixed)) remember_rect("Ablations"), DrawAblationPanel(app);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(left_w, 0));
  ImGui::SetNextWindowSize(ImVec2(full.x - left_w, tokens_h));
  if (ImGui::Begin(translated_id("Tokens").c_str(), nullptr, fixed)) {
    remember_rect("Tokens");
    size_buttons_in_title_bar(app.state);
    DrawTokensPanel(app);
  }
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(left_w, tokens_h));
  ImGui::SetNextWindowSize(ImVec2(full.x - left_w, full.y - tokens_h));
  if (ImGui::Begin("Explorer", nullptr, fixed | ImGuiWindowFlags_NoTitleBar)) {
    remember_rect("Explorer");
    draw_pages(app, false);
  }
  ImGui::End();
  DrawPopups(app);
}

const char* shown_page() { return g_shown_page; }

const char* tab_title(const std::string& name) {
  for (int k = 0; k < static_cast<int>(Tab::Count); ++k)
    if (name == tab_name(static_cast<Tab>(k))) return kTabs[k].title;
  return name.c_str();
}

// ----------------------------------------------------------------------------------------------
// Keyboard: Ctrl+O open model, Ctrl+E export, Ctrl+= / Ctrl+- / Ctrl+0 the interface's size,
// arrows move the selected cell (Esc closes popups in DrawPopups). The page (index.html) keeps the
// browser from acting on the same chords (its own zoom, its Open dialog, its address bar).

void handle_keys(ViewerState& s) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_O, false)) s.open_model_popup = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_E, false)) s.open_export_popup = true;
  if (io.KeyCtrl && (ImGui::IsKeyPressed(GLFW_KEY_EQUAL, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD, false)))
    set_ui_size(ui_size() + 1);
  if (io.KeyCtrl && (ImGui::IsKeyPressed(GLFW_KEY_MINUS, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT, false)))
    set_ui_size(ui_size() - 1);
  if (io.KeyCtrl && (ImGui::IsKeyPressed(GLFW_KEY_0, false) || ImGui::IsKeyPressed(GLFW_KEY_KP_0, false))) set_ui_size(1);
  if (io.WantTextInput || ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId) || !s.result) return;
  const int n = token_count(s);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) s.kj = std::max(s.kj - 1, 0);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) s.kj = std::min(s.kj + 1, n - 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) s.qi = std::max(s.qi - 1, 0);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) s.qi = std::min(s.qi + 1, n - 1);
}

void build_frame(App& app) {
  ViewerState& s = app.state;
  apply_ui_scale(app);
  ImGuiIO& io = ImGui::GetIO();
  io.MouseWheel *= kWheelPerNotch;  // one notch: 3 lines, not ImGui's 5 (layout.h)
  io.MouseWheelH *= kWheelPerNotch;
  ImGui::NewFrame();
  if (!g_log_path.empty()) {  // the file holds this frame only
    g_log_error.clear();
    if (std::FILE* f = std::fopen(g_log_path.c_str(), "wb"); !f || std::fclose(f) != 0)
      g_log_error = "cannot write " + g_log_path + ": " + std::strerror(errno);
  }
  handle_keys(s);
  draw_layout(app);
  s.hover_token = s.hover_token_next;
  s.hover_token_next = -1;
  ImGui::Render();
}

void set_frame_text_log(const std::string& path) { g_log_path = path, g_log_error.clear(); }

const std::string& frame_text_log_error() { return g_log_error; }

void render_frame(GLFWwindow* window, int* fb_w, int* fb_h) {
  glfwGetFramebufferSize(window, fb_w, fb_h);
  glViewport(0, 0, *fb_w, *fb_h);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

}  // namespace viewer
