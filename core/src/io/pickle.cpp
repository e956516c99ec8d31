// pickle.cpp — the restricted unpickler of pickle.h (opcodes as in CPython's Lib/pickletools.py).
#include "io/pickle.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

namespace deberta::pickle {

namespace {

/// Storage classes a state dict names, and the dtype of their elements.
const std::map<std::string, DType>& storage_types() {
  static const std::map<std::string, DType> types = {
      {"torch.DoubleStorage", DType::F64}, {"torch.FloatStorage", DType::F32},  {"torch.HalfStorage", DType::F16},
      {"torch.BFloat16Storage", DType::BF16}, {"torch.LongStorage", DType::I64}, {"torch.IntStorage", DType::I32},
      {"torch.ShortStorage", DType::I16},  {"torch.CharStorage", DType::I8},    {"torch.ByteStorage", DType::U8},
      {"torch.BoolStorage", DType::BOOL},
  };
  return types;
}

/// Callable globals: what REDUCE may call.
constexpr const char* kOrderedDict = "collections.OrderedDict";
constexpr const char* kRebuildTensor = "torch._utils._rebuild_tensor_v2";
constexpr const char* kRebuildParameter = "torch._utils._rebuild_parameter";
constexpr const char* kRebuildParameterWithState = "torch._utils._rebuild_parameter_with_state";

bool is_allowed_global(const std::string& qualified) {
  return qualified == kOrderedDict || qualified == kRebuildTensor || qualified == kRebuildParameter ||
         qualified == kRebuildParameterWithState || storage_types().count(qualified) > 0;
}

/// Limits that no state dict comes near; they bound work on hostile input.
constexpr size_t kMaxStack = 1u << 20;
constexpr size_t kMaxValues = 1u << 22;  // a state dict has ~10 per tensor
constexpr size_t kMaxRank = 64;
constexpr uint64_t kMaxLine = 4096;
constexpr size_t kMaxStorageKey = 256;  // torch.save writes "0", "1", …

std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 80)) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return s.size() > 80 ? out + "…" : out;
}

}  // namespace

Unpickler::Unpickler(std::istream& in, uint64_t limit, std::string source)
    : in_(in), limit_(limit), source_(std::move(source)) {}

const char* Unpickler::kind_name(Kind kind) {
  switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Global: return "global";
    case Kind::Storage: return "storage";
    case Kind::Tensor: return "tensor";
  }
  return "?";
}

void Unpickler::fail(const std::string& what) const {
  throw Error(source_ + ": " + what + " (pickle byte " + std::to_string(op_pos_) + ")");
}

uint8_t Unpickler::read_u8() {
  if (pos_ >= limit_) fail("truncated pickle: data ends before STOP");
  const int c = in_.get();
  if (c == std::char_traits<char>::eof()) fail("truncated pickle: data ends before STOP");
  ++pos_;
  return static_cast<uint8_t>(c);
}

uint64_t Unpickler::read_uint(int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v |= static_cast<uint64_t>(read_u8()) << (8 * k);
  return v;
}

std::string Unpickler::read_bytes(uint64_t n) {
  if (n > limit_ - pos_) fail("truncated pickle: a " + std::to_string(n) + "-byte string runs past the end of the data");
  std::string s(static_cast<size_t>(n), '\0');
  in_.read(s.data(), static_cast<std::streamsize>(n));
  if (static_cast<uint64_t>(in_.gcount()) != n) fail("truncated pickle: data ends inside a string");
  pos_ += n;
  return s;
}

std::string Unpickler::read_line() {
  std::string s;
  for (;;) {
    const char c = static_cast<char>(read_u8());
    if (c == '\n') return s;
    if (s.size() >= kMaxLine) fail("pickle text line longer than " + std::to_string(kMaxLine) + " bytes");
    s += c;
  }
}

// The arena may hold at most kArenaBase + kArenaPerByte × (pickle bytes): a real state dict's
// pickle makes about one value per 5 bytes, each ~130 bytes, so it uses a fraction of this.
constexpr uint64_t kArenaBase = 64ull << 20;
constexpr uint64_t kArenaPerByte = 64;

void Unpickler::charge(uint64_t bytes) {
  arena_bytes_ += bytes;
  if (arena_bytes_ > kArenaBase + kArenaPerByte * limit_)
    fail("pickle objects would take more than " + std::to_string((kArenaBase + kArenaPerByte * limit_) >> 20) +
         " MB (64 MB + 64 x the pickle's size)");
}

ValueId Unpickler::constant(ValueId* slot, Kind kind, bool b) {
  if (*slot < 0) {
    Value v;
    v.kind = kind;
    v.b = b;
    *slot = make(std::move(v));
  }
  return *slot;
}

