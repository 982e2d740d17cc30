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
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/host_if/rnic_regs.h"
#include "sim/background.h"
#include "sim/run_control.h"

namespace rnic {

struct HostCard {
  // sample: this host's background task samples the time series (one per run does).
  // dmac: rnic_dmac's implementation (sim/blocks.h; the model when empty).
  HostCard(const SystemConfig& cfg, StatRegistry& stats, bool sample = true,
           const std::string& os_group = "host.os", const DmacCoreFactory& dmac = {});
  // Applies changed PCIe/cost parameters between the points of a sweep (the link must be idle).
  void configure(const SystemConfig& cfg);
  // Registers every block's waveform signals.
  void trace(TraceSink& t) const;
  // Every queue and credit, for the watchdog's report.
  std::string dump_state() const;

  SystemConfig cfg;
  StatRegistry& stats;
  host::PhysMem mem;
  pcie::PcieLink link;
  host::RootComplex rc;
  pcie::PcieIf card_if;
  RnicDmac dmac;
  RnicRegs regs;
  host::Os os;
  Background background;  // time-series sampling, waveform window
  uint64_t bar0 = 0, bar2 = 0;
};

// Runs fn as a simulated host process (an SC_THREAD) and simulates until it returns and every
// block is quiet: in slices, with the watchdog, Ctrl-C and progress (sim/run_control.h), the
// background tasks (sampling, waveform window) running. Throws HungError, InterruptedError.
void run_host_thread(HostCard& sys, const char* name, std::function<void()> fn);

}  // namespace rnic
