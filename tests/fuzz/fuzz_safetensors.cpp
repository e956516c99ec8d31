// libFuzzer target: the safetensors header validation and decoding on arbitrary bytes.
#include "deberta/safetensors.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    deberta::parse_safetensors(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const deberta::Error&) {
  }
  return 0;
}
