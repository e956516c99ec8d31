// panel_export.cpp — Export: PNG / CSV / .npy of the selected map, PDF / SVG figures of the map and
// of the layers × heads grid (figure_export.cpp, cairo), a PNG of the whole window, and the full
// trace as safetensors in the `deberta dump` format (deberta::trace_to_tensors).
#include "figure_export.h"
#include "heatmap.h"
#include "panels.h"

#include "deberta/dump.h"
#include "deberta/safetensors.h"

#include <GL/gl.h>
#include <imgui.h>
#include <stb_image_write.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace viewer {

namespace {

const deberta::Matrix* selected_map(const ViewerState& s, Quantity q, std::string* error) {
  if (!s.result) {
    *error = "nothing computed yet";
    return nullptr;
  }
  const deberta::Matrix* m = head_map(s.result->trace, s.layer, s.head, q);
  if (!m || m->size() == 0) {
    *error = std::string(quantity_name(q)) + " is not computed in this run (term switched off)";
    return nullptr;
  }
  return m;
}

std::string base_name(const ViewerState& s, Quantity q) {
  return "deberta_L" + std::to_string(s.layer) + "_H" + std::to_string(s.head) + "_" + quantity_name(q);
}

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty() || dir == ".") return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

}  // namespace

std::string export_map_png(const ViewerState& s, Quantity q, const std::string& path) {
  std::string err;
  const deberta::Matrix* m = selected_map(s, q, &err);
  if (!m) return "PNG: " + err;
  const ColorScale scale = q == Quantity::Probs ? ColorScale::sequential(0, max_value({m})) : ColorScale::diverging(max_abs({m}));
  const std::vector<uint8_t> px = colorize(*m, scale);
  // Upscale by an integer factor to at least 256 pixels, nearest neighbour (sharp cells).
  const int rows = static_cast<int>(m->rows()), cols = static_cast<int>(m->cols());
  const int f = std::max(1, 256 / std::max(rows, cols) + 1);
  std::vector<uint8_t> big(static_cast<size_t>(rows * f) * cols * f * 4);
  for (int y = 0; y < rows * f; ++y)
    for (int x = 0; x < cols * f; ++x)
      for (int ch = 0; ch < 4; ++ch)
        big[(static_cast<size_t>(y) * cols * f + x) * 4 + ch] = px[(static_cast<size_t>(y / f) * cols + x / f) * 4 + ch];
  if (!stbi_write_png(path.c_str(), cols * f, rows * f, 4, big.data(), cols * f * 4)) return "PNG: cannot write " + path;
  return "wrote " + path + " (" + std::to_string(cols * f) + "×" + std::to_string(rows * f) + ", colour range " +
         fmt(scale.lo, 3) + " … " + fmt(scale.hi, 3) + ")";
}

std::string export_map_csv(const ViewerState& s, Quantity q, const std::string& path) {
  std::string err;
  const deberta::Matrix* m = selected_map(s, q, &err);
  if (!m) return "CSV: " + err;
  std::ofstream out(path);
  if (!out) return "CSV: cannot write " + path;
  // Header row: key tokens; first column: query tokens (names quoted, quotes doubled).
  auto quote = [](std::string t) {
    std::string o = "\"";
    for (char ch : t) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return o + "\"";
  };
  out << "\"query \\ key\"";
  for (int64_t j = 0; j < m->cols(); ++j) out << "," << quote(std::to_string(j) + " " + token_name(s, static_cast<int>(j)));
  out << "\n";
  char buf[40];
  for (int64_t i = 0; i < m->rows(); ++i) {
    out << quote(std::to_string(i) + " " + token_name(s, static_cast<int>(i)));
    for (int64_t j = 0; j < m->cols(); ++j) {
      std::snprintf(buf, sizeof buf, ",%.17g", (*m)(i, j));
      out << buf;
    }
    out << "\n";
  }
  return out ? "wrote " + path : "CSV: write error on " + path;
}

std::string export_map_npy(const ViewerState& s, Quantity q, const std::string& path) {
  std::string err;
  const deberta::Matrix* m = selected_map(s, q, &err);
  if (!m) return ".npy: " + err;
  // NPY format 1.0: magic, version, header length (uint16 LE), dict padded to 64 bytes, data.
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(m->rows()) + ", " +
                       std::to_string(m->cols()) + "), }";
  const size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream out(path, std::ios::binary);
  if (!out) return ".npy: cannot write " + path;
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_le, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(m->data()), static_cast<std::streamsize>(m->size() * sizeof(double)));
  return out ? "wrote " + path : ".npy: write error on " + path;
}

