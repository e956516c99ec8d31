// checkpoint.cpp — PyTorch state dicts: the zip format (PyTorch ≥ 1.6) and the legacy format.
//
// Zip: `<prefix>/data.pkl` is the pickled state dict, each storage is the raw little-endian entry
// `<prefix>/data/<key>` (prefix is "archive" or the file's stem). Legacy (torch.save with
// _use_new_zipfile_serialization=False): five things one after another — pickled magic number,
// protocol version 1001, sys_info dict, the state dict, the sorted list of storage keys — then for
// each key an int64 element count and the raw storage.
//
// Memory: the pickle is parsed first (it is small); then one storage at a time is read into a
// buffer, every tensor viewing it is copied out of it — widened to double, or, for the model
// loader (`keep_stored`, issue 60), its floating values kept as the file's bytes — and the buffer
// is freed. At most one storage's raw bytes exist beside the tensors read. Every allocation is bounded by bytes that
// are really in the file: a storage's declared size must fit in the file (or, for a deflated zip
// entry, in 1,100 times its compressed bytes, themselves no more than the file holds), and the
// widened tensors together may hold at most kMaxWidenFactor times the storage elements plus
// kWidenSlack elements (so stride-0 views or many keys naming one storage cannot multiply memory).
// Duplicate keys in the state dict: the last one wins, as in Python's dict and torch.load.
#include "deberta/checkpoint.h"
#include "deberta/file_limits.h"
#include "deberta/model_io.h"
#include "io/pickle.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <sstream>

namespace deberta {

namespace {

using pickle::Kind;
using pickle::TensorRef;
using pickle::Unpickler;
using pickle::ValueId;

constexpr uint64_t kMaxPickleBytes = 512ull << 20;
constexpr uint64_t kReadChunk = 4ull << 20;
/// Tied weights (word embeddings = MLM decoder) and the odd expanded buffer read some storage
/// elements more than once; nothing legitimate reads them more than 4 times over.
constexpr uint64_t kMaxWidenFactor = 4;
constexpr uint64_t kWidenSlack = 1ull << 20;

/// A tensor of the state dict: its name and where its values are.
struct PendingTensor {
  std::string name;
  TensorRef ref;
};

/// Finds the tensors of a state dict: the top-level dict, or a nested "state_dict" / "model"
/// dict when the top level holds no tensors (training checkpoints).
std::vector<PendingTensor> collect_tensors(const Unpickler& up, ValueId root, const std::string& source) {
  const pickle::Value* dict = &up.at(root);
  if (dict->kind != Kind::Dict)
    throw Error(source + ": the pickle holds a value of type " + Unpickler::kind_name(dict->kind) + ", not a state dict");
  auto has_tensor = [&](const pickle::Value& d) {
    for (size_t k = 1; k < d.items.size(); k += 2)
      if (up.at(d.items[k]).kind == Kind::Tensor) return true;
    return false;
  };
  if (!has_tensor(*dict)) {
    for (size_t k = 0; k + 1 < dict->items.size(); k += 2) {
      const pickle::Value& key = up.at(dict->items[k]);
      const pickle::Value& value = up.at(dict->items[k + 1]);
      if (key.kind == Kind::String && (key.s == "state_dict" || key.s == "model") && value.kind == Kind::Dict &&
          has_tensor(value)) {
        dict = &value;
        break;
      }
    }
  }
  // A key set twice keeps its first position and its last value (Python dict semantics).
  std::vector<const pickle::Value*> values;
  std::vector<std::string> names;
  std::map<std::string, size_t> position;
  for (size_t k = 0; k + 1 < dict->items.size(); k += 2) {
    const pickle::Value& key = up.at(dict->items[k]);
    const pickle::Value& value = up.at(dict->items[k + 1]);
    if (key.kind != Kind::String) {
      if (value.kind != Kind::Tensor) continue;  // e.g. an int key for some bookkeeping value
      throw Error(source + ": state dict key of type " + Unpickler::kind_name(key.kind) + " (expected str)");
    }
    const auto [it, inserted] = position.emplace(key.s, values.size());
    if (inserted) {
      values.push_back(&value);
      names.push_back(key.s);
    } else {
      values[it->second] = &value;
    }
  }
  std::vector<PendingTensor> out;
  for (size_t k = 0; k < values.size(); ++k)
    if (values[k]->kind == Kind::Tensor) out.push_back({names[k], *values[k]->tensor});  // skip e.g. a step counter
  return out;
}

/// `s` with bytes outside printable ASCII escaped, for error messages.
std::string printable_text(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
  }
  return out;
}

uint64_t mul_checked(uint64_t a, uint64_t b, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) throw Error(what + ": size overflows 64 bits");
  return a * b;
}

