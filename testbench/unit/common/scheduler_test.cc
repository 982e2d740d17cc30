// The scheduler (models/common/scheduler.h): clients of one time run in rounds that stand for
// delta cycles, in the order their wakes were made; wake() keeps an earlier wake and set()
// replaces it; running ahead of the kernel gives the same times and rounds as a kernel time step
// per time, stops at an event notified for a thread (which then sees the state of its own time,
// not a later one), and leaves the kernel's clock at the last time run.
#include "models/common/scheduler.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace rnic {
namespace {

using Seen = std::vector<std::tuple<std::string, uint64_t, uint64_t>>;  // who, time, round

// Three clients: a wakes b for its own time (the next round) and c for later; b wakes c for
// its time; c moves a's next wake later with set() and tries an earlier-than-due wake on b
// that wake() must keep.
Seen rounds(bool ahead) {
  Scheduler& s = Scheduler::get();
  Seen seen;
  size_t a = 0, b = 0, c = 0;
  int runs = 0;
  a = s.add("a", [&] {
    seen.emplace_back("a", now_ps(), delta_now());
    if (++runs > 1) return;
    s.wake(b, now_ps());
    s.wake(c, now_ps() + 5000);
    s.set(a, now_ps() + 2000);
  });
  b = s.add("b", [&] {
    seen.emplace_back("b", now_ps(), delta_now());
    s.wake(c, now_ps());
  });
  c = s.add("c", [&] {
    seen.emplace_back("c", now_ps(), delta_now());
    if (now_ps() == 1000) {
      s.set(a, 4000);   // replaces a's 3000
      s.wake(b, 9000);  // b is due at nothing: it takes 9000
      s.wake(b, 8000);  // earlier: kept instead
      s.wake(b, 8500);  // later than the pending one: ignored
    }
  });
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  s.set(a, 1000);
  if (ahead) s.set_horizon(100000);
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_NS), sc_core::SC_EXIT_ON_STARVATION);
  s.set_horizon(0);
  return seen;
}

// c's wake at 6000 was moved to 1000 by b (an earlier wake), so c runs at 1000 and not at 6000.
const Seen kRounds{{"a", 1000, 0}, {"b", 1000, 1}, {"c", 1000, 2},
                   {"a", 4000, 0}, {"b", 8000, 0}, {"c", 8000, 1}};

TEST(Scheduler, RoundsAndWakesStepByStep) { EXPECT_EQ(rounds(false), kRounds); }

TEST(Scheduler, RoundsAndWakesRunAhead) {
  EXPECT_EQ(rounds(true), kRounds);
  EXPECT_EQ(Scheduler::get().times_ahead(), 2u) << "4000 and 8000 run ahead of the kernel";
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 8000u) << "the kernel's clock at the last time";
}

// A client counts every 100 ns; at 550 ns it notifies a waiting thread. The thread must wake at
// 550 ns and see the count of that time, whatever the scheduler ran ahead.
TEST(Scheduler, RunAheadStopsAtAThreadsEvent) {
  Scheduler& s = Scheduler::get();
  sc_core::sc_event ev;
  int count = 0;
  size_t tick = 0, poke = 0;
  tick = s.add("tick", [&] {
    ++count;
    if (count < 20) s.set(tick, now_ps() + 100000);
  });
  poke = s.add("poke", [&] { notify_now(ev); });
  uint64_t woke = 0;
  int seen = -1;
  sc_core::sc_spawn_options o;
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(ev);
        woke = now_ps();
        seen = count;
      },
      "waiter", &o);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  s.set(tick, 100000);
  s.set(poke, 550000);
  s.set_horizon(10000000);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US), sc_core::SC_EXIT_ON_STARVATION);
  s.set_horizon(0);
  EXPECT_EQ(woke, 550000u);
  EXPECT_EQ(seen, 5) << "the thread saw the count of a later time";
  EXPECT_EQ(count, 20);
  EXPECT_GT(s.times_ahead(), 10u) << "nothing ran ahead: the test shows nothing";
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 2000000u);
}

// A block that goes takes its pending wake with it; the next block takes its place.
TEST(Scheduler, ADroppedClientNeverRunsAndItsPlaceIsReused) {
  Scheduler& s = Scheduler::get();
  std::vector<std::string> ran;
  const size_t a = s.add("a", [&] { ran.push_back("a"); });
  s.set(a, 1000);
  s.drop(a);
  const size_t b = s.add("b", [&] { ran.push_back("b"); });
  EXPECT_EQ(b, a);
  s.set(b, 2000);
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_NS));
  EXPECT_EQ(ran, std::vector<std::string>{"b"});
  EXPECT_EQ(sc_core::sc_time_stamp().value(), 10000u);
}

// Without a horizon (a bare sc_start) every time is a kernel time step.
TEST(Scheduler, NoHorizonNoRunAhead) {
  Scheduler& s = Scheduler::get();
  size_t t = 0;
  int n = 0;
  t = s.add("t", [&] {
    if (++n < 5) s.set(t, now_ps() + 1000);
    EXPECT_EQ(now_ps(), sc_core::sc_time_stamp().value());
  });
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  s.set(t, 1000);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(n, 5);
  EXPECT_EQ(s.times_ahead(), 0u);
}

}  // namespace
}  // namespace rnic