ValueId Unpickler::make(Value v) {
  if (values_.size() >= kMaxValues) fail("pickle holds too many objects");
  charge(sizeof(Value) + v.s.size() + v.items.size() * sizeof(ValueId) + (v.tensor ? sizeof(TensorRef) : 0) +
         (v.storage ? sizeof(StorageRef) + v.storage->key.size() : 0));
  values_.push_back(std::move(v));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Unpickler::pop() {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) fail("malformed pickle: stack underflow");
  const ValueId v = stack_.back();
  stack_.pop_back();
  return v;
}

ValueId Unpickler::top() const {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) fail("malformed pickle: stack underflow");
  return stack_.back();
}

std::vector<ValueId> Unpickler::pop_mark() {
  if (marks_.empty()) fail("malformed pickle: no MARK on the stack");
  const size_t mark = marks_.back();
  marks_.pop_back();
  std::vector<ValueId> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
  stack_.resize(mark);
  return items;
}

int64_t Unpickler::expect_int(ValueId id, const char* what) const {
  const Value& v = at(id);
  if (v.kind != Kind::Int) fail(std::string(what) + " must be an int, found " + kind_name(v.kind));
  return v.i;
}

std::vector<int64_t> Unpickler::expect_int_tuple(ValueId id, const char* what) const {
  const Value& v = at(id);
  if (v.kind != Kind::Tuple) fail(std::string(what) + " must be a tuple of ints, found " + kind_name(v.kind));
  if (v.items.size() > kMaxRank) fail(std::string(what) + " has more than " + std::to_string(kMaxRank) + " dimensions");
  std::vector<int64_t> out;
  for (ValueId item : v.items) out.push_back(expect_int(item, what));
  return out;
}

ValueId Unpickler::make_global(const std::string& module, const std::string& name) {
  const std::string qualified = module + "." + name;
  if (!is_allowed_global(qualified))
    fail("pickle global " + printable(qualified) +
         " is not allowed (a state dict needs only collections.OrderedDict, torch._utils._rebuild_tensor_v2, "
         "torch._utils._rebuild_parameter and torch.*Storage)");
  Value v;
  v.kind = Kind::Global;
  v.s = qualified;
  return make(std::move(v));
}

// Persistent id of a storage: ('storage', storage_type, key, location, numel) in the zip format,
// plus view_metadata (None or (view_key, offset, numel)) in the legacy format.
ValueId Unpickler::persistent_load(ValueId pid) {
  const Value& t = at(pid);
  if (t.kind != Kind::Tuple || (t.items.size() != 5 && t.items.size() != 6))
    fail("persistent id must be a 5- or 6-tuple ('storage', type, key, location, numel[, view])");
  const Value& tag = at(t.items[0]);
  if (tag.kind != Kind::String || tag.s != "storage")
    fail("persistent id of type '" + printable(tag.s) + "' is not allowed (only 'storage')");
  const Value& type = at(t.items[1]);
  if (type.kind != Kind::Global || !storage_types().count(type.s))
    fail("persistent id: storage type must be a torch.*Storage global");
  const Value& key = at(t.items[2]);
  if (key.kind != Kind::String) fail("persistent id: storage key must be a str");
  if (at(t.items[3]).kind != Kind::String) fail("persistent id: storage location must be a str");
  if (key.s.size() > kMaxStorageKey)
    fail("persistent id: storage key longer than " + std::to_string(kMaxStorageKey) + " bytes");
  StorageRef ref;
  ref.key = key.s;
  ref.dtype = storage_types().at(type.s);
  ref.numel = expect_int(t.items[4], "storage numel");
  if (ref.numel < 0) fail("persistent id: negative storage size");
  ref.view_numel = ref.numel;
  if (t.items.size() == 6 && at(t.items[5]).kind != Kind::None) {
    const Value& view = at(t.items[5]);
    if (view.kind != Kind::Tuple || view.items.size() != 3) fail("persistent id: view metadata must be (key, offset, size)");
    ref.view_offset = expect_int(view.items[1], "storage view offset");
    ref.view_numel = expect_int(view.items[2], "storage view size");
    if (ref.view_offset < 0 || ref.view_numel < 0 || ref.view_offset > ref.numel - ref.view_numel)
      fail("persistent id: storage view outside its storage");
  }
  Value v;
  v.kind = Kind::Storage;
  v.storage = std::make_shared<const StorageRef>(std::move(ref));
  return make(std::move(v));
}

