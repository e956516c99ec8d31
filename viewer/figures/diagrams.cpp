// diagrams.cpp — the pipeline and token-link layouts (see diagrams.h). Their labels are English in
// every language (not marked for translation): the same layout is the slide figure (figure_export.h),
// which keeps the paper's words and notation; the tabs translate what they draw around it.
#include "figures/diagrams.h"

#include "deberta/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace viewer {

namespace {

std::string n_(int64_t v) { return std::to_string(v); }

// Fills in ImGui's 0xAABBGGRR order.
constexpr uint32_t kEmbed = 0xffd9ecf7, kTerm = 0xfff7e3d0, kSoft = 0xffd6f0dc, kFfn = 0xffe6e6e6, kEmd = 0xffd4d9f8,
                   kHead = 0xfff0d9ec, kPos = 0xffc8ecf4, kFrame = 0xfffaf7f2;

}  // namespace

Diagram pipeline_diagram(const deberta::ModelConfig& c, const deberta::ResolvedAttention& att, int n, bool emd, bool lm_head) {
  Diagram d;
  const int64_t H = c.hidden_size, h = c.num_attention_heads, dh = c.d_head(), L = c.num_hidden_layers, k = att.k;
  const std::string N = n_(n);
  d.title = "The pipeline of this model: N = " + N + " tokens, H = " + n_(H) + ", " + n_(h) + " heads of d = " + n_(dh) +
            ", L = " + n_(L) + " layers" + (c.relative_attention ? ", k = " + n_(k) : "");
  const float top = 40, bh = 46, gap = 10;

  // Embedding.
  DiagramBox emb;
  emb.x = 20, emb.y = top + 150, emb.w = 150, emb.h = 70, emb.fill = kEmbed, emb.target = "grid";
  emb.title = "Embedding";
  emb.detail = "word" + std::string(c.position_biased_input ? " + position" : "") +
               (c.type_vocab_size > 0 ? " + type" : "") + ", LayerNorm\nH_0: [" + N + " × " + n_(H) + "]";
  d.boxes.push_back(emb);

  // One encoder layer, opened up.
  DiagramBox layer;
  layer.x = 200, layer.y = top, layer.w = 330, layer.container = true, layer.fill = kFrame, layer.target = "head";
  layer.title = "Encoder layer l (× L = " + n_(L) + ", each its own weights)";
  float y = top + 24;
  auto add = [&](const std::string& title, const std::string& detail, uint32_t fill, const std::string& target, int q, bool off) {
    DiagramBox b;
    b.x = layer.x + 12, b.y = y, b.w = layer.w - 24, b.h = bh, b.fill = fill, b.target = target, b.quantity = q, b.off = off;
    b.title = title + (off ? "  (off in this run)" : "");
    b.detail = detail;
    d.boxes.push_back(b);
    y += bh + gap;
  };
  const std::string nn = "[" + n_(h) + " heads × " + N + " × " + N + "]";
  // Without a position term the layer is the standard attention of §3.1 (unnumbered in v6):
  // no Ã of eq. 4 to speak of, no relative table read.
  using deberta::Term;
  const bool pos = deberta::reads_relative_table(att.terms);
  const std::string root = deberta::scale_root(att.scale_factor);
  if (pos) {
    add("Q_c, K_c, V_c  (eq. 4)", "H W_{q,c}, H W_{k,c}, H W_{v,c}: each [" + N + " × " + n_(h) + "·" + n_(dh) + "]", kEmbed,
        "equation", -1, false);
    add("c2c  Q_c[i] K_c[j]ᵀ  (eq. 4, term (a))", nn, kTerm, "head", 0, !att.terms[Term::c2c]);
  } else {
    add("Q, K, V  (§3.1, standard attention)", "H W_q, H W_k, H W_v: each [" + N + " × " + n_(h) + "·" + n_(dh) + "]", kEmbed,
        "equation", -1, false);
    add("Q[i] K[j]ᵀ  (§3.1: the only term, no position term)", nn, kTerm, "head", 0, !att.terms[Term::c2c]);
  }
  if (c.relative_attention) {
    add("c2p  Q_c[i] K_r[δ(i,j)]ᵀ  (eq. 4, term (b))", nn + ", K_r = P W_{k,r}", kTerm, "head", 1, !att.terms[Term::c2p]);
    // eq. 4's term (c) reads δ(j,i); the released code's default reads δ(i,j), and the label says so.
    add(att.p2c_index == deberta::P2CIndex::Paper ? "p2c  K_c[j] Q_r[δ(j,i)]ᵀ  (eq. 4, term (c))"
                                                  : "p2c  K_c[j] Q_r[δ(i,j)]ᵀ  (eq. 4, term (c) with the code's index; paper: δ(j,i))",
        nn + ", Q_r = P W_{q,r}", kTerm, "head", 2, !att.terms[Term::p2c]);
    if (att.terms[Term::p2p]) add("p2p  Q_r K_rᵀ  (eq. 2's fourth term)", nn, kTerm, "head", 3, false);
  }
  if (pos)
    add("softmax(Ã / " + root + ") over keys j  (eq. 4)", nn + ", Ã = the sum of the terms; each row sums to 1", kSoft, "head", 5,
        false);
  else
    add("softmax(Q Kᵀ / " + root + ") over keys j  (§3.1)", nn + ", each row sums to 1", kSoft, "head", 5, false);
  add("context = weights · V_c, W_o, + H, LayerNorm", "[" + N + " × " + n_(H) + "]", kFfn, "head", -1, false);
  add("FFN  H → " + n_(c.intermediate_size) + " → H, + residual, LayerNorm", "H_l: [" + N + " × " + n_(H) + "]", kFfn, "grid", -1,
      false);
  layer.h = y - layer.y + 2;
  d.boxes.insert(d.boxes.begin() + 1, layer);  // the frame is drawn before its boxes

  // The relative table and δ, under the layer.
  float below = layer.y + layer.h + 18;
  if (c.relative_attention) {
    const bool reads = pos;
    DiagramBox pos;
    pos.x = layer.x, pos.y = below, pos.w = layer.w, pos.h = 60, pos.fill = kPos, pos.target = "distance";
    pos.title = "Relative positions: δ(i, j) (eq. 3)" + std::string(c.log_buckets() ? " after log buckets" : "") +
                (reads ? "" : "  (no term reads it in this run)");
    pos.off = !reads;
    pos.detail = "table P: [2k = " + n_(2 * k) + " × " + n_(H) + "], shared by all layers\nδ: [" + N + " × " + N + "]";
    d.boxes.push_back(pos);
    d.arrows.push_back({pos.x + pos.w / 2, pos.y, pos.x + pos.w / 2, layer.y + layer.h});
    below += pos.h + 12;
  }

  // EMD and the head, right of the layer.
  float x = layer.x + layer.w + 30;
  const float mid_y = emb.y + emb.h / 2;
  d.arrows.push_back({emb.x + emb.w, mid_y, layer.x, mid_y});
  float last_right = layer.x + layer.w;
  if (emd) {
    DiagramBox e;
    e.x = x, e.y = top + 110, e.w = 210, e.h = 150, e.fill = kEmd, e.target = "predictions";
    e.title = "Enhanced Mask Decoder (§3.2, A.8)";
    e.detail = "released code: H = output of\nlayer L − 2 = " + n_(L - 2) + ", I_0 = H + P\n(absolute positions; A.9)\nI_{t+1} = layer " +
               n_(L - 1) + "'s weights\n(query I_t, key/value H), 2 passes";
    d.boxes.push_back(e);
    d.arrows.push_back({last_right, mid_y, e.x, mid_y});
    last_right = e.x + e.w;
    x = e.x + e.w + 30;
  }
  DiagramBox head;
  head.x = x, head.y = top + 150, head.w = 150, head.h = 70, head.fill = kHead, head.target = "predictions";
  head.title = lm_head ? "MLM head" : "Output";
  head.detail = lm_head ? "dense, LayerNorm, × Eᵀ\nlogits: [masks × " + n_(c.vocab_size) + "]" : "H_L: [" + N + " × " + n_(H) + "]";
  d.boxes.push_back(head);
  d.arrows.push_back({last_right, mid_y, head.x, mid_y});

  d.width = head.x + head.w + 20;
  d.height = std::max(below, layer.y + layer.h + 20) + 30;
  d.caption = "Click a box to open its view. Shapes are this model's; the terms are per head. " +
              std::string(emd ? "The EMD adds absolute positions only before the MLM head." : "This run has no EMD.") +
              " Sections and equations: arXiv 2006.03654 v6.";
  return d;
}

