// parallel.h — two guards for the OpenMP loops of the forward pass (issue 12).
//
// An exception that leaves an OpenMP parallel region calls std::terminate (the CLI aborts, the
// viewer's worker takes the whole viewer down). Every parallel loop body therefore runs inside
// ParallelErrors::run, and the first exception is rethrown once the region has ended. (The memory
// guard of the forward pass, `ops::check_attention_memory`, is declared in ops.h.)
#pragma once

#include <cstdint>
#include <atomic>
#include <exception>
#include <mutex>

namespace deberta {

/// Catches what the iterations of a parallel loop throw; rethrow() after the loop.
///
///     ParallelErrors errors;
///     #pragma omp parallel for
///     for (int64_t h = 0; h < heads; ++h) errors.run([&] { ... });
///     errors.rethrow();
class ParallelErrors {
 public:
  template <class Body>
  void run(Body&& body) noexcept {
    if (failed_) return;  // later iterations are skipped once one has failed (a benign race)
    try {
      body();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_ = true;
    }
  }
  /// Rethrows the first exception caught, if any. Call outside the parallel region.
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace deberta
