#include "deberta/map_weights.h"
#include "deberta/weights.h"

#include "deberta/heads.h"

#include <cmath>
#include <cstring>
#include <set>
#include <string_view>
#include <algorithm>

namespace deberta {

namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  Tensor t;
  t.shape = s;
  return t.shape_string();
}

// The values `f` of a tensor the reader widened from `dtype` (F32, F16, BF16: a PyTorch
// checkpoint's), back as that dtype's little-endian bytes. Exact: each value came from one of the
// dtype, so narrowing it gives that value's bits again (a value that is not one of the dtype's,
// which no reader produces, would be rounded toward zero).
AlignedBytes narrowed(const std::vector<double>& f, DType dtype) {
  AlignedBytes out(f.size() * static_cast<size_t>(dtype_size(dtype)));
  for (size_t k = 0; k < f.size(); ++k) {
    const float v = static_cast<float>(f[k]);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    if (dtype == DType::F32) {
      std::memcpy(out.data() + 4 * k, &v, 4);
      continue;
    }
    uint16_t half = static_cast<uint16_t>(bits >> 16);  // BF16: a float's top half
    if (dtype == DType::F16) {
      const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
      const int exponent = static_cast<int>((bits >> 23) & 0xff);
      const uint32_t mantissa = bits & 0x7fffff;
      if (exponent == 0xff)  // Inf, NaN
        half = static_cast<uint16_t>(sign | 0x7c00 | (mantissa ? 0x200 : 0));
      else if (exponent - 127 >= -14)  // a normal half
        half = static_cast<uint16_t>(sign | ((exponent - 127 + 15) << 10) | (mantissa >> 13));
      else  // a subnormal half or zero: |v| = m · 2^-24
        half = static_cast<uint16_t>(sign | static_cast<uint16_t>(std::fabs(static_cast<double>(v)) * 16777216.0));
    }
    std::memcpy(out.data() + 2 * k, &half, 2);
  }
  return out;
}

// Looks tensors up by name (with or without the `deberta.` prefix), checks shapes, records what
// is missing so that one error can list every missing name.
class WeightReader {
 public:
  WeightReader(TensorMap& tensors, const std::string& source, const TensorLoader& load, bool plan_only = false,
               const NonFiniteCounts* counted = nullptr)
      : tensors_(tensors), source_(source), load_(load), plan_only_(plan_only), counted_(counted) {}

  bool has(const std::string& name) const { return find(name) != nullptr; }
  /// Planning (`tensors_used`): every check runs, no value is read, accessors return empty values.
  bool plan_only() const { return plan_only_; }
  /// The keys taken so far, in the order they were taken.
  const std::vector<std::string>& taken() const { return taken_; }

