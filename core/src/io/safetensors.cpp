#include "deberta/safetensors.h"

#include "deberta/output_file.h"

#include "deberta/file_limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace deberta {
namespace {

using nlohmann::json;

bool parse_dtype(const std::string& s, DType* out) {
  static const std::pair<const char*, DType> kNames[] = {
      {"F64", DType::F64}, {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16},
      {"I64", DType::I64}, {"I32", DType::I32}, {"I16", DType::I16}, {"I8", DType::I8},
      {"U8", DType::U8},   {"BOOL", DType::BOOL}};
  for (const auto& [name, dtype] : kNames) {
    if (s == name) {
      *out = dtype;
      return true;
    }
  }
  return false;
}

template <typename T>
T load_le(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // x86-64 and aarch64 are little-endian, as the format
  return v;
}

// Converts `n` elements at `p` of `dtype` into the tensor's f or i storage.
void decode(const char* p, int64_t n, Tensor* t) {
  if (dtype_is_integer(t->dtype)) {
    t->i.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      switch (t->dtype) {
        case DType::I64: t->i[k] = load_le<int64_t>(p + 8 * k); break;
        case DType::I32: t->i[k] = load_le<int32_t>(p + 4 * k); break;
        case DType::I16: t->i[k] = load_le<int16_t>(p + 2 * k); break;
        case DType::I8: t->i[k] = load_le<int8_t>(p + k); break;
        default: t->i[k] = load_le<uint8_t>(p + k); break;  // U8, BOOL
      }
    }
    return;
  }
  t->f.resize(n);
  widen_floats(t->dtype, reinterpret_cast<const unsigned char*>(p), n, t->f.data());
}

}  // namespace

