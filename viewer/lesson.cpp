// lesson.cpp — the lesson's steps, built from one traced forward pass (see lesson.h).
//
// Each step picks its cell from the input's length (so it works on any model and sentence),
// asks one question, and reads the answer from the trace or computes it with the core's own
// equation functions. Steps that a model or run cannot show (no buckets, no p2c, no EMD, a masked
// head) say why instead of asking.
#include "lesson.h"

#include "deberta/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

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

std::string integer(int64_t v) { return std::to_string(v); }

struct Ctx {
  const LessonInput& in;
  const deberta::ModelConfig& c;
  const deberta::ForwardTrace& t;  ///< the run: hidden states, context
  const deberta::ForwardTrace& f;  ///< the run at Full: the selected layer and layer 0
  int N, L, H, layer, head;

  std::string tok(int p) const {
    const std::string name = p >= 0 && p < static_cast<int>(in.tokens.size()) ? in.tokens[static_cast<size_t>(p)]
                                                                              : "#" + std::to_string(p);
    return "'" + name + "'";
  }
  std::string where() const { return "layer " + std::to_string(layer) + ", head " + std::to_string(head); }
  const deberta::AttentionTrace& att() const { return f.layers[static_cast<size_t>(layer)].attention; }
  const deberta::Matrix* term(const std::vector<deberta::Matrix>& v) const {
    return head < static_cast<int>(v.size()) && v[static_cast<size_t>(head)].size() ? &v[static_cast<size_t>(head)] : nullptr;
  }
  bool masked() const { return t.context.head_mask.count({layer, head}) > 0; }
};

LessonStep skip(LessonStep s, const std::string& why) {
  s.applies = false;
  s.skip_reason = why;
  return s;
}

/// The key query i attends to most (first on ties).
int argmax_row(const deberta::Matrix& m, int i) {
  int best = 0;
  for (int j = 1; j < m.cols(); ++j)
    if (m(i, j) > m(i, best)) best = j;
  return best;
}

}  // namespace

