#include "deberta/config.h"


#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace deberta {

using nlohmann::json;

Activation parse_activation(const std::string& name, const std::string& source) {
  // The names of Hugging Face's ACT2FN.
  if (name == "gelu" || name == "gelu_python") return Activation::GeluErf;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::GeluTanh;
  if (name == "gelu_fast") return Activation::GeluFast;
  if (name == "quick_gelu") return Activation::QuickGelu;
  if (name == "relu") return Activation::Relu;
  if (name == "relu6") return Activation::Relu6;
  if (name == "tanh") return Activation::Tanh;
  if (name == "sigmoid") return Activation::Sigmoid;
  if (name == "silu" || name == "swish") return Activation::Silu;
  if (name == "mish") return Activation::Mish;
  if (name == "linear") return Activation::Linear;
  if (name == "gelu_10") return Activation::GeluClip10;
  // Every other name is refused, as ACT2FN's KeyError refuses it (gelu_accurate, laplace and relu2
  // came to ACT2FN after v4.27.1; microsoft/DeBERTa knows fewer names still).
  throw Error(source + ": unknown activation '" + name +
              "' (known, as transformers v4.27.1's ACT2FN: gelu, gelu_10, gelu_fast, gelu_new, gelu_python, "
              "gelu_pytorch_tanh, linear, mish, quick_gelu, relu, relu6, sigmoid, silu, swish, tanh)");
}

namespace {

std::string lower_trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<std::string> split_bar(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, '|')) {
    part = lower_trim(part);
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

// pos_att_type exactly as Hugging Face's Deberta(V2)Config reads it: a string is lower-cased, split
// at every '|' and each part stripped — empty parts are kept ("c2p|p2c|" has three entries, "" one),
// and they count in v1's scale factor 1 + len(pos_att_type); a list is kept verbatim (no lower-case,
// no strip: ["C2P"] names no term HF knows). Entries other than "c2p" / "p2c" (/ "p2p" in v1, which
// only creates the projections) are ignored, as the reference code ignores them.
std::vector<std::string> hf_pos_att_type(const std::string& s) {
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t bar = lower.find('|', start);
    std::string part = lower.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    const char* ws = " \t\n\r\f\v";
    part.erase(0, part.find_first_not_of(ws));
    const size_t last = part.find_last_not_of(ws);
    part.erase(last == std::string::npos ? 0 : last + 1);
    out.push_back(part);
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return out;
}

// Typed access with a clear message: "config.json: key 'hidden_size' must be an integer, found "abc"".
struct Reader {
  const json& j;
  const std::string& source;

  Error type_error(const std::string& key, const char* want) const {
    return Error(source + ": key '" + key + "' must be " + want + ", found " + j.at(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  bool has(const std::string& key) const { return j.contains(key) && !j.at(key).is_null(); }
  int64_t integer(const std::string& key, int64_t fallback) const {
    if (!has(key)) return fallback;
    const json& v = j.at(key);
    // Bounds are checked before any conversion: a huge number (found by fuzzing) must give an
    // error, not an out-of-range cast.
    constexpr double kLimit = 9.0e18;  // inside int64
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() > static_cast<uint64_t>(kLimit)) throw type_error(key, "an integer of reasonable size");
      return static_cast<int64_t>(v.get<uint64_t>());
    }
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (!(std::fabs(d) < kLimit)) throw type_error(key, "an integer of reasonable size");
      if (d == std::floor(d)) return static_cast<int64_t>(d);
    }
    throw type_error(key, "an integer");
  }
  double number(const std::string& key, double fallback) const {
    if (!has(key)) return fallback;
    if (!j.at(key).is_number()) throw type_error(key, "a number");
    return j.at(key).get<double>();
  }
  bool boolean(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j.at(key).is_boolean()) throw type_error(key, "true or false");
    return j.at(key).get<bool>();
  }
  std::string string(const std::string& key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!j.at(key).is_string()) throw type_error(key, "a string");
    return j.at(key).get<std::string>();
  }
  // A "a|b" string or a list of strings (both forms occur in published configs).
  std::vector<std::string> bar_list(const std::string& key, const std::string& fallback) const {
    if (!has(key)) return split_bar(fallback);
    const json& v = j.at(key);
    if (v.is_string()) return split_bar(v.get<std::string>());
    if (v.is_array()) {
      std::vector<std::string> out;
      for (const auto& e : v) {
        if (!e.is_string()) throw type_error(key, "a \"a|b\" string or a list of strings");
        auto parts = split_bar(e.get<std::string>());
        out.insert(out.end(), parts.begin(), parts.end());
      }
      return out;
    }
    throw type_error(key, "a \"a|b\" string or a list of strings");
  }
};

