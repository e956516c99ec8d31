// deberta ablate: inference-time ablations (components switched off in the trained model), plus every
// head masked, ranked by KL. Trained ablations (the paper's Table 4): docs/table4.md.
#include "cli_common.h"
#include "commands.h"
#include "head_report.h"

#include "deberta/analysis.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace deberta::cli {

namespace {
struct AblateArgs {
  InputArgs input;
  bool json = false;
  bool no_heads = false;
  std::string head;
};
}  // namespace

void register_ablate(CLI::App* app) {
  auto args = std::make_shared<AblateArgs>();
  CLI::App* cmd = app->add_subcommand(
      "ablate", "Inference-time ablations: switch -c2p, -p2c, +p2p, -EMD, the other p2c index, scale sqrt(3d) in the "
                "trained model, and mask every head in turn; one row each with mean KL and top-1 changes, sorted. "
                "(Models trained without a component, the paper's Table 4: docs/table4.md and `deberta compare`.)");
  args->input.add_to(cmd, true, true);
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--no-heads", args->no_heads, "Skip the per-head rows");
  cmd->add_option("--head", args->head, "Output head measured: mlm (KL, top-1 changes at [MASK]), rtd (mean |dp|, "
                                        "decisions flipped at 0.5), cls / tokcls (label KL, label flips); default: the model's own");
  cmd->callback([args] {
    const Model model = load_model_with_progress(model_path_or_default(args->input.model));
    const HeadKind head = select_head(model, args->head);
    const ResolvedInput in = resolve_input(args->input, model);
    if (head != HeadKind::MLM) {
      report_head_ablations(model, in, head, !args->no_heads, args->json);
      return;
    }
    if (const std::string note = head_note(model, head); !note.empty()) std::fprintf(stderr, "deberta: note: %s\n", note.c_str());
    if (in.mask_positions.empty())
      throw Error("ablate: the input has no [MASK] token (put [MASK] in --text, or give --mask-id / --positions)");
    const auto effects =
        run_ablations(model, in.inputs, in.mask_positions, standard_ablations(model, !args->no_heads));
    if (args->json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& e : effects) {
        nlohmann::json row = {{"ablation", e.name}, {"mean_kl", e.mean_kl}, {"max_kl", e.max_kl},
                              {"top1_changes", e.top1_changes}, {"positions", e.positions}};
        if (!e.error.empty()) row["error"] = e.error;
        rows.push_back(row);
      }
      std::printf("%s\n", json_text(nlohmann::json{{"masked_positions", in.mask_positions}, {"rows", rows}}).c_str());
      return;
    }
    std::printf("%zu masked position(s); KL(baseline || ablated) in nats\n\n", in.mask_positions.size());
    std::printf("%-22s %12s %12s %14s\n", "ablation", "mean KL", "max KL", "top-1 changed");
    for (const auto& e : effects) {
      if (!e.error.empty()) {
        std::printf("%-22s   not applicable: %s\n", e.name.c_str(), e.error.c_str());
        continue;
      }
      std::printf("%-22s %12.6f %12.6f %8lld / %lld\n", e.name.c_str(), e.mean_kl, e.max_kl,
                  static_cast<long long>(e.top1_changes), static_cast<long long>(e.positions));
    }
  });
}

}  // namespace deberta::cli
