// Placeholder until the tokenizer implementation lands (issue 4).
#include "deberta/tokenizer.h"

namespace deberta {

bool has_tokenizer(const std::string&) { return false; }

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir) {
  throw Error(model_dir + ": no tokenizer support yet; use --ids");
}

}  // namespace deberta
