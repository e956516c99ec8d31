#include "cli_common.h"

#include "deberta/analysis.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace deberta::cli {

void AblationArgs::add_to(CLI::App* app) {
  app->add_option("--terms", terms, "Attention terms summed into the logits, e.g. c2c,c2p,p2c,p2p (default: the model's pos_att_type)");
  app->add_option("--p2c-index", p2c_index, "Table row p2c reads: 'code' = row of i-j as the released code (default), 'paper' = delta(j,i) as eq. 4")
      ->check(CLI::IsMember({"code", "paper"}));
  app->add_option("--scale-factor", scale_factor, "'auto' = the model's trained scale (default), or N for s = 1/sqrt(d*N); the paper writes 3");
  app->add_flag("--rescale", rescale, "Scale factor = 1 + number of active position terms");
  app->add_option("--head-mask", head_mask, "Zero the attention probabilities of heads L:H[,L:H...]");
  app->add_option("--max-relative-positions", max_relative_positions, "See less distance: read only the central 2K rows of the relative table (K <= k)");
  app->add_flag("--no-emd", no_emd, "Decode from the last encoder layer (I = H, one pass) instead of the Enhanced Mask Decoder");
}

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& what) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      size_t used = 0;
      out.push_back(std::stoll(part, &used));
      if (part.find_first_not_of(" \t", used) != std::string::npos) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw Error(what + ": '" + part + "' is not an integer (expected a comma-separated list like 1,5,7)");
    }
  }
  if (out.empty()) throw Error(what + ": empty list");
  return out;
}

Ablation AblationArgs::to_ablation() const {
  Ablation a;
  if (!terms.empty()) {
    a.c2c = false;
    a.c2p = false;
    a.p2c = false;
    a.p2p = false;
    std::stringstream in(terms);
    std::string t;
    while (std::getline(in, t, ',')) {
      if (t == "c2c") a.c2c = true;
      else if (t == "c2p") a.c2p = true;
      else if (t == "p2c") a.p2c = true;
      else if (t == "p2p") a.p2p = true;
      else throw Error("--terms: unknown term '" + t + "' (known: c2c, c2p, p2c, p2p)");
    }
  }
  if (p2c_index == "paper") a.p2c_index = P2CIndex::Paper;
  else if (p2c_index == "code") a.p2c_index = P2CIndex::Code;
  else if (!p2c_index.empty()) throw Error("--p2c-index: '" + p2c_index + "' is neither 'code' nor 'paper'");
  if (rescale) {
    a.scale_mode = ScaleMode::Rescale;
  } else if (scale_factor != "auto") {
    a.scale_mode = ScaleMode::Fixed;
    size_t used = 0;
    try {
      a.scale_factor = std::stod(scale_factor, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || scale_factor.find_first_not_of(" \t", used) != std::string::npos)  // "3abc" is not 3
      throw Error("--scale-factor: '" + scale_factor + "' is neither 'auto' nor a number");
    if (!(a.scale_factor > 0) || !std::isfinite(a.scale_factor))
      throw Error("--scale-factor must be a positive finite number, found " + scale_factor);
  }
  if (!head_mask.empty()) {
    std::stringstream in(head_mask);
    std::string item;
    while (std::getline(in, item, ',')) {
      const auto colon = item.find(':');
      if (colon == std::string::npos) throw Error("--head-mask: '" + item + "' is not L:H");
      const auto l = parse_int_list(item.substr(0, colon), "--head-mask layer");
      const auto h = parse_int_list(item.substr(colon + 1), "--head-mask head");
      a.head_mask.insert({l[0], h[0]});
    }
  }
  a.max_relative_positions = max_relative_positions;
  a.emd = !no_emd;
  return a;
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
  if (!args.text.empty()) {
    if (!r.tokenizer)
      throw Error(model.directory + ": no tokenizer files (spm.model, vocab.json + merges.txt or tokenizer.json); use --ids");
    const Encoding enc = r.tokenizer->encode(args.text);
    r.inputs.input_ids = enc.ids;
    r.inputs.token_type_ids = enc.token_type_ids;
    r.token_names = enc.tokens;
  } else if (!args.ids.empty()) {
    r.inputs.input_ids = parse_int_list(args.ids, "--ids");
    for (int64_t id : r.inputs.input_ids) r.token_names.push_back(r.tokenizer ? r.tokenizer->display(id) : "#" + std::to_string(id));
  } else {
    throw Error("give the input as --text \"...\" or --ids 1,2,3");
  }
  const int64_t max_len = model.config.max_position_embeddings;
  if (r.inputs.size() > max_len)
    throw Error("input has " + std::to_string(r.inputs.size()) + " tokens, more than max_position_embeddings = " +
                std::to_string(max_len) + " of " + model.directory);
  if (!args.positions.empty()) {
    r.mask_positions = parse_int_list(args.positions, "--positions");
  } else {
    const int64_t mask_id = args.mask_id >= 0 ? args.mask_id : r.tokenizer ? r.tokenizer->mask_id() : -1;
    if (mask_id >= 0) r.mask_positions = find_mask_positions(r.inputs, mask_id);
  }
  for (int64_t p : r.mask_positions)
    if (p < 0 || p >= r.inputs.size())
      throw Error("masked position " + std::to_string(p) + " is outside the " + std::to_string(r.inputs.size()) + "-token input");
  return r;
}

std::string token_label(const ResolvedInput& in, int64_t id) {
  return in.tokenizer ? in.tokenizer->display(id) : "#" + std::to_string(id);
}

std::string model_path_or_default(const std::string& arg) { return arg.empty() ? DEBERTA_DEFAULT_MODEL : arg; }

Model load_model_with_progress(const std::string& path) {
  const bool tty = isatty(fileno(stderr));
  ProgressFn progress;
  if (tty)
    progress = [](uint64_t done, uint64_t total) {
      std::fprintf(stderr, "\rloading weights %5.1f%%", total ? 100.0 * done / total : 0.0);
      if (done >= total) std::fprintf(stderr, "\n");
    };
  Model model = load_model(path, progress);
  for (const std::string& w : model.weights.warnings) std::fprintf(stderr, "deberta: warning: %s: %s\n", model.weights_path.c_str(), w.c_str());
  if (std::getenv("DEBERTA_DEBUG") && !model.weights.unused.empty()) {
    std::string list;
    for (const auto& u : model.weights.unused) list += (list.empty() ? "" : ", ") + u;
    std::fprintf(stderr, "deberta: debug: %zu unused tensor(s) in %s: %s\n", model.weights.unused.size(),
                 model.weights_path.c_str(), list.c_str());
  }
  return model;
}

nlohmann::json top_tokens_json(const MaskPrediction& prediction, const ResolvedInput& in) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& t : prediction.top)
    top.push_back({{"id", t.id}, {"token", token_label(in, t.id)}, {"probability", t.probability}});
  return top;
}

}  // namespace deberta::cli
