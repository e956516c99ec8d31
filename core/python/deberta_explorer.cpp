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
// positions outside the input, …) as `deberta_explorer.InvalidInputError`, subclasses of both
// `Error` and the builtin FileNotFoundError / ValueError. An argument of the wrong type is a
// TypeError naming the function and the argument (never pybind11's generic "incompatible function
// arguments").
// API reference and examples: docs/python.md.
#include "deberta/analysis.h"
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

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

using deberta::Ablation;
using deberta::Error;
using deberta::Tensor;
using deberta::TensorMap;

/// A loaded model and, when its folder has one, its tokenizer (loaded once, on first use).
struct PyModel {
  deberta::Model model;
  std::unique_ptr<deberta::Tokenizer> tokenizer;
  bool tokenizer_tried = false;
  /// Tensors replaced by `set_tensor`, by state-dict name, as float64.
  TensorMap edits;

  /// The weights file: a safetensors file is opened for lazy reads (its header only, as
  /// `load_model` does: issue 28, class 7); a PyTorch checkpoint is read whole.
  struct Source {
    std::unique_ptr<deberta::SafetensorsReader> reader;  ///< .safetensors
    TensorMap all;                                       ///< .bin / .pt: every tensor, read
    const TensorMap& index() const { return reader ? reader->index() : all; }
  };
  Source open_source() const {
    Source s;
    if (model.weights_path.size() >= 12 &&
        model.weights_path.compare(model.weights_path.size() - 12, 12, ".safetensors") == 0)
      s.reader = std::make_unique<deberta::SafetensorsReader>(model.weights_path);
    else
      s.all = deberta::read_weights_file(model.weights_path);
    return s;
  }

  /// Every state-dict name of the weights file, sorted (values not read).
  std::vector<std::string> names() const {
    const Source s = open_source();  // (not in the range-for: the index would outlive it)
    std::vector<std::string> out;
    for (const auto& entry : s.index()) out.push_back(entry.first);
    return out;
  }

  /// The tensor `name` as the model now holds it: an edit, else the file's values (only this
  /// tensor is read from a safetensors file). Errors: KeyError naming the tensor when there is none.
  Tensor tensor(const std::string& name) const {
    if (const auto e = edits.find(name); e != edits.end()) return e->second;
    Source s = open_source();
    const auto it = s.index().find(name);
    if (it == s.index().end()) throw missing(name);
    if (!s.reader) return it->second;
    Tensor t = it->second;
    s.reader->load(name, &t);
    return t;
  }

  py::key_error missing(const std::string& name) const {
    return py::key_error("no tensor named '" + name + "' in " + model.weights_path + " (Model.tensor_names() lists them)");
  }

  /// Replaces one tensor and rebuilds the weights exactly as a load of the edited file would (the
  /// same mapping, then the derived position table from the new weights); the file is read as
  /// `load_model` reads it, only the tensors the model uses. Nothing changes when any check fails.
  void set_tensor(const std::string& name, Tensor value) {
    Source s = open_source();
    TensorMap index = s.index();
    const auto it = index.find(name);
    if (it == index.end()) throw missing(name);
    const Tensor& old = it->second;
    if (old.shape != value.shape)
      throw py::value_error("set_tensor('" + name + "'): shape " + value.shape_string() + " does not match the model's " +
                            old.shape_string());
    if (deberta::dtype_is_integer(old.dtype))
      throw py::type_error("set_tensor('" + name + "'): the tensor holds integers (" + old.shape_string() +
                           "); only floating tensors can be set");
    for (const auto& [edited, tensor] : edits) index[edited] = tensor;
    index[name] = value;
    deberta::TensorLoader load;  // values not in `index` (not edited): from the file, when map_weights asks
    if (s.reader) load = [&s](const std::string& n, Tensor* t) { s.reader->load(n, t); };
    deberta::ModelWeights w = deberta::map_weights(model.config, std::move(index), model.weights_path, load);
    model.weights = std::move(w);
    model.weights_changed();
    (void)model.workspace.positions(model);
    edits[name] = std::move(value);
  }

