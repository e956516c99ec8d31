#include "deberta/safetensors.h"

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

TensorMap parse_safetensors(const std::string& bytes, const std::string& source) {
  auto fail = [&](const std::string& what) -> Error {
    return Error(source + ": not a valid safetensors file: " + what);
  };
  if (bytes.size() < 8) throw fail("file is " + std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length");
  const uint64_t header_len = load_le<uint64_t>(bytes.data());
  if (header_len > kMaxSafetensorsHeader)
    throw fail("header length " + std::to_string(header_len) + " exceeds the 100 MB limit");
  if (header_len > bytes.size() - 8)
    throw fail("header length " + std::to_string(header_len) + " is larger than the file (" +
               std::to_string(bytes.size()) + " bytes)");
  json header;
  try {
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_len));
  } catch (const json::exception& e) {
    throw fail(std::string("header is not JSON (") + e.what() + ")");
  }
  if (!header.is_object()) throw fail("header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - header_len;
  const char* data = bytes.data() + 8 + header_len;

  struct Span { uint64_t begin, end; std::string name; };
  std::vector<Span> spans;
  TensorMap tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    auto bad = [&](const std::string& what) { return fail("tensor '" + name + "': " + what); };
    if (!entry.is_object()) throw bad("entry is not an object");
    if (!entry.contains("dtype") || !entry["dtype"].is_string()) throw bad("missing string 'dtype'");
    if (!entry.contains("shape") || !entry["shape"].is_array()) throw bad("missing array 'shape'");
    if (!entry.contains("data_offsets") || !entry["data_offsets"].is_array() || entry["data_offsets"].size() != 2)
      throw bad("missing 'data_offsets' [begin, end]");
    Tensor t;
    const std::string dtype = entry["dtype"].get<std::string>();
    if (!parse_dtype(dtype, &t.dtype)) throw bad("unknown dtype '" + dtype + "'");
    uint64_t numel = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) throw bad("shape entries must be non-negative integers");
      const uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / 8 / dim)
        throw bad("shape " + entry["shape"].dump() + " overflows 64 bits");
      numel *= dim;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    for (const auto& o : entry["data_offsets"])
      if (!o.is_number_integer() || o.get<int64_t>() < 0) throw bad("data_offsets must be non-negative integers");
    const uint64_t begin = entry["data_offsets"][0].get<uint64_t>();
    const uint64_t end = entry["data_offsets"][1].get<uint64_t>();
    if (begin > end) throw bad("data_offsets begin > end");
    if (end > data_size)
      throw bad("data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                "] run past the end of the data (" + std::to_string(data_size) + " bytes)");
    const uint64_t expected = numel * static_cast<uint64_t>(dtype_size(t.dtype));
    if (end - begin != expected)
      throw bad("holds " + std::to_string(end - begin) + " bytes but dtype " + dtype + " x shape " +
                t.shape_string() + " needs " + std::to_string(expected));
    spans.push_back({begin, end, name});
    decode(data + begin, static_cast<int64_t>(numel), &t);
    tensors.emplace(name, std::move(t));
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (size_t k = 1; k < spans.size(); ++k)
    if (spans[k].begin < spans[k - 1].end)
      throw fail("tensors '" + spans[k - 1].name + "' and '" + spans[k].name + "' overlap");
  return tensors;
}

TensorMap read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return parse_safetensors(buffer.str(), path);
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
