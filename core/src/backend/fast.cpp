// fast.cpp — the fast backend (ops.h, threading.h). The only file of the core that speaks OpenMP;
// every parallel region here runs its bodies through ParallelErrors. Without OpenMP, the web
// edition's pthreads build (emscripten) runs the same regions on thread_team.h's threads.
#include "backend/gemm_nt.h"
#include "backend/panel_gemm.h"
#include "backend/parallel.h"
#include "backend/threading.h"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#ifdef _OPENMP
#include <omp.h>
#endif

#if !defined(_OPENMP) && defined(__EMSCRIPTEN_PTHREADS__)
#define DEBERTA_THREAD_TEAM 1
#include "backend/thread_team.h"
#endif

namespace deberta {

namespace {

// Eigen's parallel GEMM would block the k dimension by the thread count (threading.h): off for
// the whole process, before any product runs, and again by every `set_num_threads`.
const bool eigen_single_threaded = (Eigen::setNbThreads(1), true);

constexpr int64_t kMaxBlocks = 4;   // blocks per product: enough for 4 threads

}  // namespace

namespace {
// The thread count set by `set_num_threads` (0: none set). Process-wide on purpose: OpenMP's
// omp_set_num_threads sets only the calling thread's count, and the viewer computes on a worker.
std::atomic<int> g_num_threads{0};
}  // namespace

void set_num_threads(int threads) {
  if (threads < 1 || threads > kMaxThreads)
    throw Error("threads must be in [1, " + std::to_string(kMaxThreads) + "], found " + std::to_string(threads));
  g_num_threads.store(threads);
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  Eigen::setNbThreads(1);
  (void)eigen_single_threaded;
}

int num_threads() {
  const int set = g_num_threads.load();
  if (set > 0) return set;
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
  if (threads > kMaxThreads)
    throw Error("OMP_NUM_THREADS (or an earlier omp_set_num_threads) asks for " + std::to_string(threads) +
                " threads; at most " + std::to_string(kMaxThreads) + " are supported");
  return threads;
#else
  return 1;
#endif
}

void run_tasks(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  const int team = num_threads();  // refuses an environment asking for more than kMaxThreads
  const Backend engine = backend();  // the caller's (a BackendScope holds for its tasks too)
  ParallelErrors errors;
#ifdef DEBERTA_THREAD_TEAM
  std::atomic<int64_t> next{0};
  detail::run_team(count > 1 ? static_cast<int>(std::min<int64_t>(team, count)) : 1, [&](int) {
    const BackendScope same(engine);
    for (int64_t i; (i = next.fetch_add(1)) < count;) errors.run([&] { task(i); });
  });
#else
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) if (count > 1 && team > 1)
  for (int64_t i = 0; i < count; ++i) errors.run([&] {
    const BackendScope same(engine);
    task(i);
  });
#endif
  errors.rethrow();
  (void)team;
}

void for_row_ranges(int64_t rows, const std::function<void(int64_t, int64_t)>& body, int64_t min_rows) {
  if (rows <= 0) return;
  const int64_t threads = num_threads();
  min_rows = std::max<int64_t>(1, min_rows);
  const int64_t ranges = std::clamp<int64_t>(rows / min_rows, 1, threads);
  if (ranges == 1) return body(0, rows);
  const Backend engine = backend();
  ParallelErrors errors;
#ifdef DEBERTA_THREAD_TEAM
  detail::run_team(static_cast<int>(ranges), [&](int r) {
    errors.run([&] {
      const BackendScope same(engine);
      body(rows * r / ranges, rows * (r + 1) / ranges);
    });
  });
#else
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(ranges))
  for (int64_t r = 0; r < ranges; ++r) errors.run([&] {
    const BackendScope same(engine);
    body(rows * r / ranges, rows * (r + 1) / ranges);
  });
#endif
  errors.rethrow();
}

int64_t rows_per_range(int64_t cols) {
  constexpr int64_t kMinEntries = int64_t{1} << 16;
  return std::max<int64_t>(1, kMinEntries / std::max<int64_t>(1, cols));
}