  /// The model's tokenizer. Errors: the folder has no tokenizer files (message as the CLI's).
  const deberta::Tokenizer& require_tokenizer() {
    if (!tokenizer_tried) {
      tokenizer_tried = true;
      if (deberta::has_tokenizer(model.directory))
        tokenizer = deberta::load_tokenizer_for_model(model.directory, model.config.vocab_size);
    }
    if (!tokenizer)
      throw Error(model.directory + ": no tokenizer files (spm.model, vocab.json + merges.txt or tokenizer.json); "
                                    "pass input_ids to forward() instead");
    return *tokenizer;
  }
};

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

/// A tensor map as {name: ndarray}, in name order.
py::dict to_dict(const TensorMap& tensors) {
  py::dict out;
  for (const auto& [name, t] : tensors) out[py::str(name)] = to_numpy(t);
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
    throw py::value_error(what + " must hold integers, got dtype " + std::string(py::str(arr.dtype())));
  if (arr.ndim() > 2) throw py::value_error(what + " must be [N] or [1, N], got " + std::to_string(arr.ndim()) + " dimensions");
  auto ints = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(arr);
  if (!ints) throw py::value_error(what + ": cannot convert to int64");
  Tensor t;
  t.dtype = deberta::DType::I64;
  for (py::ssize_t d = 0; d < ints.ndim(); ++d) t.shape.push_back(ints.shape(d));
  t.i.assign(ints.data(), ints.data() + ints.size());
  return t;
}

// --- arguments --------------------------------------------------------------------------------
// Every argument is taken as a Python object and converted here, so that a wrong type is a
// TypeError naming the argument (`label`, e.g. "predict(): top_k" or "ablation['c2p']").

/// `value` as a bool. Errors (TypeError): anything but True / False (a NumPy bool counts).
bool as_bool(const py::handle& value, const std::string& label) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(value, np.attr("bool_"))) return value.cast<bool>();
  throw py::type_error(label + " must be True or False, got " + std::string(py::repr(value)));
}

/// `value` as an int. Errors: TypeError for a bool, a float or anything not an integer;
/// ValueError when it does not fit in 64 bits.
int64_t as_int(const py::handle& value, const std::string& label) {
  if (py::isinstance<py::bool_>(value) || !py::isinstance(value, py::module_::import("numbers").attr("Integral")))
    throw py::type_error(label + " must be an integer, got " + std::string(py::repr(value)));
  const py::int_ i = py::reinterpret_borrow<py::object>(value).attr("__index__")();
  const py::int_ lo(std::numeric_limits<int64_t>::min()), hi(std::numeric_limits<int64_t>::max());
  if (i < lo || i > hi) throw py::value_error(label + " is out of range, got " + std::string(py::repr(value)));
  return i.cast<int64_t>();
}

/// `value` as a str. Errors (TypeError): anything but a str.
std::string as_str(const py::handle& value, const std::string& label) {
  if (!py::isinstance<py::str>(value))
    throw py::type_error(label + " must be a str, got " + std::string(py::str(value.get_type().attr("__name__"))));
  return value.cast<std::string>();
}

/// `value` as a file-system path: a str or an os.PathLike (pathlib.Path). Errors (TypeError):
/// anything else, bytes included.
std::string as_path(const py::handle& value, const std::string& label) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::hasattr(value, "__fspath__")) {
    const py::object s = py::module_::import("os").attr("fspath")(value);
    if (py::isinstance<py::str>(s)) return s.cast<std::string>();
  }
  throw py::type_error(label + " must be a path (str or os.PathLike), got " +
                       std::string(py::str(value.get_type().attr("__name__"))));
}

/// `value` as a loaded model. Errors (TypeError): anything but a Model from load_model().
PyModel& as_model(const py::handle& value, const std::string& label);