void require_positive(const std::string& source, const char* key, int64_t v) {
  if (v <= 0) throw Error(source + ": " + key + " must be positive, found " + std::to_string(v));
}

// Task-model keys (heads.h): `architectures`, `id2label` / `num_labels`, `pooler_hidden_size`,
// `pooler_hidden_act`, read as Hugging Face's PretrainedConfig / DebertaV2Config read them.
void parse_task_keys(const Reader& r, ModelConfig* c) {
  const json& j = r.j;
  const std::string& source = r.source;
  if (r.has("architectures")) {
    const json& v = j.at("architectures");
    if (!v.is_array()) throw r.type_error("architectures", "a list of strings");
    for (const auto& e : v) {
      if (!e.is_string()) throw r.type_error("architectures", "a list of strings");
      c->architectures.push_back(e.get<std::string>());
    }
  }
  const int64_t limit = int64_t{1} << 20;
  if (r.has("id2label")) {
    const json& v = j.at("id2label");
    if (!v.is_object()) throw r.type_error("id2label", "an object {\"0\": \"LABEL\", ...}");
    const int64_t n = static_cast<int64_t>(v.size());
    if (n < 1 || n > limit)
      throw Error(source + ": id2label has " + std::to_string(n) + " entries (expected 1 to " + std::to_string(limit) + ")");
    std::vector<std::string> labels(n);
    std::vector<bool> seen(n, false);
    for (const auto& [key, name] : v.items()) {
      int64_t id = -1;
      const bool digits = !key.empty() && key.size() <= 9 && key.find_first_not_of("0123456789") == std::string::npos;
      if (digits) id = std::stoll(key);
      if (id < 0 || id >= n)
        throw Error(source + ": id2label key '" + key + "' is not a label id in 0 ... " + std::to_string(n - 1));
      if (!name.is_string()) throw Error(source + ": id2label[\"" + key + "\"] must be a string, found " + name.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      if (seen[id]) throw Error(source + ": id2label lists id " + std::to_string(id) + " twice");
      seen[id] = true;
      labels[id] = name.get<std::string>();
    }
    c->id2label = labels;
    c->has_id2label = true;
  } else if (r.has("num_labels")) {
    const int64_t n = r.integer("num_labels", 2);
    if (n < 1 || n > limit)
      throw Error(source + ": num_labels must be in 1 ... " + std::to_string(limit) + ", found " + std::to_string(n));
    c->id2label.clear();
    for (int64_t k = 0; k < n; ++k) c->id2label.push_back("LABEL_" + std::to_string(k));
  }
  c->pooler_hidden_size = r.integer("pooler_hidden_size", c->hidden_size);
  if (c->pooler_hidden_size < 1 || c->pooler_hidden_size > limit * 16)
    throw Error(source + ": pooler_hidden_size must be in 1 ... " + std::to_string(limit * 16) + ", found " +
                std::to_string(c->pooler_hidden_size));
  c->pooler_hidden_act_name = r.string("pooler_hidden_act", "gelu");
  c->pooler_hidden_act = parse_activation(c->pooler_hidden_act_name, source + " (pooler_hidden_act)");
}

}  // namespace

bool ModelConfig::uses(const std::string& term) const {
  return std::find(pos_att_type.begin(), pos_att_type.end(), term) != pos_att_type.end();
}

bool ModelConfig::trained_with(Term term) const {
  if (on_in_every_model(term)) return true;
  switch (term) {
    case Term::c2c: return true;
    case Term::c2p: return has_c2p();
    case Term::p2c: return has_p2c();
    case Term::p2p: return trained_with_p2p;
  }
  return false;
}

int64_t ModelConfig::relative_span() const {
  return log_buckets() ? position_buckets : max_relative_positions;
}

bool ModelConfig::norm_rel_layer_norm() const {
  return std::find(norm_rel_ebd.begin(), norm_rel_ebd.end(), "layer_norm") != norm_rel_ebd.end();
}

double ModelConfig::reference_scale_factor() const {
  if (version == ModelVersion::V1) return 1.0 + static_cast<double>(pos_att_type.size());
  return 1.0 + (uses("c2p") ? 1.0 : 0.0) + (uses("p2c") ? 1.0 : 0.0);
}

std::string ModelConfig::summary() const {
  std::string terms = "c2c";
  if (has_c2p()) terms += "+c2p";
  if (has_p2c()) terms += "+p2c";
  std::string s = model_type + " (" + (version == ModelVersion::V1 ? "v1" : "v2/v3") + "), " +
                  std::to_string(num_hidden_layers) + " layers, H=" + std::to_string(hidden_size) + ", " +
                  std::to_string(num_attention_heads) + " heads of d=" + std::to_string(d_head()) +
                  ", V=" + std::to_string(vocab_size) + ", terms " + terms;
  if (relative_attention) {
    s += ", k=" + std::to_string(relative_span());
    if (log_buckets()) s += " log buckets (max " + std::to_string(max_relative_positions) + ")";
  }
  if (conv_kernel_size > 0) s += ", nGiE conv " + std::to_string(conv_kernel_size);
  return s;
}