ColumnBlocks column_blocks(int64_t cols) {
  if (cols <= 0) return {0, 0};
  const int64_t quarter = (cols + kMaxBlocks - 1) / kMaxBlocks;
  const int64_t width = std::min(cols, (quarter + detail::kColumnGrid - 1) / detail::kColumnGrid * detail::kColumnGrid);
  return {width, (cols + width - 1) / width};
}

namespace {

// Rows of y one tile covers (a multiple of detail::kPanelRows): small enough that the thread
// that finishes its own blocks first can take over the rest of a slower thread's block, large
// enough that a tile costs far more than claiming it.
constexpr int64_t kTileRows = 32;
static_assert(kTileRows % detail::kPanelRows == 0, "a tile must start on the packed input's row grid");

// The column blocks of a packed product: 4 W panels (2 where k > 1024: 96 and 48 columns with
// AVX-512), so that a block is a few MFLOP per 32 rows. Finer blocks cost no extra packing (x is
// packed once for all of them, W once per model or once per block).
ColumnBlocks packed_blocks(int64_t cols, int64_t depth) {
  const int64_t width = std::min(cols, (depth > 1024 ? 2 : 4) * detail::kPanelCols);
  return {width, (cols + width - 1) / width};
}

// Whether a job runs on packed operands (more rows than the dot-product kernel takes, and rows
// free to depend on each other's presence) or as direct column blocks: few rows on the panel
// kernel with W read in place (`linear_rows_in_place`: the same bits as the packed path), or the
// dot-product kernel for `rows_independent` products (`linear_columns`).
bool packed(const ops::Product& j) {
  return !j.rows_independent && j.x->rows() > detail::kInPlaceMaxRows && j.layer->weight.cols() > 0;
}
bool rows_in_place(const ops::Product& j) {
  return !j.rows_independent && !packed(j) && j.x->rows() > 0 && j.layer->weight.cols() > 0;
}

// The operand a set of products makes from x, made by `make` for the first product that reads x
// and shared by the others (Q_c, K_c and V_c read one x): `of[i]` is the x of `made[i]`.
template <typename Operand, typename Make>
Operand* operand_of(const Matrix* x, std::vector<const Matrix*>& of, std::vector<std::unique_ptr<Operand>>& made,
                    Make make) {
  const auto i = static_cast<size_t>(std::find(of.begin(), of.end(), x) - of.begin());
  if (i == of.size()) made.push_back(make()), of.push_back(x);
  return made[i].get();
}

// The elementwise steps of a job on one block of its output (Product::elementwise, ::residual).
void finish_block(const ops::Product& j, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
  auto block = j.y->block(row0, col0, rows, cols);
  if (j.elementwise) j.elementwise(block);
  if (j.residual) block += j.residual->block(row0, col0, rows, cols);
}

// What the blocks of one product share: for a post-LN product (Product::rows_done), how many column
// blocks of each row tile are still to finish; the block that finishes a row tile last normalises
// its rows.
struct JobState {
  int64_t tile_rows = 0;                         // rows per counter (kTileRows, or all N when direct)
  std::unique_ptr<std::atomic<int64_t>[]> pending;  // per row tile: column blocks not yet finished

