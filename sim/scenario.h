// Scenario files (YAML): one schema for everything a run can hold (docs/scenarios.md). Sections
// whose capability is not built yet are refused with exit code 2, never ignored.
//
//   name: STRING                 optional label
//   preset: NAME                 rnic-10g (default) | rnic-100g | expether-1g
//   seed: INT                    sim.seed
//   set: {KEY: VALUE, ...}       parameter overrides (dotted keys, or nested maps)
//   topology: {hosts, switches, links}
//   workloads: [...]             verbs traffic (RNIC issue)
//   faults: [...]                loss, BER, link down (EFE issue)
//   rtl: [BLOCK, ...]            blocks to run as Verilated RTL
//   outputs: {pcap, pcap_fcs, trace, trace_window, trace_scope, timeline, stats_interval_ns}
//   experiment: {kind, name, ...kind's own keys}
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "sim/blocks.h"
#include "sim/config.h"

namespace rnic {

struct OutputSpec {
  bool pcap = false;
  bool pcap_fcs = false;
  std::string trace;         // "", "fst", "vcd"
  std::string trace_window;  // "T0:T1" in ns
  std::string trace_scope;   // glob over hierarchical names
  std::string timeline;      // file
};

struct ExperimentSpec {
  std::string kind;
  std::string name;
  std::string where;  // file:line of the experiment section
  std::map<std::string, YAML::Node> nodes;
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
};

// Run options from the command line, applied over a scenario (DESIGN.md §6).
struct RunOptions {
  std::string preset;             // overrides the scenario's
  std::vector<std::string> sets;  // key=value
  std::vector<std::string> rtl;
  std::string trace, trace_window, trace_scope, timeline;
  bool pcap = false;
  bool seed_given = false;
  int64_t seed = 0;
};

// Loads and checks a scenario (throws InputError); applies options over it.
Scenario load_scenario(const std::string& file, const RunOptions& opt);
// A scenario with no file: the preset and the options only (used by `perf`).
Scenario options_scenario(const RunOptions& opt);

}  // namespace rnic
