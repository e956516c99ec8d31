// threading.cpp — see threading.h. The only file of the core that speaks OpenMP directly besides
// the loops it replaced; every parallel region here runs its bodies through ParallelErrors.
#include "deberta/threading.h"

#include "deberta/equations.h"
#include "deberta/model.h"
#include "deberta/parallel.h"
#include "gemm_nt.h"

#include <algorithm>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace deberta {

namespace {

// Eigen's parallel GEMM would block the k dimension by the thread count (threading.h): off for
// the whole process, before any product runs, and again by every `set_num_threads`.
const bool eigen_single_threaded = (Eigen::setNbThreads(1), true);

constexpr int64_t kPanel = 24;      // column grid of the blocks (threading.h)
constexpr int64_t kMaxBlocks = 4;   // blocks per product: enough for 4 threads

}  // namespace

void set_num_threads(int threads) {
  if (threads < 1) threads = 1;
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  Eigen::setNbThreads(1);
  (void)eigen_single_threaded;
}

int num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void run_tasks(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
  for (int64_t i = 0; i < count; ++i) errors.run([&] { task(i); });
  errors.rethrow();
}

void for_row_ranges(int64_t rows, const std::function<void(int64_t, int64_t)>& body, int64_t min_rows) {
  if (rows <= 0) return;
  const int64_t threads = num_threads();
  min_rows = std::max<int64_t>(1, min_rows);
  const int64_t ranges = std::clamp<int64_t>(rows / min_rows, 1, threads);
  if (ranges == 1) return body(0, rows);
  ParallelErrors errors;
#pragma omp parallel for schedule(static, 1)
  for (int64_t r = 0; r < ranges; ++r) errors.run([&] { body(rows * r / ranges, rows * (r + 1) / ranges); });
  errors.rethrow();
}

int64_t rows_per_range(int64_t cols) {
  constexpr int64_t kMinEntries = int64_t{1} << 16;
  return std::max<int64_t>(1, kMinEntries / std::max<int64_t>(1, cols));
}

ColumnBlocks column_blocks(int64_t cols) {
  if (cols <= 0) return {0, 0};
  const int64_t quarter = (cols + kMaxBlocks - 1) / kMaxBlocks;
  const int64_t width = std::min(cols, (quarter + kPanel - 1) / kPanel * kPanel);
  return {width, (cols + width - 1) / width};
}

void parallel_linears(const std::vector<LinearJob>& jobs) {
  struct Task {
    const LinearJob* job;
    int64_t first, width;
    double cost;
  };
  std::vector<Task> tasks;
  for (const LinearJob& j : jobs) {
    const Matrix& W = j.layer->weight;
    detail::check_linear_input(W, *j.x);
    if (j.residual && (j.residual->rows() != j.x->rows() || j.residual->cols() != W.rows()))
      throw Error("residual of shape [" + std::to_string(j.residual->rows()) + ", " + std::to_string(j.residual->cols()) +
                  "] does not fit a product of shape [" + std::to_string(j.x->rows()) + ", " + std::to_string(W.rows()) + "]");
    j.y->resize(j.x->rows(), W.rows());
    const ColumnBlocks b = column_blocks(W.rows());
    for (int64_t c = 0; c < b.count; ++c) {
      const int64_t first = c * b.width, width = std::min(b.width, W.rows() - first);
      tasks.push_back({&j, first, width, static_cast<double>(j.x->rows()) * W.cols() * width});
    }
  }
  // Largest first, so the dynamic schedule ends with small tasks (results do not depend on order).
  std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.cost > b.cost; });
  run_tasks(static_cast<int64_t>(tasks.size()), [&](int64_t i) {
    const Task& t = tasks[i];
    const Linear& l = *t.job->layer;
    const LinearJob& j = *t.job;
    detail::linear_columns(*j.x, l.weight, l.bias, t.first, t.width, j.y, j.rows_independent);
    auto columns = j.y->middleCols(t.first, t.width);
    if (j.activation) activation_in_place(columns, *j.activation);
    if (j.residual) columns += j.residual->middleCols(t.first, t.width);
  });
}

Matrix parallel_linear(const Linear& layer, const Matrix& x) {
  Matrix y;
  parallel_linears({{&layer, &x, &y}});
  return y;
}

}  // namespace deberta
