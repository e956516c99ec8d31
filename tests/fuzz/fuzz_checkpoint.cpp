// libFuzzer target: the PyTorch checkpoint reader (zip or legacy container + restricted pickle).
// Each input is written to an anonymous in-memory file and read through its /proc path.
#include "deberta/checkpoint.h"

#include <sys/mman.h>
#include <unistd.h>

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz_checkpoint", 0);
  if (fd < 0) return 0;
  if (write(fd, data, size) == static_cast<ssize_t>(size)) {
    try {
      deberta::read_pytorch_checkpoint("/proc/self/fd/" + std::to_string(fd));
    } catch (const deberta::Error&) {
    }
  }
  close(fd);
  return 0;
}
