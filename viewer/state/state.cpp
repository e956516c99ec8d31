// state.cpp — reading the plain viewer state: quantities, tabs, tokens, the selection and which
// layers the shown panels need in full.
#include "state/state.h"

#include "i18n/i18n.h"

#include "deberta/explain.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace viewer {

// ----------------------------------------------------------------------------------------------
// Quantities and tabs

const TermText kTermTexts[deberta::kTermCount] = {
    // The maps hold each term times s: s·c2c; c2c itself is the unscaled dot product (eq. 4).
    {deberta::Term::c2c, N_("s·c2c: content→content, c2c = Q_c[i]·K_c[j]"), "Content-to-content term (c2c)",
     "s·Q_c[i]·K_c[j]", "s·Q_c[i]·K_c[j]", N_("c2c: its part of the score (signed)"),
     N_("content→content: Q_c[i]·K_c[j], the ordinary attention")},
    {deberta::Term::c2p, N_("s·c2p: content→position, c2p = Q_c[i]·K_r[δ(i,j)]"), "Content-to-position term (c2p)",
     "s·Q_c[i]·K_r[δ(i,j)]", "s·Q_c[i]·K_r[δ(i,j)]", N_("c2p: its part of the score (signed)"),
     N_("content→position: Q_c[i]·K_r[δ(i,j)] — how much token i cares about what sits at relative distance i−j")},
    {deberta::Term::p2c, N_("s·p2c: position→content, p2c = K_c[j]·Q_r[δ]"), "Position-to-content term (p2c)",
     "s·K_c[j]·Q_r[δ(i,j)]", "s·K_c[j]·Q_r[δ(j,i)]", N_("p2c: its part of the score (signed)"),
     N_("position→content: K_c[j]·Q_r[δ] — how much token j is wanted from its relative position")},
    {deberta::Term::p2p, N_("s·p2p: position→position, p2p = Q_r·K_r"), "Position-to-position term (p2p)",
     "s·Q_r·K_r", "s·Q_r·K_r", N_("p2p: its part of the score (signed)"),
     N_("position→position: Q_r·K_r, the fourth term of eq. 2, which the paper drops (the model was never trained "
        "with it)")},
};

const TermText& term_text(deberta::Term t) {
  for (const TermText& row : kTermTexts)
    if (row.term == t) return row;
  throw std::logic_error(std::string("viewer: kTermTexts has no row for term ") + deberta::term_name(t));
}

const char* quantity_name(Quantity q) {
  if (const std::optional<deberta::Term> t = quantity_term(q)) return deberta::term_name(*t);
  return q == Quantity::Logits ? "logits" : q == Quantity::Probs ? "probs" : "?";
}

std::optional<Quantity> quantity_from_name(const std::string& name) {
  for (Quantity q : kAllQuantities)
    if (name == quantity_name(q)) return q;
  return std::nullopt;
}

std::string quantity_names() {
  std::string out;
  for (Quantity q : kAllQuantities) out += std::string(out.empty() ? "" : ", ") + quantity_name(q);
  return out;
}

const char* quantity_label(Quantity q) {
  // English here (figures, tests); the panels show tr(quantity_label(q)).
  if (const std::optional<deberta::Term> t = quantity_term(q)) return term_text(*t).label;
  if (q == Quantity::Logits) return N_("score s·Ã, Ã the sum of the model's active terms, s the model's scale");
  if (q == Quantity::Probs) return N_("attention weights softmax_j(s·Ã)");
  return "?";
}

std::string score_label(double scale_factor, bool translated) {
  const std::string root = deberta::scale_root(scale_factor);
  // TRANSLATORS: {root} is the scale's root, e.g. √(3d); Ã is the paper's symbol.
  return translated ? trf("score Ã/{root}", arg("root", root)) : "score Ã/" + root;
}

std::string weights_label(double scale_factor) { return "softmax(Ã/" + deberta::scale_root(scale_factor) + ")"; }