ValueId Unpickler::reduce(ValueId callable, ValueId args_id) {
  const Value& fn = at(callable);
  if (fn.kind != Kind::Global) fail(std::string("REDUCE on a ") + kind_name(fn.kind) + ", not a global");
  const Value& args = at(args_id);
  if (args.kind != Kind::Tuple) fail("REDUCE arguments must be a tuple");
  const std::vector<ValueId> a = args.items;
  if (fn.s == kOrderedDict) {
    if (!a.empty()) fail("collections.OrderedDict must be called without arguments");
    Value d;
    d.kind = Kind::Dict;
    return make(std::move(d));
  }
  if (fn.s == kRebuildTensor) {
    // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
    if (a.size() < 4 || a.size() > 7) fail("torch._utils._rebuild_tensor_v2: expected 6 or 7 arguments");
    if (at(a[0]).kind != Kind::Storage) fail("torch._utils._rebuild_tensor_v2: first argument must be a storage");
    TensorRef ref;
    ref.storage = *at(a[0]).storage;
    ref.offset = expect_int(a[1], "tensor storage offset");
    ref.size = expect_int_tuple(a[2], "tensor size");
    ref.stride = expect_int_tuple(a[3], "tensor stride");
    if (ref.size.size() != ref.stride.size()) fail("tensor size and stride differ in rank");
    Value v;
    v.kind = Kind::Tensor;
    v.tensor = std::make_shared<const TensorRef>(std::move(ref));
    return make(std::move(v));
  }
  if (fn.s == kRebuildParameter || fn.s == kRebuildParameterWithState) {
    if (a.size() < 3 || a.size() > 4 || at(a[0]).kind != Kind::Tensor)
      fail(fn.s + ": expected (tensor, requires_grad, backward_hooks[, state])");
    return a[0];
  }
  fail("pickle global " + fn.s + " cannot be called");
}

