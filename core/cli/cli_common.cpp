#include "cli_common.h"

#include "deberta/inputs.h"

#include "deberta/analysis.h"
#include "deberta/file_limits.h"
#include "deberta/model_io.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace deberta::cli {

void AblationArgs::add_to(CLI::App* app) {
  AblationSwitches& s = switches;
  app->add_option("--terms", s.terms, "Attention terms summed into the logits, e.g. c2c,c2p,p2c,p2p (default: the model's pos_att_type)");
  app->add_option("--p2c-index", s.p2c_index, "Table row p2c reads: 'code' = row of i-j as the released code (default), 'paper' = delta(j,i) as eq. 4")
      ->check(CLI::IsMember({"code", "paper"}));
  app->add_option("--scale-factor", s.scale_factor, "'auto' = the model's trained scale (default), or N for s = 1/sqrt(d*N); the paper writes 3");
  app->add_flag("--rescale", s.rescale, "Scale factor = 1 + number of active position terms");
  app->add_option("--head-mask", s.head_mask, "Zero the attention probabilities of heads L:H[,L:H...]");
  app->add_option("--window,--max-relative-positions", s.max_relative_positions, "K: see less distance: read only the central 2K rows of the relative table (K <= k)");
  app->add_flag("--no-emd", s.no_emd, "Decode from the last encoder layer (I = H, one pass) instead of the Enhanced Mask Decoder");
  app->add_option("--relative-positions", s.relative_positions,
                  "Whose relative positions: 'hf' = Hugging Face transformers (default), 'microsoft' = microsoft/DeBERTa, "
                  "which clamps i-j to +-(max_relative_positions-1) before the log buckets (differs only when N > max_relative_positions)")
      ->check(CLI::IsMember({"hf", "microsoft"}));
}

void InputArgs::add_to(CLI::App* app, bool with_text, bool with_masks) {
  app->add_option("--model", model, "Model directory (config.json + model.safetensors / pytorch_model.bin) or weights file; default: the bundled model");
  if (with_text) app->add_option("--text", text, "Input text; the literal [MASK] becomes the mask token");
  app->add_option("--ids", ids, "Input token ids, comma-separated (e.g. 1,17,4,2)");
  if (with_masks) {
    app->add_option("--mask-id", mask_id, "Id of the mask token (default: the tokenizer's [MASK])");
    app->add_option("--positions", positions, "Positions to predict, comma-separated (default: every [MASK])");
  }
}

ResolvedInput resolve_input(const InputArgs& args, const Model& model) {
  ResolvedInput r;
  if (has_tokenizer(model.directory)) r.tokenizer = load_tokenizer_for_model(model.directory, model.config.vocab_size);
  InputRequest q;
  q.text = args.text;
  if (!args.ids.empty()) q.ids = parse_int_list(args.ids, "--ids");
  if (args.text.empty() && args.ids.empty()) throw Error("give the input as --text \"...\" or --ids 1,2,3");
  if (!args.text.empty() && !args.ids.empty()) throw InvalidInput("give the input as --text or as --ids, not both");
  q.mask_id = args.mask_id;
  if (!args.positions.empty()) q.positions = parse_int_list(args.positions, "--positions");
  TokenizedInput t = tokenize_input(model, r.tokenizer.get(), q);  // the one resolver (inputs.h)
  // A text the vocabulary does not know (issue 40, item 3): warned on stderr, the run goes on.
  if (r.tokenizer && !q.text.empty())
    if (const std::string note = unknown_tokens_note(count_unknown_tokens(*r.tokenizer, t.inputs.input_ids)); !note.empty())
      std::fprintf(stderr, "deberta: warning: %s\n", note.c_str());
  r.inputs = std::move(t.inputs);
  r.token_names = std::move(t.names);
  r.mask_positions = std::move(t.mask_positions);
  return r;
}

std::string token_label(const ResolvedInput& in, int64_t id) {
  return in.tokenizer ? in.tokenizer->display(id) : "#" + std::to_string(id);
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          return "'" + text + "' is not a number";
        }
        if (used != text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(v)) return "'" + text + "' is not a finite number";
        if (v < lo || v > hi) {
          std::ostringstream s;
          s << "'" << text << "' is outside [" << lo << ", " << hi << "]";
          return s.str();
        }
        return {};
      },
      "FINITE", "finite number");
}

std::vector<NumberedLine> read_text_lines(const std::string& path) {
  const std::string data = read_whole_file(path, kMaxTextFileBytes);  // regular files only, size first
  std::vector<NumberedLine> lines;
  int64_t number = 0;
  for (size_t start = 0; start < data.size();) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    ++number;
    std::string line = data.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) lines.push_back({number, std::move(line)});
    start = end + 1;
  }
  return lines;
}

Encoding encode_at(const Tokenizer& tok, const std::string& text, const std::string* pair, const std::string& where) {
  try {
    return pair ? tok.encode(text, pair) : tok.encode(text);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

std::string model_path_or_default(const std::string& arg) { return arg.empty() ? DEBERTA_DEFAULT_MODEL : arg; }

Model load_model_with_progress(const std::string& path, const LoadOptions& options) {
  const bool tty = isatty(fileno(stderr));
  ProgressFn progress;
  if (tty)
    progress = [](uint64_t done, uint64_t total) {
      std::fprintf(stderr, "\rloading weights %5.1f%%", total ? 100.0 * done / total : 0.0);
      if (done >= total) std::fprintf(stderr, "\n");
    };
  Model model = load_model(path, progress, options);
  for (const std::string& w : model.weights.warnings) std::fprintf(stderr, "deberta: warning: %s: %s\n", model.weights_path.c_str(), w.c_str());
  if (std::getenv("DEBERTA_DEBUG") && !model.weights.unused.empty()) {
    const std::string list = name_list(model.weights.unused);
    std::fprintf(stderr, "deberta: debug: %zu unused tensor(s) in %s: %s\n", model.weights.unused.size(),
                 model.weights_path.c_str(), list.c_str());
  }
  return model;
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json top_tokens_json(const MaskPrediction& prediction, const ResolvedInput& in) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& t : prediction.top)
    top.push_back({{"id", t.id}, {"token", token_label(in, t.id)}, {"probability", t.probability}});
  return top;
}

}  // namespace deberta::cli