std::string export_trace(const ViewerState& s, const std::string& path) {
  if (!s.result) return "trace: nothing computed yet";
  try {
    const Result& r = *s.result;
    // mlm.* only where the model has a masked-LM head (a classifier's input may still hold [MASK]),
    // as `deberta dump` on the exported inputs computes them.
    const std::vector<int64_t> positions = r.model->model.weights.lm_head ? r.input.mask_positions : std::vector<int64_t>{};
    const deberta::TensorMap t = deberta::trace_to_tensors(r.model->model, r.trace, positions);
    deberta::write_safetensors(path, t,
                               {{"format", "deberta dump"}, {"model", r.model->model.directory},
                                {"ablation", r.ablation.describe(r.model ? &r.model->model.config : nullptr)}, {"written_by", "deberta-viewer"}});
    return "wrote " + path + " (" + std::to_string(t.size()) + " tensors)";
  } catch (const std::exception& e) {
    return std::string("trace: ") + e.what();
  }
}

std::string write_framebuffer_png(const std::string& path, int width, int height) {
  std::vector<uint8_t> px(static_cast<size_t>(width) * height * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  std::vector<uint8_t> flipped(px.size());
  const size_t stride = static_cast<size_t>(width) * 4;
  for (int y = 0; y < height; ++y)
    std::copy(px.begin() + static_cast<std::ptrdiff_t>(y * stride), px.begin() + static_cast<std::ptrdiff_t>((y + 1) * stride),
              flipped.begin() + static_cast<std::ptrdiff_t>((height - 1 - y) * stride));
  for (size_t p = 3; p < flipped.size(); p += 4) flipped[p] = 255;  // opaque
  if (!stbi_write_png(path.c_str(), width, height, 4, flipped.data(), static_cast<int>(stride)))
    return "cannot write " + path;
  return "";
}

void DrawExportPanel(ViewerState& s) {
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
  if (ImGui::Button("PNG of the map")) s.export_status = export_map_png(s, s.export_quantity, base + ".png");
  ImGui::SameLine();
  if (ImGui::Button("CSV")) s.export_status = export_map_csv(s, s.export_quantity, base + ".csv");
  ImGui::SameLine();
  if (ImGui::Button(".npy")) s.export_status = export_map_npy(s, s.export_quantity, base + ".npy");
  ImGui::TextDisabled("→ %s.{png,csv,npy}   (rows: query i, columns: key j; CSV keeps 17 digits)", base.c_str());

  ImGui::Separator();
  ImGui::TextUnformatted("Figure for slides");
  HelpMarker("Vector figures through cairo: the map with token labels on both axes, a colour bar with its units and a "
             "caption naming the model, the text, layer, head, term and ablation. The grid puts every layer × head "
             "of the quantity on one colour scale. PDF for LaTeX / slides, SVG for the web or Inkscape.");
  const std::string fig = join_path(s.export_dir, base_name(s, s.export_quantity));
  const std::string grid = join_path(s.export_dir, std::string("deberta_grid_") + quantity_name(s.export_quantity));
  if (ImGui::Button("map → PDF")) s.export_status = export_figure_map(s, s.export_quantity, fig + ".pdf");
  ImGui::SameLine();
  if (ImGui::Button("map → SVG")) s.export_status = export_figure_map(s, s.export_quantity, fig + ".svg");
  ImGui::SameLine();
  if (ImGui::Button("layers × heads grid → PDF")) s.export_status = export_figure_grid(s, s.export_quantity, grid + ".pdf");
  ImGui::SameLine();
  if (ImGui::Button("grid → SVG")) s.export_status = export_figure_grid(s, s.export_quantity, grid + ".svg");
  ImGui::TextDisabled("→ %s.{pdf,svg}, %s.{pdf,svg}", fig.c_str(), grid.c_str());

  ImGui::Separator();
  const std::string win = join_path(s.export_dir, "deberta_window.png");
  if (ImGui::Button("PNG of the whole window")) s.window_png_request = win;
  ImGui::SameLine();
  ImGui::TextDisabled("→ %s", win.c_str());
  const std::string trace = join_path(s.export_dir, "deberta_trace.safetensors");
  if (ImGui::Button("Full trace (safetensors)")) s.export_status = export_trace(s, trace);
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
