#include "sim/spin_guard.h"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <systemc>

#include "sim/run_control.h"

namespace rnic {

SpinGuard::SpinGuard(double limit_s) : limit_s_(limit_s) {
  // The simulation thread's own user-mode CPU time, not wall time: a loaded machine does not
  // make it fire, nor does the kernel's time faulting in the simulator's memory (a 1 GiB buffer
  // filled in one instant spends seconds of that under memory pressure); a loop spins in user
  // mode.
  stat_path_ = fmt::format("/proc/self/task/{}/stat", long(syscall(SYS_gettid)));
  if (limit_s_ > 0) thread_ = std::thread([this] { watch(); });
}

double SpinGuard::sim_cpu_s() const {
  // Field 14 of the thread's stat (utime, in clock ticks), counted after the command's ')'.
  std::FILE* f = std::fopen(stat_path_.c_str(), "r");
  if (!f) return 0;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  unsigned long long utime = 0;
  if (!p || std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu", &utime) != 1)
    return 0;
  return double(utime) / double(sysconf(_SC_CLK_TCK));
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
  double cpu_since = sim_cpu_s();
  std::unique_lock<std::mutex> l(m_);
  while (!cv_.wait_for(l, period, [this] { return stop_; })) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (now != last) {
      last = now;
      since = clock::now();
      cpu_since = sim_cpu_s();
      continue;
    }
    const double stuck = std::chrono::duration<double>(clock::now() - since).count();
    if (run_control::interrupted() && stuck >= 1.0) {
      // Ctrl-C while a program spins: the run cannot reach its next slice to stop there.
      std::fputs("rnicsim: interrupted while a host program spins (no outputs written)\n", stderr);
      std::fflush(stderr);
      _exit(130);
    }
    const double cpu = sim_cpu_s() - cpu_since;
    if (cpu < limit_s_) continue;
    sc_core::sc_process_b* p = sc_core::sc_get_current_process_b();
    // A program of the user's is told how to wait; anything else spinning is rnicsim's own.
    const std::string msg =
        p && run_control::is_user_thread(p)
            ? fmt::format(
                  "rnicsim: host thread '{}' ran {:.0f} s of CPU time at {:.3f} us of simulated "
                  "time without spending any (sim.spin_guard_s): a loop that polls memory or a "
                  "register spins, as simulated time only moves when a program waits. Wait with "
                  "ibv_poll_cq and rnic_wait_cq, a completion channel (ibv_get_cq_event), or "
                  "rnic_wait_mem for a byte of memory; charge CPU work with rnic_spend_ns "
                  "(docs/verbs.md)\n",
                  p->basename(), cpu, double(now) / 1e6)
            : fmt::format(
                  "rnicsim: {} ran {:.0f} s of CPU time at {:.3f} us of simulated time without "
                  "moving it (sim.spin_guard_s): rnicsim's own code, not a program of yours, is "
                  "looping in one instant; please report it with the scenario and command\n",
                  p ? fmt::format("'{}'", p->name()) : std::string("the simulation kernel"), cpu,
                  double(now) / 1e6);
    std::fputs(msg.c_str(), stderr);
    std::fflush(stderr);
    _exit(3);
  }
}

}  // namespace rnic
