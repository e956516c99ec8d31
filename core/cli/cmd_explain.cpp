// deberta explain: the walk of eq. 3 and eq. 4 for one attention cell, with the actual numbers.
#include "cli_common.h"
#include "commands.h"

#include "deberta/explain.h"

#include <cstdio>
#include <memory>

namespace deberta::cli {

namespace {
struct ExplainArgs {
  InputArgs input;
  int64_t layer = 0, head = 0, query = 0, key = 0;
  AblationArgs ablation;
};
}  // namespace

void register_explain(CLI::App* app) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app->add_subcommand("explain", "Step-by-step eq. 3 and eq. 4 for one attention cell: delta(i,j), the table "
                                                 "rows, each term, the scale, the sum and the softmax row.");
  args->input.add_to(cmd, true);
  cmd->add_option("--layer", args->layer, "Encoder layer (0-based)");
  cmd->add_option("--head", args->head, "Head (0-based)");
  cmd->add_option("--query", args->query, "Query token index i");
  cmd->add_option("--key", args->key, "Key token index j");
  args->ablation.add_to(cmd);
  cmd->callback([args] {
    const Model model = load_model_with_progress(model_path_or_default(args->input.model));
    const ResolvedInput in = resolve_input(args->input, model);
    const ForwardTrace trace = forward(model, in.inputs, normalized(model, args->ablation.to_ablation()), TraceLevel::Full, false);
    const CellExplanation e = explain_cell(model, trace, args->layer, args->head, args->query, args->key);
    std::printf("%s", format_explanation(e, in.token_names).c_str());
  });
}

}  // namespace deberta::cli