// --- the ablation dict ------------------------------------------------------------------------

/// The switches of `deberta::Ablation` from a dict (keys as the struct's fields; docs/python.md):
///   c2c: bool; c2p, p2c, p2p: bool or None (None: as the model); p2c_index: "code" | "paper" | None;
///   scale_factor (or scale): "auto" | "rescale" | a positive number: HF's scale_factor, the factor
///   in s = 1/√(d · factor); head_mask: iterable of (layer, head); window (or
///   max_relative_positions): int K ≥ 0 (0 = k), the central 2K table rows read; emd: bool;
///   relative_positions: "hf" | "microsoft".
/// The same switches as the CLI's flags (ablation.h), typed instead of text. Whether a switch fits
/// the model (a term without weights, K > k, a head outside the model) is the core's check
/// (`resolve_attention`), raised when the model runs.
/// Errors: ValueError naming an unknown key or a bad value; TypeError for a value of the wrong type.
Ablation ablation_from_dict(const py::dict& d) {
  Ablation a;
  for (const auto& [k, value] : d) {
    if (!py::isinstance<py::str>(k)) throw py::value_error("ablation keys must be strings, got " + std::string(py::repr(k)));
    const std::string key = k.cast<std::string>();
    const bool none = value.is_none();
    if (key == "c2c") {
      a.c2c = as_bool(value, "ablation['c2c']");
    } else if (key == "c2p" || key == "p2c" || key == "p2p") {
      std::optional<bool> v;
      if (!none) v = as_bool(value, "ablation['" + key + "']");
      (key == "c2p" ? a.c2p : key == "p2c" ? a.p2c : a.p2p) = v;
    } else if (key == "p2c_index") {
      if (none) {
        a.p2c_index.reset();
      } else {
        const std::string s = py::str(value);
        if (!py::isinstance<py::str>(value) || (s != "code" && s != "paper"))
          throw py::value_error("ablation['p2c_index'] must be \"code\", \"paper\" or None, got " + std::string(py::repr(value)));
        a.p2c_index = s == "code" ? deberta::P2CIndex::Code : deberta::P2CIndex::Paper;
      }
    } else if (key == "scale_factor" || key == "scale") {  // "scale": the older name
      if (none || (py::isinstance<py::str>(value) && value.cast<std::string>() == "auto")) {
        a.scale_mode = deberta::ScaleMode::Auto;
      } else if (py::isinstance<py::str>(value) && value.cast<std::string>() == "rescale") {
        a.scale_mode = deberta::ScaleMode::Rescale;
      } else if (!py::isinstance<py::bool_>(value) && py::isinstance(value, py::module_::import("numbers").attr("Real"))) {
        const double f = value.cast<double>();
        if (!(std::isfinite(f) && f > 0))
          throw py::value_error("ablation['scale'] must be a positive finite number, got " + std::string(py::repr(value)));
        a.scale_mode = deberta::ScaleMode::Fixed;
        a.scale_factor = f;
      } else {
        throw py::value_error("ablation['scale'] must be \"auto\", \"rescale\" or a positive number, got " +
                              std::string(py::repr(value)));
      }
    } else if (key == "head_mask") {
      a.head_mask.clear();
      if (!none) {
        for (const auto& pair : value) {
          py::sequence p = py::reinterpret_borrow<py::sequence>(pair);
          if (!py::isinstance<py::sequence>(pair) || py::isinstance<py::str>(pair) || p.size() != 2)
            throw py::value_error("ablation['head_mask'] must be a list of (layer, head) pairs, got " +
                                  std::string(py::repr(pair)));
          a.head_mask.insert({as_int(p[0], "ablation['head_mask']"), as_int(p[1], "ablation['head_mask']")});
        }
      }
    } else if (key == "window" || key == "max_relative_positions") {  // K; the older name
      a.max_relative_positions = none ? 0 : as_int(value, "ablation['" + key + "']");
      if (a.max_relative_positions < 0)
        throw py::value_error("ablation['max_relative_positions'] must be ≥ 0 (0 = the model's k), got " +
                              std::to_string(a.max_relative_positions));
    } else if (key == "emd") {
      a.emd = as_bool(value, "ablation['emd']");
    } else if (key == "relative_positions") {
      if (!py::isinstance<py::str>(value))
        throw py::value_error("ablation['relative_positions'] must be \"hf\" or \"microsoft\", got " + std::string(py::repr(value)));
      try {
        a.relative_positions = deberta::parse_relative_position_rule(value.cast<std::string>());
      } catch (const Error& e) {
        throw py::value_error(std::string("ablation['relative_positions']: ") + e.what());
      }
    } else {
      throw py::value_error("unknown ablation key '" + key +
                            "' (known: c2c, c2p, p2c, p2p, p2c_index, scale_factor, head_mask, window, emd, "
                            "relative_positions)");
    }
  }
  return a;
}

