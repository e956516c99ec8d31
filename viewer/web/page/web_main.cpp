// web_main.cpp — the web edition's page (docs/web.md): the desktop viewer's frame (layout.cpp,
// every panel, the same worker and core) in a WebGL2 canvas, one thread, float64.
//
// The page's JavaScript (index.html) talks to it through these exported functions:
//   web_open_model_files(dir)  open a model folder the user picked or dropped (written to the
//                              page's memory file system by index.html; nothing is uploaded)
//   web_switch_to_multilingual()  the notice's offer for a text the model does not know: the
//                              bundled multilingual model on the same text
//   web_ablate(flags)          set the ablation from `deberta predict`'s switches ,
//                              as the Ablations panel's check boxes do ("--terms c2c,p2c": c2p off), and re-run
//   web_selftest()             the golden cases bundled in the site (?selftest)
//   web_progress()             the running computation's stage ("layer 3 of 12") or the model
//                              load's ("loading the model: 40 %"), "" when idle
//   web_load_frames()          frames drawn while the last model load ran (the browser test's
//                              "the page does not freeze during a load": ≥ 2 for a stepped load)
//   web_set_load_step_ms(ms)   milliseconds of a load's steps a frame (25; 0: one step a frame, the
//                              browser test's setting, which makes a load span a frame a tensor)
//   web_widget_rect(name)      where a named widget (e.g. the "c2p" switch, the "text" box) was
//                              drawn: the browser test clicks it with real mouse events
//   web_text_input(utf8)       text typed, composed by an input method or pasted into the page's
//                              text bridge (index.html's <input id="text-bridge">): it reaches the
//                              active ImGui text box as typed characters
//   web_stream_open(path, size, header_bytes), web_stream_done(path, error)
//                              a model.safetensors read from the browser's File a tensor at a
//                              time (web_stream.cpp)
//   web_wake(frames)           an input event (index.html's listeners): draw the next `frames` frames
//   web_wheel(dx, dy)          the wheel, in notches (index.html normalises the browser's pixels, lines
//                              or pages; up and left positive, as GLFW's desktop wheel)
//   web_ui()                   the interface's size and scale, the frames drawn, the shown model, as
//                              JSON (the browser test's checks of size, sharpness and idle drawing)
//   web_bench_forward(n, repeat)  the page's own forward timed on the shown model (bench_page.py)
//   web_log_text(path)         from the next frame on, every string a frame draws is written to `path`
//                              in the page's file system (as deberta-viewer --log-text; "" stops): for
//                              tests and screen readers (FS.readFile(path, {encoding: 'utf8'}))
//   web_check_fit()            the last frame's lines of text cut at their side, a line each (as
//                              deberta-viewer --check-fit; "" when none: ui/clip_check.h)
// and the page shows the newest predictions in <pre id="predictions"> and the input's tokens, one a
// line, in <pre id="tokens"> (what the browser test reads; hidden, read by screen readers); what a
// load could not do, at the top (#notice).
//
// Quiet when idle (issue 41): emscripten's main loop runs once an animation frame, but a frame is
// drawn only while something changes: an input event (web_wake), a running load, computation or
// comparison, a resize, and a few frames after each (kSettleFrames: ImGui's hover and layout settle).
// When nothing does, the loop pauses (no animation frames are requested at all) until the next
// web_wake; a focused text box's blinking caret is the browser's (the text bridge's), drawn without a frame.
#include "app/app.h"
#include "i18n/i18n.h"
#include "ui/clip_check.h"
#include "ui/layout.h"
#include "panels/panels.h"

#include "deberta/ablation.h"
#include "deberta/backend.h"  // num_threads: web_bench_forward says how many helped
#include "deberta/inputs.h"  // count_unknown_tokens: the switch offered for a text the model does not know

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <emscripten.h>
#include <emscripten/html5.h>
#include <imgui.h>
#include <imgui_internal.h>  // GImGui: which text box is active, where its cursor is (the text bridge)

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

std::string web_run_selftest();  // web_selftest.cpp
bool web_stream_waiting();         // web_stream.cpp: a streamed model.safetensors waits for a tensor's bytes
void web_stream_pump(bool loading);

