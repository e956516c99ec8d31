#include "analysis/bench.h"

#include <algorithm>
#include <random>

namespace deberta {

ModelConfig preset_config(const std::string& preset) {
  ModelConfig c;
  c.relative_attention = true;
  c.pos_att_type = {"p2c", "c2p"};
  c.max_position_embeddings = 512;
  c.layer_norm_eps = 1e-7;
  if (preset == "tiny") {
    c.model_type = "deberta-v2", c.version = ModelVersion::V2;
    c.hidden_size = 128, c.num_hidden_layers = 4, c.num_attention_heads = 4, c.intermediate_size = 512;
    c.vocab_size = 8000, c.position_buckets = 32, c.max_relative_positions = 128;
    c.share_att_key = true, c.norm_rel_ebd = {"layer_norm"}, c.position_biased_input = false;
  } else if (preset == "xsmall") {
    c.model_type = "deberta-v2", c.version = ModelVersion::V2;
    c.hidden_size = 384, c.num_hidden_layers = 12, c.num_attention_heads = 6, c.intermediate_size = 1536;
    c.vocab_size = 128100, c.position_buckets = 256, c.max_relative_positions = 512;
    c.share_att_key = true, c.norm_rel_ebd = {"layer_norm"}, c.position_biased_input = false;
  } else if (preset == "base") {
    c.model_type = "deberta", c.version = ModelVersion::V1;
    c.hidden_size = 768, c.num_hidden_layers = 12, c.num_attention_heads = 12, c.intermediate_size = 3072;
    c.vocab_size = 50265, c.max_relative_positions = 512, c.position_biased_input = true;
    c.pos_att_type = {"c2p", "p2c"};
  } else {
    throw Error("unknown preset '" + preset + "' (known: tiny, xsmall, base)");
  }
  c.attention_head_size = c.hidden_size / c.num_attention_heads;
  c.embedding_size = c.hidden_size;
  return c;
}

namespace {

struct Filler {
  std::mt19937_64 rng;
  std::uniform_real_distribution<double> u{-0.035, 0.035};  // σ ≈ 0.02
  Matrix matrix(int64_t r, int64_t c) {
    Matrix m(r, c);
    for (int64_t k = 0; k < m.size(); ++k) m.data()[k] = u(rng);
    return m;
  }
  Vector vector(int64_t n) { return matrix(n, 1).col(0); }
  Linear linear(int64_t out, int64_t in, bool bias = true) { return {matrix(out, in), bias ? vector(out) : Vector()}; }
  LayerNormParams norm(int64_t n, double eps) { return {Vector::Ones(n), Vector::Zero(n), eps}; }
};

}  // namespace

Model make_preset_model(const std::string& preset, uint64_t seed) {
  Model m;
  m.config = preset_config(preset);
  m.directory = m.weights_path = "<preset " + preset + ">";
  const ModelConfig& c = m.config;
  Filler f{std::mt19937_64(seed)};
  const int64_t H = c.hidden_size, A = c.num_attention_heads * c.d_head();
  ModelWeights& w = m.weights;
  w.embeddings.word = f.matrix(c.vocab_size, H);
  w.embeddings.position = f.matrix(c.max_position_embeddings, H);
  w.embeddings.norm = f.norm(H, c.layer_norm_eps);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    LayerWeights layer;
    AttentionWeights& a = layer.attention;
    a.query = f.linear(A, H), a.key = f.linear(A, H, c.version == ModelVersion::V2), a.value = f.linear(A, H);
    if (c.share_att_key) {
      a.pos_key = a.key, a.pos_query = a.query;
    } else {
      a.pos_key = f.linear(A, H, c.version == ModelVersion::V2), a.pos_query = f.linear(A, H);
    }
    a.output = f.linear(H, A);
    a.output_norm = f.norm(H, c.layer_norm_eps);
    layer.intermediate = f.linear(c.intermediate_size, H);
    layer.output = f.linear(H, c.intermediate_size);
    layer.output_norm = f.norm(H, c.layer_norm_eps);
    w.layers.push_back(std::move(layer));
  }
  w.rel_embeddings = f.matrix(2 * c.relative_span(), H);
  if (c.norm_rel_layer_norm()) w.rel_norm = f.norm(H, c.layer_norm_eps);
  LMHeadWeights lm{f.linear(H, H), f.norm(H, c.layer_norm_eps), f.vector(c.vocab_size)};
  w.lm_head = std::move(lm);
  return m;
}

Inputs bench_inputs(const ModelConfig& config, int64_t n) {
  Inputs in;
  std::mt19937_64 rng(7);
  for (int64_t i = 0; i < n; ++i) in.input_ids.push_back(static_cast<int64_t>(rng() % config.vocab_size));
  return in;
}

std::vector<int64_t> bench_positions(int64_t n) {
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < n; i += 7) positions.push_back(i);
  return positions;
}

double forward_flops(const Model& model, int64_t n, int64_t masked, bool with_emd) {
  const ModelConfig& c = model.config;
  const double N = static_cast<double>(n), H = static_cast<double>(c.hidden_size),
               A = static_cast<double>(c.num_attention_heads * c.d_head()), I = static_cast<double>(c.intermediate_size),
               E = static_cast<double>(c.embedding_size), V = static_cast<double>(c.vocab_size);
  // Table rows one sequence reads: the distinct rows of δ over i − j ∈ (−N, N).
  double R = 0;
  if (c.relative_attention) {
    Inputs probe;
    probe.input_ids.assign(n, 0);
    const SequenceContext s = make_sequence_context(model, probe, {});
    R = static_cast<double>(s.row_hi - s.row_lo + 1);
  }
  const bool c2p = c.has_c2p(), p2c = c.has_p2c();
  double layer = 3 * 2 * N * H * A;              // Q_c, K_c, V_c
  // No K_r / Q_r products: the rows come from the model's table (ModelWorkspace), projected once.
  layer += 2 * N * N * A;                        // c2c
  layer += (c2p ? 2 * N * R * A : 0) + (p2c ? 2 * N * R * A : 0);  // c2p, p2c before the gather
  layer += 2 * N * N * A;                        // context = probs · V_c
  layer += 2 * N * A * H;                        // attention output dense
  layer += 2 * 2 * N * H * I;                    // feed-forward
  double total = c.num_hidden_layers * layer;
  if (E != H) total += 2 * N * E * H;
  if (c.conv_kernel_size > 0) total += 2 * N * H * (H / c.conv_groups) * c.conv_kernel_size;
  // The shared last layer, twice; its K_r / Q_r are the encoder's (project_positions).
  if (with_emd) total += 2 * layer;
  total += static_cast<double>(masked) * (2 * H * H + 2 * H * V);  // MLM head at masked positions
  return total;
}

}  // namespace deberta