  // Each accessor moves or copies the values into its type and frees the tensor's storage at once,
  // so loading holds at most one extra tensor beyond the weights. A matrix keeps the file's
  // precision: a tensor read with its stored bytes (`Tensor::stored`) gives them to the matrix
  // unchanged; one its reader widened (a PyTorch checkpoint, `read_safetensors`) is narrowed back
  // to its dtype, exactly (`narrowed`). A missing tensor
  // gives an empty placeholder, never one of the configured size (config.json alone could ask for
  // gigabytes): finish() reports every missing name before anything reads a placeholder.
  StoredMatrix matrix(const std::string& name, int64_t rows, int64_t cols) {
    Tensor* t = take(name, {rows, cols});
    if (!t || plan_only_) return StoredMatrix();
    if (!t->stored.empty() || t->numel() == 0) {
      StoredMatrix m(t->dtype, rows, cols, std::move(t->stored));
      release(t);
      return m;
    }
    if (t->dtype == DType::F32 || t->dtype == DType::F16 || t->dtype == DType::BF16) {  // widened by its reader
      StoredMatrix m(t->dtype, rows, cols, narrowed(t->f, t->dtype));
      release(t);
      return m;
    }
    StoredMatrix m(to_matrix(*t, source_ + ": tensor '" + name + "'"));
    release(t);
    return m;
  }
  Vector vector(const std::string& name, int64_t n) {
    Tensor* t = take(name, {n});
    if (!t || plan_only_) return Vector();
    const std::vector<double> values = float_values(*t, source_ + ": tensor '" + name + "'");
    Vector v = Eigen::Map<const Vector>(values.data(), n);
    release(t);
    return v;
  }
  static void release(Tensor* t) {
    std::vector<double>().swap(t->f);
    AlignedBytes().swap(t->stored);
  }
  Linear linear(const std::string& prefix, int64_t out, int64_t in, bool bias) {
    Linear l;
    l.weight = matrix(prefix + ".weight", out, in);
    if (bias) l.bias = vector(prefix + ".bias", out);
    return l;
  }
  LayerNormParams layer_norm(const std::string& prefix, int64_t n, double eps) {
    return {vector(prefix + ".weight", n), vector(prefix + ".bias", n), eps};
  }
  /// Any tensor by name with a given shape; nullptr (and recorded missing) if absent.
  Tensor* take(const std::string& name, const std::vector<int64_t>& shape) {
    Tensor* t = find(name);
    if (!t) {
      // The count, and the first names only: a config can ask for millions of absent tensors.
      if (missing_.size() < kNamesShown) missing_.push_back(name);
      ++missing_count_;
      return nullptr;
    }
    if (t->shape != shape)
      throw Error(source_ + ": tensor '" + name + "' has shape " + t->shape_string() + ", expected " +
                  shape_text(shape));
    if (dtype_is_integer(t->dtype))
      throw Error(source_ + ": tensor '" + name + "' has integer dtype " + dtype_name(t->dtype) +
                  ", expected a floating-point dtype");
    if (!used_.insert(key_of(name)).second) throw Error(source_ + ": tensor '" + name + "' is used twice by the weight map");
    taken_.push_back(key_of(name));
    if (plan_only_) return t;
    if (load_ && static_cast<int64_t>(t->f.size()) != t->numel() && t->stored.empty()) load_(key_of(name), t);
    const auto was_counted = counted_ ? counted_->find(key_of(name)) : NonFiniteCounts::const_iterator();
    const int64_t bad = counted_ && was_counted != counted_->end() ? was_counted->second : non_finite_count(*t);
    if (bad) warnings_.push_back("tensor '" + name + "' holds " + std::to_string(bad) + " NaN/Inf values");
    return t;
  }
  void finish(ModelWeights* w) {
    if (missing_count_ > 0) {
      std::string list = name_list(missing_);
      if (missing_count_ > missing_.size()) list += " and " + std::to_string(missing_count_ - missing_.size()) + " more";
      throw Error(source_ + ": missing " + std::to_string(missing_count_) + " required tensor(s): " + list);
    }
    for (const auto& [name, t] : tensors_)
      if (!used_.count(name)) w->unused.push_back(name);
    w->warnings = warnings_;
    if (w->warnings.size() > kNamesShown) {
      w->warnings.resize(kNamesShown);
      w->warnings.push_back(std::to_string(warnings_.size() - kNamesShown) + " more tensors hold NaN/Inf values");
    }
  }

 private:
  Tensor* find(const std::string& name) const {
    auto it = tensors_.find(name);
    const auto prefixed = tensors_.find("deberta." + name);
    // Both spellings present: which one the author meant is unknowable, so neither is guessed.
    if (it != tensors_.end() && prefixed != tensors_.end())
      throw Error(source_ + ": holds both '" + name + "' and 'deberta." + name +
                  "' (two values for one weight; remove one)");
    if (it == tensors_.end()) it = prefixed;
    return it == tensors_.end() ? nullptr : &it->second;
  }
  std::string key_of(const std::string& name) const {
    return tensors_.count(name) ? name : "deberta." + name;
  }

