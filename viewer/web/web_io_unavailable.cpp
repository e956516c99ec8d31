// web_io_unavailable.cpp — the readers the web edition cannot have (docs/web.md): libzip,
// libsentencepiece and PCRE2 do not build for WebAssembly. Each refuses with a message naming the
// file and what to give instead, as the desktop refuses any file it cannot read.
#include "deberta/checkpoint.h"
#include "io/tokenizer_detail.h"
#include "io/tokenizer_pipeline.h"

namespace deberta {

TensorMap read_pytorch_checkpoint(const std::string& path, const ProgressFn&) {
  throw Error(path + ": PyTorch checkpoints are not read in the web edition; convert the weights to "
              "model.safetensors (docs/web.md)");
}

namespace tokenizer_detail {

std::unique_ptr<Tokenizer> load_sentencepiece(const std::string& model_dir) {
  throw Error(model_dir + "/spm.model: SentencePiece models are not read in the web edition; give the folder a "
              "tokenizer.json (notebooks_data/make_web_tokenizer.py writes one)");
}

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
