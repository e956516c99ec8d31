// deberta_explorer.cpp — the Python module: the core's forward pass and trace as NumPy arrays.
//
// A thin frontend over deberta::core, like the CLI and the viewer (it includes nothing of theirs).
// `forward` returns exactly what `deberta dump` writes — the same core calls in the same order
// (`normalized` → `forward(…, TraceLevel::Full, decoder)` → `trace_to_tensors`, core/cli/cmd_dump.cpp)
// — so its arrays equal the dump's tensors bit for bit (tests/python/test_module.py checks it on
// every golden case). Tensor names, shapes and dtypes: dump.h and notebooks_data/golden/README.md.
// Errors of the core (`deberta::Error`, one line naming the file and the problem) are raised as
// `deberta_explorer.Error` (a RuntimeError); a missing file or folder as
// `deberta_explorer.FileNotFoundError` and a bad input value (ids outside the vocabulary, masked
// positions outside the input, an input longer than max_position_embeddings, …) as
// `deberta_explorer.InvalidInputError`, subclasses of both `Error` and the builtin
// FileNotFoundError / ValueError. An argument of the wrong type is a TypeError naming the function
// and the argument (never pybind11's generic "incompatible function arguments"); a str that is not
// valid Unicode (a lone surrogate) a UnicodeError naming the argument. Every message keeps all of its
// bytes: an invalid UTF-8 byte (a path in a non-UTF-8 folder) shows as \xNN, a NUL or control
// character in a name as \x00.
// Threads: a Model may be used from several Python threads at once. Each call releases the GIL,
// then takes the model's lock (readers — forward, predict, ablate, tensor, tensor_names — share it;
// set_tensor holds it alone, and a waiting set_tensor goes before later readers), so a forward never
// sees half of an edit (tests/python/test_robustness.py). tensor, tensor_names and set_tensor read
// the weights file again and refuse it, naming it, when it changed on disk since load_model().
// API reference and examples: docs/python.md.
#include "deberta/analysis.h"
#include "deberta/backend.h"
#include "deberta/map_weights.h"
#include "deberta/dump.h"
#include "deberta/inputs.h"
#include "deberta/finite.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"
#include "deberta/tokenizer.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

using deberta::Ablation;
using deberta::Error;
using deberta::Tensor;
using deberta::TensorMap;

// --- messages and exceptions of the module ---------------------------------------------------

/// An exception of the module itself (a bad argument), thrown as a plain C++ exception so that it
/// may be thrown without the GIL; the translator (PYBIND11_MODULE) raises it as the Python
/// exception of `kind`, the message decoded as UTF-8 with each invalid byte shown as \xNN.
struct Fault : std::exception {
  enum Kind { Type, Value, Key, Unicode, Memory };
  Kind kind;
  std::string message;
  Fault(Kind k, std::string m) : kind(k), message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};
Fault type_error(std::string m) { return {Fault::Type, std::move(m)}; }
Fault value_error(std::string m) { return {Fault::Value, std::move(m)}; }
Fault key_error(std::string m) { return {Fault::Key, std::move(m)}; }

/// `bytes` as a Python str: UTF-8, an invalid byte as the text \xNN (Python's "backslashreplace"),
/// so a message naming a file in a non-UTF-8 folder is neither lost nor cut. Needs the GIL.
py::str message_text(const std::string& bytes) {
  PyObject* s = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "backslashreplace");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

/// Sets the Python exception `type` with `message` (message_text). Needs the GIL.
void set_error(PyObject* type, const std::string& message) {
  const py::str text = message_text(message);
  PyErr_SetObject(type, text.ptr());
}

/// A name or path for a message, quoted as Python's repr quotes a str: NUL and other control
/// characters as \xNN, ' and \ escaped; other bytes as they are (an invalid UTF-8 byte then shows as
/// \xNN through message_text).
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      if (c == '\'' || c == '\\') out += '\\';
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

/// `bytes` (a path or a tensor name) as a Python str the way os.fsdecode makes one: UTF-8, an
/// invalid byte as a lone surrogate U+DC80..U+DCFF ("surrogateescape"), so os.fsencode or
/// Model.tensor(name) gives the same bytes back. Needs the GIL.
py::str fs_text(const std::string& bytes) {
  PyObject* s = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "surrogateescape");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

/// The str `value` as UTF-8 bytes. `escape`: U+DC80..U+DCFF stand for the bytes 0x80..0xFF
/// (os.fsencode's "surrogateescape": names and paths); otherwise every surrogate is refused (text).
/// Errors: UnicodeError naming `label`, the character and its index.
std::string utf8(const py::handle& value, const std::string& label, bool escape) {
  PyObject* b = PyUnicode_AsEncodedString(value.ptr(), "utf-8", escape ? "surrogateescape" : "strict");
  if (!b) {
    const py::error_already_set e;  // UnicodeEncodeError: start is the index of the first bad character
    Py_ssize_t at = 0;
    try {
      at = e.value().attr("start").cast<Py_ssize_t>();
    } catch (const py::error_already_set&) {
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, "lone surrogate \\u%04x at index %zd", static_cast<unsigned>(PyUnicode_ReadChar(value.ptr(), at)),
                  static_cast<ssize_t>(at));
    PyErr_Clear();
    throw Fault(Fault::Unicode, label + " is not valid Unicode: " + buf + " (it has no UTF-8 encoding)");
  }
  const py::bytes bytes = py::reinterpret_steal<py::bytes>(b);
  return std::string(bytes);
}

// --- the weights file's identity ---------------------------------------------------------------

/// What tells one file apart from another at the same path, or from itself rewritten: device,
/// inode, size and modification time (ns). (A rewrite in place to the same size within the file
/// system's timestamp granularity is not seen.)
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& o) const {
    return device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
  }
};

/// The identity of `path` now; nothing when it cannot be stat'ed.
std::optional<FileIdentity> identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileIdentity id;
  id.device = st.st_dev;
  id.inode = st.st_ino;
  id.size = st.st_size;
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return id;
}

// --- the model --------------------------------------------------------------------------------

