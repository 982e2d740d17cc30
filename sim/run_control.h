// Runs the simulation in slices of simulated time (at most 100 us, never past the last event)
// and between slices:
//   - Ctrl-C or SIGTERM: stops with InterruptedError (the runner still writes what was gathered;
//     exit 130);
//   - progress on a terminal after two seconds (simulated time, wall time, slowdown, the share of
//     the work done and an ETA, or a sweep point): never in CI;
//   - the watchdog: work outstanding and no statistic moving for sim.watchdog_us of simulated
//     time stops the run with HungError and a dump of every block's state (exit 3); it looks
//     every eighth of sim.watchdog_us (at a slice's end), so it fires between 1 and 1 1/8
//     periods and a slice after the last progress;
//   - an output that could not be written (a capture on a full device): stops with RunFailed
//     naming the file and the reason (exit 1);
// and, from a thread of its own, the spin guard (spin_guard.h): simulated time standing still
// for sim.spin_guard_s of wall time (a host program polling without waiting) ends the process
// with exit 3 and one line naming the host thread.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/common/stats.h"
#include "sim/config.h"

namespace rnic {

class Background;

// A run that cannot finish: work outstanding and nothing moving (exit code 3).
struct HungError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Ctrl-C or SIGTERM (exit code 130).
struct InterruptedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A host program failed with an exception (what ran out, or what went wrong) (exit code 1).
struct RunFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
  std::string detail;  // more than the one line (a watchdog's dump of every block), for stats.json
};

namespace run_control {

// The threads that run host programs (Cluster::run: verbs programs and workloads), for the
// spin guard's message (a spin elsewhere is rnicsim's own); safe from another OS thread.
void set_user_thread(const void* process, bool user);
bool is_user_thread(const void* process);

void install_sigint_handler();
// Whether Ctrl-C or SIGTERM has come (the spin guard honours it while a program spins).
bool interrupted();
void set_quiet(bool quiet);
// A sweep's position, shown with the progress line ("point 12/3240").
void set_point(uint64_t done, uint64_t total);
// The run's work in units of its own (perftest: messages weighted by their size): the progress
// line shows the share done and an ETA learned from the rate the work has gone at so far.
void set_work_total(double total);
void add_work(double done);
// Simulates until nothing is pending. done(): the workload has finished. dump(): every block's
// state for a watchdog report. Timers that do not keep a run going (StatRegistry::on_idle_timer)
// go off at their times while done() is false (with nothing else left, the earliest goes off
// rather than the run stopping as hung); once it is true none does, and the run ends at its
// last other event.
// background: its tasks run at their times between slices (background.h).
void simulate(const SystemConfig& cfg, const StatRegistry& stats, const std::function<bool()>& done,
              const std::function<std::string()>& dump, Background* background = nullptr);
void clear_progress_line();
// Over several processes (sim/ranks.h): how far a rank may run ahead of the others (the system's
// partition sets it); simulate() then advances in windows of at most this, the ranks exchanging
// what crosses between them at each window's end and agreeing on the next.
void set_lookahead(uint64_t ps);
// Where the blocks that send to other ranks know more: each window, this rank's bound on the
// earliest effect at another rank of anything it has not sent yet, as min(known_ps, E +
// after_ps) with E the earliest next event of any rank (sim/ranks.h, settle). A window then
// ends at the later of that and E + the lookahead.
struct SendBound {
  uint64_t known_ps = UINT64_MAX;
  uint64_t after_ps = 0;  // (by default nothing more than E)
};
void set_send_bound(std::function<SendBound()> f);

// Runs each (name, fn) as an SC_THREAD and simulates (simulate() above) until every fn has
// returned and the system is quiet; `background` is kicked first. The watchdog's report is
// "host thread 'NAME' not finished" per unfinished thread, then dump(). On an exception the
// threads still running are killed before it propagates (they refer to the caller's frame).
void run_threads(const SystemConfig& cfg, const StatRegistry& stats, Background& background,
                 const std::vector<std::pair<std::string, std::function<void()>>>& threads,
                 const std::function<std::string()>& dump);

}  // namespace run_control
}  // namespace rnic
