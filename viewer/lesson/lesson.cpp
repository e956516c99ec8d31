// lesson.cpp — the lesson's steps, built from one traced forward pass (see lesson.h).
//
// Each step picks its cell from the input's length (so it works on any model and sentence),
// asks one question, and reads the answer from the trace or computes it with the core's own
// equation functions. Steps that a model or run cannot show (no relative positions, no buckets, no
// position term, no p2c, no EMD, a masked head) say why instead of asking. Every label that names
// the scale is computed from the model's own factor (deberta::scale_root); the paper's √(3d) is
// named only where the text compares the model with the paper. Sections and equation numbers are
// those of arXiv 2006.03654 v6.
//
// One function per step (step_self_attention … step_ablation), each reading what the steps share
// (the run, the selection, the scale, the middle query's cell) from one context, Ctx; build_lesson
// checks its input and calls them in reading order.
#include "lesson/lesson.h"

#include "i18n/i18n.h"
#include "state/state.h"

#include "deberta/ablation.h"

#include "deberta/equations.h"
#include "deberta/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/args.h>

namespace viewer {

namespace {

std::string num(double v, int digits = 4) {
  char buf[64];
  if (v != 0 && (std::fabs(v) < 1e-3 || std::fabs(v) >= 1e5))
    std::snprintf(buf, sizeof buf, "%.*e", std::max(digits - 1, 1), v);
  else
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// How far the number `num(v, digits)` printed in a question is from `v`: what a learner who
/// computes from the printed numbers can be off by, before rounding.
double printed_error(double v, int digits) { return std::fabs(std::strtod(num(v, digits).c_str(), nullptr) - v); }

/// A factor as the text writes it: "3", "2.5".
std::string factor(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", f);
  return buf;
}

std::string integer(int64_t v) { return std::to_string(v); }

/// The decimal places a question asks for: about three significant digits of `v`, at least 2, at
/// most `most` (no finer than the numbers the question prints).
int decimals_for(double v, int most) {
  const double a = std::fabs(v);
  const int d = a > 0 && std::isfinite(a) ? 3 - static_cast<int>(std::ceil(std::log10(a))) : 2;
  return std::clamp(d, 2, std::max(2, most));
}

/// Sets the precision a non-integer step asks for and says it in the question: right within half a
/// unit of the `decimals`-th place, plus `slack` (what the rounding of the printed inputs can add),
/// plus a hair for the binary representation of a half-way rounding.
void ask_precision(LessonStep& s, int decimals, double slack) {
  s.decimals = decimals;
  s.tolerance = 0.5 * std::pow(10.0, -decimals) + slack + 1e-9 * std::max(1.0, std::fabs(s.answer));
  s.question += " " + trf("Give it to {decimals} decimal places.", arg("decimals", decimals));
}

LessonStep skip(LessonStep s, const std::string& why) {
  s.applies = false;
  s.skip_reason = why;
  s.what_if = {};  // nothing to redraw where the step does not apply
  return s;
}

/// Adds a typical wrong answer to `s` (after its answer and precision are set) unless it cannot be
/// told apart, at the asked precision, from the answer or from a mistake already listed.
void add_mistake(LessonStep& s, double value, const std::string& name, bool reading = false) {
  if (!std::isfinite(value)) return;
  const auto same = [&](double a, double b) { return s.integer ? std::fabs(a - b) < 1e-9 : std::fabs(a - b) <= 2 * s.tolerance; };
  if (same(value, s.answer)) return;
  for (const LessonMistake& m : s.mistakes)
    if (same(value, m.value)) return;
  s.mistakes.push_back({value, name, reading});
}

/// The key query i attends to most (first on ties).
int argmax_row(const deberta::Matrix& m, int i) {
  int best = 0;
  for (int j = 1; j < m.cols(); ++j)
    if (m(i, j) > m(i, best)) best = j;
  return best;
}

/// Checks what build_lesson is given, in this order: a model and a trace, a full trace (`in.full`,
/// else `in.trace`) at TraceLevel::Full, at least one token and one layer, and the selected layer
/// (clamped to the model) and layer 0 present in the full trace. Errors: std::invalid_argument
/// naming the problem.
void check_lesson_input(const LessonInput& in) {
  if (!in.model || !in.trace) throw std::invalid_argument(tr("lesson: no model or no trace to build the lesson from"));
  const deberta::ForwardTrace& t = *in.trace;
  const deberta::ForwardTrace& f = in.full ? *in.full : t;
  if (f.level != deberta::TraceLevel::Full)
    throw std::invalid_argument(tr("lesson: the trace must be TraceLevel::Full (it has no c2c/c2p/p2c maps)"));
  if (t.inputs.size() < 1 || t.layers.empty()) throw std::invalid_argument(tr("lesson: the trace has no tokens or no layers"));
  const int layer = std::clamp(in.layer, 0, static_cast<int>(t.layers.size()) - 1);
  for (int l : {layer, 0})
    if (static_cast<int>(f.layers.size()) <= l || f.layers[static_cast<size_t>(l)].attention.logits.empty())
      throw std::invalid_argument(trf("lesson: the full trace lacks layer {layer} (materialize it first)", arg("layer", l)));
}

/// The terms a run adds, as the lesson lists them: "c2c + c2p + p2c" (eq. 4's three, or fewer; p2p
/// when switched on), or "no term".
std::string active_terms(const deberta::ResolvedAttention& att) {
  std::string active;
  for (deberta::Term t : deberta::kAllTerms)
    if (att.terms[t]) active += std::string(active.empty() ? "" : " + ") + deberta::term_name(t);
  // TRANSLATORS: stands where the lesson lists the active terms ("c2c + c2p + p2c") when there is none.
  if (active.empty()) active = tr("no term");
  return active;
}

/// What the steps share: the input, the run and its full trace, the selection (clamped to the
/// model), the resolved attention with its scale and k, the labels made from them, and the cells
/// that several steps ask about. Built only from an input that check_lesson_input accepts.
struct Ctx {
  const LessonInput& in;
  const deberta::ModelConfig& c;
  const deberta::ForwardTrace& t;  ///< the run: hidden states, context
  const deberta::ForwardTrace& f;  ///< the run at Full: the selected layer and layer 0
  int N, L, H, layer, head;
  const deberta::SequenceContext& ctx;      ///< the run's relative positions and table rows
  const deberta::ResolvedAttention& att;    ///< the terms, k, window, scale and p2c index of the run
  const deberta::AttentionTrace& a;         ///< the selected layer's attention (full trace)
  const deberta::Matrix& probs;             ///< `[N, N]` the selected head's weights
  const deberta::Matrix& logits;            ///< `[N, N]` the selected head's scores Ã/√(f·d)
  int64_t k;
  double s_scale, f_scale;                  ///< the scale s = 1/√(f·d) and its factor f
  int64_t d_head;
  double d;
  std::string root;    ///< the scale as the paper writes it, from this model's factor: √(3d), √(2d), √d, …
  std::string f_text;  ///< the factor as the text writes it: "3", "2.5"
  bool pos_terms;      ///< c2p, p2c or p2p is active in this run
  std::string active;  ///< the active terms (active_terms)
  int qi, qj;          ///< the query most steps look at: the middle token; its favourite key
  int ki, kj;          ///< the cell of steps 3 and 8: a distance inside the window

  explicit Ctx(const LessonInput& input)
      : in(input), c(in.model->config), t(*in.trace), f(in.full ? *in.full : t), N(static_cast<int>(t.inputs.size())),
        L(static_cast<int>(t.layers.size())), H(static_cast<int>(c.num_attention_heads)), layer(std::clamp(in.layer, 0, L - 1)),
        head(std::clamp(in.head, 0, H - 1)), ctx(t.context), att(ctx.attention),
        a(f.layers[static_cast<size_t>(layer)].attention), probs(a.probs[static_cast<size_t>(head)]),
        logits(a.logits[static_cast<size_t>(head)]), k(att.k), s_scale(att.scale), f_scale(att.scale_factor),
        d_head(c.d_head()), d(static_cast<double>(d_head)), root(deberta::scale_root(f_scale)), f_text(factor(f_scale)),
        pos_terms(deberta::reads_relative_table(att.terms)), active(active_terms(att)), qi(N / 2), qj(argmax_row(probs, qi)),
        ki(std::min(5, N - 1)),
        kj(std::max(ki - static_cast<int>(std::min<int64_t>(2, std::max<int64_t>(k - 1, 0))), 0)) {}

  std::string tok(int p) const {
    const std::string name = p >= 0 && p < static_cast<int>(in.tokens.size()) ? in.tokens[static_cast<size_t>(p)]
                                                                              : "#" + std::to_string(p);
    return "'" + name + "'";
  }
  const deberta::Matrix* term(const std::vector<deberta::Matrix>& v) const {
    return head < static_cast<int>(v.size()) && v[static_cast<size_t>(head)].size() ? &v[static_cast<size_t>(head)] : nullptr;
  }
  bool masked(int l, int h) const { return t.context.head_mask.count({l, h}) > 0; }
  bool masked() const { return masked(layer, head); }
};

/// A step's "what if" control (issue 42, item 6) on the row of its own cell (`target`): a span only
/// where a term reads the table and K < k exists; the p2c index only where p2c is on; none on a
/// masked head (its row is all 0 whatever the switch) or a cell outside the run.
LessonWhatIf knob(const Ctx& x, WhatIfKnob which, const LessonTarget& target, WhatIfNumber number, int key2 = -1) {
  LessonWhatIf w;
  const bool ok = which == WhatIfKnob::Span       ? x.c.relative_attention && x.pos_terms && x.k >= 2
                  : which == WhatIfKnob::P2CIndex ? x.att.terms[deberta::Term::p2c] && x.N >= 2
                                                  : true;
  if (!ok || target.layer < 0 || target.layer >= x.L || target.i < 0 || target.i >= x.N || target.head < 0 ||
      target.head >= x.H || x.masked(target.layer, target.head))
    return w;
  w.knob = which;
  w.layer = target.layer, w.head = target.head, w.query = target.i;
  w.number = number, w.key = target.j, w.key2 = key2;
  for (int p = 0; p < x.N && w.mask < 0; ++p)
    if (p < static_cast<int>(x.in.tokens.size()) && x.in.tokens[static_cast<size_t>(p)] == "[MASK]") w.mask = p;
  w.k = x.k, w.window = x.att.window, w.scale_factor = x.f_scale, w.p2c_index = x.att.p2c_index;
  return w;
}

/// §3.1 (unnumbered display): standard self-attention, a softmax over the keys of each query. Asks the key
/// the middle query attends to most in the selected head (the argmax of its row of the weights).
LessonStep step_self_attention(const Ctx& x) {
  const int N = x.N;
  const deberta::Matrix& probs = x.probs;
  const double f_scale = x.f_scale;
  const std::string& root = x.root;
  const std::string& f_text = x.f_text;
  const bool pos_terms = x.pos_terms;
  const std::string& active = x.active;
  const int qi = x.qi;
  const int qj = x.qj;
  LessonStep s;
  // TRANSLATORS: a lesson step's title (the step's number is written before it); §3.1 is the paper's section.
  s.title = "1. " + std::string(tr("Self-attention (§3.1)"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the
  // words "§3.1, unnumbered" (the paper gives this display no equation number); keep every symbol.
  s.equation = tr("Q = H W_q,   K = H W_k,   V = H W_v,   A = Q Kᵀ / √d,   H_o = softmax(A) V        (§3.1, unnumbered)");
  s.text = tr("Each token (a query, row i) spreads one unit of attention over all tokens (keys, columns j): row i of "
              "softmax(A) is non-negative and sums to 1. In this display A is the score, QKᵀ/√d, before the softmax (the "
              "paper prints it without a number; its eq. 1 is the masked-language-model objective of §2.2).");
  if (pos_terms && f_scale == 3.0)
    // TRANSLATORS: {terms} lists the model's active terms ("c2c + c2p + p2c", or "no term"); {root} is the
    // scale's root as the paper writes it (√(3d), √(2d), …). "Head detail" is the tab of that name.
    s.text += " " + trf("DeBERTa keeps this shape and changes how the score is made: eq. 4 sums the terms ({terms} in this "
                        "model) into Ã and scales the sum, so this model's weights are softmax(Ã/{root}), the map of that "
                        "name in Head detail.",
                        arg("terms", active), arg("root", root));
  else if (pos_terms)
    // TRANSLATORS: as the sentence above, for a model whose scale factor {f} (2, 1.5, …) is not the paper's 3.
    s.text += " " + trf("DeBERTa keeps this shape and changes how the score is made: eq. 4 sums the terms ({terms} in this "
                        "model) into Ã and scales the sum, so this model's weights are softmax(Ã/{root}), the map of that "
                        "name in Head detail (the paper writes √(3d) for its three terms; this model's factor is f = {f}, "
                        "step 9).",
                        arg("terms", active), arg("root", root), arg("f", f_text));
  else if (f_scale != 1.0)
    // TRANSLATORS: {root} is the scale's root (√(2d), …), {f} the model's scale factor.
    s.text += " " + trf("This model (or run) has no position term: its score is this display's A made from the content "
                        "projections alone, Q_c K_cᵀ / {root} (the model's scale factor f = {f} although only c2c is "
                        "active, step 9), and its weights are the softmax of that score.",
                        arg("root", root), arg("f", f_text));
  else
    // TRANSLATORS: {root} is the scale's root (here √d).
    s.text += " " + trf("This model (or run) has no position term: its score is this display's A made from the content "
                        "projections alone, Q_c K_cᵀ / {root} — BERT's attention, and its weights are the softmax of that "
                        "score.",
                        arg("root", root));
  s.show = {"head", x.layer, x.head, qi, qj, 0, -1, "probs"};
  s.quotes = {paper_quote(Quote::StandardAttention)};
  if (x.masked()) {
    return skip(s, trf("head {head} of layer {layer} is masked in this run: its weights are all 0. Unmask it or "
                       "pick another head.",
                       arg("head", x.head), arg("layer", x.layer)));
  } else {
    // TRANSLATORS: {token} is the token's text in single quotes ('God').
    s.question = trf("In layer {layer}, head {head}, which key j does query i = {i} {token} attend to most (the largest "
                     "weight in row i)? Type j.",
                     arg("layer", x.layer), arg("head", x.head), arg("i", qi), arg("token", x.tok(qi)));
    s.answer = qj;
    s.integer = true;
    // TRANSLATORS: {weight} and {sum} are numbers; {token} is the key's text in single quotes.
    s.explanation = trf("weight[{i}, {j}] = {weight} is the largest of row {i} (key {token}); the row sums to {sum}.",
                        arg("i", qi), arg("j", qj), arg("weight", num(probs(qi, qj))), arg("token", x.tok(qj)),
                        arg("sum", num(probs.row(qi).sum(), 6)));
    // Reading column i instead of row i: the query that gives key i the most weight.
    int col_best = 0;
    for (int q = 1; q < N; ++q)
      if (probs(q, qi) > probs(col_best, qi)) col_best = q;
    // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
    add_mistake(s, col_best, trf("softmax over the wrong axis: you read column {i}; query i's weights are its row (the "
                                 "softmax normalises over the keys j)",
                                 arg("i", qi)));
    return s;
  }
}

/// eq. 2 → eq. 4: the score is a sum of disentangled terms. Asks Ã_ij, the unscaled sum of the active terms
/// of one cell (deberta::explain_cell); skips when no position term is active.
LessonStep step_terms(const Ctx& x) {
  const LessonInput& in = x.in;
  const deberta::ForwardTrace& f = x.f;
  const std::string& root = x.root;
  const bool pos_terms = x.pos_terms;
  const std::string& active = x.active;
  const int qi = x.qi;
  const int qj = x.qj;
  LessonStep s;
  s.title = "2. " + std::string(tr("Content and position, disentangled (eq. 2, eq. 4)"));
  s.equation = "A_ij = H_i H_jᵀ + H_i P_j|iᵀ + P_i|j H_jᵀ + P_i|j P_j|iᵀ                    (eq. 2)\n"
               "Ã_ij = Q_c[i] K_c[j]ᵀ + Q_c[i] K_r[δ(i,j)]ᵀ + K_c[j] Q_r[δ(j,i)]ᵀ          (eq. 4)\n"
               "     =  (a) c2c      +   (b) c2p          +   (c) p2c";
  // TRANSLATORS: {root} is the scale's root as the paper writes it (√(3d), √(2d), …); {terms} lists the active
  // terms ("c2c + c2p + p2c"). The words in quotation marks are the paper's own (§3.1). "Head detail" is a tab.
  s.text = trf("DeBERTa represents each token by two vectors, its content H_i and its relative position P_i|j. The score "
               "of a pair is the sum of content-to-content (a), content-to-position (b) and position-to-content (c) "
               "terms; the paper drops position-to-position (§3.1: it \"does not provide much additional information\"). "
               "Ã of eq. 4 is this unscaled sum; the scale 1/{root} comes only in the softmax (step 9). This run adds "
               "{terms}. The maps of Head detail show each term times the scale.",
               arg("root", root), arg("terms", active));
  s.show = {"head", x.layer, x.head, qi, qj, 0, -1, "logits"};
  s.quotes = {paper_quote(Quote::FourTerms), paper_quote(Quote::Eq4Scores)};
  const deberta::CellExplanation e = deberta::explain_cell(*in.model, f, x.layer, x.head, qi, qj);
  std::string parts, sum_text;
  double sum = 0, slack = 0;
  int on = 0;
  for (deberta::Term t : deberta::kAllTerms) {
    if (!e.active[t]) continue;
    const double raw = e.dot[t];
    parts += std::string(parts.empty() ? "" : ", ") + deberta::term_name(t) + " = " + num(raw);
    sum_text += std::string(sum_text.empty() ? "" : " + ") + "(" + num(raw) + ")";
    sum += raw;
    slack += printed_error(raw, 4);
    ++on;
  }
  if (on == 0) {
    return skip(s, tr("every term is switched off in this run: there is no score to decompose."));
  } else if (!pos_terms) {
    // The Ablations panel can switch a position term back on only where the model has its projections.
    const bool can = deberta::has_projections_for(*in.model, deberta::Term::c2p) ||
                     deberta::has_projections_for(*in.model, deberta::Term::p2c);
    return skip(s, can ? trf(  // TRANSLATORS: {terms} lists the active terms (here "c2c"); "Ablations" is the panel of that name.
                             "this run has no position term ({terms} only): Ã of eq. 4 is the content term alone, the "
                             "standard attention of step 1, with nothing to add. Switch c2p or p2c back on in the "
                             "Ablations panel to see terms to add.",
                             arg("terms", active))
                       : trf(  // TRANSLATORS: {terms} lists the active terms (here "c2c"); the model zoo is the set of
                               // small models trained for the explorer.
                             "this model has no position term ({terms} only; it was built without c2p and p2c): Ã of "
                             "eq. 4 is the content term alone, the standard attention of step 1, with nothing to add. "
                             "Load a model with c2p or p2c (the bundled model, or most of the model zoo) to see terms "
                             "to add.",
                             arg("terms", active)));
  } else {
    // TRANSLATORS: {terms} lists each term with its value ("c2c = 1.2345, c2p = -0.5000").
    s.question = trf("In layer {layer}, head {head}, cell i = {i}, j = {j} has the terms {terms} (unscaled dot products). "
                     "What is Ã_ij of eq. 4?",
                     arg("layer", x.layer), arg("head", x.head), arg("i", qi), arg("j", qj), arg("terms", parts));
    s.answer = sum;
    ask_precision(s, decimals_for(sum, 4), slack);
    // TRANSLATORS: {sum_terms} is the sum written out ("(1.2) + (-0.5)"); the others are numbers, {root} the
    // scale's root; explain_cell is a function's name.
    s.explanation = trf("Ã = {sum_terms} = {sum}. The score the softmax sees is Ã/{root} = {sum} × {scale} = {score} "
                        "(explain_cell).",
                        arg("sum_terms", sum_text), arg("sum", num(sum)), arg("root", root), arg("scale", num(e.scale, 6)),
                        arg("score", num(e.logit)));
    // TRANSLATORS: a named mistake, shown after "Likely mistake:"; {root} is the scale's root (√(3d), …).
    add_mistake(s, sum * e.scale, trf("applied the scale: Ã of eq. 4 is the unscaled sum; 1/{root} comes in the softmax",
                                      arg("root", root)));
    if (on > 1)
      for (deberta::Term t : deberta::kAllTerms)
        // TRANSLATORS: a named mistake; {term} is c2c, c2p, p2c or p2p.
        if (e.active[t])
          add_mistake(s, sum - e.dot[t], trf("left out {term}: Ã is the sum of every active term", arg("term", deberta::term_name(t))));
    return s;
  }
}

/// Appended to steps 3, 4 and 6 on a run whose terms read no table row: "" otherwise.
std::string unread_note(const Ctx& x) {
  return x.pos_terms || !x.c.relative_attention
             ? std::string()
             : " " + std::string(tr("(No term of this run reads the table: c2p and p2c are off.)"));
}

/// eq. 3: the relative distance δ(i, j) inside (−k, k), with this model's k (deberta::relative_distance);
/// skips without relative attention or with one token.
LessonStep step_distance(const Ctx& x) {
  const deberta::ModelConfig& c = x.c;
  const int N = x.N;
  const int64_t k = x.k;
  const int ki = x.ki;
  const int kj = x.kj;
  const std::string unread = unread_note(x);
  LessonStep s;
  s.title = "3. " + std::string(tr("Relative distance δ(i, j) (eq. 3)"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the words
  // ("if", "otherwise"); keep every symbol and the spacing.
  s.equation = tr("δ(i, j) = 0 if i − j ≤ −k;   2k − 1 if i − j ≥ k;   i − j + k otherwise");
  // Where positions enter this model: as distances only, or also (or only) as absolute positions at the input.
  const char* where = c.relative_attention
                          ? (c.position_biased_input
                                 // TRANSLATORS: position_biased_input is a configuration key (keep it).
                                 ? N_("In the attention, positions enter as distances, not as absolute indices; this model "
                                      "also adds absolute position embeddings to its input (position_biased_input), so its "
                                      "hidden states carry absolute positions as well.")
                                 : N_("Positions enter as distances, not as absolute indices."))
                          : (c.position_biased_input
                                 // TRANSLATORS: position_biased_input and relative_attention are configuration keys.
                                 ? N_("This model has no relative positions (relative_attention = false): its positions "
                                      "enter only as absolute position embeddings added to its input "
                                      "(position_biased_input). In DeBERTa they enter the attention as distances.")
                                 // TRANSLATORS: relative_attention is a configuration key.
                                 : N_("This model has no positions in its attention (relative_attention = false). In "
                                      "DeBERTa they enter the attention as distances."));
  // TRANSLATORS: max_relative_positions and position_buckets are configuration keys (keep them); "Distance δ" is a tab.
  s.text = std::string(tr(where)) + " " +
           tr("δ(i, j) turns the distance i − j into a row of the relative table P (2k rows, k = max_relative_positions, or "
              "position_buckets in v2/v3): distances inside (−k, k) each get their own row, i − j + k. The Distance δ tab "
              "draws δ for any k.") +
           unread;
  s.show = {"distance", x.layer, x.head, ki, kj, static_cast<int>(std::max<int64_t>(k, 1)), -1, "delta"};
  s.quotes = {paper_quote(Quote::Eq3)};
  s.what_if = knob(x, WhatIfKnob::Span, s.show, WhatIfNumber::C2PRow);
  if (!c.relative_attention) {
    s.show.map.clear();  // no δ: no δ map
    // TRANSLATORS: relative_attention = false is a configuration key and value (keep them).
    return skip(s, tr("this model has no relative attention (relative_attention = false): there is no δ."));
  } else if (N < 2) {
    return skip(s, tr("the input has one token: there is no distance to measure. Type a longer text."));
  } else {
    const int64_t dd = deberta::relative_distance(ki, kj, k);
    s.question = trf("This model has k = {k}. By eq. 3, what is δ(i, j) for i = {i}, j = {j}?", arg("k", k), arg("i", ki),
                     arg("j", kj));
    s.answer = static_cast<double>(dd);
    s.integer = true;
    // TRANSLATORS: {diff} is i − j, {delta} the result; deberta::relative_distance is a function's name.
    s.explanation = trf("i − j = {diff} lies inside (−{k}, {k}), so δ = i − j + k = {diff} + {k} = {delta} "
                        "(deberta::relative_distance).",
                        arg("diff", ki - kj), arg("k", k), arg("delta", dd));
    add_mistake(s, static_cast<double>(deberta::relative_distance(kj, ki, k)),
                // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
                tr("used j − i: δ(i, j) starts from i − j (query minus key)"));
    // TRANSLATORS: a named mistake.
    add_mistake(s, ki - kj, tr("forgot to add k: the rows start at 0, so δ = i − j + k"));
    return s;
  }
}

/// eq. 3: the clamp of far distances to the table's end rows, with this model's k when the input is long
/// enough (a smaller k otherwise); says what the run's own rows do along the query's row (buckets, window).
LessonStep step_clamp(const Ctx& x) {
  const deberta::ModelConfig& c = x.c;
  const int N = x.N;
  const deberta::SequenceContext& ctx = x.ctx;
  const deberta::ResolvedAttention& att = x.att;
  const int64_t k = x.k;
  const std::string unread = unread_note(x);
  LessonStep s;
  // A key more than k to the right shows the clamp (at exactly k, i − j + k is already row 0).
  const bool long_enough = k >= 1 && N - 1 >= k + 1;
  const int64_t kk = long_enough ? k : std::max(1, (N - 1) / 2);
  const int ci = 0, cj = static_cast<int>(std::min<int64_t>(N - 1, kk + 2));
  s.title = "4. " + std::string(tr("Far away is all the same: the clamp of eq. 3"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the words
  // ("if"); keep every symbol and the spacing.
  s.equation = tr("δ(i, j) = 0 if i − j ≤ −k,   2k − 1 if i − j ≥ k");
  s.text = tr("In eq. 3, beyond k tokens the distance stops mattering: every key k or more to the right of the query "
              "shares row 0, every key k or more to the left shares row 2k − 1. So the table needs only 2k rows, whatever "
              "the length of the text.") +
           unread;
  if (c.relative_attention && c.log_buckets() && N >= 2) {
    // What the buckets of this input do, read from the run's own relative positions (never assumed).
    int64_t widest = 0;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) widest = std::max<int64_t>(widest, std::llabs(ctx.rel_pos(i, j)));
    s.text += " " + std::string(tr("This model buckets i − j first (step 5) and clamps the bucket, not i − j.")) + " ";
    // TRANSLATORS: {widest} is the largest bucket of the input, {k} and {m} the model's k and m;
    // max_relative_positions is a configuration key.
    s.text += widest >= k ? trf("In this input the buckets reach the table's ends: the largest, {widest}, is k = {k} or "
                                "more (distances of m = max_relative_positions = {m} or more grow past k − 1), so the "
                                "clamp acts on them.",
                                arg("widest", widest), arg("k", k), arg("m", c.max_relative_positions))
                          : trf("In this input every bucket stays inside (−k, k) (the largest is {widest} < k = {k}): the "
                                "clamp does not act here.",
                                arg("widest", widest), arg("k", k));
  }
  s.show = {"distance", x.layer, x.head, ci, cj, static_cast<int>(kk), -1, "delta"};
  s.quotes = {paper_quote(Quote::Truncate)};
  s.what_if = knob(x, WhatIfKnob::Span, s.show, WhatIfNumber::C2PRow);
  if (!c.relative_attention) {
    s.show.map.clear();
    // TRANSLATORS: relative_attention = false is a configuration key and value (keep them).
    return skip(s, tr("this model has no relative attention (relative_attention = false): there is no δ to clamp."));
  } else if (N < 2) {
    return skip(s, tr("the input has one token: there is no distance to clamp. Type a longer text."));
  } else {
    const int64_t dd = deberta::relative_distance(ci, cj, kk);
    // TRANSLATORS: {k} is the model's k, {kk} the smaller k this question uses, {more} = k + 1.
    s.question = (long_enough ? trf("This model has k = {k}.", arg("k", k))
                              : trf("No two tokens of this input are more than k = {k} apart, so take k = {kk} here (type "
                                    "more than {more} tokens to use the model's own k).",
                                    arg("k", k), arg("kk", kk), arg("more", k + 1))) +
                 " " +
                 trf("By eq. 3 as the paper writes it (on i − j itself), which row δ(i, j) is read for i = {i}, j = {j}?",
                     arg("i", ci), arg("j", cj));
    s.answer = static_cast<double>(dd);
    s.integer = true;
    // TRANSLATORS: {diff} is i − j, {delta} the clamped row.
    s.explanation = trf("i − j = {diff} ≤ −k = −{k}, so eq. 3 clamps δ to {delta}: with k = {k}, eq. 3 gives every key "
                        "from j = {k} on this same row.",
                        arg("diff", ci - cj), arg("k", kk), arg("delta", dd));
    if (long_enough) {
      // What this run reads along row 0, from its own table rows: where the rows stop changing.
      const int64_t last = ctx.c2p_row(ci, N - 1);
      int from = N - 1;
      while (from > 0 && ctx.c2p_row(ci, from - 1) == last) --from;
      const int64_t here = ctx.c2p_row(ci, cj);
      if (from <= cj && here == last) {
        // TRANSLATORS: {token} is the key's text in single quotes; {from} a key index; {row}, {last} table rows.
        s.explanation += " " + trf("This run reads row {row} here too: key {j} {token} reads the same row as every key "
                                   "further right (from key {from} on, row {last}).",
                                   arg("row", here), arg("j", cj), arg("token", x.tok(cj)), arg("from", from),
                                   arg("last", last));
      } else {
        // TRANSLATORS: {delta} is the row of eq. 3, {here} the row this run reads for cell (0, {j}).
        s.explanation += " " + (c.log_buckets() ? trf("This run does not read row {delta} here: it buckets i − j first "
                                                      "(step 5), so cell (0, {j}) reads row {here} (step 6).",
                                                      arg("delta", dd), arg("j", cj), arg("here", here))
                                                // TRANSLATORS: K is the ablation's window ({window}).
                                                : trf("This run does not read row {delta} here: it reads through a window "
                                                      "K = {window}, so cell (0, {j}) reads row {here} (step 6).",
                                                      arg("delta", dd), arg("window", att.window), arg("j", cj),
                                                      arg("here", here)));
        // TRANSLATORS: {from} is a key index, {last} a table row; "the rows" are those this run reads along the query's row.
        s.explanation += " " + (from >= N - 1 ? std::string(tr("The rows it reads keep changing up to the last key of this input."))
                                : c.log_buckets()
                                    ? (last == 0 ? trf(  // TRANSLATORS: {from} is a key index, {last} a table row.
                                                       "The rows it reads change to the right in steps (a bucket holds "
                                                       "several distances, more the farther out); only from key {from} on "
                                                       "does every key read one row, row {last} (the table's end: there "
                                                       "the clamp acts).",
                                                       arg("from", from), arg("last", last))
                                                 : trf(  // TRANSLATORS: {from} is a key index, {last} a table row.
                                                       "The rows it reads change to the right in steps (a bucket holds "
                                                       "several distances, more the farther out); only from key {from} on "
                                                       "does every key read one row, row {last} (one bucket).",
                                                       arg("from", from), arg("last", last)))
                                : last == 0   ? trf("The rows it reads keep changing to the right; only from key {from} on "
                                                    "does every key read one row, row {last} (the table's end: there the "
                                                    "clamp acts).",
                                                    arg("from", from), arg("last", last))
                                              : trf("The rows it reads keep changing to the right; only from key {from} on "
                                                    "does every key read one row, row {last} (one bucket).",
                                                    arg("from", from), arg("last", last)));
      }
    }
    // TRANSLATORS: a named mistake, shown after "Likely mistake:"; {value} is i − j + k.
    add_mistake(s, ci - cj + kk, trf("did not clamp: i − j + k = {value} is not a row of the table [0, 2k − 1]",
                                     arg("value", ci - cj + kk)));
    // TRANSLATORS: a named mistake.
    add_mistake(s, 2 * kk - 1, tr("clamped to the wrong end: a key k or more to the right (i − j ≤ −k) shares row 0"));
    return s;
  }
}

/// DeBERTa-v2/v3 log buckets (released code, not in the paper): the bucket of the longest distance of the
/// input (the trace's rel_pos, worked by deberta::log_bucket_working); skips without buckets or on a short input.
LessonStep step_buckets(const Ctx& x) {
  const deberta::ModelConfig& c = x.c;
  const int N = x.N;
  const deberta::SequenceContext& ctx = x.ctx;
  const int64_t k = x.k;
  const int bi = N - 1, bj = 0;
  LessonStep s;
  s.title = "5. " + std::string(tr("Log buckets (released code, v2/v3; not in the paper)"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the words
  // ("if", "else"); keep every symbol and the spacing.
  s.equation = tr("bucket(r) = r if |r| ≤ b/2,  else sign(r)·(⌈log(|r|/(b/2)) / log((m−1)/(b/2)) · (b/2 − 1)⌉ + b/2)");
  // TRANSLATORS: position_buckets and max_relative_positions are configuration keys; docs/paper-vs-code.md is a file
  // name; "Distance δ" is a tab.
  s.text = tr("v2 and v3 keep nearby distances exact and squeeze far ones logarithmically before eq. 3: with "
              "position_buckets b and max_relative_positions m, distances up to b/2 keep their own row, distances between "
              "b/2 and m share rows, farther ones more coarsely. The paper's eq. 3 has no buckets "
              "(docs/paper-vs-code.md). The curve under the Distance δ maps shows them.");
  s.show = {"distance", x.layer, x.head, bi, bj, 0, -1, "rel_pos"};
  s.quotes = {paper_quote(Quote::K512), paper_quote(Quote::NoBuckets)};
  const int64_t mid = c.position_buckets / 2;
  if (!c.relative_attention || !c.log_buckets()) {
    s.show.map.clear();
    return skip(s, c.relative_attention ? tr("this model does not bucket its relative positions (v1, or "
                                             "position_buckets ≤ 0): i − j is used as it is.")
                                        : tr("this model has no relative attention: there is nothing to bucket."));
  } else if (N - 1 <= mid) {
    // TRANSLATORS: {longest} is N − 1, {mid} is b/2, {more} is b/2 + 1.
    return skip(s, trf("the input is too short to reach the buckets: its longest distance is N − 1 = {longest}, "
                       "and distances up to b/2 = {mid} stay exact. Type a text of more than {more} tokens.",
                       arg("longest", N - 1), arg("mid", mid), arg("more", mid + 1)));
  } else {
    const int64_t r = bi - bj;
    const int64_t b = ctx.rel_pos(bi, bj);
    const deberta::LogBucketWorking w = deberta::log_bucket_working(r, c.position_buckets, c.max_relative_positions);
    // TRANSLATORS: {token_i} and {token_j} are tokens' texts in single quotes; {diff} is i − j.
    s.question = trf("This model has b = {b}, m = {m}. For i = {i} {token_i} and j = 0 {token_j} (i − j = {diff}), which "
                     "relative position does the model use instead of {diff}?",
                     arg("b", c.position_buckets), arg("m", c.max_relative_positions), arg("i", bi), arg("token_i", x.tok(bi)),
                     arg("token_j", x.tok(0)), arg("diff", r));
    s.answer = static_cast<double>(b);
    s.integer = true;
    // The formula with this cell's numbers (notation only), then what it says.
    const std::string formula = "|r| = " + integer(r) + " > b/2 = " + integer(w.mid) + ": ⌈log(" + integer(r) + "/" +
                                integer(w.mid) + ") / log(" + integer(c.max_relative_positions - 1) + "/" + integer(w.mid) +
                                ") · " + integer(w.mid - 1) + "⌉ + " + integer(w.mid) + " = ⌈" + num(w.scaled, 3) + "⌉ + " +
                                integer(w.mid) + " = " + integer(w.bucket);
    // TRANSLATORS: {formula} is the bucket's computation in symbols ("|r| = 20 > b/2 = 16: … = 17");
    // deberta::log_bucket_working is a function's name, rel_pos a tensor's name.
    s.explanation = w.bucket == b ? trf("{formula} (deberta::log_bucket_working; the trace's rel_pos is the same).",
                                        arg("formula", formula))
                                  // TRANSLATORS: {bucket} is this run's rel_pos; "microsoft's rule" is the released code's.
                                  : trf("{formula} (the formula; this run's rel_pos is {bucket}: microsoft's rule clamps |r| "
                                        "to m − 1 first).",
                                        arg("formula", formula), arg("bucket", b));
    if (std::llabs(b) >= k)
      // TRANSLATORS: {k} is the model's k, {row} a table row.
      s.explanation += " " + trf("The bucket is k = {k} or more, outside (−k, k): eq. 3's clamp (step 4) sends it to the "
                                 "table's end, row {row}.",
                                 arg("k", k), arg("row", ctx.c2p_row(bi, bj)));
    // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
    add_mistake(s, static_cast<double>(r), tr("used i − j as it is: beyond b/2 the distance is log-bucketed"));
    // TRANSLATORS: a named mistake.
    add_mistake(s, std::floor(w.scaled) + static_cast<double>(w.mid), tr("rounded down: the formula takes the ceiling ⌈·⌉"));
    // TRANSLATORS: a named mistake.
    add_mistake(s, std::ceil(w.scaled), tr("forgot to add b/2 after the ceiling"));
    return s;
  }
}

/// eq. 3 after the buckets (and an ablation's window): the table row c2p reads for one cell, from the run's
/// c2p_row.
LessonStep step_table_row(const Ctx& x) {
  const deberta::ModelConfig& c = x.c;
  const int N = x.N;
  const deberta::SequenceContext& ctx = x.ctx;
  const deberta::ResolvedAttention& att = x.att;
  const int64_t k = x.k;
  const std::string unread = unread_note(x);
  const int ri = std::min(1, N - 1), rj = N - 1;
  LessonStep s;
  s.title = "6. " + std::string(tr("The row this model reads (eq. 3 after the buckets)"));
  s.equation = "row(i, j) = clamp(rel_pos(i, j) + k, 0, 2k − 1)";
  // TRANSLATORS: "Distance δ" is a tab.
  s.text = tr("Putting steps 3–5 together: the model takes i − j (bucketed in v2), adds its own k and clamps to the 2k "
              "rows of its table. This is the right-hand map of the Distance δ tab. An ablation with a window "
              "K < k clamps the position to [−K, K − 1] first.") +
           unread;
  s.show = {"distance", x.layer, x.head, ri, rj, 0, -1, "rows"};
  s.quotes = {paper_quote(Quote::DeltaMatrix)};
  s.what_if = knob(x, WhatIfKnob::Span, s.show, WhatIfNumber::C2PRow);
  if (!c.relative_attention) {
    s.show.map.clear();
    return skip(s, tr("this model has no relative attention: it reads no table rows."));
  } else {
    const int64_t rel = ctx.rel_pos(ri, rj), row = ctx.c2p_row(ri, rj);
    // TRANSLATORS: {rows} is 2k; K_r is the paper's symbol.
    s.question = att.window == k ? trf("This model has k = {k} (a table of {rows} rows). Which row of K_r does c2p read "
                                       "for i = {i}, j = {j}?",
                                       arg("k", k), arg("rows", 2 * k), arg("i", ri), arg("j", rj))
                                 // TRANSLATORS: {window} is the ablation's window K.
                                 : trf("This model has k = {k} (a table of {rows} rows), read through a window "
                                       "K = {window}. Which row of K_r does c2p read for i = {i}, j = {j}?",
                                       arg("k", k), arg("rows", 2 * k), arg("window", att.window), arg("i", ri),
                                       arg("j", rj));
    s.answer = static_cast<double>(row);
    s.integer = true;
    // TRANSLATORS: step 6's working: {diff} is i − j, {rel} the relative position used, {sum} = rel + k, {top} = 2k − 1.
    const char* plain = N_("i − j = {diff}; {rel} + k = {sum}, clamped to [0, {top}]: row {row}.");
    // TRANSLATORS: as "i − j = {diff}; …", read through the ablation's window K.
    const char* windowed = N_("i − j = {diff}; {rel} + k = {sum}, clamped to [0, {top}] (after the window K): row {row}.");
    // TRANSLATORS: as "i − j = {diff}; …", on a model with log buckets ({rel} is the bucket).
    const char* bucketed = N_("i − j = {diff} is bucketed to {rel}; {rel} + k = {sum}, clamped to [0, {top}]: row {row}.");
    // TRANSLATORS: as "i − j = {diff}; …", with log buckets and the ablation's window K.
    const char* bucketed_windowed = N_("i − j = {diff} is bucketed to {rel}; {rel} + k = {sum}, clamped to [0, {top}] "
                                       "(after the window K): row {row}.");
    const char* working = c.log_buckets() ? (att.window != k ? bucketed_windowed : bucketed) : (att.window != k ? windowed : plain);
    s.explanation = trf(working, arg("diff", ri - rj), arg("rel", rel), arg("sum", rel + k), arg("top", 2 * k - 1),
                        arg("row", row));
    // TRANSLATORS: a named mistake, shown after "Likely mistake:"; {value} is rel_pos + k.
    add_mistake(s, static_cast<double>(rel + k), trf("did not clamp: rel_pos + k = {value} is outside [0, 2k − 1]",
                                                     arg("value", rel + k)));
    if (c.log_buckets())
      // TRANSLATORS: a named mistake.
      add_mistake(s, static_cast<double>(std::clamp<int64_t>(ri - rj + k, 0, 2 * k - 1)),
                  tr("forgot the log buckets of step 5: this model buckets i − j before adding k"));
    if (N >= 2)
      // TRANSLATORS: a named mistake.
      add_mistake(s, static_cast<double>(ctx.c2p_row(rj, ri)), tr("used j − i: the row starts from i − j (query minus key)"));
    return s;
  }
}

/// The mistake about the scale shared by steps 7 and 9: the paper's √(3d) on a model whose factor
/// is not 3 (named with the model's factor, terms and root).
std::string paper_3_mistake(const Ctx& x) {
  // TRANSLATORS: a named mistake, shown after "Likely mistake:"; {f} is the model's scale factor, {terms} its active
  // terms ("c2c + c2p"), {root} the scale's root (√(2d), …).
  return trf("used the paper's 1/√(3d): this model's factor is f = {f} ({terms}), so it divides by {root}",
             arg("f", x.f_text), arg("terms", x.active), arg("root", x.root));
}

/// eq. 4, term (b): what the c2p term of one cell adds to the score the softmax sees, Q_c[i] K_r[δ(i, j)]ᵀ
/// times the scale 1/√(f·d) (the trace's c2p map); skips when c2p is off.
LessonStep step_c2p(const Ctx& x) {
  const LessonInput& in = x.in;
  const deberta::ForwardTrace& f = x.f;
  const deberta::AttentionTrace& a = x.a;
  const double f_scale = x.f_scale;
  const int64_t d_head = x.d_head;
  const double d = x.d;
  const std::string& root = x.root;
  const std::string& f_text = x.f_text;
  const int qi = x.qi;
  const int qj = x.qj;
  const std::string paper_3 = paper_3_mistake(x);
  LessonStep s;
  s.title = "7. " + std::string(tr("Content-to-position (eq. 4, term (b))"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the words ("it
  // enters"); keep every symbol and the spacing. {root} is the scale's root (√(3d), …).
  s.equation = trf("c2p(i, j) = Q_c[i] K_r[δ(i, j)]ᵀ,   Q_c = H W_q,c,   K_r = P W_k,r;   it enters softmax(Ã / {root})",
                   arg("root", root));
  // TRANSLATORS: "Algorithm 1" is the paper's algorithm of that number.
  s.text = tr("c2p asks: given what token i says, how interesting is a key at this distance? The query's content "
              "vector meets the projected table row picked by δ. The reference computes all N × 2k products Q_c K_rᵀ at "
              "once and then gathers the needed row for each pair (§3.1.1 and Algorithm 1).");
  s.show = {"equation", x.layer, x.head, qi, qj, 0, -1, "c2p"};
  s.quotes = {paper_quote(Quote::C2PRow)};
  s.what_if = knob(x, WhatIfKnob::Scale, s.show, WhatIfNumber::ScaledC2P);
  const deberta::Matrix* c2p = x.term(a.terms[deberta::Term::c2p]);
  if (!c2p) {
    return skip(s, tr("c2p is off in this run (the model was trained without it, or the ablation switched it off)."));
  } else {
    const deberta::CellExplanation e = deberta::explain_cell(*in.model, f, x.layer, x.head, qi, qj);
    // TRANSLATORS: {row} is a table row, {c2p} a number, {d} the head width, {f} the scale factor, {root} the
    // scale's root (√(3d), …).
    s.question = trf("In layer {layer}, head {head}, cell i = {i}, j = {j} reads row {row}: c2p = Q_c[i] · K_r[{row}] = "
                     "{c2p}. Heads have width d = {d} and the scale is 1/√(f·d) with f = {f}. How much does c2p add to "
                     "the score Ã_ij / {root} that enters the softmax?",
                     arg("layer", x.layer), arg("head", x.head), arg("i", qi), arg("j", qj), arg("row", e.c2p_row),
                     arg("c2p", num(e.dot[deberta::Term::c2p], 6)), arg("d", d_head), arg("f", f_text), arg("root", root));
    s.answer = (*c2p)(qi, qj);
    ask_precision(s, decimals_for(s.answer, 6), printed_error(e.dot[deberta::Term::c2p], 6) * e.scale);
    s.explanation = trf("s · c2p = {c2p} / √({f} × {d}) = {c2p} × {scale} = {value} (the trace's c2p map).",
                        arg("c2p", num(e.dot[deberta::Term::c2p], 6)), arg("f", f_text), arg("d", d_head), arg("scale", num(e.scale, 6)),
                        arg("value", num(s.answer, 6)));
    // TRANSLATORS: a named mistake, shown after "Likely mistake:"; {root} is the scale's root (√(3d), …).
    add_mistake(s, e.dot[deberta::Term::c2p], trf("forgot the scale: the softmax sees Ã / {root}, so each term is divided by {root}",
                               arg("root", root)));
    if (f_scale != 1.0)
      // TRANSLATORS: a named mistake; {root} is the scale's root.
      add_mistake(s, e.dot[deberta::Term::c2p] / std::sqrt(d), trf("used BERT's 1/√d: this model divides by {root}", arg("root", root)));
    if (f_scale != 3.0) add_mistake(s, e.dot[deberta::Term::c2p] / std::sqrt(3 * d), paper_3);
    // TRANSLATORS: a named mistake.
    add_mistake(s, e.dot[deberta::Term::c2p] / (d * f_scale), tr("forgot the square root: the scale is 1/√(f·d)"));
    return s;
  }
}

/// eq. 4, term (c): the table row p2c reads for one cell, under the run's index (the paper's δ(j, i) or the
/// released code's δ(i, j)), from the run's p2c_row; skips when p2c is off or with one token.
LessonStep step_p2c_index(const Ctx& x) {
  const int N = x.N;
  const deberta::SequenceContext& ctx = x.ctx;
  const deberta::ResolvedAttention& att = x.att;
  const deberta::AttentionTrace& a = x.a;
  const int64_t k = x.k;
  const int ki = x.ki;
  const int kj = x.kj;
  LessonStep s;
  s.title = "8. " + std::string(tr("Position-to-content and its index (eq. 4, term (c))"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the words ("paper",
  // "released code": the authors' code, microsoft/DeBERTa); keep every symbol and the spacing.
  s.equation = tr("p2c(i, j) = K_c[j] Q_r[δ(j, i)]ᵀ   (paper, eq. 4)      K_c[j] Q_r[δ(i, j)]ᵀ   (released code)");
  // TRANSLATORS: docs/paper-vs-code.md is a file name.
  s.text = tr("p2c asks the mirror question: given what key j says, how interesting is a query at this distance? The "
              "paper indexes the table with δ(j, i) (its reason is quoted above); the released code passes the same rows "
              "as c2p, δ(i, j) (docs/paper-vs-code.md). The ablation panel can switch between the two.");
  s.show = {"equation", x.layer, x.head, ki, kj, 0, -1, "p2c"};
  s.quotes = {paper_quote(Quote::P2CIndex)};
  s.what_if = knob(x, WhatIfKnob::P2CIndex, s.show, WhatIfNumber::P2CRow);
  if (!x.term(a.terms[deberta::Term::p2c])) {
    return skip(s, tr("p2c is off in this run (the model was trained without it, or the ablation switched it off)."));
  } else if (N < 2) {
    return skip(s, tr("the input has one token: δ(i, j) and δ(j, i) are the same. Type a longer text."));
  } else {
    const bool paper = att.p2c_index == deberta::P2CIndex::Paper;
    const int64_t row = ctx.p2c_row(ki, kj);
    s.question = paper ? trf("This run uses the paper's index δ(j, i) and k = {k}. Which row of Q_r does p2c read for "
                             "i = {i}, j = {j}?",
                             arg("k", k), arg("i", ki), arg("j", kj))
                       : trf("This run uses the released code's index δ(i, j) and k = {k}. Which row of Q_r does p2c "
                             "read for i = {i}, j = {j}?",
                             arg("k", k), arg("i", ki), arg("j", kj));
    s.answer = static_cast<double>(row);
    s.integer = true;
    // TRANSLATORS: {ij} and {ji} are the rows δ(i, j) and δ(j, i); {row} the row this run reads.
    s.explanation = paper ? trf("rows for (i, j) = ({i}, {j}): δ(i, j) = {ij}, δ(j, i) = {ji}; this run reads row {row} "
                                "(paper).",
                                arg("i", ki), arg("j", kj), arg("ij", ctx.c2p_row(ki, kj)), arg("ji", ctx.c2p_row(kj, ki)),
                                arg("row", row))
                          : trf("rows for (i, j) = ({i}, {j}): δ(i, j) = {ij}, δ(j, i) = {ji}; this run reads row {row} "
                                "(code: the same row as c2p).",
                                arg("i", ki), arg("j", kj), arg("ij", ctx.c2p_row(ki, kj)), arg("ji", ctx.c2p_row(kj, ki)),
                                arg("row", row));
    if (paper)
      // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
      add_mistake(s, static_cast<double>(ctx.c2p_row(ki, kj)), tr("used the code's δ(i, j): this run follows the paper's δ(j, i)"));
    else
      add_mistake(s, static_cast<double>(ctx.c2p_row(kj, ki)),
                  // TRANSLATORS: a named mistake.
                  tr("used the paper's p2c index δ(j, i): the released code reads δ(i, j), the same row as c2p"));
    return s;
  }
}

/// §3.1, eq. 4: the scale s = 1/√(f·d) of this model (the resolved attention's scale; the paper's f = 3).
LessonStep step_scale(const Ctx& x) {
  const double s_scale = x.s_scale;
  const double f_scale = x.f_scale;
  const int64_t d_head = x.d_head;
  const double d = x.d;
  const std::string& root = x.root;
  const std::string& f_text = x.f_text;
  const bool pos_terms = x.pos_terms;
  const std::string& active = x.active;
  const int qi = x.qi;
  const int qj = x.qj;
  const std::string paper_3 = paper_3_mistake(x);
  LessonStep s;
  // TRANSLATORS: a lesson step's title (its number is written before it); {root} is the scale's root (√(3d), …).
  s.title = "9. " + trf("The scale 1/{root} (§3.1, eq. 4)", arg("root", root));
  // TRANSLATORS: equations in the paper's notation on two lines, drawn in a monospace font: translate only the words
  // ("paper", "released code", "the number of position terms", "this model"); keep every symbol, the line break and the
  // spacing. {f} is the model's scale factor.
  s.equation = trf("paper (eq. 4):  H_o = softmax(Ã / √(3d)) V_c\nreleased code:  s = 1 / √(f · d),   f = 1 + the number of "
                   "position terms;   this model: f = {f}",
                   arg("f", f_text));
  // TRANSLATORS: pos_att_type is a configuration key.
  s.text = tr("The paper's scale (quoted above) is 1/√(3d); the paper says it stabilizes training and gives no derivation. "
              "A reading of ours, not the paper's: if the three terms were independent with equal variance, the standard "
              "deviation of their sum would be √3 times that of one term, so dividing by √(3d) where BERT divides by √d "
              "keeps the scores as spread out as BERT's. The released code counts the position terms the model was built "
              "with (v1: the entries of pos_att_type; v2/v3: c2p and p2c).");
  if (f_scale == 3.0)
    s.text += " " + std::string(tr("This model's factor is f = 3: its scale is the paper's 1/√(3d)."));
  else if (f_scale == 1.0 && !pos_terms)
    s.text += " " + std::string(tr("This model has no position term: f = 1, BERT's 1/√d of the standard attention (step 1). "
                                   "The paper's 3 counts three terms this model does not have."));
  else
    // TRANSLATORS: {f} is the model's scale factor, {terms} its active terms ("c2c + c2p"), {root} the scale's root.
    s.text += " " + trf("This model's factor is f = {f} ({terms}), so it divides by {root}, not by the paper's √(3d).",
                        arg("f", f_text), arg("terms", active), arg("root", root));
  s.show = {"equation", x.layer, x.head, qi, qj, 0, -1, "logits"};
  s.quotes = {paper_quote(Quote::Scale)};
  s.what_if = knob(x, WhatIfKnob::Scale, s.show, WhatIfNumber::Scale);
  s.question = trf("This model has heads of width d = {d} and its scale factor is f = {f}. What is s = 1/√(f·d)?",
                   arg("d", d_head), arg("f", f_text));
  s.answer = s_scale;
  ask_precision(s, decimals_for(s_scale, 6), 0);
  s.explanation = "s = 1/√(" + integer(d_head) + " × " + f_text + ") = 1/√" + factor(d * f_scale) + " = 1/" + root + " = " +
                  num(s_scale, 6) + ".";
  if (f_scale != 1.0)
    // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
    add_mistake(s, 1.0 / std::sqrt(d), tr("used BERT's 1/√d: this model's factor f counts its position terms"));
  if (f_scale != 3.0) add_mistake(s, 1.0 / std::sqrt(3 * d), paper_3);
  // TRANSLATORS: a named mistake.
  add_mistake(s, 1.0 / (d * f_scale), tr("forgot the square root"));
  // TRANSLATORS: a named mistake.
  add_mistake(s, std::sqrt(d * f_scale), tr("inverted it: the scores are divided by √(f·d)"));
  return s;
}

/// eq. 4's softmax: the difference of two scores Ã/√(f·d) of one row, from the ratio of their weights
/// (the favourite key against the key of median weight); skips on a masked head or without a second key.
LessonStep step_softmax(const Ctx& x) {
  const int N = x.N;
  const deberta::Matrix& probs = x.probs;
  const deberta::Matrix& logits = x.logits;
  const double s_scale = x.s_scale;
  const std::string& root = x.root;
  const int qi = x.qi;
  const int qj = x.qj;
  LessonStep s;
  s.title = "10. " + std::string(tr("The softmax in one line (eq. 4)"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the word "so"; keep
  // every symbol and the spacing. {root} is the scale's root (√(3d), …).
  s.equation = trf("w_ij = exp(Ã_ij / {root}) / ∑_j' exp(Ã_ij' / {root}),   so   w_ij / w_ij' = exp((Ã_ij − Ã_ij') / {root})",
                   arg("root", root));
  // TRANSLATORS: {root} is the scale's root (√(3d), …).
  s.text = trf("Only differences of scores matter within a row: adding a constant to every score of query i changes "
               "nothing. A key whose score (Ã/{root}) is larger by 1 gets e ≈ 2.72 times more attention.",
               arg("root", root));
  // TRANSLATORS: {root} is the scale's root (√(3d), …); the words in quotation marks are the paper's own (§3.1).
  s.text += " " + trf("The paper calls Ã_ij itself \"the attention score\" (quoted above); this lesson calls Ã/{root} the "
                      "score because that is the number the softmax takes. The two differ by the one constant factor "
                      "1/{root}, which keeps the order of the keys but makes the row sharper or flatter.",
                      arg("root", root));
  // The favourite key against the key of median weight.
  std::vector<int> order(static_cast<size_t>(N));
  for (int j = 0; j < N; ++j) order[static_cast<size_t>(j)] = j;
  std::sort(order.begin(), order.end(), [&](int u, int v) { return probs(qi, u) > probs(qi, v); });
  const int j2 = order[static_cast<size_t>(N / 2)];
  s.show = {"equation", x.layer, x.head, qi, j2, 0, -1, "probs"};
  s.quotes = {paper_quote(Quote::Eq4Softmax), paper_quote(Quote::ScoreElement)};
  {
    LessonTarget gap = s.show;
    gap.j = qj;  // the step's number: the score of the favourite key qj minus that of j2
    s.what_if = knob(x, WhatIfKnob::Scale, gap, WhatIfNumber::ScoreGap, j2);
  }
  if (x.masked()) {
    return skip(s, tr("this head is masked in this run: its weights are all 0."));
  } else if (N < 2 || j2 == qj || !(probs(qi, j2) > 0)) {
    return skip(s, trf("query {i} has no second key with a positive weight to compare.", arg("i", qi)));
  } else {
    const double w1 = probs(qi, qj), w2 = probs(qi, j2);
    // TRANSLATORS: {token_j} and {token_j2} are the keys' texts in single quotes; {w1}, {w2} their weights; {root}
    // the scale's root (√(3d), …).
    s.question = trf("In layer {layer}, head {head}, query i = {i} gives key {j} {token_j} the weight {w1} and key {j2} "
                     "{token_j2} the weight {w2}. By how much is the score Ã/{root} of key {j} larger?",
                     arg("layer", x.layer), arg("head", x.head), arg("i", qi), arg("j", qj), arg("token_j", x.tok(qj)),
                     arg("w1", num(w1, 6)), arg("j2", j2), arg("token_j2", x.tok(j2)), arg("w2", num(w2, 6)),
                     arg("root", root));
    s.answer = logits(qi, qj) - logits(qi, j2);
    // ln of the printed weights: off by at most the relative rounding of each.
    ask_precision(s, decimals_for(s.answer, 4), printed_error(w1, 6) / w1 + printed_error(w2, 6) / w2);
    // TRANSLATORS: {ln} is the logarithm of the ratio, {s1} and {s2} the trace's two scores, {diff} their difference.
    s.explanation = trf("ln({w1} / {w2}) = {ln}; the trace's scores: {s1} − ({s2}) = {diff}.", arg("w1", num(w1, 6)),
                        arg("w2", num(w2, 6)), arg("ln", num(std::log(w1 / w2), 5)), arg("s1", num(logits(qi, qj))),
                        arg("s2", num(logits(qi, j2))), arg("diff", num(s.answer, 5)));
    // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
    add_mistake(s, w1 / w2, tr("forgot the logarithm: the ratio of the weights is exp of the difference"));
    // TRANSLATORS: a named mistake; {root} is the scale's root.
    add_mistake(s, s.answer / s_scale, trf("gave the difference of the unscaled Ã: the softmax sees Ã / {root}", arg("root", root)));
    // TRANSLATORS: a named mistake.
    add_mistake(s, w1 - w2, tr("subtracted the weights: the softmax relates their ratio to the scores"));
    return s;
  }
}

/// Why steps 11 and 14 (I_0 = H + P) do not apply to a model whose EMD adds no absolute position
/// (config `emd_position: false`, the zoo's depth-matched −EMD controls: I_0 = H); empty otherwise.
std::string emd_without_positions(const Ctx& x) {
  if (!x.in.emd || x.in.model->config.emd_position) return {};
  // TRANSLATORS: emd_position is a configuration key (keep it); I_0 = H is a formula (keep it).
  return tr("this model's EMD adds no absolute position (emd_position: false): its first query input is I_0 = H, "
            "with no P to add.");
}

/// §3.2, appendix A.8, A.9: the Enhanced Mask Decoder's first query input I_0 = H + P as the released code
/// computes it (the EMD trace's query_states0), at the first [MASK]; skips without an EMD.
LessonStep step_emd(const Ctx& x) {
  const LessonInput& in = x.in;
  const deberta::ForwardTrace& t = x.t;
  const int N = x.N;
  const int qi = x.qi;
  LessonStep s;
  s.title = "11. " + std::string(tr("The Enhanced Mask Decoder (§3.2; appendix A.8, A.9)"));
  // TRANSLATORS: equations in the paper's notation on two lines, drawn in a monospace font: translate only the words
  // ("paper", "layers sharing weights", "literally", "or", "released code", "output of layer", "last layer's weights",
  // "query", "key/value", "twice"); keep every symbol, the line break and the alignment of the two lines.
  s.equation = tr("paper:          EMD(I, H), n = 2 layers sharing weights;  I_0 = P (A.8, literally)  or  H + P (A.9)\n"
                  "released code:  I_0 = H + P,  H = output of layer L − 2,  I_{t+1} = last layer's weights (query I_t, key/value H), twice");
  // TRANSLATORS: 'a new store opened beside the new mall' is the paper's example sentence (§3.2): translate it, or keep it
  // and translate it in parentheses; the words in quotation marks are the paper's own (appendix A.8).
  s.text = tr("In 'a new store opened beside the new mall' with 'store' and 'mall' masked, both masks follow the word 'new' "
              "with the same relative positions: relative positions alone cannot tell which one is the subject (§3.2). "
              "DeBERTa adds the absolute positions P only at the end, just before the softmax layer that predicts the "
              "masked tokens. Appendix A.8 gives the EMD two inputs, I and H (\"the hidden states from the previous "
              "Transformer layer\"), and says it uses the absolute position embedding as I of the first EMD layer; read "
              "literally, I = P. A.9 says the absolute position embedding is added to the hidden state as the query: "
              "I = H + P. The released code (microsoft/DeBERTa, which this model runs) does the second, in its own "
              "arrangement: H is the output of layer L − 2, and the last encoder layer's weights run twice inside the EMD, "
              "in place of that layer. Neither L − 2 nor the reuse of the last layer is written in the paper.");
  int mi = qi;
  for (int p = 0; p < N; ++p)
    if (p < static_cast<int>(in.tokens.size()) && in.tokens[static_cast<size_t>(p)] == "[MASK]") {
      mi = p;
      break;
    }
  s.show = {"predictions", x.L - 1, x.head, mi, mi, 0, -1, "emd_I"};
  s.quotes = {paper_quote(Quote::EMDInput), paper_quote(Quote::EMDQuery)};
  if (!in.emd || !emd_without_positions(x).empty()) {
    s.show.map.clear();
    if (in.emd) return skip(s, emd_without_positions(x));
    return skip(s, in.emd_note.empty() ? std::string(tr("this model has no Enhanced Mask Decoder.")) : in.emd_note);
  } else {
    const deberta::EMDTrace& emd = *in.emd;
    int found = -1;
    for (int l = 0; l < x.L && found < 0; ++l) {
      const deberta::Matrix& out = t.layers[static_cast<size_t>(l)].output;
      if (out.rows() == emd.kv_states.rows() && out.cols() == emd.kv_states.cols() &&
          (out - emd.kv_states).cwiseAbs().maxCoeff() == 0.0)
        found = l;
    }
    // The component where the position matters most; "show me" selects the [MASK] and the key it
    // attends to most in the first EMD pass (a key, never the component index).
    int comp = 0;
    for (int q = 1; q < emd.position_embeddings.cols(); ++q)
      if (std::fabs(emd.position_embeddings(mi, q)) > std::fabs(emd.position_embeddings(mi, comp))) comp = q;
    s.show.component = comp;
    if (!emd.passes.empty() && x.head < static_cast<int>(emd.passes[0].attention.probs.size()) &&
        emd.passes[0].attention.probs[static_cast<size_t>(x.head)].rows() > mi)
      s.show.j = argmax_row(emd.passes[0].attention.probs[static_cast<size_t>(x.head)], mi);
    const double h = emd.kv_states(mi, comp), p = emd.position_embeddings(mi, comp);
    const double last = t.layers.back().output(mi, comp);
    // TRANSLATORS: {token} is the token's text in single quotes ('[MASK]'); {component} an index of the hidden vector;
    // {layer} = L − 2; {h}, {p} and {last} are numbers.
    s.question = trf("Take token i = {i} {token}, hidden component {component}. The output of layer {layer} (= L − 2) "
                     "there is H = {h}, the absolute position embedding of position {i} is P = {p}, and the last layer's "
                     "output is {last}. What is the first query input I_0 of the EMD as the released code (this model) "
                     "computes it?",
                     arg("i", mi), arg("token", x.tok(mi)), arg("component", comp), arg("layer", x.L - 2),
                     arg("h", num(h, 6)), arg("p", num(p, 6)), arg("last", num(last, 6)));
    s.answer = emd.query_states0(mi, comp);
    ask_precision(s, decimals_for(s.answer, 6), printed_error(h, 6) + printed_error(p, 6));
    // TRANSLATORS: {layer} is a layer's number, or "L − 2" when the trace does not show which layer it is.
    s.explanation = trf("I_0 = H + P = {h} + ({p}) = {value} (the EMD trace's query input). H is the output of layer "
                        "{layer}: the two passes use the last layer's weights in its place, so they replace that layer "
                        "rather than add one (the released code's arrangement).",
                        arg("h", num(h, 6)), arg("p", num(p, 6)), arg("value", num(s.answer, 6)),
                        arg("layer", found >= 0 ? integer(found) : std::string("L − 2")));
    // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
    add_mistake(s, h, tr("took I = H without the position: that is BERT's decoder (A.8: with I = H and one layer the EMD is "
                         "the BERT decoder layer); DeBERTa's EMD adds the absolute position P"));
    // TRANSLATORS: another reading of the paper (not a mistake), shown after "Another reading of the paper, not a
    // mistake:"; the words in quotation marks are the paper's own (appendix A.8).
    add_mistake(s, p, tr("I = P is the paper's literal reading of A.8 (\"use absolute position embedding as I of the first EMD "
                         "layer\"), not a mistake; this model runs the released code, which adds P to H as A.9 describes: "
                         "I_0 = H + P"), true);
    if (x.L >= 2)
      // TRANSLATORS: another reading of the paper (not a mistake); the words in quotation marks are the paper's own (A.8).
      add_mistake(s, last + p, tr("H = the last layer's output is a natural reading of A.8 (\"the hidden states from the previous "
                                  "Transformer layer\"); the released code takes H from layer L − 2 and runs the last layer's "
                                  "weights inside the EMD"), true);
    return s;
  }
}

/// §5.2.1, Table 4: the score of a layer-0 cell with c2p switched off (the score minus its c2p
/// contribution), at the key whose |c2p| is largest in the query's row; skips when c2p is off.
LessonStep step_ablation(const Ctx& x) {
  const deberta::ForwardTrace& f = x.f;
  const int N = x.N;
  const double s_scale = x.s_scale;
  const std::string& root = x.root;
  const int qi = x.qi;
  const int qj = x.qj;
  LessonStep s;
  s.title = "12. " + std::string(tr("Ablations: take a term away (§5.2.1, Table 4)"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the word "without".
  s.equation = tr("Ã_ij without c2p = c2c + p2c (+ p2p)");
  // TRANSLATORS: "Ablations" is the panel of that name; the model zoo is the set of small models trained for the explorer.
  s.text = tr("The paper's Table 4 retrains without each term (the model zoo does too); the viewer can also switch a term "
              "off at inference (the Ablations panel). In layer 0 the input does not depend on the attention, so removing "
              "c2p there changes the score by exactly its own contribution; later layers then see different inputs and "
              "everything moves.");
  s.show = {"head", 0, x.head, qi, qj, 0, -1, "logits"};
  s.quotes = {paper_quote(Quote::Ablation)};
  const deberta::AttentionTrace& a0 = f.layers[0].attention;
  const std::vector<deberta::Matrix>& c2p_maps = a0.terms[deberta::Term::c2p];
  const bool has = x.head < static_cast<int>(c2p_maps.size()) && c2p_maps[static_cast<size_t>(x.head)].size();
  if (!has) {
    return skip(s, deberta::has_projections_for(*x.in.model, deberta::Term::c2p)
                       ? tr("c2p is off in this run already (the ablation switched it off). Reset the ablation to ask this "
                            "question.")
                       : tr("this model has no c2p term (it was built without it): there is nothing to switch off. A model "
                            "with c2p (the bundled model) asks this question."));
  } else {
    // The key whose c2p term matters most for the query: the largest |c2p| of its row in layer 0.
    const deberta::Matrix& c2p0 = c2p_maps[static_cast<size_t>(x.head)];
    int kj0 = 0;
    for (int j = 1; j < N; ++j)
      if (std::fabs(c2p0(qi, j)) > std::fabs(c2p0(qi, kj0))) kj0 = j;
    s.show.j = kj0;
    const double lg = a0.logits[static_cast<size_t>(x.head)](qi, kj0), c2p = c2p0(qi, kj0);
    // TRANSLATORS: {root} is the scale's root (√(3d), …); {score} and {c2p} are numbers.
    s.question = trf("In layer 0, head {head}, cell i = {i}, j = {j} has the score Ã/{root} = {score}, of which c2p "
                     "contributes {c2p}. What is the score there when c2p is switched off (same scale)?",
                     arg("head", x.head), arg("i", qi), arg("j", kj0), arg("root", root), arg("score", num(lg)),
                     arg("c2p", num(c2p)));
    s.answer = lg - c2p;
    ask_precision(s, decimals_for(s.answer, 4), printed_error(lg, 4) + printed_error(c2p, 4));
    // TRANSLATORS: {score}, {c2p} and {value} are numbers; "Ablations" is the panel of that name.
    s.explanation = trf("{score} − ({c2p}) = {value}. Switch c2p off in the Ablations panel (the scale stays the model's) "
                        "and read the score of this cell in layer 0 to see it.",
                        arg("score", num(lg)), arg("c2p", num(c2p)), arg("value", num(s.answer)));
    // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
    add_mistake(s, lg + c2p, tr("added c2p instead of removing it"));
    // TRANSLATORS: a named mistake.
    add_mistake(s, lg - c2p / s_scale, tr("removed the unscaled c2p: the score holds c2p times the scale"));
    return s;
  }
}


/// The input's first [MASK] (−1: none), by the tokens' display names.
int first_mask(const Ctx& x) {
  for (int p = 0; p < x.N; ++p)
    if (p < static_cast<int>(x.in.tokens.size()) && x.in.tokens[static_cast<size_t>(p)] == "[MASK]") return p;
  return -1;
}

/// A token id as the vocabulary writes it, in single quotes ('LORD'); "'#id'" without a vocabulary.
std::string piece(const Ctx& x, int64_t id) {
  return "'" + (x.in.vocab ? x.in.vocab(id) : "#" + std::to_string(id)) + "'";
}

/// Why steps 13–15 cannot predict at a [MASK] on this input ("" when they can): no masked-LM head, no [MASK].
std::string no_prediction(const Ctx& x, int mask) {
  if (!x.in.model->weights.lm_head)
    // TRANSLATORS: why the steps on the masked-LM objective and the prediction do not apply.
    return tr("this model has no masked-LM head: it predicts no token at a [MASK]. Load a model with one (the bundled "
              "model) to ask this question.");
  if (mask < 0)
    // TRANSLATORS: why the steps on the masked-LM objective and the prediction do not apply.
    return tr("the input has no [MASK]: put one in the text (the default sentence has one) to ask this question.");
  return "";
}

/// The decoder's output of a run (the EMD's when it ran, else the last layer's) at `mask`, through
/// the MLM head: the full distribution (log_probs) and the top 3.
deberta::MaskPrediction predict_at(const deberta::Model& model, const deberta::Matrix& decoder_output, int mask) {
  return deberta::predict_from_states(model, decoder_output, {mask}, 3).front();
}

/// The run's decoder output: the EMD's output when the lesson was given its passes, else the last layer's.
const deberta::Matrix& decoder_states(const Ctx& x) { return x.in.emd ? x.in.emd->output() : x.t.layers.back().output; }

/// §2.2, eq. 1: the masked-LM objective. Asks the loss −log p that the [MASK] adds when the hidden word is
/// the model's first guess (deberta::predict_from_states's log-softmax); skips without an MLM head or a [MASK].
LessonStep step_mlm_objective(const Ctx& x) {
  const int mi = first_mask(x);
  LessonStep s;
  // TRANSLATORS: a lesson step's title (the step's number is written before it).
  s.title = "13. " + std::string(tr("The masked-LM objective (eq. 1)"));
  // TRANSLATORS: an equation in the paper's notation on two lines, drawn in a monospace font: translate only the words
  // ("loss at one masked position i"); keep every symbol and the line break.
  s.equation = tr("max_θ log p_θ(X | X̃) = max_θ Σ_{i∈C} log p_θ(x̃_i = x_i | X̃)          (eq. 1)\n"
                  "loss at one masked position i:   −log p_θ(x̃_i = x_i | X̃)");
  // TRANSLATORS: "EMD & predictions" is the tab of that name.
  s.text = tr("Everything the previous steps compute is trained by one objective (§2.2): hide some tokens of a text X "
              "(X̃ is the corrupted text, C the set of hidden positions), and make the model give the hidden tokens a "
              "high probability. At each masked position the decoder's output goes through the masked-LM head, whose "
              "logits over the whole vocabulary become probabilities by a softmax; the position adds −log p of the right "
              "token to the loss (natural logarithm, in nats). A sure right guess adds 0, a guess at one chance in V adds "
              "log V. The EMD & predictions tab shows the first guesses.");
  s.show = {"predictions", x.L - 1, x.head, std::max(mi, 0), std::max(mi, 0), 0, -1, ""};
  s.quotes = {paper_quote(Quote::MLMObjective)};
  const std::string why = no_prediction(x, mi);
  if (!why.empty()) return skip(s, why);
  const deberta::MaskPrediction pred = predict_at(*x.in.model, decoder_states(x), mi);
  const deberta::TokenScore& top = pred.top.front();
  const double p = top.probability;
  // TRANSLATORS: {token} is the [MASK]'s text in single quotes; {word} the predicted piece in single quotes; {p} a
  // probability.
  s.question = trf("At the [MASK], i = {i} {token}, the model's first guess is {word} with probability p = {p}. Suppose "
                   "{word} was the hidden word x_i: what does this position add to the loss, −log p_θ(x̃_i = x_i | X̃) "
                   "(natural logarithm, nats)?",
                   arg("i", mi), arg("token", x.tok(mi)), arg("word", piece(x, top.id)), arg("p", num(p, 6)));
  s.answer = -pred.log_probs(top.id);
  ask_precision(s, decimals_for(s.answer, 4), printed_error(p, 6) / p);
  // TRANSLATORS: {p} is a probability, {loss} the loss, {V} the vocabulary's size, {logV} its logarithm;
  // predict_from_states is a function's name.
  s.explanation = trf("−ln {p} = {loss} nats (predict_from_states: the log-softmax of the MLM head's logits over V = {V} "
                      "pieces). For comparison, a uniform guess would add ln {V} = {logV}.",
                      arg("p", num(p, 6)), arg("loss", num(s.answer, 5)), arg("V", pred.log_probs.size()),
                      arg("logV", num(std::log(static_cast<double>(pred.log_probs.size())), 4)));
  // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
  add_mistake(s, -std::log10(p), tr("used the base-10 logarithm: the loss uses the natural logarithm (nats)"));
  // TRANSLATORS: a named mistake.
  add_mistake(s, -std::log2(p), tr("used the base-2 logarithm (bits): the loss uses the natural logarithm (nats)"));
  // TRANSLATORS: a named mistake.
  add_mistake(s, std::log(p), tr("forgot the minus sign: eq. 1 maximises log p, so the loss to minimise is −log p ≥ 0"));
  // TRANSLATORS: a named mistake.
  add_mistake(s, 1 - p, tr("gave 1 − p, the probability of a wrong guess: the loss is −log p"));
  return s;
}

/// §3.2: what the EMD's output predicts at the [MASK]: the MLM head's logits of the two first guesses and
/// the ratio of their probabilities (deberta::mlm_logits, predict_from_states); skips without an EMD, an
/// MLM head or a [MASK].
LessonStep step_emd_prediction(const Ctx& x) {
  const int mi = first_mask(x);
  LessonStep s;
  // TRANSLATORS: a lesson step's title (the step's number is written before it); §3.2 is the paper's section.
  s.title = "14. " + std::string(tr("What the EMD predicts, and how eq. 1 trains it (§3.2)"));
  // TRANSLATORS: an equation in the paper's notation on two lines, drawn in a monospace font: translate only the words
  // ("two passes", "logits", "the MLM head"); keep every symbol and the line break.
  s.equation = tr("I_0 = H + P  →  two passes  →  EMD output e_i  →  logits z = the MLM head(e_i)  (§3.2)\n"
                  "p(w) = exp(z_w) / Σ_v exp(z_v),   so   p(w₁) / p(w₂) = exp(z_w₁ − z_w₂)");
  s.text = tr("Step 11 built the EMD's query input I_0 = H + P. The two passes turn it into the EMD's output at the "
              "[MASK]; the masked-LM head turns that vector into one logit per vocabulary piece, and the softmax into "
              "probabilities. The absolute positions thus act only here, just before the softmax that decodes the "
              "masked words (§3.2). Training minimises eq. 1's −log p at the masked positions, so its gradient flows "
              "back through this softmax, the head and the two passes into I_0 = H + P: the position embeddings P, "
              "which DeBERTa adds nowhere else, are trained by the masked positions' loss alone.");
  s.show = {"predictions", x.L - 1, x.head, std::max(mi, 0), std::max(mi, 0), 0, -1, ""};
  s.quotes = {paper_quote(Quote::EMDDecode), paper_quote(Quote::EMDQuery), paper_quote(Quote::MLMObjective)};
  const std::string why = no_prediction(x, mi);
  if (!x.in.emd) return skip(s, x.in.emd_note.empty() ? std::string(tr("this model has no Enhanced Mask Decoder.")) : x.in.emd_note);
  if (!emd_without_positions(x).empty()) return skip(s, emd_without_positions(x));
  if (!why.empty()) return skip(s, why);
  const deberta::MaskPrediction pred = predict_at(*x.in.model, x.in.emd->output(), mi);
  const deberta::TokenScore &w1 = pred.top[0], &w2 = pred.top[1];
  // TRANSLATORS: {token} is the [MASK]'s text in single quotes; {w1}, {w2} the two predicted pieces in single quotes;
  // {z1}, {z2} their logits.
  s.question = trf("At the [MASK], i = {i} {token}, the MLM head reads the EMD's output and gives the logit {z1} to {w1} "
                   "and {z2} to {w2}, its two first guesses. How many times more probable is {w1} than {w2}?",
                   arg("i", mi), arg("token", x.tok(mi)), arg("w1", piece(x, w1.id)), arg("w2", piece(x, w2.id)),
                   arg("z1", num(w1.logit)), arg("z2", num(w2.logit)));
  s.answer = std::exp(pred.log_probs(w1.id) - pred.log_probs(w2.id));
  // exp of a difference of two printed logits: off by at most the ratio times their rounding.
  ask_precision(s, decimals_for(s.answer, 4), s.answer * std::expm1(printed_error(w1.logit, 4) + printed_error(w2.logit, 4)));
  // Without the EMD: the head reads the last encoder layer (BERT's decoder, −EMD at inference).
  const deberta::MaskPrediction bert = predict_at(*x.in.model, x.t.layers.back().output, mi);
  // TRANSLATORS: {p1}, {p2} are probabilities, {ratio} their ratio; {w0} the first guess without the EMD, {p0} its
  // probability; mlm_logits is a function's name.
  s.explanation = trf("exp({z1} − ({z2})) = {ratio}: the softmax's common denominator cancels, and p = {p1} / {p2} gives "
                      "the same (mlm_logits, predict_from_states). Without the EMD (the head reading the last layer, as "
                      "BERT does) the first guess would be {w0} with p = {p0}.",
                      arg("z1", num(w1.logit)), arg("z2", num(w2.logit)), arg("ratio", num(s.answer, 5)),
                      arg("p1", num(w1.probability, 6)), arg("p2", num(w2.probability, 6)),
                      arg("w0", piece(x, bert.top.front().id)), arg("p0", num(bert.top.front().probability, 6)));
  // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
  add_mistake(s, w1.logit - w2.logit, tr("forgot the exponential: the logits are log-probabilities up to a common constant"));
  // TRANSLATORS: a named mistake.
  if (w2.logit != 0) add_mistake(s, w1.logit / w2.logit, tr("divided the logits: the softmax turns their difference into a ratio"));
  // TRANSLATORS: a named mistake.
  add_mistake(s, 1 / s.answer, tr("inverted the ratio: the question asks how much more probable the first guess is"));
  return s;
}

/// Capstone (eq. 4 → eq. 1): the loss at the [MASK] for the model's first guess with each position term of
/// eq. 4 switched off in every layer (deberta::forward, predict_from_states); asks the change for the term
/// that moves it most. Skips without a position term, an MLM head or a [MASK].
LessonStep step_capstone(const Ctx& x) {
  const int mi = first_mask(x);
  LessonStep s;
  // TRANSLATORS: a lesson step's title (the step's number is written before it); "Capstone" is the lesson's last step
  // that ties the others together.
  s.title = "15. " + std::string(tr("Capstone: from eq. 4's terms to the prediction (eq. 1, eq. 4; §5.2.1)"));
  // TRANSLATORS: an equation in the paper's notation, drawn in a monospace font: translate only the words ("without",
  // "every layer"); keep every symbol.
  s.equation = tr("Δloss = −log p_without(w) − (−log p(w)) = ln(p(w) / p_without(w)),   Ã without one term of eq. 4, in every layer");
  // TRANSLATORS: "Ablations" is the panel of that name; the model zoo is the set of small models trained for the explorer.
  s.text = tr("The whole chain at once: eq. 4's terms make every layer's scores, the layers make the decoder's output, "
              "and eq. 1 scores its prediction. Switch one term off in every layer of the trained model and the "
              "prediction at the [MASK] moves; the change of its loss says how much this model leans on the term for "
              "this word. Table 4 (§5.2.1) asks another question: it trains a model without the term, which may learn "
              "to do without it (the model zoo and docs/table4.md compare those). Read the working's list of every "
              "term against §5.2.1's claim that removing c2p or p2c hurts, and, where the model has an EMD, against "
              "§3.2's claim that the absolute positions help at the decoder.");
  s.show = {"predictions", x.L - 1, x.head, std::max(mi, 0), std::max(mi, 0), 0, -1, ""};
  s.quotes = {paper_quote(Quote::Eq4Scores), paper_quote(Quote::MLMObjective), paper_quote(Quote::Ablation)};
  const std::string why = no_prediction(x, mi);
  if (!x.pos_terms) {
    // TRANSLATORS: {terms} lists the active terms (here "c2c").
    return skip(s, trf("this run has no position term to take away ({terms} only): switching off c2c would leave no "
                       "score at all. A model with c2p or p2c (the bundled model) asks this question.",
                       arg("terms", x.active)));
  }
  if (!why.empty()) return skip(s, why);
  if (!x.in.reruns && x.in.defer_capstone) {
    s.pending = true;
    return s;
  }
  const deberta::MaskPrediction base = predict_at(*x.in.model, decoder_states(x), mi);
  const deberta::TokenScore& top = base.top.front();
  const double loss0 = -base.log_probs(top.id);
  LessonReruns own;
  const LessonReruns* reruns = x.in.reruns;
  if (!reruns) own = lesson_reruns(x.in), reruns = &own;
  if (reruns->mask != mi) throw std::invalid_argument(tr("lesson: the reruns given are not for this run's [MASK]"));
  struct Off {
    std::string term, name;  ///< "c2p", "−c2p"
    double loss = 0, p = 0;
  };
  std::vector<Off> offs;
  for (const LessonReruns::Off& o : reruns->off)
    offs.push_back({o.term, "−" + o.term, -o.log_probs(top.id), std::exp(o.log_probs(top.id))});
  // The position term that moves the loss most (−EMD is listed, never asked).
  size_t pick = 0;
  for (size_t k = 1; k < offs.size(); ++k)
    if (offs[k].term != "EMD" && std::fabs(offs[k].loss - loss0) > std::fabs(offs[pick].loss - loss0)) pick = k;
  const Off chosen = offs[pick];
  const double p0 = top.probability, p1 = chosen.p;
  // TRANSLATORS: {token} is the [MASK]'s text in single quotes; {word} the predicted piece in single quotes; {p0}, {p1}
  // probabilities; {term} is c2p, p2c or p2p.
  s.question = trf("At the [MASK], i = {i} {token}, the model's first guess {word} has p = {p0}. With {term} switched off "
                   "in every layer (same weights, same scale) the model gives {word} p = {p1}. By how much does this "
                   "position's loss −log p of eq. 1 change (positive: it grows)?",
                   arg("i", mi), arg("token", x.tok(mi)), arg("word", piece(x, top.id)), arg("p0", num(p0, 6)),
                   arg("term", chosen.term), arg("p1", num(p1, 6)));
  s.answer = chosen.loss - loss0;
  ask_precision(s, decimals_for(s.answer, 4), printed_error(p0, 6) / p0 + printed_error(p1, 6) / p1);
  std::string list;
  for (const Off& o : offs)
    list += (list.empty() ? "" : ";  ") + o.name + ": p = " + num(o.p, 6) + ", Δloss = " + num(o.loss - loss0, 4);
  // TRANSLATORS: {p0}, {p1} are probabilities, {value} the change of the loss; {list} gives every switch with its
  // probability and change ("−c2p: p = 0.1, Δloss = 0.3;  −p2c: …"); "Ablations" is the panel of that name.
  s.explanation = trf("ln({p0} / {p1}) = {value} nats. Every switch, one at a time, for the same word: {list}. The "
                      "Ablations panel runs the same switches on the whole input.",
                      arg("p0", num(p0, 6)), arg("p1", num(p1, 6)), arg("value", num(s.answer, 5)), arg("list", list));
  // TRANSLATORS: a named mistake, shown after "Likely mistake:" (lower case, no final full stop).
  add_mistake(s, p0 - p1, tr("subtracted the probabilities: the loss is −log p, so its change is the logarithm of their ratio"));
  // TRANSLATORS: a named mistake.
  add_mistake(s, -s.answer, tr("the sign is reversed: the change is the loss without the term minus the loss with it"));
  // TRANSLATORS: a named mistake.
  add_mistake(s, s.answer / std::log(10.0), tr("used the base-10 logarithm: the loss uses the natural logarithm (nats)"));
  return s;
}


/// Step n's links (1-based): the core function that computes its answer and the notebook section that
/// re-derives it (issue 58, item 5). The test checks each file defines the function and each notebook
/// has the heading.
LessonLink lesson_link(int n) {
  static const char* const nb1 = "notebooks_data/notebooks/01_relative_positions.ipynb";
  static const char* const nb2 = "notebooks_data/notebooks/02_disentangled_attention.ipynb";
  static const char* const nb3 = "notebooks_data/notebooks/03_p2p_and_p2c_index.ipynb";
  static const char* const nb4 = "notebooks_data/notebooks/04_enhanced_mask_decoder.ipynb";
  static const char* const nb5 = "notebooks_data/notebooks/05_ablations.ipynb";
  static const char* const eq = "core/src/equations/equations.cpp";
  static const char* const model = "core/src/model/model.cpp";
  static const char* const analysis = "core/src/analysis/analysis.cpp";
  static const LessonLink links[] = {
      {"deberta::masked_softmax", eq, nb2, "The sum and the softmax"},
      {"deberta::explain_cell", "core/src/analysis/explain.cpp", nb2, "The sum and the softmax"},
      {"deberta::relative_distance", eq, nb1, "1. Eq. 3: the relative distance and its clamp"},
      {"deberta::relative_distance", eq, nb1, "1. Eq. 3: the relative distance and its clamp"},
      {"deberta::log_bucket_working", eq, nb1, "2. DeBERTa-v2: log buckets"},
      {"deberta::table_rows", eq, nb1, "3. Which table rows each cell reads"},
      {"deberta::content_to_position", eq, nb2, "c2p and p2c, literally: one dot product per pair"},
      {"deberta::position_to_content", eq, nb3, "2. The p2c index: δ(i, j) in the code, δ(j, i) in the paper"},
      {"deberta::resolve_attention", model, nb2, "The scale"},
      {"deberta::masked_softmax", eq, nb2, "The sum and the softmax"},
      {"deberta::emd_query_input", eq, nb4, "H, P and I₀ = H + P"},
      {"deberta::forward", model, nb5, "Part 1 · Inference-time switches in the trained baseline"},
      {"deberta::predict_from_states", analysis, nb4, "What the absolute positions add"},
      {"deberta::mlm_logits", model, nb4, "What the absolute positions add"},
      {"deberta::predict_masked", analysis, nb5, "Part 1 · Inference-time switches in the trained baseline"},
  };
  return n >= 1 && n <= static_cast<int>(sizeof links / sizeof links[0]) ? links[n - 1] : LessonLink{};
}

}  // namespace

LessonReruns lesson_reruns(const LessonInput& in) {
  if (!in.model || !in.trace) throw std::invalid_argument(tr("lesson: no model or no trace to build the lesson from"));
  const deberta::ForwardTrace& t = *in.trace;
  const deberta::ResolvedAttention& att = t.context.attention;
  LessonReruns r;
  int mask = -1;
  for (size_t p = 0; p < in.tokens.size() && static_cast<int64_t>(p) < t.inputs.size() && mask < 0; ++p)
    if (in.tokens[p] == "[MASK]") mask = static_cast<int>(p);
  if (mask < 0 || !in.model->weights.lm_head || !deberta::reads_relative_table(att.terms)) return r;
  r.mask = mask;
  const bool emd = in.emd != nullptr;
  const auto log_probs = [&](const deberta::Ablation& a) {
    const deberta::ForwardTrace off = deberta::forward(*in.model, t.inputs, a, deberta::TraceLevel::None, emd);
    return deberta::predict_from_states(*in.model, off.decoder_output(), {mask}, 1).front().log_probs;
  };
  for (deberta::Term term : {deberta::Term::c2p, deberta::Term::p2c, deberta::Term::p2p}) {
    if (!att.terms[term]) continue;
    deberta::Ablation a = t.ablation;
    a.terms[term] = false;
    r.off.push_back({deberta::term_name(term), log_probs(a)});
  }
  if (emd) {
    deberta::Ablation a = t.ablation;
    a.emd = false;
    r.off.push_back({"EMD", log_probs(a)});
  }
  return r;
}

std::vector<LessonStep> build_lesson(const LessonInput& in) {
  check_lesson_input(in);
  const Ctx x(in);
  std::vector<LessonStep> steps = {
      step_self_attention(x),  // 1. §3.1: softmax over the keys
      step_terms(x),           // 2. eq. 2 → eq. 4: Ã as a sum of terms
      step_distance(x),        // 3. eq. 3: δ(i, j) inside the window
      step_clamp(x),           // 4. eq. 3: the clamp
      step_buckets(x),         // 5. log buckets (released code)
      step_table_row(x),       // 6. the table row the model reads
      step_c2p(x),             // 7. eq. 4 (b): c2p and the scale
      step_p2c_index(x),       // 8. eq. 4 (c): p2c and its index
      step_scale(x),           // 9. the scale 1/√(f·d)
      step_softmax(x),         // 10. the softmax: ratios of weights
      step_emd(x),             // 11. §3.2, A.8, A.9: the EMD's input
      step_ablation(x),        // 12. §5.2.1: an ablation
      step_mlm_objective(x),   // 13. §2.2, eq. 1: the masked-LM objective
      step_emd_prediction(x),  // 14. §3.2: what the EMD predicts, and how eq. 1 trains it
      step_capstone(x),        // 15. eq. 4 → eq. 1: a term off, the prediction's loss
  };
  for (size_t n = 0; n < steps.size(); ++n) steps[n].link = lesson_link(static_cast<int>(n) + 1);
  return steps;
}

PencilCell pencil_cell(const deberta::ForwardTrace& full, int layer, int head, int i, int j) {
  if (layer < 0 || layer >= static_cast<int>(full.layers.size()))
    throw std::invalid_argument(trf("layer {layer} is not in the run", arg("layer", layer)));
  const deberta::AttentionTrace& a = full.layers[static_cast<size_t>(layer)].attention;
  const int64_t n = static_cast<int64_t>(full.inputs.size());
  const int64_t heads = static_cast<int64_t>(a.probs.size());
  if (a.Q_c.rows() != n || heads < 1 || head < 0 || head >= heads || i < 0 || i >= n || j < 0 || j >= n)
    throw std::invalid_argument(trf("head {head}, query {i} is not in the run's weights", arg("head", head), arg("i", i)));
  const int64_t d = a.Q_c.cols() / heads, c0 = head * d;
  const auto row = [&](const deberta::Matrix& m, int64_t r) {
    std::vector<double> v(static_cast<size_t>(d));
    for (int64_t q = 0; q < d; ++q) v[static_cast<size_t>(q)] = m(r, c0 + q);
    return v;
  };
  const auto dot = [](const std::vector<double>& x, const std::vector<double>& y) {
    double s = 0;
    for (size_t q = 0; q < x.size(); ++q) s += x[q] * y[q];
    return s;
  };
  PencilCell p;
  p.layer = layer, p.head = head, p.i = i, p.j = j;
  p.Q_c_i = row(a.Q_c, i);
  p.K_c_j = row(a.K_c, j);
  p.c2c = dot(p.Q_c_i, p.K_c_j);
  const deberta::SequenceContext& ctx = full.context;
  p.c2p = full.context.attention.terms[deberta::Term::c2p];
  p.p2c = full.context.attention.terms[deberta::Term::p2c];
  if (ctx.c2p_row.size() == 0) return p;
  p.row = ctx.c2p_row(i, j);
  p.row_paper = ctx.c2p_row(j, i);
  const auto table_row = [&](const deberta::Matrix& m, int64_t r) {
    if (r - a.row_offset < 0 || r - a.row_offset >= m.rows())
      throw std::invalid_argument(trf("row {row} of the relative table is not projected in this run", arg("row", r)));
    return row(m, r - a.row_offset);
  };
  // The gather along one line of cells: the fixed row against every table row the line reads.
  const auto gather = [&](const std::vector<double>& fixed, const deberta::Matrix& table, auto row_of) {
    PencilGather g;
    for (int64_t m = 0; m < n; ++m) g.rows.push_back(row_of(m));
    g.first_row = *std::min_element(g.rows.begin(), g.rows.end());
    const int64_t last = *std::max_element(g.rows.begin(), g.rows.end());
    for (int64_t r = g.first_row; r <= last; ++r) g.products.push_back(dot(fixed, table_row(table, r)));
    return g;
  };
  if (p.c2p && a.K_r.size()) {
    p.K_r_row = table_row(a.K_r, p.row);
    p.c2p_dot = dot(p.Q_c_i, p.K_r_row);
    p.c2p_gather = gather(p.Q_c_i, a.K_r, [&](int64_t key) { return ctx.c2p_row(i, key); });
  }
  if (p.p2c && a.Q_r.size()) {
    p.Q_r_row = table_row(a.Q_r, p.row);
    p.Q_r_row_paper = table_row(a.Q_r, p.row_paper);
    p.p2c_code = dot(p.K_c_j, p.Q_r_row);
    p.p2c_paper = dot(p.K_c_j, p.Q_r_row_paper);
    p.p2c_gather = gather(p.K_c_j, a.Q_r, [&](int64_t query) { return ctx.p2c_row(query, j); });
  }
  return p;
}

std::vector<double> PencilGather::values() const {
  std::vector<double> v;
  for (int64_t r : rows) v.push_back(products[static_cast<size_t>(r - first_row)]);
  return v;
}

WhatIfValue what_if_default(const LessonWhatIf& w) {
  WhatIfValue v;
  v.window = std::max<int64_t>(1, w.window < w.k ? w.window - 1 : std::min<int64_t>(2, w.k - 1));
  v.scale_factor = w.scale_factor == 3.0 ? 1.0 : 3.0;
  v.p2c_index = w.p2c_index == deberta::P2CIndex::Code ? deberta::P2CIndex::Paper : deberta::P2CIndex::Code;
  return v;
}

deberta::Ablation what_if_ablation(const deberta::Ablation& base, const LessonWhatIf& w, const WhatIfValue& v) {
  deberta::Ablation a = base;
  switch (w.knob) {
    case WhatIfKnob::Span: a.max_relative_positions = v.window; break;
    case WhatIfKnob::Scale:
      a.scale_mode = deberta::ScaleMode::Fixed;
      a.scale_factor = v.scale_factor;
      break;
    case WhatIfKnob::P2CIndex: a.p2c_index = v.p2c_index; break;
    case WhatIfKnob::None: break;
  }
  return a;
}

namespace {

/// The step's own number (w.number) in a run that holds layer `w.layer` at TraceLevel::Full where
/// the number needs term maps; NaN when the run lacks it.
double what_if_number(const LessonWhatIf& w, const deberta::ForwardTrace& t) {
  const deberta::SequenceContext& c = t.context;
  const int64_t n = static_cast<int64_t>(t.inputs.size());
  const bool cell = w.query >= 0 && w.query < n && w.key >= 0 && w.key < n;
  switch (w.number) {
    case WhatIfNumber::None: break;
    case WhatIfNumber::C2PRow:
      if (cell && c.c2p_row.size()) return static_cast<double>(c.c2p_row(w.query, w.key));
      break;
    case WhatIfNumber::P2CRow:
      if (cell && c.p2c_row.size()) return static_cast<double>(c.p2c_row(w.query, w.key));
      break;
    case WhatIfNumber::Scale: return c.attention.scale;
    case WhatIfNumber::ScaledC2P:
    case WhatIfNumber::ScoreGap: {
      if (!cell || w.layer < 0 || w.layer >= static_cast<int>(t.layers.size())) break;
      const deberta::AttentionTrace& a = t.layers[static_cast<size_t>(w.layer)].attention;
      if (w.number == WhatIfNumber::ScaledC2P) {
        const auto& m = a.terms[deberta::Term::c2p];
        if (w.head < static_cast<int>(m.size()) && m[static_cast<size_t>(w.head)].size()) return m[static_cast<size_t>(w.head)](w.query, w.key);
      } else if (w.head < static_cast<int>(a.logits.size()) && a.logits[static_cast<size_t>(w.head)].size() && w.key2 >= 0 &&
                 w.key2 < n) {
        const deberta::Matrix& l = a.logits[static_cast<size_t>(w.head)];
        return l(w.query, w.key) - l(w.query, w.key2);
      }
      break;
    }
  }
  return NAN;
}

/// The top 3 at `mask` from a run's decoder output (the EMD's when it ran).
std::vector<deberta::TokenScore> top3(const deberta::Model& model, const deberta::ForwardTrace& t, int mask) {
  const std::vector<deberta::MaskPrediction> p = deberta::predict_from_states(model, t.decoder_output(), {mask}, 3);
  return p.empty() ? std::vector<deberta::TokenScore>{} : p.front().top;
}

}  // namespace

WhatIfRow what_if_row(const deberta::Model& model, const deberta::ForwardTrace& run, const LessonWhatIf& w,
                      const WhatIfValue& v, const deberta::ForwardTrace* full) {
  if (w.knob == WhatIfKnob::None) throw std::invalid_argument(tr("this step has no control"));
  if (w.layer < 0 || w.layer >= static_cast<int>(run.layers.size()))
    throw std::invalid_argument(trf("layer {layer} is not in the run", arg("layer", w.layer)));
  const auto& before = run.layers[static_cast<size_t>(w.layer)].attention.probs;
  if (w.head < 0 || w.head >= static_cast<int>(before.size()) || w.query < 0 || w.query >= before[static_cast<size_t>(w.head)].rows())
    throw std::invalid_argument(
        trf("head {head}, query {i} is not in the run's weights", arg("head", w.head), arg("i", w.query)));
  // Term maps only where the step's number is one; the decoder where the run has it (its [MASK]
  // prediction is the EMD's).
  const bool maps = w.number == WhatIfNumber::ScaledC2P || w.number == WhatIfNumber::ScoreGap;
  const deberta::ForwardTrace changed = deberta::forward(model, run.inputs, what_if_ablation(run.ablation, w, v),
                                                         maps ? deberta::TraceLevel::Full : deberta::TraceLevel::Probs,
                                                         run.emd.has_value());
  const deberta::Matrix& after = changed.layers[static_cast<size_t>(w.layer)].attention.probs[static_cast<size_t>(w.head)];
  WhatIfRow r;
  const deberta::Matrix& b = before[static_cast<size_t>(w.head)];
  r.original.assign(static_cast<size_t>(b.cols()), 0.0);
  r.changed.assign(static_cast<size_t>(b.cols()), 0.0);
  for (int j = 0; j < b.cols(); ++j) {
    r.original[static_cast<size_t>(j)] = b(w.query, j);
    r.changed[static_cast<size_t>(j)] = after(w.query, j);
    const double d = std::fabs(after(w.query, j) - b(w.query, j));
    if (d > r.max_change) r.max_change = d, r.most_changed = j;
  }
  r.favourite_before = argmax_row(b, w.query);
  r.favourite_after = argmax_row(after, w.query);
  r.number_before = what_if_number(w, maps && full ? *full : run);
  r.number_after = what_if_number(w, changed);
  if (w.mask >= 0 && w.mask < static_cast<int>(run.inputs.size())) {
    if (!model.weights.lm_head) {
      // TRANSLATORS: shown where the "what if" would give the [MASK] prediction.
      r.predict_note = tr("this model has no masked-LM head: no prediction at the [MASK]");
    } else {
      r.top_before = top3(model, run, w.mask);
      r.top_after = top3(model, changed, w.mask);
    }
  } else {
    // TRANSLATORS: shown where the "what if" would give the [MASK] prediction.
    r.predict_note = tr("the input has no [MASK]: put one in the text to see the prediction change");
  }
  return r;
}

std::string what_if_number_label(const LessonWhatIf& w) {
  switch (w.number) {
    case WhatIfNumber::None: break;
    // TRANSLATORS: the step's number redrawn by the "what if"; K_r is the paper's symbol.
    case WhatIfNumber::C2PRow: return trf("the row of K_r that c2p reads at i = {i}, j = {j}", arg("i", w.query), arg("j", w.key));
    // TRANSLATORS: the step's number redrawn by the "what if"; Q_r is the paper's symbol.
    case WhatIfNumber::P2CRow: return trf("the row of Q_r that p2c reads at i = {i}, j = {j}", arg("i", w.query), arg("j", w.key));
    // TRANSLATORS: the step's number redrawn by the "what if": c2p times the scale s.
    case WhatIfNumber::ScaledC2P: return trf("s·c2p at i = {i}, j = {j}", arg("i", w.query), arg("j", w.key));
    // TRANSLATORS: the step's number redrawn by the "what if".
    case WhatIfNumber::Scale: return tr("the scale s = 1/√(f·d)");
    // TRANSLATORS: the step's number redrawn by the "what if": the score of key {j} minus the score of key {j2}.
    case WhatIfNumber::ScoreGap:
      return trf("the score of key {j} minus that of key {j2} (query i = {i})", arg("j", w.key), arg("j2", w.key2), arg("i", w.query));
  }
  return "";
}

std::string what_if_value_text(const LessonWhatIf& w, const WhatIfValue& v) {
  char buf[64];
  switch (w.knob) {
    case WhatIfKnob::Span: return "K = " + std::to_string(v.window);
    case WhatIfKnob::Scale: std::snprintf(buf, sizeof buf, "f = %g", v.scale_factor); return buf;
    case WhatIfKnob::P2CIndex: return v.p2c_index == deberta::P2CIndex::Code ? tr("p2c index δ(i, j)") : tr("p2c index δ(j, i)");
    case WhatIfKnob::None: break;
  }
  return "";
}

std::optional<WhatIfValue> parse_what_if(const LessonWhatIf& w, const std::string& spec, std::string* error) {
  const auto fail = [&](const std::string& why) {
    if (error) *error = why;
    return std::optional<WhatIfValue>();
  };
  const char* name = w.knob == WhatIfKnob::Span ? "K" : w.knob == WhatIfKnob::Scale ? "f" : w.knob == WhatIfKnob::P2CIndex ? "p2c" : "";
  if (!*name) return fail("this step has no \"what if\" control");
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || spec.substr(0, eq) != name)
    return fail("this step's control is " + std::string(name) + " (" + name + "=VALUE), not '" + spec + "'");
  const std::string value = spec.substr(eq + 1);
  WhatIfValue v = what_if_default(w);
  char* end = nullptr;
  if (w.knob == WhatIfKnob::Span) {
    const long long K = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || K < 1 || K > w.k) return fail("K must be an integer in [1, " + std::to_string(w.k) + "], not '" + value + "'");
    v.window = K;
  } else if (w.knob == WhatIfKnob::Scale) {
    const double f = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !std::isfinite(f) || f <= 0) return fail("f must be a number > 0, not '" + value + "'");
    v.scale_factor = f;
  } else if (value == "code") {
    v.p2c_index = deberta::P2CIndex::Code;
  } else if (value == "paper") {
    v.p2c_index = deberta::P2CIndex::Paper;
  } else {
    return fail("p2c must be code (δ(i, j)) or paper (δ(j, i)), not '" + value + "'");
  }
  return v;
}

double lesson_mistake_window(const LessonStep& step, double value) {
  if (step.integer) return 0;
  return std::max(0.005 * std::fabs(value), step.tolerance);
}

namespace {

/// Whether `given`, typed with `typed` decimal places, is `value` rounded to those digits, and those
/// digits are at least 2 decimals or 2 significant figures of `value` (a bare "0" rounds too much to
/// name anything). A hair of slack for the binary representation of a half-way rounding.
bool rounds_to(double given, int typed, double value) {
  const double half = 0.5 * std::pow(10.0, -typed);
  const bool enough = typed >= 2 || half <= 0.05 * std::fabs(value) + 1e-12;
  return enough && std::fabs(given - value) <= half * (1 + 1e-9) + 1e-12;
}

}  // namespace

LessonVerdict judge_lesson_answer(const LessonStep& step, const std::string& text) {
  LessonVerdict v;
  int typed = 0;
  const std::optional<double> given = parse_lesson_answer(text, &typed);
  if (!given || !step.applies) return v;
  if (lesson_answer_ok(step, *given)) {
    v.kind = LessonVerdict::Right;
    return v;
  }
  v.kind = LessonVerdict::Wrong;
  // The nearest mistake that the number rounds: within its window, or rounded to the typed digits.
  double best = HUGE_VAL;
  for (const LessonMistake& m : step.mistakes) {
    const double off = std::fabs(*given - m.value);
    const bool holds = step.integer ? off < 1e-9 : off <= lesson_mistake_window(step, m.value) || rounds_to(*given, typed, m.value);
    if (holds && off < best) {
      best = off;
      v.mistake = m.name;
      v.reading = m.reading;
    }
  }
  // The right value with fewer decimals than asked (1.5 for 1.493): say how many to give, unless a
  // mistake is nearer.
  if (!step.integer && typed < step.decimals && rounds_to(*given, typed, step.answer) &&
      std::fabs(*given - step.answer) <= best) {
    v.mistake.clear();
    v.reading = false;
    v.give_decimals = step.decimals;
  }
  return v;
}

std::string LessonVerdict::text() const {
  switch (kind) {
    case Right: return "right";
    case Wrong:
      if (give_decimals > 0) return "wrong: give " + std::to_string(give_decimals) + " decimals";
      if (reading) return "other reading: " + mistake;
      return "wrong: " + (mistake.empty() ? std::string("no known mistake") : mistake);
    case NotAnswer: break;
  }
  return "not an answer";
}

bool lesson_answer_ok(const LessonStep& step, double given) {
  if (!step.applies || !std::isfinite(given)) return false;
  if (step.integer) return std::llround(given) == std::llround(step.answer) && std::fabs(given - step.answer) < 1e-9;
  return std::fabs(given - step.answer) <= step.tolerance;
}

namespace {

/// The text with full-width forms (U+FF01–FF5E, as CJK input methods type digits and signs) turned
/// into their ASCII characters and the ideographic space (U+3000) into a space; the rest kept.
std::string ascii_forms(const std::string& in) {
  std::string out;
  for (size_t p = 0; p < in.size();) {
    const unsigned char c0 = static_cast<unsigned char>(in[p]);
    if (c0 == 0xEF && p + 2 < in.size()) {
      const unsigned cp = ((c0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(in[p + 1]) & 0x3Fu) << 6) |
                          (static_cast<unsigned char>(in[p + 2]) & 0x3Fu);
      if (cp >= 0xFF01 && cp <= 0xFF5E) {
        out += static_cast<char>(cp - 0xFF01 + 0x21);
        p += 3;
        continue;
      }
    }
    if (in.compare(p, 3, "\xE3\x80\x80") == 0) {
      out += ' ';
      p += 3;
      continue;
    }
    out += in[p++];
  }
  return out;
}

}  // namespace

std::optional<double> parse_lesson_answer(const std::string& text, int* decimals) {
  const std::string ascii = ascii_forms(text);
  const size_t first = ascii.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  const size_t last = ascii.find_last_not_of(" \t");
  std::string t = ascii.substr(first, last - first + 1);
  // The lesson prints the typographic minus (U+2212); a student who copies a number keeps it.
  if (t.rfind("\xE2\x88\x92", 0) == 0) t = "-" + t.substr(3);
  // A decimal number: [+-] digits [. digits] [e [+-] digits], at least one digit before the exponent.
  // In a language whose catalogue writes a decimal comma (Italian: 0,25) the comma is the decimal
  // point too; elsewhere "1,5" stays no number (a thousands separator would be read wrong).
  // TRANSLATORS: the decimal separator of numbers in your language: "." or ",".
  const bool decimal_comma = std::strcmp(trc("decimal separator", "."), ",") == 0;
  size_t p = 0, digits = 0, after_point = 0;
  const auto digit = [&](size_t q) { return q < t.size() && t[q] >= '0' && t[q] <= '9'; };
  if (p < t.size() && (t[p] == '+' || t[p] == '-')) ++p;
  while (digit(p)) ++p, ++digits;
  if (p < t.size() && (t[p] == '.' || (t[p] == ',' && decimal_comma))) {
    t[p] = '.';
    ++p;
    while (digit(p)) ++p, ++digits, ++after_point;
  }
  if (digits == 0) return std::nullopt;
  long exponent = 0;
  if (p < t.size() && (t[p] == 'e' || t[p] == 'E')) {
    const size_t e0 = ++p;
    if (p < t.size() && (t[p] == '+' || t[p] == '-')) ++p;
    size_t exp_digits = 0;
    while (digit(p)) ++p, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
    exponent = std::strtol(t.c_str() + e0, nullptr, 10);
  }
  if (p != t.size()) return std::nullopt;
  // strtod reads exactly this grammar (the viewer never sets a locale, so '.' is the decimal point;
  // not std::from_chars: the web edition's libc++ 13 has no floating-point from_chars).
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  if (decimals) *decimals = static_cast<int>(std::clamp<long>(static_cast<long>(after_point) - exponent, -300, 300));
  return v;
}

std::string lesson_tolerance_text(const LessonStep& step) {
  if (step.integer) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "±%.3g", step.tolerance);
  return buf;
}

std::string lesson_answer_text(const LessonStep& step) {
  if (step.integer) return std::to_string(std::llround(step.answer));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::max(step.decimals, 1), step.answer);
  return buf;
}

namespace {
// The prose of deberta::explanation_steps (core/src/analysis/explain.cpp), marked here for the
// catalogues: the core writes them in English, explain_worded looks each up. A template the core
// adds must be added here too (viewer_line_break's test fails on one the catalogues lack).
[[maybe_unused]] const char* const kExplainProse[] = {
    // TRANSLATORS: the Equation tab, "with the numbers" column: v2's log bucket of i − j.
    N_("log bucket {bucket}"),
    // TRANSLATORS: the Equation tab: the ablation's window K (the rows k − K … k + K − 1 read).
    N_("window K = {K}"),
    // TRANSLATORS: the Equation tab: "δ(3,5) = " comes before it; {row} is the table row.
    N_("row {row} of the relative table"),
    N_("(the released v2 code buckets i - j first; eq. 3 clamps the bucket)"),
    // TRANSLATORS: the Equation tab's step column: which row of Q_r p2c reads.
    N_("eq. 4 (p2c index)"),
    N_("paper: p2c reads Q_r[δ(j,i)]"),
    N_("released code: p2c reads Q_r[δ(i,j)] (paper: δ(j,i))"),
    // TRANSLATORS: " = δ(3,5)" follows it.
    N_("p2c reads row {row}"),
    // TRANSLATORS: the Equation tab's step column: the attention scale s.
    N_("scale"),
    // TRANSLATORS: follows "s = 1 / √(f · d), f = ".
    N_("the model's scale factor (the paper's 1/√(3d): §3.1, after eq. 4)"),
    // TRANSLATORS: {term} is c2c, c2p, p2c or p2p; the term's map shows it times the scale s.
    N_("(unscaled; the map holds s · {term})"),
    N_("§3.1 (standard attention)"),
    // TRANSLATORS: inside "p2p = Q_r[p2c row] · K_r[δ(i,j)]": the row of Q_r that p2c reads.
    N_("p2c row"),
    N_("§3.1 (score)"),
    N_("eq. 4 (sum)"),
    N_("(§3.1's A is the scaled score)"),
    // TRANSLATORS: follows "Ã_ij = c2c + c2p + p2c "; {root} is the scale's root (√(3d), …).
    N_("(unscaled; the paper's \"attention score\"); the score the softmax takes is s · Ã_ij = Ã_ij / {root}"),
    N_("(no term active)"),
    // TRANSLATORS: ", weight_ij = 0" follows it.
    N_("query or key is padding: excluded"),
    // TRANSLATORS: " weight_ij = 0 (softmax would give a non-zero value)" follows it.
    N_("head masked:"),
    N_("(softmax would give a non-zero value)"),
    // TRANSLATORS: follows "weights = softmax_j(A_i) ".
    N_("over valid keys (§3.1)"),
    // TRANSLATORS: follows "weights = softmax_j(Ã_i / √(3d)) ".
    N_("over valid keys (eq. 4)"),
};
}  // namespace

std::string explain_worded(const deberta::ExplainLine& line) {
  std::string out;
  for (const deberta::ExplainSegment& seg : line) {
    if (!seg.prose) {
      out += seg.text;
      continue;
    }
    const char* t = tr(seg.text.c_str());
    if (seg.args.empty()) {
      out += t;
      continue;
    }
    fmt::dynamic_format_arg_store<fmt::format_context> store;
    for (const auto& [name, value] : seg.args) store.push_back(fmt::arg(name.c_str(), value));
    try {
      out += fmt::vformat(t, store);
    } catch (const fmt::format_error&) {
      out += deberta::english_text({seg});
    }
  }
  return out;
}

std::string model_card_note(const deberta::Model& m) {
  const std::string& path = m.weights_path;
  const std::string name = "deberta-tiny-multilingual";
  const size_t at = path.rfind(name);
  if (at == std::string::npos || (at > 0 && path[at - 1] != '/') ||
      (at + name.size() < path.size() && path[at + name.size()] != '/'))
    return "";
  // TRANSLATORS: the Model & text panel (and the page), under a model loaded from the folder
  // deberta-tiny-multilingual (keep the name). Figures: notebooks_data/models/deberta-tiny-multilingual/README.md
  // (top-5 on the held-out everyday sentences: ko 0.40, ja 0.41, zh 0.34, it 0.43).
  // xgettext:no-c-format
  return tr("deberta-tiny-multilingual is a teaching model of 5 million parameters. It was trained for about three hours "
            "on one processor thread, on the Korean, Japanese, Chinese, Italian and English text that Debian's packages "
            "ship (software messages, manuals, Debian's documentation, poems and quotations) and on 44,000 everyday "
            "sentences written for the project. It knows little else: no news, no facts about the world, few rare "
            "words. On everyday sentences the right word is among its first five guesses only 34–43 % of the time: "
            "read its attention maps, not its answers.");
}

std::string quantity_word(Quantity q) {
  // TRANSLATORS: the Attention grid's choice of map: the attention logits (scores before the softmax).
  if (q == Quantity::Logits) return trc("quantity", "logits");
  // TRANSLATORS: the Attention grid's choice of map: the attention weights (probabilities after the softmax).
  if (q == Quantity::Probs) return trc("quantity", "probs");
  return quantity_name(q);
}

const char* head_title_worded(deberta::HeadKind kind) {
  switch (kind) {
    // TRANSLATORS: an output head's kind (fills "%s head"); the masked language model's head.
    case deberta::HeadKind::MLM: return trc("head kind", "masked-LM");
    case deberta::HeadKind::RTD: return trc("head kind", "replaced-token detection");
    case deberta::HeadKind::SequenceClassification: return trc("head kind", "sequence classification");
    case deberta::HeadKind::TokenClassification: return trc("head kind", "token classification");
  }
  return deberta::head_title(kind);
}

std::string model_summary(const deberta::ModelConfig& c) {
  std::string terms = "c2c";
  if (c.has_c2p()) terms += "+c2p";
  if (c.has_p2c()) terms += "+p2c";
  // TRANSLATORS: the model in short (the lesson's header). {type} is config.json's model_type
  // (deberta-v2), {version} v1 or v2/v3, {layers} the layers, H the hidden size, {heads} heads of d
  // dimensions, V the vocabulary's size, {terms} the attention terms (c2c+c2p+p2c).
  std::string s = trf("{type} ({version}), {layers} layers, H = {H}, {heads} heads of d = {d}, V = {V}, terms {terms}",
                      arg("type", c.model_type), arg("version", c.version == deberta::ModelVersion::V1 ? "v1" : "v2/v3"),
                      arg("layers", c.num_hidden_layers), arg("H", c.hidden_size), arg("heads", c.num_attention_heads),
                      arg("d", c.d_head()), arg("V", c.vocab_size), arg("terms", terms));
  if (c.relative_attention) {
    s += ", k = " + std::to_string(c.relative_span());
    // TRANSLATORS: after "k = 32": v2's log buckets up to max_relative_positions {max}.
    if (c.log_buckets()) s += " " + trf("log buckets (max {max})", arg("max", c.max_relative_positions));
  }
  if (c.conv_kernel_size > 0) s += ", nGiE conv " + std::to_string(c.conv_kernel_size);
  return s;
}

}  // namespace viewer