/// A readers-writer lock that lets a waiting writer in first: a reader passes through `gate_`,
/// which a writer holds while it waits for the readers inside to leave, so a stream of forwards
/// from several threads cannot keep set_tensor out. Not re-entrant: a thread holding it must not
/// ask for it again.
class ModelLock {
 public:
  std::shared_lock<std::shared_mutex> read() const {
    std::lock_guard<std::mutex> gate(gate_);
    return std::shared_lock<std::shared_mutex>(rw_);
  }
  std::unique_lock<std::shared_mutex> write() const {
    std::lock_guard<std::mutex> gate(gate_);
    return std::unique_lock<std::shared_mutex>(rw_);
  }

 private:
  mutable std::mutex gate_;
  mutable std::shared_mutex rw_;
};

/// While a call uses a model, on the calling thread: the model's own engine, if it has one
/// (deberta::BackendScope; the fast backend's worker threads follow it).
class ModelEngine {
 public:
  explicit ModelEngine(const std::optional<deberta::Backend>& backend) {
    if (backend) scope_.emplace(*backend);
  }

 private:
  std::optional<deberta::BackendScope> scope_;
};

/// A loaded model and, when its folder has one, its tokenizer (loaded once, on first use).
/// Thread-safe as the module uses it: the member functions take `lock` themselves, and forward,
/// predict, ablate take it around their use of `model`; every caller releases the GIL before it
/// takes a lock here, so a thread holding one never waits for the GIL (no deadlock).
struct PyModel {
  deberta::Model model;
  /// The weights file's identity when load_model returned: every later read of the file (tensor, tensor_names,
  /// set_tensor) first checks it is still that file, so values of a replaced file never mix with
  /// the loaded ones.
  FileIdentity loaded_file;

  /// Read by the calls that use the weights (forward, predict, ablate, tensor, tensor_names,
  /// runs_emd), which may run at once; written by set_tensor, which replaces them.
  ModelLock lock;

  std::mutex tokenizer_mutex;  ///< guards the three members below (loading once, from one thread)
  std::unique_ptr<deberta::Tokenizer> tokenizer;
  bool tokenizer_tried = false;
  std::exception_ptr tokenizer_failure;  ///< why the load failed, raised again on every later call

  /// Tensors replaced by `set_tensor`, by state-dict name, as float64 (under `lock`).
  TensorMap edits;

  /// This model's own engine (`load_model(path, backend=...)`); none: the process's (set_backend,
  /// DEBERTA_BACKEND). Fixed at load.
  std::optional<deberta::Backend> backend;

  /// The engine the workspace's position table was projected on (at load, by set_tensor, or by the
  /// last call that found another engine current). Read under `lock`, written under its write side.
  deberta::Backend workspace_engine = deberta::Backend::Fast;

  /// `lock`'s read side for a call on the engine now current (the caller's ModelEngine in force).
  /// When the position table was projected on another engine, it is projected again first, under
  /// the write side: every forward reads projections made on its own engine, so a model loaded on
  /// the fast engine and run after set_backend("reference") gives the reference engine's bits
  /// (issue 59, class 7; they differed by 8.4e-15).
  std::shared_lock<std::shared_mutex> read_on_engine() {
    for (;;) {
      auto held = lock.read();
      if (workspace_engine == deberta::backend()) return held;
      held.unlock();
      const auto exclusive = lock.write();
      if (workspace_engine != deberta::backend()) {
        model.weights_changed();
        (void)model.workspace.positions(model);
        workspace_engine = deberta::backend();
      }
    }
  }

  mutable std::mutex index_mutex;                 ///< guards index_cache (file_index)
  mutable std::optional<TensorMap> index_cache;  ///< the weights file's names, dtypes, shapes

  /// Errors (Error naming the file): the weights file is gone or no longer the one load_model read.
  void check_unchanged() const {
    const std::optional<FileIdentity> now = identity_of(model.weights_path);
    std::string how;
    if (!now) how = "it no longer exists";
    else if (now->device != loaded_file.device || now->inode != loaded_file.inode) how = "it was replaced by another file";
    else if (now->size != loaded_file.size) how = "its size changed from " + std::to_string(loaded_file.size) + " to " + std::to_string(now->size) + " bytes";
    else if (now->mtime_ns != loaded_file.mtime_ns) how = "it was modified";
    else return;
    throw Error(model.weights_path + ": changed on disk since load_model() (" + how +
                "); the loaded weights are unchanged, but tensor(), tensor_names() and set_tensor() read the file: "
                "load it again");
  }

  /// The weights file: a safetensors file is opened for lazy reads (its header only, as
  /// `load_model` does: issue 28, class 7); a PyTorch checkpoint is read whole. Errors: as
  /// `check_unchanged`, before and after opening (a file replaced in between is refused).
  struct Source {
    std::unique_ptr<deberta::SafetensorsReader> reader;  ///< .safetensors
    TensorMap all;                                       ///< .bin / .pt: every tensor, read
    const TensorMap& index() const { return reader ? reader->index() : all; }
  };
  Source open_source() const {
    check_unchanged();
    Source s;
    if (model.weights_path.size() >= 12 &&
        model.weights_path.compare(model.weights_path.size() - 12, 12, ".safetensors") == 0)
      s.reader = std::make_unique<deberta::SafetensorsReader>(model.weights_path);
    else
      s.all = deberta::read_weights_file(model.weights_path);
    check_unchanged();
    return s;
  }

  /// Every state-dict name of the weights file, sorted (values not read).
  std::vector<std::string> names() const {
    const auto held = lock.read();
    std::vector<std::string> out;
    for (const auto& entry : file_index()) out.push_back(entry.first);
    return out;
  }

  /// Every tensor of the weights file with its dtype and shape, no values: read on first use and
  /// kept (a PyTorch checkpoint is read whole to learn them), valid because each use checks first
  /// that the file is still the loaded one. Errors: as `check_unchanged`.
  const TensorMap& file_index() const {
    std::lock_guard<std::mutex> guard(index_mutex);
    check_unchanged();
    if (!index_cache) {
      const Source s = open_source();
      TensorMap shapes;
      for (const auto& [n, t] : s.index()) {
        Tensor e;
        e.dtype = t.dtype;
        e.shape = t.shape;
        shapes.emplace(n, std::move(e));
      }
      index_cache = std::move(shapes);
    }
    return *index_cache;  // set once, never changed: safe to read after the guard is released
  }