/// Validates a tensor's extent against its storage view; returns its element count.
uint64_t check_extent(const PendingTensor& t, const std::string& source) {
  const std::string where = source + ": tensor " + t.name;
  const TensorRef& r = t.ref;
  if (r.offset < 0) throw Error(where + ": negative storage offset");
  uint64_t numel = 1;
  uint64_t last = static_cast<uint64_t>(r.offset);  // highest element index read
  for (size_t k = 0; k < r.size.size(); ++k) {
    if (r.size[k] < 0) throw Error(where + ": negative dimension in size");
    if (r.stride[k] < 0) throw Error(where + ": negative stride");
    numel = mul_checked(numel, static_cast<uint64_t>(r.size[k]), where);
  }
  if (numel > (1ull << 40)) throw Error(where + ": " + std::to_string(numel) + " elements is beyond any model");
  if (numel == 0) return 0;
  for (size_t k = 0; k < r.size.size(); ++k) {
    const uint64_t span = mul_checked(static_cast<uint64_t>(r.size[k] - 1), static_cast<uint64_t>(r.stride[k]), where);
    if (span > std::numeric_limits<uint64_t>::max() - last) throw Error(where + ": extent overflows 64 bits");
    last += span;
  }
  const uint64_t available = static_cast<uint64_t>(r.storage.view_numel);
  if (last >= available)
    throw Error(where + ": storage shorter than the tensor needs (storage '" + r.storage.key + "' has " +
                std::to_string(available) + " elements, the tensor reads element " + std::to_string(last) + ")");
  // A stride-0 (expanded) tensor may have more elements than its storage, but not absurdly more.
  if (numel > available + (1ull << 24))
    throw Error(where + ": " + std::to_string(numel) + " elements from a storage of " + std::to_string(available));
  return numel;
}

/// Widens element `index` of raw little-endian storage `p` into the tensor.
void store(const char* p, DType dtype, uint64_t index, Tensor* t, uint64_t out) {
  p += index * static_cast<uint64_t>(dtype_size(dtype));
  switch (dtype) {
    case DType::F64: { double v; std::memcpy(&v, p, 8); t->f[out] = v; break; }
    case DType::F32: { float v; std::memcpy(&v, p, 4); t->f[out] = v; break; }
    case DType::F16: { uint16_t v; std::memcpy(&v, p, 2); t->f[out] = half_to_double(v); break; }
    case DType::BF16: { uint16_t v; std::memcpy(&v, p, 2); t->f[out] = bfloat16_to_double(v); break; }
    case DType::I64: { int64_t v; std::memcpy(&v, p, 8); t->i[out] = v; break; }
    case DType::I32: { int32_t v; std::memcpy(&v, p, 4); t->i[out] = v; break; }
    case DType::I16: { int16_t v; std::memcpy(&v, p, 2); t->i[out] = v; break; }
    case DType::I8: { int8_t v; std::memcpy(&v, p, 1); t->i[out] = v; break; }
    case DType::U8: case DType::BOOL: { uint8_t v; std::memcpy(&v, p, 1); t->i[out] = v; break; }
  }
}

