// parallel.cpp — the memory guard of ops.h (check_attention_memory, check_forward_memory and the
// memory they may use).
#include "backend/ops.h"

#include "deberta/tensor.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>

namespace deberta::ops {

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

namespace {

/// The first number in `path` (a cgroup limit file), or 0 when the file is missing, says "max",
/// or holds no number.
uint64_t limit_from_file(const char* path) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return 0;
  try {
    return std::stoull(word);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

uint64_t usable_memory_bytes() {
  uint64_t limit = physical_memory_bytes();
  auto lower = [&limit](uint64_t v) {
    if (v > 0 && (limit == 0 || v < limit)) limit = v;
  };
  struct rlimit r {};
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) lower(static_cast<uint64_t>(r.rlim_cur));
  lower(limit_from_file("/sys/fs/cgroup/memory.max"));                    // cgroup v2
  lower(limit_from_file("/sys/fs/cgroup/memory/memory.limit_in_bytes"));  // cgroup v1 (huge when unset)
  return limit;
}

void check_attention_memory(int64_t n_tokens, int64_t kept_maps, int64_t transient_maps) {
  if (n_tokens <= 0) return;
  const long double n = static_cast<long double>(n_tokens);
  const long double maps = static_cast<long double>(kept_maps) + static_cast<long double>(transient_maps);
  const long double need = n * n * 8.0L * maps;  // long double: no overflow for any int64 input
  const uint64_t have = usable_memory_bytes();
  const long double limit = have ? static_cast<long double>(have) : static_cast<long double>(1ull << 40);
  if (need > limit) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%lld tokens need %.1f GB for the %lld attention maps of %lld x %lld doubles, more than the %.1f GB "
                  "of memory this process may use; give a shorter input",
                  static_cast<long long>(n_tokens), static_cast<double>(need / 1e9), static_cast<long long>(kept_maps + transient_maps),
                  static_cast<long long>(n_tokens), static_cast<long long>(n_tokens), static_cast<double>(limit / 1e9));
    throw Error(buf);
  }
}

void check_forward_memory(int64_t n_tokens, int64_t kept_maps, int64_t heads, int64_t maps_per_head) {
  check_attention_memory(n_tokens, kept_maps, maps_per_head * std::min<int64_t>(heads, num_threads()));
}

}  // namespace deberta::ops
