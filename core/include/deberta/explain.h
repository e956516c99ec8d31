// explain.h — the step-by-step walk of eq. 3 and eq. 4 for one attention cell, with the numbers.
//
// `deberta explain` prints it; the viewer's equation panel shows the same steps.
#pragma once

#include "deberta/model.h"

#include <string>
#include <utility>
#include <vector>

namespace deberta {

/// Every number that enters the attention score of query i and key j in one head.
struct CellExplanation {
  int64_t layer = 0, head = 0, i = 0, j = 0;
  int64_t n = 0;                 ///< sequence length
  int64_t rel_pos = 0;           ///< i − j (log-bucketed in v2)
  int64_t rel_pos_raw = 0;       ///< i − j before bucketing
  int64_t k = 0, window = 0;     ///< relative span and the K read
  int64_t c2p_row = 0;           ///< δ(i, j): row of K_r read by c2p
  int64_t p2c_row = 0;           ///< row of Q_r read by p2c (δ(i, j) in code, δ(j, i) in paper mode)
  bool paper_p2c = false;
  double d = 0, scale_factor = 0, scale = 0;  ///< s = 1/√(d · scale_factor)
  /// Per term, the raw dot product: c2c Q_c[i]·K_c[j], c2p Q_c[i]·K_r[δ], p2c K_c[j]·Q_r[δ'],
  /// p2p Q_r[δ']·K_r[δ] (δ = c2p_row, δ' = p2c_row; 0 when the projection is absent).
  PerTerm<double> dot;
  PerTerm<double> scaled;  ///< per term, s × its dot product as the maps hold it (0 when off)
  PerTerm<bool> active;    ///< the terms in the sum
  double logit = 0;
  bool valid = true;             ///< false when i or j is padding (masked)
  bool head_masked = false;
  std::vector<double> logits_row;  ///< the query's logits over all keys
  std::vector<double> probs_row;   ///< the query's probabilities over all keys
  double prob = 0;               ///< probs_row[j]
};

/// Explains cell (i, j) of `head` in encoder `layer` of a full trace.
/// Errors: a trace not at TraceLevel::Full, indices out of range.
CellExplanation explain_cell(const Model& model, const ForwardTrace& trace, int64_t layer, int64_t head, int64_t i,
                             int64_t j);

/// A piece of a step's wording: mathematics (symbols and numbers, written alike in every language)
/// or English prose that an interface translates. Prose is a template whose {name} placeholders
/// are filled from `args` (numbers and cells already formatted, e.g. {"row", "30"}); the viewer
/// looks the template up in its catalogues (viewer/panels/panel_equation.cpp lists them all).
struct ExplainSegment {
  std::string text;
  bool prose = false;
  std::vector<std::pair<std::string, std::string>> args;  ///< placeholder name → value (prose only)
};
/// A line of segments, read in order.
using ExplainLine = std::vector<ExplainSegment>;

/// `line` in English: the segments concatenated, each prose template's placeholders filled.
/// Errors: none (a placeholder without its argument stays as written).
std::string english_text(const ExplainLine& line);

/// What a step of the walk computes.
enum class ExplainStepKind { RelativePosition, P2CIndex, Scale, C2C, C2P, P2C, P2P, Sum, Softmax };

/// One step of the walk: the paper's equation label, the formula, the numbers — as English text
/// (what `deberta explain` prints) and as the same text in segments (`*_parts`, english_text of
/// each is the string beside it), for an interface to word in its language.
struct ExplainStep {
  std::string equation;  ///< e.g. "eq. 3", "eq. 4 (c2p)"
  std::string formula;   ///< e.g. "δ(i,j) = clamp(i − j + k, 0, 2k − 1)"
  std::string numbers;   ///< e.g. "δ(3,5) = clamp(−2 + 4, 0, 7) = 2"
  ExplainLine equation_parts, formula_parts, numbers_parts;
  ExplainStepKind kind = ExplainStepKind::Sum;
};

/// The steps of the walk-through in reading order (eq. 3's δ, the p2c row, the scale, each active
/// term of eq. 4 / eq. 2, Ã's sum, the softmax; §3.1's standard attention when only c2c runs at
/// s = 1/√d), each in English and in segments. Errors: none.
std::vector<ExplainStep> explanation_steps(const CellExplanation& e);

/// The denominator of the attention scale as the paper writes it, for a model whose scale is
/// s = 1/√(d · scale_factor): "√(3d)" for factor 3 (eq. 4, §3.1: "we apply a scaling factor of
/// 1/√(3d) on Ã"), "√(2d)" for a model with one position term, "√d" for factor 1 (the standard
/// attention of §3.1), "√(2.5d)" for a fixed non-integer factor (`--scale-factor 2.5`). Every label
/// of the CLI and the viewer that names the scale is made here, from the model's own factor.
/// Errors: none (a non-positive or non-finite factor is written as it is, e.g. "√(0d)").
std::string scale_root(double scale_factor);

/// The walk-through as plain text, one step per line group (what `deberta explain` prints).
std::string format_explanation(const CellExplanation& e, const std::vector<std::string>& token_names = {});

}  // namespace deberta
