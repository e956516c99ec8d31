// deberta — command-line front end of DeBERTa Explorer.
//
//   deberta dump    --model DIR --inputs IN.safetensors --out OUT.safetensors   (golden-reference tensors)
//
// Every command prints one line "deberta: FILE: problem" and exits 1 on bad input.
#include "cli_common.h"
#include "commands.h"

#include "deberta/backend.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  CLI::App app{"DeBERTa Explorer: a float64 reference implementation of DeBERTa (He et al., ICLR 2021) "
               "with every intermediate of the disentangled attention and the Enhanced Mask Decoder.",
               "deberta"};
  app.require_subcommand(1);
  // Every command that computes runs on the backend chosen here (deberta/backend.h); given after
  // the command's name it falls through to this option too. Default: DEBERTA_BACKEND, else fast.
  app.fallthrough();
  // trigger_on_parse runs the callback per occurrence, past CLI11's count check: a second --backend
  // is refused here, as every repeated option is (docs/robustness.md, class 6; issue 44, class 5).
  static int backend_given = 0;
  app.add_option_function<std::string>(
         "--backend",
         [](const std::string& name) {
           if (++backend_given > 1) throw CLI::ArgumentMismatch("--backend: given more than once");
           deberta::set_backend(deberta::parse_backend(name, "--backend"));
         },
         "Engine of the forward pass: 'fast' (packed tiles, threads; default) or 'reference' (one Eigen expression "
         "per op, one thread); also DEBERTA_BACKEND")
      ->trigger_on_parse();
  deberta::cli::register_commands(&app);
  try {
    (void)deberta::backend();  // DEBERTA_BACKEND, checked before any file is read
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
  // A write is done when the close succeeds: standard output on a full disk (or a closed pipe) is
  // an error, never exit 0 (issue 59, class 5). Files (dump --out) are checked by OutputFile.
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "deberta: cannot write standard output: %s\n", errno ? std::strerror(errno) : "write error");
    return 1;
  }
  return 0;
}