std::string quantity_label(Quantity q, double scale_factor, bool translated, const deberta::PerTerm<bool>* terms) {
  const std::string root = deberta::scale_root(scale_factor);
  switch (q) {
    case Quantity::Logits: {
      // Ã as this run's own sum (c2c + c2p on a two-term model), or Ã itself where the terms are not known.
      std::string sum;
      if (terms)
        for (deberta::Term t : deberta::kAllTerms)
          if ((*terms)[t]) sum += std::string(sum.empty() ? "" : " + ") + deberta::term_name(t);
      const std::string rhs = sum.empty() ? "s·Ã" : "s·(" + sum + ")";
      // TRANSLATORS: {root} is the scale's root, e.g. √(3d); {sum} is "s·(c2c + c2p)" or "s·Ã"; keep the formula as written.
      return translated ? trf("score Ã/{root} = {sum}, s = 1/{root}", arg("root", root), arg("sum", rhs))
                        : "score Ã/" + root + " = " + rhs + ", s = 1/" + root;
    }
    case Quantity::Probs:
      // TRANSLATORS: {root} is the scale's root, e.g. √(3d).
      return translated ? trf("attention weights softmax_j(Ã/{root})", arg("root", root))
                        : "attention weights softmax_j(Ã/" + root + ")";
    default: return translated ? tr(quantity_label(q)) : quantity_label(q);
  }
}

std::string quantity_words(Quantity q) {
  if (const std::optional<deberta::Term> t = quantity_term(q)) return term_text(*t).words;
  return q == Quantity::Logits ? "Attention scores" : q == Quantity::Probs ? "Attention weights" : "?";
}

std::string layer_head_words(int layer, int layers, int head, int heads) {
  return "layer " + std::to_string(layer) + " (of 0–" + std::to_string(std::max(layers - 1, 0)) + "), head " +
         std::to_string(head) + " (of 0–" + std::to_string(std::max(heads - 1, 0)) + ")";
}

std::string cell_sum_text(const std::vector<std::pair<std::string, double>>& scaled_terms, double scale, double score,
                          double weight, double scale_factor) {
  char buf[64];
  const auto v = [&](double x, bool sign = true) {
    std::snprintf(buf, sizeof buf, sign ? "%+.4f" : "%.4f", x);
    return std::string(buf);
  };
  std::string out;
  for (const auto& [name, value] : scaled_terms) out += (out.empty() ? "" : " + ") + name + " " + v(value);
  out += (out.empty() ? "" : " = ") + score_label(scale_factor, true) + " " + v(score);
  if (scale > 0) out += " (Ã = " + v(score / scale) + ")";
  // TRANSLATORS: the end of a cell's sum in Head detail: "… (Ã = 33.3392)  →  weight 0.1727".
  return out + "  →  " + trf("weight {weight}", arg("weight", v(weight, false)));
}

std::optional<deberta::Term> quantity_term(Quantity q) {
  const int index = static_cast<int>(q);
  for (deberta::Term t : deberta::kAllTerms)
    if (static_cast<int>(t) == index) return t;
  return std::nullopt;
}

const deberta::Matrix* attention_map(const deberta::AttentionTrace& a, int64_t head, Quantity q) {
  const std::optional<deberta::Term> term = quantity_term(q);
  const std::vector<deberta::Matrix>* v = term ? &a.terms[*term] : q == Quantity::Logits ? &a.logits : &a.probs;
  if (!v || head < 0 || head >= static_cast<int64_t>(v->size())) return nullptr;
  return &(*v)[head];
}

const deberta::Matrix* head_map(const deberta::ForwardTrace& trace, int64_t layer, int64_t head, Quantity q) {
  if (layer < 0 || layer >= static_cast<int64_t>(trace.layers.size())) return nullptr;
  return attention_map(trace.layers[layer].attention, head, q);
}

bool computed(const Result& r, Quantity q) {
  const std::optional<deberta::Term> term = quantity_term(q);
  return !term || r.trace.context.attention.terms[*term];
}

bool LayerDetail::has(int64_t layer) const { return std::binary_search(held.begin(), held.end(), layer); }

const char* tab_name(Tab t) {
  switch (t) {
    case Tab::Grid: return "grid";
    case Tab::Head: return "head";
    case Tab::Distance: return "distance";
    case Tab::Equation: return "equation";
    case Tab::Predictions: return "predictions";
    case Tab::Compare: return "compare";
    case Tab::Export: return "export";
    case Tab::Lesson: return "lesson";
    case Tab::Pipeline: return "pipeline";
    case Tab::Links: return "links";
    case Tab::Count: break;
  }
  return "?";
}

