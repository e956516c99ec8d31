// deberta tokenize: show how a model's tokenizer splits a text (or a pair) into tokens and ids.
#include "cli_common.h"
#include "deberta/inputs.h"
#include "commands.h"

#include "deberta/tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace deberta::cli {

namespace {
struct TokenizeArgs {
  std::string model;
  std::string text;
  std::string pair;
  bool has_pair = false;
  bool json = false;
};
}  // namespace

void register_tokenize(CLI::App* app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app->add_subcommand(
      "tokenize",
      "Tokenize a text with the model's tokenizer (spm.model, vocab.json + merges.txt, tokenizer.json, or vocab.txt) and print "
      "tokens, ids and token types as the model sees them: [CLS] A [SEP] (B [SEP]).");
  cmd->add_option("--model", args->model, "Model directory (or a file inside it); default: the bundled model");
  cmd->add_option("--text", args->text, "Text to tokenize; the literal [MASK] becomes the mask token")->required();
  cmd->add_option("--pair", args->pair, "Second segment (token type 1)");
  cmd->add_flag("--json", args->json, "Print {\"tokens\": [...], \"ids\": [...], \"token_type_ids\": [...]}");
  cmd->callback([args, cmd] {
    const bool has_pair = cmd->count("--pair") > 0;
    // Bad text is the user's to fix whatever the model: say so before looking for a tokenizer.
    require_utf8(args->text, "--text");
    if (has_pair) require_utf8(args->pair, "--pair");
    const auto tokenizer = load_tokenizer(model_path_or_default(args->model));
    const Encoding e = tokenizer->encode(args->text, has_pair ? &args->pair : nullptr);
    if (const std::string note = unknown_tokens_note(count_unknown_tokens(*tokenizer, e.ids)); !note.empty())
      std::fprintf(stderr, "deberta: warning: %s\n", note.c_str());
    if (args->json) {
      nlohmann::ordered_json out = {{"tokens", e.tokens}, {"ids", e.ids}, {"token_type_ids", e.token_type_ids}};
      std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
      return;
    }
    std::printf("%s tokenizer, vocabulary %lld, %zu tokens\n", tokenizer->kind().c_str(),
                static_cast<long long>(tokenizer->vocab_size()), e.ids.size());
    std::printf("%5s %8s %4s  %s\n", "pos", "id", "type", "token");
    for (size_t k = 0; k < e.ids.size(); ++k)
      std::printf("%5zu %8lld %4lld  \"%s\"\n", k, static_cast<long long>(e.ids[k]),
                  static_cast<long long>(e.token_type_ids[k]), e.tokens[k].c_str());
  });
}

}  // namespace deberta::cli
