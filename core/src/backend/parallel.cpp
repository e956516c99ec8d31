// parallel.cpp — see parallel.h.
#include "backend/parallel.h"

#include "deberta/tensor.h"

#include <unistd.h>

#include <cstdio>
#include <limits>
#include <string>

namespace deberta {

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

void check_attention_memory(int64_t n_tokens, int64_t kept_maps, int64_t transient_maps) {
  if (n_tokens <= 0) return;
  const long double n = static_cast<long double>(n_tokens);
  const long double maps = static_cast<long double>(kept_maps) + static_cast<long double>(transient_maps);
  const long double need = n * n * 8.0L * maps;  // long double: no overflow for any int64 input
  const uint64_t have = physical_memory_bytes();
  const long double limit = have ? static_cast<long double>(have) : static_cast<long double>(1ull << 40);
  if (need > limit) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%lld tokens need %.1f GB for the %lld attention maps of %lld x %lld doubles, more than the %.1f GB "
                  "of memory this machine has; give a shorter input",
                  static_cast<long long>(n_tokens), static_cast<double>(need / 1e9), static_cast<long long>(kept_maps + transient_maps),
                  static_cast<long long>(n_tokens), static_cast<long long>(n_tokens), static_cast<double>(limit / 1e9));
    throw Error(buf);
  }
}

}  // namespace deberta
