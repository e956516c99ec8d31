// deberta eval-mlm: masked-LM accuracy of a model on a text file, with deterministic masking.
#include "cli_common.h"
#include "deberta/inputs.h"
#include "commands.h"

#include "deberta/analysis.h"
#include "deberta/finite.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <algorithm>
#include <map>
#include <memory>
#include <random>

namespace deberta::cli {

namespace {
struct EvalArgs {
  std::string model, text_file, unigram_file;
  double mask_rate = 0.15;
  uint64_t seed = 0;
  int64_t max_sentences = 0;
  bool json = false;
  bool per_sentence = false;
  AblationArgs ablation;
};


/// `text` cut to at most `cap` bytes at a UTF-8 character boundary.
std::string cut_to_bytes(const std::string& text, size_t cap) {
  if (text.size() <= cap) return text;
  size_t cut = cap;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

bool is_special(const Tokenizer& tok, int64_t id) {
  return id == tok.cls_id() || id == tok.sep_id() || id == tok.pad_id() || id == tok.mask_id();
}

// Masked positions of one sentence: each ordinary token with probability `rate`, at least one.
// Draws come from mt19937_64 (fully specified by the C++ standard) seeded with seed + line index,
// so the same file, seed and rate mask the same tokens everywhere.
std::vector<int64_t> choose_positions(const Encoding& enc, const Tokenizer& tok, double rate, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> candidates, chosen;
  for (int64_t n = 0; n < static_cast<int64_t>(enc.ids.size()); ++n)
    if (!is_special(tok, enc.ids[n])) candidates.push_back(n);
  for (int64_t n : candidates)
    if (static_cast<double>(rng() >> 11) * 0x1.0p-53 < rate) chosen.push_back(n);
  if (chosen.empty() && !candidates.empty()) chosen.push_back(candidates[rng() % candidates.size()]);
  return chosen;
}
}  // namespace

void register_eval_mlm(CLI::App* app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app->add_subcommand("eval-mlm", "Masked-LM evaluation on a text file (one sentence per line): deterministic "
                                                  "masking, top-1 / top-5 accuracy and mean cross-entropy over the masked "
                                                  "tokens, next to a unigram-frequency baseline.");
  cmd->add_option("--model", args->model, "Model directory (default: the bundled model)");
  cmd->add_option("--text-file", args->text_file, "Text, one sentence per line")->required();
  cmd->add_option("--mask-rate", args->mask_rate, "Probability that an ordinary token is masked")->check(finite_in(0.0, 1.0));
  cmd->add_option("--seed", args->seed, "Masking seed");
  cmd->add_option("--max-sentences", args->max_sentences, "Evaluate at most this many lines (0 = all)");
  cmd->add_option("--unigram-file", args->unigram_file, "Text whose token frequencies make the baseline (default: --text-file)");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->add_flag("--per-sentence", args->per_sentence,
                "With --json: also per sentence [line, masked, top-1 hits, top-5 hits, summed cross-entropy] "
                "(for bootstrap intervals over sentences, notebooks_data/zoo/make_table4.py)");
  args->ablation.add_to(cmd);
  cmd->callback([args] {
    const Model model = load_model_with_progress(model_path_or_default(args->model));
    if (!has_tokenizer(model.directory)) throw Error(model.directory + ": eval-mlm needs a tokenizer (spm.model, …)");
    const auto tok = load_tokenizer_for_model(model.directory, model.config.vocab_size);
    const Ablation ablation = normalized(model, args->ablation.to_ablation());
    std::vector<NumberedLine> lines = read_text_lines(args->text_file);
    // A line longer than any max_len-token text is cut before tokenizing (the tokens past max_len
    // are dropped below anyway), so a 10 MB line costs no 10 MB tokenization.
    const size_t cap = kMaxBytesPerToken * static_cast<size_t>(model.config.max_position_embeddings);
    if (args->max_sentences > 0 && static_cast<int64_t>(lines.size()) > args->max_sentences) lines.resize(args->max_sentences);
    if (lines.empty()) throw Error(args->text_file + ": no text");
    // Unigram baseline: token frequencies (add-one smoothed) over the baseline text.
    std::vector<double> counts(model.config.vocab_size, 1.0);
    const std::string& unigram_path = args->unigram_file.empty() ? args->text_file : args->unigram_file;
    for (const auto& line : args->unigram_file.empty() ? lines : read_text_lines(args->unigram_file))
      for (int64_t id : encode_at(*tok, cut_to_bytes(line.text, cap), nullptr,
                                  unigram_path + ":" + std::to_string(line.number)).ids)
        if (id >= 0 && id < model.config.vocab_size && !is_special(*tok, id)) counts[id] += 1;
    double total = 0;
    for (double c : counts) total += c;
    std::vector<int64_t> by_freq(counts.size());
    for (size_t v = 0; v < counts.size(); ++v) by_freq[v] = static_cast<int64_t>(v);
    const size_t top_n = std::min<size_t>(5, by_freq.size());  // a vocabulary may hold fewer than 5
    std::partial_sort(by_freq.begin(), by_freq.begin() + top_n, by_freq.end(),
                      [&](int64_t a, int64_t b) { return counts[a] > counts[b] || (counts[a] == counts[b] && a < b); });

    const int64_t max_len = model.config.max_position_embeddings;
    const bool tty = isatty(fileno(stderr));
    int64_t masked = 0, top1 = 0, top5 = 0, base1 = 0, base5 = 0, truncated = 0;
    UnknownTokens unknown_total;  // [UNK] and byte pieces over every sentence (issue 40: eval.json)
    double ce = 0, base_ce = 0;
    nlohmann::json per_sentence = nlohmann::json::array();
    bool warned_non_finite = false;  // one warning, not one per sentence
    for (size_t s = 0; s < lines.size(); ++s) {
      Encoding enc = encode_at(*tok, cut_to_bytes(lines[s].text, cap), nullptr,
                               args->text_file + ":" + std::to_string(lines[s].number));
      if (static_cast<int64_t>(enc.ids.size()) > max_len) {
        enc.ids.resize(max_len), enc.token_type_ids.resize(max_len), ++truncated;
        enc.ids.back() = tok->sep_id();
      }
      const UnknownTokens u = count_unknown_tokens(*tok, enc.ids);
      unknown_total.unknown += u.unknown, unknown_total.bytes += u.bytes, unknown_total.total += u.total;
      const auto positions = choose_positions(enc, *tok, args->mask_rate, args->seed + s);
      if (positions.empty()) continue;
      Inputs in;
      in.input_ids = enc.ids;
      std::vector<int64_t> labels;
      for (int64_t p : positions) labels.push_back(in.input_ids[p]), in.input_ids[p] = tok->mask_id();
      const auto preds = predict_masked(model, in, positions, ablation, 5);
      if (const std::string w = non_finite_predictions(preds); !w.empty() && !warned_non_finite) {
        std::fprintf(stderr, "deberta: warning: sentence %zu: %s\n", s + 1, w.c_str());
        warned_non_finite = true;
      }
      const int64_t s_top1 = top1, s_top5 = top5;
      const double s_ce = ce;
      for (size_t m = 0; m < preds.size(); ++m) {
        const int64_t y = labels[m];
        ++masked;
        top1 += preds[m].top[0].id == y;
        for (const auto& t : preds[m].top) top5 += t.id == y;
        ce -= preds[m].log_probs[y];
        base1 += by_freq[0] == y;
        for (size_t k = 0; k < top_n; ++k) base5 += by_freq[k] == y;
        base_ce -= std::log(counts[y] / total);
      }
      if (args->per_sentence)
        per_sentence.push_back({s, preds.size(), top1 - s_top1, top5 - s_top5, ce - s_ce});
      if (tty && (s % 20 == 0 || s + 1 == lines.size()))
        std::fprintf(stderr, "\r%zu/%zu sentences, %lld masked tokens, top-1 %.3f", s + 1, lines.size(),
                     static_cast<long long>(masked), masked ? double(top1) / masked : 0.0);
    }
    if (tty) std::fprintf(stderr, "\n");
    if (masked == 0) throw Error(args->text_file + ": no token could be masked");
    const double M = static_cast<double>(masked);
    if (args->json) {
      nlohmann::json j = {{"model", model.directory}, {"text_file", args->text_file}, {"ablation", ablation.describe(&model.config)},
                          {"sentences", lines.size()}, {"masked_tokens", masked}, {"mask_rate", args->mask_rate},
                          {"seed", args->seed}, {"truncated_sentences", truncated},
                          {"top1", top1 / M}, {"top5", top5 / M}, {"cross_entropy", ce / M},
                          {"unigram", {{"top1", base1 / M}, {"top5", base5 / M}, {"cross_entropy", base_ce / M}}},
                          {"tokens", unknown_total.total}, {"unk_tokens", unknown_total.unknown},
                          {"byte_pieces", unknown_total.bytes}, {"unk_or_byte_share", unknown_total.share()}};
      if (args->per_sentence) j["per_sentence"] = per_sentence;
      std::printf("%s\n", json_text(j).c_str());
      return;
    }
    std::printf("%s on %s (%zu sentences, %lld masked tokens, rate %.2f, seed %llu), %s\n", model.directory.c_str(),
                args->text_file.c_str(), lines.size(), static_cast<long long>(masked), args->mask_rate,
                static_cast<unsigned long long>(args->seed), ablation.describe(&model.config).c_str());
    std::printf("%-18s %8s %8s %14s\n", "", "top-1", "top-5", "cross-entropy");
    std::printf("%-18s %8.4f %8.4f %14.4f\n", "model", top1 / M, top5 / M, ce / M);
    std::printf("%-18s %8.4f %8.4f %14.4f\n", "unigram baseline", base1 / M, base5 / M, base_ce / M);
    std::printf("%lld tokens: %lld [UNK], %lld byte pieces (%.2f %%)\n", static_cast<long long>(unknown_total.total),
                static_cast<long long>(unknown_total.unknown), static_cast<long long>(unknown_total.bytes),
                100.0 * unknown_total.share());
    if (truncated) std::printf("(%lld sentences truncated to %lld tokens)\n", static_cast<long long>(truncated), static_cast<long long>(max_len));
  });
}

}  // namespace deberta::cli