  // Called once a column block has finished rows [row0, row0 + rows) (one tile, or all rows).
  void finished(const ops::Product& j, int64_t row0, int64_t rows) {
    if (!j.rows_done) return;
    if (pending[row0 / tile_rows].fetch_sub(1, std::memory_order_acq_rel) == 1) j.rows_done(row0, row0 + rows);
  }
};

// One column block of a product of the set. Packed: its W panels come from the model's packed
// weights (`ops::PackedWeights`, ready at once) or are packed by the thread that takes the block;
// then any thread claims the block's row tiles one at a time (a thread with no block left claims
// the remaining tiles of the others' blocks). Direct: one `linear_rows_in_place` (or
// `linear_columns`) call by the thread that takes it. A block's own panels go into the buffer of
// its owner's previous block once every tile of that one is done: the buffer is still in the
// owner's cache.
struct Block {
  const ops::Product* job;
  JobState* shared;
  int64_t col0, cols;
  const detail::InputPanels* input = nullptr;     // x packed (null: direct)
  const detail::WeightPanels* x_rows = nullptr;   // direct, few rows: x as panels, W read in place
  const detail::WeightPanels* panels = nullptr;   // W's panels: the model's, or `own`
  int64_t panel0 = 0;                             // the block's first panel in `panels`
  std::unique_ptr<detail::WeightPanels> own;      // the block's rows of W, packed by its owner
  std::atomic<int64_t> next_row{0};               // first row of the next unclaimed tile
  std::atomic<int64_t> tiles_done{0};             // tiles computed (or failed), by any thread
  enum State { Waiting, Packing, Ready, Failed };
  std::atomic<int> state{Waiting};                // Ready: other threads may claim tiles

  int64_t rows() const { return job->x->rows(); }
  int64_t tiles() const { return (rows() + kTileRows - 1) / kTileRows; }
  // Whether no thread reads `own` any more (every tile claimed has been computed).
  bool done() const { return tiles_done.load(std::memory_order_acquire) == tiles(); }
  double cost() const { return static_cast<double>(rows()) * cols * job->x->cols(); }

  // Claims and computes tiles until none is left; each one's errors are caught by `errors`.
  void run_tiles(ParallelErrors& errors) {
    for (;;) {
      const int64_t row0 = next_row.fetch_add(kTileRows);
      if (row0 >= rows()) return;
      errors.run([&] {
        const ops::Product& j = *job;
        const int64_t tile_rows = std::min(kTileRows, rows() - row0);
        auto tile = j.y->block(row0, col0, tile_rows, cols);
        const bool bias = j.layer->bias.size() > 0;
        detail::multiply_panels(*panels, panel0, *input, row0, tile_rows, cols, tile.data(), j.y->cols(),
                                /*from_zero=*/!bias, bias ? j.layer->bias.data() + col0 : nullptr);
        finish_block(j, row0, tile_rows, col0, cols);
        shared->finished(j, row0, tile_rows);
      });
      tiles_done.fetch_add(1, std::memory_order_release);
    }
  }

  // The work of the thread that takes the block; `buffer`: memory for the packed W (may be null).
  void run_owned(ParallelErrors& errors, std::unique_ptr<detail::WeightPanels> buffer) {
    const ops::Product& j = *job;
    if (!input) {
      errors.run([&] {
        if (x_rows)
          detail::linear_rows_in_place(*x_rows, j.layer->weight, j.layer->bias, col0, cols, j.y);
        else
          detail::linear_columns(*j.x, j.layer->weight, j.layer->bias, col0, cols, j.y);
        finish_block(j, 0, rows(), col0, cols);
        shared->finished(j, 0, rows());
      });
      return;
    }
    if (state.load(std::memory_order_acquire) == Ready) return run_tiles(errors);  // the model's panels
    state.store(Packing, std::memory_order_relaxed);
    bool packed_ok = false;
    errors.run([&] {
      own = buffer ? std::move(buffer) : std::make_unique<detail::WeightPanels>();
      own->pack_stored(j.layer->weight, col0, cols);  // W widened here, panel by panel (issue 60)
      panels = own.get(), panel0 = 0;
      packed_ok = true;
    });
    // Failed: its tiles stay unclaimed, and the error is rethrown after the region.
    state.store(packed_ok ? Ready : Failed, std::memory_order_release);
    if (packed_ok) run_tiles(errors);
  }
};

}  // namespace

// --- weights packed once per model (ops.h) ------------------------------------------------------