std::vector<LessonStep> build_lesson(const LessonInput& in) {
  if (!in.model || !in.trace) throw std::invalid_argument("lesson: no model or no trace to build the lesson from");
  const deberta::ForwardTrace& t = *in.trace;
  const deberta::ForwardTrace& f = in.full ? *in.full : t;
  if (f.level != deberta::TraceLevel::Full)
    throw std::invalid_argument("lesson: the trace must be TraceLevel::Full (it has no c2c/c2p/p2c maps)");
  if (t.inputs.size() < 1 || t.layers.empty()) throw std::invalid_argument("lesson: the trace has no tokens or no layers");
  const auto& c = in.model->config;
  Ctx x{in, c, t, f, static_cast<int>(t.inputs.size()), static_cast<int>(t.layers.size()),
        static_cast<int>(c.num_attention_heads), 0, 0};
  x.layer = std::clamp(in.layer, 0, x.L - 1);
  x.head = std::clamp(in.head, 0, x.H - 1);
  for (int l : {x.layer, 0})
    if (static_cast<int>(f.layers.size()) <= l || f.layers[static_cast<size_t>(l)].attention.logits.empty())
      throw std::invalid_argument("lesson: the full trace lacks layer " + std::to_string(l) + " (materialize it first)");
  const int N = x.N;
  const auto& ctx = t.context;
  const auto& a = x.att();
  const deberta::Matrix& probs = a.probs[static_cast<size_t>(x.head)];
  const deberta::Matrix& logits = a.logits[static_cast<size_t>(x.head)];
  const int64_t k = ctx.attention.k;
  std::vector<LessonStep> steps;

  // The query most steps look at: the middle token; its favourite key.
  const int qi = N / 2;
  const int qj = argmax_row(probs, qi);

  // ---- 1. eq. 1: attention is a softmax over keys
  {
    LessonStep s;
    s.title = "1. Attention weights (eq. 1)";
    s.equation = "A = softmax(Q Kᵀ / √d),   H_out = A V";
    s.text = "Each token (a query, row i) spreads one unit of attention over all tokens (keys, columns j): row i of A is a "
             "softmax, so it is non-negative and sums to 1. DeBERTa keeps this shape; it only changes how the scores "
             "Ã = Q Kᵀ are made. The Head-detail tab shows A as the 'softmax A' map.";
    s.show = {"head", x.layer, x.head, qi, qj, 0, "probs"};
    if (x.masked()) {
      steps.push_back(skip(s, "head " + std::to_string(x.head) + " of layer " + std::to_string(x.layer) +
                                  " is masked in this run: its probabilities are all 0. Unmask it or pick another head."));
    } else {
      s.question = "In " + x.where() + ", which key j does query i = " + std::to_string(qi) + " " + x.tok(qi) +
                   " attend to most (the largest A_ij)? Type j.";
      s.answer = qj;
      s.integer = true;
      s.explanation = "A[" + std::to_string(qi) + ", " + std::to_string(qj) + "] = " + num(probs(qi, qj)) + " is the largest of row " +
                      std::to_string(qi) + " (key " + x.tok(qj) + "); the row sums to " + num(probs.row(qi).sum(), 6) + ".";
      steps.push_back(s);
    }
  }

  // ---- 2. eq. 2: the score is a sum of disentangled terms
  {
    LessonStep s;
    s.title = "2. Content and position, disentangled (eq. 2)";
    s.equation = "Ã_ij = H_i H_jᵀ + H_i P_j|iᵀ + P_i|j H_jᵀ (+ P_i|j P_j|iᵀ)\n      =  c2c   +   c2p    +   p2c     (+ p2p)";
    s.text = "DeBERTa represents each token by two vectors, its content H_i and its relative position P_i|j. The score of a "
             "pair is the sum of content-to-content, content-to-position and position-to-content terms; the paper drops "
             "position-to-position. Each term is a map of its own in Head detail; 'sum Ã' is their sum.";
    s.show = {"head", x.layer, x.head, qi, qj, 0, "logits"};
    const deberta::Matrix *c2c = x.term(a.c2c), *c2p = x.term(a.c2p), *p2c = x.term(a.p2c), *p2p = x.term(a.p2p);
    std::string parts, sum_text;
    double sum = 0;
    auto add = [&](const char* name, const deberta::Matrix* m) {
      if (!m) return;
      const double v = (*m)(qi, qj);
      parts += std::string(parts.empty() ? "" : ", ") + name + " = " + num(v);
      sum_text += std::string(sum_text.empty() ? "" : " + ") + "(" + num(v) + ")";
      sum += v;
    };
    add("c2c", c2c), add("c2p", c2p), add("p2c", p2c), add("p2p", p2p);
    if (parts.empty()) {
      steps.push_back(skip(s, "every term is switched off in this run: there is no score to decompose."));
    } else {
      s.question = "In " + x.where() + ", cell i = " + std::to_string(qi) + ", j = " + std::to_string(qj) + " has " + parts +
                   ". What is its score Ã_ij (the logit before the softmax)?";
      s.answer = logits(qi, qj);
      s.tolerance = 6e-4;
      s.explanation = "Ã = " + sum_text + " = " + num(logits(qi, qj)) + " (the trace's logit; the terms above add up to " +
                      num(sum) + "). Every term is already multiplied by the scale s of step 9.";
      steps.push_back(s);
    }
  }

  // ---- 3. eq. 3: relative distance inside the window
  const int ki = std::min(5, N - 1), kj = std::max(ki - 2, 0);
  {
    LessonStep s;
    s.title = "3. Relative distance δ(i, j) (eq. 3)";
    s.equation = "δ(i, j) = 0 if i − j ≤ −k;   2k − 1 if i − j ≥ k;   i − j + k otherwise";
    s.text = "Positions enter as distances, not as absolute indices. δ(i, j) turns the distance i − j into a row of the "
             "relative table P (2k rows): distances inside (−k, k) each get their own row, i − j + k. The "
             "Relative-distance tab draws δ for any k.";
    s.show = {"distance", x.layer, x.head, ki, kj, 4, "delta"};
    if (!c.relative_attention) {
      steps.push_back(skip(s, "this model has no relative attention (relative_attention = false): there is no δ."));
    } else if (N < 2) {
      steps.push_back(skip(s, "the input has one token: there is no distance to measure. Type a longer text."));
    } else {
      const int64_t d = deberta::relative_distance(ki, kj, 4);
      s.question = "With k = 4, which row δ(i, j) of the relative table does c2p read for i = " + std::to_string(ki) +
                   ", j = " + std::to_string(kj) + "?";
      s.answer = static_cast<double>(d);
      s.integer = true;
      s.explanation = "i − j = " + integer(ki - kj) + " lies inside (−4, 4), so δ = i − j + k = " + integer(ki - kj) + " + 4 = " +
                      integer(d) + " (deberta::relative_distance).";
      steps.push_back(s);
    }
  }

  // ---- 4. eq. 3: the clamp
  {
    LessonStep s;
    const int ci = N >= 8 ? 3 : 0, cj = N >= 8 ? 7 : N - 1;
    const int kk = N >= 8 ? 4 : std::max(1, N - 1);
    s.title = "4. Far away is all the same: the clamp of eq. 3";
    s.equation = "δ(i, j) = 0 if i − j ≤ −k,   2k − 1 if i − j ≥ k";
    s.text = "Beyond k tokens the distance stops mattering: every key k or more to the right of the query shares row 0, "
             "every key k or more to the left shares row 2k − 1. So the table needs only 2k rows, whatever the length of "
             "the text.";
    s.show = {"distance", x.layer, x.head, ci, cj, kk, "delta"};
    if (!c.relative_attention) {
      steps.push_back(skip(s, "this model has no relative attention (relative_attention = false): there is no δ."));
    } else if (N < 2) {
      steps.push_back(skip(s, "the input has one token: there is no distance to clamp. Type a longer text."));
    } else {
      const int64_t d = deberta::relative_distance(ci, cj, kk);
      s.question = "Which row of K_r does c2p read for i = " + std::to_string(ci) + ", j = " + std::to_string(cj) +
                   " with k = " + std::to_string(kk) + "?";
      s.answer = static_cast<double>(d);
      s.integer = true;
      s.explanation = "i − j = " + integer(ci - cj) + " ≤ −k = −" + integer(kk) + ", so δ is clamped to " + integer(d) +
                      ". Key " + std::to_string(cj) + " " + x.tok(cj) + " reads the same row as any key further right.";
      steps.push_back(s);
    }
  }

  // ---- 5. DeBERTa-v2 log buckets
  const int bi = N - 1, bj = 0;
  {
    LessonStep s;
    s.title = "5. Log buckets (DeBERTa-v2)";
    s.equation = "bucket(r) = r if |r| ≤ b/2,  else sign(r)·(ceil(log(|r|/(b/2)) / log((m−1)/(b/2)) · (b/2 − 1)) + b/2)";
    s.text = "v2 and v3 keep nearby distances exact and squeeze far ones logarithmically before eq. 3: with "
             "position_buckets b and max_relative_positions m, distances up to b/2 keep their own row, distances between "
             "b/2 and m share rows, farther ones more coarsely. The curve under the Relative-distance maps shows it.";
    s.show = {"distance", x.layer, x.head, bi, bj, 0, "rel_pos"};
    const int64_t mid = c.position_buckets / 2;
    if (!c.relative_attention || !c.log_buckets()) {
      steps.push_back(skip(s, c.relative_attention ? "this model does not bucket its relative positions (v1, or "
                                                     "position_buckets ≤ 0): i − j is used as it is."
                                                   : "this model has no relative attention: there is nothing to bucket."));
    } else if (N - 1 <= mid) {
      steps.push_back(skip(s, "the input is too short to reach the buckets: its longest distance is N − 1 = " +
                                  integer(N - 1) + ", and distances up to b/2 = " + integer(mid) +
                                  " stay exact. Type a text of more than " + integer(mid + 1) + " tokens."));
    } else {
      const int64_t r = bi - bj;
      const int64_t b = ctx.rel_pos(bi, bj);
      s.question = "This model has b = " + integer(c.position_buckets) + ", m = " + integer(c.max_relative_positions) +
                   ". For i = " + std::to_string(bi) + " " + x.tok(bi) + " and j = 0 " + x.tok(0) + " (i − j = " + integer(r) +
                   "), which relative position does the model use instead of " + integer(r) + "?";
      s.answer = static_cast<double>(b);
      s.integer = true;
      const double lg = std::log(static_cast<double>(r) / static_cast<double>(mid)) /
                        std::log(static_cast<double>(c.max_relative_positions - 1) / static_cast<double>(mid));
      s.explanation = "|r| = " + integer(r) + " > b/2 = " + integer(mid) + ": ceil(log(" + integer(r) + "/" + integer(mid) + ") / log(" +
                      integer(c.max_relative_positions - 1) + "/" + integer(mid) + ") · " + integer(mid - 1) + ") + " +
                      integer(mid) + " = ceil(" + num(lg * static_cast<double>(mid - 1), 3) + ") + " + integer(mid) + " = " +
                      integer(b) + " (the trace's rel_pos; deberta::log_bucket_position gives " +
                      integer(deberta::log_bucket_position(r, c.position_buckets, c.max_relative_positions)) + ").";
      steps.push_back(s);
    }
  }

  // ---- 6. the table row the model really reads
  const int ri = std::min(1, N - 1), rj = N - 1;
  {
    LessonStep s;
    s.title = "6. The row this model reads";
    s.equation = "row(i, j) = clamp(rel_pos(i, j) + k, 0, 2k − 1)";
    s.text = "Putting steps 3–5 together: the model takes i − j (bucketed in v2), adds its own k and clamps to the 2k "
             "rows of its table. This is the right-hand map of the Relative-distance tab. An ablation with a window "
             "K < k clamps the position to [−K, K − 1] first.";
    s.show = {"distance", x.layer, x.head, ri, rj, 0, "rows"};
    if (!c.relative_attention) {
      steps.push_back(skip(s, "this model has no relative attention: it reads no table rows."));
    } else {
      const int64_t rel = ctx.rel_pos(ri, rj), row = ctx.c2p_row(ri, rj);
      s.question = "This model has k = " + integer(k) + " (a table of " + integer(2 * k) + " rows)" +
                   (ctx.attention.window != k ? ", read through a window K = " + integer(ctx.attention.window) : std::string()) +
                   ". Which row of K_r does c2p read for i = " + std::to_string(ri) + ", j = " + std::to_string(rj) + "?";
      s.answer = static_cast<double>(row);
      s.integer = true;
      s.explanation = "i − j = " + integer(ri - rj) + (c.log_buckets() ? " is bucketed to " + integer(rel) : std::string()) +
                      "; " + integer(rel) + " + k = " + integer(rel + k) + ", clamped to [0, " + integer(2 * k - 1) +
                      "]" + (ctx.attention.window != k ? " (after the window K)" : std::string()) + ": row " + integer(row) + ".";
      steps.push_back(s);
    }
  }

  // ---- 7. eq. 4, the c2p term
  {
    LessonStep s;
    s.title = "7. Content-to-position (eq. 4, c2p)";
    s.equation = "c2p(i, j) = s · Q_c[i] · K_r[δ(i, j)]ᵀ,   Q_c = H W_q,c,   K_r = P W_k,r";
    s.text = "c2p asks: given what token i says, how interesting is a key at this distance? The query's content "
             "vector meets the projected table row picked by δ. The reference computes all N × 2k products Q_c K_rᵀ at "
             "once and then gathers the needed row for each pair (the paper's §3.1.1).";
    s.show = {"equation", x.layer, x.head, qi, qj, 0, "c2p"};
    const deberta::Matrix* c2p = x.term(a.c2p);
    if (!c2p) {
      steps.push_back(skip(s, "c2p is off in this run (the model was trained without it, or the ablation switched it off)."));
    } else {
      const deberta::CellExplanation e = deberta::explain_cell(*in.model, f, x.layer, x.head, qi, qj);
      s.question = "In " + x.where() + ", cell i = " + std::to_string(qi) + ", j = " + std::to_string(qj) + " reads row " +
                   integer(e.c2p_row) + ": the dot product Q_c[i] · K_r[" + integer(e.c2p_row) + "] = " + num(e.q_kr, 6) +
                   ", and the scale s = " + num(e.scale, 6) + ". What is c2p(i, j)?";
      s.answer = (*c2p)(qi, qj);
      s.tolerance = 1e-3 * std::fabs(s.answer) + 2e-4;
      s.explanation = "c2p = s · (Q_c[i] · K_r[δ]) = " + num(e.scale, 6) + " × " + num(e.q_kr, 6) + " = " + num(s.answer, 6) +
                      " (the trace's c2p map).";
      steps.push_back(s);
    }
  }

  // ---- 8. eq. 4, the p2c term and its index
  {
    LessonStep s;
    s.title = "8. Position-to-content and its index (eq. 4, p2c)";
    s.equation = "p2c(i, j) = s · K_c[j] · Q_r[δ(j, i)]ᵀ   (paper)      s · K_c[j] · Q_r[δ(i, j)]ᵀ   (released code)";
    s.text = "p2c asks the mirror question: given what key j says, how interesting is a query at this distance? The paper "
             "indexes the table with δ(j, i); the released code passes the same rows as c2p, δ(i, j) "
             "(docs/paper-vs-code.md). The ablation panel can switch between the two.";
    s.show = {"equation", x.layer, x.head, ki, kj, 0, "p2c"};
    if (!x.term(a.p2c)) {
      steps.push_back(skip(s, "p2c is off in this run (the model was trained without it, or the ablation switched it off)."));
    } else if (N < 2) {
      steps.push_back(skip(s, "the input has one token: δ(i, j) and δ(j, i) are the same. Type a longer text."));
    } else {
      const bool paper = ctx.attention.p2c_index == deberta::P2CIndex::Paper;
      const int64_t row = ctx.p2c_row(ki, kj);
      s.question = "This run uses the " + std::string(paper ? "paper's index δ(j, i)" : "released code's index δ(i, j)") +
                   " and k = " + integer(k) + ". Which row of Q_r does p2c read for i = " + std::to_string(ki) + ", j = " +
                   std::to_string(kj) + "?";
      s.answer = static_cast<double>(row);
      s.integer = true;
      s.explanation = "rows for (i, j) = (" + std::to_string(ki) + ", " + std::to_string(kj) + "): δ(i, j) = " +
                      integer(ctx.c2p_row(ki, kj)) + ", δ(j, i) = " + integer(ctx.c2p_row(kj, ki)) + "; this run reads row " +
                      integer(row) + (paper ? " (paper)." : " (code: the same row as c2p).");
      steps.push_back(s);
    }
  }

  // ---- 9. the scale
  {
    LessonStep s;
    s.title = "9. The scale s (eq. 4)";
    s.equation = "s = 1 / √(d · f),   f = 1 + number of position terms (the paper writes √(3d))";
    s.text = "Adding terms adds variance: with c2c, c2p and p2c the sum of three dot products of width d would be √3 "
             "times larger than one. DeBERTa divides by √(3d) instead of BERT's √d. The released code counts the "
             "position terms the model uses.";
    s.show = {"equation", x.layer, x.head, qi, qj, 0, "logits"};
    const double d = static_cast<double>(c.d_head());
    s.question = "This model has heads of width d = " + integer(c.d_head()) + " and its scale factor is f = " +
                 num(ctx.attention.scale_factor, 0) + ". What is s?";
    s.answer = ctx.attention.scale;
    s.tolerance = 5e-4;
    s.explanation = "s = 1/√(" + integer(c.d_head()) + " × " + num(ctx.attention.scale_factor, 0) + ") = 1/√" +
                    num(d * ctx.attention.scale_factor, 0) + " = " + num(ctx.attention.scale, 6) + ".";
    steps.push_back(s);
  }

  // ---- 10. the softmax: ratios are exponentials of differences
  {
    LessonStep s;
    s.title = "10. The softmax in one line";
    s.equation = "A_ij = exp(Ã_ij) / ∑_j' exp(Ã_ij'),   so   A_ij / A_ij' = exp(Ã_ij − Ã_ij')";
    s.text = "Only differences of scores matter within a row: adding a constant to every score of query i changes "
             "nothing. A key whose score is larger by 1 gets e ≈ 2.72 times more attention.";
    // The favourite key against the key of median probability.
    std::vector<int> order(static_cast<size_t>(N));
    for (int j = 0; j < N; ++j) order[static_cast<size_t>(j)] = j;
    std::sort(order.begin(), order.end(), [&](int u, int v) { return probs(qi, u) > probs(qi, v); });
    const int j2 = order[static_cast<size_t>(N / 2)];
    s.show = {"equation", x.layer, x.head, qi, j2, 0, "probs"};
    if (x.masked()) {
      steps.push_back(skip(s, "this head is masked in this run: its probabilities are all 0."));
    } else if (N < 2 || j2 == qj || !(probs(qi, j2) > 0)) {
      steps.push_back(skip(s, "query " + std::to_string(qi) + " has no second key with a positive probability to compare."));
    } else {
      s.question = "In " + x.where() + ", query i = " + std::to_string(qi) + " gives key " + std::to_string(qj) + " " + x.tok(qj) +
                   " A = " + num(probs(qi, qj), 6) + " and key " + std::to_string(j2) + " " + x.tok(j2) + " A = " +
                   num(probs(qi, j2), 6) + ". By how much is the score Ã of key " + std::to_string(qj) + " larger?";
      s.answer = logits(qi, qj) - logits(qi, j2);
      s.tolerance = 2e-3;
      s.explanation = "ln(" + num(probs(qi, qj), 6) + " / " + num(probs(qi, j2), 6) + ") = " +
                      num(std::log(probs(qi, qj) / probs(qi, j2)), 5) + "; the trace's scores: " + num(logits(qi, qj)) + " − (" +
                      num(logits(qi, j2)) + ") = " + num(s.answer, 5) + ".";
      steps.push_back(s);
    }
  }

  // ---- 11. the Enhanced Mask Decoder
  {
    LessonStep s;
    s.title = "11. The Enhanced Mask Decoder (§3.2)";
    s.equation = "I_0 = H + P,   I_{t+1} = layer_{L−1}(query I_t, key/value H),   two passes";
    s.text = "In 'a new store opened beside the new mall' with 'store' and 'mall' masked, both masks sit in the same "
             "local context (new ___): relative positions alone cannot tell which one is the subject. DeBERTa adds the "
             "absolute positions P only at the very end, just before the softmax layer that predicts the masked tokens: "
             "the EMD re-runs the last layer with I = H + P as query and the encoder's H as key and value.";
    s.show = {"predictions", x.layer, x.head, qi, qj, 0, ""};
    if (!in.emd) {
      steps.push_back(skip(s, in.emd_note.empty() ? "this model has no Enhanced Mask Decoder." : in.emd_note));
    } else {
      int found = -1;
      for (int l = 0; l < x.L && found < 0; ++l) {
        const deberta::Matrix& out = t.layers[static_cast<size_t>(l)].output;
        if (out.rows() == in.emd->kv_states.rows() && out.cols() == in.emd->kv_states.cols() &&
            (out - in.emd->kv_states).cwiseAbs().maxCoeff() == 0.0)
          found = l;
      }
      if (found < 0) {
        steps.push_back(skip(s, "the EMD's key/value input is not the output of an encoder layer of this run "
                                "(the EMD was computed under another ablation)."));
      } else {
        s.question = "This model has " + integer(x.L) + " encoder layers (0 … " + integer(x.L - 1) + "). The EMD's H (key and value of "
                     "both passes) is the output of which layer?";
        s.answer = found;
        s.integer = true;
        s.explanation = "H is the output of layer " + integer(found) + " = L − 2: the EMD's two passes use the weights of the last "
                        "layer (" + integer(x.L - 1) + ") in its place, so they replace that layer rather than add one. "
                        "(Found by matching the EMD trace's kv_states against every layer output.)";
        s.show.layer = x.L - 1;
        steps.push_back(s);
      }
    }
  }

  // ---- 12. ablations
  {
    LessonStep s;
    s.title = "12. Ablations: take a term away";
    s.equation = "Ã_ij without c2p = c2c + p2c (+ p2p)";
    s.text = "The paper's Table 4 retrains without each term; the viewer can also switch a term off at inference (the "
             "Ablations panel). In layer 0 the input does not depend on the attention, so removing c2p there changes the "
             "score by exactly −c2p; later layers then see different inputs and everything moves.";
    s.show = {"head", 0, x.head, qi, qj, 0, "logits"};
    const deberta::AttentionTrace& a0 = f.layers[0].attention;
    const bool has = x.head < static_cast<int>(a0.c2p.size()) && a0.c2p[static_cast<size_t>(x.head)].size();
    if (!has) {
      steps.push_back(skip(s, "c2p is off in this run already (model or ablation). Reset the ablation to ask this question."));
    } else {
      // The key whose c2p term matters most for the query: the largest |c2p| of its row in layer 0.
      const deberta::Matrix& c2p0 = a0.c2p[static_cast<size_t>(x.head)];
      int kj0 = 0;
      for (int j = 1; j < N; ++j)
        if (std::fabs(c2p0(qi, j)) > std::fabs(c2p0(qi, kj0))) kj0 = j;
      s.show.j = kj0;
      const double lg = a0.logits[static_cast<size_t>(x.head)](qi, kj0), c2p = c2p0(qi, kj0);
      s.question = "In layer 0, head " + std::to_string(x.head) + ", cell i = " + std::to_string(qi) + ", j = " + std::to_string(kj0) +
                   " has Ã = " + num(lg) + " and c2p = " + num(c2p) + ". What is Ã there when c2p is switched off?";
      s.answer = lg - c2p;
      s.tolerance = 3e-4;
      s.explanation = "Ã − c2p = " + num(lg) + " − (" + num(c2p) + ") = " + num(s.answer) +
                      ". Switch c2p off in the Ablations panel and read the 'sum Ã' of this cell in layer 0 to see it.";
      steps.push_back(s);
    }
  }
  return steps;
}

bool lesson_answer_ok(const LessonStep& step, double given) {
  if (!step.applies || !std::isfinite(given)) return false;
  if (step.integer) return std::llround(given) == std::llround(step.answer) && std::fabs(given - step.answer) < 1e-9;
  return std::fabs(given - step.answer) <= step.tolerance;
}

std::optional<double> parse_lesson_answer(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  const size_t last = text.find_last_not_of(" \t");
  const std::string t = text.substr(first, last - first + 1);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
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
  return num(step.answer, 4);
}

}  // namespace viewer
