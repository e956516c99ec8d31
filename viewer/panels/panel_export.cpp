// panel_export.cpp — Export: the buttons for PNG / CSV / .npy of the selected map and the full
// trace (exporters.cpp), PDF / SVG figures of the map and of the layers × heads grid (the view's
// figure_of_view handed to write_figure, figure_export.h) and a PNG of the whole window.
#include "export/exporters.h"
#include "export/figure_view.h"
#include "ui/heatmap.h"
#include "panels/panels.h"

#include <imgui.h>

#include <algorithm>

namespace viewer {

void DrawExportPanel(App& app) {
  ViewerState& s = app.state;
  ImGui::TextUnformatted(tr("Folder"));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  InputString("##dir", &s.export_dir);
  ImGui::Separator();

  ImGui::Text(tr("Selected map: layer %d, head %d"), s.layer, s.head);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  if (ImGui::BeginCombo((std::string(tr("quantity")) + "###quantity").c_str(), quantity_name(s.export_quantity))) {
    for (Quantity q : kAllQuantities)
      if (ImGui::Selectable(quantity_name(q), q == s.export_quantity)) s.export_quantity = q;
    ImGui::EndCombo();
  }
  const std::string base = join_path(s.export_dir, export_base_name(s, s.export_quantity));
  const bool png = ImGui::Button((std::string(tr("PNG of the map")) + "###png").c_str());
  RecordWidget(s, "export: PNG of the map");
  if (png) ExportDone(s, export_map_png(s, s.export_quantity, base + ".png"), base + ".png");
  ImGui::SameLine();
  if (ImGui::Button("CSV")) ExportDone(s, export_map_csv(s, s.export_quantity, base + ".csv"), base + ".csv");
  ImGui::SameLine();
  if (ImGui::Button(".npy")) ExportDone(s, export_map_npy(s, s.export_quantity, base + ".npy"), base + ".npy");
  // TRANSLATORS: %s is the files' common path; keep .{png,csv,npy} as written.
  ImGui::TextDisabled(tr("→ %s.{png,csv,npy}   (rows: query i, columns: key j; CSV keeps 17 digits)"), base.c_str());

  ImGui::Separator();
  ImGui::TextUnformatted(tr("Figure for slides"));
  HelpMarker(tr("Vector figures: the map with token labels on both axes, a colour bar with its units and a caption "
                "naming the model, the text, layer, head, term and ablation. The grid puts every layer × head of the "
                "quantity on one colour scale. PDF for LaTeX / slides (desktop only), SVG for the web or Inkscape. "
                "The PNG of the map above is the same figure in pixels."));
  const std::string fig = join_path(s.export_dir, export_base_name(s, s.export_quantity));
  const std::string grid = join_path(s.export_dir, std::string("deberta_grid_") + quantity_name(s.export_quantity));
  // The figure of the view is described once (figure_view.h), then written by format.
  const auto figure = [&](FigureKind kind, const std::string& path) {
    ExportDone(s, write_figure(figure_of_view(s, s.export_quantity, kind), path), path);
  };
  if (ImGui::Button((std::string(tr("map → PDF")) + "###map_pdf").c_str())) figure(FigureKind::Map, fig + ".pdf");
  ImGui::SameLine();
  const bool map_svg = ImGui::Button((std::string(tr("map → SVG")) + "###map_svg").c_str());
  RecordWidget(s, "export: map SVG");
  if (map_svg) figure(FigureKind::Map, fig + ".svg");
  ImGui::SameLine();
  if (ImGui::Button((std::string(tr("layers × heads grid → PDF")) + "###grid_pdf").c_str())) figure(FigureKind::Grid, grid + ".pdf");
  ImGui::SameLine();
  const bool grid_svg = ImGui::Button((std::string(tr("grid → SVG")) + "###grid_svg").c_str());
  RecordWidget(s, "export: grid SVG");
  if (grid_svg) figure(FigureKind::Grid, grid + ".svg");
  ImGui::TextDisabled("→ %s.{pdf,svg}, %s.{pdf,svg}", fig.c_str(), grid.c_str());

  ImGui::Separator();
  const std::string win = join_path(s.export_dir, "deberta_window.png");
  if (ImGui::Button((std::string(tr("PNG of the whole window")) + "###window_png").c_str())) s.window_png_request = win;
  ImGui::SameLine();
  ImGui::TextDisabled("→ %s", win.c_str());
  const std::string trace = join_path(s.export_dir, "deberta_trace.safetensors");
  if (ImGui::Button((std::string(tr("Full trace (safetensors)")) + "###trace").c_str())) ExportDone(s, export_trace(s, trace), trace);
  ImGui::SameLine();
  ImGui::TextDisabled("→ %s", trace.c_str());
  Note(tr("The trace has the tensor names of `deberta dump` (embedding_output, rel_pos, layer.L.c2c|c2p|p2c|attn_logits|"
          "attn_probs, emd.*, mlm.*), so Python can load it with safetensors and compare."));
  if (!s.export_status.empty()) {
    ImGui::Separator();
    ImGui::TextWrapped("%s", s.export_status.c_str());
  }
}

}  // namespace viewer
