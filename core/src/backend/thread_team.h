// thread_team.h — the fast backend's threads where there is no OpenMP: the web edition's
// pthreads build (emscripten has no OpenMP runtime; docs/web.md "Speed").
//
// fast.cpp shares the forward between threads with OpenMP on the desktop. Built with emscripten's
// pthreads (`__EMSCRIPTEN_PTHREADS__`) and no OpenMP, it runs the same regions on this team
// instead: the same tasks, cut by the shapes alone and claimed dynamically, so the numbers are
// the same bits at any thread count, as with OpenMP (threading.h). The desktop never uses it.
#pragma once

#include <functional>

namespace deberta::detail {

/// Runs body(0) on the calling thread and body(1) … body(team − 1) on the team's other threads
/// (started on first use and kept, asleep between calls), and returns when every call has
/// returned: the fork and join of an OpenMP parallel region. A call made from inside a team's
/// body, or while another thread's region holds the team, runs every body(t) on the calling
/// thread, one after the other (OpenMP's nested regions are serial too), so a body must not wait
/// for another body of its region. The bodies must not throw (fast.cpp runs them through
/// ParallelErrors). team ≤ 1: body(0) only. Errors: none of its own (a thread that cannot be
/// started: std::system_error from std::thread, before any body runs).
void run_team(int team, const std::function<void(int)>& body);

}  // namespace deberta::detail
