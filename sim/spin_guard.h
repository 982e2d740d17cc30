// The guard for a simulation that stops advancing (docs/verbs.md, "Time"): a host
// program that loops without spending simulated time (polling memory or a register) holds the
// simulator's only thread, so nothing else can run and simulated time stands still. While a
// SpinGuard lives, a thread of its own watches the simulated time; when it has not moved while
// the simulation's thread ran `limit_s` seconds of user-mode CPU time (its own, so a loaded
// machine or the kernel's paging does not make it fire), the guard prints one line naming the
// running process (a program of the user's spinning, told how to wait instead; anything else is
// rnicsim's own loop) and ends the process with exit code 3, as the watchdog does. It never changes
// what the simulation computes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace rnic {

class SpinGuard {
 public:
  explicit SpinGuard(double limit_s);  // limit_s 0: no guard
  ~SpinGuard();
  SpinGuard(const SpinGuard&) = delete;
  SpinGuard& operator=(const SpinGuard&) = delete;

 private:
  void watch();
  double sim_cpu_s() const;  // the simulation thread's user-mode CPU time
  double limit_s_;
  std::string stat_path_;  // /proc/self/task/<the simulation thread>/stat
  std::thread thread_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace rnic
