// terms.cpp — the name table of eq. 4's terms (terms.h).
#include "deberta/terms.h"

namespace deberta {

const char* term_name(Term term) {
  switch (term) {
    case Term::c2c: return "c2c";
    case Term::c2p: return "c2p";
    case Term::p2c: return "p2c";
    case Term::p2p: return "p2p";
  }
  return "?";
}

std::optional<Term> term_from_name(const std::string& name) {
  for (Term t : kAllTerms)
    if (name == term_name(t)) return t;
  return std::nullopt;
}

}  // namespace deberta
