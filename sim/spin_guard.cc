#include "sim/spin_guard.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <systemc>

#include "sim/run_control.h"

namespace rnic {

SpinGuard::SpinGuard(double limit_s) : limit_s_(limit_s) {
  if (limit_s_ > 0) thread_ = std::thread([this] { watch(); });
}

SpinGuard::~SpinGuard() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

// Reads the simulation's time and current process from a second thread. The simulation thread
// writes them as it runs; when the guard fires it has not moved them for limit_s seconds (it is
// inside a host program's loop), so what is read is what it holds.
void SpinGuard::watch() {
  using clock = std::chrono::steady_clock;
  const auto period = std::chrono::milliseconds(100);
  uint64_t last = sc_core::sc_time_stamp().value();
  auto since = clock::now();
  std::unique_lock<std::mutex> l(m_);
  while (!cv_.wait_for(l, period, [this] { return stop_; })) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (now != last) {
      last = now;
      since = clock::now();
      continue;
    }
    const double stuck = std::chrono::duration<double>(clock::now() - since).count();
    if (run_control::interrupted() && stuck >= 1.0) {
      // Ctrl-C while a program spins: the run cannot reach its next slice to stop there.
      std::fputs("rnicsim: interrupted while a host program spins (no outputs written)\n", stderr);
      std::fflush(stderr);
      _exit(130);
    }
    if (stuck < limit_s_) continue;
    sc_core::sc_process_b* p = sc_core::sc_get_current_process_b();
    const std::string who =
        p ? fmt::format("host thread '{}'", p->basename()) : std::string("the simulation kernel");
    const std::string msg = fmt::format(
        "rnicsim: {} ran {:.0f} s of wall time at {:.3f} us of simulated time without spending "
        "any (sim.spin_guard_s): a loop that polls memory or a register spins, as simulated time "
        "only moves when a program waits. Wait with ibv_poll_cq and rnic_wait_cq, a completion "
        "channel (ibv_get_cq_event), or rnic_wait_mem for a byte of memory; charge CPU work with "
        "rnic_spend_ns (docs/verbs.md)\n",
        who, stuck, double(now) / 1e6);
    std::fputs(msg.c_str(), stderr);
    std::fflush(stderr);
    _exit(3);
  }
}

}  // namespace rnic
