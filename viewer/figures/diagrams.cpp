// diagrams.cpp — the pipeline and token-link layouts (see diagrams.h). Their labels are worded in
// the reader's language for the Pipeline and Token links tabs (`translated`) and in English for the
// slide figure (figure_export.h), which keeps the paper's words; the paper's symbols, shapes and
// numbers are written alike in both.
#include "figures/diagrams.h"

#include "i18n/i18n.h"

#include "deberta/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace viewer {

namespace {

std::string n_(int64_t v) { return std::to_string(v); }

/// `msgid` (marked N_) with its {name}s filled: translated (trf) when `t`, else English.
template <class... A>
std::string say(bool t, const char* msgid, const A&... args) {
  return t ? trf(msgid, args...) : fmt::format(fmt::runtime(msgid), args...);
}

// Fills in ImGui's 0xAABBGGRR order.
constexpr uint32_t kEmbed = 0xffd9ecf7, kTerm = 0xfff7e3d0, kSoft = 0xffd6f0dc, kFfn = 0xffe6e6e6, kEmd = 0xffd4d9f8,
                   kHead = 0xfff0d9ec, kPos = 0xffc8ecf4, kFrame = 0xfffaf7f2;

}  // namespace

Diagram pipeline_diagram(const deberta::ModelConfig& c, const deberta::ResolvedAttention& att, int n, bool emd, bool lm_head,
                         bool t) {
  Diagram d;
  const int64_t H = c.hidden_size, h = c.num_attention_heads, dh = c.d_head(), L = c.num_hidden_layers, k = att.k;
  const std::string N = n_(n);
  // TRANSLATORS: the Pipeline diagram's heading. N, H, d, L are the paper's symbols; {heads} the number of attention heads.
  d.title = say(t, N_("The pipeline of this model: N = {N} tokens, H = {H}, {heads} heads of d = {d}, L = {L} layers"),
                arg("N", n), arg("H", H), arg("heads", h), arg("d", dh), arg("L", L)) +
            (c.relative_attention ? ", k = " + n_(k) : "");
  const float top = 40, bh = 46, gap = 10;

  // Embedding.
  DiagramBox emb;
  emb.x = 20, emb.y = top + 150, emb.w = 150, emb.h = 70, emb.fill = kEmbed, emb.target = "grid";
  // TRANSLATORS: a box of the Pipeline diagram (the input embedding); keep it short, the box is narrow.
  emb.title = say(t, N_("Embedding"));
  // TRANSLATORS: the embedding box's sums: the word (token) embedding, the absolute position embedding,
  // the token type (segment) embedding. Short words: the box is 150 points wide.
  // (Three sums break after the second: the box is narrow.)
  emb.detail = say(t, N_("word")) + (c.position_biased_input ? " + " + say(t, N_("position")) : "") +
               (c.type_vocab_size > 0 ? std::string(c.position_biased_input ? "\n+ " : " + ") + say(t, N_("type")) : "") +
               ", LayerNorm\nH_0: [" + N + " × " + n_(H) + "]";
  d.boxes.push_back(emb);

  // One encoder layer, opened up.
  DiagramBox layer;
  layer.x = 200, layer.y = top, layer.w = 330, layer.container = true, layer.fill = kFrame, layer.target = "head";
  // TRANSLATORS: the frame of one encoder layer in the Pipeline diagram; l and L are the paper's symbols.
  layer.title = say(t, N_("Encoder layer l (× L = {L}, each its own weights)"), arg("L", L));
  float y = top + 24;
  auto add = [&](const std::string& title, const std::string& detail, uint32_t fill, const std::string& target, int q, bool off) {
    DiagramBox b;
    b.x = layer.x + 12, b.y = y, b.w = layer.w - 24, b.h = bh, b.fill = fill, b.target = target, b.quantity = q, b.off = off;
    // TRANSLATORS: after a term's box title in the Pipeline diagram: an ablation switched the term off
    // in this run (the box is drawn dimmed). One short word: the title is long already.
    b.title = title + (off ? "  " + say(t, N_("(off)")) : "");
    b.detail = detail;
    d.boxes.push_back(b);
    y += bh + gap;
  };
  // TRANSLATORS: a shape in the Pipeline diagram: {heads} attention heads, each an N × N map.
  const std::string nn = say(t, N_("[{heads} heads × {N} × {N}]"), arg("heads", h), arg("N", n));
  // TRANSLATORS: in a box title of the Pipeline diagram: equation 4 of the paper, its term (a), (b) or (c).
  const auto term_of_eq4 = [t](const char* letter) { return say(t, N_("eq. 4, term ({letter})"), arg("letter", letter)); };
  // TRANSLATORS: the shapes of Q_c, K_c, V_c (or Q, K, V): each is {shape}, e.g. [33 × 4·48].
  const std::string each = say(t, N_("each {shape}"), arg("shape", "[" + N + " × " + n_(h) + "·" + n_(dh) + "]"));
  // Without a position term the layer is the standard attention of §3.1 (unnumbered in v6):
  // no Ã of eq. 4 to speak of, no relative table read.
  using deberta::Term;
  const bool pos = deberta::reads_relative_table(att.terms);
  const std::string root = deberta::scale_root(att.scale_factor);
  if (pos) {
    add("Q_c, K_c, V_c  (eq. 4)", "H W_{q,c}, H W_{k,c}, H W_{v,c}: " + each, kEmbed, "equation", -1, false);
    add("c2c  Q_c[i] K_c[j]ᵀ  (" + term_of_eq4("a") + ")", nn, kTerm, "head", 0, !att.terms[Term::c2c]);
  } else {
    // TRANSLATORS: the Pipeline diagram's box of a run without position terms (§3.1 of the paper).
    add("Q, K, V  (" + say(t, N_("§3.1, standard attention")) + ")", "H W_q, H W_k, H W_v: " + each, kEmbed, "equation", -1, false);
    // TRANSLATORS: the Pipeline diagram: Q[i] K[j]ᵀ is then the score's only term.
    add("Q[i] K[j]ᵀ  (" + say(t, N_("§3.1: the only term, no position term")) + ")", nn, kTerm, "head", 0, !att.terms[Term::c2c]);
  }
  if (c.relative_attention) {
    add("c2p  Q_c[i] K_r[δ(i,j)]ᵀ  (" + term_of_eq4("b") + ")", nn + ", K_r = P W_{k,r}", kTerm, "head", 1, !att.terms[Term::c2p]);
    // eq. 4's term (c) reads δ(j,i); the released code's default reads δ(i,j), and the box says so
    // (its title stays short enough to read; the paper's index is in its second line).
    const bool paper = att.p2c_index == deberta::P2CIndex::Paper;
    // TRANSLATORS: the p2c box of the Pipeline diagram, second line: p2c reads δ(i,j) as the released
    // code does, where the paper's eq. 4 writes δ(j,i). Keep it short (about 30 characters).
    add("p2c  K_c[j] Q_r[" + std::string(paper ? "δ(j,i)" : "δ(i,j)") + "]ᵀ  (" + term_of_eq4("c") + ")",
        nn + ", Q_r = P W_{q,r}" + (paper ? "" : "\n" + say(t, N_("the code's index; the paper: δ(j,i)"))), kTerm, "head", 2,
        !att.terms[Term::p2c]);
    // TRANSLATORS: the p2p box of the Pipeline diagram: the fourth term of the paper's eq. 2.
    if (att.terms[Term::p2p]) add("p2p  Q_r K_rᵀ  (" + say(t, N_("eq. 2's fourth term")) + ")", nn, kTerm, "head", 3, false);
  }
  // TRANSLATORS: the softmax box of the Pipeline diagram: {softmax} is softmax(Ã / √(3d)) or softmax(Q Kᵀ / √d).
  const auto over_keys = [t](const std::string& f) { return say(t, N_("{softmax} over keys j"), arg("softmax", f)); };
  if (pos)
    // TRANSLATORS: under the softmax box's title in the Pipeline diagram.
    add(over_keys("softmax(Ã / " + root + ")") + "  (eq. 4)", nn + ", " + say(t, N_("Ã = the sum of the terms; each row sums to 1")),
        kSoft, "head", 5, false);
  else
    // TRANSLATORS: under the softmax box's title in the Pipeline diagram (a run without position terms).
    add(over_keys("softmax(Q Kᵀ / " + root + ")") + "  (§3.1)", nn + ", " + say(t, N_("each row sums to 1")), kSoft, "head", 5, false);
  // TRANSLATORS: a box of the Pipeline diagram: the context (the attention weights times V_c), the output
  // projection W_o, the residual + H and LayerNorm. V_c, W_o, H are the paper's symbols.
  add(say(t, N_("context = weights · V_c, W_o, + H, LayerNorm")), "[" + N + " × " + n_(H) + "]", kFfn, "head", -1, false);
  // TRANSLATORS: the feed-forward box of the Pipeline diagram: H → {size} → H, then the residual and LayerNorm.
  add(say(t, N_("FFN  H → {size} → H, + residual, LayerNorm"), arg("size", c.intermediate_size)), "H_l: [" + N + " × " + n_(H) + "]",
      kFfn, "grid", -1, false);
  layer.h = y - layer.y + 2;
  d.boxes.insert(d.boxes.begin() + 1, layer);  // the frame is drawn before its boxes

  // The relative table and δ, under the layer.
  float below = layer.y + layer.h + 18;
  if (c.relative_attention) {
    const bool reads = pos;
    DiagramBox pos;
    pos.x = layer.x, pos.y = below, pos.w = layer.w, pos.h = 60, pos.fill = kPos, pos.target = "distance";
    // TRANSLATORS: the box of the relative table in the Pipeline diagram; δ(i, j) is the paper's symbol (eq. 3).
    pos.title = say(t, N_("Relative positions: δ(i, j) (eq. 3)"));
    pos.off = !reads;
    // TRANSLATORS: the relative table P in the Pipeline diagram: {rows} rows (2k) of {H} numbers, one table for all layers.
    pos.detail = say(t, N_("table P: [2k = {rows} × {H}], shared by all layers"), arg("rows", 2 * k), arg("H", H)) + "\nδ: [" +
                 N + " × " + N + "]" +
                 // TRANSLATORS: after δ's shape in the relative table's box: δ(i, j) goes through the log buckets.
                 (c.log_buckets() ? ", " + say(t, N_("after log buckets")) : "");
    if (!reads) {
      // TRANSLATORS: a third line in the relative table's box when no attention term reads the table.
      pos.detail += "\n" + say(t, N_("no term reads it in this run"));
      pos.h += 14;
    }
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
    // TRANSLATORS: the EMD box of the Pipeline diagram, five short lines (the box is 210 points wide):
    // the released code's EMD starts from H, the output of layer L − 2 = {layer}, adds the absolute
    // positions P (appendix A.9), then runs the last layer's weights ({last}) twice, each pass's
    // query the previous I ({next} is I_{t+1}), key and value H. Keep the \n line breaks.
    e.detail = say(t, N_("released code: H = output of\nlayer L − 2 = {layer}, I_0 = H + P\n(absolute positions; A.9)\n{next} = layer "
                         "{last}'s weights\n(query I_t, key/value H), 2 passes"),
                   arg("layer", L - 2), arg("last", L - 1), arg("next", "I_{t+1}"));
    d.boxes.push_back(e);
    d.arrows.push_back({last_right, mid_y, e.x, mid_y});
    last_right = e.x + e.w;
    x = e.x + e.w + 30;
  }
  DiagramBox head;
  head.x = x, head.y = top + 150, head.w = 150, head.h = 70, head.fill = kHead, head.target = "predictions";
  // TRANSLATORS: the last box of the Pipeline diagram: the masked-LM head, or the encoder's output.
  head.title = lm_head ? say(t, N_("MLM head")) : say(t, N_("Output"));
  // TRANSLATORS: the MLM head's box: a dense layer, LayerNorm, the product with the embedding matrix Eᵀ,
  // then one row of {vocab} logits a [MASK] ("masks" counts the [MASK]s).
  head.detail = lm_head ? say(t, N_("dense, LayerNorm, × Eᵀ\nlogits: [masks × {vocab}]"), arg("vocab", c.vocab_size))
                        : "H_L: [" + N + " × " + n_(H) + "]";
  d.boxes.push_back(head);
  d.arrows.push_back({last_right, mid_y, head.x, mid_y});

  d.width = head.x + head.w + 20;
  d.height = std::max(below, layer.y + layer.h + 20) + 30;
  // TRANSLATORS: the caption under the Pipeline diagram; {emd} is one of the two sentences after it.
  d.caption = say(t, N_("Click a box to open its view. Shapes are this model's; the terms are per head. {emd} Sections and "
                        "equations: arXiv 2006.03654 v6."),
                  arg("emd", emd ? say(t, N_("The EMD adds absolute positions only before the MLM head."))
                                 : say(t, N_("This run has no EMD."))));
  return d;
}

