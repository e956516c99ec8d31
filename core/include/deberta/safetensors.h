// safetensors.h — reader and writer of the safetensors format.
//
// Layout: 8-byte little-endian header length n, n bytes of JSON
// `{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`, then the
// data; offsets are relative to the end of the header. The reader validates everything before it
// touches data, like the reference loader: header size bound, JSON shape of every entry, known
// dtype, dtype × shape = byte length (with 64-bit overflow checks), offsets inside the file, and
// no two tensors overlapping.
#pragma once

#include "deberta/tensor.h"

#include <fstream>
#include <memory>
#include <string>

namespace deberta {

/// Upper bound on the JSON header (the reference implementation uses 100 MB).
constexpr uint64_t kMaxSafetensorsHeader = 100ull * 1000 * 1000;
/// Upper bound on the tensors one file may list (real checkpoints hold a few thousand).
constexpr size_t kMaxSafetensorsTensors = 100000;

/// Reads every tensor of a safetensors file, widening floats to double and ints to int64.
/// Errors (`Error`, message starts with `path`): unreadable file, truncated or oversized header,
/// header not JSON or of the wrong form, unknown dtype, negative dims, byte length mismatch,
/// out-of-bounds or overlapping offsets.
TensorMap read_safetensors(const std::string& path);

/// Where a reader's bytes come from when they are not in a file of the file system: the web page
/// hands over slices of a browser File, read asynchronously (viewer/web/page/web_stream.cpp), so the
/// file is never copied whole into the page's memory.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// The source's length in bytes.
  virtual uint64_t size() const = 0;
  /// The `n` bytes at `offset`, valid until the next call, or nullptr when the source has not got
  /// them yet: it then throws `BytesPending` and fetches them (a caller tries again later).
  /// Errors: `BytesPending`; `Error` naming the source when the bytes cannot be had.
  virtual const char* bytes(uint64_t offset, uint64_t n) = 0;
};

/// Thrown by a `ByteSource` whose bytes are still on their way: nothing was read or changed, and
/// the same call succeeds once they have come (`ModelLoadSteps::step` returns and runs again).
class BytesPending : public Error {
 public:
  using Error::Error;
};

/// Makes readers that open `path` read from `source` instead of the file system (a safetensors
/// reader opened on `path` reads its header and tensors through `source.bytes`); a null `source`
/// removes the entry. The web page registers each model.safetensors it streams.
void register_byte_source(const std::string& path, std::shared_ptr<ByteSource> source);
/// The source registered for `path`, or null.
std::shared_ptr<ByteSource> registered_byte_source(const std::string& path);

/// A safetensors file opened for reading tensor by tensor: the header is parsed and checked at
/// once (the errors of `read_safetensors`), a tensor's bytes are read only when `load` asks for
/// them. The model loader reads just the tensors a model uses (issue 28, class 7: a 2 GB tensor
/// nobody uses is never read). A path with a registered `ByteSource` is read through it.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);
  /// Every tensor's dtype and shape, in name order; `f` / `i` are empty.
  const TensorMap& index() const { return index_; }
  /// Reads the values of tensor `name` into `t`: widened as `read_safetensors` does, or with
  /// `keep_stored` a floating tensor's bytes as the file has them into `t->stored` (fp16 stays 2
  /// bytes a value: the model loader, issue 60). Errors: an unknown name; a read error, naming the
  /// file and the tensor; `BytesPending` from a byte source (then `t` is unchanged).
  void load(const std::string& name, Tensor* t, bool keep_stored = false);
  /// The length in bytes of tensor `name`'s values in the file. Errors: an unknown name.
  uint64_t byte_size(const std::string& name) const;
  /// Reads bytes [from, to) of floating tensor `name`'s values, as the file has them, into
  /// `t->stored[from, to)`; `t->stored` gets room for the whole tensor at the first call and grows
  /// to at least `to` bytes (the bytes between its old end and `from` are zeros until read). Reading
  /// every piece in turn gives the bytes `load(name, t, true)` gives (the web page reads a base
  /// model's embedding table so, a frame a piece: issue 55, item 4). Errors: an unknown name, an
  /// integer tensor, a range outside the tensor (`Error`, naming the file and the tensor); a read
  /// error; `BytesPending` from a byte source (then `t` is unchanged).
  void load_stored_range(const std::string& name, Tensor* t, uint64_t from, uint64_t to);

 private:
  std::string path_;
  std::ifstream in_;
  std::shared_ptr<ByteSource> source_;  ///< set when the path has a registered source
  uint64_t data_start_ = 0;
  TensorMap index_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> where_;  ///< name → [begin, end) in the data
};

/// Parses safetensors from bytes already in memory; `source` names them in errors.
TensorMap parse_safetensors(const std::string& bytes, const std::string& source);

/// Writes tensors (F64 from `Tensor::f`, I64 from `Tensor::i`) with optional string metadata.
/// Errors: the file cannot be written.
void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace deberta
