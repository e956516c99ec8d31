// ablation.h — the inference-time switches (`Ablation`) and their parser from text.
//
// One parser for the command line and the viewer: the CLI's flags (`--terms c2c,c2p --head-mask 1:0
// ...`) and the viewer's `--ablate "..."` turn text into an `Ablation` here, so a switch means the
// same thing wherever it is typed (the Python module fills the same struct from a typed dict).
// What each switch does to the equations: docs/paper-vs-code.md.
#pragma once

#include "deberta/config.h"
#include "deberta/equations.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace deberta {

/// Where the released code and the paper disagree on the p2c index (docs/paper-vs-code.md).
enum class P2CIndex {
  Code,   ///< p2c reads table row δ(i, j), the row of i − j (released code; default)
  Paper,  ///< p2c reads row δ(j, i), as eq. 4 writes it
};

/// How the attention scale s = 1/√(d · scale_factor) is chosen.
enum class ScaleMode {
  Auto,     ///< the factor the model was trained with (reference rule; default)
  Fixed,    ///< `Ablation::scale_factor` (the paper writes √(3d): factor 3)
  Rescale,  ///< 1 + number of active position terms (c2p, p2c, p2p)
};

/// Inference-time switches. The default-constructed value is the model as trained and gives
/// bitwise the same numbers as the plain forward pass.
struct Ablation {
  /// Each term of eq. 2 on or off; unset: as the model — c2c on, c2p and p2c as its
  /// `pos_att_type`, p2p (eq. 2's fourth term) as trained (`trained_with_p2p`).
  PerTerm<std::optional<bool>> terms;
  std::optional<P2CIndex> p2c_index;  ///< unset: as trained (`trained_with_paper_p2c`; else Code)
  ScaleMode scale_mode = ScaleMode::Auto;
  double scale_factor = 0;        ///< with ScaleMode::Fixed
  std::set<std::pair<int64_t, int64_t>> head_mask;  ///< (layer, head) whose probabilities are zeroed
  int64_t max_relative_positions = 0;  ///< K ≤ k: read only the central 2K table rows; 0 = k
  bool emd = true;                ///< decode with the EMD (false: I = H of the last layer, n = 1)
  /// Whose relative positions: Hugging Face's (default) or microsoft/DeBERTa's clamp to ±(m − 1)
  /// before the log buckets. Not an ablation of the model: a choice between the two references.
  RelativePositionRule relative_positions = RelativePositionRule::HuggingFace;

  /// True when nothing is switched (the model as trained).
  bool is_default() const;
  /// Short description, e.g. "-c2p +p2p scale=3 mask 1:0". With `config`, a term switched to
  /// what the model does anyway is not mentioned.
  std::string describe(const ModelConfig* config = nullptr) const;
};

/// The switches as text, one field per command-line flag (empty / default = not given).
struct AblationSwitches {
  std::string terms;                   ///< --terms: subset of "c2c,c2p,p2c,p2p"; empty = the model's own
  std::string p2c_index;               ///< --p2c-index: "code", "paper" or empty (as trained)
  std::string scale_factor = "auto";   ///< --scale-factor: "auto" or a positive number
  bool rescale = false;                ///< --rescale
  std::string head_mask;               ///< --head-mask: "L:H,L:H"
  int64_t max_relative_positions = 0;  ///< --max-relative-positions K; 0 = k
  bool no_emd = false;                 ///< --no-emd
  std::string relative_positions = "hf";  ///< --relative-positions: "hf" or "microsoft"
};

/// Turns text switches into an `Ablation`. Errors (each naming the flag): an unknown term, a p2c
/// index other than code/paper, a scale factor that is not a positive finite number, a head mask
/// that is not L:H, relative positions other than hf/microsoft.
Ablation parse_ablation(const AblationSwitches& switches);

/// Parses a flag string as typed after `deberta predict`, e.g.
/// "--terms c2c,c2p --head-mask 1:0 --no-emd" or "--p2c-index=paper" (the viewer's `--ablate`).
/// Errors: an unknown flag, a flag without its value, and everything `parse_ablation` raises.
Ablation parse_ablation_flags(const std::string& flags);

/// Parses "1,5,7" into integers. Errors: not a comma-separated list of integers (names `what`).
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& what);

}  // namespace deberta