Diagram links_diagram(const std::vector<std::string>& tokens, const deberta::Matrix& weights, const std::string& title,
                      double min_weight, bool t) {
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
  // TRANSLATORS: the caption under the Token links diagram; {min} is a weight such as 0.01.
  d.caption = say(t, N_("Left: query i; right: key j. A line's opacity is its weight; links below {min} are left out."),
                  arg("min", std::to_string(min_weight).substr(0, 4)));
  return d;
}

Diagram signed_links_diagram(const std::vector<std::string>& tokens, const deberta::Matrix& values, const std::string& title,
                             double min_fraction, bool t) {
  Diagram d = links_diagram(tokens, deberta::Matrix::Zero(values.rows(), values.cols()), title, 1.0, t);
  const double top = values.size() ? values.cwiseAbs().maxCoeff() : 0.0;
  d.signed_links = true;
  d.link_color = 0xff1f7ae0;  // orange: raises the score; blue (link_color_negative): lowers it
  d.links.clear();
  if (top > 0)
    for (Eigen::Index i = 0; i < values.rows(); ++i)
      for (Eigen::Index j = 0; j < values.cols(); ++j)
        if (std::fabs(values(i, j)) >= min_fraction * top)
          d.links.push_back({static_cast<int>(i), static_cast<int>(j), values(i, j) / top});
  char top_s[32], pct_s[32];
  std::snprintf(top_s, sizeof top_s, "%.3g", top);
  std::snprintf(pct_s, sizeof pct_s, "%g", 100 * min_fraction);
  // TRANSLATORS: the caption under the Token links diagram of one term; {top} is the largest |contribution|
  // (in logit units), {percent} a number (5): links smaller than that percentage of it are not drawn.
  // xgettext:no-c-format
  d.caption = say(t, N_("Left: query i; right: key j. Orange: the term raises the score of key j, blue: it lowers it; opacity = "
                        "|contribution| / {top} (the largest, logit units); below {percent} % of it left out."),
                  arg("top", std::string(top_s)), arg("percent", std::string(pct_s)));
  return d;
}

