// paper_quotes.h — the paper beside the numbers (issue 42, item 5): the sentence or display of
// arXiv 2006.03654 v6 that each lesson step and each Equation-tab row computes, with its section and
// equation number as printed in v6, as The Annotated Transformer puts the paper's text beside its code.
//
// One table (`kPaperQuotes`, indexed by `Quote`) holds every passage the viewer shows; the lesson
// (lesson.cpp) and the Equation tab (panel_equation.cpp, through `quote_for_explain_step`) pick
// from it. The wording was checked against the v6 text (its §2.2, §3.1, §3.1.1, §3.2, §5.2.1 and appendix
// A.5, A.8, A.9); displays are transliterated to plain text (subscripts with _, superscripts with ^,
// the paper's transpose as ᵀ, its underbrace labels (a)–(c) after their terms). A passage that is
// not the paper's wording is marked `paraphrase` and shown as such, never in quotation marks.
//
// Header-only and GL-free (core types only), so the desktop and web builds and the lesson tests use
// it without a new source file.
#pragma once

#include "i18n/i18n.h"

#include "deberta/explain.h"

#include <cstddef>
#include <string>

namespace viewer {

/// One passage of the paper.
struct PaperQuote {
  const char* section = "";   ///< as printed in v6: "§3.1", "§3.1.1", "Appendix A.8"
  const char* equation = "";  ///< "eq. (4)", "unnumbered display", "Table 4"; "" when none
  const char* text = "";      ///< the paper's words or display (plain text, UTF-8)
  bool paraphrase = false;    ///< true: our summary, not the paper's wording

