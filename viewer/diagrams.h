// diagrams.h — the two drawings that are not maps: the model's pipeline (embedding → L encoder
// layers → EMD → MLM head, with the loaded model's real sizes) and bertviz-style token links
// (queries on the left, keys on the right, a line per pair weighted by attention).
//
// GL-free and ImGui-free: a Diagram is a laid-out list of boxes, arrows and links in points, so
// the Pipeline and Token links tabs (panel_diagrams.cpp) draw it on screen and the figure export
// (figure_export.h: write_diagram) writes the same layout as SVG or PDF.
#pragma once

#include "deberta/model.h"

#include <string>
#include <vector>

namespace viewer {

/// A box of the pipeline. `target` names the tab a click opens (--panel names: "grid", "head",
/// "distance", "equation", "predictions", "lesson", "links"), `quantity` the Head-detail map (−1: keep).
struct DiagramBox {
  float x = 0, y = 0, w = 0, h = 0;  ///< points, y down
  std::string title;                 ///< e.g. "c2p  Q_c K_r[δ(i,j)]ᵀ"
  std::string detail;                ///< the shapes, e.g. "[4 heads × 33 × 33]"
  uint32_t fill = 0xffe8eef7;        ///< 0xAABBGGRR (ImGui's order)
  std::string target;
  int quantity = -1;                 ///< viewer::Quantity as int, or −1
  bool container = false;            ///< a frame around other boxes (drawn first, title at its top)
  bool off = false;                  ///< a term switched off in this run: drawn dimmed, "(off)"
};

/// An arrow from (x0, y0) to (x1, y1).
struct DiagramArrow {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// One token link: query `from` (left column) to key `to` (right column), `weight` in [0, 1].
struct DiagramLink {
  int from = 0, to = 0;
  double weight = 0;
};

struct Diagram {
  float width = 0, height = 0;  ///< points
  std::string title, caption;
  std::vector<DiagramBox> boxes;
  std::vector<DiagramArrow> arrows;
  // Token links (empty for the pipeline).
  std::vector<std::string> left, right;  ///< token labels, one per row
  float left_x = 0, right_x = 0;         ///< where the lines start and end (label columns beside them)
  float top = 0, row_h = 0;              ///< row r's centre: top + (r + 0.5) · row_h
  std::vector<DiagramLink> links;
  uint32_t link_color = 0xffd08a3c;      ///< 0xAABBGGRR
};

/// The pipeline of `model` for an input of `n` tokens under the resolved switches `att`: the
/// embedding, one encoder layer opened up (Q_c/K_c/V_c, each active term, the softmax with its
/// scale, the context, the FFN) and "× L", the relative table P (2k rows) with δ, the EMD (two
/// passes of the shared last layer, I = H + P) when `emd`, and the MLM head. Shapes are the
/// model's: N, H, heads h, d, k, L, intermediate size, vocabulary. Source: the paper's Fig. 1 is
/// not a pipeline; this follows §3 (eq. 1–4), §3.2 (EMD) and the core's forward pass.
Diagram pipeline_diagram(const deberta::ModelConfig& config, const deberta::ResolvedAttention& att, int n, bool emd,
                         bool lm_head);

/// Token links for `weights` `[N, N]` (query i → key j, in [0, 1]): the labels `tokens` in two
/// columns and one link per pair with weight ≥ `min_weight` (the faint rest is left out so a
/// 512-token figure stays readable). Errors: a non-square matrix or labels of another length —
/// std::invalid_argument naming the sizes.
Diagram links_diagram(const std::vector<std::string>& tokens, const deberta::Matrix& weights, const std::string& title,
                      double min_weight = 0.01);

/// The share of the attention weight that one term carries: probs_ij · |term_ij| / ∑_t |term_t,ij|
/// over the active terms `terms` (each `[N, N]`, scaled or not: only ratios matter), so the shares
/// of all terms add up to probs_ij. `which` indexes `terms`. A cell whose terms are all 0 shares
/// nothing. Errors: `which` out of range, maps of different shapes — std::invalid_argument.
deberta::Matrix term_share(const deberta::Matrix& probs, const std::vector<const deberta::Matrix*>& terms, size_t which);

}  // namespace viewer
