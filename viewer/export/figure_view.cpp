// figure_view.cpp — figure_of_view (figure_view.h): the shown result and the selection made into
// a FigureSpec, with the units and caption in English (figures are for papers; not translated).
#include "export/figure_view.h"

#include "jobs/worker.h"

#include <memory>

namespace viewer {

namespace {

/// The colour bar's units, with the model's own scale (s = 1/√(f·d); the paper's f is 3).
std::string units_of(Quantity q, double scale, double scale_factor) {
  switch (q) {
    case Quantity::Probs: return "attention weight " + weights_label(scale_factor) + "_ij (each row sums to 1)";
    case Quantity::Logits: return score_label(scale_factor) + "_ij (the logit before the softmax)";
    default:
      return std::string(quantity_name(q)) + " term (logit units, already × s = 1/" + deberta::scale_root(scale_factor) + " = " +
             fmt(scale, 4, false) + ")";
  }
}

std::string caption_of(const ViewerState& s, const std::string& where, Quantity q) {
  const Result& r = *s.result;
  std::string text;
  for (const auto& n : r.input.names) text += (text.empty() ? "" : " ") + n;
  if (text.size() > 600) {  // a long input: its start (cut at a character boundary)
    size_t cut = 600;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    text = text.substr(0, cut) + " …";
  }
  std::string dir = r.model->model.directory;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string name = dir.substr(dir.find_last_of('/') == std::string::npos ? 0 : dir.find_last_of('/') + 1);
  const std::string ab = r.ablation.is_default() ? "none (the model as trained)" : r.ablation.describe(&r.model->model.config);
  return "Model: " + name + " (" + r.model->model.config.summary() + "). Text (" + std::to_string(r.input.names.size()) +
         " tokens): " + text + ". " + where + ", " + quantity_label(q, r.trace.context.attention.scale_factor) + ". Ablation: " +
         ab + ". Rows: query i; columns: key j. Layers and heads are counted from 0, as the viewer counts them. Made with "
         "DeBERTa Explorer.";
}

ColorScale scale_for(Quantity q, const std::vector<const deberta::Matrix*>& maps) {
  return q == Quantity::Probs ? ColorScale::sequential(0, max_value(maps)) : ColorScale::diverging(max_abs(maps));
}

/// `spec` with nothing to draw and the reason.
FigureSpec problem(std::string why) {
  FigureSpec f;
  f.problem = std::move(why);
  return f;
}

FigureSpec map_of_view(const ViewerState& s, Quantity q) {
  if (!s.result) return problem("nothing computed yet");
  HeldMap held;
  try {
    held = map_now(*s.result, s.detail, s.layer, s.head, q);
  } catch (const std::exception& e) {
    return problem(e.what());
  }
  if (!held.m) return problem(std::string(quantity_name(q)) + " is not computed in this run (term switched off)");
  // The map stays alive with what holds it: the layer detail, else the result's trace.
  const std::shared_ptr<const void> owner = held.detail ? std::shared_ptr<const void>(held.detail) : std::shared_ptr<const void>(s.result);
  const std::shared_ptr<const deberta::Matrix> m(owner, held.m);
  FigureSpec f;
  const bool masked = s.result->trace.context.head_mask.count({s.layer, s.head}) > 0;
  f.maps.push_back({m, "", masked && q == Quantity::Probs});
  f.row_labels = f.col_labels = s.result->input.names;
  f.scale = scale_for(q, {m.get()});
  const int L = static_cast<int>(s.result->trace.layers.size());
  const int H = static_cast<int>(s.result->model->model.config.num_attention_heads);
  const std::string where = layer_head_words(s.layer, L, s.head, H);
  f.title = quantity_words(q) + ", " + where;
  const deberta::ResolvedAttention& att = s.result->trace.context.attention;
  f.units = units_of(q, att.scale, att.scale_factor);
  f.caption = caption_of(s, "Shown: " + where, q);
  return f;
}

FigureSpec grid_of_view(const ViewerState& s, Quantity q) {
  if (!s.result) return problem("nothing computed yet");
  const Result& r = *s.result;
  const int L = static_cast<int>(r.trace.layers.size()), H = static_cast<int>(r.model->model.config.num_attention_heads);
  // Probabilities from the result's trace; another term from every layer in full (materialized now).
  std::shared_ptr<const LayerDetail> detail;
  if (q != Quantity::Probs && computed(r, q)) {
    std::vector<int64_t> all;
    for (int l = 0; l < L; ++l) all.push_back(l);
    try {
      detail = detail_now(r, s.detail, all);
    } catch (const std::exception& e) {
      return problem(e.what());
    }
  }
  const deberta::ForwardTrace& source = detail ? detail->trace : r.trace;
  const std::shared_ptr<const void> owner = detail ? std::shared_ptr<const void>(detail) : std::shared_ptr<const void>(s.result);
  FigureSpec f;
  std::vector<const deberta::Matrix*> all;
  for (int l = 0; l < L; ++l) {
    f.row_titles.push_back("layer " + std::to_string(l));  // counted from 0, as the viewer counts
    for (int h = 0; h < H; ++h) {
      const deberta::Matrix* m = head_map(source, l, h, q);
      if (!m || m->size() == 0) return problem(std::string(quantity_name(q)) + " is not computed in this run (term switched off)");
      all.push_back(m);
      f.maps.push_back({std::shared_ptr<const deberta::Matrix>(owner, m), "layer " + std::to_string(l) + " · head " + std::to_string(h),
                        q == Quantity::Probs && r.trace.context.head_mask.count({l, h}) > 0});
    }
  }
  f.columns = H;
  f.row_labels = f.col_labels = r.input.names;
  f.scale = scale_for(q, all);
  f.title = quantity_words(q) + ", every layer and head: layers 0–" + std::to_string(L - 1) + " × heads 0–" + std::to_string(H - 1);
  f.units = units_of(q, r.trace.context.attention.scale, r.trace.context.attention.scale_factor);
  f.caption = caption_of(s, "Shown: all " + std::to_string(L) + " layers × " + std::to_string(H) + " heads on one colour scale", q);
  return f;
}

}  // namespace

FigureSpec figure_of_view(const ViewerState& s, Quantity q, FigureKind kind) {
  return kind == FigureKind::Grid ? grid_of_view(s, q) : map_of_view(s, q);
}

}  // namespace viewer