namespace {

// A validated header entry: where the bytes of one tensor live.
struct Entry {
  std::string name;
  Tensor meta;  // dtype and shape, no data yet
  uint64_t begin = 0, end = 0;
};

// Validates the 8-byte length prefix against the file size; returns the header length.
uint64_t check_prefix(const char* prefix, uint64_t file_size, const std::string& source) {
  if (file_size < 8)
    throw Error(source + ": not a valid safetensors file: file is " + std::to_string(file_size) +
                " bytes, shorter than the 8-byte header length");
  const uint64_t header_len = load_le<uint64_t>(prefix);
  if (header_len > kMaxSafetensorsHeader)
    throw Error(source + ": not a valid safetensors file: header length " + std::to_string(header_len) +
                " exceeds the 100 MB limit");
  if (header_len > file_size - 8)
    throw Error(source + ": not a valid safetensors file: header length " + std::to_string(header_len) +
                " is larger than the file (" + std::to_string(file_size) + " bytes)");
  return header_len;
}

// Reads the JSON header event by event (nlohmann's SAX interface) straight into Entry records:
// no JSON tree is built, so an 83 MB header costs about its own size, not gigabytes (issue 28,
// class 9). The form is fixed: {"name": {"dtype": S, "shape": [n...], "data_offsets": [b, e]},
// ..., "__metadata__": {...}}; metadata values are skipped.
class HeaderReader : public nlohmann::json_sax<json> {
 public:
  HeaderReader(uint64_t data_size, const std::string& source) : data_size_(data_size), source_(source) {}
  std::vector<Entry> entries;

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t v) override { return integer(v < 0 ? -1 : static_cast<int64_t>(v), v < 0); }
  bool number_unsigned(number_unsigned_t v) override {
    return integer(v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? -1 : static_cast<int64_t>(v), false,
                   v);
  }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }
  bool string(string_t& v) override {
    if (skip_) return true;
    if (depth_ == 2 && !in_metadata_ && field_ == Field::DType) {
      dtype_text_ = v;
      has_dtype_ = true;
      return true;
    }
    return scalar();
  }
  bool start_object(std::size_t) override {
    ++depth_;
    if (skip_) return true;
    if (depth_ == 1) return true;
    if (depth_ == 2 && in_metadata_) return true;
    if (depth_ == 2) {
      entry_ = Entry();
      entry_.name = name_;
      field_ = Field::Other;
      has_dtype_ = has_shape_ = false;
      offsets_.clear();
      offsets_given_ = false;
      numel_ = 1;
      entry_keys_.clear();
      return true;
    }
    if (depth_ == 4) return nested_in_list();
    return skip_value();
  }
  bool end_object() override {
    --depth_;
    if (skip_ && depth_ < skip_depth_) skip_ = false;
    if (depth_ == 1 && !in_metadata_) finish_entry();
    if (depth_ == 1) in_metadata_ = false;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    if (skip_) return true;
    if (depth_ == 1) throw fail("header is not a JSON object");
    if (depth_ == 2 && !in_metadata_) throw bad("entry is not an object");
    if (depth_ == 3 && field_ == Field::Shape) return has_shape_ = true;
    if (depth_ == 3 && field_ == Field::Offsets) return offsets_given_ = true;
    if (depth_ == 4) return nested_in_list();
    return skip_value();
  }
  bool end_array() override {
    --depth_;
    if (skip_ && depth_ < skip_depth_) skip_ = false;
    return true;
  }
  bool key(string_t& k) override {
    if (skip_) return true;
    if (depth_ == 1) {
      if (++keys_ > kMaxSafetensorsTensors)
        throw fail("the header lists more than " + std::to_string(kMaxSafetensorsTensors) + " tensors");
      name_ = k;
      in_metadata_ = (k == "__metadata__");
      entry_keys_.clear();
      if (!in_metadata_ && !names_.insert(k).second) throw bad("appears twice in the header");
      return true;
    }
    // JSON leaves a repeated key's meaning open (nlohmann keeps the last, a SAX reader sees both):
    // a header that says "shape" twice is lying about one of them, so it is refused (issue 44, class 4).
    if (depth_ == 2 && !entry_keys_.insert(k).second)
      throw in_metadata_ ? fail("__metadata__: key '" + k + "' appears twice")
                         : bad("key '" + k + "' appears twice in its entry");
    if (depth_ == 2 && !in_metadata_)
      field_ = k == "dtype" ? Field::DType : k == "shape" ? Field::Shape : k == "data_offsets" ? Field::Offsets : Field::Other;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw fail(std::string("header is not JSON (") + e.what() + ")");
  }

 private:
  enum class Field { DType, Shape, Offsets, Other };

  Error fail(const std::string& what) const { return Error(source_ + ": not a valid safetensors file: " + what); }
  Error bad(const std::string& what) const { return fail("tensor '" + name_ + "': " + what); }

  // An array or object inside "shape" or "data_offsets": a shape is a flat list of integers.
  bool nested_in_list() {
    if (field_ == Field::Shape) throw bad("shape must be a flat list of non-negative integers");
    if (field_ == Field::Offsets) throw bad("data_offsets must be non-negative integers");
    return skip_value();
  }
  bool skip_value() {  // a nested value nobody reads (metadata, unknown fields)
    skip_ = true;
    skip_depth_ = depth_;
    return true;
  }
  bool scalar() {
    if (skip_ || in_metadata_) return true;
    if (depth_ == 0) throw fail("header is not a JSON object");
    if (depth_ == 1) throw bad("entry is not an object");
    if (depth_ == 2 && field_ == Field::DType) throw bad("missing string 'dtype'");
    if (depth_ == 2 && field_ == Field::Shape) throw bad("missing array 'shape'");
    if (depth_ == 2 && field_ == Field::Offsets) throw bad("missing 'data_offsets' [begin, end]");
    if (depth_ == 3 && field_ == Field::Shape) throw bad("shape entries must be non-negative integers");
    if (depth_ == 3 && field_ == Field::Offsets) throw bad("data_offsets must be non-negative integers");
    return true;  // an unknown field of an entry
  }
  bool integer(int64_t v, bool negative, uint64_t raw = 0) {
    if (skip_ || in_metadata_) return true;
    if (depth_ != 3 || field_ == Field::Other) return scalar();
    if (field_ == Field::Shape) {
      if (negative || v < 0) throw bad("shape entries must be non-negative integers");
      const uint64_t dim = static_cast<uint64_t>(v);
      if (dim != 0 && numel_ > std::numeric_limits<uint64_t>::max() / 8 / dim) overflow_ = true;
      if (!overflow_) numel_ *= dim;
      if (entry_.meta.shape.size() >= 64) throw bad("shape has more than 64 dimensions");
      entry_.meta.shape.push_back(v);
      return true;
    }
    if (negative || (v < 0 && raw == 0)) throw bad("data_offsets must be non-negative integers");
    if (offsets_.size() >= 2) throw bad("missing 'data_offsets' [begin, end]");
    offsets_.push_back(v < 0 ? raw : static_cast<uint64_t>(v));
    return true;
  }
  void finish_entry() {
    if (!has_dtype_) throw bad("missing string 'dtype'");
    if (!has_shape_) throw bad("missing array 'shape'");
    if (!offsets_given_ || offsets_.size() != 2) throw bad("missing 'data_offsets' [begin, end]");
    if (!parse_dtype(dtype_text_, &entry_.meta.dtype)) throw bad("unknown dtype '" + dtype_text_ + "'");
    if (overflow_) throw bad("shape " + entry_.meta.shape_string() + " overflows 64 bits");
    entry_.begin = offsets_[0];
    entry_.end = offsets_[1];
    if (entry_.begin > entry_.end) throw bad("data_offsets begin > end");
    if (entry_.end > data_size_)
      throw bad("data_offsets [" + std::to_string(entry_.begin) + ", " + std::to_string(entry_.end) +
                "] run past the end of the data (" + std::to_string(data_size_) + " bytes)");
    const uint64_t expected = numel_ * static_cast<uint64_t>(dtype_size(entry_.meta.dtype));
    if (entry_.end - entry_.begin != expected)
      throw bad("holds " + std::to_string(entry_.end - entry_.begin) + " bytes but dtype " + dtype_text_ + " x shape " +
                entry_.meta.shape_string() + " needs " + std::to_string(expected));
    entries.push_back(std::move(entry_));
    overflow_ = false;
  }

  uint64_t data_size_;
  const std::string& source_;
  int depth_ = 0, skip_depth_ = 0;
  bool skip_ = false, in_metadata_ = false;
  size_t keys_ = 0;
  std::set<std::string> names_, entry_keys_;
  std::string name_, dtype_text_;
  Field field_ = Field::Other;
  Entry entry_;
  bool has_dtype_ = false, has_shape_ = false, offsets_given_ = false, overflow_ = false;
  std::vector<uint64_t> offsets_;
  uint64_t numel_ = 1;
};

