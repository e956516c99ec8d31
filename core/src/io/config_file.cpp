// config_file.cpp — reading a config.json from disk (the I/O half of config.h's parse_config).
#include "deberta/file_limits.h"
#include "deberta/model_io.h"

#include <nlohmann/json.hpp>

namespace deberta {

using json = nlohmann::json;

ModelConfig load_config(const std::string& path) {
  const std::string text = read_whole_file(path, 16ull << 20);  // regular files only, size first
  check_json_depth(text, path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
  return parse_config(j, path);
}

}  // namespace deberta