Ablation ablation_from_object(const py::object& obj) {
  if (obj.is_none()) return {};
  if (!py::isinstance<py::dict>(obj)) throw py::type_error("ablation must be a dict or None, got " + std::string(py::repr(obj)));
  return ablation_from_dict(obj.cast<py::dict>());
}

void warn(const std::string& message) {
  if (!message.empty()) PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1);
}

// --- the API ----------------------------------------------------------------------------------

std::shared_ptr<PyModel> load_model(const py::object& path_arg) {
  const std::string path = as_path(path_arg, "load_model(): path");
  auto m = std::make_shared<PyModel>();
  py::gil_scoped_release release;
  m->model = deberta::load_model(path);
  return m;
}

py::dict tokenize(const py::object& model, const py::object& text_arg, const py::object& pair_arg) {
  PyModel& m = as_model(model, "tokenize(): model");
  const std::string text = as_str(text_arg, "tokenize(): text");
  std::optional<std::string> pair;
  if (!pair_arg.is_none()) pair = as_str(pair_arg, "tokenize(): pair");
  const deberta::Encoding e = m.require_tokenizer().encode(text, pair ? &*pair : nullptr);
  py::dict out;
  out["tokens"] = e.tokens;
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
  // lengths, batch of one) and messages are the dump's.
  TensorMap in;
  in["input_ids"] = int_tensor(input_ids, "input_ids");
  if (!attention_mask.is_none()) in["attention_mask"] = int_tensor(attention_mask, "attention_mask");
  if (!token_type_ids.is_none()) in["token_type_ids"] = int_tensor(token_type_ids, "token_type_ids");
  if (!masked_positions.is_none()) in["mlm.masked_positions"] = int_tensor(masked_positions, "masked_positions");
  const Ablation requested = ablation_from_object(ablation);
  TensorMap out;
  std::string warning;
  {
    py::gil_scoped_release release;
    const deberta::Inputs inputs = deberta::inputs_from_tensors(in, "forward()");
    const std::vector<int64_t> positions = deberta::masked_positions_from_tensors(in, "forward()");
    const Ablation a = deberta::normalized(m.model, requested);
    const deberta::ForwardTrace trace = deberta::forward(m.model, inputs, a, deberta::TraceLevel::Full, !positions.empty());
    warning = deberta::non_finite_trace(trace);
    out = deberta::trace_to_tensors(m.model, trace, positions, full_logits);
  }
  warn(warning);
  return to_dict(out);
}

/// The tokens of `text` and the positions of its [MASK] tokens. Errors: no tokenizer, no [MASK].
struct TextInput {
  deberta::Inputs inputs;
  std::vector<int64_t> positions;
};
TextInput text_input(PyModel& m, const std::string& text, const char* what) {
  deberta::InputRequest q;  // the core's one input resolver (deberta/inputs.h), as the CLI and the viewer
  q.text = text;
  deberta::TokenizedInput t = deberta::tokenize_input(m.model, &m.require_tokenizer(), q);
  TextInput r;
  r.inputs = std::move(t.inputs);
  r.positions = std::move(t.mask_positions);
  if (r.positions.empty()) throw deberta::InvalidInput(std::string(what) + "(): the text has no [MASK] token");
  return r;
}

