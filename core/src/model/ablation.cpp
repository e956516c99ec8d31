#include "deberta/ablation.h"

#include <cmath>
#include <set>
#include <sstream>

namespace deberta {

namespace {
// Whether switch `value` of `term` changes what the model (`config`; without one: any model) runs.
bool term_switched(Term term, const std::optional<bool>& value, const ModelConfig* config) {
  if (!value) return false;
  return config ? *value != config->trained_with(term) : !(on_in_every_model(term) && *value);
}
}  // namespace

bool Ablation::is_default() const {
  for (Term t : kAllTerms)
    if (term_switched(t, terms[t], nullptr)) return false;
  return !p2c_index && scale_mode == ScaleMode::Auto &&
         head_mask.empty() && max_relative_positions == 0 && emd &&
         relative_positions == RelativePositionRule::HuggingFace;
}

std::string Ablation::describe(const ModelConfig* config) const {
  std::ostringstream s;
  for (Term t : kAllTerms)
    if (term_switched(t, terms[t], config)) s << (*terms[t] ? " +" : " -") << term_name(t);
  if (p2c_index && !(config && (*p2c_index == P2CIndex::Paper) == config->trained_with_paper_p2c))
    s << (*p2c_index == P2CIndex::Paper ? " p2c-index=paper" : " p2c-index=code");
  if (scale_mode == ScaleMode::Fixed) s << " scale-factor=" << scale_factor;
  if (scale_mode == ScaleMode::Rescale) s << " rescale";
  if (max_relative_positions > 0) s << " K=" << max_relative_positions;
  for (const auto& [l, h] : head_mask) s << " mask " << l << ":" << h;
  if (!emd) s << " -EMD";
  if (relative_positions == RelativePositionRule::Microsoft) s << " relative-positions=microsoft";
  const std::string out = s.str();
  return out.empty() ? "baseline" : out.substr(1);
}

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& what) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      size_t used = 0;
      out.push_back(std::stoll(part, &used));
      if (part.find_first_not_of(" \t", used) != std::string::npos) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw Error(what + ": '" + part + "' is not an integer (expected a comma-separated list like 1,5,7)");
    }
  }
  if (out.empty()) throw Error(what + ": empty list");
  return out;
}

namespace {

void parse_terms(const std::string& terms, Ablation* a) {
  for (Term t : kAllTerms) a->terms[t] = false;
  std::stringstream in(terms);
  std::string name;
  while (std::getline(in, name, ',')) {
    const std::optional<Term> t = term_from_name(name);
    if (!t) {
      std::string known;
      for (Term k : kAllTerms) known += std::string(known.empty() ? "" : ", ") + term_name(k);
      throw Error("--terms: unknown term '" + name + "' (known: " + known + ")");
    }
    a->terms[*t] = true;
  }
}

double parse_scale_factor(const std::string& text) {
  size_t used = 0;
  double factor = 0;
  try {
    factor = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || text.find_first_not_of(" \t", used) != std::string::npos)  // "3abc" is not 3
    throw Error("--scale-factor: '" + text + "' is neither 'auto' nor a number");
  if (!(factor > 0) || !std::isfinite(factor))
    throw Error("--scale-factor must be a positive finite number, found " + text);
  return factor;
}

void parse_head_mask(const std::string& text, Ablation* a) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) throw Error("--head-mask: '" + item + "' is not L:H");
    const int64_t layer = parse_int_list(item.substr(0, colon), "--head-mask layer").at(0);
    const int64_t head = parse_int_list(item.substr(colon + 1), "--head-mask head").at(0);
    a->head_mask.insert({layer, head});
  }
}

}  // namespace

Ablation parse_ablation(const AblationSwitches& s) {
  Ablation a;
  if (!s.terms.empty()) parse_terms(s.terms, &a);
  if (s.p2c_index == "paper") a.p2c_index = P2CIndex::Paper;
  else if (s.p2c_index == "code") a.p2c_index = P2CIndex::Code;
  else if (!s.p2c_index.empty()) throw Error("--p2c-index: '" + s.p2c_index + "' is neither 'code' nor 'paper'");
  if (s.rescale) {
    a.scale_mode = ScaleMode::Rescale;
  } else if (s.scale_factor != "auto") {
    a.scale_mode = ScaleMode::Fixed;
    a.scale_factor = parse_scale_factor(s.scale_factor);
  }
  if (!s.head_mask.empty()) parse_head_mask(s.head_mask, &a);
  if (s.max_relative_positions < 0)
    throw Error("--max-relative-positions must be >= 0, found " + std::to_string(s.max_relative_positions));
  a.max_relative_positions = s.max_relative_positions;
  a.emd = !s.no_emd;
  a.relative_positions = parse_relative_position_rule(s.relative_positions);
  return a;
}

Ablation parse_ablation_flags(const std::string& flags) {
  std::vector<std::string> words;
  std::stringstream in(flags);
  for (std::string w; in >> w;) words.push_back(w);
  AblationSwitches s;
  const std::string known = "--terms, --p2c-index, --scale-factor, --rescale, --head-mask, --max-relative-positions "
                            "(or --window), --no-emd, --relative-positions";
  for (size_t n = 0; n < words.size(); ++n) {
    std::string flag = words[n], value;
    const auto eq = flag.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) value = flag.substr(eq + 1), flag = flag.substr(0, eq);
    if (flag == "--window") flag = "--max-relative-positions";  // the CLI's other name for it (cli_common.cpp)
    if (flag == "--rescale" || flag == "--no-emd") {
      if (inline_value) throw Error(flag + " takes no value");
      (flag == "--rescale" ? s.rescale : s.no_emd) = true;
      continue;
    }
    static const std::set<std::string> with_value = {"--terms", "--p2c-index", "--scale-factor", "--head-mask",
                                                     "--max-relative-positions", "--relative-positions"};
    if (!with_value.count(flag)) throw Error("unknown ablation flag '" + flag + "' (known: " + known + ")");
    if (!inline_value) {
      if (n + 1 >= words.size()) throw Error(flag + ": missing value");
      value = words[++n];
    }
    if (flag == "--terms") s.terms = value;
    else if (flag == "--p2c-index") s.p2c_index = value;
    else if (flag == "--scale-factor") s.scale_factor = value;
    else if (flag == "--head-mask") s.head_mask = value;
    else if (flag == "--max-relative-positions") s.max_relative_positions = parse_int_list(value, flag).at(0);
    else if (flag == "--relative-positions") s.relative_positions = value;
    else throw Error("unknown ablation flag '" + flag + "' (known: " + known + ")");
  }
  return parse_ablation(s);
}

}  // namespace deberta
