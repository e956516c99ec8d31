// panel_model.cpp — Model & text: directory, recent list, load progress, config summary, input.
#include "ui/heatmap.h"
#include "panels/panels.h"

#include "deberta/heads.h"
#include "deberta/inputs.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace viewer {

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

/// The model folder's box, the recent list, the load's progress and its error. Returns whether a
/// model is loaded (the rest of the panel needs one).
bool model_directory(App& app) {
  ViewerState& s = app.state;
  ImGui::TextUnformatted(tr("Model directory"));
  HelpMarker(tr("A folder with config.json and model.safetensors (or pytorch_model.bin); a tokenizer "
                "(spm.model, vocab.json + merges.txt or tokenizer.json) is optional. Ctrl+O opens this too."));
  // The box takes the row but the room of the button beside it (its label in the language and size).
  const std::string load = std::string(tr("Load")) + "###load";
  const float button = ImGui::CalcTextSize(load.c_str(), nullptr, true).x + 2 * ImGui::GetStyle().FramePadding.x +
                       ImGui::GetStyle().ItemSpacing.x;
  ImGui::SetNextItemWidth(-button);
  const bool enter = InputString("##model", &s.model_path, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button(load.c_str()) || enter) start_load(app, s.model_path);
  if (!s.recent.empty()) {
    const std::string recent = std::string(tr("recent")) + "###recent";
    ImGui::SetNextItemWidth(-(ImGui::CalcTextSize(recent.c_str(), nullptr, true).x + ImGui::GetStyle().ItemInnerSpacing.x));
    if (ImGui::BeginCombo(recent.c_str(), s.recent.front().c_str())) {
      for (const auto& r : s.recent)
        if (ImGui::Selectable(r.c_str())) {
          s.model_path = r;
          start_load(app, r);
        }
      ImGui::EndCombo();
    }
  }
  if (app.jobs.loading.valid()) {
    ImGui::ProgressBar(static_cast<float>(app.jobs.load_progress->load()), ImVec2(-1, 0),
                       trf("loading {path}", arg("path", app.jobs.loading_path)).c_str());
  }
  if (!s.model_error.empty()) {
    ErrorText(trf("Could not load: {error}", arg("error", s.model_error)));
    if (s.model) Note(tr("Still showing the previous model."));
  }
  if (!s.model_notice.empty()) ErrorText(s.model_notice);
  if (!s.model) {
    if (s.model_error.empty() && s.model_notice.empty() && !app.jobs.loading.valid())
      Note(tr("No model loaded. Type a directory above and press Enter."));
    return false;
  }
  return true;
}