  /// Where it is: "§3.1, eq. (4)", or the section alone when there is no equation.
  /// The equation part is drawn in the reader's language ("unnumbered display", "after eq. (4)"; i18n.h).
  std::string cite() const { return *equation ? std::string(section) + ", " + tr(equation) : std::string(section); }
};

/// The passages, one per entry of `kPaperQuotes` (same order).
enum class Quote {
  StandardAttention,  ///< §3.1, the unnumbered display of standard self-attention
  FourTerms,          ///< §3.1, eq. (2): the score as four components
  P2PDropped,         ///< §3.1: the position-to-position term is removed from eq. 2
  Eq4Scores,          ///< §3.1, eq. (4): Ã as terms (a), (b), (c)
  Eq4Softmax,         ///< §3.1, eq. (4): H_o = softmax(Ã/√(3d)) V_c
  ScoreElement,       ///< §3.1, eq. (4): "Ã_i,j is the element of attention matrix Ã …"
  C2CRows,            ///< §3.1, eq. (4), term (a): the rows of Q_c and K_c
  C2PRow,             ///< §3.1, eq. (4), term (b): the δ(i, j)-th row of K_r
  P2CRow,             ///< §3.1, eq. (4), term (c): the δ(j, i)-th row of Q_r
  P2CIndex,           ///< §3.1, eq. (4): "Note that we use δ(j, i) rather than δ(i, j) here."
  Scale,              ///< §3.1, after eq. (4): the scaling factor 1/√(3d)
  Eq3,                ///< §3.1, eq. (3): δ(i, j)
  Truncate,           ///< Appendix A.5: the maximum relative distance truncated to k
  K512,               ///< §3.1.1: k = 512 for pre-training
  NoBuckets,          ///< paraphrase: the paper has no log buckets
  DeltaMatrix,        ///< §3.1.1: the relative position matrix δ[i, j] = δ(i, j)
  EMDInput,           ///< Appendix A.8: "use absolute position embedding as I of the first EMD layer"
  EMDQuery,           ///< Appendix A.9: "added to the hidden state of content as the query vector"
  Ablation,           ///< §5.2.1, Table 4: removing c2p or p2c
  MLMObjective,       ///< §2.2, eq. (1): the masked-LM objective over the masked positions C
  EMDDecode,          ///< §3.2: absolute positions "right after all the Transformer layers but before the softmax layer"
  Count
};

/// The table (checked against the v6 text; see the file comment).
inline const PaperQuote kPaperQuotes[] = {
    {"§3.1", N_("unnumbered display"),
     "Taking single-head attention as an example, the standard self-attention operation (Vaswani et al., 2017) can be "
     "formulated as:   Q = HW_q,  K = HW_k,  V = HW_v,  A = QKᵀ/√d,   H_o = softmax(A)V"},
    {"§3.1", "eq. (2)",
     "The calculation of the cross attention score between tokens i and j can be decomposed into four components as   "
     "A_i,j = {H_i, P_i|j} × {H_j, P_j|i}ᵀ = H_i H_jᵀ + H_i P_j|iᵀ + P_i|j H_jᵀ + P_i|j P_j|iᵀ"},
    {"§3.1", "eq. (2)",
     "Since we use relative position embedding, the position-to-position term does not provide much additional "
     "information and is removed from equation 2 in our implementation."},
    {"§3.1", "eq. (4)",
     "Ã_i,j = Q_i^c K_j^cᵀ (a) + Q_i^c K_δ(i,j)^rᵀ (b) + K_j^c Q_δ(j,i)^rᵀ (c);   (a) content-to-content, "
     "(b) content-to-position, (c) position-to-content"},
    {"§3.1", "eq. (4)", "H_o = softmax(Ã/√(3d)) V_c"},
    {"§3.1", "eq. (4)", "Ã_i,j is the element of attention matrix Ã, representing the attention score from token i to token j."},
    {"§3.1", N_("eq. (4), term (a)"), "Q_i^c is the i-th row of Q_c. K_j^c is the j-th row of K_c."},
    {"§3.1", N_("eq. (4), term (b)"), "K_δ(i,j)^r is the δ(i, j)-th row of K_r with regarding to relative distance δ(i, j)."},
    {"§3.1", N_("eq. (4), term (c)"), "Q_δ(j,i)^r is the δ(j, i)-th row of Q_r with regarding to relative distance δ(j, i)."},
    {"§3.1", "eq. (4)",
     "Note that we use δ(j, i) rather than δ(i, j) here. This is because for a given position i, position-to-content "
     "computes the attention weight of the key content at j with respect to the query position at i, thus the "
     "relative distance is δ(j, i)."},
    {"§3.1", N_("after eq. (4)"),
     "Finally, we apply a scaling factor of 1/√(3d) on Ã. The factor is important for stabilizing model training "
     "(Vaswani et al., 2017), especially for large-scale PLMs."},
    {"§3.1", "eq. (3)",
     "Denote k as the maximum relative distance, δ(i, j) ∈ [0, 2k) as the relative distance from token i to token j, "
     "which is defined as:   δ(i, j) = 0 for i − j ≤ −k;   2k − 1 for i − j ≥ k;   i − j + k others."},
    {"Appendix A.5", "eq. (3)",
     "With relative position bias, we choose to truncate the maximum relative distance to k as in equation 3. Thus in "
     "each layer, each token can attend directly to at most 2(k − 1) tokens and itself."},
    {"§3.1.1", "", "In our experiments, we set the maximum relative distance k to 512 for pre-training."},
    // A paraphrase is ours, not the paper's: it is drawn in the reader's language (quote_widget.h).
    {"§3.1", "eq. (3)",
     N_("The paper has no log buckets: eq. 3 takes i − j itself and clamps it to the 2k rows. The buckets are the "
        "released v2/v3 code's (docs/paper-vs-code.md)."),
     true},
    {"§3.1.1", "eq. (3)", "Let δ be the relative position matrix according to equation 3, i.e., δ[i, j] = δ(i, j)."},
    {"Appendix A.8", "",
     "In our experiment we share the same weight for n=2 layers to reduce the number of parameters and use absolute "
     "position embedding as I of the first EMD layer."},
    {"Appendix A.9", "",
     "… the use of EMD, in which the absolute position embedding is added to the hidden state of content as the query "
     "vector …"},
    {"§5.2.1", N_("Table 4"),
     "Similarly, removing either content-to-position or position-to-content leads to inferior performance in all the "
     "benchmarks."},
    {"§2.2", "eq. (1)",
     "max_θ log p_θ(X|X̃) = max_θ Σ_{i∈C} log p_θ(x̃_i = x_i|X̃)   … where C is the index set of the masked tokens in "
     "the sequence."},
    {"§3.2", "",
     "In DeBERTa, we incorporate them right after all the Transformer layers but before the softmax layer for masked "
     "token prediction, as shown in Figure 2. In this way, DeBERTa captures the relative positions in all the "
     "Transformer layers and only uses absolute positions as complementary information when decoding the masked words."},
};
static_assert(sizeof kPaperQuotes / sizeof kPaperQuotes[0] == static_cast<size_t>(Quote::Count),
              "one passage per Quote");

/// The passage `q`. Errors: none (every `Quote` below `Count` has one).
inline const PaperQuote& paper_quote(Quote q) { return kPaperQuotes[static_cast<size_t>(q)]; }

/// The passage an Equation-tab row (a step of deberta::explanation_steps, keyed by its `equation`
/// label) computes; null for a label this table does not know (the lesson tests fail on it, so a
/// row added to the core's walk-through must be given its passage here). The rows "scale" and
/// "softmax" of ordinary attention (c2c alone at 1/√d, whose formula ends "(§3.1)") cite §3.1's
/// display; of a model with position terms, the scale sentence and eq. 4's softmax.
inline const PaperQuote* quote_for_explain_step(const deberta::ExplainStep& step) {
  const std::string& l = step.equation;
  const std::string tail = "(§3.1)";
  const bool plain = step.formula.size() >= tail.size() &&
                     step.formula.compare(step.formula.size() - tail.size(), tail.size(), tail) == 0;
  if (l == "eq. 3") return &paper_quote(Quote::Eq3);
  if (l == "eq. 4 (p2c index)") return &paper_quote(Quote::P2CIndex);
  if (l == "scale") return &paper_quote(plain ? Quote::StandardAttention : Quote::Scale);
  if (l == "§3.1 (standard attention)" || l == "§3.1 (score)") return &paper_quote(Quote::StandardAttention);
  if (l == "eq. 4 (c2c)") return &paper_quote(Quote::C2CRows);
  if (l == "eq. 4 (c2p)") return &paper_quote(Quote::C2PRow);
  if (l == "eq. 4 (p2c)") return &paper_quote(Quote::P2CRow);
  if (l == "eq. 2 (p2p)") return &paper_quote(Quote::P2PDropped);
  if (l == "eq. 4 (sum)") return &paper_quote(Quote::Eq4Scores);
  if (l == "softmax") return &paper_quote(plain ? Quote::StandardAttention : Quote::Eq4Softmax);
  return nullptr;
}

}  // namespace viewer
