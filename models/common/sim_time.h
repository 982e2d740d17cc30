// Simulated time as the models read and make it: picoseconds, the kernel's resolution
// (DESIGN.md §2). Both are inline: the library's sc_time_stamp() and sc_time::from_value() are
// calls, made some 150 times a frame (about 3% of a frame's instructions at 10 Gb/s).
#pragma once

#include <cstdint>
#include <cstring>
#include <systemc>

namespace rnic {

inline uint64_t now_ps() { return sc_core::sc_get_curr_simcontext()->time_stamp().value(); }

// sc_time::from_value(ps) without the call (an sc_time holds its value and nothing else). The
// library's version also marks the time resolution as fixed, which it already is once anything
// has been scheduled: use this while the simulation runs.
inline sc_core::sc_time ps_time(uint64_t ps) {
  static_assert(sizeof(sc_core::sc_time) == sizeof(uint64_t), "sc_time is its value alone");
  sc_core::sc_time t;
  std::memcpy(static_cast<void*>(&t), &ps, sizeof ps);
  return t;
}

}  // namespace rnic