/// The loaded model's config in a table (version, sizes, span, buckets, terms, EMD) and its tokenizer.
void config_summary(const ViewerState& s) {
  const auto& m = s.model->model;
  const auto& c = m.config;
  ImGui::Separator();
  ImGui::TextWrapped("%s", m.directory.c_str());
  {
    // Label/value pairs, two pairs a row where the panel has room for both, else one (Italian and
    // Japanese labels at the large size): never a value cut at its column's edge.
    // The version, the widest value, on a line of its own above the table.
    const std::string version = c.version == deberta::ModelVersion::V1 ? "v1" : "v2/v3";
    ImGui::TextDisabled("%s", tr("version"));
    ImGui::SameLine();
    ImGui::TextUnformatted((version + (c.model_type.empty() ? "" : " (" + c.model_type + ")")).c_str());
    const std::vector<std::pair<std::string, std::string>> pairs = {
        {tr("vocab"), std::to_string(c.vocab_size)},
        {tr("layers"), std::to_string(c.num_hidden_layers)},
        {tr("heads"), std::to_string(c.num_attention_heads)},
        // TRANSLATORS: H and d are the paper's symbols (hidden size, head size): keep them.
        {tr("hidden H"), std::to_string(c.hidden_size)},
        {tr("head d"), std::to_string(c.d_head())},
        // TRANSLATORS: k is the paper's symbol (the maximum relative distance): keep it.
        {tr("span k"), c.relative_attention ? std::to_string(c.relative_span()) : "-"},
        {tr("buckets"), c.log_buckets() ? std::to_string(c.position_buckets) : trc("buckets", "none")},
        {"EMD", deberta::runs_emd(m) ? tr("yes") : tr("no")},
        {tr("terms"), "c2c" + (c.pos_att_type.empty() ? std::string() : ", " + join(c.pos_att_type))},
    };
    float need[4] = {0, 0, 0, 0};  // the widest label and value of the left and of the right pairs
    for (size_t k = 0; k < pairs.size(); ++k) {
      need[2 * (k % 2)] = std::max(need[2 * (k % 2)], ImGui::CalcTextSize(pairs[k].first.c_str()).x);
      need[2 * (k % 2) + 1] = std::max(need[2 * (k % 2) + 1], ImGui::CalcTextSize(pairs[k].second.c_str()).x);
    }
    const float gaps = 4 * 2 * ImGui::GetStyle().CellPadding.x + 3 * ImGui::GetStyle().ItemSpacing.x;
    const int columns = need[0] + need[1] + need[2] + need[3] + gaps <= ImGui::GetContentRegionAvail().x ? 4 : 2;
    if (ImGui::BeginTable("config", columns, ImGuiTableFlags_SizingStretchProp)) {
      for (size_t k = 0; k < pairs.size(); ++k) {
        if (k % (columns / 2) == 0) ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", pairs[k].first.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(pairs[k].second.c_str());
      }
      ImGui::EndTable();
    }
  }
  ImGui::TextDisabled(tr("tokenizer: %s"), s.model->tokenizer ? s.model->tokenizer->kind().c_str() : trc("tokenizer", "none"));
  if (const std::string card = model_card_note(m); !card.empty()) {
    // What the model knows (lesson.h), one line and the whole note on hover: the note in full
    // pushed the sentence boxes below the panel's fold (the page's check (i)). Beside the tokenizer
    // when the line has room for it, else on a line of its own (a long tokenizer line in Japanese
    // ran it past the panel's right edge).
    // TRANSLATORS: after "tokenizer: …" in the Model & text panel (or under it when the line is
    // full: then drawn without its "· "); hovering its (?) shows what the multilingual model was
    // trained on and what it cannot know.
    const std::string label = tr("· what this model knows");
    const ImGuiStyle& st = ImGui::GetStyle();
    const float need = st.ItemSpacing.x + ImGui::CalcTextSize(label.c_str()).x + st.ItemSpacing.x + ImGui::CalcTextSize("(?)").x;
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    const bool beside = ImGui::GetItemRectMax().x + need <= right;
    if (beside) ImGui::SameLine();
    const std::string_view dot = "\u00b7 ";  // "· " begins the label beside the tokenizer, not a line
    ImGui::TextDisabled("%s", beside || label.rfind(dot, 0) != 0 ? label.c_str() : label.c_str() + dot.size());
    HelpMarker(card.c_str());
  }
  // The note is English (worker.cpp builds it, tests read it); here in the reader's language.
  if (!s.model->tokenizer_note.empty())
    Note(s.model->tokenizer_error.empty()
             ? std::string(tr(s.model->tokenizer_note.c_str()))
             : trf("tokenizer not loaded: {error} (type token ids instead)", arg("error", s.model->tokenizer_error)));
}

/// The text boxes (text, sentence B) of a model with a tokenizer and the unknown-token note; without
/// a tokenizer, the token ids' heading.
void text_fields(App& app) {
  ViewerState& s = app.state;
  ImGui::Separator();
  if (s.model->tokenizer) {
    ImGui::TextUnformatted(tr("Text"));
    HelpMarker(tr("Enter re-runs the model. The literal [MASK] becomes the mask token; the predictions "
                  "panel shows what the model puts there."));
    ImGui::SetNextItemWidth(-1);
    const bool text_entered = InputString("##text", &s.text, ImGuiInputTextFlags_EnterReturnsTrue);
    RecordWidget(s, "text");  // the sentence box: the page's test hook web_widget_rect("text") (docs/web.md)
    if (text_entered) {
      s.ids_text.clear();
      request_compute(app);
    }
    // Segment B of a sentence pair: classifiers (NLI, paraphrase, the shipped WordNet matcher) read
    // [CLS] A [SEP] B [SEP] with token types 0 for A and 1 for B when the model has token types.
    const auto heads = deberta::available_heads(s.model->model);  // empty for a bare encoder
    const bool classifier = !heads.empty() && heads.front() == deberta::HeadKind::SequenceClassification;
    ImGui::TextUnformatted(classifier ? tr("Sentence B (pair)") : tr("Sentence B (optional)"));
    HelpMarker(tr("A second segment: the input becomes [CLS] A [SEP] B [SEP] (token types 0 for A, 1 for B "
                  "when the model has type embeddings). Sentence-pair classifiers (NLI, the shipped WordNet "
                  "matcher) expect one. Leave empty for a single text."));
    ImGui::SetNextItemWidth(-1);
    const bool pair_entered = InputString("##pair", &s.pair, ImGuiInputTextFlags_EnterReturnsTrue);
    RecordWidget(s, "pair");
    if (pair_entered) {
      s.ids_text.clear();
      request_compute(app);
    }
    if (!s.ids_text.empty()) Note(tr("Showing the ids below; press Enter in the text box to use the text again."));
    // A text the vocabulary does not know (issue 40, item 3): the share of [UNK] and byte pieces of
    // the shown input, and what to do, beside the box (the CLI prints the same note on stderr).
    if (s.result && s.result->model == s.model) {
      const std::string note = deberta::unknown_tokens_note(
          deberta::count_unknown_tokens(*s.model->tokenizer, s.result->input.inputs.input_ids));
      if (!note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.3f, 1.0f));
        ImGui::TextWrapped("%s", note.c_str());
        ImGui::PopStyleColor();
        RecordWidget(s, "unknown_note");
      }
    }
  } else {
    ImGui::TextUnformatted(tr("Token ids"));
    HelpMarker(tr("This model has no tokenizer: type comma-separated ids and press Enter. Tokens whose id "
                  "equals the [MASK] id are predicted."));
  }
}

