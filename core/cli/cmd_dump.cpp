// deberta dump: run the model on golden-format inputs and write every reference tensor.
#include "cli_common.h"
#include "commands.h"

#include "deberta/finite.h"
#include "deberta/dump.h"
#include "deberta/heads.h"
#include "deberta/file_limits.h"
#include "deberta/safetensors.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace deberta::cli {

namespace {
struct DumpArgs {
  InputArgs input;
  std::string inputs_file;
  std::string out;
  std::string mlm;
  bool full_logits = false;
  std::string head;
  AblationArgs ablation;
};
}  // namespace

void register_dump(CLI::App* app) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* cmd = app->add_subcommand(
      "dump",
      "Run the model and write every intermediate tensor (names, shapes and dtypes of the golden format) to a "
      "safetensors file: the golden-reference interface other implementations diff against.");
  args->input.add_to(cmd, false);
  cmd->add_option("--inputs", args->inputs_file,
                  "safetensors file with input_ids, attention_mask, token_type_ids (I64 [1, N]) and optionally "
                  "mlm.masked_positions / mlm.labels");
  cmd->add_option("--out", args->out, "Output safetensors file")->required();
  cmd->add_option("--mlm", args->mlm, "Masked positions to decode, e.g. 2,5,7 (default: mlm.masked_positions of --inputs)");
  cmd->add_flag("--full-logits", args->full_logits, "Also write mlm.logits [N, V] (the LM head at every position; default only when --inputs holds mlm.logits)");
  cmd->add_option("--head", args->head, "Write only this head's tensors: mlm (mlm.*), rtd (rtd.logits), cls (cls.pooled, "
                                        "cls.logits), tokcls (tokcls.logits); default: every head the model has");
  args->ablation.add_to(cmd);
  CLI::Option* rule_option = cmd->get_option("--relative-positions");
  cmd->callback([args, rule_option] {
    Inputs inputs;
    std::vector<int64_t> positions;
    TensorMap in_tensors;
    if (!args->inputs_file.empty()) {
      in_tensors = read_safetensors(args->inputs_file);
      inputs = inputs_from_tensors(in_tensors, args->inputs_file);
      positions = masked_positions_from_tensors(in_tensors, args->inputs_file);
    } else if (!args->input.ids.empty()) {
      inputs.input_ids = parse_int_list(args->input.ids, "--ids");
    } else {
      throw Error("dump: give --inputs FILE or --ids LIST");
    }
    if (!args->mlm.empty()) positions = parse_int_list(args->mlm, "--mlm");
    // Distinct and inside the input, before the model is even loaded (issue 44, class 3).
    check_mask_positions(positions, inputs.size());
    const Model model = load_model_with_progress(model_path_or_default(args->input.model));
    Ablation requested = args->ablation.to_ablation();
    // A reference case made with microsoft/DeBERTa's relative positions records the rule in its
    // run.json ({"relative_positions": "microsoft"}); unless --relative-positions says otherwise,
    // dump the case as it was made.
    if (rule_option->count() == 0) {
      const std::string run = (std::filesystem::path(model.directory) / "run.json").string();
      std::error_code ec;
      if (std::filesystem::is_regular_file(run, ec)) {
        const nlohmann::json j = nlohmann::json::parse(read_whole_file(run, 1 << 16), nullptr, false);
        if (j.is_object() && j.contains("relative_positions") && j["relative_positions"].is_string()) {
          requested.relative_positions = parse_relative_position_rule(j["relative_positions"].get<std::string>());
          std::fprintf(stderr, "deberta: note: %s: relative positions '%s' (the rule this case was made with; "
                               "--relative-positions overrides)\n", run.c_str(), j["relative_positions"].get<std::string>().c_str());
        }
      }
    }
    const Ablation ablation = normalized(model, requested);
    const bool decoder = !positions.empty();
    const ForwardTrace trace = forward(model, inputs, ablation, TraceLevel::Full, decoder);
    if (const std::string w = non_finite_trace(trace); !w.empty()) std::fprintf(stderr, "deberta: warning: %s\n", w.c_str());
    const bool full_logits = args->full_logits || (decoder && in_tensors.count("mlm.logits"));
    TensorMap out = trace_to_tensors(model, trace, positions, full_logits);
    if (in_tensors.count("mlm.labels") && decoder) out["mlm.labels"] = in_tensors.at("mlm.labels");
    if (!args->head.empty()) {
      const std::string keep = head_key(select_head(model, args->head)) + std::string(".");
      for (auto it = out.begin(); it != out.end();) {
        const std::string& name = it->first;
        const bool head_tensor = name.rfind("mlm.", 0) == 0 || name.rfind("rtd.", 0) == 0 ||
                                 name.rfind("cls.", 0) == 0 || name.rfind("tokcls.", 0) == 0;
        it = head_tensor && name.rfind(keep, 0) != 0 ? out.erase(it) : std::next(it);
      }
    }
    write_safetensors(args->out, out, {{"model", model.weights_path}, {"ablation", ablation.describe(&model.config)}});
    std::printf("wrote %zu tensors to %s\n", out.size(), args->out.c_str());
  });
}

}  // namespace deberta::cli