py::list predictions_list(PyModel& m, const std::vector<deberta::MaskPrediction>& preds) {
  py::list out;
  for (const auto& p : preds) {
    py::list top;
    for (const auto& t : p.top) {
      py::dict d;
      d["id"] = t.id;
      d["token"] = m.tokenizer->display(t.id);
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
  if (top_k < 1) throw py::value_error("predict(): top_k must be ≥ 1, got " + std::to_string(top_k));
  const Ablation requested = ablation_from_object(ablation);
  const TextInput in = text_input(m, text, "predict");
  std::vector<deberta::MaskPrediction> preds;
  {
    py::gil_scoped_release release;
    preds = deberta::predict_masked(m.model, in.inputs, in.positions, deberta::normalized(m.model, requested), top_k);
  }
  warn(deberta::non_finite_predictions(preds));
  return predictions_list(m, preds);
}

py::dict ablate(const py::object& model, const py::object& text_arg, const py::object& top_k_arg,
                const py::kwargs& switches) {
  PyModel& m = as_model(model, "ablate(): model");
  const std::string text = as_str(text_arg, "ablate(): text");
  const int64_t top_k = as_int(top_k_arg, "ablate(): top_k");
  if (top_k < 1) throw py::value_error("ablate(): top_k must be ≥ 1, got " + std::to_string(top_k));
  const Ablation requested = ablation_from_dict(switches);
  const TextInput in = text_input(m, text, "ablate");
  std::vector<deberta::MaskPrediction> baseline, changed;
  deberta::AblationEffect effect;
  Ablation a;
  {
    py::gil_scoped_release release;
    a = deberta::normalized(m.model, requested);
    baseline = deberta::predict_masked(m.model, in.inputs, in.positions, {}, top_k);
    changed = a.is_default() ? baseline : deberta::predict_masked(m.model, in.inputs, in.positions, a, top_k);
    effect = deberta::compare_predictions(baseline, changed);
  }
  warn(deberta::non_finite_predictions(changed));
  py::dict out;
  out["ablation"] = a.describe(&m.model.config);
  out["baseline"] = predictions_list(m, baseline);
  out["predictions"] = predictions_list(m, changed);
  out["mean_kl"] = effect.mean_kl;
  out["max_kl"] = effect.max_kl;
  out["top1_changes"] = effect.top1_changes;
  out["positions"] = effect.positions;
  return out;
}

PyModel& as_model(const py::handle& value, const std::string& label) {
  if (!py::isinstance<PyModel>(value))
    throw py::type_error(label + " must be a deberta_explorer.Model (from load_model()), got " +
                         std::string(py::str(value.get_type().attr("__name__"))));
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
      error(e.what());
    }
  });
  // The two kinds of Error a caller may want to tell apart, as subclasses of both Error and the
  // builtin exception a Python user expects (tried before the translator above: pybind11 tries the
  // most recently registered first).
  const py::object make_class = py::module_::import("builtins").attr("type");
  static py::object file_not_found = make_class(
      "FileNotFoundError", py::make_tuple(py::handle(PyExc_FileNotFoundError), error),
      py::dict(py::arg("__module__") = "deberta_explorer",
               py::arg("__doc__") = "A file or folder that does not exist (a subclass of Error and FileNotFoundError)."));
  static py::object invalid_input = make_class(
      "InvalidInputError", py::make_tuple(py::handle(PyExc_ValueError), error),
      py::dict(py::arg("__module__") = "deberta_explorer",
               py::arg("__doc__") = "A bad input value: ids outside the vocabulary, lengths that do not match, masked "
                                    "positions outside the input (a subclass of Error and ValueError)."));
  mod.attr("FileNotFoundError") = file_not_found;
  mod.attr("InvalidInputError") = invalid_input;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const deberta::FileNotFound& e) {
      PyErr_SetString(file_not_found.ptr(), e.what());
    } catch (const deberta::InvalidInput& e) {
      PyErr_SetString(invalid_input.ptr(), e.what());
    }
  });

  py::class_<PyModel, std::shared_ptr<PyModel>>(mod, "Model", "A model directory loaded into memory (load_model).")
      .def_property_readonly("directory", [](const PyModel& m) { return m.model.directory; },
                             "Folder holding config.json")
      .def_property_readonly("weights_path", [](const PyModel& m) { return m.model.weights_path; },
                             "The weights file that was read")
      .def_property_readonly("model_type", [](const PyModel& m) { return m.model.config.model_type; })
      .def_property_readonly("num_layers", [](const PyModel& m) { return m.model.config.num_hidden_layers; })
      .def_property_readonly("num_heads", [](const PyModel& m) { return m.model.config.num_attention_heads; })
      .def_property_readonly("hidden_size", [](const PyModel& m) { return m.model.config.hidden_size; })
      .def_property_readonly("vocab_size", [](const PyModel& m) { return m.model.config.vocab_size; })
      .def_property_readonly("max_position_embeddings",
                             [](const PyModel& m) { return m.model.config.max_position_embeddings; })
      .def_property_readonly("runs_emd", [](const PyModel& m) { return deberta::runs_emd(m.model); },
                             "Whether the MLM decoder stage runs the Enhanced Mask Decoder (deberta::runs_emd)")
      .def_property_readonly("has_tokenizer", [](const PyModel& m) { return deberta::has_tokenizer(m.model.directory); })
      .def("tensor_names", [](const PyModel& m) { return m.names(); },
           "tensor_names() -> list[str]\n\nThe state-dict names of the model's weights file (Hugging Face or "
           "microsoft names, as stored), sorted.")
      .def("tensor", [](const PyModel& m, const py::object& name_arg) {
             const std::string name = as_str(name_arg, "Model.tensor(): name");
             Tensor t = m.tensor(name);
             if (!deberta::dtype_is_integer(t.dtype)) t.dtype = deberta::DType::F64;
             return to_numpy(t);
           },
           py::arg("name"),
           "tensor(name) -> numpy.ndarray\n\nA copy of one weight tensor as float64 (integer tensors as int64), in "
           "its stored shape, including any set_tensor edit. Raises KeyError for an unknown name.")
      .def("set_tensor", [](PyModel& m, const py::object& name_arg, const py::object& value) {
             const std::string name = as_str(name_arg, "Model.set_tensor(): name");
             if (!py::isinstance<py::array>(value) && !py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value))
               throw py::type_error("set_tensor('" + name + "'): value must be an array-like of numbers, got " +
                                    std::string(py::str(value.get_type().attr("__name__"))));
             const py::array raw = py::array::ensure(value);
             if (!raw || raw.dtype().kind() == 'O' || raw.dtype().kind() == 'U' || raw.dtype().kind() == 'S' ||
                 raw.dtype().kind() == 'c')
               throw py::type_error("set_tensor('" + name + "'): value must hold real numbers");
             const auto arr = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(raw);
             Tensor t;
             t.dtype = deberta::DType::F64;
             for (py::ssize_t d = 0; d < arr.ndim(); ++d) t.shape.push_back(arr.shape(d));
             t.f.assign(arr.data(), arr.data() + arr.size());
             py::gil_scoped_release release;
             m.set_tensor(name, std::move(t));
           },
           py::arg("name"), py::arg("value"),
           "set_tensor(name, value)\n\nReplaces one weight tensor (same shape; converted to float64) and rebuilds "
           "what the forward derives from the weights: a forward afterwards equals a fresh load of a folder "
           "holding the edited weights. Raises KeyError (unknown name), ValueError (shape), TypeError (dtype).")
      .def("__repr__", [](const PyModel& m) {
        return "<deberta_explorer.Model " + m.model.config.model_type + " " +
               std::to_string(m.model.config.num_hidden_layers) + " layers from " + m.model.directory + ">";
      });

  mod.def("load_model", &load_model, py::arg("path"),
          "load_model(path) -> Model\n\n"
          "Loads a model directory (config.json + model.safetensors or pytorch_model.bin) or a weights file whose "
          "folder holds config.json. Raises deberta_explorer.Error naming the file on any problem.");
  mod.def("tokenize", &tokenize, py::arg("model"), py::arg("text"), py::arg("pair") = py::none(),
          "tokenize(model, text, pair=None) -> dict\n\n"
          "[CLS] text [SEP] (pair [SEP]) with the model's tokenizer: {'tokens': [str], 'input_ids': int64 [N], "
          "'token_type_ids': int64 [N], 'attention_mask': int64 [N] (all 1)}. Raises Error when the model folder has "
          "no tokenizer or the text is not valid UTF-8.");
  mod.def("forward", &forward, py::arg("model"), py::arg("input_ids"), py::arg("attention_mask") = py::none(),
          py::arg("token_type_ids") = py::none(), py::arg("ablation") = py::none(),
          py::arg("masked_positions") = py::none(), py::arg("full_logits") = false,
          "forward(model, input_ids, attention_mask=None, token_type_ids=None, ablation=None, masked_positions=None, "
          "full_logits=False) -> dict[str, numpy.ndarray]\n\n"
          "The traced forward pass as `deberta dump` writes it (same names, shapes, dtypes and bits): input_ids "
          "[1, N], embedding_output [N, H], rel_embeddings [2k, H], rel_pos / c2p_row / p2c_row int64 [N, N], "
          "layer.{l}.c2c|c2p|p2c|p2p|attn_logits|attn_probs [heads, N, N], layer.{l}.output [N, H], emd.* "
          "(with the EMD), mlm.masked_logits [M, V] (with masked_positions; mlm.logits [N, V] with full_logits) "
          "and the task heads the model has. input_ids etc.: integers, [N] or [1, N]. ablation: dict of "
          "switches (docs/python.md); unknown keys raise ValueError.");
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
      [](const py::object& path) { return to_dict(deberta::read_safetensors(as_path(path, "read_safetensors(): path"))); },
      py::arg("path"),
      "read_safetensors(path) -> dict[str, numpy.ndarray]\n\n"
      "A safetensors file (e.g. a golden case or a `deberta dump`) with floating tensors as float64 and integer "
      "ones as int64. Raises Error naming the file when it is malformed.");
  mod.def("set_num_threads",
          [](const py::object& threads_arg) {
            const int64_t threads = as_int(threads_arg, "set_num_threads(): threads");
            if (threads < 1 || threads > deberta::kMaxThreads)
              throw py::value_error("set_num_threads(): threads must be in [1, " + std::to_string(deberta::kMaxThreads) +
                                    "], found " + std::to_string(threads));
            deberta::set_num_threads(static_cast<int>(threads));
          },
          py::arg("threads"),
          "Threads used by the forward pass (heads in parallel). The numbers do not depend on it.");
  mod.def("num_threads", &deberta::num_threads);
  mod.def("set_backend",
          [](const py::object& name) {
            try {
              deberta::set_backend(deberta::parse_backend(as_str(name, "set_backend(): backend"), "set_backend"));
            } catch (const Error& e) {
              throw py::value_error(e.what());
            }
          },
          py::arg("backend"),
          "set_backend(backend)\n\nThe engine of every later forward pass: 'fast' (default) or 'reference' (one "
          "Eigen expression per op, one thread). Also the environment variable DEBERTA_BACKEND.");
  mod.def("backend", [] { return std::string(deberta::backend_name(deberta::backend())); },
          "backend() -> str\n\nThe engine in use: 'fast' or 'reference'.");
  mod.attr("__version__") = DEBERTA_VERSION;
}
