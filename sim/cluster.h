// Two hosts, each with its RNIC, joined by one full-duplex Ethernet link (the network of the
// RNIC Core issue): host n = node<n> (PCIe link, root complex, card PCIe I/F, registers, the
// RNIC Core, the EFE pass-through, the driver), the link = eth0 (side n = node n). MAC of
// node n: 02:00:00:00:00:0<n+1>. Verbs programs run as simulated processes (run()).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/efe/efe_passthrough.h"
#include "models/eth/eth_link.h"
#include "models/host/driver.h"
#include "models/rnic/rnic_core.h"
#include "sim/blocks.h"
#include "sim/host_card.h"

namespace rnic {

class Node : public sc_core::sc_module {
 public:
  Node(sc_core::sc_module_name n, int index, const SystemConfig& cfg, StatRegistry& stats,
       eth::EthLink& eth);
  int index;
  eth::Mac mac;
  HostCard hc;
  efe::EfePassThrough efe;
  RnicCore core;
  host::Driver driver;
  // The node's simulated process: created by the first run(), the same in every later one.
  std::unique_ptr<host::Process> proc;
};

class Cluster {
 public:
  static constexpr int kNodes = 2;
  // impl: which implementation each swappable block runs (sim/blocks.h); all models by default.
  Cluster(const SystemConfig& cfg, StatRegistry& stats, const Implementations& impl = {});
  ~Cluster();

  // Runs programs[n] as a simulated process on node n (an empty function: none) and simulates
  // until every program has returned and the system is quiet, with the watchdog, Ctrl-C and
  // progress of sim/run_control.h. Throws HungError, InterruptedError.
  void run(const std::vector<std::function<void()>>& programs);
  std::string dump_state() const;
  void trace(TraceSink& t) const;

  SystemConfig cfg;
  StatRegistry& stats;
  Background background;
  eth::EthLink eth;
  std::vector<std::unique_ptr<Node>> nodes;

 private:
  int pid_ = 100;
  int runs_ = 0;
};

}  // namespace rnic
