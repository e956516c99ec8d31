// libFuzzer target: config.json parsing (JSON text → ModelConfig) on arbitrary bytes.
#include "deberta/config.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  try {
    deberta::parse_config(json, "fuzz");
  } catch (const deberta::Error&) {
  }
  return 0;
}