namespace ops {

class PackedWeights {
 public:
  struct Entry {
    const unsigned char* data;  // the weight it was packed from, as it was then
    int64_t rows, cols;
    detail::WeightPanels panels;
  };
  std::unordered_map<const StoredMatrix*, Entry> entries;
  size_t bytes = 0;
};

bool packing_weights() {
  const char* env = std::getenv("DEBERTA_PACK_WEIGHTS");
  if (env && *env) return std::string(env) != "0";
  // Off: the float64 panels would be twice an fp32 checkpoint's bytes (ops.h; issue 60). The page's
  // memory is moreover the ceiling of the model size (docs/web.md).
  return false;
}

std::shared_ptr<const PackedWeights> pack_weights(const std::vector<const Linear*>& layers) {
  if (backend() != Backend::Fast || !packing_weights()) return nullptr;
  auto packed = std::make_shared<PackedWeights>();
  std::vector<PackedWeights::Entry*> todo;
  std::vector<const Linear*> from;
  for (const Linear* layer : layers) {
    if (!layer || layer->empty() || packed->entries.count(&layer->weight)) continue;
    PackedWeights::Entry& e = packed->entries[&layer->weight];
    e.data = layer->weight.data(), e.rows = layer->weight.rows(), e.cols = layer->weight.cols();
    todo.push_back(&e), from.push_back(layer);
  }
  run_tasks(static_cast<int64_t>(todo.size()), [&](int64_t i) { todo[i]->panels.pack_stored(from[i]->weight, 0, from[i]->weight.rows()); });
  for (const PackedWeights::Entry* e : todo) packed->bytes += e->panels.bytes();
  return packed;
}

size_t packed_bytes(const PackedWeights* packed) { return packed ? packed->bytes : 0; }

// W's panels in `packed`, or null (none there, or W replaced since it was packed).
const detail::WeightPanels* packed_panels(const PackedWeights* packed, const StoredMatrix& W) {
  if (!packed) return nullptr;
  const auto it = packed->entries.find(&W);
  if (it == packed->entries.end()) return nullptr;
  const PackedWeights::Entry& e = it->second;
  // A weight replaced since (another buffer or shape) is packed on the fly instead.
  if (e.data != W.data() || e.rows != W.rows() || e.cols != W.cols()) return nullptr;
  return &e.panels;
}

}  // namespace ops

