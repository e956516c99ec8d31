// weights.h — typed model parameters, mapped from Hugging Face state-dict names.
//
// Every linear layer is stored as PyTorch stores it, `weight [out, in]` and `bias [out]`, and
// applied as y = x Wᵀ + b. v1's fused `in_proj` is split per head into the same three
// projections v2 has, so the equations see one layout for both versions.
#pragma once

#include "deberta/config.h"
#include "deberta/tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace deberta {

/// A linear map `y = x Wᵀ + b`: weight `[out, in]`, bias `[out]` (empty when the layer has none).
struct Linear {
  Matrix weight;
  Vector bias;
  bool empty() const { return weight.size() == 0; }
  // Applied by `deberta::linear` (equations.h), through the backend's ops: this layer holds data.
};

/// LayerNorm parameters: gain and bias `[H]`, and epsilon.
struct LayerNormParams {
  Vector weight;
  Vector bias;
  double eps = 1e-7;
};

/// Self-attention weights of one layer (all heads; head h owns features h·d … h·d+d-1).
struct AttentionWeights {
  Linear query;      ///< W_q,c `[h·d, H]` (v1: rows of `in_proj`, bias `q_bias`)
  Linear key;        ///< W_k,c `[h·d, H]` (v1: no bias)
  Linear value;      ///< W_v,c `[h·d, H]` (v1: bias `v_bias`)
  Linear pos_key;    ///< W_k,r for K_r (c2p): v1 `pos_proj` (no bias); v2 `pos_key_proj` or `key_proj`
  Linear pos_query;  ///< W_q,r for Q_r (p2c): v1 `pos_q_proj`; v2 `pos_query_proj` or `query_proj`
  Linear output;     ///< `attention.output.dense` `[H, h·d]`
  LayerNormParams output_norm;  ///< `attention.output.LayerNorm`
};

/// One transformer layer.
struct LayerWeights {
  AttentionWeights attention;
  Linear intermediate;  ///< `intermediate.dense` `[I, H]`
  Linear output;        ///< `output.dense` `[H, I]`
  LayerNormParams output_norm;  ///< `output.LayerNorm`
};

/// v2 nGiE convolution (`encoder.conv`): `taps[t]` is the weight slice `[H, H/groups]` of tap t.
struct ConvWeights {
  std::vector<Matrix> taps;  ///< kernel_size matrices `[H_out, H_in/groups]`
  Vector bias;               ///< `[H]`
  LayerNormParams norm;      ///< `encoder.conv.LayerNorm`
};

/// Embedding tables.
struct EmbeddingWeights {
  Matrix word;           ///< `[V, E]`
  Matrix position;       ///< `[P, E]`, empty when the checkpoint has none
  Matrix token_type;     ///< `[T, E]`, empty when type_vocab_size = 0
  Linear embed_proj;     ///< `[H, E]` without bias, only when E != H
  LayerNormParams norm;  ///< `embeddings.LayerNorm`
};

/// Masked-LM head: dense → activation → LayerNorm → tied word embeddings + bias.
struct LMHeadWeights {
  Linear dense;          ///< `[E, H]` (E = embedding_size)
  LayerNormParams norm;  ///< `[E]`
  Vector bias;           ///< `[V]`
  bool hf_names = false; ///< read from Hugging Face's `cls.predictions.*` (DebertaForMaskedLM: no EMD)
};

// Task heads (heads.h has the functions that apply them; the structs live here because
// `ModelWeights` holds them and they are read by the same name-checking map as the encoder).

/// Replaced-token-detection head of the DeBERTa-v3 discriminator (microsoft/DeBERTa
/// `LMMaskPredictionHead`, weights `mask_predictions.*`): LayerNorm `[H]`, dense `[H, H]`,
/// classifier `[1, H]` + `[1]`.
struct RTDHeadWeights {
  LayerNormParams norm;  ///< `mask_predictions.LayerNorm`
  Linear dense;          ///< `mask_predictions.dense`
  Linear classifier;     ///< `mask_predictions.classifier`
};

/// Sequence classifier (Hugging Face `Deberta(V2)ForSequenceClassification`): `ContextPooler`
/// dense `[P, P]` on token 0, then `classifier` `[C, P]` (P = pooler_hidden_size, C = num_labels).
struct SequenceClassifierWeights {
  Linear pooler;      ///< `pooler.dense`
  Linear classifier;  ///< `classifier`
};

/// Token classifier (`DebertaV2ForTokenClassification`): `classifier` `[C, H]` on every position.
struct TokenClassifierWeights {
  Linear classifier;  ///< `classifier`
};

/// All parameters of a model.
struct ModelWeights {
  EmbeddingWeights embeddings;
  std::vector<LayerWeights> layers;
  Matrix rel_embeddings;                ///< `encoder.rel_embeddings.weight` `[2k, H]` (raw)
  std::optional<LayerNormParams> rel_norm;  ///< `encoder.LayerNorm` (v2, norm_rel_ebd = layer_norm)
  std::optional<ConvWeights> conv;      ///< `encoder.conv` (v2, conv_kernel_size > 0)
  std::optional<LMHeadWeights> lm_head; ///< `lm_predictions.lm_head.*` or `cls.predictions.*`
  std::optional<RTDHeadWeights> rtd_head;                ///< `mask_predictions.*`
  std::optional<SequenceClassifierWeights> seq_classifier;  ///< `pooler.dense.*` + `classifier.*`
  std::optional<TokenClassifierWeights> token_classifier;   ///< `classifier.*` without a pooler
  std::vector<std::string> unused;      ///< checkpoint tensors not used by the model
  std::vector<std::string> warnings;    ///< e.g. "tensor X holds 3 NaN/Inf values"
};

// Filling these structs from a checkpoint's names: map_weights.h (the model layer).

}  // namespace deberta
