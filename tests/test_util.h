// test_util.h — tolerance comparisons that say where they failed.
#pragma once

#include "deberta/dump.h"
#include "deberta/model.h"
#include "deberta/model_io.h"
#include "deberta/safetensors.h"
#include "deberta/tensor.h"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>


// This build's paths: the source tree, the `deberta` executable and the folder of the hf-tokenizers
// npm install. tests/CMakeLists.txt writes them into one generated file (test_paths.cpp), so no
// other test file's compile line holds a path of this clone and ccache reuses those objects in every
// clone on the machine (issue 56: the absolute paths as -D definitions made each new clone
// recompile every test file).
const char* deberta_test_source_dir();
const char* deberta_test_cli();
const char* deberta_test_hf_tokenizers_dir();
// A build that passes them as -D strings (the WebAssembly golden suite, viewer/web/CMakeLists.txt) keeps those.
#ifndef DEBERTA_SOURCE_DIR
#define DEBERTA_SOURCE_DIR deberta_test_source_dir()
#endif
#ifndef DEBERTA_CLI
#define DEBERTA_CLI deberta_test_cli()
#endif
#ifndef DEBERTA_HF_TOKENIZERS_DIR
#define DEBERTA_HF_TOKENIZERS_DIR deberta_test_hf_tokenizers_dir()
#endif

namespace deberta::test {

/// Runs the rest of a scope on one backend (deberta/backend.h), then restores the one before.
struct BackendGuard {
  explicit BackendGuard(Backend b) : saved(backend()) { set_backend(b); }
  ~BackendGuard() { set_backend(saved); }
  BackendGuard(const BackendGuard&) = delete;
  BackendGuard& operator=(const BackendGuard&) = delete;
  Backend saved;
};

/// Result of comparing two float tensors element by element.
struct Diff {
  double max_abs = 0;
  int64_t worst = -1;  ///< flat index of the worst element
  double ours = 0, reference = 0;
  bool shape_ok = true;
  std::string shape_note;
};

inline std::string index_text(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k >= 0; --k) {
    idx[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "]";
}

inline Diff compare(const Tensor& ours, const Tensor& ref) {
  Diff d;
  if (ours.shape != ref.shape || dtype_is_integer(ours.dtype) != dtype_is_integer(ref.dtype)) {
    d.shape_ok = false;
    d.shape_note = "ours " + std::string(dtype_name(ours.dtype)) + " " + ours.shape_string() + ", reference " +
                   dtype_name(ref.dtype) + " " + ref.shape_string();
    return d;
  }
  const int64_t n = ref.numel();
  for (int64_t k = 0; k < n; ++k) {
    const double a = dtype_is_integer(ours.dtype) ? static_cast<double>(ours.i[k]) : ours.f[k];
    const double b = dtype_is_integer(ref.dtype) ? static_cast<double>(ref.i[k]) : ref.f[k];
    const double e = std::isnan(a) != std::isnan(b) ? INFINITY : std::fabs(a - b);
    if (e > d.max_abs || d.worst < 0) {
      if (e > d.max_abs) d.max_abs = e;
      if (e >= d.max_abs) d.worst = k, d.ours = a, d.reference = b;
    }
  }
  return d;
}

/// CHECKs that `ours` matches `ref` within `tol` (max abs), printing tensor, worst index, values.
inline double check_close(const std::string& name, const Tensor& ours, const Tensor& ref, double tol) {
  const Diff d = compare(ours, ref);
  INFO("tensor " << name);
  if (!d.shape_ok) {
    FAIL_CHECK("shape/dtype mismatch: " << d.shape_note);
    return INFINITY;
  }
  std::ostringstream msg;
  msg.precision(17);
  msg << name << ": max abs error " << d.max_abs << " at " << index_text(ref.shape, d.worst) << " (ours " << d.ours
      << ", reference " << d.reference << ")";
  CHECK_MESSAGE(d.max_abs <= tol, msg.str());
  return d.max_abs;
}

/// Matrix overload.
inline double check_close(const std::string& name, const Matrix& ours, const Matrix& ref, double tol) {
  return check_close(name, Tensor::from_matrix(ours), Tensor::from_matrix(ref), tol);
}

inline std::string source_path(const std::string& relative) { return std::string(DEBERTA_SOURCE_DIR) + "/" + relative; }

/// An empty folder `name` under the system's temporary directory (removed first if it exists).
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// True in the AddressSanitizer build (scripts/sanitize.sh): its shadow memory reserves terabytes
/// of address space, so tests of address-space caps (RLIMIT_AS, prlimit --as) cannot run there.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

/// What one run of the `deberta` executable printed (stdout + stderr) and its exit code
/// (128 + signal when it was killed).
struct CliRun {
  int exit_code = -1;
  std::string output;
  bool signalled = false;
};

/// Runs `deberta ARGS` through the shell (so ARGS may use $(printf …)).
inline CliRun run_cli(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(DEBERTA_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.signalled = !WIFEXITED(status);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

/// `deberta ARGS` must fail the way every refused input fails: exit code 1 and exactly one line of
/// output that contains `needle`.
inline void check_fails_in_one_line(const std::string& args, const char* needle) {
  CAPTURE(args);
  const CliRun r = run_cli(args);
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.output.find(needle) != std::string::npos, r.output);
  CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
}

/// The message of the deberta::Error `fn` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Runs one case: inputs from `inputs_file` (or the golden file itself), every tensor of the golden
// file compared at `tolerance`. Returns the number of tensors compared.
inline int check_case(const std::string& dir, const std::string& golden_path, const std::string& inputs_path, double tolerance,
                      const Ablation& ablation = {}) {
  const Model model = load_model(dir);
  const TensorMap golden = read_safetensors(golden_path);
  const TensorMap in_file = inputs_path == golden_path ? golden : read_safetensors(inputs_path);
  const Inputs inputs = inputs_from_tensors(in_file, inputs_path);
  const auto positions = masked_positions_from_tensors(in_file, inputs_path);
  const ForwardTrace trace = forward(model, inputs, ablation, TraceLevel::Full, !positions.empty());
  const TensorMap ours = trace_to_tensors(model, trace, positions, golden.count("mlm.logits") > 0);
  int compared = 0;
  double worst = 0;
  for (const auto& kv : golden) {
    const auto& name = kv.first;
    const auto& ref = kv.second;
    if (name == "mlm.labels") continue;  // original ids: an input, not an output
    CAPTURE(name);
    auto it = ours.find(name);
    CHECK_MESSAGE(it != ours.end(), "we do not produce golden tensor " << name);
    if (it == ours.end()) continue;
    worst = std::max(worst, check_close(name, it->second, ref, tolerance));
    ++compared;
  }
  // Nothing extra either: a decoder or task head the reference does not run is a semantic error
  // (a head read from weights the reference model does not have). A reference file may keep only
  // some of a part's tensors (the long cases of a 512-token model drop the [N, N] maps), so the
  // check is per part: we run the EMD / a head only if the reference file has a tensor of it.
  for (const char* part : {"emd.", "rtd.", "cls.", "tokcls."}) {
    const auto has_part = [&](const TensorMap& m) {
      for (const auto& kv : m)
        if (kv.first.rfind(part, 0) == 0) return true;
      return false;
    };
    if (has_part(ours)) CHECK_MESSAGE(has_part(golden), "we produce " << part << "* tensors but the reference does not");
  }
  MESSAGE(std::filesystem::path(dir).filename().string() << ": " << compared << " tensors, max abs error " << worst);
  return compared;
}


}  // namespace deberta::test
