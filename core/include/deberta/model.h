// model.h — a loaded model, the switches a learner can flip, and the traced forward pass.
//
// `forward` runs embeddings → layers (→ nGiE conv after layer 0) → optionally the Enhanced Mask
// Decoder, keeping every intermediate in a `ForwardTrace`. The same functions serve the CLI dump,
// the viewer and the tests; the viewer only reads the trace.
#pragma once

#include "deberta/ablation.h"
#include "deberta/backend.h"
#include "deberta/config.h"
#include "deberta/equations.h"
#include "deberta/tensor.h"
#include "deberta/weights.h"

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace deberta {

/// eq. 4's position projections of the whole relative table P `[2k, H]` (`relative_embedding_table`)
/// for every layer l: K_r[l] = P W_{k,r}ᵀ + b and Q_r[l] = P W_{q,r}ᵀ + b, `[2k, h·d]` (empty where
/// the layer has no such projection). They depend on the weights only, never on the tokens.
struct PositionTable {
  std::vector<Matrix> K_r, Q_r;
};

struct Model;

namespace ops {
class PackedWeights;  // the fast backend's packed copy of the weights (core/src/backend/ops.h)
}

/// Data derived from a model's weights and kept between forward passes, so that each forward
/// reads it instead of computing it again: the `PositionTable`, and the fast backend's packed
/// copy of the encoder's weights (issue 43, item 5). Built on first use, from the
/// weights as they are then; `clear` (or `Model::weights_changed`) drops it, and the next forward
/// rebuilds it. Thread-safe: forwards of one model may run at once. Copying gives an empty one;
/// moving carries the derived data along (a `Model` moves its weights and its workspace together)
/// and leaves the source empty.
class ModelWorkspace {
 public:
  ModelWorkspace() = default;
  ModelWorkspace(const ModelWorkspace&) {}
  ModelWorkspace& operator=(const ModelWorkspace&) {
    clear();
    return *this;
  }
  ModelWorkspace(ModelWorkspace&& other) noexcept { take_from(other); }
  ModelWorkspace& operator=(ModelWorkspace&& other) noexcept {
    if (this != &other) take_from(other);
    return *this;
  }

  /// The position table of `model` (null for a model without relative attention), projected as
  /// one set of products on first use. Cost once: 2 × layers products `[2k, H] × [H, h·d]`
  /// (xsmall: 3.6 GFLOP and 38 MB). Errors: a table whose width is not the projections' `in`.
  std::shared_ptr<const PositionTable> positions(const Model& model) const;

  /// `positions` a piece at a time, for a caller that must return between pieces (the web page's
  /// model load: no step over 100 ms, issue 55 item 4). Each call projects at most `max_work`
  /// multiply-adds' worth of rows of one of `positions`' products (at least one row; a row of a
  /// `[2k, H] × [H, h·d]` product costs H·h·d); the products are row-independent
  /// (`ops::Product::rows_independent`), so the table has the same bits as `positions` builds in one
  /// call. Returns true once the table is built (the call that finishes it installs it; `positions`
  /// then returns it at once); true at once when it is built already. `clear` drops a table half
  /// built; a move carries it. Errors: `positions`'.
  bool positions_step(const Model& model, int64_t max_work) const;

  /// The fast backend's packed copy of every encoder layer's products (the attention's Q_c, K_c, V_c
  /// and output, the feed-forward's two; the EMD reuses the last layer's), packed on first use
  /// while the fast backend is current. Null under the reference backend or with
  /// DEBERTA_PACK_WEIGHTS=0. Memory: as much again as those weights (xsmall 170 MB, base 680 MB).
  /// Errors: std::bad_alloc.
  std::shared_ptr<const ops::PackedWeights> packed(const Model& model) const;

  /// Drops everything derived; the next use rebuilds it.
  void clear();

 private:
  void take_from(ModelWorkspace& other) noexcept;

  mutable std::mutex mutex_;
  mutable bool built_ = false;
  mutable std::shared_ptr<const PositionTable> positions_;
  /// `positions_step`'s table half built: the relative table, the products' outputs, and the
  /// next product and row to project.
  struct PositionsBuild {
    Matrix table;
    std::shared_ptr<PositionTable> out;
    size_t product = 0;
    int64_t row = 0;
  };
  mutable std::unique_ptr<PositionsBuild> building_;
  mutable std::mutex packed_mutex_;  // (its own: packing and the position table may run at once)
  mutable std::shared_ptr<const ops::PackedWeights> packed_;
};

/// A model directory loaded into memory.
struct Model {
  ModelConfig config;
  ModelWeights weights;
  std::string directory;     ///< folder holding config.json
  std::string weights_path;  ///< the weights file that was read
  /// What the forward pass derives from `weights` and keeps (the position projections). It is
  /// rebuilt from the weights after `weights_changed`: call that after editing `weights` in place
  /// (Python's `Model.set_tensor` does), or the forward reads projections of the old weights.
  ModelWorkspace workspace;

  /// Tells the model its weights were edited: drops the derived data of `workspace`.
  void weights_changed() { workspace.clear(); }
};

/// The attention terms and scale in force for one model under one `Ablation`.
struct ResolvedAttention {
  PerTerm<bool> terms{{true, false, false, false}};  ///< the terms in eq. 4's sum (c2c on unless switched off)
  P2CIndex p2c_index = P2CIndex::Code;  ///< the table row p2c reads
  double scale_factor = 1;  ///< s = 1/√(d · scale_factor)
  double scale = 1;
  int64_t k = 0;            ///< relative span of the table (2k rows)
  int64_t window = 0;       ///< K actually read (≤ k)
};

/// Whether `model` has the position projections `term` reads (K_r for c2p, Q_r for p2c, both for
/// p2p; c2c reads none), i.e. whether the term can be switched on. Errors: none.
bool has_projections_for(const Model& model, Term term);

/// Checks an `Ablation` against a model and resolves it.
/// Errors: a position term whose projection weights the model lacks; p2p without both
/// projections; K outside [1, k]; a scale factor ≤ 0; a masked head outside the model.
ResolvedAttention resolve_attention(const ModelConfig& config, const ModelWeights& weights, const Ablation& ablation);

/// How much of the intermediate state a forward pass keeps.
enum class TraceLevel {
  Full,   ///< everything: projections and per-head term maps, logits, probs
  Probs,  ///< layer outputs and attention probabilities only
  None,   ///< layer outputs only
};

/// Model inputs, batch of one. `input_ids`, `attention_mask`, `token_type_ids` have N entries.
struct Inputs {
  std::vector<int64_t> input_ids;
  std::vector<int64_t> attention_mask;  ///< 1 = token, 0 = padding (empty: all 1)
  std::vector<int64_t> token_type_ids;  ///< empty: all 0
  int64_t size() const { return static_cast<int64_t>(input_ids.size()); }
};

/// Token types as a model with config `c` reads them: all 0 when it has no token-type table
/// (type_vocab_size = 0), where a tokenizer still numbers a pair's segments 0 and 1; unchanged
/// otherwise (`embed` checks them). The CLI, `deberta eval` and the viewer call it, so what they
/// show and dump is what the embeddings used. `[N]` in, `[N]` out. Errors: none.
void zero_unused_token_types(const ModelConfig& c, Inputs* inputs);

/// The one length rule of every frontend (issue 44, class 3; issue 59, class 8): an input of `n`
/// tokens is refused (InvalidInput: "input has n tokens, more than max_position_embeddings = m of
/// DIR") when it has none, and when n exceeds the model's max_position_embeddings where a position
/// past the absolute table would be read: the embeddings add absolute positions
/// (`position_biased_input`), or `emd` — the Enhanced Mask Decoder runs after this encoder, with
/// I = H + P (`emd_position`). Otherwise any length computes, as Hugging Face's models do (relative
/// positions are clamped to the relative table or bucketed); the N × N memory guard
/// (ops::check_attention_memory) still bounds it. `forward` and `tokenize_input` call it before
/// allocating anything, so `dump --ids`, `predict`, the Python module, `bench` and the viewer
/// refuse the same inputs with the same message.
void check_input_length(const ModelConfig& c, int64_t n, const std::string& model_name, bool emd = false);

/// Positions whose id is `mask_id`, in order.
std::vector<int64_t> find_mask_positions(const Inputs& inputs, int64_t mask_id);

/// Refuses mask positions outside [0, n) or given twice (Error: "masked position P is outside the
/// n-token input" / "… is given more than once"). With distinct positions a prediction holds at
/// most n rows: 10^6 copies of one position cost gigabytes (issue 28, class 6).
void check_mask_positions(const std::vector<int64_t>& positions, int64_t n);

/// Everything one attention sub-layer computed. Matrices over all heads are `[N, h·d]`, head h
/// owning columns h·d … h·d + d − 1; per-head score maps are `[N_q, N_k]`, query i on the rows.
struct AttentionTrace {
  Matrix Q_c, K_c, V_c;      ///< eq. 4 content projections `[N, h·d]`
  Matrix Q_r, K_r;           ///< eq. 4 position projections of table rows `row_offset … +R−1`, `[R, h·d]`
  int64_t row_offset = 0;    ///< first table row projected
  PerTerm<std::vector<Matrix>> terms;  ///< per term, per head, already scaled; empty when the term is off
  std::vector<Matrix> logits;  ///< per head: sum of the active terms, before masking
  std::vector<Matrix> probs;   ///< per head: masked softmax (zeroed for a masked head)
  Matrix context;            ///< probs · V_c per head, `[N, h·d]`
};

/// One transformer layer.
struct LayerTrace {
  AttentionTrace attention;
  Matrix attention_output;  ///< LayerNorm(context W_o + b_o + query input) `[N, H]`
  Matrix output;            ///< layer output `[N, H]` (layer 0: after the nGiE conv when present)
  Matrix output_pre_conv;   ///< layer 0 with conv: the output before the conv, else empty
};

/// The Enhanced Mask Decoder (appendix A.8 / microsoft `EnhancedMaskDecoder`).
struct EMDTrace {
  Matrix position_embeddings;  ///< P = absolute position embeddings rows 0 … N−1 `[N, H]`
  Matrix kv_states;            ///< H = output of encoder layer L−2 `[N, H]`
  Matrix query_states0;        ///< I_0 = H + P `[N, H]`
  std::vector<LayerTrace> passes;  ///< the shared last layer applied twice: query I_t, key/value H
  const Matrix& output() const { return passes.back().output; }
};

/// Shared per-sequence state of the attention (relative geometry, masks, resolved switches).
struct SequenceContext {
  Vector mask;                   ///< `[N]` 0/1
  IndexMatrix rel_pos;           ///< `[N, N]` (bucketed in v2)
  IndexMatrix c2p_row, p2c_row;  ///< `[N, N]` table rows read by c2p and p2c
  /// The same rows by distance alone, `[2N − 1]`: entry i − j + N − 1 is c2p_row(i, j) (p2c_row(i, j))
  /// — δ(i, j) depends on i − j only, checked when they are built; empty without relative attention.
  /// The fast backend's attention reads these instead of the N² matrices.
  std::vector<int64_t> c2p_by_distance, p2c_by_distance;
  Matrix rel_table;              ///< `[2k, H]` relative table as used
  int64_t row_lo = 0, row_hi = -1;  ///< range of table rows any term reads
  ResolvedAttention attention;
  std::set<std::pair<int64_t, int64_t>> head_mask;  ///< (layer, head) pairs whose probabilities are zeroed
  /// eq. 4's position projections of layer l, `[row_hi − row_lo + 1, h·d]`: K_r[l] = table rows ·
  /// W_{k,r}ᵀ + b (empty unless an active term reads it: `reads_K_r`) and Q_r[l] likewise (`reads_Q_r`). They depend on
  /// the weights and the rows only, never on the tokens, so `project_positions` fills them once per
  /// sequence — copied from the model's `ModelWorkspace` table when it has one, else projected: the
  /// encoder's layer l and both EMD passes (l = L − 1) read them, and `rerun_from` keeps them
  /// while the rows stay the same (also one no term reads after a toggle: switching back is free).
  /// Empty vectors (a context from `make_sequence_context` alone): each layer projects its rows
  /// itself; the numbers are the same bits either way.
  std::vector<Matrix> K_r, Q_r;
};

/// The traced forward pass.
struct ForwardTrace {
  Inputs inputs;
  SequenceContext context;
  Ablation ablation;
  TraceLevel level = TraceLevel::Full;
  Matrix embedding_output;        ///< `[N, H]`
  std::vector<LayerTrace> layers;
  bool decoder = false;           ///< whether the decoder stage was run
  std::optional<EMDTrace> emd;    ///< set by `run_decoder` when the EMD is used
  /// Hidden states the MLM head reads: EMD output, or the last layer's output without EMD.
  const Matrix& decoder_output() const { return emd ? emd->output() : layers.back().output; }
};

/// Builds the per-sequence state. Errors as `resolve_attention`.
SequenceContext make_sequence_context(const Model& model, const Inputs& inputs, const Ablation& ablation);

/// Fills `seq->K_r` / `seq->Q_r` for every layer (see `SequenceContext`) as one set of products:
/// rows of the model's position table (`ModelWorkspace`) when it has them, else products exactly as
/// `disentangled_attention` computes them. Takes the matrices
/// of `previous` — a context of the same model, e.g. the one a rerun replaces — when they were
/// projected from the same table rows (even those no active term reads), leaving them empty there. Errors: as `ModelWorkspace::positions`.
void project_positions(const Model& model, SequenceContext* seq, SequenceContext* previous = nullptr);

/// Head `head` (width `d`) of the projections an `AttentionTrace` holds. Errors: none (the caller
/// keeps head < heads).
HeadProjections head_projections(const AttentionTrace& t, int64_t head, int64_t d);

/// What eq. 4 reads of `seq` besides a head's projections (equations.h's `AttentionSetup`): the
/// resolved terms and scale, and views of the context's table rows and mask (`seq` must outlive it).
AttentionSetup attention_setup(const SequenceContext& seq);

/// Runs one disentangled-attention sub-layer (eq. 4 terms, masked softmax, context) for layer
/// `layer` with query input `query [N, H]` and key/value input `kv [N, H]`.
AttentionTrace disentangled_attention(const Model& model, int64_t layer, const Matrix& query, const Matrix& kv,
                                      const SequenceContext& seq, TraceLevel level);

/// Runs layer `layer`: attention (query input `query`, key/value input `kv`) then feed-forward.
LayerTrace run_layer(const Model& model, int64_t layer, const Matrix& query, const Matrix& kv,
                     const SequenceContext& seq, TraceLevel level);

/// The encoder: embeddings and every layer. With `decoder` the EMD runs too (when the model has
/// absolute position embeddings and `ablation.emd`).
/// Errors: empty input, bad ids, N too long, and `resolve_attention`'s.
ForwardTrace forward(const Model& model, const Inputs& inputs, const Ablation& ablation = {},
                     TraceLevel level = TraceLevel::Full, bool decoder = false);

/// Re-runs layers `first_layer …` (and the decoder if it was run) of `trace` under a new
/// ablation, keeping the layers before it. Equal to a fresh `forward` with that ablation.
void rerun_from(const Model& model, ForwardTrace* trace, const Ablation& ablation, int64_t first_layer);

/// A forward pass (or a re-run) one stage at a time: the embeddings and sequence context, then
/// each encoder layer, then the decoder stage. `forward` and `rerun_from` are this class run to
/// completion, so a stepped pass gives the same bits. The web edition runs one stage per frame,
/// so the page keeps drawing (and shows `next_stage()`) while a long forward runs.
/// `model` must outlive the object.
class ForwardSteps {
 public:
  /// Starts `forward(model, inputs, ablation, level, decoder)`: nothing computed yet. Errors:
  /// `check_attention_memory`'s (the N × N maps would not fit); the rest as `forward`, at the
  /// first `step()`.
  ForwardSteps(const Model& model, const Inputs& inputs, const Ablation& ablation, TraceLevel level, bool decoder);
  /// Starts `rerun_from(model, &trace, ablation, first_layer)` on `trace` (taken over).
  ForwardSteps(const Model& model, ForwardTrace trace, const Ablation& ablation, int64_t first_layer);

  /// Runs the next stage (nothing once finished). Errors: as `forward`.
  void step();
  bool finished() const { return done_ >= stages_; }
  /// Stages run so far, of `stages()`: 1 + the layers to run + 1 with the decoder.
  int64_t stages_done() const { return done_; }
  int64_t stages() const { return stages_; }
  /// What `step()` runs next, for a progress line: "embeddings", "layer 3 of 12", "decoder", "done".
  std::string next_stage() const;
  /// The finished trace (moved out). Errors: `Error` before `finished()`.
  ForwardTrace take();

 private:
  const Model* model_;
  ForwardTrace trace_;
  int64_t first_ = 0, stages_ = 0, done_ = 0;
  bool decoder_ = false, fresh_ = true;
};

/// Recomputes encoder layer `layer` of a lighter trace (TraceLevel::Probs or None) at
/// TraceLevel::Full from that layer's kept input: every term map, bitwise equal to a full trace.
/// This is how the viewer keeps memory at hidden states + probabilities and still shows the term
/// maps and logits of the layer on screen. Errors: layer out of range.
LayerTrace materialize_layer(const Model& model, const ForwardTrace& trace, int64_t layer);

/// The same for EMD pass `pass` (0 or 1). Errors: no EMD in the trace, pass out of range.
LayerTrace materialize_emd_pass(const Model& model, const ForwardTrace& trace, int64_t pass);

/// The first layer whose result differs between two ablations (the number of layers if none).
int64_t first_affected_layer(const Model& model, const Ablation& a, const Ablation& b);

/// appendix A.8 / microsoft `EnhancedMaskDecoder.emd_context_layer`: H = output of layer L−2,
/// I_0 = H + P, I_{t+1} = layer_{L−1}(query I_t, key/value H), two passes.
/// Errors: fewer than 2 layers; no absolute position embeddings; N > max_position_embeddings;
/// embedding_size ≠ hidden_size.
EMDTrace enhanced_mask_decoder(const Model& model, const ForwardTrace& encoder);

/// Whether the model decodes with the EMD — the one place every CLI command and viewer panel asks.
/// As microsoft `MaskedLanguageModel` / `EnhancedMaskDecoder.emd_context_layer`: the EMD runs for a
/// microsoft-style LM head (`lm_predictions.lm_head.*`) on a model with an absolute position table
/// that is not added at the input (`position_biased_input` false), at least 2 layers and
/// embedding_size = hidden_size. A Hugging Face head (`cls.predictions.*`, DebertaForMaskedLM) never
/// runs it; a model without the position table was trained without it (the zoo's −EMD variant).
bool runs_emd(const Model& model);

/// Why `runs_emd` is false, in one sentence naming the deciding fact; empty when it is true.
std::string why_no_emd(const Model& model);

/// `ablation` with every switch that equals what the model does anyway reset to "as the model"
/// (e.g. −EMD on a model without the EMD, p2c index "code" on a model trained with it). An ablation
/// whose `normalized(...).is_default()` is true is the baseline: no label, no rerun.
Ablation normalized(const Model& model, Ablation ablation);

/// Runs the decoder stage on a finished encoder trace: the EMD when the model runs it
/// (`runs_emd`) and `trace->ablation.emd` (sets `trace->emd`); otherwise nothing, and the MLM
/// head reads the last layer's output.
void run_decoder(const Model& model, ForwardTrace* trace);

/// MLM head at the given positions: logits `[M, V]` = LN(act(x W_dᵀ + b_d)) Eᵀ + bias, x the
/// rows `positions` of `hidden [N, H]`, W_d `[E, H]`, E the tied word embeddings `[V, E]`
/// (microsoft `BertLMPredictionHead`).
/// Errors: model without an LM head; a position outside [0, N).
Matrix mlm_logits(const Model& model, const Matrix& hidden, const std::vector<int64_t>& positions);

/// The MLM head on several hidden states at the same positions, e.g. the EMD's output and the
/// last encoder layer's (the viewer's EMD on/off predictions): one logits matrix `[M, V]` per
/// state, bitwise equal to `mlm_logits(model, *hidden[g], positions)` each. With M ≤ 32 positions
/// the states' rows are decoded in one pass over E (the table is read once, not once per state).
/// Errors: as `mlm_logits`.
std::vector<Matrix> mlm_logits(const Model& model, const std::vector<const Matrix*>& hidden,
                               const std::vector<int64_t>& positions);

/// The MLM head's tied decoder: logits = h Eᵀ + bias `[M, V]` for h `[M, E]`, the word
/// embeddings E `[V, E]` in their stored precision (weights.h `StoredMatrix`; the engine widens the
/// rows it reads, exactly) and bias `[V]`. An optimisation of exactly that expression (tested
/// against it at 1e-12 in tests/test_threads.cpp): E is the forward pass's largest operand
/// (xsmall: 128,100 × 384 values, 394 MB as float64, 197 MB as fp32), so with M ≤ 32 it is read once, in place, against
/// every h_m (the dot-product kernel of core/src/gemm_nt.h: each logit's arithmetic does not
/// depend on M), and with M > 32 it is multiplied in slices of 4,096 rows (the packed copy stays
/// small). Slices of the vocabulary are tasks (threading.h): bitwise the same for any thread
/// count. Errors: shapes that do not fit.
Matrix tied_decoder_logits(const Matrix& h, const StoredMatrix& E, const Vector& bias);

}  // namespace deberta