/// Builds the tensor `t` from the raw bytes of its root storage (`data`, `bytes` long), walking
/// its size/stride in row-major order. With `keep_stored`, a floating tensor's values are copied as
/// the file stores them into `Tensor::stored` (little-endian, `numel · dtype_size` bytes, row-major)
/// and `f` stays empty; integer tensors are widened to int64 either way.
Tensor materialize(const PendingTensor& t, const char* data, uint64_t bytes, const std::string& source,
                   bool keep_stored) {
  const uint64_t numel = check_extent(t, source);
  const TensorRef& r = t.ref;
  const DType dtype = r.storage.dtype;
  const uint64_t esize = static_cast<uint64_t>(dtype_size(dtype));
  if (static_cast<uint64_t>(r.storage.view_offset + r.storage.view_numel) * esize > bytes)
    throw Error(source + ": tensor " + t.name + ": storage '" + r.storage.key + "' data is shorter than declared");
  Tensor out;
  out.dtype = dtype;
  out.shape = r.size;
  const bool as_stored = keep_stored && !dtype_is_integer(dtype);
  if (dtype_is_integer(dtype)) out.i.resize(numel);
  else if (as_stored) out.stored.resize(static_cast<size_t>(numel * esize));
  else out.f.resize(numel);
  const char* base = data + static_cast<uint64_t>(r.storage.view_offset) * esize;
  const size_t rank = r.size.size();
  // Fast path: a contiguous row-major tensor is one run of elements from `offset`.
  bool contiguous = true;
  for (size_t k = rank, expect = 1; k-- > 0;) {
    if (r.size[k] != 1 && static_cast<uint64_t>(r.stride[k]) != expect) contiguous = false;
    expect *= static_cast<uint64_t>(r.size[k]);
  }
  if (contiguous) {
    const uint64_t first = static_cast<uint64_t>(r.offset);
    if (as_stored) {
      if (numel > 0) std::memcpy(out.stored.data(), base + first * esize, static_cast<size_t>(numel * esize));
    } else if (dtype == DType::F32) {
      const char* p = base + first * 4;
      for (uint64_t n = 0; n < numel; ++n) {
        float v;
        std::memcpy(&v, p + n * 4, 4);
        out.f[n] = v;
      }
    } else {
      for (uint64_t n = 0; n < numel; ++n) store(base, dtype, first + n, &out, n);
    }
    return out;
  }
  std::vector<int64_t> index(rank, 0);
  uint64_t element = static_cast<uint64_t>(r.offset);
  for (uint64_t n = 0; n < numel; ++n) {
    if (as_stored) std::memcpy(out.stored.data() + n * esize, base + element * esize, static_cast<size_t>(esize));
    else store(base, dtype, element, &out, n);
    // Advance the multi-index (last axis fastest), keeping `element` = offset + Σ index·stride.
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < r.size[k]) {
        element += static_cast<uint64_t>(r.stride[k]);
        break;
      }
      element -= static_cast<uint64_t>(r.stride[k]) * static_cast<uint64_t>(r.size[k] - 1);
      index[k] = 0;
    }
  }
  return out;
}

/// Storages in first-use order, each with the tensors that view it.
struct StorageGroup {
  pickle::StorageRef root;  ///< key, dtype, numel of the root storage
  std::vector<const PendingTensor*> tensors;
};

std::vector<StorageGroup> group_by_storage(const std::vector<PendingTensor>& tensors, const std::string& source) {
  std::vector<StorageGroup> groups;
  std::map<std::string, size_t> index;
  for (const PendingTensor& t : tensors) {
    const auto it = index.find(t.ref.storage.key);
    if (it == index.end()) {
      index[t.ref.storage.key] = groups.size();
      groups.push_back({t.ref.storage, {&t}});
    } else {
      StorageGroup& g = groups[it->second];
      if (g.root.dtype != t.ref.storage.dtype || g.root.numel != t.ref.storage.numel)
        throw Error(source + ": storage '" + t.ref.storage.key + "' is declared with two different types or sizes");
      g.tensors.push_back(&t);
    }
  }
  return groups;
}

