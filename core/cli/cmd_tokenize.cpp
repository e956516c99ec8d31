// Placeholder: `deberta tokenize` lands with the tokenizer issue.
#include "commands.h"

namespace deberta::cli {
void register_tokenize(CLI::App*) {}
}  // namespace deberta::cli
