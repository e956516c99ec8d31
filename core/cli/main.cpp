// deberta — command-line front end of DeBERTa Explorer.
//
//   deberta dump    --model DIR --inputs IN.safetensors --out OUT.safetensors   (golden-reference tensors)
//
// Every command prints one line "deberta: FILE: problem" and exits 1 on bad input.
#include "cli_common.h"
#include "commands.h"

#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"DeBERTa Explorer: a float64 reference implementation of DeBERTa (He et al., ICLR 2021) "
               "with every intermediate of the disentangled attention and the Enhanced Mask Decoder.",
               "deberta"};
  app.require_subcommand(1);
  deberta::cli::register_commands(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const deberta::Error& e) {
    std::fprintf(stderr, "deberta: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "deberta: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deberta: %s\n", e.what());
    return 1;
  }
  return 0;
}
