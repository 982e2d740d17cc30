#include "sim/run_control.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <mutex>
#include <set>
#include <systemc>

#include "models/common/scheduler.h"
#include "models/host/host_wait.h"
#include "sim/background.h"
#include "sim/output_errors.h"
#include "sim/ranks.h"
#include "sim/spin_guard.h"

namespace rnic::run_control {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
bool g_quiet = false;
uint64_t g_point = 0, g_points = 0;
double g_work = 0, g_work_total = 0;
bool g_line_shown = false;
const auto g_start = std::chrono::steady_clock::now();
auto g_last_print = g_start;

void on_sigint(int) { g_interrupted = 1; }

void progress() {
  if (g_quiet || !isatty(STDERR_FILENO)) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - g_last_print < std::chrono::milliseconds(500)) return;
  const double wall = std::chrono::duration<double>(now - g_start).count();
  if (wall < 2.0) return;  // a short run shows nothing
  g_last_print = now;
  const double sim_s = sc_core::sc_time_stamp().to_seconds();
  std::string point;
  if (g_work_total > 0 && g_work > 0) {
    // The rate so far, over the work left: it holds across a size sweep's points.
    const double f = std::min(1.0, g_work / g_work_total);
    point = fmt::format("  {:.0f}% of the work  ETA {:.0f} s", 100 * f, wall * (1 - f) / f);
  } else if (g_points) {
    const double f = double(g_point) / double(g_points);
    point = fmt::format("  point {}/{}", g_point, g_points);
    if (f > 0) point += fmt::format("  ETA {:.0f} s", wall * (1 - f) / f);
  }
  fmt::print(stderr, "\r  sim {:.3f} us  wall {:.1f} s  slowdown {:.0f}x{}   ", sim_s * 1e6, wall,
             sim_s > 0 ? wall / sim_s : 0.0, point);
  g_line_shown = true;
}

}  // namespace

bool interrupted() { return g_interrupted != 0; }

namespace {
std::mutex g_user_m;
std::set<const void*>& user_threads() {
  static std::set<const void*> s;
  return s;
}
}  // namespace
void set_user_thread(const void* process, bool user) {
  std::lock_guard<std::mutex> l(g_user_m);
  if (user)
    user_threads().insert(process);
  else
    user_threads().erase(process);
}
bool is_user_thread(const void* process) {
  std::lock_guard<std::mutex> l(g_user_m);
  return user_threads().count(process) != 0;
}

void install_sigint_handler() {
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);  // a batch system's stop: the same clean exit
}
void set_quiet(bool quiet) { g_quiet = quiet; }
void set_point(uint64_t done, uint64_t total) {
  g_point = done;
  g_points = total;
}
void set_work_total(double total) {
  g_work_total = total;
  g_work = 0;
}
void add_work(double done) { g_work += done; }
void clear_progress_line() {
  if (g_line_shown) fmt::print(stderr, "\r{:80}\r", "");
  g_line_shown = false;
}

