#include "deberta/tensor.h"

#include <cmath>
#include <cstring>

namespace deberta {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F64: return "F64";
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I64: return "I64";
    case DType::I32: return "I32";
    case DType::I16: return "I16";
    case DType::I8: return "I8";
    case DType::U8: return "U8";
    case DType::BOOL: return "BOOL";
  }
  return "?";
}

int dtype_size(DType dtype) {
  switch (dtype) {
    case DType::F64: case DType::I64: return 8;
    case DType::F32: case DType::I32: return 4;
    case DType::F16: case DType::BF16: case DType::I16: return 2;
    case DType::I8: case DType::U8: case DType::BOOL: return 1;
  }
  return 1;
}

bool dtype_is_integer(DType dtype) {
  return dtype == DType::I64 || dtype == DType::I32 || dtype == DType::I16 || dtype == DType::I8 ||
         dtype == DType::U8 || dtype == DType::BOOL;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string name_list(const std::vector<std::string>& names, size_t shown) {
  std::string list;
  for (size_t k = 0; k < names.size() && k < shown; ++k) list += (k ? ", " : "") + names[k];
  if (names.size() > shown) list += " and " + std::to_string(names.size() - shown) + " more";
  return list;
}

std::string Tensor::shape_string() const {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

Tensor Tensor::from_matrix(const Matrix& m, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = DType::F64;
  t.shape = shape.empty() ? std::vector<int64_t>{m.rows(), m.cols()} : std::move(shape);
  t.f.assign(m.data(), m.data() + m.size());
  return t;
}

Tensor Tensor::from_index(const IndexMatrix& m, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = DType::I64;
  t.shape = shape.empty() ? std::vector<int64_t>{m.rows(), m.cols()} : std::move(shape);
  t.i.assign(m.data(), m.data() + m.size());
  return t;
}

Tensor Tensor::from_vector(const Vector& v) {
  Tensor t;
  t.dtype = DType::F64;
  t.shape = {v.size()};
  t.f.assign(v.data(), v.data() + v.size());
  return t;
}

namespace {
void require_rank_le2(const Tensor& t, const std::string& name) {
  if (t.shape.size() > 2)
    throw Error(name + ": expected a tensor of rank 1 or 2, found shape " + t.shape_string());
}
}  // namespace

Matrix to_matrix(const Tensor& t, const std::string& name) {
  require_rank_le2(t, name);
  if (dtype_is_integer(t.dtype))
    throw Error(name + ": expected a floating-point tensor, found dtype " + dtype_name(t.dtype));
  const int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
  const int64_t cols = t.shape.empty() ? 1 : t.shape.back();
  return Eigen::Map<const Matrix>(t.f.data(), rows, cols);
}

IndexMatrix to_index_matrix(const Tensor& t, const std::string& name) {
  require_rank_le2(t, name);
  if (!dtype_is_integer(t.dtype))
    throw Error(name + ": expected an integer tensor, found dtype " + dtype_name(t.dtype));
  const int64_t rows = t.shape.size() == 2 ? t.shape[0] : 1;
  const int64_t cols = t.shape.empty() ? 1 : t.shape.back();
  return Eigen::Map<const IndexMatrix>(t.i.data(), rows, cols);
}

double half_to_double(uint16_t bits) {
  const int sign = (bits >> 15) & 1;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), -24);  // subnormal
  } else if (exponent == 0x1f) {
    value = mantissa ? std::nan("") : INFINITY;
  } else {
    value = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -value : value;
}

double bfloat16_to_double(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

}  // namespace deberta
