// backend.h — which engine computes the forward pass, and with how many threads.
//
//   fast       the default: packed GEMM tiles shared between threads; the numbers do not depend on
//              the thread count
//   reference  every operation one Eigen expression or one straight loop, on one thread: the
//              engine to check the fast one against (docs/architecture.md)
//
// Both agree with the reference PyTorch implementations at ≤ 1e-10 on every golden case.
#pragma once

#include <string>

namespace deberta {

enum class Backend { Fast, Reference };

/// Selects the engine for every later forward pass in the process (all threads). Thread-safe; a
/// forward already running finishes on the engine it started with for the op in flight.
void set_backend(Backend backend);

/// The engine in use on the calling thread: its `BackendScope`'s, else the last `set_backend`, else
/// the environment variable DEBERTA_BACKEND (`fast` or `reference`), else fast. Errors:
/// DEBERTA_BACKEND holds anything else.
Backend backend();

/// For the calling thread, until the scope ends: the engine of the forward passes it runs, over the
/// process's choice (a model's own engine: Python's `load_model(path, backend=...)`). The work the
/// fast backend hands to other threads runs on the same engine. Scopes nest; the previous choice
/// returns when one ends. No errors.
class BackendScope {
 public:
  explicit BackendScope(Backend backend);
  ~BackendScope();
  BackendScope(const BackendScope&) = delete;
  BackendScope& operator=(const BackendScope&) = delete;

 private:
  int saved_;
};

/// "fast" or "reference".
const char* backend_name(Backend backend);

/// Parses "fast" or "reference". Errors: any other text (named in the message with `what`, e.g.
/// "--backend").
Backend parse_backend(const std::string& text, const std::string& what = "backend");

/// The most threads the forward pass accepts.
constexpr int kMaxThreads = 256;

/// Sets the forward pass's thread count for the whole process (every thread that computes: the
/// viewer's worker included). The reference backend always runs on one. Errors: threads outside
/// [1, kMaxThreads].
void set_num_threads(int threads);

/// The forward pass's thread count: the last `set_num_threads`, else OpenMP's default (OMP_NUM_THREADS
/// or the core count); 1 without OpenMP. Errors: OMP_NUM_THREADS asks for more than kMaxThreads.
int num_threads();

}  // namespace deberta