/// The token-id box (the input of a model without a tokenizer, else an override), the [MASK] id
/// and the token types.
void id_fields(App& app) {
  ViewerState& s = app.state;
  // The field leaves room for "or ids (?)" in the reader's language (a fixed 40 px cut it in Korean).
  const float or_ids = ImGui::CalcTextSize(tr("or ids")).x + ImGui::CalcTextSize("(?)").x + 2 * ImGui::GetStyle().ItemSpacing.x + 2;
  ImGui::SetNextItemWidth(s.model->tokenizer ? -or_ids : -170);
  if (InputString("##ids", &s.ids_text, ImGuiInputTextFlags_EnterReturnsTrue)) request_compute(app);
  if (!s.model->tokenizer) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(90);
    if (ImGui::InputInt((std::string(tr("[MASK] id")) + "###mask_id").c_str(), &s.mask_id, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) request_compute(app);
    if (s.model->model.config.type_vocab_size > 1) {
      ImGui::SetNextItemWidth(-170);
      if (InputString("##types", &s.token_types_text, ImGuiInputTextFlags_EnterReturnsTrue)) request_compute(app);
      ImGui::SameLine();
      ImGui::TextDisabled("%s", tr("token types"));
      HelpMarker(tr("Optional: one type per id (0 = first segment, 1 = second), comma-separated."));
    }
  } else {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", tr("or ids"));
    HelpMarker(tr("Optional: comma-separated token ids instead of the text (Enter runs them)."));
  }
}

/// The input's errors and warnings, its token counts and the last run's time (or the progress).
void input_status(App& app) {
  const ViewerState& s = app.state;
  if (!s.input_error.empty()) ErrorText(tr(s.input_error.c_str()));  // the viewer's own messages translate (worker.cpp)
  if (!s.compute_error.empty()) ErrorText(s.compute_error);
  if (s.result)  // NaN / Inf in the numbers (the CLI's warnings): the maps and predictions are not meaningful
    for (const std::string& w : s.result->warnings) ErrorText(trf("warning: {warning}", arg("warning", w)));
  const int n = static_cast<int>(s.input.inputs.size());
  int second_segment = 0;
  for (int64_t t : s.input.inputs.token_type_ids) second_segment += t != 0;
  ImGui::TextDisabled(tr("%d tokens, %d masked"), n, static_cast<int>(s.input.mask_positions.size()));
  if (second_segment > 0) {
    ImGui::SameLine();
    ImGui::TextDisabled(tr("· %d of type 1"), second_segment);
  }
  if (app.jobs.worker.busy()) {
    ImGui::SameLine();
    ComputeProgress(app, tr("computing…"));
  } else if (s.result) {
    ImGui::SameLine();
    if (s.result->first_layer > 0)
      ImGui::TextDisabled(tr("· last run %.1f ms (from layer %d)"), s.result->compute_ms, static_cast<int>(s.result->first_layer));
    else
      ImGui::TextDisabled(tr("· last run %.1f ms"), s.result->compute_ms);
  }
}

}  // namespace

void DrawModelPanel(App& app) {
  if (!model_directory(app)) return;
  config_summary(app.state);
  text_fields(app);
  id_fields(app);
  input_status(app);
}

}  // namespace viewer