  /// The tensor `name` as the model now holds it: an edit, else the file's values (only this
  /// tensor is read from a safetensors file). Errors: KeyError naming the tensor when there is none.
  Tensor tensor(const std::string& name) const {
    const auto held = lock.read();
    if (const auto e = edits.find(name); e != edits.end()) return e->second;
    Source s = open_source();
    const auto it = s.index().find(name);
    if (it == s.index().end()) throw missing(name);
    if (!s.reader) return it->second;
    Tensor t = it->second;
    s.reader->load(name, &t);
    check_unchanged();  // rewritten in place while it was read
    return t;
  }

  /// The stored shape of the floating tensor `name` (set_tensor checks a value against it before
  /// converting anything). Errors: KeyError (no such tensor), TypeError (an integer tensor).
  std::vector<int64_t> settable_shape(const std::string& name) const {
    const auto held = lock.read();
    const TensorMap& index = file_index();
    const auto it = index.find(name);
    if (it == index.end()) throw missing(name);
    if (deberta::dtype_is_integer(it->second.dtype))
      throw type_error("set_tensor(" + quoted(name) + "): the tensor holds integers (" + it->second.shape_string() +
                       "); only floating tensors can be set");
    return it->second.shape;
  }

  Fault missing(const std::string& name) const {
    return key_error("no tensor named " + quoted(name) + " in " + model.weights_path + " (Model.tensor_names() lists them)");
  }

  /// Replaces one tensor and rebuilds the weights exactly as a load of the edited file would (the
  /// same mapping, then the derived position table from the new weights); the file is read as
  /// `load_model` reads it, only the tensors the model uses. Nothing changes when any check fails.
  void set_tensor(const std::string& name, Tensor value) {
    const auto held = lock.write();
    const ModelEngine engine(backend);
    Source s = open_source();
    TensorMap index = s.index();
    const auto it = index.find(name);
    if (it == index.end()) throw missing(name);
    const Tensor& old = it->second;
    if (old.shape != value.shape)
      throw value_error("set_tensor(" + quoted(name) + "): shape " + value.shape_string() + " does not match the model's " +
                        old.shape_string());
    if (deberta::dtype_is_integer(old.dtype))
      throw type_error("set_tensor(" + quoted(name) + "): the tensor holds integers (" + old.shape_string() +
                       "); only floating tensors can be set");
    for (const auto& [edited, tensor] : edits) index[edited] = tensor;
    index[name] = value;
    deberta::TensorLoader load;  // values not in `index` (not edited): from the file, when map_weights asks
    if (s.reader) load = [&s](const std::string& n, Tensor* t) { s.reader->load(n, t); };
    deberta::ModelWeights w = deberta::map_weights(model.config, std::move(index), model.weights_path, load);
    check_unchanged();  // rewritten in place while it was read: keep the old weights
    model.weights = std::move(w);
    model.weights_changed();
    (void)model.workspace.positions(model);
    workspace_engine = deberta::backend();
    edits[name] = std::move(value);
  }

  /// The model's tokenizer, loaded on the first call. Errors: the folder has no tokenizer files
  /// (message as the CLI's); a tokenizer that failed to load raises its first error again on every
  /// call.
  const deberta::Tokenizer& require_tokenizer() {
    std::lock_guard lock(tokenizer_mutex);
    if (!tokenizer_tried) {
      tokenizer_tried = true;
      try {
        if (deberta::has_tokenizer(model.directory))
          tokenizer = deberta::load_tokenizer_for_model(model.directory, model.config.vocab_size);
      } catch (...) {
        tokenizer_failure = std::current_exception();
      }
    }
    if (tokenizer_failure) std::rethrow_exception(tokenizer_failure);
    if (!tokenizer)
      throw Error(model.directory + ": no tokenizer files (spm.model, vocab.json + merges.txt or tokenizer.json); "
                                    "pass input_ids to forward() instead");
    return *tokenizer;
  }
};

/// `f()` with the GIL released (for work on a model: its locks are taken inside, never while
/// holding the GIL). Exceptions pass through; the GIL is back when they reach the caller.
template <class F>
auto without_gil(F&& f) {
  py::gil_scoped_release release;
  return f();
}

// --- NumPy ⇄ core tensors -------------------------------------------------------------------

/// A core tensor as a NumPy array of the same shape: F64 → float64, integer dtypes → int64
/// (the dump's tensors are F64 and I64 only).
py::array to_numpy(const Tensor& t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  if (deberta::dtype_is_integer(t.dtype)) {
    py::array_t<int64_t> a(shape);
    if (!t.i.empty()) std::memcpy(a.mutable_data(), t.i.data(), t.i.size() * sizeof(int64_t));
    return std::move(a);
  }
  py::array_t<double> a(shape);
  if (!t.f.empty()) std::memcpy(a.mutable_data(), t.f.data(), t.f.size() * sizeof(double));
  return std::move(a);
}

/// A tensor map as {name: ndarray}, in name order (names as fs_text makes them).
py::dict to_dict(const TensorMap& tensors) {
  py::dict out;
  for (const auto& [name, t] : tensors) out[fs_text(name)] = to_numpy(t);
  return out;
}

/// An array-like of integers (list, tuple, NumPy integer array) as an I64 tensor of its shape.
/// Errors (ValueError): not numeric integers (floats are refused, not truncated), or more than
/// 2 dimensions.
Tensor int_tensor(const py::handle& obj, const std::string& what) {
  py::module_ np = py::module_::import("numpy");
  py::array arr = np.attr("asarray")(obj);
  const char kind = arr.dtype().kind();
  if (arr.size() > 0 && kind != 'i' && kind != 'u' && kind != 'b')
    throw value_error(what + " must hold integers, got dtype " + std::string(py::str(arr.dtype())));
  if (arr.ndim() > 2) throw value_error(what + " must be [N] or [1, N], got " + std::to_string(arr.ndim()) + " dimensions");
  auto ints = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!ints) throw value_error(what + ": cannot convert to int64");
  Tensor t;
  t.dtype = deberta::DType::I64;
  for (py::ssize_t d = 0; d < ints.ndim(); ++d) t.shape.push_back(ints.shape(d));
  t.i.assign(ints.data(), ints.data() + ints.size());
  return t;
}

// --- arguments --------------------------------------------------------------------------------
// Every argument is taken as a Python object and converted here, so that a wrong type is a
// TypeError naming the argument (`label`, e.g. "predict(): top_k" or "ablation['c2p']").

