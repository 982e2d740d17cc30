// A system of N hosts, each with its RNIC and one Ethernet port, the switches, and the
// point-to-point links that join ports (DESIGN.md §1, §3.4); each switch forwards by static
// routes computed here from the topology (shortest paths; among equal ones the switch picks by
// the MAC pair's hash). Host n = a Node: a Host (memory, PCIe link, root complex, OS), its Card
// (models/rnic/card.h: PCIe I/F, registers, DMAC, the RNIC Core, the EFE, the MAC port) and the
// driver; its module name is the host's name. Nothing is sized for two: a topology lists hosts and
// links (sim/scenario.h builds one from `topology:`; two_hosts() is perf's and the tests' default).
// Verbs programs run as simulated processes, one per host across runs (run()).
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/eth/eth_link.h"
#include "models/eth/eth_switch.h"
#include "models/host/driver.h"
#include "models/rnic/card.h"
#include "sim/blocks.h"
#include "sim/host_card.h"
#include "sim/partition.h"

namespace rnic {

struct HostSpec {
  std::string name;
  MacAddr mac{};
  SystemConfig cfg;  // the run's configuration with this host's own overrides
  uint32_t ip = 0;   // IPv4 address (MPA/TCP's; 0: default_ip of its index)
};

struct LinkSpec {
  std::string name;
  int a = 0, b = 1;  // host indices: each host has one port
  LinkParams params;
  int sw_a = -1, sw_b = -1;  // >= 0: that end is a port of this switch instead of host a (b)
};

struct SwitchSpec {
  std::string name;
  SwitchConfig cfg;
};

struct Topology {
  std::vector<HostSpec> hosts;
  std::vector<SwitchSpec> switches;
  std::vector<LinkSpec> links;
  // Whether frames can go from host a to host b (through switches; hosts do not forward).
  bool reachable(int a, int b) const;
  // Per host and switch (hosts first), the hops to host `dst` through switches (-1: none).
  std::vector<int> hops_to(int dst) const;
  // Per switch, per destination host: the switch's ports (in link order) on a shortest path.
  std::vector<std::vector<std::vector<int>>> routes() const;
};

// The default MAC of host n: 02:00:00 then n+1 in three bytes (locally administered; host 0
// is 02:00:00:00:00:01, host 255 is 02:00:00:00:01:00).
MacAddr default_mac(int n);
// The default IPv4 address of host n: 10.0.0.0/8, host 0 is 10.0.0.1.
uint32_t default_ip(int n);
// node0 and node1 joined by eth0, both with cfg.
Topology two_hosts(const SystemConfig& cfg);
// Hosts h0..h<n-1> behind leaf switches of per_leaf hosts each (leaf0, leaf1, ...; links
// h<i>_leaf<l>), every leaf joined to every spine (spine0, ...; links leaf<l>_spine<s>) when
// there are several leaves; one leaf needs no spine. All with cfg.
Topology leaf_spine(const SystemConfig& cfg, int hosts, int per_leaf, int spines);

class Node : public sc_core::sc_module {
 public:
  Node(sc_core::sc_module_name n, int index, const HostSpec& spec, StatRegistry& stats,
       const Implementations& impl);
  int index;
  eth::Mac mac;
  uint32_t ip;
  SystemConfig cfg;
  Implementations impl;  // what it was given, or default_rtl() resolved for its cfg
  Host host;
  Card card;
  host::Driver driver;
  // The node's simulated process: created by its first program, the same in every later one.
  std::unique_ptr<host::Process> proc;  // process 0 (Cluster::Program::process)
  std::map<int, std::unique_ptr<host::Process>> other_procs;  // processes 1, 2, ...
};

class Cluster {
 public:
  // impl: which implementation each swappable block runs (sim/blocks.h); all models by default.
  Cluster(const Topology& topo, const SystemConfig& cfg, StatRegistry& stats,
          const Implementations& impl = {});
  // two_hosts(cfg).
  Cluster(const SystemConfig& cfg, StatRegistry& stats, const Implementations& impl = {});
  ~Cluster();

