// exporters.cpp — the data exporters of exporters.h: GL-free and ImGui-free, so the Export panel,
// the headless driver and the web edition share them. Their reports are English in every language
// (not marked for translation): the headless mode prints them for scripts, and it and ExportDone read
// the prefix "wrote " as success.
#include "export/exporters.h"

#include "figures/colormap.h"
#include "export/figure_view.h"
#include "export/file_writers.h"

#include "deberta/dump.h"
#include "deberta/safetensors.h"


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

}  // namespace

std::string export_base_name(const ViewerState& s, Quantity q) {
  return "deberta_L" + std::to_string(s.layer) + "_H" + std::to_string(s.head) + "_" + quantity_name(q);
}

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty() || dir == ".") return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

namespace {

/// "i token" for each position of the shown result: the CSV's row and column labels.
std::vector<std::string> position_labels(const ViewerState& s, int64_t n) {
  std::vector<std::string> v;
  for (int64_t t = 0; t < n; ++t) v.push_back(std::to_string(t) + " " + token_name(s, static_cast<int>(t)));
  return v;
}

}  // namespace

std::string export_map_png(const ViewerState& s, Quantity q, const std::string& path) {
  return write_figure_png(figure_of_view(s, q, FigureKind::Map), path);
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

}  // namespace viewer