void parallel_linears(const std::vector<ops::Product>& jobs, const ops::PackedWeights* model_weights) {
  for (const ops::Product& j : jobs) {
    ops::check_product(j);
    j.y->resize(j.x->rows(), j.layer->weight.rows());
  }

  // Each distinct x packed once, by row chunks shared between the threads (Q_c, K_c and V_c read
  // the same x); then the column blocks of every product.
  using detail::InputPanels;
  std::vector<std::unique_ptr<InputPanels>> inputs;
  std::vector<const Matrix*> input_of;  // inputs[i] packs *input_of[i]
  struct InputChunk {
    InputPanels* operand;
    const Matrix* x;
    int64_t first, count;
  };
  std::vector<InputChunk> input_chunks;
  std::vector<std::unique_ptr<Block>> blocks;
  std::vector<JobState> states(jobs.size());
  // Few rows: each distinct x as one panel operand (a few kB, packed here), W read in place.
  std::vector<std::unique_ptr<detail::WeightPanels>> x_rows;
  std::vector<const Matrix*> x_rows_of;
  for (size_t job = 0; job < jobs.size(); ++job) {
    const ops::Product& j = jobs[job];
    const detail::WeightPanels* few = nullptr;
    if (rows_in_place(j))
      few = operand_of(j.x, x_rows_of, x_rows, [&] {
        auto panels = std::make_unique<detail::WeightPanels>();
        panels->pack(*j.x, 0, j.x->rows());
        return panels;
      });
    const InputPanels* input = nullptr;
    if (packed(j))
      input = operand_of(j.x, input_of, inputs, [&] {
        auto panels = std::make_unique<InputPanels>(j.x->rows(), j.x->cols());
        for (int64_t r = 0; r < j.x->rows(); r += kTileRows)
          input_chunks.push_back({panels.get(), j.x, r, std::min(kTileRows, j.x->rows() - r)});
        return panels;
      });
    const int64_t out = j.layer->weight.rows();
    const ColumnBlocks b = input ? packed_blocks(out, j.x->cols()) : column_blocks(out);
    JobState& state = states[job];
    state.tile_rows = input ? kTileRows : std::max<int64_t>(1, j.x->rows());
    if (j.rows_done) {
      const int64_t tiles = (j.x->rows() + state.tile_rows - 1) / state.tile_rows;
      state.pending = std::make_unique<std::atomic<int64_t>[]>(static_cast<size_t>(std::max<int64_t>(1, tiles)));
      for (int64_t t = 0; t < tiles; ++t) state.pending[t].store(b.count, std::memory_order_relaxed);
    }
    const detail::WeightPanels* model_panels = input ? ops::packed_panels(model_weights, j.layer->weight) : nullptr;
    for (int64_t c = 0; c < b.count; ++c) {
      auto block = std::make_unique<Block>();
      block->job = &j;
      block->shared = &state;
      block->col0 = c * b.width;
      block->cols = std::min(b.width, out - block->col0);
      block->input = input;
      block->x_rows = few;
      if (model_panels) {  // packed once per model: no packing, any thread may claim its tiles now
        block->panels = model_panels;
        block->panel0 = block->col0 / detail::kPanelCols;
        block->state.store(Block::Ready, std::memory_order_relaxed);
      }
      blocks.push_back(std::move(block));
    }
  }
  // Largest first, so that the blocks taken last are small (results do not depend on order).
  std::stable_sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) { return a->cost() > b->cost(); });

  ParallelErrors errors;
  std::atomic<size_t> next_block{0};
  const int team = num_threads();  // refuses an environment asking for more than kMaxThreads
  const Backend engine = backend();  // the fused steps (an activation, a LayerNorm) dispatch ops too
  const int64_t chunks = static_cast<int64_t>(input_chunks.size());
  const auto pack_input = [&](int64_t i) {
    errors.run([&] { input_chunks[i].operand->pack(*input_chunks[i].x, input_chunks[i].first, input_chunks[i].count); });
  };
  // A thread's part once every x is packed: blocks to own, then tiles of the others' blocks.
  const auto take_blocks = [&] {
    Block* previous = nullptr;  // the last block this thread took (its packed W buffer to reuse)
    for (;;) {
      const size_t b = next_block.fetch_add(1);
      if (b < blocks.size()) {
        std::unique_ptr<detail::WeightPanels> buffer;
        if (previous && previous->own && previous->done()) buffer = std::move(previous->own);
        blocks[b]->run_owned(errors, std::move(buffer));
        previous = blocks[b].get();
        continue;
      }
      // No block left to take: help with the packed block that has the most rows left, once its
      // owner has packed its W (a few tens of microseconds: worth the wait at the end of a set).
      Block* most = nullptr;
      int64_t most_left = 0;
      bool packing = false;
      for (const auto& block : blocks) {
        if (!block->input) continue;
        const int state = block->state.load(std::memory_order_acquire);
        const int64_t left = block->rows() - block->next_row.load(std::memory_order_relaxed);
        if (left <= 0 || state == Block::Failed) continue;
        if (state != Block::Ready) {
          packing = true;
        } else if (left > most_left) {
          most = block.get(), most_left = left;
        }
      }
      if (!most && !packing) break;
      if (!most) {
        std::this_thread::yield();  // the owner may share this core (more threads than cores)
        continue;
      }
      most->run_tiles(errors);
    }
  };
  const bool parallel = (blocks.size() > 1 || input_chunks.size() > 1) && team > 1;
