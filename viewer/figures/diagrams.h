// diagrams.h — the two drawings that are not maps: the model's pipeline (embedding → L encoder
// layers → EMD → MLM head, with the loaded model's real sizes) and bertviz-style token links
// (queries on the left, keys on the right, a line per pair weighted by attention).
//
// GL-free and ImGui-free: a Diagram is a laid-out list of boxes, arrows and links in points, so
// the Pipeline and Token links tabs (panel_diagrams.cpp) draw it on screen and the figure export
// (figure_export.h: write_diagram) writes the same layout as SVG or PDF.
#pragma once

#include "deberta/model.h"

#include <functional>
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

/// One token link: query `from` (left column) to key `to` (right column). `weight` in [0, 1] (an
/// attention weight), or in [−1, 1] for a signed diagram (a term's contribution to the score over
/// the largest |contribution|: the sign picks the colour, |weight| the opacity).
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
  uint32_t link_color = 0xffd08a3c;      ///< 0xAABBGGRR; a positive link
  uint32_t link_color_negative = 0xffd08a3c;  ///< a negative link of a signed diagram (blue)
  bool signed_links = false;             ///< links carry signed weights (signed_links_diagram)
};

/// The pipeline of `model` for an input of `n` tokens under the resolved switches `att`: the
/// embedding, one encoder layer opened up (Q_c/K_c/V_c, each active term, the softmax with its
/// scale, the context, the FFN) and "× L", the relative table P (2k rows) with δ, the EMD (two
/// passes of the shared last layer, I = H + P, the released code's arrangement) when `emd`, and the
/// MLM head. Shapes are the model's: N, H, heads h, d, k, L, intermediate size, vocabulary. The
/// scale is the model's (deberta::scale_root of `att.scale_factor`). A run without position terms
/// draws the standard attention of §3.1 (Q, K, V; softmax(QKᵀ/√d)) instead of eq. 4's terms, and
/// a model without relative attention no δ. The labels' words are English (the slide figure's), or
/// the reader's language's when `translated` (the Pipeline tab; i18n.h); symbols, shapes and
/// numbers are the same in both. Source: arXiv 2006.03654 v6, §3.1 (the unnumbered standard
/// attention, eq. 2–4), §3.2 and appendix A.8 (EMD), and the core's forward pass.
Diagram pipeline_diagram(const deberta::ModelConfig& config, const deberta::ResolvedAttention& att, int n, bool emd,
                         bool lm_head, bool translated = false);

/// Token links for `weights` `[N, N]` (query i → key j, in [0, 1]): the labels `tokens` in two
/// columns and one link per pair with weight ≥ `min_weight` (the faint rest is left out so a
/// 512-token figure stays readable). The caption in English, or the reader's language when
/// `translated` (`title` is the caller's). Errors: a non-square matrix or labels of another length —
/// std::invalid_argument naming the sizes.
Diagram links_diagram(const std::vector<std::string>& tokens, const deberta::Matrix& weights, const std::string& title,
                      double min_weight = 0.01, bool translated = false);

/// Token links for one term's signed contribution to the score, `values` `[N, N]` (the term times
/// the scale, in logit units: what it adds to query i's score for key j). Each link's weight is
/// value / max|value| in [−1, 1] — positive links raise the score (towards key j), negative ones
/// lower it — and links below `min_fraction` of the largest |value| are left out. A term adds to the
/// score, not to the weight (the softmax is not additive), so this is the honest per-term view
/// (issue 42: a "share of the weight" gave a negative term a positive share). Errors as
/// links_diagram.
Diagram signed_links_diagram(const std::vector<std::string>& tokens, const deberta::Matrix& values, const std::string& title,
                             double min_fraction = 0.05, bool translated = false);

/// How the Pipeline tab draws the diagram in `avail_w` × `avail_h` pixels: pixels a point,
/// min(avail_w / width, max(avail_h − 40, 200) / height), clamped to [0.4, 1.8].
float diagram_scale(const Diagram& d, float avail_w, float avail_h);

/// The size the Pipeline tab draws the diagram's heading at: 1.05 × `ui_px`, shrunk to fit the
/// diagram's width less 20-point margins at `scale` (never below 8 px). `width` as box_font's.
float heading_px(const Diagram& d, float scale, float ui_px, const std::function<float(const std::string&, float)>& width);

/// The sizes a box's title and detail are drawn at in the Pipeline tab, at `scale` pixels a point
/// with the interface's font `ui_px` pixels tall: the title at 11 points (no smaller than 0.85 ×
/// ui_px, no larger than 1.1 × ui_px), the detail 0.88 × that, both shrunk together until the title
/// (one line) and the detail's lines fit the box less its 6-point margins (a container: its title
/// alone, on its width). Never below 8 px: then `fits` is false and the text is clipped at the
/// box's edge. `width(text, px)` is the widest line of `text` at `px` pixels (a line is px tall).
struct BoxFont {
  float title_px = 0, detail_px = 0;
  bool fits = true;
};
BoxFont box_font(const DiagramBox& b, float scale, float ui_px, const std::function<float(const std::string&, float)>& width);

/// How the Token links tab lays out `n` tokens in a panel of `avail_w` × `avail_h` pixels: labels
/// at the UI font `font_px`, shrinking towards 11 px (never below) to fit the rows into the panel;
/// label columns `label_w` px wide at the two edges and the lines across all the width between
/// them; rows a label tall + 1 px (at most twice that when few tokens leave room). What does not fit
/// at 11 px is taller than the panel: `scrolls`.
struct LinksLayout {
  float font_px = 0;    ///< label size
  float row_px = 0;     ///< row height
  float left_px = 0;    ///< x where the lines start (right edge of the query labels)
  float right_px = 0;   ///< x where the lines end (left edge of the key labels)
  float top_px = 0;     ///< y of row 0's top
  float height_px = 0;  ///< the whole drawing, labels and caption included
  bool scrolls = false; ///< taller than the panel
};
LinksLayout links_layout(int n, float avail_w, float avail_h, float font_px, float label_w);

}  // namespace viewer
