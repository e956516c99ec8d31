// thread_team.cpp — see thread_team.h.
#include "backend/thread_team.h"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace deberta::detail {

namespace {

// The team: its threads wait on `wake` for a new region (a new `generation`), run their body if
// the region has a place for them, and the last one to finish wakes the caller through `done`.
struct Team {
  std::mutex region;  // held by the thread whose region runs on the team
  std::mutex m;       // guards the fields below
  std::condition_variable wake, done;
  int started = 0;    // threads started so far (they never end)
  const std::function<void(int)>* body = nullptr;
  int members = 0;    // the region's team size: thread i runs body(i + 1) when i + 1 < members
  int pending = 0;    // bodies of the region not yet returned on the team's threads
  uint64_t generation = 0;
};

// Never destroyed: its threads sleep on it until the process ends (a joinable std::thread
// destroyed at exit would call std::terminate).
Team& the_team() {
  static Team* team = new Team;
  return *team;
}

thread_local bool t_in_region = false;  // this thread is running a body of a region

void member(Team& t, int index) {
  t_in_region = true;
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(t.m);
  for (;;) {
    t.wake.wait(lock, [&] { return t.generation != seen; });
    seen = t.generation;
    if (index + 1 >= t.members) continue;  // a smaller region: not needed this time
    const std::function<void(int)>& body = *t.body;
    lock.unlock();
    body(index + 1);
    lock.lock();
    if (--t.pending == 0) t.done.notify_one();
  }
}

void run_serially(int team, const std::function<void(int)>& body) {
  for (int i = 0; i < team; ++i) body(i);
}

}  // namespace

void run_team(int team, const std::function<void(int)>& body) {
  if (team <= 1) return body(0);
  if (t_in_region) return run_serially(team, body);
  Team& t = the_team();
  std::unique_lock<std::mutex> region(t.region, std::try_to_lock);
  if (!region.owns_lock()) return run_serially(team, body);  // another thread's region holds the team
  while (t.started < team - 1) {
    std::thread(member, std::ref(t), t.started).detach();
    ++t.started;
  }
  {
    std::lock_guard<std::mutex> lock(t.m);
    t.body = &body;
    t.members = team;
    t.pending = team - 1;
    ++t.generation;
  }
  t.wake.notify_all();
  t_in_region = true;
  body(0);
  t_in_region = false;
  std::unique_lock<std::mutex> lock(t.m);
  t.done.wait(lock, [&] { return t.pending == 0; });
}

}  // namespace deberta::detail