/// `value`'s repr() for a message: one line of at most 80 characters (a longer one cut, its length
/// given: an int of 10^400 has 401 digits), never failing (a repr() that raises is named as such).
std::string repr_of(const py::handle& value) {
  std::string r;
  try {
    PyObject* b = PyUnicode_AsEncodedString(py::repr(value).ptr(), "utf-8", "backslashreplace");
    if (!b) throw py::error_already_set();
    r = std::string(py::reinterpret_steal<py::bytes>(b));
  } catch (const py::error_already_set&) {
    return "a " + std::string(py::str(value.get_type().attr("__name__"))) + " (its repr() fails)";
  }
  if (r.size() > 80) r = r.substr(0, 40) + "… (" + std::to_string(r.size()) + " characters)";
  return r;
}

std::string type_name(const py::handle& value) { return py::str(value.get_type().attr("__name__")); }

/// `value` as a bool. Errors (TypeError): anything but True / False (a NumPy bool counts).
bool as_bool(const py::handle& value, const std::string& label) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(value, np.attr("bool_"))) return value.cast<bool>();
  throw type_error(label + " must be True or False, got " + repr_of(value));
}

/// `value` as an int. Errors: TypeError for a bool, a float or anything not an integer;
/// ValueError when it does not fit in 64 bits (10^400 included).
int64_t as_int(const py::handle& value, const std::string& label) {
  if (py::isinstance<py::bool_>(value) || !py::isinstance(value, py::module_::import("numbers").attr("Integral")))
    throw type_error(label + " must be an integer, got " + repr_of(value));
  const py::int_ i = py::reinterpret_borrow<py::object>(value).attr("__index__")();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  if (overflow != 0) throw value_error(label + " is out of range (64-bit integers), got " + repr_of(value));
  return static_cast<int64_t>(v);
}

/// `value` as a str of valid Unicode, in UTF-8. Errors: TypeError for anything but a str;
/// UnicodeError for a lone surrogate.
std::string as_str(const py::handle& value, const std::string& label) {
  if (!py::isinstance<py::str>(value)) throw type_error(label + " must be a str, got " + type_name(value));
  return utf8(value, label, false);
}

/// `value` as a tensor name: a str, its bytes as os.fsencode gives them (U+DC80..U+DCFF from
/// tensor_names() stand for the bytes of a name that is not UTF-8). Errors: TypeError for anything
/// but a str; UnicodeError for another lone surrogate.
std::string as_name(const py::handle& value, const std::string& label) {
  if (!py::isinstance<py::str>(value)) throw type_error(label + " must be a str, got " + type_name(value));
  return utf8(value, label, true);
}

/// `value` as a file-system path: a str or an os.PathLike (pathlib.Path), as the bytes
/// os.fsencode gives (a folder whose name is not UTF-8 is found). Errors: TypeError for anything
/// else, bytes included; UnicodeError for a str with a lone surrogate os.fsencode cannot encode;
/// ValueError for a NUL character (the system would cut the path there).
std::string as_path(const py::handle& value, const std::string& label) {
  py::object s;
  if (py::isinstance<py::str>(value)) s = py::reinterpret_borrow<py::object>(value);
  else if (py::hasattr(value, "__fspath__")) s = py::module_::import("os").attr("fspath")(value);
  std::string bytes;
  if (s && py::isinstance<py::str>(s)) bytes = utf8(s, label, true);
  else if (s && py::isinstance<py::bytes>(s)) bytes = std::string(py::reinterpret_borrow<py::bytes>(s));  // a PathLike of bytes
  else throw type_error(label + " must be a path (str or os.PathLike), got " + type_name(value));
  if (bytes.find('\0') != std::string::npos) throw value_error(label + " contains a NUL character: " + quoted(bytes));
  return bytes;
}

/// `value` as a loaded model. Errors (TypeError): anything but a Model from load_model().
PyModel& as_model(const py::handle& value, const std::string& label);

// --- the ablation dict ------------------------------------------------------------------------