namespace {
uint64_t g_lookahead_ps = UINT64_MAX;
std::function<SendBound()> g_send_bound;

// sc_start for `d` from now; the scheduler may run its clients ahead of the kernel up to the
// slice's end (models/common/scheduler.h), never past it.
void start_for(uint64_t d, sc_core::sc_starvation_policy p = sc_core::SC_RUN_TO_TIME) {
  Scheduler& s = Scheduler::get();
  s.set_horizon(add_sat(kernel_now_ps(), d));
  struct Off {
    Scheduler& s;
    ~Off() { s.set_horizon(0); }
  } off{s};
  sc_core::sc_start(sc_core::sc_time::from_value(d), p);
}

// start_for over a stretch in which a model's timer that does not keep the run going may come
// due (StatRegistry::idle_timer_moved stops it early: true).
bool run_stretch(const StatRegistry& stats, uint64_t d, sc_core::sc_starvation_policy p) {
  stats.set_idle_horizon(add_sat(kernel_now_ps(), d));
  struct Off {
    const StatRegistry& s;
    ~Off() { s.set_idle_horizon(UINT64_MAX); }
  } off{stats};
  start_for(d, p);
  return stats.idle_paused();
}

// With nothing left for the kernel to run, the actions models left to be worked out when next
// asked (StatRegistry::on_lazy) still take their time: the clock moves to the earliest (after
// the side tasks due before it) and the models work it out. False when none is left before
// `until`.
bool run_lazy(const StatRegistry& stats, uint64_t now, Background* background,
              uint64_t until = UINT64_MAX) {
  const uint64_t lazy = stats.next_lazy();
  if (lazy == UINT64_MAX || std::max(lazy, now) >= until) return false;
  const uint64_t to = std::max(lazy, now);
  if (background) {
    background->run_due(now);
    const uint64_t due = background->next_due();
    if (due != UINT64_MAX && due < to) {
      start_for(due - now);
      return true;
    }
  }
  if (to > now) start_for(to - now);
  stats.run_lazy();
  return true;
}

// The timers that do not keep the run going due at t (the earliest) go off, and the simulation
// runs through t: their actions there have run and set their next times. A side task due before
// t comes first (the clock moves to it; false: the caller asks again).
bool fire_idle(const StatRegistry& stats, uint64_t t, Background* background) {
  const uint64_t now = kernel_now_ps();
  if (background) {
    background->run_due(now);
    const uint64_t due = background->next_due();
    if (due < t) {
      start_for(due - now);
      return false;
    }
  }
  stats.fire_idle_timers(t);
  start_for(std::max(t, now) + 1 - now, sc_core::SC_EXIT_ON_STARVATION);
  return true;
}

// Conservative windows (simulate() over several ranks): the ranks deliver what crossed, agree on
// the earliest next event of any (E), and each runs its events before E + lookahead, which
// nothing from another rank can precede: what a rank sends at t arrives at t + lookahead or
// later. Ends when no rank has anything pending and every rank's workload is done; the clock
// then moves to the last event of any rank.
void simulate_windows(const SystemConfig& cfg, const StatRegistry& stats,
                      const std::function<bool()>& done, const std::function<std::string()>& dump,
                      Background* background) {
  const SpinGuard guard(cfg.sim.spin_guard_s);
  // An error on one rank stops every rank at the next agreement: the rank that had it throws
  // it, the others a RunFailed that names it.
  std::exception_ptr error;
  std::string why;
  auto attempt = [&](const std::function<void()>& f) {
    if (error) return;
    try {
      f();
    } catch (const std::exception& e) {
      error = std::current_exception();
      why = e.what();
    }
  };
  attempt([] { sc_core::sc_start(sc_core::SC_ZERO_TIME); });
  // What the windows cost: how many, and each rank's wall time in the agreement (waiting for
  // the slowest rank included), said by rank 0 when the run ends.
  uint64_t windows = 0;
  std::chrono::steady_clock::duration agreeing{};
  // The watchdog, as in one process: every eighth of sim.watchdog_us of the agreed time the ranks
  // sum their progress counters (StatRegistry::activity); no change for a whole period, with
  // the workload not done, stops every rank.
  const uint64_t watchdog_ps = uint64_t(cfg.sim.watchdog_us) * 1000000;
  const uint64_t look_ps = std::max<uint64_t>(1, watchdog_ps / 8);
  uint64_t activity = ranks::sum_all(stats.activity());
  uint64_t last_look_ps = sc_core::sc_time_stamp().value(), last_change_ps = last_look_ps;
  while (true) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    uint64_t next = UINT64_MAX, idle = UINT64_MAX;
    bool finished = false;
    attempt([&] {
      next = sc_core::sc_pending_activity() ? now + sc_core::sc_time_to_pending_activity().value()
                                            : std::max(now, stats.next_lazy());
      idle = stats.next_idle_timer();
      if (background) background->run_due(now);  // (the clock was moved to them: below)
      finished = done();
      if (g_interrupted) throw InterruptedError("interrupted");
      if (!output_errors::first().empty()) throw RunFailed(output_errors::first());
    });
    SendBound bound;
    if (g_send_bound) attempt([&] { bound = g_send_bound(); });
    // A rank that failed still takes part: that is how the others learn of it.
    const auto t0 = std::chrono::steady_clock::now();
    const ranks::Agreement a =
        ranks::settle(next, finished, bool(error), idle, bound.known_ps, bound.after_ps);
    agreeing += std::chrono::steady_clock::now() - t0;
    ++windows;
    if (!a.late.empty())  // (this rank runs nothing more; the next agreement stops every rank)
      attempt([&] { throw std::logic_error(a.late); });
    if (a.error) {
      const std::vector<std::string> whys = ranks::all_gather(error ? why : "");
      if (error) std::rethrow_exception(error);
      for (size_t r = 0; r < whys.size(); ++r)
        if (!whys[r].empty()) throw RunFailed(fmt::format("rank {} stopped: {}", r, whys[r]));
    }
    if (a.next_ps != UINT64_MAX && a.next_ps - last_look_ps >= look_ps) {  // (agreed: all look)
      last_look_ps = a.next_ps;
      const uint64_t now_activity = ranks::sum_all(stats.activity());
      if (now_activity != activity) {
        activity = now_activity;
        last_change_ps = a.next_ps;
      } else if (!a.all_done && a.next_ps - last_change_ps >= watchdog_ps) {
        throw HungError(fmt::format(
            "no progress for {} us of simulated time (sim.watchdog_us) at {:.3f} ns\n{}",
            cfg.sim.watchdog_us, double(a.next_ps) / 1000.0, dump()));
      }
    }
    // What the exchange delivered is this rank's too.
    if (sc_core::sc_pending_activity())
      next = std::min<uint64_t>(next, now + sc_core::sc_time_to_pending_activity().value());
    // A timer that does not keep the run going (StatRegistry::on_idle_timer) goes off, while
    // the workload is not done, when no other event of any rank comes before it; then the ranks
    // agree again.
    const uint64_t idle_ps = a.all_done ? UINT64_MAX : a.idle_ps;
    if (idle_ps != UINT64_MAX && (a.next_ps == UINT64_MAX || idle_ps <= a.next_ps)) {
      // (Nothing from another rank comes before a.next_ps + the lookahead.)
      bool fired = false;
      attempt([&] { fired = fire_idle(stats, a.idle_ps, background); });
      ranks::ran_until(fired ? a.idle_ps + 1 : kernel_now_ps());
      continue;
    }
    // Side tasks (a time series' samples) run at their times while any rank has an event at or
    // after them, before that time's events, as in one process: every rank's clock moves to
    // the next one due at or before the agreed next event (nothing of any rank's comes first).
    if (background && a.next_ps != UINT64_MAX && background->next_due() <= a.next_ps) {
      const uint64_t due = background->next_due();
      attempt([&] {
        if (due > kernel_now_ps()) start_for(due - kernel_now_ps());
        background->run_due(due);
      });
      ranks::ran_until(due);
      continue;
    }
    if (a.next_ps == UINT64_MAX) {
      // Each rank's clock stopped at its last event (its last window ended starved).
      const uint64_t end = ranks::max_all(now);
      if (end > now) start_for(end - now);
      const std::vector<std::string> waits =
          ranks::gather(fmt::format("{:.3f}", std::chrono::duration<double>(agreeing).count()));
      if (!waits.empty())
        fmt::print(stderr, "rnicsim: {} windows; seconds in the agreement per rank: {}\n", windows,
                   fmt::join(waits, " "));
      if (a.all_done) return;
      throw HungError(fmt::format(
          "the workload is still waiting at {:.3f} ns and nothing is left to happen\n{}",
          double(now) / 1000.0, dump()));
    }
    // Up to (not including) the window's end, and to the next side task of this rank's: the
    // lookahead past the earliest event, or what the senders to other ranks know, if later.
    uint64_t end = std::max(add_sat(a.next_ps, g_lookahead_ps),
                            std::min(a.send_known_ps, add_sat(a.next_ps, a.send_after_ps)));
    end = std::min(end, idle_ps);  // a window stops at such a timer
    if (background && background->next_due() != UINT64_MAX)
      end = std::min(end, std::max(background->next_due(), now + 1));
    // Nothing of this rank's before the window's end: nothing to run (its clock stays at its
    // last event).
    bool paused = false;
    if (next < end)
      attempt([&] {
        if (sc_core::sc_pending_activity())
          paused = run_stretch(stats, end - now, sc_core::SC_EXIT_ON_STARVATION);
        else  // what the models left to work out
          run_lazy(stats, now, nullptr, end);
      });
    ranks::ran_until(paused ? kernel_now_ps() : end);
    progress();
  }
}
}  // namespace

