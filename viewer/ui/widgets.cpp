// widgets.cpp — small shared widgets and the popups (Ctrl+O open model, Ctrl+E export).
#include "ui/heatmap.h"
#include "panels/panels.h"
#include "ui/clip_check.h"
#include "ui/wrapped_text.h"

#include <imgui.h>

#include <algorithm>

namespace viewer {

namespace {
int resize_callback(ImGuiInputTextCallbackData* data) {
  if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
    auto* str = static_cast<std::string*>(data->UserData);
    str->resize(static_cast<size_t>(data->BufTextLen));
    data->Buf = str->data();
  }
  return 0;
}
}  // namespace

bool InputString(const char* label, std::string* str, int flags) {
  const bool entered = ImGui::InputText(label, str->data(), str->capacity() + 1, flags | ImGuiInputTextFlags_CallbackResize,
                                        resize_callback, str);
  note_text_field();  // its text scrolls inside the box by design (--check-fit)
  return entered;
}

void SameLineIfFits(const char* label) {
  const ImGuiStyle& st = ImGui::GetStyle();
  const float w = ImGui::GetFrameHeight() + st.ItemInnerSpacing.x + ImGui::CalcTextSize(label, nullptr, true).x;
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < w) ImGui::NewLine();
}

void ExportDone(ViewerState& s, const std::string& status, const std::string& path) {
  s.export_status = status;
  // The exporters' reports stay English (the headless mode prints them): "wrote " means success.
  if (status.rfind("wrote ", 0) == 0) s.written_files.push_back(path);
}

void RecordWidget(ViewerState& s, const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  s.widget_rects[name] = {a.x, a.y, b.x, b.y};
}

void HelpMarker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void Note(const std::string& text) { WrappedTextColored(ImVec4(0.65f, 0.68f, 0.72f, 1.0f), text); }

void ErrorText(const std::string& text) { WrappedTextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), text); }

const Result* ResultOrWaiting(const App& app) {
  if (app.state.result) return app.state.result.get();
  WaitingNote(app);
  return nullptr;
}

void WaitingNote(const App& app) {
  const ViewerState& s = app.state;
  if (app.jobs.loading.valid())
    Note(tr("Loading the model…"));
  else if (!s.model)
    Note(tr("No model loaded: choose a model directory in the Model & text panel (or press Ctrl+O)."));
  else if (!s.input_error.empty())
    ErrorText(trf("The input could not be used: {error}", arg("error", tr(s.input_error.c_str()))));
  else if (s.input.inputs.input_ids.empty() && !app.jobs.worker.busy() && s.compute_error.empty())
    Note(tr("No input yet: type the text (or token ids) in the Model & text panel and press Enter."));
  else if (!s.compute_error.empty())
    ErrorText(trf("Could not run the model: {error}", arg("error", s.compute_error)));
  else if (std::string stage; app.jobs.worker.progress(&stage) >= 0)
    // TRANSLATORS: {stage} is the worker's stage, e.g. "layer 3 of 12" (translated too).
    Note(trf("Computing: {stage}…", arg("stage", tr(stage.c_str()))));
  else
    Note(tr("Computing…"));
}

void ComputeProgress(const App& app, const char* label) {
  ImGui::TextColored(ImVec4(1, 0.8f, 0.3f, 1), "%s", label);
  std::string stage;
  if (const double done = app.jobs.worker.progress(&stage); done >= 0) {
    ImGui::SameLine();
    ImGui::ProgressBar(static_cast<float>(done), ImVec2(std::max(ImGui::GetContentRegionAvail().x, 60.0f), 0), tr(stage.c_str()));
  }
}

void DetailNote(int layer) {
  Note(trf("Computing the terms of layer {layer} (c2c, c2p, p2c, logits: deberta::materialize_layer)…", arg("layer", layer)));
}

const LayerDetail* DetailOrNote(const ViewerState& s, int layer) {
  const LayerDetail* d = detail_for(s, layer);
  if (!d) DetailNote(layer);
  return d;
}

std::string selection_text(const ViewerState& s) {
  // TRANSLATORS: i and j are the paper's indices; {query} and {key} are token texts.
  return trf("layer {layer}, head {head},  query i = {i} '{query}'  →  key j = {j} '{key}'", arg("layer", s.layer),
             arg("head", s.head), arg("i", s.qi), arg("query", shown_token(token_name(s, s.qi))), arg("j", s.kj), arg("key", shown_token(token_name(s, s.kj))));
}

bool LayerHeadSliders(ViewerState& s) {
  if (!s.result) return false;
  const auto& c = s.result->model->model.config;
  bool changed = false;
  ImGui::SetNextItemWidth(140);
  changed |= ImGui::SliderInt((std::string(tr("layer")) + "###layer").c_str(), &s.layer, 0, static_cast<int>(c.num_hidden_layers) - 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  changed |= ImGui::SliderInt((std::string(tr("head")) + "###head").c_str(), &s.head, 0, static_cast<int>(c.num_attention_heads) - 1);
  return changed;
}

void DrawPopups(App& app) {
  ViewerState& s = app.state;
  // The popups' IDs stay fixed ("###open_model", "###export") while their titles follow the language.
  const std::string open_model = std::string(tr("Open model")) + "###open_model";
  const std::string export_title = std::string(tr("Export")) + "###export";
  if (s.open_model_popup) {
    ImGui::OpenPopup(open_model.c_str());
    s.open_model_popup = false;
  }
  if (s.open_export_popup) {
    ImGui::OpenPopup(export_title.c_str());
    s.open_export_popup = false;
  }
  ImGui::SetNextWindowSize(ImVec2(620, 0), ImGuiCond_Appearing);
  if (ImGui::BeginPopupModal(open_model.c_str(), nullptr, ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::TextUnformatted(tr("Model directory (config.json + model.safetensors or pytorch_model.bin):"));
    ImGui::SetNextItemWidth(-1);
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    const bool enter = InputString("##path", &s.model_path, ImGuiInputTextFlags_EnterReturnsTrue);
    if (!s.recent.empty()) {
      ImGui::TextUnformatted(tr("Recent:"));
      for (const auto& r : s.recent)
        if (ImGui::Selectable(r.c_str())) s.model_path = r;
    }
    if (ImGui::Button((std::string(tr("Open")) + "###open").c_str()) || enter) {
      start_load(app, s.model_path);
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (ImGui::Button((std::string(tr("Cancel")) + "###cancel").c_str()) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  ImGui::SetNextWindowSize(ImVec2(640, 0), ImGuiCond_Appearing);
  if (ImGui::BeginPopupModal(export_title.c_str(), nullptr, ImGuiWindowFlags_NoSavedSettings)) {
    DrawExportPanel(app);
    ImGui::Separator();
    if (ImGui::Button((std::string(tr("Close")) + "###close").c_str()) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
}

}  // namespace viewer
