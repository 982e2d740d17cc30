// Every wait of host software (a program's thread, the driver) goes through host_wait: the
// simulated processes share the simulator's one OS thread, so errno is theirs only if each
// keeps its own across the switch to another (saved before the wait, restored after).
// host_spend is a wait that is CPU time (host_cpu_ps counts it per thread).
#pragma once

#include <cerrno>
#include <cstdint>
#include <exception>
#include <string>
#include <systemc>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace rnic::host {

template <class... A>
void host_wait(A&&... a) {
  const int e = errno;
  sc_core::wait(std::forward<A>(a)...);
  errno = e;
}

// Host CPU time per host thread (SC process): what it spends computing (host_spend) or busy
// polling (host_cpu_add), as opposed to sleeping on an event.
inline uint64_t& host_cpu_ps() {
  static std::unordered_map<const sc_core::sc_object*, uint64_t> m;
  return m[sc_core::sc_get_current_process_handle().get_process_object()];
}
inline void host_cpu_add(uint64_t ps) { host_cpu_ps() += ps; }
// The calling thread computes for `ps` of simulated time.
inline void host_spend(uint64_t ps) {
  if (!ps) return;
  host_cpu_add(ps);
  host_wait(sc_core::sc_time::from_value(ps));
}

// Threads of the simulated kernel (kernel consumers, docs/memory.md "Kernel consumers"): their
// calls into the driver are function calls, not system calls (no entry, dispatch or exit), and
// a completion handler they dispatch runs from the completion interrupt, with no scheduler
// wake-up. A host thread is the kernel's while a KernelThread of its lives.
inline std::unordered_set<const sc_core::sc_object*>& kernel_threads() {
  static std::unordered_set<const sc_core::sc_object*> s;
  return s;
}
inline bool in_kernel_thread() {
  return !kernel_threads().empty() &&
         kernel_threads().count(sc_core::sc_get_current_process_handle().get_process_object());
}
class KernelThread {
 public:
  KernelThread() : self_(sc_core::sc_get_current_process_handle().get_process_object()) {
    kernel_threads().insert(self_);
  }
  ~KernelThread() { kernel_threads().erase(self_); }
  KernelThread(const KernelThread&) = delete;
  KernelThread& operator=(const KernelThread&) = delete;

 private:
  const sc_core::sc_object* self_;
};

// What each host thread is blocked in (a call that waits for another party, with what it waits
// for), for the report of a run that ends with it still waiting.
inline std::unordered_map<const sc_core::sc_object*, std::string>& blocked_calls() {
  static std::unordered_map<const sc_core::sc_object*, std::string> m;
  return m;
}
// A thread whose waits also stand for another's (a process's main thread served by a thread of
// its own: what it waits in is the process's). The other's entry stays when the wait ends: its
// owner replaces or clears it (the process's stands until its main thread's next call).
inline std::unordered_map<const sc_core::sc_object*, const sc_core::sc_object*>& blocked_for() {
  static std::unordered_map<const sc_core::sc_object*, const sc_core::sc_object*> m;
  return m;
}
class BlockedIn {
 public:
  explicit BlockedIn(std::string what)
      : self_(sc_core::sc_get_current_process_handle().get_process_object()) {
    const auto f = blocked_for().find(self_);
    if (f != blocked_for().end()) also_ = f->second;
    if (also_) blocked_calls()[also_] = what;
    blocked_calls()[self_] = std::move(what);
  }
  // A thread killed while blocked (the run stopping) keeps its entry for the report.
  ~BlockedIn() {
    if (std::uncaught_exceptions()) return;
    blocked_calls().erase(self_);
  }
  BlockedIn(const BlockedIn&) = delete;
  BlockedIn& operator=(const BlockedIn&) = delete;

 private:
  const sc_core::sc_object* self_;
  const sc_core::sc_object* also_ = nullptr;
};
// "" when `thread` is not blocked in such a call.
inline std::string blocked_in(const sc_core::sc_object* thread) {
  auto it = blocked_calls().find(thread);
  return it == blocked_calls().end() ? "" : it->second;
}

}  // namespace rnic::host