/// Refuses state dicts whose widened tensors would hold far more elements than their storages:
/// stride-0 views and many keys naming one storage cost memory without costing file bytes.
void check_widen_budget(const std::vector<StorageGroup>& groups, const std::string& source) {
  uint64_t stored = 0, widened = 0;
  for (const StorageGroup& g : groups) {
    stored += static_cast<uint64_t>(g.root.numel);  // each bounded by check_extent / the file size
    for (const PendingTensor* t : g.tensors) widened += check_extent(*t, source);  // each < 2^41
  }
  const uint64_t limit = kMaxWidenFactor * stored + kWidenSlack;
  if (widened > limit)
    throw Error(source + ": the tensors read " + std::to_string(widened) + " elements from storages holding " +
                std::to_string(stored) + " (more than " + std::to_string(kMaxWidenFactor) +
                " times over: stride-0 views or many keys sharing one storage)");
}

uint64_t storage_bytes(const pickle::StorageRef& s, const std::string& source) {
  return mul_checked(static_cast<uint64_t>(s.numel), static_cast<uint64_t>(dtype_size(s.dtype)),
                     source + ": storage '" + s.key + "'");
}

// ---------------------------------------------------------------------------------------------
// Zip format

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

/// Reads the first `size` bytes of a zip entry, reporting progress. The buffer grows with the
/// bytes actually decompressed (a chunk at a time), never to a size the entry merely declares;
/// `reserve` bytes (at most the file's own size: a stored entry's whole extent) are reserved at
/// once, so a large storage is not copied as its buffer doubles (the copy held both, issue 60).
std::string read_entry(zip_t* z, zip_uint64_t index, uint64_t size, const std::string& what,
                       const std::function<void(uint64_t)>& on_bytes, uint64_t reserve = 0) {
  std::unique_ptr<zip_file_t, ZipFileCloser> f(zip_fopen_index(z, index, 0));
  if (!f) throw Error(what + ": cannot open: " + zip_strerror(z));
  std::string data;
  data.reserve(static_cast<size_t>(std::min(reserve, size)));
  uint64_t done = 0;
  while (done < size) {
    const uint64_t want = std::min(kReadChunk, size - done);
    data.resize(static_cast<size_t>(done + want));
    const zip_int64_t got = zip_fread(f.get(), data.data() + done, want);
    if (got < 0) throw Error(what + ": read error: " + zip_file_strerror(f.get()));
    if (got == 0) throw Error(what + ": entry ends after " + std::to_string(done) + " of " + std::to_string(size) + " bytes");
    done += static_cast<uint64_t>(got);
    if (on_bytes) on_bytes(static_cast<uint64_t>(got));
  }
  data.resize(static_cast<size_t>(done));
  return data;
}

/// The size of zip entry `index`, refused when it is more than the archive could decompress to:
/// a stored entry is at most `file_size` bytes, a deflated one at most ~1,032 times its
/// compressed bytes, which are themselves at most `file_size`.
uint64_t entry_size(zip_t* z, zip_uint64_t index, uint64_t file_size, const std::string& what) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(z, index, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) throw Error(what + ": cannot stat");
  const bool stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
  const uint64_t comp = (st.valid & ZIP_STAT_COMP_SIZE) ? std::min<uint64_t>(st.comp_size, file_size) : file_size;
  const uint64_t bound = stored ? comp : comp * 1100 + 4096;
  if (st.size > bound)
    throw Error(what + ": the archive declares " + std::to_string(st.size) + " bytes but holds at most " +
                std::to_string(bound));
  return st.size;
}

