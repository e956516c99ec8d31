// libFuzzer target: config.json parsing (depth check, JSON text → ModelConfig) on arbitrary bytes.
#include "deberta/config.h"
#include "deberta/file_limits.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {  // as load_config: the depth is checked before parsing
    deberta::check_json_depth(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const deberta::Error&) {
    return 0;
  }
  const auto json = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  try {
    deberta::parse_config(json, "fuzz");
  } catch (const deberta::Error&) {
  }
  return 0;
}
