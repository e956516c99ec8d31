// parallel.h — two guards for the OpenMP loops of the forward pass (issue 12).
//
// An exception that leaves an OpenMP parallel region calls std::terminate (the CLI aborts, the
// viewer's worker takes the whole viewer down). Every parallel loop body therefore runs inside
// ParallelErrors::run, and the first exception is rethrown once the region has ended. And the
// N x N attention maps of a long input are sized before anything is allocated.
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

/// Refuses (Error) a forward pass whose attention maps will not fit in the memory this process may
/// use (`usable_memory_bytes`):
/// `kept_maps` N x N double matrices kept in the trace, plus `transient_maps` alive at once while
/// the heads run. The message gives the token count, the bytes needed and the bytes available.
void check_attention_memory(int64_t n_tokens, int64_t kept_maps, int64_t transient_maps);

/// Physical memory of this machine in bytes (0 when unknown).
uint64_t physical_memory_bytes();

/// The memory this process may use, in bytes: the least of the physical memory, the address-space
/// limit (RLIMIT_AS, as `ulimit -v` / `prlimit --as` set it) and the cgroup's memory limit
/// (v2 `memory.max`, v1 `memory.limit_in_bytes`); 0 when none is known. Issue 44, class 3.
uint64_t usable_memory_bytes();

}  // namespace deberta
