// deberta compare: two models on the same text — per layer and head the mean |ΔP| of the attention
// probabilities, and the predictions of both at each [MASK] with KL(A ‖ B). The way to put a model
// trained without a component beside the one trained with it (docs/table4.md).
#include "cli_common.h"
#include "commands.h"

#include "deberta/compare.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>

namespace deberta::cli {

namespace {
struct CompareArgs {
  InputArgs input;
  std::string model_b;
  int64_t top_k = 5;
  int64_t offsets = 8;
  bool json = false;
};

/// The offset table: an `offset` column, then model A's and model B's mass, of `layer` (−1: pooled).
/// Offsets beyond ±shown are summed into two rows "< −shown" and "> shown".
void print_offsets(const OffsetProfile& a, const OffsetProfile& b, int64_t layer, int64_t shown) {
  const int64_t m = std::max(a.max_offset, b.max_offset);
  const int64_t k = std::min(shown, m);
  std::printf("%8s  %9s  %9s\n", "offset", "A", "B");
  double left_a = 0, left_b = 0, right_a = 0, right_b = 0;
  for (int64_t o = -m; o <= m; ++o) {
    if (o < -k) left_a += a.at(o, layer), left_b += b.at(o, layer);
    if (o > k) right_a += a.at(o, layer), right_b += b.at(o, layer);
  }
  if (k < m) std::printf("%8s  %9.5f  %9.5f\n", ("<" + std::to_string(-k)).c_str(), left_a, left_b);
  for (int64_t o = -k; o <= k; ++o) std::printf("%8lld  %9.5f  %9.5f\n", static_cast<long long>(o), a.at(o, layer), b.at(o, layer));
  if (k < m) std::printf("%8s  %9.5f  %9.5f\n", (">" + std::to_string(k)).c_str(), right_a, right_b);
}

nlohmann::json offsets_json(const OffsetProfile& p) {
  return {{"offsets_from", -p.max_offset}, {"pooled", p.pooled}, {"per_layer", p.per_layer}};
}

}  // namespace

void register_compare(CLI::App* app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app->add_subcommand(
      "compare", "Run two models on the same input (tokenized by model A): per layer and head the mean absolute "
                 "difference of the attention probabilities, and both models' predictions at each [MASK] with "
                 "KL(A||B). E.g. the zoo's baseline against the model trained without c2p.");
  args->input.add_to(cmd, true, true);
  cmd->add_option("--model-b", args->model_b, "The second model directory")->required();
  cmd->add_option("--top-k", args->top_k, "How many tokens to list per position")->check(CLI::PositiveNumber);
  cmd->add_option("--offsets", args->offsets,
                  "Attention mass by relative offset i-j: rows shown for |i-j| <= this (the rest summed); JSON has all")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] {
    if (args->model_b.empty()) throw Error("--model-b: empty path: give the second model's folder");
    const Model a = load_model_with_progress(model_path_or_default(args->input.model));
    const Model b = load_model_with_progress(args->model_b);
    const ResolvedInput in = resolve_input(args->input, a);
    if (in.tokenizer && has_tokenizer(b.directory)) {
      const auto tok_b = load_tokenizer_for_model(b.directory, b.config.vocab_size);
      if (!args->input.text.empty() && tok_b->encode(args->input.text).ids != in.inputs.input_ids)
        throw Error("compare: models A and B tokenize the text differently (" + a.directory + " vs " + b.directory +
                    "); compare models that share a vocabulary, or give --ids");
    }
    const bool lm = a.weights.lm_head && b.weights.lm_head;
    const std::vector<int64_t> positions = lm ? in.mask_positions : std::vector<int64_t>{};
    const ModelComparison r = compare_models(a, b, in.inputs, positions, args->top_k);
    if (args->json) {
      nlohmann::json j = {{"model_a", a.directory}, {"model_b", b.directory}, {"tokens", in.token_names},
                          {"input_ids", in.inputs.input_ids}, {"mean_abs_prob_diff", r.mean_abs_prob_diff}};
      if (!r.note.empty()) j["note"] = r.note;
      j["attention_mass_by_offset"] = {{"a", offsets_json(r.offsets_a)}, {"b", offsets_json(r.offsets_b)}};
      nlohmann::json preds = nlohmann::json::array();
      for (size_t m = 0; m < positions.size(); ++m)
        preds.push_back({{"position", positions[m]}, {"a", top_tokens_json(r.predictions_a[m], in)},
                         {"b", top_tokens_json(r.predictions_b[m], in)}, {"kl_a_b", r.kl[m]}});
      j["predictions"] = preds;
      if (!positions.empty()) j["mean_kl"] = r.mean_kl, j["top1_agree"] = r.top1_agree;
      std::printf("%s\n", json_text(j).c_str());
      return;
    }
    std::printf("A: %s\nB: %s\ntokens:", a.directory.c_str(), b.directory.c_str());
    for (const auto& t : in.token_names) std::printf(" [%s]", t.c_str());
    std::printf("\n");
    if (!r.note.empty()) std::printf("%s\n", r.note.c_str());
    std::printf("mean |P_A - P_B| of the attention probabilities (valid pairs), layer x head:\n%8s", "");
    for (int64_t h = 0; h < r.heads; ++h) std::printf("  head %-4lld", static_cast<long long>(h));
    std::printf("\n");
    for (int64_t l = 0; l < r.layers; ++l) {
      std::printf("layer %-2lld", static_cast<long long>(l));
      for (double v : r.mean_abs_prob_diff[l]) std::printf("  %9.5f", v);
      std::printf("\n");
    }
    std::printf("\nattention mass by relative offset i-j (query i, key j; mean over heads and valid queries; "
                "head-free, so comparable across separately trained models), pooled over layers:\n");
    print_offsets(r.offsets_a, r.offsets_b, -1, args->offsets);
    for (int64_t l = 0; l < static_cast<int64_t>(std::max(r.offsets_a.per_layer.size(), r.offsets_b.per_layer.size())); ++l) {
      if (l >= static_cast<int64_t>(r.offsets_a.per_layer.size()) || l >= static_cast<int64_t>(r.offsets_b.per_layer.size()))
        break;  // layers only one model has are in --json
      std::printf("layer %lld:\n", static_cast<long long>(l));
      print_offsets(r.offsets_a, r.offsets_b, l, args->offsets);
    }
    std::printf("\n");
    if (!lm) std::printf("(no predictions: %s has no masked-LM head)\n", (a.weights.lm_head ? b : a).directory.c_str());
    for (size_t m = 0; m < positions.size(); ++m) {
      std::printf("position %lld  KL(A||B) = %.4f nats\n  A:", static_cast<long long>(positions[m]), r.kl[m]);
      for (const auto& t : r.predictions_a[m].top) std::printf("  %s (%.3f)", token_label(in, t.id).c_str(), t.probability);
      std::printf("\n  B:");
      for (const auto& t : r.predictions_b[m].top) std::printf("  %s (%.3f)", token_label(in, t.id).c_str(), t.probability);
      std::printf("\n");
    }
    if (!positions.empty())
      std::printf("mean KL(A||B) = %.4f nats; top-1 agrees at %lld of %zu positions\n", r.mean_kl,
                  static_cast<long long>(r.top1_agree), positions.size());
  });
}

}  // namespace deberta::cli
