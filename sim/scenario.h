// Scenario files (YAML): one schema for everything a run can hold (docs/scenarios.md). Sections
// whose capability is not built yet are refused with exit code 2, never ignored.
//
//   name: STRING                 optional label
//   preset: NAME                 rnic-10g (default) | rnic-100g | expether-1g
//   seed: INT                    sim.seed
//   set: {KEY: VALUE, ...}       parameter overrides (dotted keys, or nested maps)
//   topology: {hosts, switches, links}   hosts (name, mac, set), switches (name, set), links
//                                (between, rate, length)
//   workloads: [...]             verbs traffic: perftest jobs between hosts, several at once
//   faults: [{link, loss, ber, down_us}]  per link: frame loss, bit errors, down intervals
//   rtl: [BLOCK, ...]            blocks to run as Verilated RTL
//   outputs: {pcap, pcap_fcs, trace, trace_window, trace_scope, timeline, timeline_window,
//             breakdown, stats_interval_ns}
//   experiment: {kind, name, ...kind's own keys}
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "models/common/bytes.h"
#include "sim/blocks.h"
#include "sim/config.h"

namespace rnic {

struct OutputSpec {
  bool pcap = false;
  bool pcap_fcs = false;
  std::string trace;            // "", "fst", "vcd"
  std::string trace_window;     // "T0:T1" in ns
  std::string trace_scope;      // glob over hierarchical names
  std::string timeline;         // file (--timeline)
  std::string timeline_window;  // "T0:T1" in ns
  bool breakdown = false;       // latency workloads taken apart stage by stage
  // Where trace and trace_window came from when the command line gave them ("--trace vcd"),
  // for messages; "" when the scenario file did.
  std::string trace_where, window_where;
};

struct ExperimentSpec {
  std::string kind;
  std::string name;
  std::string where;  // file:line of the experiment section
  std::map<std::string, YAML::Node> nodes;
};

// A host of `topology.hosts`: its name (the module name of its node), MAC and own overrides.
struct HostTopo {
  std::string name;
  MacAddr mac{};
  uint32_t ip = 0;  // its IPv4 address (`ip:`, else default_ip of its index)
  std::vector<std::pair<std::string, std::string>> sets;  // key, value (core., pcie., ...)
  std::string where;
};

// A switch of `topology.switches`: its name and its own switch. keys.
struct SwitchTopo {
  std::string name;
  std::vector<std::pair<std::string, std::string>> sets;
  std::string where;
};

// A link of `topology.links`: the two hosts or switches whose ports it joins, its rate and
// propagation.
struct LinkTopo {
  std::string name;
  std::string a, b;
  int64_t rate_gbps = 0;  // 0: mac.rate_gbps
  int64_t prop_ns = -1;   // -1: link.prop_ns
  std::string where;
};

// One entry of `faults:`: what goes wrong on one link (what it leaves out keeps link.loss and
// link.ber); down intervals add up.
struct FaultSpec {
  std::string link;
  bool has_loss = false, has_ber = false;
  double loss = 0, ber = 0;
  std::vector<std::pair<uint64_t, uint64_t>> down_ps;
  std::string where;
};

// A workload of `workloads:`: one perftest-style job (its test's keys as perf's options), or a
// verbs program of the user's (`program:`, a shared object, or `exec:`, an executable with its
// arguments: docs/verbs.md) run on each of `hosts` with that host's arguments.
struct WorkloadSpec {
  std::string name;
  std::string test;  // write_bw ... send_lat, atomic_bw, atomic_lat (perftest.h); "" for a program
  std::string program;  // the shared object's path; `exec:`: the executable's, resolved
  bool exec = false;    // `exec:`: an executable run as a simulated process (sim/exec/)
  std::vector<std::string> exec_args;  // `exec:`'s arguments after the program, before `args`
  std::vector<std::string> hosts;      // where it runs, one process each
  std::vector<std::vector<std::string>> args;  // per host (one list: the same for all)
  std::string from, to;
  double start_us = 0;
  std::map<std::string, YAML::Node> nodes;
  std::string where;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string preset = "rnic-10g";
  SystemConfig config;
  std::vector<std::string> rtl;
  Implementations impl;  // rtl, resolved against the block registry
  OutputSpec outputs;
  ExperimentSpec experiment;
  bool has_experiment = false;
  std::vector<HostTopo> hosts;  // empty: the default pair node0, node1 on link eth0
  std::vector<SwitchTopo> switches;
  std::vector<LinkTopo> links;
  std::vector<WorkloadSpec> workloads;
  std::vector<FaultSpec> faults;
};

// Run options from the command line, applied over a scenario (DESIGN.md §6).
struct RunOptions {
  std::string preset;             // overrides the scenario's
  std::vector<std::string> sets;  // key=value
  std::vector<std::string> rtl;
  std::string trace, trace_window, trace_scope, timeline, timeline_window;
  bool pcap = false;
  bool breakdown = false;
  std::string seed;  // as given (read as --set sim.seed is); empty: not given
};

struct Topology;
// The system a scenario's workloads run on: its hosts (each with the run's configuration and its
// own overrides) and links; without `topology.hosts`, node0 and node1 joined by eth0.
Topology build_topology(const Scenario& s);

// Loads and checks a scenario (throws InputError); applies options over it.
Scenario load_scenario(const std::string& file, const RunOptions& opt);
// A scenario with no file: the preset, the options and these workloads (used by `perf`).
Scenario options_scenario(const RunOptions& opt, std::vector<WorkloadSpec> workloads = {});

}  // namespace rnic
