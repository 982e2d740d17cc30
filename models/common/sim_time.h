// Simulated time as the models read and make it: picoseconds, the kernel's resolution
// (DESIGN.md §2). Both are inline: the library's sc_time_stamp() and sc_time::from_value() are
// calls, made some 150 times a frame (about 3% of a frame's instructions at 10 Gb/s).
#pragma once

#include <cstdint>
#include <cstring>
#include <systemc>
#include <utility>

namespace rnic {

// The kernel's clock, and the time the models run at: ahead of the kernel's while the scheduler
// runs later times itself (models/common/scheduler.h).
inline uint64_t kernel_now_ps() { return sc_core::sc_get_curr_simcontext()->time_stamp().value(); }

struct VirtualClock {
  bool on = false;       // the scheduler is running a time ahead of the kernel
  uint64_t now = 0;      // that time
  uint64_t round = 0;    // and its round (what SystemC's delta count would be)
  bool touched = false;  // an event was notified for a process outside the scheduler
  // The last time run ahead and its last round: the kernel's deltas at that time come after.
  uint64_t last_t = UINT64_MAX, last_round = 0;
};
inline VirtualClock g_virtual_clock;

inline uint64_t now_ps() { return g_virtual_clock.on ? g_virtual_clock.now : kernel_now_ps(); }

// t + d, or UINT64_MAX (never) where that would pass it.
inline uint64_t add_sat(uint64_t t, uint64_t d) { return t > UINT64_MAX - d ? UINT64_MAX : t + d; }

// The delta cycles of the current time before this one.
inline uint64_t delta_now() {
  const VirtualClock& v = g_virtual_clock;
  if (v.on) return v.round;
  const uint64_t d = sc_core::sc_delta_count_at_current_time();
  return kernel_now_ps() == v.last_t ? d + v.last_round + 1 : d;
}

// sc_time::from_value(ps) without the call (an sc_time holds its value and nothing else). The
// library's version also marks the time resolution as fixed, which it already is once anything
// has been scheduled: use this while the simulation runs.
inline sc_core::sc_time ps_time(uint64_t ps) {
  static_assert(sizeof(sc_core::sc_time) == sizeof(uint64_t), "sc_time is its value alone");
  sc_core::sc_time t;
  std::memcpy(static_cast<void*>(&t), &ps, sizeof ps);
  return t;
}

// Notifies `e` for absolute time t_ps (at or after now_ps()): what a model does where it would
// notify an event for a process outside the scheduler (a host thread). Ahead of the kernel, it
// also stops the scheduler from running past t_ps.
inline void notify_at(sc_core::sc_event& e, uint64_t t_ps) {
  const uint64_t k = kernel_now_ps();
  e.notify(ps_time(t_ps > k ? t_ps - k : 0));
  if (g_virtual_clock.on) g_virtual_clock.touched = true;
}
// The same at the current time (SC_ZERO_TIME from the kernel's own time).
inline void notify_now(sc_core::sc_event& e) { notify_at(e, now_ps()); }
// A method process that runs each time `ev` is notified (not at the start of the simulation).
template <class F>
void spawn_method_on(sc_core::sc_event& ev, const char* name, F&& fn) {
  sc_core::sc_spawn_options o;
  o.spawn_method();
  o.set_sensitivity(&ev);
  o.dont_initialize();
  sc_core::sc_spawn(std::forward<F>(fn), name, &o);
}
// An immediate notification, or ahead of the kernel one at the current time.
inline void notify_immediate(sc_core::sc_event& e) {
  if (g_virtual_clock.on)
    notify_now(e);
  else
    e.notify();
}

}  // namespace rnic
