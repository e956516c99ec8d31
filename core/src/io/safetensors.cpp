#include "deberta/safetensors.h"

#include "deberta/file_limits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
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
  for (int64_t k = 0; k < n; ++k) {
    switch (t->dtype) {
      case DType::F64: t->f[k] = load_le<double>(p + 8 * k); break;
      case DType::F32: t->f[k] = load_le<float>(p + 4 * k); break;
      case DType::F16: t->f[k] = half_to_double(load_le<uint16_t>(p + 2 * k)); break;
      default: t->f[k] = bfloat16_to_double(load_le<uint16_t>(p + 2 * k)); break;  // BF16
    }
  }
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

// Parses and validates the JSON header: every entry's form, dtype, shape, byte length, bounds,
// and that no two tensors overlap. Touches no tensor data.
std::vector<Entry> parse_header(const std::string& text, uint64_t data_size, const std::string& source) {
  auto fail = [&](const std::string& what) -> Error {
    return Error(source + ": not a valid safetensors file: " + what);
  };
  check_json_depth(text, source + ": not a valid safetensors file: header");
  json header;
  try {
    header = json::parse(text);
  } catch (const json::exception& e) {
    throw fail(std::string("header is not JSON (") + e.what() + ")");
  }
  if (!header.is_object()) throw fail("header is not a JSON object");
  std::vector<Entry> entries;
  for (const auto& item : header.items()) {
    const std::string name = item.key();
    const json& entry = item.value();
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& what) { return fail("tensor '" + name + "': " + what); };
    if (!entry.is_object()) throw bad("entry is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) throw bad("missing string 'dtype'");
    if (!entry.contains("shape") || !entry["shape"].is_array()) throw bad("missing array 'shape'");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      throw bad("missing 'data_offsets' [begin, end]");
    Entry e;
    e.name = name;
    const std::string dtype = entry["dtype"].get<std::string>();
    if (!parse_dtype(dtype, &e.meta.dtype)) throw bad("unknown dtype '" + dtype + "'");
    uint64_t numel = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) throw bad("shape entries must be non-negative integers");
      const uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / 8 / dim)
        throw bad("shape " + entry["shape"].dump() + " overflows 64 bits");
      numel *= dim;
      e.meta.shape.push_back(static_cast<int64_t>(dim));
    }
    for (const auto& o : entry["data_offsets"])
      if (!o.is_number_integer() || o.get<int64_t>() < 0) throw bad("data_offsets must be non-negative integers");
    e.begin = entry["data_offsets"][0].get<uint64_t>();
    e.end = entry["data_offsets"][1].get<uint64_t>();
    if (e.begin > e.end) throw bad("data_offsets begin > end");
    if (e.end > data_size)
      throw bad("data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                "] run past the end of the data (" + std::to_string(data_size) + " bytes)");
    const uint64_t expected = numel * static_cast<uint64_t>(dtype_size(e.meta.dtype));
    if (e.end - e.begin != expected)
      throw bad("holds " + std::to_string(e.end - e.begin) + " bytes but dtype " + dtype + " x shape " +
                e.meta.shape_string() + " needs " + std::to_string(expected));
    entries.push_back(std::move(e));
  }
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

TensorMap read_safetensors(const std::string& path) {
  // Streams tensor by tensor: the raw file is never held in memory whole.
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open file");
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  char prefix[8] = {};
  in.read(prefix, std::min<uint64_t>(8, file_size));
  const uint64_t header_len = check_prefix(prefix, file_size, path);
  std::string header(header_len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  if (!in) throw Error(path + ": read error in the header");
  const uint64_t data_start = 8 + header_len;
  TensorMap tensors;
  std::string buffer;
  for (Entry& e : parse_header(header, file_size - data_start, path)) {
    buffer.resize(e.end - e.begin);
    in.seekg(static_cast<std::streamoff>(data_start + e.begin));
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (!in) throw Error(path + ": read error in tensor '" + e.name + "'");
    decode(buffer.data(), e.meta.numel(), &e.meta);
    tensors.emplace(e.name, std::move(e.meta));
  }
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
  std::string text = header.dump();
  while ((text.size() + 8) % 8 != 0) text += ' ';
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path + ": cannot open for writing");
  const uint64_t n = text.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const auto& [name, t] : tensors) {
    if (dtype_is_integer(t.dtype))
      out.write(reinterpret_cast<const char*>(t.i.data()), static_cast<std::streamsize>(t.i.size() * 8));
    else
      out.write(reinterpret_cast<const char*>(t.f.data()), static_cast<std::streamsize>(t.f.size() * 8));
  }
  if (!out) throw Error(path + ": write failed");
}

}  // namespace deberta
