// panel_export.cpp — Export: PNG / CSV / .npy of the selected map, PDF / SVG figures of the map and
// of the layers × heads grid (figure_export.cpp, cairo), a PNG of the whole window, and the full
// trace as safetensors in the `deberta dump` format (deberta::trace_to_tensors).
#include "figure_export.h"
#include "file_writers.h"
#include "heatmap.h"
#include "panels.h"

#include "deberta/dump.h"
#include "deberta/safetensors.h"

#include <imgui.h>

#include <algorithm>

namespace viewer {

namespace {

/// The selected layer/head's map of `q` in the shown result (`map_now`), or null and the reason.
HeldMap selected_map(const ViewerState& s, Quantity q, std::string* error) {
  if (!s.result) {
    *error = "nothing computed yet";
    return {};
  }
  HeldMap out;
  try {
    out = map_now(*s.result, s.detail, s.layer, s.head, q);
  } catch (const std::exception& e) {
    *error = e.what();
    return {};
  }
  if (!out.m) *error = std::string(quantity_name(q)) + " is not computed in this run (term switched off)";
  return out;
}

std::string base_name(const ViewerState& s, Quantity q) {
  return "deberta_L" + std::to_string(s.layer) + "_H" + std::to_string(s.head) + "_" + quantity_name(q);
}

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty() || dir == ".") return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

/// "i token" for each position of the shown result: the CSV's row and column labels.
std::vector<std::string> position_labels(const ViewerState& s, int64_t n) {
  std::vector<std::string> v;
  for (int64_t t = 0; t < n; ++t) v.push_back(std::to_string(t) + " " + token_name(s, static_cast<int>(t)));
  return v;
}

}  // namespace

std::string export_map_png(const ViewerState& s, Quantity q, const std::string& path) {
  std::string err;
  const HeldMap sel = selected_map(s, q, &err);
  if (!sel.m) return "PNG: " + err;
  const deberta::Matrix& m = *sel.m;
  const ColorScale scale = q == Quantity::Probs ? ColorScale::sequential(0, max_value({&m})) : ColorScale::diverging(max_abs({&m}));
  const std::vector<uint8_t> px = colorize(m, scale);
  // Upscale by an integer factor to at least 256 pixels, nearest neighbour (sharp cells).
  const int rows = static_cast<int>(m.rows()), cols = static_cast<int>(m.cols());
  const int f = std::max(1, 256 / std::max(rows, cols) + 1);
  std::vector<uint8_t> big(static_cast<size_t>(rows * f) * cols * f * 4);
  for (int y = 0; y < rows * f; ++y)
    for (int x = 0; x < cols * f; ++x)
      for (int ch = 0; ch < 4; ++ch)
        big[(static_cast<size_t>(y) * cols * f + x) * 4 + ch] = px[(static_cast<size_t>(y / f) * cols + x / f) * 4 + ch];
  if (const std::string e = write_png_rgba(path, cols * f, rows * f, big); !e.empty()) return "PNG: " + e;
  return "wrote " + path + " (" + std::to_string(cols * f) + "×" + std::to_string(rows * f) + ", colour range " +
         fmt(scale.lo, 3) + " … " + fmt(scale.hi, 3) + ")";
}

std::string export_map_csv(const ViewerState& s, Quantity q, const std::string& path) {
  std::string err;
  const HeldMap sel = selected_map(s, q, &err);
  if (!sel.m) return "CSV: " + err;
  // Header row: key tokens; first column: query tokens.
  const std::string e = write_csv(path, *sel.m, "query \\ key", position_labels(s, sel.m->rows()),
                                  position_labels(s, sel.m->cols()));
  return e.empty() ? "wrote " + path : "CSV: " + e;
}

std::string export_map_npy(const ViewerState& s, Quantity q, const std::string& path) {
  std::string err;
  const HeldMap sel = selected_map(s, q, &err);
  if (!sel.m) return ".npy: " + err;
  const std::string e = write_npy(path, *sel.m);
  return e.empty() ? "wrote " + path : ".npy: " + e;
}