void set_lookahead(uint64_t ps) { g_lookahead_ps = ps; }
void set_send_bound(std::function<SendBound()> f) { g_send_bound = std::move(f); }

void simulate(const SystemConfig& cfg, const StatRegistry& stats, const std::function<bool()>& done,
              const std::function<std::string()>& dump, Background* background) {
  if (ranks::parallel()) return simulate_windows(cfg, stats, done, dump, background);
  const SpinGuard guard(cfg.sim.spin_guard_s);
  const uint64_t watchdog_ps = uint64_t(cfg.sim.watchdog_us) * 1000000;
  const uint64_t slice_ps = std::min<uint64_t>(100000000, std::max<uint64_t>(1, watchdog_ps / 4));
  // Run what is due now first (before the first sc_start nothing counts as pending yet).
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  // The watchdog sums every progress counter of every block (StatRegistry::activity: 10^5
  // groups in a run of 1,024 hosts), so it looks every eighth of its period, not every slice.
  const uint64_t look_ps = std::max<uint64_t>(1, watchdog_ps / 8);
  uint64_t last = stats.activity(), last_change_ps = sc_core::sc_time_stamp().value();
  uint64_t last_look_ps = last_change_ps;
  while (true) {
    // With nothing due inside the slice, the clock moves by the slice (run to its time: a
    // starving sc_start would return at once without moving it), so the watchdog looks.
    const sc_core::sc_time next = sc_core::sc_time_to_pending_activity();
    const uint64_t at = sc_core::sc_time_stamp().value();
    // Side tasks run at their own times: the clock is moved to one due before the next event
    // (nothing runs meanwhile) and the slice stops at one due later.
    uint64_t run_for = slice_ps;
    // Timers that do not keep the run going (StatRegistry::on_idle_timer) go off, while the
    // workload is not done, when nothing before them is left; the slice stops at the earliest.
    uint64_t idle = UINT64_MAX;
    if (sc_core::sc_pending_activity()) {
      idle = stats.next_idle_timer();
      if (idle != UINT64_MAX && done()) idle = UINT64_MAX;
    }
    if (background && sc_core::sc_pending_activity()) {
      background->run_due(at);
      const uint64_t due = background->next_due();
      // (Not past such a timer: fire_idle runs the side tasks due before it.)
      if (due != UINT64_MAX && due - at < next.value() && due < idle) {
        start_for(due - at);
        continue;
      }
      if (due != UINT64_MAX) run_for = std::min(run_for, due - at);
    }
    if (idle != UINT64_MAX) {
      if (idle <= at + next.value()) {
        fire_idle(stats, idle, background);
        continue;
      }
      run_for = std::min(run_for, idle - at);
    }
    run_stretch(stats, run_for,
                sc_core::sc_pending_activity() && next.value() >= run_for
                    ? sc_core::SC_RUN_TO_TIME
                    : sc_core::SC_EXIT_ON_STARVATION);
    if (g_interrupted) throw InterruptedError("interrupted");
    if (!output_errors::first().empty()) throw RunFailed(output_errors::first());
    progress();
    const uint64_t now = sc_core::sc_time_stamp().value();
    // Asked every slice: done() also reports a failure that paused the run (run_threads).
    const bool finished = done();
    if (!sc_core::sc_pending_activity()) {
      const uint64_t idle = stats.next_idle_timer(), lazy = stats.next_lazy();
      if (idle != UINT64_MAX && !finished && lazy != UINT64_MAX && idle <= lazy) {
        fire_idle(stats, idle, background);  // before what the models left to work out
        continue;
      }
      if (run_lazy(stats, now, background)) continue;
      if (finished) return;
      if (idle != UINT64_MAX) {
        // The workload waits and nothing else is left: the earliest of them goes off.
        fire_idle(stats, idle, background);
        continue;
      }
      throw HungError(fmt::format(
          "the workload is still waiting at {:.3f} ns and nothing is left to happen\n{}",
          double(now) / 1000.0, dump()));
    }
    if (now - last_look_ps < look_ps) continue;
    last_look_ps = now;
    const uint64_t a = stats.activity();
    if (a != last) {
      last = a;
      last_change_ps = now;
    } else if (!finished && now - last_change_ps >= watchdog_ps) {
      throw HungError(
          fmt::format("no progress for {} us of simulated time (sim.watchdog_us) at {:.3f} ns\n{}",
                      cfg.sim.watchdog_us, double(now) / 1000.0, dump()));
    }
  }
}