ValueId Unpickler::load() {
  for (;;) {
    op_pos_ = pos_;
    const uint8_t op = read_u8();
    if (stack_.size() > kMaxStack) fail("pickle stack too deep");
    switch (op) {
      case 0x80: {  // PROTO
        const uint8_t proto = read_u8();
        if (proto < 2 || proto > 5) fail("pickle protocol " + std::to_string(proto) + " is not supported");
        break;
      }
      case 0x95: read_uint(8); break;  // FRAME: a length hint only
      case '.': {                      // STOP
        const ValueId result = pop();
        return result;
      }
      case '(':  // MARK
        if (marks_.size() > kMaxStack) fail("pickle nests too deeply");
        marks_.push_back(stack_.size());
        break;
      case 'N': stack_.push_back(constant(&none_, Kind::None, false)); break;  // NONE
      case 0x88: stack_.push_back(constant(&true_, Kind::Bool, true)); break;    // NEWTRUE
      case 0x89: stack_.push_back(constant(&false_, Kind::Bool, false)); break;  // NEWFALSE
      case 'J': case 'K': case 'M': {  // BININT (signed 4), BININT1, BININT2 (unsigned)
        Value v;
        v.kind = Kind::Int;
        if (op == 'J') v.i = static_cast<int32_t>(static_cast<uint32_t>(read_uint(4)));
        else v.i = static_cast<int64_t>(read_uint(op == 'K' ? 1 : 2));
        stack_.push_back(make(std::move(v)));
        break;
      }
      case 0x8a: {  // LONG1: n-byte little-endian two's complement
        const uint8_t n = read_u8();
        if (n > 8) fail("pickle integer wider than 64 bits");
        uint64_t raw = read_uint(n);
        if (n > 0 && n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~uint64_t{0} << (8 * n);  // sign-extend
        Value v;
        v.kind = Kind::Int;
        v.i = static_cast<int64_t>(raw);
        stack_.push_back(make(std::move(v)));
        break;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        uint64_t raw = 0;
        for (int k = 0; k < 8; ++k) raw = (raw << 8) | read_u8();
        Value v;
        v.kind = Kind::Float;
        std::memcpy(&v.f, &raw, 8);
        stack_.push_back(make(std::move(v)));
        break;
      }
      case 'X': case 0x8c: case 0x8d: case 'T': case 'U': case 'B': case 'C': {
        // BINUNICODE (4-byte length), SHORT_BINUNICODE (1), BINUNICODE8 (8), BINSTRING (4),
        // SHORT_BINSTRING (1), BINBYTES (4), SHORT_BINBYTES (1)
        const int width = (op == 0x8c || op == 'U' || op == 'C') ? 1 : op == 0x8d ? 8 : 4;
        Value v;
        v.kind = (op == 'B' || op == 'C') ? Kind::Bytes : Kind::String;
        v.s = read_bytes(read_uint(width));
        stack_.push_back(make(std::move(v)));
        break;
      }
      case ')': {  // EMPTY_TUPLE
        Value v;
        v.kind = Kind::Tuple;
        stack_.push_back(make(std::move(v)));
        break;
      }
      case 't': {  // TUPLE
        Value v;
        v.kind = Kind::Tuple;
        v.items = pop_mark();
        stack_.push_back(make(std::move(v)));
        break;
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        Value v;
        v.kind = Kind::Tuple;
        v.items.resize(op - 0x84);
        for (size_t k = v.items.size(); k-- > 0;) v.items[k] = pop();
        stack_.push_back(make(std::move(v)));
        break;
      }
      case ']': case '}': {  // EMPTY_LIST, EMPTY_DICT
        Value v;
        v.kind = op == ']' ? Kind::List : Kind::Dict;
        stack_.push_back(make(std::move(v)));
        break;
      }
      case 'a': {  // APPEND
        const ValueId item = pop();
        const ValueId list = top();
        if (at(list).kind != Kind::List) fail(std::string("APPEND to a ") + kind_name(at(list).kind));
        charge(sizeof(ValueId));
        mut(list).items.push_back(item);
        break;
      }
      case 'e': {  // APPENDS
        const std::vector<ValueId> items = pop_mark();
        const ValueId list = top();
        if (at(list).kind != Kind::List) fail(std::string("APPENDS to a ") + kind_name(at(list).kind));
        charge(items.size() * sizeof(ValueId));
        mut(list).items.insert(mut(list).items.end(), items.begin(), items.end());
        break;
      }
      case 's': {  // SETITEM
        const ValueId value = pop();
        const ValueId key = pop();
        const ValueId dict = top();
        if (at(dict).kind != Kind::Dict) fail(std::string("SETITEM on a ") + kind_name(at(dict).kind));
        charge(2 * sizeof(ValueId));
        mut(dict).items.push_back(key);
        mut(dict).items.push_back(value);
        break;
      }
      case 'u': {  // SETITEMS
        const std::vector<ValueId> items = pop_mark();
        if (items.size() % 2) fail("SETITEMS with an odd number of items");
        const ValueId dict = top();
        if (at(dict).kind != Kind::Dict) fail(std::string("SETITEMS on a ") + kind_name(at(dict).kind));
        charge(items.size() * sizeof(ValueId));
        mut(dict).items.insert(mut(dict).items.end(), items.begin(), items.end());
        break;
      }
      case 'q': case 'r': case 0x94: {  // BINPUT, LONG_BINPUT, MEMOIZE
        const uint64_t index = op == 'q' ? read_uint(1) : op == 'r' ? read_uint(4) : memo_.size();
        if (memo_.size() >= kMaxValues) fail("pickle memo too large");
        charge(48);  // an unordered_map node
        memo_[index] = top();
        break;
      }
      case 'h': case 'j': {  // BINGET, LONG_BINGET
        const uint64_t index = read_uint(op == 'h' ? 1 : 4);
        const auto it = memo_.find(index);
        if (it == memo_.end()) fail("pickle memo index " + std::to_string(index) + " was never stored");
        stack_.push_back(it->second);
        break;
      }
      case 'c': {  // GLOBAL "module\nname\n"
        const std::string module = read_line();
        const std::string name = read_line();
        stack_.push_back(make_global(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        const ValueId name = pop();
        const ValueId module = pop();
        if (at(module).kind != Kind::String || at(name).kind != Kind::String)
          fail("STACK_GLOBAL needs two strings");
        stack_.push_back(make_global(at(module).s, at(name).s));
        break;
      }
      case 'R': {  // REDUCE
        const ValueId args = pop();
        const ValueId callable = pop();
        stack_.push_back(reduce(callable, args));
        break;
      }
      case 'b': {  // BUILD: only the state of an OrderedDict (its `_metadata`), which we ignore
        pop();
        const ValueId obj = top();
        if (at(obj).kind != Kind::Dict && at(obj).kind != Kind::Tensor)
          fail(std::string("BUILD on a ") + kind_name(at(obj).kind) + " is not allowed");
        break;
      }
      case 'Q': {  // BINPERSID
        const ValueId pid = pop();
        stack_.push_back(persistent_load(pid));
        break;
      }
      default: {
        char buf[64];
        if (op >= 0x20 && op < 0x7f) std::snprintf(buf, sizeof buf, "pickle opcode 0x%02x ('%c')", op, op);
        else std::snprintf(buf, sizeof buf, "pickle opcode 0x%02x", op);
        fail(std::string(buf) + " is unknown or not allowed in a state dict");
      }
    }
  }
}

}  // namespace deberta::pickle