/// The switches of `deberta::Ablation` from a dict (keys as the struct's fields; docs/python.md):
///   each term (c2c, c2p, p2c, p2p: `deberta::term_name`): bool or None (None: as the model); p2c_index: "code" | "paper" | None;
///   scale_factor (or scale): "auto" | "rescale" | a positive number: HF's scale_factor, the factor
///   in s = 1/√(d · factor); head_mask: iterable of (layer, head); window (or
///   max_relative_positions): int K ≥ 0 (0 = k), the central 2K table rows read; emd: bool;
///   relative_positions: "hf" | "microsoft".
/// The same switches as the CLI's flags (ablation.h), typed instead of text. Whether a switch fits
/// the model (a term without weights, K > k, a head outside the model) is the core's check
/// (`resolve_attention`), raised when the model runs.
/// Errors: ValueError naming an unknown key or a bad value (an int beyond 64 bits included);
/// TypeError for a value of the wrong type; UnicodeError for a key or value with a lone surrogate.
Ablation ablation_from_dict(const py::dict& d) {
  Ablation a;
  for (const auto& [k, value] : d) {
    if (!py::isinstance<py::str>(k)) throw value_error("ablation keys must be strings, got " + repr_of(k));
    const std::string key = utf8(k, "ablation key " + repr_of(k), false);
    const bool none = value.is_none();
    const bool is_str = py::isinstance<py::str>(value);
    const std::string label = "ablation[" + quoted(key) + "]";
    const std::string text = is_str ? utf8(value, label, false) : std::string();
    if (const std::optional<deberta::Term> term = deberta::term_from_name(key)) {  // None: as the model
      std::optional<bool> v;
      if (!none) v = as_bool(value, label);
      a.terms[*term] = v;
    } else if (key == "p2c_index") {
      if (none) {
        a.p2c_index.reset();
      } else {
        if (!is_str || (text != "code" && text != "paper"))
          throw value_error("ablation['p2c_index'] must be \"code\", \"paper\" or None, got " + repr_of(value));
        a.p2c_index = text == "code" ? deberta::P2CIndex::Code : deberta::P2CIndex::Paper;
      }
    } else if (key == "scale_factor" || key == "scale") {  // "scale": the older name
      if (none || (is_str && text == "auto")) {
        a.scale_mode = deberta::ScaleMode::Auto;
      } else if (is_str && text == "rescale") {
        a.scale_mode = deberta::ScaleMode::Rescale;
      } else if (!py::isinstance<py::bool_>(value) && py::isinstance(value, py::module_::import("numbers").attr("Real"))) {
        const double f = PyFloat_AsDouble(value.ptr());  // an int beyond a double's range: OverflowError
        if (f == -1.0 && PyErr_Occurred()) PyErr_Clear();
        else if (std::isfinite(f) && f > 0) {
          a.scale_mode = deberta::ScaleMode::Fixed;
          a.scale_factor = f;
          continue;
        }
        throw value_error("ablation['scale'] must be a positive finite number, got " + repr_of(value));
      } else {
        throw value_error("ablation['scale'] must be \"auto\", \"rescale\" or a positive number, got " + repr_of(value));
      }
    } else if (key == "head_mask") {
      a.head_mask.clear();
      if (!none) {
        if (!py::isinstance<py::iterable>(value) || is_str)
          throw type_error("ablation['head_mask'] must be a list of (layer, head) pairs, got " + repr_of(value));
        for (const auto& pair : value) {
          if (!py::isinstance<py::sequence>(pair) || py::isinstance<py::str>(pair) || py::len(pair) != 2)
            throw value_error("ablation['head_mask'] must be a list of (layer, head) pairs, got " + repr_of(pair));
          const py::sequence p = py::reinterpret_borrow<py::sequence>(pair);
          a.head_mask.insert({as_int(p[0], "ablation['head_mask']"), as_int(p[1], "ablation['head_mask']")});
        }
      }
    } else if (key == "window" || key == "max_relative_positions") {  // K; the older name
      a.max_relative_positions = none ? 0 : as_int(value, label);
      if (a.max_relative_positions < 0)
        throw value_error(label + " must be ≥ 0 (0 = the model's k), got " + std::to_string(a.max_relative_positions));
    } else if (key == "emd") {
      a.emd = as_bool(value, label);
    } else if (key == "relative_positions") {
      if (!is_str)
        throw value_error("ablation['relative_positions'] must be \"hf\" or \"microsoft\", got " + repr_of(value));
      try {
        a.relative_positions = deberta::parse_relative_position_rule(text);
      } catch (const Error& e) {
        throw value_error(std::string("ablation['relative_positions']: ") + e.what());
      }
    } else {
      throw value_error("unknown ablation key " + quoted(key) +
                        " (known: c2c, c2p, p2c, p2p, p2c_index, scale_factor, head_mask, window, emd, "
                        "relative_positions)");
    }
  }
  return a;
}

Ablation ablation_from_object(const py::object& obj) {
  if (obj.is_none()) return {};
  if (!py::isinstance<py::dict>(obj)) throw type_error("ablation must be a dict or None, got " + repr_of(obj));
  return ablation_from_dict(obj.cast<py::dict>());
}

/// A RuntimeWarning (the message's invalid bytes as \xNN); raises when warnings are errors (-W error).
void warn(const std::string& message) {
  if (message.empty()) return;
  const py::str text = message_text(message);
  if (PyErr_WarnEx(PyExc_RuntimeWarning, PyUnicode_AsUTF8(text.ptr()), 1) < 0) throw py::error_already_set();
}

// --- the API ----------------------------------------------------------------------------------

std::shared_ptr<PyModel> load_model(const py::object& path_arg, const py::object& backend_arg) {
  const std::string path = as_path(path_arg, "load_model(): path");
  auto m = std::make_shared<PyModel>();
  if (!backend_arg.is_none()) {
    const std::string name = as_str(backend_arg, "load_model(): backend");
    if (name != "fast" && name != "reference")
      throw value_error("load_model(): backend must be 'fast' or 'reference', got " + quoted(name));
    m->backend = deberta::parse_backend(name, "load_model(): backend");
  }
  without_gil([&] {
    const ModelEngine engine(m->backend);  // the position table is projected on the model's engine
    m->model = deberta::load_model(path);
    m->workspace_engine = deberta::backend();
    const std::optional<FileIdentity> id = identity_of(m->model.weights_path);
    if (!id) throw Error(m->model.weights_path + ": cannot stat the weights file after reading it");
    m->loaded_file = *id;
  });
  return m;
}

py::dict tokenize(const py::object& model, const py::object& text_arg, const py::object& pair_arg) {
  PyModel& m = as_model(model, "tokenize(): model");
  const std::string text = as_str(text_arg, "tokenize(): text");
  std::optional<std::string> pair;
  if (!pair_arg.is_none()) pair = as_str(pair_arg, "tokenize(): pair");
  const deberta::Encoding e = without_gil([&] { return m.require_tokenizer().encode(text, pair ? &*pair : nullptr); });
  py::list tokens;
  for (const auto& t : e.tokens) tokens.append(py::str(deberta::valid_utf8(t)));  // as the CLI's JSON
  py::dict out;
  out["tokens"] = tokens;
  out["input_ids"] = py::array_t<int64_t>(static_cast<py::ssize_t>(e.ids.size()), e.ids.data());
  out["token_type_ids"] = py::array_t<int64_t>(static_cast<py::ssize_t>(e.token_type_ids.size()), e.token_type_ids.data());
  const std::vector<int64_t> ones(e.ids.size(), 1);
  out["attention_mask"] = py::array_t<int64_t>(static_cast<py::ssize_t>(ones.size()), ones.data());
  return out;
}

