// threading.h — the fast backend (ops.h): how it shares the forward pass between threads (issue 17).
//
// One rule makes the numbers independent of the thread count: the work is cut into tasks by the
// shapes alone (tiles and column blocks of a product, attention heads, rows), never by the number
// of threads; each output element is computed by exactly one task, with the same arithmetic
// whichever thread runs it; and no dot product's k dimension is ever split between tasks. Which
// thread takes which task is decided at run time (the faster thread takes more). So
// `deberta::forward` gives bitwise the same trace at 1, 2 or 3 threads (tests/test_threads.cpp).
//
// Eigen's own parallel GEMM is switched off (fast.cpp, `Eigen::setNbThreads(1)`): it chooses its
// k blocking from the thread count (Eigen 3.4 `evaluateProductBlockingSizesHeuristic`: kc ≤ 320
// with several threads, up to the L1 bound alone), so its sums round differently at 1 and 2
// threads. Every product of the forward pass runs single-threaded inside one task.
//
// The ops of ops.h call `parallel_linears`, `for_row_ranges` and `run_tasks` (fast.cpp). OpenMP is
// an implementation detail of fast.cpp (the web edition's threaded build, which has none, runs the
// same tasks on thread_team.h's threads): no header includes <omp.h>.
#pragma once

#include "backend/ops.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace deberta {

/// Runs task(0) … task(count − 1) on the forward pass's threads (`set_num_threads`), dynamically
/// scheduled, in index order of start. A task must write only its own outputs. When a task throws,
/// the remaining ones are skipped and the first exception is rethrown here after all threads have
/// finished (an exception never leaves the OpenMP region: `ParallelErrors`).
void run_tasks(int64_t count, const std::function<void(int64_t)>& task);

/// Runs body(first, last) over consecutive row ranges covering [0, rows), for work where every
/// row is independent of the others (LayerNorm, elementwise activations): any split gives the
/// same numbers. Ranges hold at least `min_rows` rows; small inputs run on the calling thread.
/// Errors: the first exception a range throws, rethrown after the region.
void for_row_ranges(int64_t rows, const std::function<void(int64_t first, int64_t last)>& body,
                    int64_t min_rows = 8);

/// `min_rows` for `for_row_ranges` over rows of `cols` entries of light elementwise work (LayerNorm,
/// a residual add, an activation): at least 2^16 entries per range, so that a range outweighs
/// waking a second thread (below that, e.g. LayerNorm of 128 × 384, the call runs serially).
int64_t rows_per_range(int64_t cols);

/// The fixed column partition of a product with `cols` output columns: `count` blocks of `width`
/// columns (the last may be narrower), for the products of few rows. At most 4 blocks; width a
/// multiple of 24 (`detail::kColumnGrid`: whole row groups of the panel kernel). Both kernels of
/// few rows give each entry arithmetic of its own, so each block gives bitwise the columns the
/// unsplit product gives (checked in tests/test_threads.cpp for the presets' shapes). Depends on
/// `cols` only, never on the thread count.
struct ColumnBlocks {
  int64_t width = 0;
  int64_t count = 0;
};
ColumnBlocks column_blocks(int64_t cols);

/// Runs several products as one set of tasks, e.g. the five projections of an attention
/// sub-layer (Q_c, K_c, V_c, K_r, Q_r). Above 32 rows (and not `rows_independent`): each distinct
/// x is packed once into panels (core/src/backend/panel_gemm.h; shared by Q_c, K_c and V_c), each
/// product is cut into column blocks of 4 W panels (2 where in > 1024: 96 and 48 columns with
/// AVX-512) and each block into tiles of 32 rows. A block's W panels are the model's, packed once
/// (`model_weights`, from `ops::pack_weights`), or packed by the thread that takes the block; any thread claims its tiles
/// one by one, and a thread with no block left takes the remaining tiles of the others. So two
/// cores of unequal speed share a product by how fast each is. Every entry is bias + its dot
/// product in the order of k, whichever tile and thread computes it. N ≤ 32 rows: one task per
/// `column_blocks` block, x as one panel operand and W read in place (`linear_rows_in_place`: no
/// packing, the same bits as the packed path, so a row's bits never depend on N). The position
/// projections (`rows_independent`): the same blocks on the dot-product kernel of
/// core/src/backend/gemm_nt.h. Each entry's bits never depend on the thread count.
/// Errors: x's width ≠ the layer's `in`; a residual that is not `[N, out]` (`ops::check_product`);
/// the first exception of a job's steps.
void parallel_linears(const std::vector<ops::Product>& jobs, const ops::PackedWeights* model_weights = nullptr);

/// One product x Wᵀ + b `[N, out]` split as `parallel_linears` splits it. Bitwise equal to
/// `ops::linear(layer, x)` for the shapes tested. Errors: x's width ≠ the layer's `in`.
Matrix parallel_linear(const Linear& layer, const Matrix& x);

}  // namespace deberta
