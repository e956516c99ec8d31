// layout.cpp — see layout.h.
#include "layout.h"

#include "panels.h"

#ifdef __EMSCRIPTEN__
#include <GLES3/gl3.h>
#else
#include <GL/gl.h>
#endif
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>

namespace viewer {

std::map<std::string, ImVec4>& window_rects() {
  static std::map<std::string, ImVec4> rects;
  return rects;
}

void set_style() {
  ImGui::StyleColorsDark();
  ImGuiStyle& st = ImGui::GetStyle();
  st.WindowRounding = 0;
  st.FrameRounding = 3;
  st.TabRounding = 3;
  st.WindowPadding = ImVec2(8, 6);
  st.ItemSpacing = ImVec2(7, 5);
  st.Colors[ImGuiCol_WindowBg] = ImVec4(0.10f, 0.11f, 0.13f, 1);
  st.Colors[ImGuiCol_TitleBg] = ImVec4(0.16f, 0.20f, 0.28f, 1);
  st.Colors[ImGuiCol_TitleBgActive] = ImVec4(0.16f, 0.20f, 0.28f, 1);
}


namespace {
void remember_rect(const char* name) {
  const ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
  window_rects()[name] = ImVec4(p.x, p.y, sz.x, sz.y);
}
}  // namespace

// ----------------------------------------------------------------------------------------------
// Layout: a fixed arrangement (no docking in imgui 1.86) that follows the window size.
//   left column: Model & text, Ablations · right: Tokens strip, then the tabbed main area.

void draw_layout(App& app) {
  const ImVec2 full = ImGui::GetIO().DisplaySize;
  const float left_w = std::clamp(full.x * 0.33f, 360.0f, 480.0f);
  const float model_h = std::clamp(full.y * 0.46f, 300.0f, 420.0f);
  const float tokens_h = std::clamp(full.y * 0.11f, 70.0f, 110.0f);
  // NoBackground: the four windows tile the screen, so glClear paints their background. Under
  // software rendering (llvmpipe) this halves the frame time: a window background is a textured,
  // blended quad over every pixel, a clear is a memset.
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoBackground;

  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(left_w, model_h));
  if (ImGui::Begin("Model & text", nullptr, fixed)) remember_rect("Model & text"), DrawModelPanel(app);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, model_h));
  ImGui::SetNextWindowSize(ImVec2(left_w, full.y - model_h));
  if (ImGui::Begin("Ablations", nullptr, fixed)) remember_rect("Ablations"), DrawAblationPanel(app);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(left_w, 0));
  ImGui::SetNextWindowSize(ImVec2(full.x - left_w, tokens_h));
  if (ImGui::Begin("Tokens", nullptr, fixed)) remember_rect("Tokens"), DrawTokensPanel(app);
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(left_w, tokens_h));
  ImGui::SetNextWindowSize(ImVec2(full.x - left_w, full.y - tokens_h));
  if (ImGui::Begin("Explorer", nullptr, fixed | ImGuiWindowFlags_NoTitleBar)) {
    remember_rect("Explorer");
    struct Item {
      Tab tab;
      const char* title;
      void (*draw)(App&);
    };
    const Item items[] = {{Tab::Grid, "Attention grid", DrawGridPanel},
                          {Tab::Head, "Head detail", DrawHeadPanel},
                          {Tab::Distance, "Distance δ", DrawDistancePanel},
                          {Tab::Equation, "Equation", DrawEquationPanel},
                          {Tab::Predictions, "EMD & predictions", DrawPredictionsPanel},
                          {Tab::Compare, "Compare", DrawComparePanel},
                          {Tab::Export, "Export", DrawExportPanel},
                          {Tab::Lesson, "Lesson", DrawLessonPanel},
                          {Tab::Pipeline, "Pipeline", DrawPipelinePanel},
                          {Tab::Links, "Token links", DrawLinksPanel}};
    ViewerState& s = app.state;
    if (ImGui::BeginTabBar("tabs")) {
      for (const Item& it : items) {
        const ImGuiTabItemFlags flags = s.switch_tab && s.tab == it.tab ? ImGuiTabItemFlags_SetSelected : 0;
        const bool open = ImGui::BeginTabItem(it.title, nullptr, flags);
        RecordWidget(s, std::string("tab: ") + it.title);
        if (open) {
          if (s.switch_tab) {
            if (s.tab == it.tab) s.switch_tab = false;
          } else {
            s.tab = it.tab;
          }
          ImGui::BeginChild("content", ImVec2(0, 0), false);
          it.draw(app);
          ImGui::EndChild();
          ImGui::EndTabItem();
        }
      }
      ImGui::EndTabBar();
    }
  }
  ImGui::End();
  DrawPopups(app);
}

// ----------------------------------------------------------------------------------------------
// Keyboard: Ctrl+O open model, Ctrl+E export, arrows move the selected cell (Esc closes popups in DrawPopups).

void handle_keys(ViewerState& s) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_O, false)) s.open_model_popup = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_E, false)) s.open_export_popup = true;
  if (io.WantTextInput || ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId) || !s.result) return;
  const int n = token_count(s);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) s.kj = std::max(s.kj - 1, 0);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) s.kj = std::min(s.kj + 1, n - 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow))) s.qi = std::max(s.qi - 1, 0);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow))) s.qi = std::min(s.qi + 1, n - 1);
}

void build_frame(App& app) {
  ViewerState& s = app.state;
  ImGui::NewFrame();
  handle_keys(s);
  draw_layout(app);
  s.hover_token = s.hover_token_next;
  s.hover_token_next = -1;
  ImGui::Render();
}

void render_frame(GLFWwindow* window, int* fb_w, int* fb_h) {
  glfwGetFramebufferSize(window, fb_w, fb_h);
  glViewport(0, 0, *fb_w, *fb_h);
  const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
  glClearColor(bg.x, bg.y, bg.z, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

}  // namespace viewer