py::dict forward(const py::object& model, const py::object& input_ids, const py::object& attention_mask,
                 const py::object& token_type_ids, const py::object& ablation, const py::object& masked_positions,
                 const py::object& full_logits_arg) {
  PyModel& m = as_model(model, "forward(): model");
  const bool full_logits = as_bool(full_logits_arg, "forward(): full_logits");
  // The inputs go through the core's reader of golden input files, so its checks (dtype, rank,
  // lengths, batch of one, at most max_position_embeddings tokens) and messages are the dump's.
  TensorMap in;
  in["input_ids"] = int_tensor(input_ids, "input_ids");
  if (!attention_mask.is_none()) in["attention_mask"] = int_tensor(attention_mask, "attention_mask");
  if (!token_type_ids.is_none()) in["token_type_ids"] = int_tensor(token_type_ids, "token_type_ids");
  if (!masked_positions.is_none()) in["mlm.masked_positions"] = int_tensor(masked_positions, "masked_positions");
  const Ablation requested = ablation_from_object(ablation);
  TensorMap out;
  std::string warning;
  without_gil([&] {
    const ModelEngine engine(m.backend);
    const auto held = m.read_on_engine();
    const deberta::Inputs inputs = deberta::inputs_from_tensors(in, "forward()");
    const std::vector<int64_t> positions = deberta::masked_positions_from_tensors(in, "forward()");
    const Ablation a = deberta::normalized(m.model, requested);
    const deberta::ForwardTrace trace = deberta::forward(m.model, inputs, a, deberta::TraceLevel::Full, !positions.empty());
    warning = deberta::non_finite_trace(trace);
    out = deberta::trace_to_tensors(m.model, trace, positions, full_logits);
  });
  warn(warning);
  return to_dict(out);
}

/// The tokens of `text`, the positions of its [MASK] tokens and the tokenizer that made them.
/// Errors: no tokenizer, no [MASK], more tokens than max_position_embeddings (InvalidInput).
struct TextInput {
  deberta::Inputs inputs;
  std::vector<int64_t> positions;
  const deberta::Tokenizer* tokenizer = nullptr;
};
TextInput text_input(PyModel& m, const std::string& text, const char* what) {
  deberta::InputRequest q;  // the core's one input resolver (deberta/inputs.h), as the CLI and the viewer
  q.text = text;
  TextInput r;
  r.tokenizer = &m.require_tokenizer();
  deberta::TokenizedInput t = deberta::tokenize_input(m.model, r.tokenizer, q);
  r.inputs = std::move(t.inputs);
  r.positions = std::move(t.mask_positions);
  if (r.positions.empty()) throw deberta::InvalidInput(std::string(what) + "(): the text has no [MASK] token");
  return r;
}

/// The tokenizer is never replaced once loaded and its const calls are thread-safe, so this runs
/// with the GIL and without the model's lock.
py::list predictions_list(const deberta::Tokenizer& tokenizer, const std::vector<deberta::MaskPrediction>& preds) {
  py::list out;
  for (const auto& p : preds) {
    py::list top;
    for (const auto& t : p.top) {
      py::dict d;
      d["id"] = t.id;
      d["token"] = tokenizer.display(t.id);
      d["probability"] = t.probability;
      top.append(d);
    }
    py::dict d;
    d["position"] = p.position;
    d["top"] = top;
    out.append(d);
  }
  return out;
}

py::list predict(const py::object& model, const py::object& text_arg, const py::object& top_k_arg,
                 const py::object& ablation) {
  PyModel& m = as_model(model, "predict(): model");
  const std::string text = as_str(text_arg, "predict(): text");
  const int64_t top_k = as_int(top_k_arg, "predict(): top_k");
  if (top_k < 1) throw value_error("predict(): top_k must be ≥ 1, got " + std::to_string(top_k));
  const Ablation requested = ablation_from_object(ablation);
  TextInput in;
  std::vector<deberta::MaskPrediction> preds;
  without_gil([&] {
    const ModelEngine engine(m.backend);
    const auto held = m.read_on_engine();
    in = text_input(m, text, "predict");
    preds = deberta::predict_masked(m.model, in.inputs, in.positions, deberta::normalized(m.model, requested), top_k);
  });
  warn(deberta::non_finite_predictions(preds));
  return predictions_list(*in.tokenizer, preds);
}

py::dict ablate(const py::object& model, const py::object& text_arg, const py::object& top_k_arg,
                const py::kwargs& switches) {
  PyModel& m = as_model(model, "ablate(): model");
  const std::string text = as_str(text_arg, "ablate(): text");
  const int64_t top_k = as_int(top_k_arg, "ablate(): top_k");
  if (top_k < 1) throw value_error("ablate(): top_k must be ≥ 1, got " + std::to_string(top_k));
  const Ablation requested = ablation_from_dict(switches);
  TextInput in;
  std::vector<deberta::MaskPrediction> baseline, changed;
  deberta::AblationEffect effect;
  Ablation a;
  std::string description;
  without_gil([&] {
    const ModelEngine engine(m.backend);
    const auto held = m.read_on_engine();
    in = text_input(m, text, "ablate");
    a = deberta::normalized(m.model, requested);
    baseline = deberta::predict_masked(m.model, in.inputs, in.positions, {}, top_k);
    changed = a.is_default() ? baseline : deberta::predict_masked(m.model, in.inputs, in.positions, a, top_k);
    effect = deberta::compare_predictions(baseline, changed);
    description = a.describe(&m.model.config);
  });
  warn(deberta::non_finite_predictions(changed));
  py::dict out;
  out["ablation"] = description;
  out["baseline"] = predictions_list(*in.tokenizer, baseline);
  out["predictions"] = predictions_list(*in.tokenizer, changed);
  out["mean_kl"] = effect.mean_kl;
  out["max_kl"] = effect.max_kl;
  out["top1_changes"] = effect.top1_changes;
  out["positions"] = effect.positions;
  return out;
}

/// Model.set_tensor: the value is checked (type, then shape against the stored tensor) before
/// anything is converted, so a huge or broadcast view is refused without allocating its float64
/// copy; the copy itself may fail only for a value of the model's own size (MemoryError naming
/// the tensor).
void set_tensor(PyModel& m, const py::object& name_arg, const py::object& value) {
  const std::string name = as_name(name_arg, "Model.set_tensor(): name");
  const std::string what = "set_tensor(" + quoted(name) + ")";
  if (!py::isinstance<py::array>(value) && !py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
    throw type_error(what + ": value must be an array-like of numbers, got " + type_name(value));
  const py::array raw = py::array::ensure(value);  // an ndarray as it is (a view stays a view)
  if (!raw) {
    PyErr_Clear();
    throw type_error(what + ": value must be an array-like of real numbers");
  }
  const char kind = raw.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    throw type_error(what + ": value must hold real numbers, got dtype " + std::string(py::str(raw.dtype())));
  const std::vector<int64_t> want = without_gil([&] { return m.settable_shape(name); });
  Tensor t;
  t.dtype = deberta::DType::F64;
  for (py::ssize_t d = 0; d < raw.ndim(); ++d) t.shape.push_back(raw.shape(d));
  if (t.shape != want) {
    Tensor expected;
    expected.shape = want;
    throw value_error(what + ": shape " + t.shape_string() + " does not match the model's " + expected.shape_string());
  }
  py::object converted;
  try {
    converted = py::module_::import("numpy").attr("ascontiguousarray")(raw, "float64");
  } catch (const py::error_already_set& e) {
    if (e.matches(PyExc_MemoryError))
      throw Fault(Fault::Memory, what + ": out of memory converting the value " + t.shape_string() + " to float64");
    throw value_error(what + ": cannot convert the value to float64: " + e.what());
  }
  const auto arr = py::array_t<double, py::array::c_style>::ensure(converted);
  if (!arr) {
    PyErr_Clear();
    throw value_error(what + ": cannot convert the value to float64");
  }
  t.f.assign(arr.data(), arr.data() + arr.size());
  without_gil([&] { m.set_tensor(name, std::move(t)); });
}

PyModel& as_model(const py::handle& value, const std::string& label) {
  if (!py::isinstance<PyModel>(value))
    throw type_error(label + " must be a deberta_explorer.Model (from load_model()), got " + type_name(value));
  return value.cast<PyModel&>();
}

}  // namespace