int token_count(const ViewerState& s) { return s.result ? static_cast<int>(s.result->input.inputs.size()) : 0; }

std::string token_name(const ViewerState& s, int t) {
  if (!s.result || t < 0 || t >= static_cast<int>(s.result->input.names.size())) return "?";
  return s.result->input.names[t];
}

std::string vocab_name(const LoadedModel* m, int64_t id) {
  if (m && m->tokenizer) return m->tokenizer->display(id);
  return "#" + std::to_string(id);
}

namespace {
// The code point of the UTF-8 sequence at `s[*at]` (advancing `*at`); U+FFFD for a bad byte.
uint32_t next_code_point(const std::string& s, size_t* at) {
  const auto b = static_cast<unsigned char>(s[*at]);
  const int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || *at + len > s.size()) {
    ++*at;
    return 0xfffd;
  }
  uint32_t c = len == 1 ? b : b & (0x7f >> len);
  for (int k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(s[*at + k]) & 0x3f);
  *at += len;
  return c;
}

bool blank_code_point(uint32_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200b) ||
         c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}
}  // namespace

bool blank_token(const std::string& name) {
  for (size_t at = 0; at < name.size();)
    if (!blank_code_point(next_code_point(name, &at))) return false;
  return true;
}

std::string shown_token(const std::string& name) {
  if (!blank_token(name)) return name;
  if (name.empty()) return "\"\"";
  std::string out;
  for (size_t at = 0; at < name.size();) {
    const uint32_t c = next_code_point(name, &at);
    if (c == ' ') {
      out += "\u2581";  // ▁
    } else if (c == '\t' || c == '\n' || c == '\r') {
      out += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
    } else {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      out += code;
    }
  }
  return out;
}

std::string token_chip_label(const ViewerState& s, int t) { return std::to_string(t) + " " + shown_token(token_name(s, t)); }

void clamp_selection(ViewerState& s) {
  if (!s.result) return;
  const auto& c = s.result->model->model.config;
  const int L = static_cast<int>(c.num_hidden_layers), H = static_cast<int>(c.num_attention_heads);
  const int N = token_count(s);
  s.layer = std::clamp(s.layer, 0, std::max(L - 1, 0));
  s.head = std::clamp(s.head, 0, std::max(H - 1, 0));
  s.emd_head = std::clamp(s.emd_head, 0, std::max(H - 1, 0));
  s.qi = std::clamp(s.qi, 0, std::max(N - 1, 0));
  s.kj = std::clamp(s.kj, 0, std::max(N - 1, 0));
}

std::vector<int64_t> wanted_layers(const ViewerState& s) {
  if (!s.result) return {};
  const int64_t L = static_cast<int64_t>(s.result->trace.layers.size());
  if (L == 0) return {};
  std::vector<int64_t> layers;
  if (s.tab == Tab::Grid && s.grid_quantity != Quantity::Probs && computed(*s.result, s.grid_quantity)) {
    for (int64_t l = 0; l < L; ++l) layers.push_back(l);
    return layers;
  }
  // The tabs that show no term of a layer (the grid's probabilities, predictions, comparison) need
  // none: a re-run there costs the forward pass alone. The Export tab writes the selected map.
  if (s.tab != Tab::Head && s.tab != Tab::Equation && s.tab != Tab::Distance && s.tab != Tab::Lesson && s.tab != Tab::Export &&
      s.tab != Tab::Links)
    return layers;
  const int64_t selected = std::clamp<int64_t>(s.layer, 0, L - 1);
  if (s.tab == Tab::Lesson && selected != 0) layers.push_back(0);
  layers.push_back(selected);
  return layers;
}

const LayerDetail* detail_for(const ViewerState& s, int64_t layer) {
  if (!s.result || !s.detail || s.detail->generation != s.result->generation || !s.detail->has(layer)) return nullptr;
  return s.detail.get();
}

const deberta::Matrix* shown_map(const ViewerState& s, int64_t layer, int64_t head, Quantity q) {
  if (!s.result || !computed(*s.result, q)) return nullptr;
  if (q == Quantity::Probs) return head_map(s.result->trace, layer, head, q);
  const LayerDetail* d = detail_for(s, layer);
  return d ? head_map(d->trace, layer, head, q) : nullptr;
}

}  // namespace viewer
