// commands.h — registration of the `deberta` subcommands (one file per command).
#pragma once

#include <CLI/CLI.hpp>

namespace deberta::cli {

/// Adds every subcommand to `app`; each runs from its parse callback.
void register_commands(CLI::App* app);

void register_dump(CLI::App* app);
void register_tokenize(CLI::App* app);
void register_predict(CLI::App* app);
void register_ablate(CLI::App* app);
void register_explain(CLI::App* app);
void register_bench(CLI::App* app);
void register_eval_mlm(CLI::App* app);
void register_eval(CLI::App* app);
void register_compare(CLI::App* app);
void register_diff(CLI::App* app);
void register_classify(CLI::App* app);
void register_rtd(CLI::App* app);

}  // namespace deberta::cli