#ifdef DEBERTA_THREAD_TEAM
  std::atomic<int64_t> next_chunk{0}, chunks_packed{0};
  detail::run_team(parallel ? team : 1, [&](int) {
    const BackendScope same(engine);
    for (int64_t i; (i = next_chunk.fetch_add(1)) < chunks;) {
      pack_input(i);
      chunks_packed.fetch_add(1, std::memory_order_release);
    }
    // The barrier: every x is packed before any tile reads it (each chunk was claimed by a
    // running thread, so the wait ends).
    while (chunks_packed.load(std::memory_order_acquire) < chunks) std::this_thread::yield();
    take_blocks();
  });
#else
#pragma omp parallel num_threads(team) if (parallel)
  {
    const BackendScope same(engine);
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < chunks; ++i) pack_input(i);
    // (the loop's barrier: every x is packed before any tile reads it)
    take_blocks();
  }
#endif
  errors.rethrow();
}

Matrix parallel_linear(const Linear& layer, const Matrix& x) {
  Matrix y;
  parallel_linears({{&layer, &x, &y}});
  return y;
}

// --- the fast backend's ops (ops.h) ---------------------------------------------------------

namespace ops::fast {

void products(const std::vector<Product>& set, const PackedWeights* packed) { parallel_linears(set, packed); }

Matrix linear(const Linear& layer, const Matrix& x) {
  Matrix y;
  products({{&layer, &x, &y}}, nullptr);  // the threaded product, for many rows or few
  return y;
}

bool few_rows(int64_t rows) { return rows <= detail::kInPlaceMaxRows; }

// logits = h Eᵀ + bias on the panel kernel, E read in place (kPanelRows rows widened at a time when
// it is not stored as F64): the masked rows' h are one panel
// operand (packed once); the vocabulary goes in fixed slices of 256 rows, one task each, and inside
// a slice kPanelRows rows of E at a time are multiplied against every row of h
// (`multiply_rows_transposed`) while the next rows are fetched — one pass over the 0.4 GB table, no
// copy of it. Each logit is bias + its dot product in the order of k (panel_gemm.h), so its bits
// never depend on M or on the slice: `rows_independent` holds on this one path for every M.
Matrix tied_decoder(const Matrix& h, const StoredMatrix& E, const Vector& bias, bool /*rows_independent*/) {
  const int64_t V = E.rows(), M = h.rows(), H = E.cols();
  Matrix logits(M, V);
  if (M == 0 || V == 0) return logits;
  detail::WeightPanels rows_of_h;  // the masked rows' h, the kernel's panel operand
  rows_of_h.pack(h, 0, M);
  constexpr int64_t slice = 256;
  run_tasks((V + slice - 1) / slice, [&](int64_t s) {
    // The slice's logits go to a block of their own, [M, slice], then to their columns of `logits`
    // (whose rows are a megabyte apart: the kernel's stores there would cost a page walk each).
    thread_local Matrix block;
    thread_local std::vector<double> widened;  // kPanelRows rows of E in float64 (E not stored as F64)
    const int64_t first = s * slice, width = std::min(slice, V - first);
    const int64_t element = dtype_size(E.dtype());
    const auto* stored = reinterpret_cast<const char*>(E.data());
    block.resize(M, width);
    for (int64_t v0 = first; v0 < first + width; v0 += detail::kPanelRows) {
      const int64_t rows = std::min(detail::kPanelRows, first + width - v0);
      // While these rows of E are multiplied (widened first, in its stored precision), the next
      // ones are fetched.
      const int64_t next = std::min(detail::kPanelRows, V - v0 - rows);
      detail::multiply_rows_transposed(detail::widened_rows(E, v0, rows, &widened), H, rows, rows_of_h, bias.data() + v0,
                                       block.data() + (v0 - first), width, stored + (v0 + rows) * H * element,
                                       next > 0 ? next * H * element : 0);
    }
    logits.middleCols(first, width) = block;
  });
  return logits;
}

void for_rows(int64_t rows, int64_t cols, const RowsFn& body) { for_row_ranges(rows, body, rows_per_range(cols)); }

void tasks(int64_t count, const std::function<void(int64_t)>& task) { run_tasks(count, task); }

}  // namespace ops::fast

}  // namespace deberta