// Parses and validates the JSON header: every entry's form, dtype, shape, byte length, bounds,
// and that no two tensors overlap. Touches no tensor data.
std::vector<Entry> parse_header(const std::string& text, uint64_t data_size, const std::string& source) {
  auto fail = [&](const std::string& what) -> Error {
    return Error(source + ": not a valid safetensors file: " + what);
  };
  check_json_depth(text, source + ": not a valid safetensors file: header");
  HeaderReader reader(data_size, source);
  json::sax_parse(text, &reader);
  std::vector<Entry> entries = std::move(reader.entries);
  // Zero-length tensors hold no bytes, so they overlap nothing wherever their offsets point.
  std::vector<const Entry*> order;
  for (const auto& e : entries)
    if (e.end > e.begin) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) { return a->begin < b->begin; });
  for (size_t k = 1; k < order.size(); ++k)
    if (order[k]->begin < order[k - 1]->end)
      throw fail("tensors '" + order[k - 1]->name + "' and '" + order[k]->name + "' overlap");
  return entries;
}

}  // namespace

TensorMap parse_safetensors(const std::string& bytes, const std::string& source) {
  const uint64_t header_len = check_prefix(bytes.data(), bytes.size(), source);
  const uint64_t data_size = bytes.size() - 8 - header_len;
  const char* data = bytes.data() + 8 + header_len;
  TensorMap tensors;
  for (Entry& e : parse_header(bytes.substr(8, header_len), data_size, source)) {
    decode(data + e.begin, e.meta.numel(), &e.meta);
    tensors.emplace(e.name, std::move(e.meta));
  }
  return tensors;
}

namespace {
std::map<std::string, std::shared_ptr<ByteSource>>& byte_sources() {
  static std::map<std::string, std::shared_ptr<ByteSource>> sources;
  return sources;
}

// The bytes of a source, or an Error naming the file when the source has not that many.
const char* source_bytes(ByteSource& source, uint64_t offset, uint64_t n, const std::string& path,
                         const std::string& what) {
  if (offset > source.size() || n > source.size() - offset) throw Error(path + ": read error in " + what);
  return source.bytes(offset, n);
}
}  // namespace

void register_byte_source(const std::string& path, std::shared_ptr<ByteSource> source) {
  if (source)
    byte_sources()[path] = std::move(source);
  else
    byte_sources().erase(path);
}

std::shared_ptr<ByteSource> registered_byte_source(const std::string& path) {
  const auto it = byte_sources().find(path);
  return it == byte_sources().end() ? nullptr : it->second;
}

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path), source_(registered_byte_source(path)) {
  if (source_) {
    // The same checks as a file's, on the source's bytes (the header is there before the load starts).
    const uint64_t file_size = source_->size();
    char prefix[8] = {};
    if (file_size >= 8) std::memcpy(prefix, source_bytes(*source_, 0, 8, path, "the header"), 8);
    const uint64_t header_len = check_prefix(prefix, file_size, path);
    const std::string header(source_bytes(*source_, 8, header_len, path, "the header"), header_len);
    data_start_ = 8 + header_len;
    for (Entry& e : parse_header(header, file_size - data_start_, path)) {
      where_.emplace(e.name, std::pair{e.begin, e.end});
      index_.emplace(std::move(e.name), std::move(e.meta));
    }
    return;
  }
  require_regular_file(path);
  in_.open(path, std::ios::binary | std::ios::ate);
  if (!in_) throw Error(path + ": cannot open file");
  const uint64_t file_size = static_cast<uint64_t>(in_.tellg());
  in_.seekg(0);
  char prefix[8] = {};
  in_.read(prefix, std::min<uint64_t>(8, file_size));
  const uint64_t header_len = check_prefix(prefix, file_size, path);
  std::string header(header_len, '\0');
  in_.read(header.data(), static_cast<std::streamsize>(header_len));
  if (!in_) throw Error(path + ": read error in the header");
  data_start_ = 8 + header_len;
  for (Entry& e : parse_header(header, file_size - data_start_, path)) {
    where_.emplace(e.name, std::pair{e.begin, e.end});
    index_.emplace(std::move(e.name), std::move(e.meta));
  }
}

