// stored_matrix.cpp — weights in the precision their checkpoint stored them in (weights.h,
// issue 60), and the exact widening of fp16 / bf16 / fp32 / fp64 bytes to float64 (tensor.h).
#include "deberta/tensor.h"
#include "deberta/weights.h"

#include <cmath>
#include <cstring>
#include <set>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace deberta {

namespace {

// The 65,536 halves as floats (exact: every half is a float), built once: 256 kB read by the
// packing of fp16 weights instead of an ldexp per value.
const float* half_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits) t[bits] = static_cast<float>(half_to_double(static_cast<uint16_t>(bits)));
    return t;
  }();
  return table.data();
}

}  // namespace

void widen_floats(DType dtype, const unsigned char* bytes, int64_t n, double* out) {
  if (n <= 0) return;  // an empty tensor: no bytes, and memcpy may not be given its null pointers
  switch (dtype) {
    case DType::F64: std::memcpy(out, bytes, static_cast<size_t>(n) * sizeof(double)); return;
    case DType::F32: {
      int64_t k = 0;
#if defined(__AVX__)
      // Four at a time (vcvtps2pd; exact): the tied decoder widens an fp32 word table's rows per
      // forward, 0.39 GB of them on a base model (issue 60, item 4).
      for (; k + 4 <= n; k += 4)
        _mm256_storeu_pd(out + k, _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(bytes + 4 * k))));
#endif
      for (; k < n; ++k) {
        float v;
        std::memcpy(&v, bytes + 4 * k, sizeof v);
        out[k] = v;
      }
      return;
    }
    case DType::F16: {
      int64_t k = 0;
#if defined(__F16C__) && defined(__AVX__)
      // Eight halves at a time by the CPU's own conversion (F16C's vcvtph2ps: exact, subnormal
      // halves included, whatever the flush modes), then to double (exact): about 6× the table's
      // speed, and the 256 kB table stays out of the cache the products use (issue 60, item 4).
      for (; k + 8 <= n; k += 8) {
        const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 2 * k)));
        _mm256_storeu_pd(out + k, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
        _mm256_storeu_pd(out + k + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
      }
      if (k == n) return;
#endif
      const float* table = half_table();
      for (; k < n; ++k) {
        uint16_t bits;
        std::memcpy(&bits, bytes + 2 * k, sizeof bits);
        out[k] = table[bits];
      }
      return;
    }
    case DType::BF16:
      for (int64_t k = 0; k < n; ++k) {
        uint16_t bits;
        std::memcpy(&bits, bytes + 2 * k, sizeof bits);
        const uint32_t wide = static_cast<uint32_t>(bits) << 16;  // bf16 is a float's top half
        float v;
        std::memcpy(&v, &wide, sizeof v);
        out[k] = v;
      }
      return;
    default: std::fill(out, out + n, 0.0); return;
  }
}

std::vector<double> float_values(const Tensor& t, const std::string& name) {
  if (dtype_is_integer(t.dtype))
    throw Error(name + ": expected a floating-point tensor, found dtype " + dtype_name(t.dtype));
  if (t.stored.empty()) return t.f;
  std::vector<double> out(static_cast<size_t>(t.numel()));
  widen_floats(t.dtype, t.stored.data(), t.numel(), out.data());
  return out;
}

int64_t non_finite_count(const Tensor& t) {
  int64_t bad = 0;
  for (double v : t.f) bad += !std::isfinite(v);
  if (t.stored.empty() || dtype_is_integer(t.dtype)) return bad;
  return bad + non_finite_count(t.dtype, t.stored.data(), static_cast<int64_t>(t.stored.size()) / dtype_size(t.dtype));
}

int64_t non_finite_count(DType dtype, const unsigned char* bytes, int64_t n) {
  // fp16, bf16 and fp32 by their bits: a value is NaN or ±Inf exactly when its exponent bits are
  // all ones (IEEE 754), so no value is widened (a base model's 184 M fp16 values: a few tens of
  // milliseconds in the page instead of most of a second; issue 55, item 4).
  int64_t bad = 0;
  if (dtype == DType::F16 || dtype == DType::BF16) {
    const uint16_t exponent = dtype == DType::F16 ? 0x7c00 : 0x7f80;
    for (int64_t k = 0; k < n; ++k) {
      uint16_t bits;
      std::memcpy(&bits, bytes + 2 * k, sizeof bits);
      bad += (bits & exponent) == exponent;
    }
    return bad;
  }
  if (dtype == DType::F32) {
    for (int64_t k = 0; k < n; ++k) {
      uint32_t bits;
      std::memcpy(&bits, bytes + 4 * k, sizeof bits);
      bad += (bits & 0x7f800000u) == 0x7f800000u;
    }
    return bad;
  }
  if (dtype != DType::F64) return 0;
  // F64 in chunks: the widened copy of a 0.4 GB table is never made whole.
  constexpr int64_t kChunk = 4096;
  double chunk[kChunk];
  for (int64_t first = 0; first < n; first += kChunk) {
    const int64_t count = std::min(kChunk, n - first);
    widen_floats(dtype, bytes + first * dtype_size(dtype), count, chunk);
    for (int64_t k = 0; k < count; ++k) bad += !std::isfinite(chunk[k]);
  }
  return bad;
}

// --- StoredMatrix --------------------------------------------------------------------------

StoredMatrix::StoredMatrix(const Matrix& m) : dtype_(DType::F64), rows_(m.rows()), cols_(m.cols()) {
  const auto* first = reinterpret_cast<const unsigned char*>(m.data());
  bytes_ = std::make_shared<const AlignedBytes>(first, first + m.size() * sizeof(double));
}