namespace {

GLFWwindow* g_window = nullptr;
std::unique_ptr<viewer::App> g_app;
uint64_t g_shown_generation = 0;
int g_load_frames = 0;  // frames begun while model A's load ran, since the last web_open_model_files
double g_load_step_max_ms = 0;   // the longest frame's load steps (run_deferred_jobs) since web_open_model_files
double g_load_step_max_at = 0;   // the load's progress (0–1) when that frame's steps began
std::string g_shown_note;
std::string g_shown_notice;

// Quiet when idle (see the top of the file).
constexpr int kSettleFrames = 4;  // frames drawn after the last event or job
int g_dirty = kSettleFrames;      // frames still to draw
bool g_paused = false;            // the main loop is paused (emscripten_pause_main_loop)
long g_frames_drawn = 0;          // ImGui frames drawn since the page started
int g_ui_size_saved = -1;         // the size step last written to localStorage

// The text bridge (docs/web.md, issue 40): the browser gives input-method text and pasted text
// only to a real HTML text field, never to a canvas. While an ImGui text box is active, index.html
// keeps a nearly invisible <input id="text-bridge"> over it, focused; what lands in that field
// (typed, composed, pasted) comes back through web_text_input() and is handed to ImGui as typed
// characters. Keys (Enter, Escape, Tab, arrows, Backspace, Ctrl+A) still reach ImGui through GLFW.
std::string g_pending_text;  // from web_text_input, not yet given to ImGui
ImVec2 g_ime_pos(0, 0);      // ImGui's IME hook: the active box's cursor (top of the line), ImGui pixels
std::array<float, 9> g_bridge_placed{};  // the last placement sent to index.html (sent again on change)

// Where each item of the frame was drawn, by ImGui ID: Dear ImGui's test-engine hook (the page
// compiles Dear ImGui with IMGUI_ENABLE_TEST_ENGINE; g.TestEngineHookItems on) reports every item's
// frame as it is added. The text bridge covers exactly the active text box's frame with it, never
// the label or the buttons beside the box (issue 55, item 2: the lesson's Check button).
std::unordered_map<ImGuiID, ImRect> g_item_rects;

/// ImGui 1.86's platform IME hook (io.ImeSetInputScreenPosFn): where the text cursor of the active
/// box is; the bridge puts its own caret there, so the browser opens the IME's candidate window at it.
void ime_set_input_pos(int x, int y) { g_ime_pos = ImVec2(static_cast<float>(x), static_cast<float>(y)); }

/// Hands the bridge's text to ImGui (io.AddInputCharactersUTF8: each character as if typed, so
/// the active box inserts it at its cursor, replacing a selection). ImGui drops characters that
/// arrive while Ctrl is held (they are shortcuts), so a Ctrl+V paste waits until Ctrl is released.
void feed_bridge_text() {
  ImGuiIO& io = ImGui::GetIO();
  if (g_pending_text.empty() || (io.KeyCtrl && !io.KeyAlt)) return;
  io.AddInputCharactersUTF8(g_pending_text.c_str());
  g_pending_text.clear();
}

/// Tells index.html where to keep the bridge: over the active, editable ImGui text box's frame
/// (g_item_rects), with the caret at the box's cursor, in CSS pixels (ImGui's units divided by the
/// pixel ratio); hidden otherwise.
void place_text_bridge() {
  const ImGuiContext& g = *GImGui;
  const bool active = g.ActiveId != 0 && g.InputTextState.ID == g.ActiveId &&
                      !(g.InputTextState.Flags & ImGuiInputTextFlags_ReadOnly);
  std::array<float, 9> place{};
  if (active) {
    const float line = g.FontSize, pad = g.Style.FramePadding.y;
    // ImGui draws its cursor at x, x + 1 and reports x − 1 to the IME hook: the bridge's caret (the
    // cursor shown, issue 55 item 8) goes where ImGui's would be.
    const float caret = g_ime_pos.x + 1.0f;
    // The box's frame as ImGui added it this frame; else (not drawn this frame) one line height
    // from its cursor.
    place = {1, g_ime_pos.x, g_ime_pos.y - pad, g_ime_pos.x + line, g_ime_pos.y + line + pad, caret, line, 0, 0};
    if (const auto it = g_item_rects.find(g.ActiveId); it != g_item_rects.end()) {
      const ImRect& r = it->second;
      place = {1, r.Min.x, r.Min.y, r.Max.x, r.Max.y, std::clamp(caret, r.Min.x, r.Max.x), line, 0, 0};
    }
    // The composing text's background: the box's (FrameBg over WindowBg), as 0xRRGGBB.
    const ImVec4 f = g.Style.Colors[ImGuiCol_FrameBg], w = g.Style.Colors[ImGuiCol_WindowBg];
    auto channel = [&](float a, float b) { return static_cast<int>(255.0f * (a * f.w + b * (1.0f - f.w)) + 0.5f); };
    place[7] = static_cast<float>((channel(f.x, w.x) << 16) | (channel(f.y, w.y) << 8) | channel(f.z, w.z));
    // The caret's colour: the box's text colour (the bridge's caret stands for ImGui's cursor).
    const ImVec4 t = g.Style.Colors[ImGuiCol_Text];
    auto byte = [](float a) { return static_cast<int>(255.0f * std::clamp(a, 0.0f, 1.0f) + 0.5f); };
    place[8] = static_cast<float>((byte(t.x) << 16) | (byte(t.y) << 8) | byte(t.z));
  }
  // ImGui's units are device pixels of the canvas (fit_canvas): the page's CSS pixels are those / ratio.
  const float ratio = viewer::pixel_ratio();
  for (int k = 1; k <= 6; ++k) place[static_cast<size_t>(k)] /= ratio;
  if (place == g_bridge_placed) return;
  g_bridge_placed = place;
  EM_ASM({
    if (window.debertaTextBridge) window.debertaTextBridge.place($0 !== 0, $1, $2, $3, $4, $5, $6, $7, $8);
  }, place[0], place[1], place[2], place[3], place[4], place[5], place[6], place[7], place[8]);
}

// The text cursor (issue 55, item 8). A frame costs the same whatever changed (~50 ms of a core in
// software GL), so ImGui's blinking cursor, drawn by a frame at each change, cost 8.5 % of a core at
// its best. The page leaves the blink to the browser: the text bridge's own caret (index.html,
// caret-color) sits at the box's cursor and blinks as every text field does, at the system's rate,
// with no frame drawn; ImGui's cursor is kept in the hidden part of its blink (hide_imgui_cursor),
// so one caret shows. While a box is focused and nothing else changes, the page draws nothing.

/// Keeps the active box's ImGui cursor in the hidden part of its blink this frame: ImGui 1.86
/// (imgui_widgets.cpp InputTextEx) adds io.DeltaTime to CursorAnim, then shows the cursor when it is
/// ≤ 0 or fmod(CursorAnim, 1.2) ≤ 0.8; starting at 1 − DeltaTime it reaches 1.0 (hidden). An edit or
/// a cursor move in this frame resets CursorAnim (shown for this one frame; the settling frames
/// after every input hide it again). Call after ImGui_ImplGlfw_NewFrame (which sets io.DeltaTime).
void hide_imgui_cursor() {
  ImGuiContext& g = *GImGui;
  if (g.ActiveId == 0 || g.InputTextState.ID != g.ActiveId || (g.InputTextState.Flags & ImGuiInputTextFlags_ReadOnly)) return;
  g.IO.ConfigInputTextCursorBlink = true;
  g.InputTextState.CursorAnim = 1.0f - g.IO.DeltaTime;
}

/// Writes `text` into the element with id `id` (textContent).
void set_element_text(const char* id, const std::string& text) {
  EM_ASM({
    const el = document.getElementById(UTF8ToString($0));
    if (el) el.textContent = UTF8ToString($1);
  }, id, text.c_str());
}

/// The predictions of the shown result as lines "position: token (p) …", for the page.
std::string predictions_text(const viewer::ViewerState& s) {
  if (!s.result) return "";
  std::string out = "generation " + std::to_string(s.result->generation) + "\n";
  const auto* tok = s.result->model ? s.result->model->tokenizer.get() : nullptr;
  for (const auto& p : s.result->current) {
    out += std::to_string(p.position) + ":";
    for (size_t k = 0; k < p.top.size() && k < 5; ++k) {
      char prob[32];
      std::snprintf(prob, sizeof prob, " (%.4f)", p.top[k].probability);
      out += " " + (tok ? tok->display(p.top[k].id) : "#" + std::to_string(p.top[k].id)) + prob;
    }
    out += "\n";
  }
  if (!s.result->predict_note.empty()) out += s.result->predict_note + "\n";
  return out;
}

/// Offers the file `path` of the page's memory file system as a download (a Blob and a link
/// clicked by script): exports land in the user's Downloads folder; nothing leaves the machine.
void offer_download(const std::string& path) {
  EM_ASM({
    const path = UTF8ToString($0);
    let data;
    try { data = FS.readFile(path); } catch (e) { console.warn('download: cannot read ' + path); return; }
    const url = URL.createObjectURL(new Blob([data], {type: 'application/octet-stream'}));
    const a = document.createElement('a');
    a.href = url;
    a.download = path.split('/').pop();
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }, path.c_str());
}

/// True when more than half of the letters of `utf8` are outside Latin (code points ≥ U+0250 that
/// are not punctuation or symbols: Hangul, Kana, Han, Cyrillic, …). Spaces, digits and ASCII
/// punctuation do not count; "[MASK]" does not either.
bool mostly_not_latin(const std::string& utf8) {
  size_t latin = 0, other = 0;
  const std::string text = [&] {
    std::string t = utf8;
    for (size_t at; (at = t.find("[MASK]")) != std::string::npos;) t.erase(at, 6);
    return t;
  }();
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
    unsigned c = len == 1 ? b : b & (0xFFu >> (len + 1));
    for (int k = 1; k < len && i + static_cast<size_t>(k) < text.size(); ++k)
      c = (c << 6) | (static_cast<unsigned char>(text[i + static_cast<size_t>(k)]) & 0x3F);
    i += static_cast<size_t>(len);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= 0xC0 && c < 0x250)) ++latin;
    else if (c >= 0x370 && !(c >= 0x2000 && c < 0x2E80) && !(c >= 0x3000 && c < 0x3040) && !(c >= 0xFF00 && c < 0xFF10)) ++other;
  }
  return other > latin;
}

