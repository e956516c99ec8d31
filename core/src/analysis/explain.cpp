#include "deberta/explain.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace deberta {

namespace {
// The unscaled dot product of each term at cell (i, j) of head `head`, from the equations' own term
// functions (`term_scores` with s = 1): the cell as eq. 4 for one query and one key — Q_c's row i,
// K_c's row j — and a table of two rows, row 0 the one c2p reads (δ(i, j) = c2p_row: K_r's row
// there) and row 1 the one p2c reads (p2c_row: Q_r's row there); p2p reads Q_r's row 1 against
// K_r's row 0. The rows no term reads (K_r's 1, Q_r's 0) are zero: the trace need not hold them.
// A term whose projection the trace lacks stays 0.
PerTerm<double> cell_dot_products(const AttentionTrace& a, int64_t head, int64_t d, int64_t i, int64_t j,
                                  int64_t c2p_row, int64_t p2c_row) {
  HeadProjections cell;
  cell.Q_c = a.Q_c.row(i).segment(head * d, d);
  cell.K_c = a.K_c.row(j).segment(head * d, d);
  // `projection`'s row `row` (whole-table coordinates) as row `at` of a two-row table.
  const auto two_rows = [&](const Matrix& projection, int64_t row, int64_t at) {
    if (projection.size() == 0) return Matrix();
    Matrix table = Matrix::Zero(2, d);
    table.row(at) = projection.row(row - a.row_offset).segment(head * d, d);
    return table;
  };
  cell.K_r = two_rows(a.K_r, c2p_row, 0), cell.Q_r = two_rows(a.Q_r, p2c_row, 1);
  const IndexMatrix c2p = IndexMatrix::Constant(1, 1, 0), p2c = IndexMatrix::Constant(1, 1, 1);
  const Vector one = Vector::Ones(1);
  AttentionSetup unscaled;
  unscaled.scale = 1, unscaled.c2p_row = &c2p, unscaled.p2c_row = &p2c, unscaled.mask = &one;
  PerTerm<double> dot{};
  for (Term t : kAllTerms)
    if ((!reads_K_r(t) || cell.K_r.size() > 0) && (!reads_Q_r(t) || cell.Q_r.size() > 0))
      dot[t] = term_scores(t, cell, unscaled)(0, 0);
  return dot;
}
}  // namespace