StoredMatrix::StoredMatrix(DType dtype, int64_t rows, int64_t cols, AlignedBytes bytes)
    : dtype_(dtype), rows_(rows), cols_(cols) {
  if (dtype_is_integer(dtype))
    throw Error(std::string("a weight matrix of integer dtype ") + dtype_name(dtype) + ": expected F64, F32, F16 or BF16");
  if (rows < 0 || cols < 0 || bytes.size() != static_cast<size_t>(rows) * static_cast<size_t>(cols) * dtype_size(dtype))
    throw Error("a weight matrix [" + std::to_string(rows) + ", " + std::to_string(cols) + "] of dtype " +
                dtype_name(dtype) + " given " + std::to_string(bytes.size()) + " bytes");
  bytes_ = std::make_shared<const AlignedBytes>(std::move(bytes));
}

void StoredMatrix::widen_rows(int64_t first, int64_t count, double* out) const {
  if (count <= 0 || cols_ == 0) return;
  widen_floats(dtype_, data() + static_cast<size_t>(first * cols_) * dtype_size(dtype_), count * cols_, out);
}

Matrix StoredMatrix::widened() const { return top_rows(rows_); }

Matrix StoredMatrix::top_rows(int64_t n) const {
  if (n < 0 || n > rows_)
    throw Error("the first " + std::to_string(n) + " rows of a weight matrix with " + std::to_string(rows_) + " rows");
  Matrix m(n, cols_);
  widen_rows(0, n, m.data());
  return m;
}

Eigen::RowVectorXd StoredMatrix::row(int64_t r) const {
  Eigen::RowVectorXd v(cols_);
  widen_rows(r, 1, v.data());
  return v;
}

double StoredMatrix::operator()(int64_t r, int64_t c) const {
  double v = 0;
  widen_floats(dtype_, data() + static_cast<size_t>(r * cols_ + c) * dtype_size(dtype_), 1, &v);
  return v;
}

StoredMatrix StoredMatrix::gather_rows(const std::vector<int64_t>& rows) const {
  const size_t row_bytes = static_cast<size_t>(cols_) * dtype_size(dtype_);
  AlignedBytes out(rows.size() * row_bytes);
  for (size_t k = 0; k < rows.size(); ++k)
    std::memcpy(out.data() + k * row_bytes, data() + static_cast<size_t>(rows[k]) * row_bytes, row_bytes);
  return StoredMatrix(dtype_, static_cast<int64_t>(rows.size()), cols_, std::move(out));
}

// --- every matrix of a model ------------------------------------------------------------------

namespace {
template <typename Visit>
void each_matrix(ModelWeights& w, Visit visit) {
  auto linear = [&](Linear& l) { visit(l.weight); };
  visit(w.embeddings.word), visit(w.embeddings.position), visit(w.embeddings.token_type);
  linear(w.embeddings.embed_proj);
  for (LayerWeights& layer : w.layers) {
    AttentionWeights& a = layer.attention;
    for (Linear* l : {&a.query, &a.key, &a.value, &a.pos_key, &a.pos_query, &a.output, &layer.intermediate, &layer.output})
      linear(*l);
  }
  visit(w.rel_embeddings);
  if (w.lm_head) linear(w.lm_head->dense);
  if (w.rtd_head) linear(w.rtd_head->dense), linear(w.rtd_head->classifier);
  if (w.seq_classifier) linear(w.seq_classifier->pooler), linear(w.seq_classifier->classifier);
  if (w.token_classifier) linear(w.token_classifier->classifier);
}

size_t vector_bytes(const Vector& v) { return static_cast<size_t>(v.size()) * sizeof(double); }
size_t norm_bytes(const LayerNormParams& p) { return vector_bytes(p.weight) + vector_bytes(p.bias); }
}  // namespace

void widen_weights(ModelWeights* w) {
  // Shared bytes (share_att_key's copies) stay shared: each storage is widened once.
  std::vector<std::pair<const unsigned char*, StoredMatrix>> done;
  each_matrix(*w, [&](StoredMatrix& m) {
    if (m.dtype() == DType::F64 || m.size() == 0) return;
    for (const auto& [from, wide] : done)
      if (from == m.data() && wide.rows() == m.rows()) return void(m = wide);
    const unsigned char* from = m.data();
    m = StoredMatrix(m.widened());
    done.emplace_back(from, m);
  });
}

size_t weight_bytes(const ModelWeights& w) {
  size_t total = 0;
  std::set<const unsigned char*> seen;
  each_matrix(const_cast<ModelWeights&>(w), [&](StoredMatrix& m) {
    if (m.size() > 0 && seen.insert(m.data()).second) total += m.bytes();
  });
  auto linear_bias = [&](const Linear& l) { total += vector_bytes(l.bias); };
  total += norm_bytes(w.embeddings.norm);
  for (const LayerWeights& layer : w.layers) {
    const AttentionWeights& a = layer.attention;
    for (const Linear* l : {&a.query, &a.key, &a.value, &a.pos_key, &a.pos_query, &a.output, &layer.intermediate, &layer.output})
      linear_bias(*l);
    total += norm_bytes(a.output_norm) + norm_bytes(layer.output_norm);
  }
  if (w.rel_norm) total += norm_bytes(*w.rel_norm);
  if (w.conv) {
    for (const Matrix& tap : w.conv->taps) total += static_cast<size_t>(tap.size()) * sizeof(double);
    total += vector_bytes(w.conv->bias) + norm_bytes(w.conv->norm);
  }
  if (w.lm_head) total += vector_bytes(w.lm_head->bias) + vector_bytes(w.lm_head->dense.bias) + norm_bytes(w.lm_head->norm);
  return total;
}

}  // namespace deberta