float diagram_scale(const Diagram& d, float avail_w, float avail_h) {
  if (d.width <= 0 || d.height <= 0) return 1;
  return std::clamp(std::min(avail_w / d.width, std::max(avail_h - 40, 200.0f) / d.height), 0.4f, 1.8f);
}

float heading_px(const Diagram& d, float scale, float ui_px, const std::function<float(const std::string&, float)>& width) {
  const float px = ui_px * 1.05f, room = (d.width - 40) * scale, need = width(d.title, px);
  return need > room && need > 0 ? std::max(px * room / need, 8.0f) : px;
}

BoxFont box_font(const DiagramBox& b, float scale, float ui_px, const std::function<float(const std::string&, float)>& width) {
  BoxFont f;
  const float f1 = std::clamp(11.0f * scale, ui_px * 0.85f, ui_px * 1.1f);
  const float room_w = (b.w - 12) * scale, room_h = (b.h - 6) * scale;
  const float lines = b.container ? 0.0f : static_cast<float>(1 + std::count(b.detail.begin(), b.detail.end(), '\n'));
  const float need_w = std::max(width(b.title, f1), b.container ? 0.0f : width(b.detail, f1 * 0.88f));
  const float need_h = b.container ? f1 : f1 + 2 + lines * f1 * 0.88f;
  const float fit = std::min({1.0f, room_w / std::max(need_w, 1.0f), b.container ? 1.0f : room_h / std::max(need_h, 1.0f)});
  f.fits = f1 * fit >= 8.0f;
  f.title_px = f1 * std::max(8.0f / f1, fit);
  f.detail_px = f.title_px * 0.88f;
  return f;
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
