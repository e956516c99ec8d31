// ops.cpp — the backend switch (deberta/backend.h) and the dispatch of each op (ops.h).
#include "backend/ops.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

namespace deberta {

namespace {

// -1: not chosen yet (DEBERTA_BACKEND is read at the first use).
std::atomic<int> g_backend{-1};
// The calling thread's BackendScope, -1 outside any.
thread_local int t_backend = -1;

}  // namespace

const char* backend_name(Backend b) { return b == Backend::Reference ? "reference" : "fast"; }

Backend parse_backend(const std::string& text, const std::string& what) {
  if (text == "fast") return Backend::Fast;
  if (text == "reference") return Backend::Reference;
  throw Error(what + " '" + text + "': expected fast or reference");
}

void set_backend(Backend b) { g_backend.store(static_cast<int>(b)); }

BackendScope::BackendScope(Backend b) : saved_(t_backend) { t_backend = static_cast<int>(b); }
BackendScope::~BackendScope() { t_backend = saved_; }

Backend backend() {
  if (t_backend >= 0) return static_cast<Backend>(t_backend);
  const int chosen = g_backend.load();
  if (chosen >= 0) return static_cast<Backend>(chosen);
  const char* env = std::getenv("DEBERTA_BACKEND");
  const Backend b = env && *env ? parse_backend(env, "DEBERTA_BACKEND") : Backend::Fast;
  int expected = -1;
  g_backend.compare_exchange_strong(expected, static_cast<int>(b));
  return static_cast<Backend>(g_backend.load());
}

namespace ops {

namespace {
bool reference_on() { return backend() == Backend::Reference; }

template <typename M>
std::string shape(const M& m) { return "[" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "]"; }
}  // namespace

void check_product(const Product& p) {
  const StoredMatrix& W = p.layer->weight;
  if (p.x->cols() != W.cols())
    throw Error("linear layer " + shape(W) + " applied to input " + shape(*p.x));
  if (p.layer->bias.size() != 0 && p.layer->bias.size() != W.rows())
    throw Error("linear layer bias has " + std::to_string(p.layer->bias.size()) + " entries for " +
                std::to_string(W.rows()) + " outputs");
  if (p.residual && (p.residual->rows() != p.x->rows() || p.residual->cols() != W.rows()))
    throw Error("residual of shape " + shape(*p.residual) + " does not fit a product of shape [" +
                std::to_string(p.x->rows()) + ", " + std::to_string(W.rows()) + "]");
}

void products(const std::vector<Product>& set, const PackedWeights* packed) {
  for (const Product& p : set) check_product(p);
  reference_on() ? reference::products(set) : fast::products(set, packed);
}

Matrix linear(const Linear& layer, const Matrix& x) {
  Matrix y;
  check_product({&layer, &x, &y});
  return reference_on() ? reference::linear(layer, x) : fast::linear(layer, x);
}

std::vector<Matrix> tied_decoder(const std::vector<const Matrix*>& h, const StoredMatrix& E, const Vector& bias) {
  for (const Matrix* states : h)
    if (states->cols() != E.cols() || bias.size() != E.rows())
      throw Error("tied decoder: h " + shape(*states) + ", E " + shape(E) + ", bias [" + std::to_string(bias.size()) +
                  "] do not fit");
  std::vector<Matrix> out;
  const int64_t M = h.empty() ? 0 : h[0]->rows();
  const bool same_rows = std::all_of(h.begin(), h.end(), [&](const Matrix* states) { return states->rows() == M; });
  if (reference_on() || h.size() < 2 || !same_rows || !fast::few_rows(M)) {  // state by state
    for (const Matrix* states : h)
      out.push_back(reference_on() ? reference::tied_decoder(*states, E, bias)
                                   : fast::tied_decoder(*states, E, bias, /*rows_independent=*/false));
    return out;
  }
  // Few rows: one pass over E for all states (their rows stacked), the same arithmetic per logit.
  Matrix stacked(M * static_cast<int64_t>(h.size()), E.cols());
  for (size_t g = 0; g < h.size(); ++g) stacked.middleRows(static_cast<int64_t>(g) * M, M) = *h[g];
  const Matrix logits = fast::tied_decoder(stacked, E, bias, /*rows_independent=*/true);
  for (size_t g = 0; g < h.size(); ++g) out.push_back(logits.middleRows(static_cast<int64_t>(g) * M, M));
  return out;
}

void for_rows(int64_t rows, int64_t cols, const RowsFn& body) {
  if (rows <= 0) return;
  reference_on() ? reference::for_rows(rows, body) : fast::for_rows(rows, cols, body);
}

void tasks(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  reference_on() ? reference::tasks(count, task) : fast::tasks(count, task);
}

void gelu_erf(Eigen::Ref<Matrix> x) { reference_on() ? reference::gelu_erf(x) : fast::gelu_erf(x); }

namespace {
// The checks of `attention` on one head: its operands present and of fitting shapes.
void check_head(const AttentionHead& head) {
  if (!head.Q_c || !head.K_c || !head.V_c || !head.mask)
    throw Error("eq. 4: attention needs Q_c, K_c, V_c and the mask");
  const int64_t N = head.Q_c->rows(), d = head.d(), c0 = head.column0;
  // Each projection holds the head's window of columns (all of them when no window is given).
  const auto fits = [&](const Matrix& m) { return c0 >= 0 && m.cols() >= c0 + d && (head.columns >= 0 || m.cols() == d); };
  if (head.K_c->rows() != N || head.V_c->rows() != N || !fits(*head.Q_c) || !fits(*head.K_c) || !fits(*head.V_c) ||
      head.mask->size() != N)
    throw Error("eq. 4: attention on Q_c " + shape(*head.Q_c) + ", K_c " + shape(*head.K_c) + ", V_c " +
                shape(*head.V_c) + ", head columns [" + std::to_string(c0) + ", " + std::to_string(c0 + d) +
                ") and a mask of " + std::to_string(head.mask->size()) + " entries");
  if (head.context_out && (head.context_out->rows() != N || head.context_out->cols() < c0 + d))
    throw Error("eq. 4: the layer's context " + shape(*head.context_out) + " has no room for head columns [" +
                std::to_string(c0) + ", " + std::to_string(c0 + d) + ") of " + std::to_string(N) + " rows");
  // A term on needs its projections and table rows (as the equations layer's term functions).
  for (Term t : kAllTerms) {
    if (!head.terms[t]) continue;
    const auto need = [&](const Matrix* m, const char* name, const IndexMatrix* rows) {
      if (!m || m->size() == 0 || !rows)
        throw Error(std::string("eq. 4, ") + term_name(t) + ": the head has no " + name + " projection or no table rows");
      if (!fits(*m) || rows->rows() != N || rows->cols() != N)
        throw Error(std::string("eq. 4, ") + term_name(t) + ": " + name + " " + shape(*m) + " or its table rows do not fit");
      const bool known = head.rows_lo >= 0 && head.rows_hi >= head.rows_lo;
      const int64_t lo = known ? head.rows_lo : rows->size() > 0 ? rows->minCoeff() : head.row_offset;
      const int64_t hi = known ? head.rows_hi : rows->size() > 0 ? rows->maxCoeff() : head.row_offset;
      if (rows->size() > 0 && (lo < head.row_offset || hi - head.row_offset >= m->rows()))
        throw Error(std::string("eq. 4, ") + term_name(t) + ": a table row outside the " + std::to_string(m->rows()) +
                    " rows of " + name + " (first row " + std::to_string(head.row_offset) + ")");
    };
    if (reads_K_r(t)) need(head.K_r, "K_r", head.c2p_row);
    if (reads_Q_r(t)) need(head.Q_r, "Q_r", head.p2c_row);
  }
}
}  // namespace

void attention(const std::vector<AttentionHead>& heads, std::vector<AttentionResult>* out, bool keep_probs,
               bool keep_maps) {
  for (const AttentionHead& head : heads) check_head(head);
  reference_on() ? reference::head_by_head(heads, out, keep_probs, keep_maps)
                 : fast::attention(heads, out, keep_probs, keep_maps);
}

}  // namespace ops
}  // namespace deberta
