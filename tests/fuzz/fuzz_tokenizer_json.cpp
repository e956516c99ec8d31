// libFuzzer target: a model folder's tokenizer.json (arbitrary bytes) loaded and used: JSON depth,
// Unigram / BPE vocabularies, merges, added tokens, normalizers and pre-tokenizers.
#include "deberta/tokenizer.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("fuzz_tokenizer_json." + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  {
    std::ofstream out(dir / "tokenizer.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const auto tok = deberta::load_tokenizer(dir.string());
    for (const char* text : {"Hello [MASK] world", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "  x\ty  ", "caf\xc3\xa9 \xe4\xb8\xad"}) {
      const deberta::Encoding e = tok->encode(text);
      for (int64_t id : e.ids) tok->display(id);
    }
  } catch (const deberta::Error&) {
  }
  return 0;
}