  // A program and the host it runs on (as a thread of the host's process).
  struct Program {
    int node;
    std::function<void()> fn;
    bool privileged = false;  // a kernel consumer: may register physical regions
    int process = 0;          // which process of the host runs it (each its own address space)
  };
  // Runs every program and simulates until each has returned and the system is quiet, with the
  // watchdog, Ctrl-C and progress of sim/run_control.h. Throws HungError, InterruptedError.
  void run(const std::vector<Program>& programs);
  // programs[n] on node n (an empty function: none).
  void run(const std::vector<std::function<void()>>& programs);
  std::string dump_state() const;
  // One line per link that lost or corrupted frames so far ("link eth0: ..."; "" if none): the
  // cause to name beside a channel failure or a hung run.
  std::string lossy_links() const;
  // The same over every rank's links (a collective call: every rank makes it), for every rank.
  std::string lossy_links_everywhere() const;
  void trace(TraceSink& t) const;
  // Host i's signals (none for another rank's): trace() registers every host's in turn.
  void trace_node(size_t i, TraceSink& t) const;
  eth::EthLink& link(size_t i) { return *links[i]; }
  int find(const std::string& host) const;  // -1 when no host has that name

  SystemConfig cfg;
  StatRegistry& stats;
  Background background;
  sc_core::sc_event decoy_ev;  // sim.decoy_ns's wake-up
  size_t decoy_step = 0;       // ... and its look at the end of a time step
  // Over several processes, another rank's hosts and switches are nullptr here, and so are the
  // links between them (links to them have a stand-in end: FarEnd).
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<eth::EthSwitch>> switches;
  std::vector<std::unique_ptr<eth::EthLink>> links;
  std::vector<std::string> host_names, switch_names;  // every host's and switch's, by index
  std::vector<MacAddr> host_macs;                     // every host's, by index
  std::vector<std::string> link_names;
  std::vector<LinkParams> link_params;                // every link's, by index
  std::vector<std::array<std::string, 2>> link_ends;  // per link, the host or switch at a and b
  // Over several processes (sim/ranks.h): which rank simulates each host and switch. Each
  // process builds its own hosts and switches and the links that reach them; only its own hosts
  // run programs, and a link to another rank's host or switch carries its frames there
  // (EthLink::set_remote). One process: rank 0 has everything.
  Partition part;
  bool local(int host) const { return part.host_rank[size_t(host)] == part_rank_; }

 private:
  // The far end of a link to another rank's host or switch: it never sends, and the link hands
  // it nothing (its frames go to the other rank).
  struct FarEnd : eth::LinkEnd {
    void attach(eth::EthLink*, int, uint64_t) override {}
    void arrive(FramePtr, std::array<uint8_t, 4>, uint64_t, uint64_t) override {
      throw std::logic_error("a frame reached the stand-in end of another rank's port");
    }
  };
  std::vector<std::unique_ptr<FarEnd>> far_ends_;
  // This rank's ends of the links that cross to other ranks: the link's delay, and the time
  // from a frame's first bit to the far end's first action on it, at least react_ps (the
  // shortest frame's) and, where the far end is a store-and-forward switch (byte_ps > 0), the
  // frame's own time on the wire.
  struct Sender {
    const eth::LinkEnd* end = nullptr;
    uint64_t prop_ps = 0;
    uint64_t react_ps = 0;
    uint64_t byte_ps = 0;
    uint64_t hold_ps = 0;  // Partition::crossing_hold_ps
    uint64_t react(size_t frame_bytes) const {
      return std::max(react_ps,
                      (eth::kPreambleBytes + frame_bytes + eth::kFcsBytes) * byte_ps + hold_ps);
    }
  };
  std::vector<Sender> senders_;
  // Each link's frames lost while down, lost at random and corrupted here (3 a link), and the
  // lines lossy_links makes of such counts.
  std::vector<uint64_t> fault_counts() const;
  std::string lossy_text(const std::vector<uint64_t>& counts) const;
  int part_rank_ = 0;
  uint32_t frame_channel_ = UINT32_MAX;
  uint32_t board_channel_ = UINT32_MAX;  // the programs' out-of-band board's puts
  // Each host's processes' ids (by host and process), 100 on, given in the order one process
  // gives them over every host, this rank's or another's: a process's pid seeds where its pages
  // go.
  std::map<std::pair<int, int>, int> pids_;
  int runs_ = 0;
};

}  // namespace rnic
