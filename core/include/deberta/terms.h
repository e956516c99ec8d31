// terms.h — eq. 4's terms as data (He et al., ICLR 2021, eq. 2 and eq. 4).
//
// Each term is one entry of `Term`; per-term values live in a `PerTerm` array indexed by it, so the
// trace, the scores, the switches and the viewer hold one array where they held four fields.
// Adding a term means: an entry here, its name in `term_name` (terms.cpp), what a model does with
// it by default (`ModelConfig::trained_with`), its equation function and its case in
// `term_scores` (equations.h) — and nothing else in the core names a term.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>

namespace deberta {

/// The score terms of disentangled attention (eq. 2): content-to-content, content-to-position,
/// position-to-content (the three eq. 4 keeps), and position-to-position (eq. 2's fourth term,
/// which the paper drops; computed here only when switched on).
enum class Term { c2c, c2p, p2c, p2p };

/// Number of `Term`s.
inline constexpr int kTermCount = 4;
/// Every term, in the order the viewer and the reports list them.
inline constexpr Term kAllTerms[kTermCount] = {Term::c2c, Term::c2p, Term::p2c, Term::p2p};

/// Whether every model runs `term` unless it is switched off: c2c, eq. 4's content term. What a
/// model does with the others depends on its config (`ModelConfig::trained_with`).
constexpr bool on_in_every_model(Term term) { return term == Term::c2c; }

/// Whether `term` reads the key side's position projection K_r (eq. 4: c2p reads K_r[δ(i, j)];
/// eq. 2's p2p reads it too).
constexpr bool reads_K_r(Term term) { return term == Term::c2p || term == Term::p2p; }
/// Whether `term` reads the query side's position projection Q_r (p2c, p2p).
constexpr bool reads_Q_r(Term term) { return term == Term::p2c || term == Term::p2p; }

/// "c2c", "c2p", "p2c", "p2p": the term's name on the command line, in files and in the paper.
const char* term_name(Term term);
/// The term named `name` (as `term_name` writes it), or none. Errors: none.
std::optional<Term> term_from_name(const std::string& name);

/// One value per term, indexed by `Term`: `PerTerm<bool> on; on[Term::c2p] = true;`.
template <class T>
struct PerTerm {
  std::array<T, kTermCount> values{};
  T& operator[](Term t) { return values[static_cast<size_t>(t)]; }
  const T& operator[](Term t) const { return values[static_cast<size_t>(t)]; }
  bool operator==(const PerTerm& other) const { return values == other.values; }
  bool operator!=(const PerTerm& other) const { return values != other.values; }
};

/// Whether any term `on` holds reads a position projection (K_r or Q_r), i.e. the relative table.
inline bool reads_relative_table(const PerTerm<bool>& on) {
  for (int t = 0; t < kTermCount; ++t)
    if (on.values[static_cast<size_t>(t)] && (reads_K_r(kAllTerms[t]) || reads_Q_r(kAllTerms[t]))) return true;
  return false;
}

}  // namespace deberta