  TensorMap& tensors_;
  const std::string& source_;
  const TensorLoader& load_;
  const bool plan_only_;
  const NonFiniteCounts* counted_;  ///< counts a loader took already (map_weights' `counted`)
  std::vector<std::string> taken_;
  static constexpr size_t kNamesShown = 5;
  std::vector<std::string> missing_;  ///< the first kNamesShown missing names
  size_t missing_count_ = 0;
  std::vector<std::string> warnings_;
  std::set<std::string> used_;
};

// v1 `in_proj.weight [3·h·d, H]` holds, per head, the query, key and value rows one after
// another: output feature f = head·3d + c·d + e with c = 0 (query), 1 (key), 2 (value).
StoredMatrix split_in_proj(const StoredMatrix& in_proj, int64_t heads, int64_t d, int c) {
  if (in_proj.size() == 0) return StoredMatrix();  // missing: reported by WeightReader::finish
  std::vector<int64_t> rows;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t e = 0; e < d; ++e) rows.push_back(h * 3 * d + c * d + e);
  return in_proj.gather_rows(rows);
}

AttentionWeights read_attention(WeightReader& r, const ModelConfig& c, const std::string& p) {
  const int64_t H = c.hidden_size, A = c.num_attention_heads * c.d_head();
  const double eps = c.layer_norm_eps;
  AttentionWeights a;
  // c2p needs K_r's projection, p2c Q_r's. A listed "p2p" does not require them: Hugging Face
  // creates them only for c2p / p2c (and never computes p2p); microsoft's layout also writes them
  // for p2p, so they are read when present (the project's +p2p switch needs both).
  const bool rel = c.relative_attention, p2p_listed = rel && c.uses("p2p");
  auto want = [&](bool term, const std::string& name) { return (rel && term) || (p2p_listed && r.has(name + ".weight")); };
  if (c.version == ModelVersion::V1) {
    const bool want_pos_key = want(c.uses("c2p"), p + "attention.self.pos_proj");
    const bool want_pos_query = want(c.uses("p2c"), p + "attention.self.pos_q_proj");
    const StoredMatrix in_proj = r.matrix(p + "attention.self.in_proj.weight", 3 * A, H);
    a.query.weight = split_in_proj(in_proj, c.num_attention_heads, c.d_head(), 0);
    a.key.weight = split_in_proj(in_proj, c.num_attention_heads, c.d_head(), 1);
    a.value.weight = split_in_proj(in_proj, c.num_attention_heads, c.d_head(), 2);
    a.query.bias = r.vector(p + "attention.self.q_bias", A);
    a.value.bias = r.vector(p + "attention.self.v_bias", A);
    if (want_pos_key) a.pos_key = r.linear(p + "attention.self.pos_proj", A, H, false);
    if (want_pos_query) a.pos_query = r.linear(p + "attention.self.pos_q_proj", A, H, true);
  } else {
    a.query = r.linear(p + "attention.self.query_proj", A, H, true);
    a.key = r.linear(p + "attention.self.key_proj", A, H, true);
    a.value = r.linear(p + "attention.self.value_proj", A, H, true);
    if (c.relative_attention) {
      if (c.share_att_key) {
        a.pos_key = a.key;
        a.pos_query = a.query;
      } else {
        if (want(c.uses("c2p"), p + "attention.self.pos_key_proj"))
          a.pos_key = r.linear(p + "attention.self.pos_key_proj", A, H, true);
        if (want(c.uses("p2c"), p + "attention.self.pos_query_proj"))
          a.pos_query = r.linear(p + "attention.self.pos_query_proj", A, H, true);
      }
    }
  }
  a.output = r.linear(p + "attention.output.dense", H, A, true);
  a.output_norm = r.layer_norm(p + "attention.output.LayerNorm", H, eps);
  return a;
}