void SafetensorsReader::load(const std::string& name, Tensor* t, bool keep_stored) {
  const auto it = where_.find(name);
  if (it == where_.end()) throw Error(path_ + ": no tensor '" + name + "'");
  const auto [begin, end] = it->second;
  const bool as_stored = keep_stored && !dtype_is_integer(t->dtype);
  if (source_) {
    const char* bytes = source_bytes(*source_, data_start_ + begin, end - begin, path_, "tensor '" + name + "'");
    if (as_stored)
      t->stored.assign(reinterpret_cast<const unsigned char*>(bytes), reinterpret_cast<const unsigned char*>(bytes) + (end - begin));
    else
      decode(bytes, t->numel(), t);
    return;
  }
  in_.seekg(static_cast<std::streamoff>(data_start_ + begin));
  if (as_stored) {  // straight into the tensor: the file's bytes are its storage from now on
    t->stored.resize(end - begin);
    in_.read(reinterpret_cast<char*>(t->stored.data()), static_cast<std::streamsize>(end - begin));
    if (!in_) {
      AlignedBytes().swap(t->stored);
      throw Error(path_ + ": read error in tensor '" + name + "'");
    }
    return;
  }
  std::string buffer(end - begin, '\0');
  in_.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  if (!in_) throw Error(path_ + ": read error in tensor '" + name + "'");
  decode(buffer.data(), t->numel(), t);
}

uint64_t SafetensorsReader::byte_size(const std::string& name) const {
  const auto it = where_.find(name);
  if (it == where_.end()) throw Error(path_ + ": no tensor '" + name + "'");
  return it->second.second - it->second.first;
}

void SafetensorsReader::load_stored_range(const std::string& name, Tensor* t, uint64_t from, uint64_t to) {
  const auto it = where_.find(name);
  if (it == where_.end()) throw Error(path_ + ": no tensor '" + name + "'");
  const uint64_t begin = it->second.first, size = it->second.second - it->second.first;
  const std::string what = "tensor '" + name + "'";
  if (dtype_is_integer(t->dtype)) throw Error(path_ + ": " + what + " is an integer tensor: read it whole (load)");
  if (from > to || to > size)
    throw Error(path_ + ": bytes [" + std::to_string(from) + ", " + std::to_string(to) + ") are outside " + what +
                " (" + std::to_string(size) + " bytes)");
  // The whole tensor's memory at once, but zeroed only up to this piece's end: zeroing a base model's
  // 0.2 GB embedding table in one go was a step of ~150 ms in the threaded page (issue 55, item 4).
  auto make_room = [&] {
    if (t->stored.size() > size) t->stored.resize(size);
    t->stored.reserve(size);
    if (t->stored.size() < to) t->stored.resize(to);
  };
  if (source_) {
    const char* bytes = source_bytes(*source_, data_start_ + begin + from, to - from, path_, what);
    make_room();
    std::memcpy(t->stored.data() + from, bytes, to - from);
    return;
  }
  make_room();
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(data_start_ + begin + from));
  in_.read(reinterpret_cast<char*>(t->stored.data() + from), static_cast<std::streamsize>(to - from));
  if (!in_) throw Error(path_ + ": read error in " + what);
}

TensorMap read_safetensors(const std::string& path) {
  // Streams tensor by tensor: the raw file is never held in memory whole.
  SafetensorsReader reader(path);
  TensorMap tensors = reader.index();
  for (auto& [name, t] : tensors) reader.load(name, &t);
  return tensors;
}

void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const bool integer = dtype_is_integer(t.dtype);
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * 8;
    header[name] = {{"dtype", integer ? "I64" : "F64"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump(-1, ' ', false, json::error_handler_t::replace);
  while ((text.size() + 8) % 8 != 0) text += ' ';
  OutputFile out(path);  // every failure, the close's included, is an Error naming the path
  const uint64_t n = text.size();
  out.write(&n, 8);
  out.write(text);
  for (const auto& [name, t] : tensors) {
    if (dtype_is_integer(t.dtype)) out.write(t.i.data(), t.i.size() * 8);
    else out.write(t.f.data(), t.f.size() * 8);
  }
  out.close();
}

}  // namespace deberta
