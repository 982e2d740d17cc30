// A host (memory, its PCIe link and root complex, its OS) and what joins it to a card. BAR0
// (64 KiB) and BAR2 (core.qps pages) sit at the start of the host's device-reserved window
// (above memory when there is none). HostCard is a host with a card's PCIe side alone (its PCIe
// I/F, registers and DMAC, no core or network): what the foundation's experiments and
// benchmarks of PCIe and DMA run on. A cluster's node is a Host and a whole Card (sim/cluster.h).
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <systemc>

#include "models/host/os.h"
#include "models/host/phys_mem.h"
#include "models/host/process.h"
#include "models/host/root_complex.h"
#include "models/pcie/link.h"
#include "models/rnic/card.h"
#include "sim/background.h"
#include "sim/config.h"
#include "sim/run_control.h"

namespace rnic {

// The host side, with the PCIe link to its card.
struct Host {
  // os_group: the OS's statistics group.
  Host(const SystemConfig& cfg, StatRegistry& stats, const std::string& os_group);
  // Applies changed PCIe/cost parameters between the points of a sweep (the link must be idle).
  void configure(const SystemConfig& cfg);
  // Registers the link's and the root complex's waveform signals.
  void trace(TraceSink& t) const;
  // The PCIe link's queues and credits (the watchdog's report).
  std::string dump_state() const;

  SystemConfig cfg;
  StatRegistry& stats;
  host::PhysMem mem;
  pcie::PcieLink link;
  host::RootComplex rc;
  host::Os os;
  uint64_t bar0 = 0, bar2 = 0;
};

struct HostCard : Host {
  // sample: this host's background task samples the time series (one per run does).
  // dmac: rnic_dmac's implementation (sim/blocks.h; the model when empty).
  HostCard(const SystemConfig& cfg, StatRegistry& stats, bool sample = true,
           const std::string& os_group = "host.os",
           const DmacCoreFactory& dmac = dmac_model_factory());
  void configure(const SystemConfig& cfg);
  // Registers every block's waveform signals.
  void trace(TraceSink& t) const;
  // Every queue and credit, for the watchdog's report.
  std::string dump_state() const;

  CardPcie card;
  Background background;  // time-series sampling, waveform window
};

// Every statistic that is not zero, a line per group (the watchdog's report, once per run).
std::string nonzero_stats(const StatRegistry& stats);

// Runs fn as a simulated host process (an SC_THREAD) and simulates until it returns and every
// block is quiet: in slices, with the watchdog, Ctrl-C and progress (sim/run_control.h), the
// background tasks (sampling, waveform window) running. Throws HungError, InterruptedError.
void run_host_thread(HostCard& sys, const char* name, std::function<void()> fn);

}  // namespace rnic
