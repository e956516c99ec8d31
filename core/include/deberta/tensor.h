// tensor.h — the numeric types the whole core speaks, and the one error type it throws.
//
// Matrices are row-major float64 (`Matrix`), the layout of safetensors and PyTorch, so a
// tensor `[N, H]` read from a file is `Matrix(N, H)` with no transposition. A `Tensor` is the
// file-level object (any dtype, any rank) that readers produce and writers consume; model code
// converts it once into typed weights.
#pragma once

#include <Eigen/Dense>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace deberta {

/// Row-major float64 matrix: `[rows, cols]`, the layout of safetensors/PyTorch tensors.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// Column vector of float64, used for biases and LayerNorm gains `[H]`.
using Vector = Eigen::VectorXd;
/// Row-major int64 matrix, used for relative positions and table rows `[N, N]`.
using IndexMatrix = Eigen::Matrix<int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// The single exception type of the core. `what()` is one line naming the file or object
/// concerned and the problem, ready to print to a user.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An `Error` saying that a file or folder the caller named does not exist (a model directory, its
/// config.json or weights, a data file). Frontends may tell it apart: the Python module raises it
/// as a FileNotFoundError.
class FileNotFound : public Error {
 public:
  using Error::Error;
};

/// An `Error` about a value the caller passed rather than a file: token ids outside the vocabulary,
/// lengths that do not match, masked positions outside the input, a sequence longer than the
/// model's positions. The Python module raises it as a ValueError.
class InvalidInput : public Error {
 public:
  using Error::Error;
};

/// A message-sized list of names: the first `shown` joined by ", ", then "and N more". Every
/// error and warning that lists names uses it, so a hostile file cannot make a message longer
/// than a few lines (issue 28, class 5).
std::string name_list(const std::vector<std::string>& names, size_t shown = 5);

/// Element types of tensor files (safetensors names).
enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

/// Name of a dtype as safetensors writes it ("F64", ...).
const char* dtype_name(DType dtype);
/// Size in bytes of one element.
int dtype_size(DType dtype);
/// True for the integer and bool dtypes.
bool dtype_is_integer(DType dtype);

/// Bytes aligned as Eigen aligns a `Matrix` (EIGEN_MAX_ALIGN_BYTES): float64 values stored there
/// are read by Eigen exactly as a matrix's would be (the reference backend maps them in place).
using AlignedBytes = std::vector<unsigned char, Eigen::aligned_allocator<unsigned char>>;

/// A tensor as stored in a file: dtype of origin, shape, and its values widened to double
/// (floating dtypes) or int64 (integer dtypes). Exactly one of `f`/`i` is filled — or, for a
/// floating tensor read by a reader asked to keep the file's precision (the model loader,
/// `SafetensorsReader::load`), `stored` holds its bytes as the file has them (little-endian,
/// `numel · dtype_size` bytes) and `f` is empty.
struct Tensor {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  std::vector<double> f;
  std::vector<int64_t> i;
  AlignedBytes stored;

  /// Number of elements (product of `shape`; 1 for a scalar).
  int64_t numel() const;
  /// Shape as text, e.g. "[3, 9, 9]".
  std::string shape_string() const;

  /// A float64 tensor of the given shape taking the values of `m` (row-major).
  static Tensor from_matrix(const Matrix& m, std::vector<int64_t> shape = {});
  /// An int64 tensor of the given shape taking the values of `m` (row-major).
  static Tensor from_index(const IndexMatrix& m, std::vector<int64_t> shape = {});
  /// A float64 tensor `[n]` from a vector.
  static Tensor from_vector(const Vector& v);
};

/// Tensors by name, in name order (the order safetensors headers list them).
using TensorMap = std::map<std::string, Tensor>;

/// The float values of a rank-1 or rank-2 tensor as a matrix (`[n]` becomes `[1, n]`).
/// Errors: integer dtype or rank > 2 (`name` is used in the message).
Matrix to_matrix(const Tensor& t, const std::string& name);
/// The integer values of a rank-1 or rank-2 tensor as an index matrix (`[n]` becomes `[1, n]`).
IndexMatrix to_index_matrix(const Tensor& t, const std::string& name);

/// The float values of a floating tensor, widened to double: `f` itself, or `stored` widened.
/// Errors: an integer dtype (`name` is used in the message).
std::vector<double> float_values(const Tensor& t, const std::string& name);
/// How many of a floating tensor's values are NaN or ±Inf (from `f` or `stored`). No errors.
int64_t non_finite_count(const Tensor& t);
/// How many of the `n` little-endian values of floating dtype `dtype` at `bytes` are NaN or ±Inf,
/// read by their exponent bits (IEEE 754; F64 widened in chunks). No errors (an integer dtype: 0).
int64_t non_finite_count(DType dtype, const unsigned char* bytes, int64_t n);

/// Widens `n` little-endian values of floating dtype `dtype` (F64, F32, F16, BF16) at `bytes` into
/// `out[0 .. n)`, exactly (every fp16, bf16 and fp32 value is a double). F16 by the CPU's F16C
/// conversion where the build has it (x86 with -march=native), else through a table of the 65,536
/// halves built once. No errors (an integer dtype is the caller's mistake: zeros).
void widen_floats(DType dtype, const unsigned char* bytes, int64_t n, double* out);

/// IEEE half (binary16) bits to double, exact.
double half_to_double(uint16_t bits);
/// bfloat16 bits to double, exact.
double bfloat16_to_double(uint16_t bits);

}  // namespace deberta
