// libFuzzer target: every tokenizer kind on arbitrary bytes (text and text pairs).
#include "deberta/tokenizer.h"

#include <memory>
#include <string>
#include <vector>

const char* deberta_fuzz_source_dir();  // the generated fuzz_paths.cpp (tests/fuzz/CMakeLists.txt)

namespace {
std::vector<std::unique_ptr<deberta::Tokenizer>>& tokenizers() {
  static std::vector<std::unique_ptr<deberta::Tokenizer>> all = [] {
    std::vector<std::unique_ptr<deberta::Tokenizer>> t;
    for (const char* dir : {"spm", "bpe", "tokenizer_json_bpe", "tokenizer_json_unigram"})
      t.push_back(deberta::load_tokenizer(std::string(deberta_fuzz_source_dir()) + "/notebooks_data/fixtures/" + dir));
    return t;
  }();
  return all;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const size_t cut = size / 2;
  const std::string first = text.substr(0, cut), second = text.substr(cut);
  for (const auto& tok : tokenizers()) {
    try {
      const deberta::Encoding e = tok->encode(text);
      for (int64_t id : e.ids) tok->display(id);
      tok->encode(first, &second);
    } catch (const deberta::Error&) {
    }
  }
  return 0;
}
