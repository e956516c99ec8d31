// deberta predict: top-k tokens at each masked position; with ablation flags, baseline vs ablated.
#include "cli_common.h"
#include "commands.h"
#include "head_report.h"

#include "deberta/analysis.h"
#include "deberta/finite.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace deberta::cli {

namespace {
struct PredictArgs {
  InputArgs input;
  int64_t top_k = 5;
  bool json = false;
  std::string head;
  AblationArgs ablation;
};

nlohmann::json predictions_json(const std::vector<MaskPrediction>& preds, const ResolvedInput& in) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : preds) out.push_back({{"position", p.position}, {"top", top_tokens_json(p, in)}});
  return out;
}

void print_predictions(const char* title, const std::vector<MaskPrediction>& preds, const ResolvedInput& in) {
  std::printf("%s\n", title);
  for (const auto& p : preds) {
    std::printf("  position %lld:", static_cast<long long>(p.position));
    for (const auto& t : p.top) std::printf("  %s (%.3f)", token_label(in, t.id).c_str(), t.probability);
    std::printf("\n");
  }
}
}  // namespace

void register_predict(CLI::App* app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* cmd = app->add_subcommand("predict", "Top-k tokens at each [MASK] (decoded by the Enhanced Mask Decoder). "
                                                 "With ablation flags, also the baseline, KL(baseline||ablated) and top-1 changes.");
  args->input.add_to(cmd, true, true);
  cmd->add_option("--top-k", args->top_k, "How many tokens to list per position")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_option("--head", args->head, "Head to predict with: mlm, rtd, cls, tokcls (default: the model's own; a v3 "
                                        "discriminator defaults to rtd)");
  args->ablation.add_to(cmd);
  cmd->callback([args] {
    const Model model = load_model_with_progress(model_path_or_default(args->input.model));
    const HeadKind head = select_head(model, args->head);
    const ResolvedInput in = resolve_input(args->input, model);
    if (head != HeadKind::MLM) {
      report_head(model, in, head, normalized(model, args->ablation.to_ablation()), args->json);
      return;
    }
    if (const std::string note = head_note(model, head); !note.empty()) std::fprintf(stderr, "deberta: note: %s\n", note.c_str());
    if (in.mask_positions.empty())
      throw Error("predict: the input has no [MASK] token (put [MASK] in --text, or give --mask-id / --positions)");
    const Ablation ablation = normalized(model, args->ablation.to_ablation());
    const auto baseline = predict_masked(model, in.inputs, in.mask_positions, {}, args->top_k);
    const bool ablated = !ablation.is_default();
    std::vector<MaskPrediction> changed;
    AblationEffect effect;
    if (ablated) {
      changed = predict_masked(model, in.inputs, in.mask_positions, ablation, args->top_k);
      effect = compare_predictions(baseline, changed);
    }
    if (const std::string w = non_finite_predictions(ablated ? changed : baseline); !w.empty())
      std::fprintf(stderr, "deberta: warning: %s\n", w.c_str());
    if (args->json) {
      nlohmann::json out = {{"tokens", in.token_names}, {"input_ids", in.inputs.input_ids}};
      out["predictions"] = predictions_json(ablated ? changed : baseline, in);
      if (ablated) {
        out["ablation"] = ablation.describe(&model.config);
        out["baseline"] = predictions_json(baseline, in);
        out["mean_kl"] = effect.mean_kl;
        out["top1_changes"] = effect.top1_changes;
      }
      std::printf("%s\n", json_text(out).c_str());
      return;
    }
    std::printf("tokens:");
    for (const auto& t : in.token_names) std::printf(" [%s]", t.c_str());
    std::printf("\n");
    if (!ablated) {
      print_predictions("predictions:", baseline, in);
      return;
    }
    print_predictions("baseline:", baseline, in);
    print_predictions(("ablated (" + ablation.describe(&model.config) + "):").c_str(), changed, in);
    std::printf("mean KL(baseline || ablated) = %.6f nats, top-1 changed at %lld of %lld positions\n", effect.mean_kl,
                static_cast<long long>(effect.top1_changes), static_cast<long long>(effect.positions));
  });
}

}  // namespace deberta::cli