CellExplanation explain_cell(const Model& model, const ForwardTrace& trace, int64_t layer, int64_t head, int64_t i,
                             int64_t j) {
  const ModelConfig& c = model.config;
  const int64_t N = trace.inputs.size();
  if (trace.level != TraceLevel::Full) throw Error("explain: the trace does not keep the projections (needs a full trace)");
  if (layer < 0 || layer >= static_cast<int64_t>(trace.layers.size()))
    throw Error("explain: layer " + std::to_string(layer) + " is outside [0, " + std::to_string(trace.layers.size()) + ")");
  if (head < 0 || head >= c.num_attention_heads)
    throw Error("explain: head " + std::to_string(head) + " is outside [0, " + std::to_string(c.num_attention_heads) + ")");
  if (i < 0 || i >= N || j < 0 || j >= N)
    throw Error("explain: cell (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                std::to_string(N) + "-token sequence");
  const SequenceContext& s = trace.context;
  const ResolvedAttention& r = s.attention;
  const AttentionTrace& a = trace.layers[layer].attention;
  const int64_t d = c.d_head();
  CellExplanation e;
  e.layer = layer, e.head = head, e.i = i, e.j = j, e.n = N;
  e.rel_pos_raw = i - j;
  e.k = r.k, e.window = r.window;
  e.paper_p2c = r.p2c_index == P2CIndex::Paper;
  e.d = static_cast<double>(d), e.scale_factor = r.scale_factor, e.scale = r.scale;
  if (c.relative_attention) {
    e.rel_pos = s.rel_pos(i, j);
    e.c2p_row = s.c2p_row(i, j);
    e.p2c_row = s.p2c_row(i, j);
  }
  e.dot = cell_dot_products(a, head, d, i, j, e.c2p_row, e.p2c_row);
  e.active = r.terms;
  // The stored, scaled terms: the same numbers the maps show.
  for (Term t : kAllTerms)
    if (r.terms[t]) e.scaled[t] = a.terms[t][head](i, j);
  e.logit = a.logits[head](i, j);
  e.valid = s.mask[i] != 0 && s.mask[j] != 0;
  e.head_masked = s.head_mask.count({layer, head}) > 0;
  for (int64_t t = 0; t < N; ++t) {
    e.logits_row.push_back(a.logits[head](i, t));
    e.probs_row.push_back(a.probs[head](i, t));
  }
  e.prob = a.probs[head](i, j);
  return e;
}

std::string scale_root(double scale_factor) {
  if (scale_factor == 1.0) return "√d";
  char buf[64];
  std::snprintf(buf, sizeof buf, "√(%gd)", scale_factor);
  return buf;
}

namespace {
std::string num(double v, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}
using Args = std::vector<std::pair<std::string, std::string>>;
ExplainSegment math(std::string text) { return {std::move(text), false, {}}; }
ExplainSegment prose(std::string text, Args args = {}) { return {std::move(text), true, std::move(args)}; }
/// eq. 4's Ã_ij, the unscaled sum of the active dot products, then the score s · Ã_ij that the
/// softmax sees (the paper's Ã/√(3d); Ã/√(f·d) with the model's factor f).
ExplainLine term_sum(const CellExplanation& e, bool plain_attention) {
  std::string formula, numbers;
  double raw = 0;
  for (Term t : kAllTerms) {
    if (!e.active[t]) continue;
    const double v = e.dot[t];
    formula += std::string(formula.empty() ? "" : " + ") + term_name(t);
    if (numbers.empty()) numbers = num(v);
    else numbers += (v < 0 ? " - " : " + ") + num(std::fabs(v));
    raw += v;
  }
  if (formula.empty()) return {prose("(no term active)"), math(" = 0")};
  if (plain_attention) return {math("Q[i]·K[j] = " + num(raw) + ";  A_ij = " + num(raw) + " / √d = " + num(e.logit))};
  return {math("Ã = " + formula + " = " + numbers + " = " + num(raw) + ";  s · Ã = " + num(e.logit))};
}
ExplainStep step(ExplainStepKind kind, ExplainLine equation, ExplainLine formula, ExplainLine numbers) {
  ExplainStep st;
  st.kind = kind;
  st.equation = english_text(equation), st.formula = english_text(formula), st.numbers = english_text(numbers);
  st.equation_parts = std::move(equation), st.formula_parts = std::move(formula), st.numbers_parts = std::move(numbers);
  return st;
}
}  // namespace

std::string english_text(const ExplainLine& line) {
  std::string out;
  for (const ExplainSegment& seg : line) {
    if (!seg.prose || seg.args.empty()) {
      out += seg.text;
      continue;
    }
    std::string t = seg.text;
    for (const auto& [name, value] : seg.args) {
      const std::string key = "{" + name + "}";
      for (size_t at = t.find(key); at != std::string::npos; at = t.find(key, at + value.size())) t.replace(at, key.size(), value);
    }
    out += t;
  }
  return out;
}

std::vector<ExplainStep> explanation_steps(const CellExplanation& e) {
  using K = ExplainStepKind;
  std::vector<ExplainStep> steps;
  const std::string ij = "(" + std::to_string(e.i) + "," + std::to_string(e.j) + ")";
  const std::string ji = "(" + std::to_string(e.j) + "," + std::to_string(e.i) + ")";
  const bool position_terms = e.active[Term::c2p] || e.active[Term::p2c] || e.active[Term::p2p];
  // Only c2c at s = 1/√d is ordinary attention: the standard self-attention display of §3.1
  // (A = QKᵀ/√d, H_o = softmax(A)V; unnumbered in arXiv 2006.03654 v6, whose eq. 1 is the MLM
  // objective of §2.2), not eq. 4.
  const bool plain_attention = !position_terms && e.scale_factor == 1;
  const std::string root = scale_root(e.scale_factor);
  if (e.k > 0 && position_terms) {
    ExplainLine rel = {math("i - j = " + std::to_string(e.i) + " - " + std::to_string(e.j) + " = " + std::to_string(e.rel_pos_raw))};
    if (e.rel_pos != e.rel_pos_raw) rel.push_back(math(", ")), rel.push_back(prose("log bucket {bucket}", {{"bucket", std::to_string(e.rel_pos)}}));
    if (e.window != e.k) rel.push_back(math(", ")), rel.push_back(prose("window K = {K}", {{"K", std::to_string(e.window)}}));
    rel.push_back(math("  →  δ" + ij + " = "));
    rel.push_back(prose("row {row} of the relative table", {{"row", std::to_string(e.c2p_row)}}));
    ExplainLine formula = e.rel_pos != e.rel_pos_raw
                              ? ExplainLine{math("δ(i,j) = clamp(bucket(i - j) + k, 0, 2k - 1),  k = " + std::to_string(e.k) + " "),
                                            prose("(the released v2 code buckets i - j first; eq. 3 clamps the bucket)")}
                              : ExplainLine{math("δ(i,j) = clamp(i - j + k, 0, 2k - 1),  k = " + std::to_string(e.k))};
    steps.push_back(step(K::RelativePosition, {math("eq. 3")}, std::move(formula), std::move(rel)));
    if (e.active[Term::p2c] || e.active[Term::p2p])
      steps.push_back(step(K::P2CIndex, {prose("eq. 4 (p2c index)")},
                           {e.paper_p2c ? prose("paper: p2c reads Q_r[δ(j,i)]") : prose("released code: p2c reads Q_r[δ(i,j)] (paper: δ(j,i))")},
                           {prose("p2c reads row {row}", {{"row", std::to_string(e.p2c_row)}}), math(" = δ" + (e.paper_p2c ? ji : ij))}));
  }
  steps.push_back(step(K::Scale, {prose("scale")},
                       plain_attention ? ExplainLine{math("s = 1 / √d (§3.1)")}
                                       : ExplainLine{math("s = 1 / √(f · d), f = "),
                                                     prose("the model's scale factor (the paper's 1/√(3d): §3.1, after eq. 4)")},
                       {math("s = 1 / √(" + num(e.scale_factor) + " · " + num(e.d) + ") = 1/" + root + " = " + num(e.scale))}));
  const auto unscaled = [](const char* term) { return prose("(unscaled; the map holds s · {term})", {{"term", term}}); };
  if (e.active[Term::c2c])
    steps.push_back(step(K::C2C, plain_attention ? ExplainLine{prose("§3.1 (standard attention)")} : ExplainLine{math("eq. 4 (c2c)")},
                         plain_attention ? ExplainLine{math("A_ij = Q[i] · K[j] / √d")}
                                         : ExplainLine{math("c2c = Q_c[i] · K_c[j]  "), unscaled("c2c")},
                         {math("Q_c[" + std::to_string(e.i) + "]·K_c[" + std::to_string(e.j) + "] = " + num(e.dot[Term::c2c]) +
                               (plain_attention ? ",  A_ij = " : ",  s · c2c = ") + num(e.scaled[Term::c2c]))}));
  if (e.active[Term::c2p])
    steps.push_back(step(K::C2P, {math("eq. 4 (c2p)")}, {math("c2p = Q_c[i] · K_r[δ(i,j)]  "), unscaled("c2p")},
                         {math("Q_c[" + std::to_string(e.i) + "]·K_r[" + std::to_string(e.c2p_row) + "] = " + num(e.dot[Term::c2p]) +
                               ",  s · c2p = " + num(e.scaled[Term::c2p]))}));
  if (e.active[Term::p2c])
    steps.push_back(step(K::P2C, {math("eq. 4 (p2c)")},
                         {math(std::string("p2c = K_c[j] · Q_r[") + (e.paper_p2c ? "δ(j,i)]" : "δ(i,j)]") + "  "), unscaled("p2c")},
                         {math("K_c[" + std::to_string(e.j) + "]·Q_r[" + std::to_string(e.p2c_row) + "] = " + num(e.dot[Term::p2c]) +
                               ",  s · p2c = " + num(e.scaled[Term::p2c]))}));
  if (e.active[Term::p2p])
    steps.push_back(step(K::P2P, {math("eq. 2 (p2p)")},
                         {math("p2p = Q_r["), prose("p2c row"), math("] · K_r[δ(i,j)]  "), unscaled("p2p")},
                         {math("Q_r[" + std::to_string(e.p2c_row) + "]·K_r[" + std::to_string(e.c2p_row) + "] = " + num(e.dot[Term::p2p]) +
                               ",  s · p2p = " + num(e.scaled[Term::p2p]))}));
  std::string terms;  // this model's own terms, as eq. 4's sum lists them
  for (Term t : kAllTerms)
    if (e.active[t]) terms += std::string(terms.empty() ? "" : " + ") + term_name(t);
  steps.push_back(step(K::Sum, {plain_attention ? prose("§3.1 (score)") : prose("eq. 4 (sum)")},
                       plain_attention
                           ? ExplainLine{math("A_ij = Q[i]·K[j] / √d "), prose("(§3.1's A is the scaled score)")}
                           : ExplainLine{math("Ã_ij = " + (terms.empty() ? std::string("0") : terms) + " "),
                                         prose("(unscaled; the paper's \"attention score\"); the score the softmax takes is s · Ã_ij = Ã_ij / {root}",
                                               {{"root", root}})},
                       term_sum(e, plain_attention)));
  ExplainLine softmax = {math("weight_ij = " + num(e.prob))};
  if (!e.valid) softmax = {prose("query or key is padding: excluded"), math(", weight_ij = 0")};
  else if (e.head_masked) softmax = {prose("head masked:"), math(" weight_ij = 0 "), prose("(softmax would give a non-zero value)")};
  steps.push_back(step(K::Softmax, {math("softmax")},
                       plain_attention ? ExplainLine{math("weights = softmax_j(A_i) "), prose("over valid keys (§3.1)")}
                                       : ExplainLine{math("weights = softmax_j(Ã_i / " + root + ") "), prose("over valid keys (eq. 4)")},
                       std::move(softmax)));
  return steps;
}

std::string format_explanation(const CellExplanation& e, const std::vector<std::string>& token_names) {
  std::ostringstream out;
  auto name = [&](int64_t t) {
    return t < static_cast<int64_t>(token_names.size()) ? " '" + token_names[t] + "'" : std::string();
  };
  out << "layer " << e.layer << ", head " << e.head << ", query i = " << e.i << name(e.i) << ", key j = " << e.j
      << name(e.j) << " (N = " << e.n << ")\n\n";
  for (const ExplainStep& s : explanation_steps(e))
    out << "[" << s.equation << "]  " << s.formula << "\n    " << s.numbers << "\n";
  out << "\nsoftmax row of query " << e.i << ":\n";
  for (size_t t = 0; t < e.probs_row.size(); ++t)
    out << "  j=" << t << name(static_cast<int64_t>(t)) << "  logit " << num(e.logits_row[t]) << "  prob "
        << num(e.probs_row[t]) << (static_cast<int64_t>(t) == e.j ? "   <-" : "") << "\n";
  return out.str();
}

}  // namespace deberta
