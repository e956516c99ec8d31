// pickle.h — a restricted unpickler for the state dicts `torch.save` writes.
//
// This is a security boundary, like PyTorch's own `weights_only=True` loader: a pickle is a
// program for a stack machine, and a general unpickler will call any Python function the file
// names. This one knows only the opcodes a state dict uses (protocols 2–4: containers, numbers,
// strings, memo, REDUCE/BUILD on whitelisted globals, persistent ids) and only these globals:
//
//   collections.OrderedDict                       → an empty dict
//   torch._utils._rebuild_tensor_v2               → a TensorRef (storage, offset, size, stride)
//   torch._utils._rebuild_parameter(_with_state)  → the tensor it wraps
//   torch.{Double,Float,Half,BFloat16,Long,Int,Short,Char,Byte,Bool}Storage
//                                                 → storage dtypes inside persistent ids
//
// Anything else is refused when the global is read, before it could be called, with a message
// naming it ("pickle global os.system is not allowed"). Every length, memo index and nesting is
// bounds-checked; values live in an arena (no reference cycles, no recursion over input).
#pragma once

#include "deberta/tensor.h"

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace deberta::pickle {

/// Index of a value in the unpickler's arena.
using ValueId = int64_t;

enum class Kind { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Global, Storage, Tensor };

/// A storage named by a persistent id `('storage', type, key, location, numel[, view])`.
/// Element `k` of the view is element `view_offset + k` of the root storage `key`.
struct StorageRef {
  std::string key;        ///< root storage key: zip entry `data/<key>`, or the legacy key
  DType dtype = DType::F32;
  int64_t numel = 0;      ///< elements of the root storage as the pickle declares it
  int64_t view_offset = 0;
  int64_t view_numel = 0; ///< elements visible through this reference
};

/// A tensor rebuilt by `_rebuild_tensor_v2`: element (i_0 … i_{r-1}) is element
/// `offset + Σ i_k · stride[k]` of `storage`'s view.
struct TensorRef {
  StorageRef storage;
  int64_t offset = 0;
  std::vector<int64_t> size;
  std::vector<int64_t> stride;
};

/// One unpickled value. Containers hold arena ids; a dict holds key/value id pairs. A value is
/// kept small (storage and tensor records live behind pointers, shared by every reference) and
/// None / True / False exist once each: a pickle of 4 M Nones costs 32 MB of ids, not 1 GB of
/// values (issue 28, class 10).
struct Value {
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                 ///< String / Bytes; Global: "module.name"
  std::vector<ValueId> items;    ///< Tuple / List; Dict: k0, v0, k1, v1, …
  std::shared_ptr<const StorageRef> storage;  ///< Storage
  std::shared_ptr<const TensorRef> tensor;    ///< Tensor
};

/// Runs one pickle (up to and including STOP) from a stream.
class Unpickler {
 public:
  /// `in` is read from its current position; at most `limit` bytes are consumed. `source`
  /// names the file in errors ("pytorch_model.bin: …").
  Unpickler(std::istream& in, uint64_t limit, std::string source);

  /// Executes opcodes until STOP and returns the id of the result.
  /// Errors (`Error`): unknown or unsupported opcode, disallowed global, truncated data, bad
  /// memo index, wrong argument types for a whitelisted call, stack underflow.
  ValueId load();

  const Value& at(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  /// Number of values in the arena (ids are 0 … size()−1).
  size_t size() const { return values_.size(); }
  /// Bytes consumed so far.
  uint64_t consumed() const { return pos_; }

  /// Human-readable name of a kind ("dict", "tensor", …).
  static const char* kind_name(Kind kind);

 private:
  [[noreturn]] void fail(const std::string& what) const;
  uint8_t read_u8();
  uint64_t read_uint(int bytes);
  std::string read_bytes(uint64_t n);
  std::string read_line();
  ValueId make(Value v);
  ValueId constant(ValueId* slot, Kind kind, bool b);
  void charge(uint64_t bytes);
  ValueId pop();
  ValueId top() const;
  std::vector<ValueId> pop_mark();
  Value& mut(ValueId id) { return values_[static_cast<size_t>(id)]; }
  ValueId make_global(const std::string& module, const std::string& name);
  ValueId persistent_load(ValueId pid);
  ValueId reduce(ValueId callable, ValueId args);
  int64_t expect_int(ValueId id, const char* what) const;
  std::vector<int64_t> expect_int_tuple(ValueId id, const char* what) const;

  std::istream& in_;
  uint64_t limit_;
  uint64_t pos_ = 0;
  uint64_t op_pos_ = 0;
  std::string source_;
  std::vector<Value> values_;
  std::vector<ValueId> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, ValueId> memo_;
  ValueId none_ = -1, true_ = -1, false_ = -1;  ///< the shared constants, made on first use
  uint64_t arena_bytes_ = 0;                    ///< estimated bytes held by values_ and their items
};

}  // namespace deberta::pickle