Diagram links_diagram(const std::vector<std::string>& tokens, const deberta::Matrix& weights, const std::string& title,
                      double min_weight) {
  const int n = static_cast<int>(weights.rows());
  if (weights.rows() != weights.cols() || static_cast<int>(tokens.size()) != n)
    throw std::invalid_argument("token links: a [" + std::to_string(weights.rows()) + " × " + std::to_string(weights.cols()) +
                                "] map with " + std::to_string(tokens.size()) + " token labels (a square map, one label per row)");
  Diagram d;
  d.title = title;
  d.left = d.right = tokens;
  d.row_h = n > 64 ? std::max(4.0f, 1100.0f / static_cast<float>(n)) : 16;
  d.top = 50;
  d.left_x = 150, d.right_x = 430;
  d.width = 580;
  d.height = d.top + d.row_h * static_cast<float>(n) + 40;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (weights(i, j) >= min_weight) d.links.push_back({i, j, std::clamp(weights(i, j), 0.0, 1.0)});
  d.caption = "Left: query i; right: key j. A line's opacity is its weight; links below " + std::to_string(min_weight).substr(0, 4) +
              " are left out.";
  return d;
}

Diagram signed_links_diagram(const std::vector<std::string>& tokens, const deberta::Matrix& values, const std::string& title,
                             double min_fraction) {
  Diagram d = links_diagram(tokens, deberta::Matrix::Zero(values.rows(), values.cols()), title, 1.0);
  const double top = values.size() ? values.cwiseAbs().maxCoeff() : 0.0;
  d.signed_links = true;
  d.link_color = 0xff1f7ae0;  // orange: raises the score; blue (link_color_negative): lowers it
  d.links.clear();
  if (top > 0)
    for (Eigen::Index i = 0; i < values.rows(); ++i)
      for (Eigen::Index j = 0; j < values.cols(); ++j)
        if (std::fabs(values(i, j)) >= min_fraction * top)
          d.links.push_back({static_cast<int>(i), static_cast<int>(j), values(i, j) / top});
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "Left: query i; right: key j. Orange: the term raises the score of key j, blue: it lowers it; opacity = "
                "|contribution| / %.3g (the largest, logit units); below %g %% of it left out.",
                top, 100 * min_fraction);
  d.caption = buf;
  return d;
}

LinksLayout links_layout(int n, float avail_w, float avail_h, float font_px, float label_w) {
  LinksLayout l;
  // The labels shrink from the UI font towards 11 px to fit the rows into the panel, never below.
  const float ui = std::max(font_px, 11.0f);
  const float fit = n > 0 ? (avail_h - 5 * ui) / static_cast<float>(n) : ui;
  l.font_px = std::clamp(fit - 1, 11.0f, ui);
  l.top_px = l.font_px * 2.5f;            // the column titles above row 0
  const float bottom = l.font_px * 2.5f;  // the caption under the last row
  const float room = std::max(avail_h - l.top_px - bottom, 0.0f);
  const float tight = l.font_px + 1;
  l.row_px = n > 0 ? std::clamp(room / static_cast<float>(n), tight, 2 * tight) : tight;
  l.left_px = label_w + 8;
  l.right_px = std::max(avail_w - label_w - 8, l.left_px + 40);
  l.height_px = l.top_px + l.row_px * static_cast<float>(std::max(n, 0)) + bottom;
  l.scrolls = l.height_px > avail_h;
  return l;
}

}  // namespace viewer