// The encoder layers a tensor map holds: every n of a "[deberta.]encoder.layer.<n>." name.
std::set<int64_t> encoder_layers_in(const TensorMap& tensors) {
  std::set<int64_t> layers;
  for (const auto& entry : tensors) {
    std::string_view name = entry.first;
    if (name.substr(0, 8) == "deberta.") name.remove_prefix(8);
    constexpr std::string_view prefix = "encoder.layer.";
    if (name.substr(0, prefix.size()) != prefix) continue;
    name.remove_prefix(prefix.size());
    int64_t n = 0;
    size_t digits = 0;
    while (digits < name.size() && digits < 9 && name[digits] >= '0' && name[digits] <= '9')
      n = n * 10 + (name[digits++] - '0');
    if (digits > 0 && digits < name.size() && name[digits] == '.') layers.insert(n);
  }
  return layers;
}

// "the config beside <weights file>": map_weights knows the weights' path only.
std::string source_of_config(const std::string& weights_source) {
  const auto slash = weights_source.find_last_of('/');
  return slash == std::string::npos ? std::string("config.json") : weights_source.substr(0, slash + 1) + "config.json";
}

// map_weights and tensors_used: one walk over the names, reading values unless `r` only plans.
ModelWeights map_weights_with(WeightReader& r, const ModelConfig& c, const TensorMap& tensors, const std::string& source) {
  ModelWeights w;
  const int64_t H = c.hidden_size, E = c.embedding_size;
  const double eps = c.layer_norm_eps;

  auto& e = w.embeddings;
  e.word = r.matrix("embeddings.word_embeddings.weight", c.vocab_size, E);
  // Absolute positions: required when added to the input; otherwise optional (the EMD uses them).
  if (c.position_biased_input || r.has("embeddings.position_embeddings.weight"))
    e.position = r.matrix("embeddings.position_embeddings.weight", c.max_position_embeddings, E);
  if (c.type_vocab_size > 0) e.token_type = r.matrix("embeddings.token_type_embeddings.weight", c.type_vocab_size, E);
  if (E != H) e.embed_proj = r.linear("embeddings.embed_proj", H, E, false);
  e.norm = r.layer_norm("embeddings.LayerNorm", H, eps);

  // The config is checked against the file before anything per layer is built: num_hidden_layers
  // = 10^6 in a 1 KB config.json must not build a million layers of missing names (issue 28, class 5).
  const std::set<int64_t> layers_found = encoder_layers_in(tensors);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    if (!layers_found.count(l))
      throw Error(source_of_config(source) + " asks for num_hidden_layers = " + std::to_string(c.num_hidden_layers) +
                  ", but " + source + " holds no tensor of encoder layer " + std::to_string(l) + " (it holds " +
                  std::to_string(layers_found.size()) + " encoder layer(s))");
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    LayerWeights layer;
    layer.attention = read_attention(r, c, p);
    layer.intermediate = r.linear(p + "intermediate.dense", c.intermediate_size, H, true);
    layer.output = r.linear(p + "output.dense", H, c.intermediate_size, true);
    layer.output_norm = r.layer_norm(p + "output.LayerNorm", H, eps);
    w.layers.push_back(std::move(layer));
  }
  if (c.relative_attention) {
    w.rel_embeddings = r.matrix("encoder.rel_embeddings.weight", 2 * c.relative_span(), H);
    if (c.version == ModelVersion::V2 && c.norm_rel_layer_norm())
      w.rel_norm = r.layer_norm("encoder.LayerNorm", H, eps);
  }
  if (c.version == ModelVersion::V2 && c.conv_kernel_size > 0) {
    ConvWeights conv;
    const int64_t k = c.conv_kernel_size, in_per_group = H / c.conv_groups;
    Tensor* t = r.take("encoder.conv.conv.weight", {H, in_per_group, k});
    if (t && !r.plan_only()) {
      // PyTorch Conv1d weight [out, in/groups, k]: tap t is the [out, in/groups] slice at t
      // (widened at load: the taps are about 1% of a v2 model's values).
      const std::vector<double> f = float_values(*t, source + ": tensor 'encoder.conv.conv.weight'");
      for (int64_t tap = 0; tap < k; ++tap) {
        Matrix m(H, in_per_group);
        for (int64_t o = 0; o < H; ++o)
          for (int64_t i = 0; i < in_per_group; ++i) m(o, i) = f[(o * in_per_group + i) * k + tap];
        conv.taps.push_back(std::move(m));
      }
      WeightReader::release(t);
    }
    conv.bias = r.vector("encoder.conv.conv.bias", H);
    conv.norm = r.layer_norm("encoder.conv.LayerNorm", H, eps);
    w.conv = std::move(conv);
  }
  // Masked-LM head, under microsoft/DeBERTa's or Hugging Face's names.
  // The head maps H → E (embedding_size) and ties to the word embeddings [V, E].
  if (r.has("lm_predictions.lm_head.dense.weight")) {
    LMHeadWeights lm;
    lm.dense = r.linear("lm_predictions.lm_head.dense", E, H, true);
    lm.norm = r.layer_norm("lm_predictions.lm_head.LayerNorm", E, eps);
    lm.bias = r.vector("lm_predictions.lm_head.bias", c.vocab_size);
    w.lm_head = std::move(lm);
  } else if (r.has("cls.predictions.transform.dense.weight")) {
    LMHeadWeights lm;
    lm.dense = r.linear("cls.predictions.transform.dense", E, H, true);
    lm.norm = r.layer_norm("cls.predictions.transform.LayerNorm", E, eps);
    lm.bias = r.vector(r.has("cls.predictions.bias") ? "cls.predictions.bias" : "cls.predictions.decoder.bias",
                       c.vocab_size);
    if (r.has("cls.predictions.decoder.weight")) r.take("cls.predictions.decoder.weight", {c.vocab_size, E});
    lm.hf_names = true;
    w.lm_head = std::move(lm);
  }
  // Task heads (heads.h decides which; a head it plans must be complete).
  const TaskHeadPlan plan = task_head_plan(c, [&r](const std::string& name) { return r.has(name); });
  if (plan.rtd) {
    RTDHeadWeights rtd;
    rtd.norm = r.layer_norm("mask_predictions.LayerNorm", H, eps);
    rtd.dense = r.linear("mask_predictions.dense", H, H, true);
    rtd.classifier = r.linear("mask_predictions.classifier", 1, H, true);
    w.rtd_head = std::move(rtd);
  }
  const int64_t labels = static_cast<int64_t>(c.id2label.size());
  if (plan.sequence) {
    const int64_t P = c.pooler_hidden_size;
    // ContextPooler applies dense [P, P] to the H-wide token-0 state: P must equal H.
    if (P != H)
      throw Error(source + ": pooler_hidden_size " + std::to_string(P) + " differs from hidden_size " +
                  std::to_string(H) + " (the pooler's dense layer reads the token-0 hidden state)");
    SequenceClassifierWeights cls;
    cls.pooler = r.linear("pooler.dense", P, P, true);
    cls.classifier = r.linear("classifier", labels, P, true);
    w.seq_classifier = std::move(cls);
  } else if (plan.token) {
    TokenClassifierWeights tok;
    tok.classifier = r.linear("classifier", labels, H, true);
    w.token_classifier = std::move(tok);
  }
  r.finish(&w);
  return w;
}

}  // namespace

ModelWeights map_weights(const ModelConfig& c, TensorMap&& tensors, const std::string& source, const TensorLoader& load,
                         const NonFiniteCounts* counted) {
  WeightReader r(tensors, source, load, /*plan_only=*/false, counted);
  ModelWeights w = map_weights_with(r, c, tensors, source);
  tensors.clear();
  return w;
}

std::vector<std::string> tensors_used(const ModelConfig& c, const TensorMap& index, const std::string& source) {
  TensorMap names = index;  // dtype and shape only: `take` reads no values while planning
  for (auto& entry : names) {
    std::vector<double>().swap(entry.second.f);
    std::vector<int64_t>().swap(entry.second.i);
    AlignedBytes().swap(entry.second.stored);
  }
  WeightReader r(names, source, {}, /*plan_only=*/true);
  (void)map_weights_with(r, c, names, source);
  return r.taken();
}

}  // namespace deberta
