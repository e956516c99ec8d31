// web_threads.cpp — the page's thread count (issue 41, item 7; docs/web.md "Speed").
//
// The threaded build (deberta-explorer-mt, emscripten pthreads, loaded by index.html only where
// the page is cross-origin isolated) gives the core's forward min(4, navigator.hardwareConcurrency)
// threads before main runs; its pool of Workers is started with the same count
// (-sPTHREAD_POOL_SIZE in viewer/web/CMakeLists.txt). The one-thread build keeps 1.
#include "deberta/backend.h"

#include <emscripten/emscripten.h>

#include <algorithm>

#ifdef __EMSCRIPTEN_PTHREADS__
#include <emscripten/threading.h>

namespace {
const int kThreads = [] {
  const int threads = std::clamp(emscripten_num_logical_cores(), 1, 4);
  deberta::set_num_threads(threads);
  return threads;
}();
}  // namespace
#endif

/// The forward's thread count (deberta::num_threads): > 1 only in the threaded build on a machine
/// with several cores. Read by index.html and the browser checks (t, u). No errors.
extern "C" EMSCRIPTEN_KEEPALIVE int web_threads() { return deberta::num_threads(); }