void run_threads(const SystemConfig& cfg, const StatRegistry& stats, Background& background,
                 const std::vector<std::pair<std::string, std::function<void()>>>& threads,
                 const std::function<std::string()>& dump) {
  host::blocked_calls().clear();  // a thread of an earlier run may have left its entry
  std::vector<bool> done(threads.size());
  std::vector<sc_core::sc_process_handle> handles;
  std::string failure;  // the first host program's exception: the run stops with it
  for (size_t i = 0; i < threads.size(); ++i) {
    sc_core::sc_spawn_options o;
    handles.push_back(sc_core::sc_spawn(
        [&done, &threads, &failure, i] {
          try {
            threads[i].second();
          } catch (const sc_core::sc_unwind_exception&) {
            throw;  // the kernel killing the thread
          } catch (const std::exception& e) {
            if (failure.empty()) failure = fmt::format("{}: {}", threads[i].first, e.what());
            sc_core::sc_pause();  // the run stops here, not at the end of the slice
          }
          done[i] = true;
        },
        threads[i].first.c_str(), &o));
  }
  try {
    simulate(
        cfg, stats,
        [&] {
          if (!failure.empty()) throw RunFailed(failure);
          return std::find(done.begin(), done.end(), false) == done.end();
        },
        [&] {
          std::string s;
          for (size_t i = 0; i < threads.size(); ++i)
            if (!done[i]) s += fmt::format("host thread '{}' not finished\n", threads[i].first);
          return s + dump();
        },
        &background);
  } catch (...) {
    // kill() is only legal while the simulation runs: a method kills them, their stacks unwind
    // now, while the caller's frame exists.
    for (size_t i = 0; i < handles.size(); ++i) {
      sc_core::sc_process_handle h = handles[i];
      if (done[i] || !h.valid() || h.terminated()) continue;
      sc_core::sc_spawn_options k;
      k.spawn_method();
      sc_core::sc_spawn([h]() mutable { h.kill(); },
                        sc_core::sc_gen_unique_name("kill_host_thread"), &k);
    }
    // After an error inside the simulation (an exception out of a host thread) the kernel
    // refuses to run again: the original error is the one to report.
    try {
      sc_core::sc_start(sc_core::SC_ZERO_TIME);
    } catch (...) {
    }
    throw;
  }
}

}  // namespace rnic::run_control
