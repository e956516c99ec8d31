// deberta eval: a task head (classifier, token classifier, RTD discriminator) over a file of
// inputs, as trained and under an inference-time ablation: accuracy when the file has labels, and
// the head-appropriate effect of the ablation (label KL and flips; mean |Δp| and decisions flipped).
// The masked-LM head has its own evaluation with deterministic masking: `deberta eval-mlm`.
#include "cli_common.h"
#include "commands.h"
#include "head_report.h"

#include "deberta/finite.h"
#include "deberta/heads.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

namespace deberta::cli {

namespace {

struct EvalArgs {
  std::string model, data, head;
  bool labeled = false;
  int64_t max_lines = 0;
  bool json = false;
  AblationArgs ablation;
};

/// One line of the data file: "A", "A<TAB>B", with --labeled a last column holding the gold label.
struct Example {
  std::string a, b, label;
  int64_t line = 0;
};

std::vector<Example> read_examples(const std::string& path, bool labeled, int64_t max_lines) {
  std::vector<Example> out;
  for (const NumberedLine& numbered : read_text_lines(path)) {
    const std::string& line = numbered.text;
    const int64_t line_no = numbered.number;
    std::vector<std::string> cols;
    std::stringstream s(line);
    for (std::string col; std::getline(s, col, '\t');) cols.push_back(col);
    Example e;
    e.line = line_no;
    if (labeled) {
      if (cols.size() < 2) throw Error(path + ":" + std::to_string(line_no) + ": --labeled wants 'text<TAB>label' or 'text<TAB>pair<TAB>label'");
      e.label = cols.back();
      cols.pop_back();
    }
    if (cols.size() > 2) throw Error(path + ":" + std::to_string(line_no) + ": more than two text columns (text<TAB>pair)");
    e.a = cols[0];
    if (cols.size() == 2) e.b = cols[1];
    out.push_back(std::move(e));
    if (max_lines > 0 && static_cast<int64_t>(out.size()) >= max_lines) break;
  }
  if (out.empty()) throw Error(path + ": no non-empty lines");
  return out;
}

/// The label index `text` names: a label of id2label, or its integer index.
int64_t label_index(const Model& model, const std::string& text, const std::string& where) {
  const auto& labels = head_labels(model);
  for (size_t c = 0; c < labels.size(); ++c)
    if (labels[c] == text) return static_cast<int64_t>(c);
  try {
    size_t used = 0;
    const int64_t c = std::stoll(text, &used);
    if (used == text.size() && c >= 0 && c < static_cast<int64_t>(labels.size())) return c;
  } catch (const std::exception&) {
  }
  std::string known;
  for (const auto& l : labels) known += (known.empty() ? "" : ", ") + l;
  throw Error(where + ": label '" + text + "' is not one of the model's labels (" + known + ") or their index");
}

int64_t predicted_label(const HeadOutput& out) {
  Eigen::Index c = 0;
  out.logits.row(0).maxCoeff(&c);
  return static_cast<int64_t>(c);
}

}  // namespace

void register_eval(CLI::App* app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app->add_subcommand(
      "eval", "A task head over a file of inputs (one per line: text, or text<TAB>pair; with --labeled a last "
              "column holds the gold label): accuracy as trained and under the ablation flags, and what the "
              "ablation changes — label KL and label flips for classifiers, mean |dp| and decisions flipped at "
              "0.5 for RTD, per-token KL and flips for token classifiers. Masked-LM heads: `deberta eval-mlm`.");
  cmd->add_option("--model", args->model, "Model directory (default: the bundled model)");
  cmd->add_option("--data", args->data, "Input file, UTF-8, one example per line")->required();
  cmd->add_flag("--labeled", args->labeled, "The last tab-separated column is the gold label (a label name of id2label or its index)");
  cmd->add_option("--head", args->head, "Head to evaluate: rtd, cls, tokcls (default: the model's own)");
  cmd->add_option("--max-lines", args->max_lines, "Evaluate at most this many examples (0 = all)");
  cmd->add_flag("--json", args->json, "Print JSON");
  args->ablation.add_to(cmd);
  cmd->callback([args] {
    const Model model = load_model_with_progress(model_path_or_default(args->model));
    const HeadKind kind = select_head(model, args->head);
    if (kind == HeadKind::MLM)
      throw Error(model.directory + ": the masked-LM head is evaluated by `deberta eval-mlm --text-file FILE` "
                                    "(deterministic masking; the same ablation flags)");
    if (!has_tokenizer(model.directory)) throw Error(model.directory + ": eval needs a tokenizer (spm.model, …)");
    if (const std::string note = head_note(model, kind); !note.empty()) std::fprintf(stderr, "deberta: note: %s\n", note.c_str());
    const auto tok = load_tokenizer_for_model(model.directory, model.config.vocab_size);
    const Ablation ablation = normalized(model, args->ablation.to_ablation());
    const bool ablated = !ablation.is_default();
    const auto examples = read_examples(args->data, args->labeled, args->max_lines);
    const bool classifier = kind == HeadKind::SequenceClassification;
    if (args->labeled && !classifier)
      throw Error("--labeled: gold labels are read for sequence classifiers only (this head: " + std::string(head_title(kind)) + ")");

    int64_t items = 0, flips = 0, correct_base = 0, correct_ablated = 0, skipped = 0;
    double kl_sum = 0, dp_sum = 0, kl_max = 0, dp_max = 0, p_replaced_sum = 0;
    int64_t replaced_base = 0;
    bool warned = false;
    for (const Example& e : examples) {
      const std::string where = args->data + ":" + std::to_string(e.line);
      if (e.a.size() + e.b.size() > kMaxBytesPerToken * static_cast<uint64_t>(model.config.max_position_embeddings)) {
        ++skipped;  // too long for the model, known without tokenizing it
        continue;
      }
      const Encoding enc = encode_at(*tok, e.a, e.b.empty() ? nullptr : &e.b, where);
      Inputs inputs;
      inputs.input_ids = enc.ids;
      inputs.token_type_ids = enc.token_type_ids;
      zero_unused_token_types(model.config, &inputs);
      if (inputs.size() > model.config.max_position_embeddings) {
        ++skipped;  // counted and reported, not silently dropped
        continue;
      }
      const HeadOutput base = predict_head(model, inputs, kind);
      if (args->labeled && base.regression)
        throw Error("--labeled: this classifier has one output (regression, num_labels 1): there are no labels to count");
      if (!warned && !base.probs.allFinite()) {
        std::fprintf(stderr, "deberta: warning: %s: the head's output is not finite (NaN / Inf)\n", where.c_str());
        warned = true;
      }
      for (Eigen::Index i = 0; kind == HeadKind::RTD && i < base.probs.rows(); ++i)
        if (base.item_mask(i) > 0) p_replaced_sum += base.probs(i, 0), replaced_base += base.probs(i, 0) > 0.5;
      std::optional<HeadOutput> abl;
      if (ablated) abl = predict_head(model, inputs, kind, ablation);
      if (args->labeled) {
        const int64_t gold = label_index(model, e.label, where);
        correct_base += predicted_label(base) == gold;
        if (abl) correct_ablated += predicted_label(*abl) == gold;
      }
      const HeadEffect eff = abl ? compare_head_outputs(base, *abl) : HeadEffect{};
      const int64_t n = classifier ? 1 : static_cast<int64_t>(base.item_mask.sum());
      items += n;
      flips += eff.flips;
      kl_sum += eff.mean_kl * static_cast<double>(n), kl_max = std::max(kl_max, eff.max_kl);
      dp_sum += eff.mean_abs_dp * static_cast<double>(n), dp_max = std::max(dp_max, eff.max_abs_dp);
    }
    const int64_t evaluated = static_cast<int64_t>(examples.size()) - skipped;
    if (evaluated == 0) throw Error(args->data + ": every example is longer than max_position_embeddings");
    const double denom = static_cast<double>(std::max<int64_t>(items, 1));
    nlohmann::json j = {{"model", model.directory}, {"head", head_key(kind)}, {"examples", evaluated},
                        {"skipped_too_long", skipped}, {"items", items},
                        {"ablation", ablated ? ablation.describe(&model.config) : "baseline"}};
    if (args->labeled) {
      j["accuracy"] = static_cast<double>(correct_base) / evaluated;
      if (ablated) j["accuracy_ablated"] = static_cast<double>(correct_ablated) / evaluated;
    }
    if (kind == HeadKind::RTD) {
      j["mean_p_replaced"] = p_replaced_sum / denom;
      j["fraction_called_replaced"] = static_cast<double>(replaced_base) / denom;
    }
    if (ablated) {
      j["flips"] = flips;
      if (kind == HeadKind::RTD) j["mean_abs_dp"] = dp_sum / denom, j["max_abs_dp"] = dp_max;
      else j["mean_kl"] = kl_sum / denom, j["max_kl"] = kl_max;
    }
    if (args->json) {
      std::printf("%s\n", json_text(j).c_str());
      return;
    }
    const char* unit = kind == HeadKind::SequenceClassification ? "examples" : "tokens";
    std::printf("%s, %s head: %lld examples", model.directory.c_str(), head_title(kind), static_cast<long long>(evaluated));
    if (!classifier) std::printf(" (%lld tokens)", static_cast<long long>(items));
    if (skipped) std::printf(", %lld skipped (longer than max_position_embeddings)", static_cast<long long>(skipped));
    std::printf("\n");
    if (args->labeled) {
      std::printf("accuracy as trained      %.4f\n", j["accuracy"].get<double>());
      if (ablated) std::printf("accuracy %-15s %.4f\n", j["ablation"].get<std::string>().c_str(), j["accuracy_ablated"].get<double>());
    }
    if (kind == HeadKind::RTD)
      std::printf("as trained: mean P(replaced) %.4f, %.2f %% of tokens called replaced (P > 0.5)\n",
                  j["mean_p_replaced"].get<double>(), 100 * j["fraction_called_replaced"].get<double>());
    if (!ablated) {
      std::printf("(no ablation given: add e.g. --terms c2c,p2c to measure what removing c2p changes)\n");
      return;
    }
    std::printf("ablation %s:\n", j["ablation"].get<std::string>().c_str());
    if (kind == HeadKind::RTD)
      std::printf("  mean |dP(replaced)| %.6f (max %.6f), decisions flipped at 0.5: %lld / %lld tokens\n",
                  j["mean_abs_dp"].get<double>(), dp_max, static_cast<long long>(flips), static_cast<long long>(items));
    else
      std::printf("  mean KL(as trained || ablated) %.6f nats (max %.6f), label flips: %lld / %lld %s\n",
                  j["mean_kl"].get<double>(), kl_max, static_cast<long long>(flips), static_cast<long long>(items), unit);
  });
}

}  // namespace deberta::cli
