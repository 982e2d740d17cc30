// What the RTL lockstep tests share: the seed (RNIC_SEED replays a run, scripts/regress walks a
// range), the length (RNIC_LOCKSTEP_SCALE multiplies it: the rtl-long runs), and the coverage.
//
// Verilator coverage of the RTL a lockstep test ran (scripts/regress): in a build configured
// with -DRNIC_RTL_COVERAGE=ON and RNIC_COVERAGE_DIR set, writes the coverage counters of every
// SystemC-mode Verilated block in the process to RNIC_COVERAGE_DIR/<what>_<pid>.dat. Call it
// while the blocks still exist (their counters live in them). Elsewhere it does nothing.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#if VM_COVERAGE
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <verilated.h>
#include <verilated_cov.h>
#endif

namespace rnic::tb {

inline void write_rtl_coverage(const std::string& what) {
#if VM_COVERAGE
  const char* dir = std::getenv("RNIC_COVERAGE_DIR");
  if (!dir || !*dir) return;
  ::mkdir(dir, 0755);
  Verilated::threadContextp()->coveragep()->write(
      fmt::format("{}/{}_{}.dat", dir, what, ::getpid()).c_str());
#else
  (void)what;
#endif
}

// RNIC_SEED when set (a replay, or scripts/regress's seed range), else dflt.
inline uint64_t seed_or(uint64_t dflt) {
  const char* s = std::getenv("RNIC_SEED");
  return s ? std::strtoull(s, nullptr, 0) : dflt;
}

// RNIC_LOCKSTEP_SCALE when set (the rtl-long runs: that many times the stimulus), else 1.
inline int lockstep_scale() {
  const char* s = std::getenv("RNIC_LOCKSTEP_SCALE");
  const int n = s ? std::atoi(s) : 1;
  return n > 0 ? n : 1;
}

}  // namespace rnic::tb
