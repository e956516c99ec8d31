// deberta classify / deberta rtd: what a task checkpoint's head says about one input
// (sequence or token classification; replaced-token detection). Heads: deberta/heads.h, docs/heads.md.
#include "cli_common.h"
#include "commands.h"
#include "head_report.h"

#include <memory>

namespace deberta::cli {

namespace {
struct HeadArgs {
  InputArgs input;
  std::string pair;
  bool pair_given = false;  ///< --pair was given, even as "" (HF: [CLS] a [SEP] [SEP])
  std::string token_types;
  std::string head;
  bool json = false;
  AblationArgs ablation;
};

void add_common(CLI::App* cmd, HeadArgs* args, bool with_pair) {
  args->input.add_to(cmd, true);
  if (with_pair)
    cmd->add_option("--pair", args->pair, "Second segment: tokenized as [CLS] A [SEP] B [SEP], token types 0 / 1")
        ->each([args](const std::string&) { args->pair_given = true; });
  cmd->add_option("--token-types", args->token_types, "Token types of --ids input, comma-separated (e.g. 0,0,0,1,1)");
  cmd->add_flag("--json", args->json, "Print JSON");
  args->ablation.add_to(cmd);
}
}  // namespace

void register_classify(CLI::App* app) {
  auto args = std::make_shared<HeadArgs>();
  CLI::App* cmd = app->add_subcommand(
      "classify", "Label probabilities of a classifier checkpoint (Deberta(V2)ForSequenceClassification, or "
                  "ForTokenClassification per token). With ablation flags, also the baseline, KL and label flips.");
  add_common(cmd, args.get(), true);
  cmd->add_option("--head", args->head, "cls (sequence) or tokcls (per token); default: the classifier the model has")
      ->check(CLI::IsMember({"cls", "tokcls"}));
  cmd->callback([args] {
    const Model model = load_model_with_progress(model_path_or_default(args->input.model));
    HeadKind kind;
    if (!args->head.empty()) {
      kind = select_head(model, args->head);
    } else if (model.weights.seq_classifier) {
      kind = HeadKind::SequenceClassification;
    } else if (model.weights.token_classifier) {
      kind = HeadKind::TokenClassification;
    } else {
      throw Error(model.weights_path + ": the model has no classifier head (pooler.dense.* + classifier.*, or "
                                       "classifier.*); its default head is " + head_key(default_head(model)) +
                  (model.weights.rtd_head ? " (use `deberta rtd`)" : " (use `deberta predict`)"));
    }
    const ResolvedInput in = resolve_pair_input(args->input, args->pair_given ? &args->pair : nullptr, args->token_types, model);
    report_head(model, in, kind, normalized(model, args->ablation.to_ablation()), args->json);
  });
}

void register_rtd(CLI::App* app) {
  auto args = std::make_shared<HeadArgs>();
  CLI::App* cmd = app->add_subcommand(
      "rtd", "Replaced-token detection (DeBERTa-v3 discriminator, mask_predictions.*): each token's probability of "
             "having been replaced. With ablation flags, also the baseline, mean |dp| and decisions flipped at 0.5.");
  add_common(cmd, args.get(), true);
  cmd->callback([args] {
    const Model model = load_model_with_progress(model_path_or_default(args->input.model));
    const HeadKind kind = select_head(model, "rtd");
    const ResolvedInput in = resolve_pair_input(args->input, args->pair_given ? &args->pair : nullptr, args->token_types, model);
    report_head(model, in, kind, normalized(model, args->ablation.to_ablation()), args->json);
  });
}

}  // namespace deberta::cli
