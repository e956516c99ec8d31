// config.h — the model hyper-parameters, read from a Hugging Face `config.json`.
//
// Covers `model_type` "deberta" (v1, `DebertaConfig`) and "deberta-v2" (v2 and v3,
// `DebertaV2Config`) with the defaults of Hugging Face transformers v4.27 for every key the
// reference implementations read.
#pragma once

#include "deberta/tensor.h"
#include "deberta/terms.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace deberta {

/// Which reference implementation a config belongs to.
enum class ModelVersion {
  V1,  ///< `model_type` "deberta": fused `in_proj`, `q_bias`/`v_bias`, no log buckets.
  V2,  ///< `model_type` "deberta-v2" (also DeBERTa-v3): separate projections, log buckets, nGiE.
};

/// Activation functions named by `hidden_act` / `conv_act`.
enum class Activation {
  GeluErf,   ///< "gelu", "gelu_python": x·Φ(x) with the exact erf form.
  GeluTanh,  ///< "gelu_new", "gelu_pytorch_tanh": tanh approximation with √(2/π).
  GeluFast,  ///< "gelu_fast": the tanh approximation with HF's truncated constant 0.7978845608.
  QuickGelu, ///< "quick_gelu": x·σ(1.702x).
  Relu,      ///< "relu"
  Relu6,     ///< "relu6": min(max(x, 0), 6)
  Tanh,      ///< "tanh" (the default `conv_act` of v2)
  Sigmoid,   ///< "sigmoid"
  Silu,      ///< "silu", "swish"
  Mish,      ///< "mish": x·tanh(softplus(x))
  Linear,    ///< "linear": identity
  GeluClip10,  ///< "gelu_10": clip(x·Φ(x), −10, 10) (HF's ClippedGELUActivation(−10, 10))
};

/// Parses an activation name; errors name `source` and the unknown value.
Activation parse_activation(const std::string& name, const std::string& source);

/// Hyper-parameters of one model. Field names are Hugging Face's config keys.
struct ModelConfig {
  std::string model_type;  ///< "deberta" or "deberta-v2"
  ModelVersion version = ModelVersion::V2;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t attention_head_size = 64;  ///< d = hidden_size / heads unless set explicitly (v2)
  int64_t intermediate_size = 3072;
  std::string hidden_act_name = "gelu";
  Activation hidden_act = Activation::GeluErf;
  double layer_norm_eps = 1e-7;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 0;
  bool position_biased_input = true;
  bool relative_attention = false;
  /// Resolved: a config value < 1 means `max_position_embeddings`.
  int64_t max_relative_positions = 512;
  /// Entries of `pos_att_type`, lower case, in file order ("c2p", "p2c", "p2p").
  std::vector<std::string> pos_att_type;
  int64_t position_buckets = -1;  ///< v2 log buckets; <= 0 means no bucketing
  bool share_att_key = false;     ///< v2: K_r/Q_r use key_proj/query_proj
  std::vector<std::string> norm_rel_ebd;  ///< v2: e.g. {"layer_norm"}; {"none"} by default
  int64_t conv_kernel_size = 0;           ///< v2 nGiE: 0 means no conv layer
  std::string conv_act_name = "tanh";
  Activation conv_act = Activation::Tanh;
  int64_t conv_groups = 1;
  int64_t embedding_size = 768;  ///< word-embedding width (= hidden_size unless set)
  int64_t pad_token_id = 0;
  /// `architectures` (e.g. {"DebertaV2ForSequenceClassification"}); empty when the key is absent
  /// (published v3 pre-training configs carry none). `select_head` / `available_heads` read it.
  std::vector<std::string> architectures;
  /// Label names by id, as Hugging Face's PretrainedConfig builds them: from `id2label`
  /// (`{"0": "CONTRADICTION", ...}`, keys 0 … C−1), else `num_labels` names "LABEL_i", else two
  /// ("LABEL_0", "LABEL_1"). C = num_labels = 1 means regression. Only classifier heads use it.
  std::vector<std::string> id2label = {"LABEL_0", "LABEL_1"};
  bool has_id2label = false;  ///< true when `id2label` was in the file
  /// Sequence classifier (`ContextPooler`): `pooler_hidden_size` (default hidden_size) and
  /// `pooler_hidden_act` (an ACT2FN name, default "gelu").
  int64_t pooler_hidden_size = 768;
  std::string pooler_hidden_act_name = "gelu";
  Activation pooler_hidden_act = Activation::GeluErf;
  /// Project keys (config.json `"deberta_explorer": {...}`): how a model of the trained-ablation
  /// zoo (docs/table4.md) was trained where Hugging Face's keys cannot say it. The forward pass
  /// runs the model exactly so unless an `Ablation` overrides it.
  bool trained_with_p2p = false;        ///< `"p2p": true`: the fourth term of eq. 2 was on in training
  bool trained_with_paper_p2c = false;  ///< `"p2c_index": "paper"`: p2c read δ(j, i) in training
  /// `"emd_position": false`: the EMD's query is I_0 = H instead of the paper's H + P (section 3.2);
  /// the decoder's two applications of the last layer run without any absolute position, and the
  /// model needs no position table (the zoo's depth-matched -EMD control, docs/table4.md). With
  /// `position_biased_input` as well, the decoder still runs (I_0 = H, the positions having entered
  /// at the input): the zoo's "-EMD, positions at input, depth-matched" control.
  bool emd_position = true;

  /// True if `pos_att_type` lists `term` ("c2p", "p2c", "p2p").
  bool uses(const std::string& term) const;
  /// Whether the model has relative attention with a c2p / p2c term at all.
  bool has_c2p() const { return relative_attention && uses("c2p"); }
  bool has_p2c() const { return relative_attention && uses("p2c"); }
  /// Whether the model runs `term` when nothing is switched: c2c always, c2p / p2c as
  /// `has_c2p` / `has_p2c`, p2p as `trained_with_p2p`.
  bool trained_with(Term term) const;
  /// Width of one head, d.
  int64_t d_head() const { return attention_head_size; }
  /// k: half the number of rows of the relative table (`position_buckets` if > 0 in v2,
  /// else `max_relative_positions`). The table has 2k rows.
  int64_t relative_span() const;
  /// True when relative positions are log-bucketed (v2 with `position_buckets` > 0).
  bool log_buckets() const { return version == ModelVersion::V2 && position_buckets > 0; }
  /// True when the relative table is LayerNorm-ed (`norm_rel_ebd` contains "layer_norm").
  bool norm_rel_layer_norm() const;
  /// The scale factor the reference code uses: v1 `1 + len(pos_att_type)`; v2 `1 + [c2p] + [p2c]`.
  double reference_scale_factor() const;
  /// One-line description, e.g. "deberta-v2, 3 layers, H=32, 2 heads of 16, k=8 (buckets)".
  std::string summary() const;
};

/// Builds a config from parsed JSON; `source` names the file in errors.
/// Errors: unknown `model_type`, wrong JSON types, non-positive sizes, hidden size not divisible
/// by heads, unknown `pos_att_type` or activation, inconsistent v2 keys.
ModelConfig parse_config(const nlohmann::json& j, const std::string& source);


}  // namespace deberta