/// Sizes the canvas's framebuffer to its CSS size × devicePixelRatio (device pixels: sharp text on
/// HiDPI screens and under browser zoom) and tells the layout the ratio. The CSS size is the
/// canvas's own (index.html: the page's width, its height less the bar's). Browser.setCanvasSize
/// sets canvas.width/height and GLFW's window size through its resize listener; the mouse
/// positions GLFW reports are then in the same device pixels.
/// Returns true when the size or the ratio changed.
bool fit_canvas() {
  const double ratio = emscripten_get_device_pixel_ratio();
  const int w = static_cast<int>(std::lround(EM_ASM_DOUBLE({ return Module.canvas.clientWidth; }) * ratio));
  const int h = static_cast<int>(std::lround(EM_ASM_DOUBLE({ return Module.canvas.clientHeight; }) * ratio));
  int cw = 0, ch = 0;
  glfwGetWindowSize(g_window, &cw, &ch);
  const bool resized = w > 0 && h > 0 && (w != cw || h != ch);
  if (resized) EM_ASM({ Browser.setCanvasSize($0, $1); }, w, h);
  const bool new_ratio = static_cast<float>(ratio) != viewer::pixel_ratio();
  viewer::set_pixel_ratio(static_cast<float>(ratio));
  return resized || new_ratio;
}

/// The interface's size step, remembered per browser (localStorage "deberta-ui-size": its name).
void load_ui_size() {
  char name[32] = {0};
  EM_ASM({
    let v = null;
    try { v = window.localStorage.getItem('deberta-ui-size'); } catch (e) {}
    stringToUTF8(v || "", $0, 32);
  }, name);
  const int step = viewer::ui_size_from_name(name);
  if (step >= 0) viewer::set_ui_size(step);
  g_ui_size_saved = viewer::ui_size();
}

void save_ui_size() {
  if (viewer::ui_size() == g_ui_size_saved) return;
  g_ui_size_saved = viewer::ui_size();
  EM_ASM({
    try { window.localStorage.setItem('deberta-ui-size', UTF8ToString($0)); } catch (e) {}
  }, viewer::ui_size_name(g_ui_size_saved));
}