ModelConfig parse_config(const json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": config is not a JSON object");
  Reader r{j, source};
  ModelConfig c;
  c.model_type = r.string("model_type", "");
  if (c.model_type == "deberta") {
    c.version = ModelVersion::V1;
  } else if (c.model_type == "deberta-v2" || c.model_type == "deberta_v2") {
    c.version = ModelVersion::V2;
  } else {
    throw Error(source + ": unknown model_type '" + c.model_type + "' (expected \"deberta\" or \"deberta-v2\")");
  }
  // A key config.json omits takes the default of the config class its model_type names, as
  // transformers v4.27 does: DebertaConfig (deberta-base sizes) or DebertaV2Config (deberta-v2-xlarge
  // sizes: 1536 / 24 / 24 / 6144). The other defaults are the same in both classes.
  const bool v1 = c.version == ModelVersion::V1;
  c.hidden_size = r.integer("hidden_size", v1 ? 768 : 1536);
  c.num_hidden_layers = r.integer("num_hidden_layers", v1 ? 12 : 24);
  c.num_attention_heads = r.integer("num_attention_heads", v1 ? 12 : 24);
  c.intermediate_size = r.integer("intermediate_size", v1 ? 3072 : 6144);
  c.vocab_size = r.integer("vocab_size", c.version == ModelVersion::V1 ? 50265 : 128100);
  c.max_position_embeddings = r.integer("max_position_embeddings", 512);
  c.type_vocab_size = r.integer("type_vocab_size", 0);
  c.layer_norm_eps = r.number("layer_norm_eps", 1e-7);
  c.hidden_act_name = r.string("hidden_act", "gelu");
  c.hidden_act = parse_activation(c.hidden_act_name, source + " (hidden_act)");
  c.position_biased_input = r.boolean("position_biased_input", true);
  c.relative_attention = r.boolean("relative_attention", false);
  const int64_t max_rel = r.integer("max_relative_positions", -1);
  c.max_relative_positions = max_rel < 1 ? c.max_position_embeddings : max_rel;
  if (r.has("pos_att_type")) {
    const json& v = j.at("pos_att_type");
    if (v.is_string()) {
      c.pos_att_type = hf_pos_att_type(v.get<std::string>());
    } else if (v.is_array()) {
      for (const auto& e : v) {
        if (!e.is_string()) throw r.type_error("pos_att_type", "a \"a|b\" string or a list of strings");
        c.pos_att_type.push_back(e.get<std::string>());
      }
    } else {
      throw r.type_error("pos_att_type", "a \"a|b\" string or a list of strings");
    }
  }
  c.embedding_size = r.integer("embedding_size", c.hidden_size);
  c.pad_token_id = r.integer("pad_token_id", 0);

  require_positive(source, "hidden_size", c.hidden_size);
  require_positive(source, "num_hidden_layers", c.num_hidden_layers);
  require_positive(source, "num_attention_heads", c.num_attention_heads);
  require_positive(source, "intermediate_size", c.intermediate_size);
  require_positive(source, "vocab_size", c.vocab_size);
  require_positive(source, "max_position_embeddings", c.max_position_embeddings);
  require_positive(source, "embedding_size", c.embedding_size);
  if (c.type_vocab_size < 0) throw Error(source + ": type_vocab_size must be >= 0, found " + std::to_string(c.type_vocab_size));
  if (!(c.layer_norm_eps > 0)) throw Error(source + ": layer_norm_eps must be positive");
  const int64_t sanity = int64_t{1} << 24;
  for (auto [key, v] : {std::pair{"hidden_size", c.hidden_size}, {"num_hidden_layers", c.num_hidden_layers},
                        {"intermediate_size", c.intermediate_size}, {"vocab_size", c.vocab_size},
                        {"max_position_embeddings", c.max_position_embeddings}, {"embedding_size", c.embedding_size}})
    if (v > sanity) throw Error(source + ": " + key + " = " + std::to_string(v) + " is implausibly large");

  if (c.version == ModelVersion::V2) {
    c.attention_head_size = r.integer("attention_head_size", c.hidden_size / c.num_attention_heads);
    c.position_buckets = r.integer("position_buckets", -1);
    c.share_att_key = r.boolean("share_att_key", false);
    c.norm_rel_ebd = r.bar_list("norm_rel_ebd", "none");
    // HF reads only whether "layer_norm" is among the entries and ignores the rest: so do we, saying so.
    for (const auto& n : c.norm_rel_ebd)
      if (n != "none" && n != "layer_norm")
        std::fprintf(stderr, "deberta: warning: %s: norm_rel_ebd entry '%s' is ignored (known: none, layer_norm; "
                             "Hugging Face ignores it too)\n", source.c_str(), n.c_str());
    c.conv_kernel_size = r.integer("conv_kernel_size", 0);
    c.conv_act_name = r.string("conv_act", "tanh");
    c.conv_act = parse_activation(c.conv_act_name, source + " (conv_act)");
    c.conv_groups = r.integer("conv_groups", 1);
    if (c.conv_kernel_size < 0) throw Error(source + ": conv_kernel_size must be >= 0");
    if (c.conv_kernel_size > 0 && c.conv_kernel_size % 2 == 0)
      throw Error(source + ": conv_kernel_size must be odd (the reference pads (k-1)/2 on both sides), found " +
                  std::to_string(c.conv_kernel_size));
    if (c.conv_kernel_size > 0 && (c.conv_groups < 1 || c.hidden_size % c.conv_groups != 0))  // unread without a conv layer
      throw Error(source + ": conv_groups = " + std::to_string(c.conv_groups) + " must divide hidden_size " +
                  std::to_string(c.hidden_size));
  } else {
    c.attention_head_size = c.hidden_size / c.num_attention_heads;
    // v1 code ignores the v2-only keys (position_buckets, share_att_key, conv_*), as we do.
    c.norm_rel_ebd = {"none"};
  }
  if (r.has("deberta_explorer")) {
    const json& p = j.at("deberta_explorer");
    const std::string where = source + ": deberta_explorer";
    if (!p.is_object()) throw Error(where + " must be an object");
    for (const auto& [key, v] : p.items()) {
      if (key == "p2p") {
        if (!v.is_boolean()) throw Error(where + ".p2p must be true or false");
        c.trained_with_p2p = v.get<bool>();
      } else if (key == "p2c_index") {
        if (!v.is_string() || (v != "code" && v != "paper"))
          throw Error(where + ".p2c_index must be \"code\" or \"paper\", found " + v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        c.trained_with_paper_p2c = v == "paper";
      } else if (key == "emd_position") {
        if (!v.is_boolean()) throw Error(where + ".emd_position must be true or false");
        c.emd_position = v.get<bool>();
      } else {
        throw Error(where + ": unknown key '" + key + "' (known: p2p, p2c_index, emd_position)");
      }
    }
    if (c.trained_with_p2p && !(c.relative_attention && c.uses("c2p") && c.uses("p2c")))
      throw Error(where + ".p2p needs relative attention with both c2p and p2c (the p2p term uses K_r and Q_r)");
  }
  if (c.version == ModelVersion::V1 || !r.has("attention_head_size")) {
    if (c.hidden_size % c.num_attention_heads != 0)
      throw Error(source + ": hidden_size " + std::to_string(c.hidden_size) + " is not divisible by num_attention_heads " +
                  std::to_string(c.num_attention_heads));
  }
  require_positive(source, "attention_head_size", c.attention_head_size);
  if (c.relative_attention && c.relative_span() < 1)
    throw Error(source + ": relative attention needs a positive relative span (max_relative_positions / position_buckets)");
  if (c.version == ModelVersion::V1 && r.has("talking_head") && r.boolean("talking_head", false))
    throw Error(source + ": talking_head = true (v1 head_logits_proj / head_weights_proj mixing the heads) is not "
                         "implemented; refusing rather than running the model without it");
  if (c.version == ModelVersion::V2 && c.relative_attention && c.position_buckets == 1)
    throw Error(source + ": position_buckets = 1 leaves no room for log buckets (the reference code divides by "
                         "position_buckets // 2 = 0); use 0 or -1 for none, or at least 2");
  // Sizes that feed allocations and products: bounded before anything is allocated.
  const int64_t size_limit = int64_t{1} << 24;
  if (c.attention_head_size > size_limit || c.num_attention_heads > size_limit ||
      c.attention_head_size * c.num_attention_heads > size_limit)
    throw Error(source + ": num_attention_heads x attention_head_size = " + std::to_string(c.num_attention_heads) +
                " x " + std::to_string(c.attention_head_size) + " is implausibly large");
  if (c.relative_attention && c.relative_span() > size_limit)
    throw Error(source + ": the relative span k = " + std::to_string(c.relative_span()) +
                " (2k table rows) is implausibly large");
  // max_relative_positions = 1 with buckets is well defined (every |i − j| > b/2 lands in bucket b/2,
  // as in the references), and max_relative_positions − 1 = b/2 only fails for an input whose
  // distances exceed b/2: that is refused when such an input runs (make_sequence_context).
  parse_task_keys(r, &c);  // after the encoder keys: their errors come first
  return c;
}


}  // namespace deberta
