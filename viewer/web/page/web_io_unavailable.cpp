// web_io_unavailable.cpp — the readers the web edition cannot have (docs/web.md): PCRE2 is not
// built for WebAssembly, so byte-level BPE tokenizers and Regex patterns refuse with a message
// naming the file and what to do instead, as the desktop refuses any file it cannot read.
// (PyTorch checkpoints and spm.model are read by the desktop's own readers, with libzip, zlib and
// libsentencepiece built for WebAssembly by scripts/web.sh.)
// It stands in for tokenizer_bpe.cpp and tokenizer_regex.cpp inside the web build's core library,
// so it includes the io layer's internal headers whose functions it defines: the one file of the
// page that does (tests/check_layers.py, FRONTEND_EXCEPTIONS).
#include "io/tokenizer_detail.h"
#include "io/tokenizer_pipeline.h"

namespace deberta {

namespace tokenizer_detail {

std::unique_ptr<Tokenizer> load_gpt2_bpe(const std::string& model_dir) {
  throw Error(model_dir + ": vocab.json + merges.txt (byte-level BPE) are not read in the web edition (no PCRE2); "
              "use the desktop explorer");
}

std::unique_ptr<Regex> Regex::compile(const std::string& pattern, const std::string& where) {
  throw Error(where + ": the Regex pattern /" + pattern + "/ is not read in the web edition (no PCRE2); use the desktop explorer");
}

std::unique_ptr<Tokenizer> make_byte_level_bpe(BpeModel, SpecialTokens, const std::string& source, const std::string&) {
  throw Error(source + ": byte-level BPE tokenizers are not read in the web edition (no PCRE2); use the desktop explorer");
}

}  // namespace tokenizer_detail
}  // namespace deberta
