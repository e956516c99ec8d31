// weights.h — typed model parameters, mapped from Hugging Face state-dict names.
//
// Every linear layer is stored as PyTorch stores it, `weight [out, in]` and `bias [out]`, and
// applied as y = x Wᵀ + b. v1's fused `in_proj` is split per head into the same three
// projections v2 has, so the equations see one layout for both versions.
//
// The matrices (every Linear's W, the embedding tables, the relative table) stay in the precision
// the checkpoint stored them in (`StoredMatrix`: fp16, bf16, fp32 or fp64); each engine widens
// them to float64 where it reads them (issue 60). Widening is exact, so the numbers are those of a
// model widened at load (`widen_weights`). Vectors (biases, LayerNorm gains: O(L·H) values) and the
// nGiE convolution's taps (~1% of a v2 model) are widened at load.
#pragma once

#include "deberta/config.h"
#include "deberta/tensor.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace deberta {

/// A weight matrix `[rows, cols]`, row-major, in its stored floating dtype (F64, F32, F16, BF16).
/// Copies share the bytes (v2's share_att_key copies K_c's projection into K_r's, say): the bytes
/// are never changed in place; assigning a new matrix gives new bytes. A `Matrix` converts to an
/// F64 one (tests and synthetic models build weights so).
class StoredMatrix {
 public:
  StoredMatrix() = default;
  /// An F64 copy of `m` `[rows, cols]`. No errors.
  StoredMatrix(const Matrix& m);  // NOLINT(google-explicit-constructor): weights are assigned matrices
  /// An F64 copy of a matrix expression (`Matrix::Random(r, c)`, `W * 2`). No errors.
  template <typename Derived>
  StoredMatrix(const Eigen::MatrixBase<Derived>& m) : StoredMatrix(Matrix(m)) {}  // NOLINT(google-explicit-constructor)
  /// `[rows, cols]` of `dtype` from its little-endian bytes (`rows · cols · dtype_size`, moved in).
  /// Errors: an integer dtype, or a byte count that does not match.
  StoredMatrix(DType dtype, int64_t rows, int64_t cols, AlignedBytes bytes);

  DType dtype() const { return dtype_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  /// Bytes held (`size() · dtype_size`).
  size_t bytes() const { return static_cast<size_t>(size()) * static_cast<size_t>(dtype_size(dtype_)); }
  /// The first byte (null when empty): identifies the storage (a packed copy checks it).
  const unsigned char* data() const { return bytes_ ? bytes_->data() : nullptr; }
  /// The values in place when the dtype is F64 (row-major, row stride `cols()`), else null.
  const double* f64() const { return dtype_ == DType::F64 ? reinterpret_cast<const double*>(data()) : nullptr; }

  /// Rows [first, first + count) widened to float64 into `out` `[count, cols]` (row stride
  /// `cols()`). Exact. No errors (the caller keeps the rows in range).
  void widen_rows(int64_t first, int64_t count, double* out) const;
  /// The whole matrix widened to float64 `[rows, cols]`.
  Matrix widened() const;
  /// The first `n` rows widened `[n, cols]`. Errors: n > rows().
  Matrix top_rows(int64_t n) const;
  /// Row `r` widened `[1, cols]`. No errors (the caller keeps r in range).
  Eigen::RowVectorXd row(int64_t r) const;
  /// Entry (r, c) widened. No errors (the caller keeps (r, c) in range).
  double operator()(int64_t r, int64_t c) const;
  /// The given rows, in that order, in the same dtype (v1's `in_proj` split per head). No errors
  /// (the caller keeps the rows in range).
  StoredMatrix gather_rows(const std::vector<int64_t>& rows) const;

 private:
  DType dtype_ = DType::F64;
  int64_t rows_ = 0, cols_ = 0;
  std::shared_ptr<const AlignedBytes> bytes_;
};

/// A linear map `y = x Wᵀ + b`: weight `[out, in]`, bias `[out]` (empty when the layer has none).
struct Linear {
  StoredMatrix weight;
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
  StoredMatrix word;        ///< `[V, E]`
  StoredMatrix position;    ///< `[P, E]`, empty when the checkpoint has none
  StoredMatrix token_type;  ///< `[T, E]`, empty when type_vocab_size = 0
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
  StoredMatrix rel_embeddings;          ///< `encoder.rel_embeddings.weight` `[2k, H]` (raw)
  std::optional<LayerNormParams> rel_norm;  ///< `encoder.LayerNorm` (v2, norm_rel_ebd = layer_norm)
  std::optional<ConvWeights> conv;      ///< `encoder.conv` (v2, conv_kernel_size > 0)
  std::optional<LMHeadWeights> lm_head; ///< `lm_predictions.lm_head.*` or `cls.predictions.*`
  std::optional<RTDHeadWeights> rtd_head;                ///< `mask_predictions.*`
  std::optional<SequenceClassifierWeights> seq_classifier;  ///< `pooler.dense.*` + `classifier.*`
  std::optional<TokenClassifierWeights> token_classifier;   ///< `classifier.*` without a pooler
  std::vector<std::string> unused;      ///< checkpoint tensors not used by the model
  std::vector<std::string> warnings;    ///< e.g. "tensor X holds 3 NaN/Inf values"
};

/// Every `StoredMatrix` of `w` widened to F64 in place: the weights a model had when every value
/// was widened at load (before issue 60), kept for comparison (`LoadOptions::widen_weights`,
/// model_io.h; tests/test_stored_weights.cpp). Memory: 8 bytes per value. Errors: std::bad_alloc.
void widen_weights(ModelWeights* w);

/// Bytes held by the matrices of `w` (`StoredMatrix::bytes`, shared bytes counted once) and by its
/// float64 vectors and convolution taps. No errors.
size_t weight_bytes(const ModelWeights& w);

// Filling these structs from a checkpoint's names: map_weights.h (the model layer).

}  // namespace deberta