/// The last part of a model's path: its folder's name ("/models/deberta-tiny-512" → "deberta-tiny-512";
/// an opened folder's, index.html's "/upload/NAME", → "NAME").
std::string folder_name(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

const char* const kMultilingualModel = "/models/deberta-tiny-multilingual";

/// The switch offered when the shown text is mostly unknown to the model in use (issue 55, item 3):
/// more than deberta::kUnknownTokenWarnShare of its tokens [UNK] or byte pieces (the Model panel's
/// note) on a model other than the bundled multilingual one. The offer names both models; `*action`
/// is the button's label ("" when nothing is offered). The shown result must be the model's.
std::string switch_offer(const viewer::ViewerState& s, std::string* action) {
  using viewer::arg, viewer::trf;
  if (!s.model || !s.model->tokenizer || !s.result || s.result->model != s.model) return "";
  if (s.model->model.directory == kMultilingualModel) return "";
  const deberta::UnknownTokens u = deberta::count_unknown_tokens(*s.model->tokenizer, s.result->input.inputs.input_ids);
  if (u.share() <= deberta::kUnknownTokenWarnShare) return "";
  *action = trf("Switch to {model}", arg("model", folder_name(kMultilingualModel)));
  // TRANSLATORS: {model} is the page's model (a folder's name); {count} and {total} are token counts.
  return trf("{model} does not know this text: {count} of its {total} tokens are unknown ([UNK]) or spelled in bytes. "
             "The multilingual model reads Korean, Japanese, Chinese and more.",
             arg("model", folder_name(s.model->model.directory)), arg("count", u.unknown + u.bytes), arg("total", u.total));
}

/// What the top of the page says (#notice), in the interface's language: a load that failed (the
/// previous model stays), a model loaded as token ids only (its tokenizer could not be read), else
/// the switch to the multilingual model for a text the model does not know (switch_offer: `*action`
/// is its button's label). "" when all is well.
std::string notice_text(const viewer::ViewerState& s, std::string* action) {
  using viewer::arg, viewer::tr, viewer::trf;
  action->clear();
  auto name = [](const std::string& path) {
    if (path.rfind("/upload/", 0) == 0) return trf("the model you opened ({path})", arg("path", folder_name(path)));
    return folder_name(path);
  };
  // TRANSLATORS: {error} is the loader's message (English); {model} a folder's name.
  if (!s.model_error.empty())
    return s.model ? trf("Could not open the model: {error}. The previous model, {model}, stays open.", arg("error", s.model_error),
                         arg("model", name(s.model_path)))
                   : trf("Could not open the model: {error}.", arg("error", s.model_error));
  if (s.model && !s.model->tokenizer)
    return s.model->tokenizer_error.empty()
               ? trf("Open as token ids only: {model}, because its folder has no tokenizer file the page can read "
                     "(tokenizer.json). Type token ids, such as 1, 17, 4, 2, in the Model & text panel; or open the "
                     "folder with its tokenizer.json.",
                     arg("model", name(s.model_path)))
               : trf("Open as token ids only: {model}, because its tokenizer could not be read ({error}). Type token "
                     "ids, such as 1, 17, 4, 2, in the Model & text panel; or open the folder with its tokenizer.json.",
                     arg("model", name(s.model_path)), arg("error", s.model->tokenizer_error));
  return switch_offer(s, action);
}

// ----------------------------------------------------------------------------------------------
// The view in the page's address (issue 41, item 8; issue 55, item 8):
// ?text=…&lang=…&layer=…&head=…&tab=…&terms=…&cell=i,j&step=…&model=…, so that a copied link (the
// bar's "Copy link") opens the same view: the selected cell (query i, key j), the lesson's step
// (1-based, as the Lesson tab numbers it) and which bundled model (its folder's name). Read once at start; written
// back with history.replaceState whenever one of them changes (no new history entry per click).

/// The value of `name` in the page's query string, "" when absent.
std::string url_param(const char* name) {
  const int bytes = EM_ASM_INT({
    const v = new URLSearchParams(window.location.search).get(UTF8ToString($0));
    return v ? lengthBytesUTF8(v) + 1 : 0;
  }, name);
  if (bytes <= 1) return "";
  std::string v(static_cast<size_t>(bytes), '\0');
  EM_ASM({ stringToUTF8(new URLSearchParams(window.location.search).get(UTF8ToString($0)), $1, $2); }, name, v.data(), bytes);
  v.resize(static_cast<size_t>(bytes - 1));
  return v;
}

std::string g_url_terms;     // ?terms= to apply once the model has loaded (a load resets the switches)
std::string g_url_problem;   // what of the address could not be used, said in the notice
std::string g_shown_view;    // the query string last written

/// A non-negative index from the address, or −1 (and a problem noted) for anything else.
int url_index(const char* name) {
  const std::string v = url_param(name);
  if (v.empty()) return -1;
  if (v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos) {
    g_url_problem += viewer::trf(" {name}={value} is not a number;", viewer::arg("name", name), viewer::arg("value", v));
    return -1;
  }
  return std::stoi(v);
}

/// The address's layer, head and tab; its terms wait for the model (apply_url_terms).
void read_url_view(viewer::ViewerState& s) {
  if (const int layer = url_index("layer"); layer >= 0) s.layer = layer;  // clamped to the model once loaded
  if (const int head = url_index("head"); head >= 0) s.head = head;
  if (const std::string tab = url_param("tab"); !tab.empty()) {
    bool known = false;
    for (int k = 0; k < static_cast<int>(viewer::Tab::Count); ++k)
      if (tab == viewer::tab_name(static_cast<viewer::Tab>(k))) s.tab = static_cast<viewer::Tab>(k), s.switch_tab = true, known = true;
    if (!known) g_url_problem += viewer::trf(" tab={value} is not a tab;", viewer::arg("value", tab));
  }
  g_url_terms = url_param("terms");
  if (const std::string cell = url_param("cell"); !cell.empty()) {
    int i = -1, j = -1;
    char tail = 0;
    if (std::sscanf(cell.c_str(), "%4d,%4d%c", &i, &j, &tail) == 2 && i >= 0 && j >= 0)
      s.qi = i, s.kj = j;  // clamped to the input once it is run
    else
      g_url_problem += viewer::trf(" cell={value} is not two numbers i,j;", viewer::arg("value", cell));
  }
  if (const int step = url_index("step"); step >= 1) s.lesson.start_step(step - 1);  // clamped to the lesson's steps
}

/// The bundled models the page carries (CMakeLists.txt's preloads), by folder name.
const char* const kBundledModels[] = {"/models/deberta-tiny-512", "/models/deberta-tiny-multilingual",
                                      "/models/zoo/deberta-tiny-no-c2p"};

/// The folder name of `path` when it is a bundled model, else "" (an opened model has no address).
std::string bundled_name(const std::string& path) {
  for (const char* m : kBundledModels)
    if (path == m) return path.substr(path.find_last_of('/') + 1);
  return "";
}

/// ?model=NAME: the bundled model of that folder name, or "" (and a problem noted) for another name.
std::string url_model() {
  const std::string name = url_param("model");
  if (name.empty()) return "";
  for (const char* m : kBundledModels)
    if (bundled_name(m) == name) return m;
  g_url_problem += viewer::trf(" model={value} is not a model of this page;", viewer::arg("value", name));
  return "";
}

/// ?terms=c2c,c2p: the switches of `deberta predict --terms`, once the first model has loaded.
void apply_url_terms(viewer::App& app) {
  viewer::ViewerState& s = app.state;
  if (g_url_terms.empty() || !s.model || app.jobs.loading.valid()) return;
  try {
    const deberta::Ablation a = deberta::parse_ablation_flags("--terms " + g_url_terms);
    s.ablation.terms = a.terms;
    viewer::request_compute(app);
  } catch (const std::exception& e) {
    g_url_problem += viewer::trf(" terms={value}: {error};", viewer::arg("value", g_url_terms), viewer::arg("error", e.what()));
  }
  g_url_terms.clear();
}

/// Writes the current view into the address when it changed. The terms appear only when the run's
/// differ from the model's own (the resolved switches of the shown result).
void write_url_view(const viewer::ViewerState& s) {
  std::string terms;
  if (s.result && s.model) {
    // The run's switches, normalized (a switch equal to the model's is unset): any set means the
    // terms differ from the model's own.
    const deberta::Ablation& ab = s.result->trace.ablation;
    const auto& now = s.result->trace.context.attention;
    bool switched = false;
    for (deberta::Term t : deberta::kAllTerms) switched |= ab.terms[t].has_value();
    if (switched)
      for (deberta::Term t : deberta::kAllTerms)
        if (now.terms[t]) terms += (terms.empty() ? "" : ",") + std::string(deberta::term_name(t));
  }
  const std::string cell = s.qi || s.kj ? std::to_string(s.qi) + "," + std::to_string(s.kj) : "";
  const std::string step = s.lesson.step > 0 ? std::to_string(s.lesson.step + 1) : "";
  const std::string model = bundled_name(s.model_path);
  const std::string view = s.text + '\x1f' + viewer::i18n::language() + '\x1f' + std::to_string(s.layer) + '\x1f' +
                           std::to_string(s.head) + '\x1f' + viewer::tab_name(s.tab) + '\x1f' + terms + '\x1f' + cell +
                           '\x1f' + step + '\x1f' + model;
  if (view == g_shown_view) return;
  g_shown_view = view;
  EM_ASM({
    const p = new URLSearchParams(window.location.search);
    const set = (k, v) => { if (v) p.set(k, v); else p.delete(k); };
    set("text", UTF8ToString($0));
    set("lang", UTF8ToString($1));
    set("layer", String($2));
    set("head", String($3));
    set("tab", UTF8ToString($4));
    set("terms", UTF8ToString($5));
    set("cell", UTF8ToString($6));
    set("step", UTF8ToString($7));
    set("model", UTF8ToString($8));
    history.replaceState(null, "", "?" + p.toString().replace(/%2C/g, ","));
  }, s.text.c_str(), viewer::i18n::language().c_str(), s.layer, s.head, viewer::tab_name(s.tab), terms.c_str(), cell.c_str(),
     step.c_str(), model.c_str());
}

// The language the page's own strings were last set to (i18n::generation() + 1; 0: never), and
// whether the multilingual model was picked for the link's text (the note under the bar says so).
unsigned g_shown_language = 0;
bool g_multilingual_note = false;
std::string g_start_model;  // the model the page opened first
std::string g_shown_model;  // the model in use when the note was written (it follows the model: issue 55, item 4)

/// The bar's note on the model in use: the multilingual model chosen for the link's text says so;
/// any model other than the one the page started with is named (an opened folder by its name); the
/// start model needs no note.
std::string model_note(const std::string& in_use) {
  using viewer::arg, viewer::tr, viewer::trf;
  // TRANSLATORS: keep the model names deberta-tiny-multilingual and deberta-tiny-512 as written.
  if (g_multilingual_note && in_use == kMultilingualModel) return tr("Model: deberta-tiny-multilingual (chosen for this text; the English "
                                                                     "deberta-tiny-512 is under Recent in the Model panel)");
  if (in_use.empty() || in_use == g_start_model) return "";
  // TRANSLATORS: {model} is the name of the folder the reader opened from their own files.
  if (in_use.rfind("/upload/", 0) == 0) return trf("Model: {model} (from your files)", arg("model", folder_name(in_use)));
  // TRANSLATORS: {model} is a bundled model's name (deberta-tiny-512, deberta-tiny-multilingual, …).
  return trf("Model: {model}", arg("model", folder_name(in_use)));
}

/// The page's own strings and notes in the explorer's language, after the first frame and after the
/// language menu switched it: index.html's debertaSetLanguage, and window.debertaExplorerLanguage
/// for the browser test (check (n)).
void sync_page_language() {
  if (viewer::i18n::generation() + 1 == g_shown_language) return;
  g_shown_language = viewer::i18n::generation() + 1;
  EM_ASM({
    window.debertaExplorerLanguage = UTF8ToString($0);
    if (window.debertaSetLanguage) window.debertaSetLanguage(UTF8ToString($0));
  }, viewer::i18n::language().c_str());
  set_element_text("model-note", model_note(g_shown_model));
  g_shown_note = "\x01", g_shown_notice = "\x01";  // rewritten below in the new language
}

void frame() {
  viewer::App& app = *g_app;
  viewer::ViewerState& s = app.state;
  const std::string in_use = s.model ? s.model->model.directory : "";  // not model_path: the Model panel's box edits it
  if (in_use != g_shown_model) g_shown_model = in_use, g_shown_language = 0;  // the note follows the model
  sync_page_language();
  if (fit_canvas()) g_dirty = kSettleFrames;
  glfwPollEvents();
  feed_bridge_text();
  if (app.jobs.loading.valid() && app.jobs.loading.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
    ++g_load_frames;
  // One thread: ~25 ms of a model load's steps (one tensor each; started in an earlier frame, which
  // showed "Loading the model…") and comparisons started in the previous frame run now, then ~25 ms
  // of the worker's stages (the progress bars move between them).
  // A load from a streamed model.safetensors waits while the page reads its next tensor's bytes
  // from the browser's File (web_stream.cpp), then asks for the bytes its last step found missing.
  if (!web_stream_waiting()) {
    const bool loading = !app.jobs.steppers.empty();
    const double at = app.jobs.load_progress->load(), t0 = emscripten_get_now();
    viewer::run_deferred_jobs(app);
    const double ms = emscripten_get_now() - t0;
    if (loading && ms > g_load_step_max_ms) g_load_step_max_ms = ms, g_load_step_max_at = at;
  }
  web_stream_pump(app.jobs.loading.valid() || app.jobs.loading_b.valid());
  app.jobs.worker.pump();
  viewer::poll_load(app);
  viewer::poll_compare(app);
  viewer::poll_compute(app);
  viewer::poll_detail(app);
  if (s.result && s.result->generation != g_shown_generation) {
    g_shown_generation = s.result->generation;
    set_element_text("predictions", predictions_text(s));
    std::string tokens;
    for (const std::string& name : s.result->input.names) tokens += name + "\n";
    set_element_text("tokens", tokens);
  }
  if (!s.result && g_shown_generation != 0) {  // a new model: the previous one's words go too
    g_shown_generation = 0;
    set_element_text("predictions", "");
    set_element_text("tokens", "");
  }
  const std::string note = s.model_error.empty() ? std::string() : viewer::trf("model: {error}", viewer::arg("error", s.model_error));
  if (note != g_shown_note) set_element_text("status", g_shown_note = note);
  std::string action;
  const std::string notice = g_url_problem.empty() ? notice_text(s, &action)
                                                   : viewer::trf("The address has values the page cannot use:{problems} "
                                                                 "the rest of the view is shown.",
                                                                 viewer::arg("problems", g_url_problem));
  if (notice + '\x01' + action != g_shown_notice) {
    g_shown_notice = notice + '\x01' + action;
    // An offer (a button to act on) is news, not an error: index.html shows it in the info colours.
    EM_ASM({ if (window.debertaNotice) window.debertaNotice(UTF8ToString($0), UTF8ToString($1)); }, notice.c_str(), action.c_str());
  }
  apply_url_terms(app);
  write_url_view(s);
  save_ui_size();

  // Draw only while something changes (the top of the file).
  const viewer::Jobs& j = app.jobs;
  const bool busy = j.loading.valid() || !j.steppers.empty() || j.worker.busy() || viewer::compare_busy(app) ||
                    !viewer::settled(app) || !g_pending_text.empty() || !s.window_png_request.empty();
  if (busy) g_dirty = kSettleFrames;
  if (g_dirty <= 0) {
    g_paused = true;
    emscripten_pause_main_loop();
    return;
  }
  --g_dirty;
  ++g_frames_drawn;

  app.gfx.fonts.require_state(s);
  if (app.gfx.fonts.rebuild_if_needed()) app.gfx.mono = app.gfx.fonts.mono();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  hide_imgui_cursor();
  g_item_rects.clear();
  viewer::build_frame(app);
  place_text_bridge();
  int fb_w = 0, fb_h = 0;
  viewer::render_frame(g_window, &fb_w, &fb_h);
  if (!s.window_png_request.empty()) {  // read before the browser composites the frame
    const std::string err = viewer::write_window_png(s.window_png_request, fb_h, 0, 0, fb_w, fb_h);
    viewer::ExportDone(s, err.empty() ? "wrote " + s.window_png_request : err, s.window_png_request);
    s.window_png_request.clear();
  }
  for (const std::string& path : s.written_files) offer_download(path);
  s.written_files.clear();
  glfwSwapBuffers(g_window);
}

}  // namespace

// Dear ImGui's test-engine hooks (imgui_internal.h, IMGUI_ENABLE_TEST_ENGINE): only the items'
// frames are kept (g_item_rects); the rest are not used.
void ImGuiTestEngineHook_ItemAdd(ImGuiContext*, const ImRect& bb, ImGuiID id) { g_item_rects[id] = bb; }
void ImGuiTestEngineHook_ItemInfo(ImGuiContext*, ImGuiID, const char*, ImGuiItemStatusFlags) {}
void ImGuiTestEngineHook_Log(ImGuiContext*, const char*, ...) {}
const char* ImGuiTestEngine_FindItemDebugLabel(ImGuiContext*, ImGuiID) { return nullptr; }

extern "C" {

EMSCRIPTEN_KEEPALIVE void web_wake(int frames);

/// Opens the model folder `dir` of the page's file system (written there by index.html from the
/// files the user picked or dropped): the same background load as the model panel's "open". The
/// shown model, its name and its maps stay until the new one has loaded; a load that fails keeps
/// them and says why at the top of the page.
EMSCRIPTEN_KEEPALIVE void web_open_model_files(const char* dir) {
  if (!g_app) return;
  g_load_frames = 0;
  g_load_step_max_ms = g_load_step_max_at = 0;
  *g_app->jobs.load_steps = {};
  viewer::start_load(*g_app, dir);
  web_wake(kSettleFrames);
}

/// The notice's button (switch_offer): opens the bundled multilingual model on the same text.
EMSCRIPTEN_KEEPALIVE void web_switch_to_multilingual() { web_open_model_files(kMultilingualModel); }

/// Frames begun while the model load started by the last `web_open_model_files` ran: a load done
/// in one call is seen by one frame; a stepped one by every frame it spans (with
/// `web_set_load_step_ms(0)`, one a tensor). The browser test's check (g) (issue 44: a count, not a speed).
EMSCRIPTEN_KEEPALIVE int web_load_frames() { return g_load_frames; }

/// The model loads' steps since the last `web_open_model_files` (or the page's start), as "FRAME_MS
/// AT STEP_MS STEPS POSITION_STEPS THREAD_STEPS STAGE": the longest time one frame spent in them and
/// the load's progress (0–1) when those steps began; the longest single step (`Jobs::load_steps`),
/// the number of steps run, how many of them built the position table and how many looked at the
/// tokenizer's own thread (the threaded build: LoadJob's tokenizer_thread; 0 in the one-thread
/// build); and what the longest step did ("tensor 2 of 203 (…)", "weight map", "position table",
/// "tokenizer"; it may hold spaces, so it comes last). The browser test's checks (r), (t) and (u)
/// assert the position table took a step per product at least and which build parsed the tokenizer
/// where, and print the figures (issue 55, item 4).
EMSCRIPTEN_KEEPALIVE const char* web_load_longest_step() {
  static std::string out;
  const viewer::Jobs::StepRecord& r = *g_app->jobs.load_steps;
  char head[128];
  std::snprintf(head, sizeof head, "%.1f %.3f %.1f %lld %lld %lld ", g_load_step_max_ms, g_load_step_max_at, r.longest_ms,
                static_cast<long long>(r.steps), static_cast<long long>(r.position_steps),
                static_cast<long long>(r.tokenizer_thread_steps));
  out = head + (r.longest_stage.empty() ? std::string("-") : r.longest_stage);
  return out.c_str();
}

/// Sets the time a frame gives the model loads' steps (`Jobs::step_ms`, 25 ms by default; at least
/// one step runs a frame). 0: one step a frame, so a load spans as many frames as it has tensors
/// on a fast machine as on a busy one (the browser test's check (g)). Negative or NaN: ignored.
EMSCRIPTEN_KEEPALIVE void web_set_load_step_ms(double ms) {
  if (g_app && ms >= 0) g_app->jobs.step_ms = ms;
}

/// The page's own forward timed on the shown model (issue 55, item 9; viewer/web/bench/bench_page.py):
/// `n` token ids drawn as `deberta bench` draws them (core/src/analysis/bench.cpp `bench_inputs`:
/// std::mt19937_64 seeded 7, each id modulo vocab_size; every 7th position a [MASK]), then `repeat`
/// runs of (a) what the page runs for a new input, `viewer::compute_result` with no previous result
/// (the forward at TraceLevel::Probs with the decoder stage, the EMD, the MLM head at the masks once
/// per distinct hidden state, the heads), and (b) what `deberta bench` and forward_bench time, the
/// forward at TraceLevel::Probs and `mlm_logits` at the masks. On this thread, the page's threads
/// helping (`web_threads()`). Returns JSON {"n", "threads", "page_ms": [..], "bench_ms": [..]}
/// (milliseconds, performance.now()), or {"error": "..."} without a model or for a bad `n`.
EMSCRIPTEN_KEEPALIVE const char* web_bench_forward(int n, int repeat) {
  static std::string out;
  try {
    if (!g_app || !g_app->state.model) throw std::runtime_error("no model loaded");
    const std::shared_ptr<const viewer::LoadedModel> lm = g_app->state.model;
    const deberta::Model& model = lm->model;
    if (n < 1 || n > model.config.max_position_embeddings) throw std::runtime_error("n outside [1, max_position_embeddings]");
    viewer::TokenInput input;
    std::mt19937_64 rng(7);  // as bench_inputs
    for (int i = 0; i < n; ++i) input.inputs.input_ids.push_back(static_cast<int64_t>(rng() % model.config.vocab_size));
    for (int i = 0; i < n; i += 7) input.mask_positions.push_back(i);
    for (int i = 0; i < n; ++i) input.names.push_back(std::to_string(input.inputs.input_ids[static_cast<size_t>(i)]));
    viewer::Request r;
    r.generation = 1;
    r.model = lm;
    std::string page = "[", bench = "[";
    for (int k = 0; k < std::max(1, repeat); ++k) {
      double t0 = emscripten_get_now();
      (void)viewer::compute_result(r, input, nullptr);
      page += (k ? ", " : "") + std::to_string(emscripten_get_now() - t0);
      t0 = emscripten_get_now();
      const deberta::ForwardTrace trace = deberta::forward(model, input.inputs, {}, deberta::TraceLevel::Probs, true);
      (void)deberta::mlm_logits(model, trace.decoder_output(), input.mask_positions);
      bench += (k ? ", " : "") + std::to_string(emscripten_get_now() - t0);
    }
    out = "{\"n\": " + std::to_string(n) + ", \"threads\": " + std::to_string(deberta::num_threads()) +
          ", \"page_ms\": " + page + "], \"bench_ms\": " + bench + "]}";
  } catch (const std::exception& e) {
    out = std::string("{\"error\": \"") + e.what() + "\"}";
  }
  return out.c_str();
}

/// Sets the ablation from `deberta predict`'s switches and re-runs; returns "" or the error.
EMSCRIPTEN_KEEPALIVE const char* web_ablate(const char* flags) {
  static std::string error;
  error.clear();
  if (!g_app) return "";
  try {
    g_app->state.ablation = deberta::parse_ablation_flags(flags);
    viewer::request_compute(*g_app);
    web_wake(kSettleFrames);
  } catch (const std::exception& e) {
    error = e.what();
  }
  return error.c_str();
}

/// Where the widget `name` (e.g. "c2p") was drawn in the last frame, as "x0 y0 x1 y1" in CSS
/// pixels of the canvas (ImGui's device pixels / the pixel ratio), or "" when it was not drawn: the browser test clicks its centre with
/// real mouse events (DevTools Input.dispatchMouseEvent), through GLFW and ImGui like a user's.
/// Every string of the frames from the next one on written to `path` in the page's file system (each
/// frame replaces the file: ui/layout.h set_frame_text_log); "" stops. Draws two frames so the file is
/// there when the page is idle. Errors: a path that cannot be written leaves the file absent.
EMSCRIPTEN_KEEPALIVE void web_log_text(const char* path) {
  viewer::set_frame_text_log(path ? path : "");
  web_wake(2);
}

/// The lines of text the last frame drew cut at their left or right (ui/clip_check.h), one
/// "window 'W' line at y = Y cut at x = X (N glyphs)" a line; "" when none.
EMSCRIPTEN_KEEPALIVE const char* web_check_fit() {
  static std::string out;
  out.clear();
  for (const viewer::ClippedLine& line : viewer::clipped_lines(ImGui::GetDrawData())) out += viewer::describe(line) + "\n";
  return out.c_str();
}

EMSCRIPTEN_KEEPALIVE const char* web_widget_rect(const char* name) {
  static std::string out;
  out.clear();
  if (!g_app) return "";
  const auto it = g_app->state.widget_rects.find(name);
  if (it == g_app->state.widget_rects.end()) return "";
  const auto& r = it->second;
  const float k = viewer::pixel_ratio();
  out = std::to_string(r[0] / k) + " " + std::to_string(r[1] / k) + " " + std::to_string(r[2] / k) + " " +
        std::to_string(r[3] / k);
  return out.c_str();
}

/// The running computation's stage as the progress bar names it ("layer 3 of 12"), or "" when
/// idle: the browser test records it once a frame to see the page draw between stages.
EMSCRIPTEN_KEEPALIVE const char* web_progress() {
  static std::string stage;
  stage.clear();
  if (!g_app) return stage.c_str();
  const viewer::Jobs& j = g_app->jobs;
  if (j.loading.valid() && j.loading.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    stage = "loading the model: " + std::to_string(static_cast<int>(100.0 * j.load_progress->load())) + " %";
    return stage.c_str();
  }
  if (j.worker.progress(&stage) < 0) stage.clear();
  return stage.c_str();
}

/// Text from the page's text bridge (index.html: typed, committed by an input method, or pasted;
/// UTF-8, newlines already turned into spaces): queued, and given to the active ImGui text box at
/// the next frame as typed characters (feed_bridge_text). Text with no active box is dropped by
/// ImGui, as keys pressed over no text box are.
EMSCRIPTEN_KEEPALIVE void web_text_input(const char* utf8) {
  if (utf8) g_pending_text += utf8;
  web_wake(kSettleFrames);
}

/// Something the page must show happened (an input event, a resize; index.html): draws at least
/// the next `frames` frames, resuming the paused main loop.
EMSCRIPTEN_KEEPALIVE void web_wake(int frames) {
  g_dirty = std::max(g_dirty, frames);
  if (g_paused) {
    g_paused = false;
    emscripten_resume_main_loop();
  }
}

/// The wheel turned by `dx`, `dy` notches (index.html: the browser's pixels / 100, lines / 3 or
/// pages; up and left positive, as GLFW's wheel on the desktop). ImGui scrolls 3 lines a notch
/// (layout.h kWheelPerNotch); Ctrl+wheel zooms a map.
EMSCRIPTEN_KEEPALIVE void web_wheel(double dx, double dy) {
  ImGuiIO& io = ImGui::GetIO();
  io.MouseWheelH += static_cast<float>(dx);
  io.MouseWheel += static_cast<float>(dy);
  web_wake(kSettleFrames);
}

/// The interface's state as JSON: {"size": "large", "scale": 2.5, "ratio": 2, "font_css": 18.75,
/// "display": [w, h] (ImGui units = device pixels), "frames": frames drawn, "paused": 0|1,
/// "zoom": the most zoomed map's zoom, "model_scroll": the Model & text window's scroll (ImGui
/// units), "font": the font size (ImGui units), "cell": [query i, key j] selected, "step": the
/// lesson's step (0-based), "attempts": answers judged on it, "page": the tab shown (layout.h shown_page),
/// "compute_ms": the shown result's time inside its stages (the Model panel's "last run"; a re-run's
/// from its first changed layer), "tokens": its token count, "model": the shown model's folder, "result_model": the folder of the model the shown maps are
/// of ("" without maps), "tokenizer": 0|1, "cjk_font": the CJK font that draws Han characters
/// first (fonts.h cjk_order), "language": the interface's}. Read by the browser test.
EMSCRIPTEN_KEEPALIVE const char* web_ui() {
  static std::string out;
  if (!g_app) return "";
  const viewer::ViewerState& s = g_app->state;
  const ImGuiIO& io = ImGui::GetIO();
  auto quoted = [](const std::string& v) {
    std::string q = "\"";
    for (char c : v) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  char nums[512];
  std::snprintf(nums, sizeof nums, "\"scale\": %.4f, \"ratio\": %.4f, \"font_css\": %.3f, \"display\": [%.0f, %.0f], "
                "\"frames\": %ld, \"paused\": %d, \"tokenizer\": %d", viewer::ui_scale(), viewer::pixel_ratio(),
                ImGui::GetFontSize() / viewer::pixel_ratio(), io.DisplaySize.x, io.DisplaySize.y, g_frames_drawn,
                g_paused ? 1 : 0, s.model && s.model->tokenizer ? 1 : 0);
  float zoom = 1.0f;  // the most zoomed map
  for (const auto& [id, v] : s.map_views) zoom = std::max(zoom, v.zoom);
  // The window's ID is its English key after "###" (layout.cpp's translated_id), whatever the language.
  const ImGuiWindow* model_window = ImGui::FindWindowByName("###Model & text");
  std::snprintf(nums + std::strlen(nums), sizeof nums - std::strlen(nums),
                ", \"zoom\": %.4f, \"model_scroll\": %.2f, \"font\": %.3f, \"layer\": %d, \"head\": %d", zoom,
                model_window ? model_window->Scroll.y : -1.0f, ImGui::GetFontSize(), s.layer, s.head);
  std::snprintf(nums + std::strlen(nums), sizeof nums - std::strlen(nums),
                ", \"cell\": [%d, %d], \"step\": %d, \"attempts\": %d, \"compute_ms\": %.3f, \"tokens\": %d", s.qi, s.kj,
                s.lesson.step, s.lesson.attempts, s.result ? s.result->compute_ms : 0.0, viewer::token_count(s));
  const std::vector<std::string> cjk = g_app->gfx.fonts.fallbacks();
  out = std::string("{\"size\": ") + quoted(viewer::ui_size_name(viewer::ui_size())) + ", " + nums +
        ", \"cjk_font\": " + quoted(cjk.empty() ? "" : cjk.front()) + ", \"language\": " + quoted(viewer::i18n::language()) +
        ", \"page\": " + quoted(viewer::shown_page()) +
        ", \"model\": " + quoted(s.model ? s.model_path : "") +
        ", \"result_model\": " + quoted(s.result && s.result->model ? s.result->model->model.directory : "") + "}";
  return out.c_str();
}

/// How many characters of `utf8` the current font atlas has no glyph for (drawn as U+FFFD): the
/// browser test's check that the language menu's names are drawn (issue 55, item 1).
EMSCRIPTEN_KEEPALIVE int web_glyphs_missing(const char* utf8) {
  if (!g_app || !utf8) return -1;
  const ImFont* font = ImGui::GetIO().Fonts->Fonts[0];
  int missing = 0;
  for (const char* p = utf8; *p;) {
    unsigned c = 0;
    const int n = ImTextCharFromUtf8(&c, p, nullptr);
    if (n <= 0) break;
    p += n;
    if (c > 0x20 && (c > 0xFFFF || !font->FindGlyphNoFallback(static_cast<ImWchar>(c)))) ++missing;
  }
  return missing;
}

/// Runs the golden cases bundled in the site; returns "selftest: N passed, M failed".
EMSCRIPTEN_KEEPALIVE const char* web_selftest() {
  static std::string line;
  line = web_run_selftest();
  return line.c_str();
}

}  // extern "C"

int main() {
  if (!glfwInit()) {
    std::fprintf(stderr, "deberta-explorer: glfwInit failed\n");
    return 1;
  }
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  g_window = glfwCreateWindow(1280, 800, "DeBERTa Explorer", nullptr, nullptr);
  if (!g_window) {
    std::fprintf(stderr, "deberta-explorer: no WebGL2 context\n");
    return 1;
  }
  glfwMakeContextCurrent(g_window);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  GImGui->TestEngineHookItems = true;  // the items' frames, for the text bridge (g_item_rects)
  ImGui::GetIO().IniFilename = nullptr;
  ImGui_ImplGlfw_InitForOpenGL(g_window, true);
  ImGuiIO& io = ImGui::GetIO();
  io.ImeSetInputScreenPosFn = ime_set_input_pos;
  // Emscripten's GLFW has no clipboard (glfwGetClipboardString returns nothing): pastes come
  // through the bridge's paste event; ImGui's copies (Ctrl+C, Ctrl+X in a box) go to the system
  // clipboard when the browser allows it (navigator.clipboard, a secure page such as localhost).
  io.GetClipboardTextFn = [](void*) -> const char* { return nullptr; };
  io.SetClipboardTextFn = [](void*, const char* text) {
    EM_ASM({
      if (navigator.clipboard && navigator.clipboard.writeText)
        navigator.clipboard.writeText(UTF8ToString($0)).catch(() => {});
    }, text);
  };
  ImGui_ImplOpenGL3_Init("#version 300 es");
  viewer::set_style();

  // The interface's language: ?lang=, else the browser's navigator.languages (docs/i18n.md).
  viewer::i18n::set_language(viewer::i18n::from_page());
  g_app = std::make_unique<viewer::App>();
  viewer::App& app = *g_app;
  app.gfx.mono = app.gfx.fonts.init();
  load_ui_size();  // the size this browser chose last time
  viewer::ViewerState& s = app.state;
  s.text = "In the beginning God created the heaven and the [MASK].";
  // A Korean, Japanese or Chinese reader's first sentence is in their language (issue 55, item 3):
  // the interface's language (?lang=, else the browser's) picks it, and with it the multilingual model.
  const std::string& language = viewer::i18n::language();
  if (language == "ko") s.text = "나는 도서관에서 책을 [MASK].";
  if (language == "ja") s.text = "私は図書館で本を[MASK]。";
  if (language == "zh_CN") s.text = "我在图书馆看[MASK]。";
  // index.html?text=…: the input to start with (a link from a blog note or a slide can carry its
  // sentence); then the rest of the view a copied link carries.
  if (std::string given = url_param("text"); !given.empty()) s.text = given;
  read_url_view(s);
  s.zoo_dir = "/models/zoo";
  // The multilingual model for a text that is mostly not Latin (Hangul, Kana, Han, …; issue 40);
  // the other bundled model stays one click away in the Model panel's recent list.
  const char* kMultilingual = kMultilingualModel;
  // A link's ?model= (a bundled model) wins over the text's script.
  const std::string linked = url_model();
  const bool multilingual = linked.empty() ? mostly_not_latin(s.text) : linked == kMultilingual;
  s.model_path = !linked.empty() ? linked : multilingual ? kMultilingual : DEBERTA_DEFAULT_MODEL;
  s.recent.clear();
  for (const char* m : kBundledModels)
    if (s.model_path != m) s.recent.push_back(m);
  g_multilingual_note = multilingual && linked.empty();  // the note is written by sync_page_language, in the page's language
  g_start_model = s.model_path;
  viewer::start_load(app, s.model_path);

  const bool selftest = EM_ASM_INT({ return new URLSearchParams(window.location.search).has("selftest") ? 1 : 0; });
  if (selftest) {
    const std::string line = web_selftest();
    EM_ASM({ if (window.debertaSelftest) window.debertaSelftest(UTF8ToString($0)); }, line.c_str());
    set_element_text("selftest", line);
  }
  emscripten_set_main_loop(frame, 0, false);
  return 0;
}
