// One host and its RNIC over a PCIe link: what the foundation's experiments and benchmarks
// run on. BAR0 (64 KiB) and BAR2 (core.qps pages) sit at the start of the host's
// device-reserved window (above memory when there is none).
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <systemc>

#include "models/host/os.h"
#include "models/host/phys_mem.h"
#include "models/host/process.h"
#include "models/host/root_complex.h"
#include "models/pcie/link.h"
#include "models/pcie/pcie_if.h"
#include "models/rnic/rnic_regs.h"
#include "sim/background.h"

namespace rnic {

struct HostCard {
  HostCard(const SystemConfig& cfg, StatRegistry& stats);
  // Applies changed PCIe/cost parameters between the points of a sweep (the link must be idle).
  void configure(const SystemConfig& cfg);
  // Registers every block's waveform signals.
  void trace(TraceSink& t) const;

  SystemConfig cfg;
  host::PhysMem mem;
  pcie::PcieLink link;
  host::RootComplex rc;
  pcie::PcieIf card_if;
  RnicRegs regs;
  host::Os os;
  Background background;  // time-series sampling, waveform window
  uint64_t bar0 = 0, bar2 = 0;
};

// A run that cannot finish: work outstanding and nothing left that could move it (exit code 3).
struct HungError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs fn as a simulated host process (an SC_THREAD) and simulates until it returns and every
// block is quiet.
void run_host_thread(const char* name, std::function<void()> fn);
// The same, sampling the time series of sys's statistics while it runs.
void run_host_thread(HostCard& sys, const char* name, std::function<void()> fn);

}  // namespace rnic