PYBIND11_MODULE(deberta_explorer, mod) {
  mod.doc() =
      "DeBERTa Explorer: the float64 reference forward pass of DeBERTa (He et al., ICLR 2021) with every "
      "intermediate tensor, under the golden tensor names of `deberta dump`. See docs/python.md.";
  // Raised for every error of the core: one line naming the file or object and the problem.
  static py::exception<Error> error(mod, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      set_error(error.ptr(), e.what());
    }
  });
  // The two kinds of Error a caller may want to tell apart, as subclasses of both Error and the
  // builtin exception a Python user expects (tried before the translator above: pybind11 tries the
  // most recently registered first), and the module's own argument errors (Fault).
  const py::object make_class = py::module_::import("builtins").attr("type");
  static py::object file_not_found = make_class(
      "FileNotFoundError", py::make_tuple(py::handle(PyExc_FileNotFoundError), error),
      py::dict(py::arg("__module__") = "deberta_explorer",
               py::arg("__doc__") = "A file or folder that does not exist (a subclass of Error and FileNotFoundError)."));
  static py::object invalid_input = make_class(
      "InvalidInputError", py::make_tuple(py::handle(PyExc_ValueError), error),
      py::dict(py::arg("__module__") = "deberta_explorer",
               py::arg("__doc__") = "A bad input value: ids outside the vocabulary, lengths that do not match, masked "
                                    "positions outside the input, more tokens than max_position_embeddings (a "
                                    "subclass of Error and ValueError)."));
  mod.attr("FileNotFoundError") = file_not_found;
  mod.attr("InvalidInputError") = invalid_input;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const deberta::FileNotFound& e) {
      set_error(file_not_found.ptr(), e.what());
    } catch (const deberta::InvalidInput& e) {
      set_error(invalid_input.ptr(), e.what());
    } catch (const Fault& f) {
      PyObject* const types[] = {PyExc_TypeError, PyExc_ValueError, PyExc_KeyError, PyExc_UnicodeError, PyExc_MemoryError};
      set_error(types[f.kind], f.message);
    }
  });

  // Properties fixed at load (config, paths) are read without a lock; everything that reads the
  // weights takes the model's lock after releasing the GIL (PyModel).
  py::class_<PyModel, std::shared_ptr<PyModel>>(mod, "Model", "A model directory loaded into memory (load_model).")
      .def_property_readonly("directory", [](const PyModel& m) { return fs_text(m.model.directory); },
                             "Folder holding config.json (as os.fsdecode gives it: a non-UTF-8 byte as U+DC80..U+DCFF)")
      .def_property_readonly("weights_path", [](const PyModel& m) { return fs_text(m.model.weights_path); },
                             "The weights file that was read (as os.fsdecode gives it)")
      .def_property_readonly("model_type", [](const PyModel& m) { return m.model.config.model_type; })
      .def_property_readonly("num_layers", [](const PyModel& m) { return m.model.config.num_hidden_layers; })
      .def_property_readonly("num_heads", [](const PyModel& m) { return m.model.config.num_attention_heads; })
      .def_property_readonly("hidden_size", [](const PyModel& m) { return m.model.config.hidden_size; })
      .def_property_readonly("vocab_size", [](const PyModel& m) { return m.model.config.vocab_size; })
      .def_property_readonly("max_position_embeddings",
                             [](const PyModel& m) { return m.model.config.max_position_embeddings; })
      .def_property_readonly("runs_emd",
                             [](const PyModel& m) {
                               return without_gil([&] {
                                 const auto held = m.lock.read();
                                 return deberta::runs_emd(m.model);
                               });
                             },
                             "Whether the MLM decoder stage runs the Enhanced Mask Decoder (deberta::runs_emd)")
      .def_property_readonly("backend",
                             [](const PyModel& m) {
                               return std::string(deberta::backend_name(m.backend ? *m.backend : deberta::backend()));
                             },
                             "The engine this model's calls compute on: its own (load_model(backend=...)), else the "
                             "process's at this moment")
      .def_property_readonly("has_tokenizer", [](const PyModel& m) { return deberta::has_tokenizer(m.model.directory); })
      .def("tensor_names",
           [](const PyModel& m) {
             const std::vector<std::string> names = without_gil([&] { return m.names(); });
             py::list out;
             for (const auto& n : names) out.append(fs_text(n));
             return out;
           },
           "tensor_names() -> list[str]\n\nThe state-dict names of the model's weights file (Hugging Face or "
           "microsoft names, as stored), sorted. Raises Error when the file changed on disk since load_model().")
      .def("tensor",
           [](const PyModel& m, const py::object& name_arg) {
             const std::string name = as_name(name_arg, "Model.tensor(): name");
             Tensor t = without_gil([&] { return m.tensor(name); });
             if (!deberta::dtype_is_integer(t.dtype)) t.dtype = deberta::DType::F64;
             return to_numpy(t);
           },
           py::arg("name"),
           "tensor(name) -> numpy.ndarray\n\nA copy of one weight tensor as float64 (integer tensors as int64), in "
           "its stored shape, including any set_tensor edit. Raises KeyError for an unknown name, Error when the "
           "weights file changed on disk since load_model().")
      .def("set_tensor", &set_tensor, py::arg("name"), py::arg("value"),
           "set_tensor(name, value)\n\nReplaces one weight tensor (same shape; converted to float64) and rebuilds "
           "what the forward derives from the weights: a forward afterwards equals a fresh load of a folder "
           "holding the edited weights. Safe while other threads run the model (they see the weights before or "
           "after the edit, never between). Raises KeyError (unknown name), ValueError (shape, checked before "
           "anything is converted), TypeError (dtype), Error (the weights file changed on disk since load_model()).")
      .def("__repr__", [](const PyModel& m) {
        return message_text("<deberta_explorer.Model " + m.model.config.model_type + " " +
                            std::to_string(m.model.config.num_hidden_layers) + " layers from " + m.model.directory + ">");
      });

  mod.def("load_model", &load_model, py::arg("path"), py::arg("backend") = py::none(),
          "load_model(path, backend=None) -> Model\n\n"
          "Loads a model directory (config.json + model.safetensors or pytorch_model.bin) or a weights file whose "
          "folder holds config.json. backend: this model's own engine, 'fast' or 'reference' (None: the process's, "
          "set_backend / DEBERTA_BACKEND); every call on the model computes on it, whatever set_backend says and "
          "whichever thread calls. Raises deberta_explorer.Error naming the file on any problem, ValueError for "
          "another backend name.");
  mod.def("tokenize", &tokenize, py::arg("model"), py::arg("text"), py::arg("pair") = py::none(),
          "tokenize(model, text, pair=None) -> dict\n\n"
          "[CLS] text [SEP] (pair [SEP]) with the model's tokenizer: {'tokens': [str], 'input_ids': int64 [N], "
          "'token_type_ids': int64 [N], 'attention_mask': int64 [N] (all 1)}. Raises Error when the model folder has "
          "no tokenizer (or its tokenizer failed to load: the same error on every call), UnicodeError when the text "
          "holds a lone surrogate.");
  mod.def("forward", &forward, py::arg("model"), py::arg("input_ids"), py::arg("attention_mask") = py::none(),
          py::arg("token_type_ids") = py::none(), py::arg("ablation") = py::none(),
          py::arg("masked_positions") = py::none(), py::arg("full_logits") = false,
          "forward(model, input_ids, attention_mask=None, token_type_ids=None, ablation=None, masked_positions=None, "
          "full_logits=False) -> dict[str, numpy.ndarray]\n\n"
          "The traced forward pass as `deberta dump` writes it (same names, shapes, dtypes and bits): input_ids "
          "[1, N], embedding_output [N, H], rel_embeddings [2k, H], rel_pos / c2p_row / p2c_row int64 [N, N], "
          "layer.{l}.c2c|c2p|p2c|p2p|attn_logits|attn_probs [heads, N, N], layer.{l}.output [N, H], emd.* "
          "(with the EMD), mlm.masked_logits [M, V] (with masked_positions; mlm.logits [N, V] with full_logits) "
          "and the task heads the model has. input_ids etc.: integers, [N] or [1, N], N ≤ max_position_embeddings "
          "(InvalidInputError otherwise). ablation: dict of switches (docs/python.md); unknown keys raise ValueError.");
  mod.def("predict", &predict, py::arg("model"), py::arg("text"), py::arg("top_k") = 5, py::arg("ablation") = py::none(),
          "predict(model, text, top_k=5, ablation=None) -> list\n\n"
          "Top-k tokens at each [MASK] of the text (as `deberta predict --json`'s 'predictions'): "
          "[{'position': int, 'top': [{'id', 'token', 'probability'}]}].");
  mod.def("ablate", &ablate, py::arg("model"), py::arg("text"), py::arg("top_k") = 5,
          "ablate(model, text, top_k=5, **switches) -> dict\n\n"
          "Predictions at each [MASK] as trained and under the switches (the keys of the ablation dict, e.g. "
          "c2p=False, head_mask=[(1, 0)]): {'ablation': description, 'baseline': [...], 'predictions': [...], "
          "'mean_kl', 'max_kl' (KL(baseline || ablated), nats), 'top1_changes', 'positions'}.");
  mod.def(
      "read_safetensors",
      [](const py::object& path_arg) {
        const std::string path = as_path(path_arg, "read_safetensors(): path");
        const TensorMap tensors = without_gil([&] { return deberta::read_safetensors(path); });
        return to_dict(tensors);
      },
      py::arg("path"),
      "read_safetensors(path) -> dict[str, numpy.ndarray]\n\n"
      "A safetensors file (e.g. a golden case or a `deberta dump`) with floating tensors as float64 and integer "
      "ones as int64. Raises Error naming the file when it is malformed.");
  mod.def("set_num_threads",
          [](const py::object& threads_arg) {
            const int64_t threads = as_int(threads_arg, "set_num_threads(): threads");
            if (threads < 1 || threads > deberta::kMaxThreads)
              throw value_error("set_num_threads(): threads must be in [1, " + std::to_string(deberta::kMaxThreads) +
                                "], found " + std::to_string(threads));
            deberta::set_num_threads(static_cast<int>(threads));
          },
          py::arg("threads"),
          "Threads used by the forward pass (heads in parallel). The numbers do not depend on it.");
  mod.def("num_threads", &deberta::num_threads);
  mod.def("set_backend",
          [](const py::object& name) {
            try {
              const std::string value = as_str(name, "set_backend(): backend");
              // The value quoted whole (a NUL as \x00): Python's message would end at a raw NUL.
              if (value != "fast" && value != "reference")
                throw value_error("set_backend(): backend " + quoted(value) + ": expected fast or reference");
              deberta::set_backend(deberta::parse_backend(value, "set_backend"));
            } catch (const Error& e) {
              throw value_error(e.what());
            }
          },
          py::arg("backend"),
          "set_backend(backend)\n\nThe engine of every later forward pass: 'fast' (default) or 'reference' (one "
          "Eigen expression per op, one thread). Also the environment variable DEBERTA_BACKEND.");
  mod.def("backend", [] { return std::string(deberta::backend_name(deberta::backend())); },
          "backend() -> str\n\nThe engine in use: 'fast' or 'reference'.");
  mod.attr("__version__") = DEBERTA_VERSION;
}