TensorMap read_zip_checkpoint(const std::string& path, uint64_t file_size, const ProgressFn& progress, bool keep_stored) {
  const std::string& source = path;
  int err = 0;
  std::unique_ptr<zip_t, ZipCloser> z(zip_open(path.c_str(), ZIP_RDONLY, &err));
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw Error(path + ": cannot read the zip archive: " + msg);
  }
  // Locate `<prefix>/data.pkl` (exactly one directory level).
  const zip_int64_t entries = zip_get_num_entries(z.get(), 0);
  std::string prefix;
  zip_uint64_t pkl_index = 0;
  bool found = false;
  for (zip_int64_t k = 0; k < entries && !found; ++k) {
    const char* name = zip_get_name(z.get(), static_cast<zip_uint64_t>(k), 0);
    if (!name) continue;
    const std::string n = name;
    const auto slash = n.find('/');
    if (slash != std::string::npos && n.compare(slash, std::string::npos, "/data.pkl") == 0) {
      prefix = n.substr(0, slash + 1);
      pkl_index = static_cast<zip_uint64_t>(k);
      found = true;
    }
  }
  if (!found) throw Error(path + ": zip archive is not a PyTorch checkpoint (no <archive>/data.pkl entry)");
  const uint64_t pkl_size = entry_size(z.get(), pkl_index, file_size, path + ": " + prefix + "data.pkl");
  if (pkl_size > kMaxPickleBytes) throw Error(path + ": " + prefix + "data.pkl is implausibly large");
  // torch.save (PyTorch >= 2.1) writes sys.byteorder to <prefix>/byteorder; older writers are
  // little-endian and write nothing. The storages are read as little-endian.
  const zip_int64_t order_index = zip_name_locate(z.get(), (prefix + "byteorder").c_str(), 0);
  if (order_index >= 0) {
    const std::string what = path + ": " + prefix + "byteorder";
    const uint64_t order_size = entry_size(z.get(), static_cast<zip_uint64_t>(order_index), file_size, what);
    if (order_size > 16) throw Error(what + ": " + std::to_string(order_size) + " bytes (expected 'little')");
    std::string order = read_entry(z.get(), static_cast<zip_uint64_t>(order_index), order_size, what, {});
    while (!order.empty() && (order.back() == '\n' || order.back() == '\r' || order.back() == ' ')) order.pop_back();
    if (order == "big") throw Error(path + ": big-endian checkpoints are not supported (byteorder 'big')");
    if (order != "little") throw Error(what + ": unknown byte order '" + printable_text(order) + "' (expected 'little')");
  }
  const std::string pkl = read_entry(z.get(), pkl_index, pkl_size, path + ": " + prefix + "data.pkl", {});
  std::istringstream in(pkl);
  Unpickler up(in, pkl.size(), source);
  const ValueId root = up.load();
  const std::vector<PendingTensor> tensors = collect_tensors(up, root, source);
  const std::vector<StorageGroup> groups = group_by_storage(tensors, source);

  // Locate and size every storage before reading any, so progress has a total.
  std::vector<zip_uint64_t> indices;
  uint64_t total = 0;
  for (const StorageGroup& g : groups) {
    const std::string entry = prefix + "data/" + g.root.key;
    const zip_int64_t idx = zip_name_locate(z.get(), entry.c_str(), 0);
    if (idx < 0) throw Error(path + ": storage entry " + entry + " is missing from the archive");
    // The declared sizes come from the file: bound them by the bytes it holds before allocating.
    const uint64_t size = entry_size(z.get(), static_cast<zip_uint64_t>(idx), file_size, path + ": storage " + entry);
    const uint64_t need = storage_bytes(g.root, source);
    if (size < need)
      throw Error(path + ": storage " + entry + " holds " + std::to_string(size) + " bytes but the pickle declares " +
                  std::to_string(g.root.numel) + " " + dtype_name(g.root.dtype) + " elements (" + std::to_string(need) +
                  " bytes)");
    for (const PendingTensor* t : g.tensors) check_extent(*t, source);
    indices.push_back(static_cast<zip_uint64_t>(idx));
    total += need;
  }
  check_widen_budget(groups, source);
  TensorMap out;
  uint64_t done = 0;
  auto on_bytes = [&](uint64_t n) {
    done += n;
    if (progress) progress(done, total);
  };
  for (size_t k = 0; k < groups.size(); ++k) {
    const StorageGroup& g = groups[k];
    const uint64_t need = storage_bytes(g.root, source);
    const std::string raw = read_entry(z.get(), indices[k], need, path + ": " + prefix + "data/" + g.root.key, on_bytes,
                                       std::min(need, file_size));
    for (const PendingTensor* t : g.tensors) out[t->name] = materialize(*t, raw.data(), raw.size(), source, keep_stored);
  }
  if (progress && total == 0) progress(0, 0);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Legacy format