std::string export_trace(const ViewerState& s, const std::string& path) {
  if (!s.result) return "trace: nothing computed yet";
  try {
    const Result& r = *s.result;
    // mlm.* only where the model has a masked-LM head (a classifier's input may still hold [MASK]),
    // as `deberta dump` on the exported inputs computes them. Every layer in full, as the dump.
    const std::vector<int64_t> positions = r.model->model.weights.lm_head ? r.input.mask_positions : std::vector<int64_t>{};
    const deberta::TensorMap t = deberta::trace_to_tensors(r.model->model, full_trace(r), positions);
    deberta::write_safetensors(path, t,
                               {{"format", "deberta dump"}, {"model", r.model->model.directory},
                                {"ablation", r.ablation.describe(r.model ? &r.model->model.config : nullptr)}, {"written_by", "deberta-viewer"}});
    return "wrote " + path + " (" + std::to_string(t.size()) + " tensors)";
  } catch (const std::exception& e) {
    return std::string("trace: ") + e.what();
  }
}

void DrawExportPanel(App& app) {
  ViewerState& s = app.state;
  ImGui::TextUnformatted("Folder");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  InputString("##dir", &s.export_dir);
  ImGui::Separator();

  ImGui::Text("Selected map: layer %d, head %d", s.layer, s.head);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  if (ImGui::BeginCombo("quantity", quantity_name(s.export_quantity))) {
    for (Quantity q : {Quantity::C2C, Quantity::C2P, Quantity::P2C, Quantity::P2P, Quantity::Logits, Quantity::Probs})
      if (ImGui::Selectable(quantity_name(q), q == s.export_quantity)) s.export_quantity = q;
    ImGui::EndCombo();
  }
  const std::string base = join_path(s.export_dir, base_name(s, s.export_quantity));
  const bool png = ImGui::Button("PNG of the map");
  RecordWidget(s, "export: PNG of the map");
  if (png) ExportDone(s, export_map_png(s, s.export_quantity, base + ".png"), base + ".png");
  ImGui::SameLine();
  if (ImGui::Button("CSV")) ExportDone(s, export_map_csv(s, s.export_quantity, base + ".csv"), base + ".csv");
  ImGui::SameLine();
  if (ImGui::Button(".npy")) ExportDone(s, export_map_npy(s, s.export_quantity, base + ".npy"), base + ".npy");
  ImGui::TextDisabled("→ %s.{png,csv,npy}   (rows: query i, columns: key j; CSV keeps 17 digits)", base.c_str());

  ImGui::Separator();
  ImGui::TextUnformatted("Figure for slides");
  HelpMarker("Vector figures through cairo: the map with token labels on both axes, a colour bar with its units and a "
             "caption naming the model, the text, layer, head, term and ablation. The grid puts every layer × head "
             "of the quantity on one colour scale. PDF for LaTeX / slides, SVG for the web or Inkscape.");
  const std::string fig = join_path(s.export_dir, base_name(s, s.export_quantity));
  const std::string grid = join_path(s.export_dir, std::string("deberta_grid_") + quantity_name(s.export_quantity));
  if (ImGui::Button("map → PDF")) ExportDone(s, export_figure_map(s, s.export_quantity, fig + ".pdf"), fig + ".pdf");
  ImGui::SameLine();
  if (ImGui::Button("map → SVG")) ExportDone(s, export_figure_map(s, s.export_quantity, fig + ".svg"), fig + ".svg");
  ImGui::SameLine();
  if (ImGui::Button("layers × heads grid → PDF")) ExportDone(s, export_figure_grid(s, s.export_quantity, grid + ".pdf"), grid + ".pdf");
  ImGui::SameLine();
  if (ImGui::Button("grid → SVG")) ExportDone(s, export_figure_grid(s, s.export_quantity, grid + ".svg"), grid + ".svg");
  ImGui::TextDisabled("→ %s.{pdf,svg}, %s.{pdf,svg}", fig.c_str(), grid.c_str());

  ImGui::Separator();
  const std::string win = join_path(s.export_dir, "deberta_window.png");
  if (ImGui::Button("PNG of the whole window")) s.window_png_request = win;
  ImGui::SameLine();
  ImGui::TextDisabled("→ %s", win.c_str());
  const std::string trace = join_path(s.export_dir, "deberta_trace.safetensors");
  if (ImGui::Button("Full trace (safetensors)")) ExportDone(s, export_trace(s, trace), trace);
  ImGui::SameLine();
  ImGui::TextDisabled("→ %s", trace.c_str());
  Note("The trace has the tensor names of `deberta dump` (embedding_output, rel_pos, layer.L.c2c|c2p|p2c|attn_logits|"
       "attn_probs, emd.*, mlm.*), so Python can load it with safetensors and compare.");
  if (!s.export_status.empty()) {
    ImGui::Separator();
    ImGui::TextWrapped("%s", s.export_status.c_str());
  }
}

}  // namespace viewer
