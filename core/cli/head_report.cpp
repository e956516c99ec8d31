#include "head_report.h"

#include "deberta/analysis.h"

#include <cstdio>

namespace deberta::cli {

namespace {

std::string label_of(const Model& model, Eigen::Index c) {
  const auto& labels = head_labels(model);
  return c < static_cast<Eigen::Index>(labels.size()) ? labels[c] : "LABEL_" + std::to_string(c);
}

std::string token_name(const ResolvedInput& in, int64_t i) {
  return i < static_cast<int64_t>(in.token_names.size()) ? in.token_names[i] : "#" + std::to_string(in.inputs.input_ids[i]);
}

void print_note(const Model& model, HeadKind kind) {
  const std::string note = head_note(model, kind);
  if (!note.empty()) std::fprintf(stderr, "deberta: note: %s\n", note.c_str());
}

}  // namespace

ResolvedInput resolve_pair_input(const InputArgs& args, const std::string* pair, const std::string& token_types,
                                 const Model& model) {
  ResolvedInput r;
  if (pair) {  // given, even empty: HF's tokenizer makes [CLS] a [SEP] [SEP] of an empty pair
    if (args.text.empty()) throw Error("--pair needs --text for the first segment");
    if (!has_tokenizer(model.directory))
      throw Error(model.directory + ": no tokenizer files (spm.model, vocab.json + merges.txt or tokenizer.json); give "
                                    "the pair as --ids with --token-types");
    r.tokenizer = load_tokenizer_for_model(model.directory, model.config.vocab_size);
    const Encoding enc = r.tokenizer->encode(args.text, pair);
    r.inputs.input_ids = enc.ids;
    r.inputs.token_type_ids = enc.token_type_ids;
    r.token_names = enc.tokens;
    if (r.inputs.size() > model.config.max_position_embeddings)
      throw Error("input has " + std::to_string(r.inputs.size()) + " tokens, more than max_position_embeddings = " +
                  std::to_string(model.config.max_position_embeddings) + " of " + model.directory);
  } else {
    r = resolve_input(args, model);
  }
  if (!token_types.empty()) {
    r.inputs.token_type_ids = parse_int_list(token_types, "--token-types");
    if (r.inputs.token_type_ids.size() != r.inputs.input_ids.size())
      throw Error("--token-types has " + std::to_string(r.inputs.token_type_ids.size()) + " entries, the input " +
                  std::to_string(r.inputs.input_ids.size()) + " tokens");
  }
  zero_unused_token_types(model.config, &r.inputs);
  return r;
}

nlohmann::json head_output_json(const Model& model, const HeadOutput& out, const ResolvedInput& in) {
  nlohmann::json j = {{"head", head_key(out.kind)}};
  if (out.kind == HeadKind::RTD) {
    nlohmann::json tokens = nlohmann::json::array();
    for (int64_t i = 0; i < out.logits.rows(); ++i)
      tokens.push_back({{"position", i}, {"token", token_name(in, i)}, {"logit", out.logits(i, 0)},
                        {"p_replaced", out.probs(i, 0)}, {"replaced", out.probs(i, 0) > 0.5},
                        {"padding", out.item_mask(i) == 0}});
    j["tokens"] = tokens;
    return j;
  }
  auto row_json = [&](int64_t r) {
    nlohmann::json labels = nlohmann::json::array();
    Eigen::Index best = 0;
    out.logits.row(r).maxCoeff(&best);
    for (int64_t c = 0; c < out.logits.cols(); ++c) {
      nlohmann::json l = {{"label", label_of(model, c)}, {"logit", out.logits(r, c)}};
      if (!out.regression) l["probability"] = out.probs(r, c);
      labels.push_back(l);
    }
    nlohmann::json row = {{"labels", labels}};
    if (out.regression) row["value"] = out.logits(r, 0);
    else row["prediction"] = label_of(model, best);
    return row;
  };
  if (out.kind == HeadKind::SequenceClassification) {
    j.update(row_json(0));
    j["regression"] = out.regression;
    return j;
  }
  nlohmann::json tokens = nlohmann::json::array();
  for (int64_t i = 0; i < out.logits.rows(); ++i) {
    nlohmann::json t = row_json(i);
    t["position"] = i;
    t["token"] = token_name(in, i);
    t["padding"] = out.item_mask(i) == 0;
    tokens.push_back(t);
  }
  j["tokens"] = tokens;
  j["regression"] = out.regression;
  return j;
}

void print_head_output(const Model& model, const HeadOutput& out, const ResolvedInput& in, const std::string& title) {
  std::printf("%s\n", title.c_str());
  if (out.kind == HeadKind::RTD) {
    std::printf("  %4s  %-16s %10s %12s\n", "pos", "token", "logit", "P(replaced)");
    int64_t replaced = 0, counted = 0;
    for (int64_t i = 0; i < out.logits.rows(); ++i) {
      const bool pad = out.item_mask(i) == 0;
      const bool rep = out.probs(i, 0) > 0.5;
      if (!pad) ++counted, replaced += rep;
      std::printf("  %4lld  %-16s %10.4f %12.4f%s\n", static_cast<long long>(i), token_name(in, i).c_str(),
                  out.logits(i, 0), out.probs(i, 0), pad ? "  (padding)" : rep ? "  replaced" : "");
    }
    std::printf("  %lld of %lld tokens judged replaced (P > 0.5)\n", static_cast<long long>(replaced),
                static_cast<long long>(counted));
    return;
  }
  if (out.kind == HeadKind::SequenceClassification) {
    if (out.regression) {
      std::printf("  %s = %.6f (regression: one output, no softmax)\n", label_of(model, 0).c_str(), out.logits(0, 0));
      return;
    }
    Eigen::Index best = 0;
    out.probs.row(0).maxCoeff(&best);
    for (int64_t c = 0; c < out.logits.cols(); ++c)
      std::printf("  %-20s %8.4f   (logit %.4f)%s\n", label_of(model, c).c_str(), out.probs(0, c), out.logits(0, c),
                  c == best ? "  <-" : "");
    return;
  }
  std::printf("  %4s  %-16s %-20s %10s\n", "pos", "token", "label", out.regression ? "value" : "P");
  for (int64_t i = 0; i < out.logits.rows(); ++i) {
    Eigen::Index best = 0;
    out.logits.row(i).maxCoeff(&best);
    std::printf("  %4lld  %-16s %-20s %10.4f%s\n", static_cast<long long>(i), token_name(in, i).c_str(),
                label_of(model, best).c_str(), out.probs(i, best), out.item_mask(i) == 0 ? "  (padding)" : "");
  }
}

void report_head(const Model& model, const ResolvedInput& in, HeadKind kind, const Ablation& ablation, bool json) {
  print_note(model, kind);
  const HeadOutput baseline = predict_head(model, in.inputs, kind, {});
  const bool ablated = !ablation.is_default();
  HeadOutput changed;
  HeadEffect effect;
  if (ablated) {
    changed = predict_head(model, in.inputs, kind, ablation);
    effect = compare_head_outputs(baseline, changed);
  }
  if (json) {
    nlohmann::json out = {{"tokens", in.token_names}, {"input_ids", in.inputs.input_ids},
                          {"token_type_ids", in.inputs.token_type_ids}};
    out["output"] = head_output_json(model, ablated ? changed : baseline, in);
    if (ablated) {
      out["ablation"] = ablation.describe(&model.config);
      out["baseline"] = head_output_json(model, baseline, in);
      out["effect"] = {{"mean_kl", effect.mean_kl}, {"max_kl", effect.max_kl}, {"mean_abs_dp", effect.mean_abs_dp},
                       {"max_abs_dp", effect.max_abs_dp}, {"flips", effect.flips}, {"items", effect.items}};
    }
    std::printf("%s\n", json_text(out).c_str());
    return;
  }
  std::printf("tokens:");
  for (const auto& t : in.token_names) std::printf(" [%s]", t.c_str());
  std::printf("\n");
  const std::string head = std::string(head_title(kind)) + " head";
  if (!ablated) {
    print_head_output(model, baseline, in, head + ":");
    return;
  }
  print_head_output(model, baseline, in, head + ", baseline:");
  print_head_output(model, changed, in, head + ", ablated (" + ablation.describe(&model.config) + "):");
  if (kind == HeadKind::RTD || effect.regression)
    std::printf("mean |dp| = %.6f, max |dp| = %.6f, %s %lld of %lld\n", effect.mean_abs_dp, effect.max_abs_dp,
                kind == HeadKind::RTD ? "decisions flipped at 0.5:" : "items:", static_cast<long long>(effect.flips),
                static_cast<long long>(effect.items));
  else
    std::printf("mean KL(baseline || ablated) = %.6f nats, label changed at %lld of %lld\n", effect.mean_kl,
                static_cast<long long>(effect.flips), static_cast<long long>(effect.items));
}

void report_head_ablations(const Model& model, const ResolvedInput& in, HeadKind kind, bool heads, bool json) {
  print_note(model, kind);
  const auto effects = run_head_ablations(model, in.inputs, kind, standard_ablations(model, heads));
  const bool by_dp = kind == HeadKind::RTD || (model.config.id2label.size() == 1);
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& e : effects) {
      nlohmann::json row = {{"ablation", e.name}, {"items", e.items}, {"flips", e.flips}};
      if (by_dp) row.update({{"mean_abs_dp", e.mean_abs_dp}, {"max_abs_dp", e.max_abs_dp}});
      else row.update({{"mean_kl", e.mean_kl}, {"max_kl", e.max_kl}});
      if (!e.error.empty()) row["error"] = e.error;
      rows.push_back(row);
    }
    std::printf("%s\n", json_text(nlohmann::json{{"head", head_key(kind)}, {"rows", rows}}).c_str());
    return;
  }
  if (kind == HeadKind::RTD)
    std::printf("replaced-token detection head; |dp| = change of P(replaced) per token, flips = decisions at 0.5\n\n");
  else if (by_dp)
    std::printf("%s head (regression); |dp| = change of the value\n\n", head_title(kind));
  else
    std::printf("%s head; KL(baseline || ablated) of the label distribution in nats, flips = most probable label "
                "changed\n\n", head_title(kind));
  std::printf("%-22s %12s %12s %14s\n", "ablation", by_dp ? "mean |dp|" : "mean KL", by_dp ? "max |dp|" : "max KL",
              "flips");
  for (const auto& e : effects) {
    if (!e.error.empty()) {
      std::printf("%-22s   not applicable: %s\n", e.name.c_str(), e.error.c_str());
      continue;
    }
    std::printf("%-22s %12.6f %12.6f %8lld / %lld\n", e.name.c_str(), by_dp ? e.mean_abs_dp : e.mean_kl,
                by_dp ? e.max_abs_dp : e.max_kl, static_cast<long long>(e.flips), static_cast<long long>(e.items));
  }
}

}  // namespace deberta::cli