TensorMap read_legacy_checkpoint(const std::string& path, uint64_t file_size, const ProgressFn& progress,
                                 bool keep_stored) {
  const std::string& source = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  uint64_t pos = 0;
  auto next_pickle = [&](const char* what) {
    auto up = std::make_unique<Unpickler>(in, file_size - pos, source + " (" + what + ")");
    return up;
  };
  // 1. magic number: a pickled int 0x1950a86a20f9469cfc6c (LONG1 with 10 bytes, which the
  //    64-bit unpickler cannot hold), so check its bytes directly: PROTO 2, LONG1 10, value, STOP.
  {
    char head[15];
    in.read(head, sizeof head);
    if (in.gcount() != static_cast<std::streamsize>(sizeof head))
      throw Error(path + ": not a PyTorch checkpoint (too short)");
    const unsigned char expected[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};
    if (std::memcmp(head, expected, sizeof head) != 0)
      throw Error(path + ": not a PyTorch checkpoint (neither a zip archive nor the legacy format's magic number)");
    pos = sizeof head;
  }
  // 2. protocol version 1001.
  {
    auto up = next_pickle("protocol version");
    const ValueId v = up->load();
    pos += up->consumed();
    if (up->at(v).kind != Kind::Int || up->at(v).i != 1001)
      throw Error(path + ": unsupported legacy PyTorch protocol version (expected 1001)");
  }
  // 3. sys_info: {protocol_version, little_endian, type_sizes}.
  {
    auto up = next_pickle("sys_info");
    const ValueId v = up->load();
    pos += up->consumed();
    const pickle::Value& info = up->at(v);
    if (info.kind != Kind::Dict) throw Error(path + ": legacy sys_info is not a dict");
    for (size_t k = 0; k + 1 < info.items.size(); k += 2) {
      const pickle::Value& key = up->at(info.items[k]);
      const pickle::Value& value = up->at(info.items[k + 1]);
      if (key.kind == Kind::String && key.s == "little_endian" && value.kind == Kind::Bool && !value.b)
        throw Error(path + ": big-endian checkpoints are not supported");
    }
  }
  // 4. the state dict.
  Unpickler main(in, file_size - pos, source);
  const ValueId root = main.load();
  pos += main.consumed();
  const std::vector<PendingTensor> tensors = collect_tensors(main, root, source);
  const std::vector<StorageGroup> groups = group_by_storage(tensors, source);
  std::map<std::string, const StorageGroup*> by_key;
  std::map<std::string, DType> all_storages;  // every storage the pickle names, used or not
  for (ValueId id = 0; id < static_cast<ValueId>(main.size()); ++id)
    if (main.at(id).kind == Kind::Storage) all_storages[main.at(id).storage->key] = main.at(id).storage->dtype;
  for (const StorageGroup& g : groups) {
    by_key[g.root.key] = &g;
    for (const PendingTensor* t : g.tensors) check_extent(*t, source);
    if (storage_bytes(g.root, source) > file_size - pos)
      throw Error(path + ": storage '" + g.root.key + "' declares " + std::to_string(storage_bytes(g.root, source)) +
                  " bytes, more than the file holds");
  }
  check_widen_budget(groups, source);
  // 5. storage keys, in the order their data follows.
  std::vector<std::string> keys;
  {
    auto up = next_pickle("storage keys");
    const ValueId v = up->load();
    pos += up->consumed();
    const pickle::Value& list = up->at(v);
    if (list.kind != Kind::List) throw Error(path + ": legacy storage key list is not a list");
    for (ValueId item : list.items) {
      if (up->at(item).kind != Kind::String) throw Error(path + ": legacy storage key is not a str");
      keys.push_back(up->at(item).s);
    }
  }
  uint64_t total = 0;
  for (const StorageGroup& g : groups) total += storage_bytes(g.root, source);
  uint64_t done = 0;
  TensorMap out;
  std::string raw;
  for (const std::string& key : keys) {
    // Each storage: int64 element count, then the elements.
    if (file_size - pos < 8) throw Error(path + ": truncated: storage '" + key + "' is missing");
    unsigned char count_bytes[8];
    in.read(reinterpret_cast<char*>(count_bytes), 8);
    if (in.gcount() != 8) throw Error(path + ": truncated: storage '" + key + "' is missing");
    pos += 8;
    uint64_t count = 0;
    for (int k = 0; k < 8; ++k) count |= static_cast<uint64_t>(count_bytes[k]) << (8 * k);
    const auto it = by_key.find(key);
    if (it == by_key.end()) {
      // A storage no state-dict tensor uses: skip its data.
      const auto seen = all_storages.find(key);
      if (seen == all_storages.end()) throw Error(path + ": storage '" + key + "' is not named in the pickle");
      const uint64_t skip = mul_checked(count, static_cast<uint64_t>(dtype_size(seen->second)), path);
      if (skip > file_size - pos) throw Error(path + ": truncated: storage '" + key + "' runs past the end of the file");
      in.seekg(static_cast<std::streamoff>(skip), std::ios::cur);
      pos += skip;
      continue;
    }
    const StorageGroup& g = *it->second;
    if (count != static_cast<uint64_t>(g.root.numel))
      throw Error(path + ": storage '" + key + "' holds " + std::to_string(count) + " elements but the pickle declares " +
                  std::to_string(g.root.numel));
    const uint64_t need = storage_bytes(g.root, source);
    if (need > file_size - pos)
      throw Error(path + ": truncated: storage '" + key + "' needs " + std::to_string(need) + " bytes, " +
                  std::to_string(file_size - pos) + " remain");
    raw.assign(static_cast<size_t>(need), '\0');
    for (uint64_t off = 0; off < need;) {
      const uint64_t want = std::min(kReadChunk, need - off);
      in.read(raw.data() + off, static_cast<std::streamsize>(want));
      if (static_cast<uint64_t>(in.gcount()) != want) throw Error(path + ": read error in storage '" + key + "'");
      off += want;
      done += want;
      if (progress) progress(done, total);
    }
    pos += need;
    for (const PendingTensor* t : g.tensors) out[t->name] = materialize(*t, raw.data(), raw.size(), source, keep_stored);
    by_key.erase(it);
    raw.clear();
    raw.shrink_to_fit();
  }
  if (!by_key.empty()) throw Error(path + ": storage '" + by_key.begin()->first + "' has no data in the file");
  return out;
}

}  // namespace

TensorMap read_pytorch_checkpoint(const std::string& path, const ProgressFn& progress, bool keep_stored) {
  require_regular_file(path);  // a FIFO would block the open below
  std::ifstream probe(path, std::ios::binary | std::ios::ate);
  if (!probe) throw Error(path + ": cannot open");
  const auto end = probe.tellg();
  if (end < 0) throw Error(path + ": cannot read");
  const uint64_t size = static_cast<uint64_t>(end);
  if (size == 0) throw Error(path + ": empty file");
  probe.seekg(0);
  char head[4] = {0, 0, 0, 0};
  probe.read(head, 4);
  probe.close();
  try {
    if (size >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0) return read_zip_checkpoint(path, size, progress, keep_stored);
    if (static_cast<unsigned char>(head[0]) == 0x80) return read_legacy_checkpoint(path, size, progress, keep_stored);
  } catch (const std::bad_alloc&) {
    throw Error(path + ": out of memory while reading the checkpoint");
  }
  throw Error(path + ": not a PyTorch checkpoint (neither a zip archive nor a pickle)");
}

}  // namespace deberta
