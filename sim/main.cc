// rnicsim: the command line (DESIGN.md §6).
//   rnicsim run SCENARIO [run options]
//   rnicsim perf TEST [-s SIZE | -a] [-n ITERS] [-q QPS] [-t DEPTH] [run options]
//   rnicsim validate SCENARIO [run options]
//   rnicsim sweep SCENARIO --vary KEY=V1,V2 [--vary ...] [--seeds N] [-j N] [--slurm] [run options]
//   rnicsim presets
#include <fmt/format.h>
#include <sys/personality.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <systemc>

#include "models/common/log.h"
#include "models/common/sc_main_entry.h"
#include "sim/experiment.h"
#include "sim/host_card.h"
#include "sim/partition.h"
#include "sim/ranks.h"
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/sweep.h"
#include "sim/traffic/efe_experiments.h"
#include "sim/traffic/memory_experiments.h"
#include "sim/traffic/perftest.h"

namespace {

void add_run_options(CLI::App* c, rnic::RunOptions& o, std::string& out, bool& quiet) {
  c->add_option("--preset", o.preset, "preset (rnicsim presets lists them)");
  c->add_option("--set", o.sets, "override a parameter: key=value (repeatable)");
  c->add_option("--out", out, "output folder")->capture_default_str();
  c->add_option("--rtl", o.rtl, "blocks to run as RTL: LIST or all")->delimiter(',');
  c->add_option("--trace", o.trace, "waveform format: fst or vcd");
  c->add_option("--trace-window", o.trace_window, "trace only T0:T1 (ns)");
  c->add_option("--trace-scope", o.trace_scope, "trace only instances matching PATTERN");
  c->add_flag("--pcap", o.pcap, "write each Ethernet link's frames to OUT/<link>.pcap");
  c->add_option("--timeline", o.timeline,
                "write every work request's stages to FILE (Chrome trace JSON: ui.perfetto.dev)");
  c->add_option("--timeline-window", o.timeline_window, "timeline only T0:T1 (ns)");
  c->add_flag("--breakdown", o.breakdown,
              "take latency workloads apart stage by stage (OUT/breakdown.json)");
  c->add_option("--seed", o.seed, "random seed (as --set sim.seed)");
  c->add_flag("--quiet", quiet, "no summary on stdout");
}

// A run gives the same results every time: the programs that run inside rnicsim keep their
// heaps and mappings where the last run had them, which address-space randomisation would move,
// and with them the page-table pages a registration walks (docs/verbs.md, "Memory"). So the
// first thing rnicsim does is turn randomisation off for itself and execute itself again (as
// `setarch -R` would). Left on where the kernel refuses it (some containers' seccomp rules) and
// under valgrind, which would not follow the exec.
void without_randomisation(char** argv) {
  const int p = personality(0xffffffff);
  if (p == -1 || (p & ADDR_NO_RANDOMIZE)) return;
  const char* pre = std::getenv("LD_PRELOAD");
  if (pre && std::strstr(pre, "vgpreload")) return;
  if (personality(unsigned(p) | ADDR_NO_RANDOMIZE) == -1) return;
  execv("/proc/self/exe", argv);
  personality(unsigned(p));  // (the exec failed: this process goes on as it was)
}

}  // namespace

int sc_main(int argc, char** argv) {
  without_randomisation(argv);
  // Under mpirun: this process is one rank of the run (sim/ranks.h).
  rnic::ranks::init(&argc, &argv);
  struct Finish {
    ~Finish() { rnic::ranks::finish(); }
  } finish;
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  // SystemC's errors are thrown, never printed: the runner reports each in one line.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  // A rank of a run over several processes may start a window with nothing of its own to run.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_,
                                          sc_core::SC_DO_NOTHING);
  rnic::traffic::register_perftests();
  rnic::traffic::register_efe_experiments();
  rnic::traffic::register_memory_experiments();
  CLI::App app{
      "rnicsim: cycle-accurate simulator of an RDMA NIC (iWARP RNIC with an Ether Forwarding "
      "Engine)"};
  app.require_subcommand(1);
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "error, warn, info, debug or trace")
      ->capture_default_str();

  rnic::RunOptions opt;
  std::string out = "out";
  bool quiet = false;
  std::string scenario;

  auto* run = app.add_subcommand("run", "run a scenario file");
  run->add_option("scenario", scenario, "scenario YAML")->required();
  add_run_options(run, opt, out, quiet);
  std::vector<std::string> pins;
  run->add_option("--partition", pins,
                  "under mpirun: NAME=RANK,... puts these hosts or switches on these ranks "
                  "(the rest: a switch with its hosts, balanced)")
      ->delimiter(',');

  auto* validate = app.add_subcommand("validate", "check a scenario file without running it");
  validate->add_option("scenario", scenario, "scenario YAML")->required();
  add_run_options(validate, opt, out, quiet);

  rnic::SweepOptions sw;
  auto* sweep = app.add_subcommand(
      "sweep", "run a scenario at every combination of varied keys, each point a process");
  sweep->add_option("scenario", sw.scenario, "scenario YAML")->required();
  sweep->add_option("--vary", sw.vary,
                    "KEY=V1,V2,...: a parameter (pcie.mps) or a path in the scenario "
                    "(workloads.0.size) and its values (repeatable: every combination runs)");
  sweep->add_option("--seeds", sw.seeds, "also vary sim.seed over 1..N");
  sweep->add_option("-j,--jobs", sw.jobs, "points run at a time on this machine")
      ->capture_default_str();
  sweep->add_flag("--slurm", sw.slurm,
                  "write a Slurm job array (OUT/sweep.sbatch, merge.sbatch, submit.sh) instead");
  sweep->add_option("--point", sw.point, "run only this point (a Slurm array task)");
  sweep->add_flag("--merge", sw.merge, "only merge the points' results into OUT/results.json");
  add_run_options(sweep, opt, out, quiet);

  auto* presets =
      app.add_subcommand("presets", "list the presets and every parameter's value in each");
  auto* schema =
      app.add_subcommand("schema", "print the scenario keys as Markdown (docs/scenarios.md)");
  std::string report_dir;
  auto* report =
      app.add_subcommand("report", "write DIR/report.html: one page of a finished run's outputs");
  report->add_option("dir", report_dir, "a run's --out folder")->required();

  std::string test;
  int64_t size = 0, iters = 0, qps = 0, depth = 0, duration_us = 0;
  bool all_sizes = false;
  auto* perf = app.add_subcommand("perf", "perftest-style measurement");
  perf->add_option(
          "test", test,
          "pcie_dma | write_bw | write_lat | read_bw | read_lat | send_bw | send_lat | atomic_bw | "
          "atomic_lat")
      ->required();
  perf->add_option("-s,--size", size, "message size in bytes");
  perf->add_flag("-a,--all", all_sizes, "sweep all sizes");
  perf->add_option("-n,--iters", iters, "iterations");
  perf->add_option("-q,--qp", qps, "number of QPs");
  perf->add_option("-t,--tx-depth", depth, "send queue depth");
  perf->add_option("-D,--duration-us", duration_us,
                   "run each size this many simulated us (at most -n iterations)");
  add_run_options(perf, opt, out, quiet);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  rnic::log::Level lvl;
  if (!rnic::log::parse_level(log_level, &lvl)) {
    fmt::print(stderr, "rnicsim: --log-level: '{}' is not error, warn, info, debug or trace\n",
               log_level);
    return 2;
  }
  rnic::log::set_level(lvl);

  try {
    if (presets->parsed()) {
      rnic::print_presets();
      return 0;
    }
    if (schema->parsed()) {
      rnic::print_schema();
      return 0;
    }
    if (report->parsed()) return rnic::write_report(report_dir);
    if (validate->parsed()) {
      rnic::Scenario s = rnic::load_scenario(scenario, opt);
      rnic::check_scenario(s, true);
      fmt::print("{}: valid (preset {}{})\n", scenario, s.preset,
                 s.has_experiment ? ", experiment " + s.experiment.kind
                                  : fmt::format(", {} workloads", s.workloads.size()));
      return 0;
    }
    if (sweep->parsed()) {
      sw.out = out;
      sw.quiet = quiet;
      sw.run = opt;
      return rnic::run_sweep(sw);
    }
    if (run->parsed()) {
      rnic::set_partition_pins(pins);
      rnic::Scenario s = rnic::load_scenario(scenario, opt);
      return rnic::run_scenario(s, out, quiet);
    }
    // perf
    const rnic::ExperimentKind* workload = rnic::find_workload(test);
    const rnic::ExperimentKind* kind = workload ? workload : rnic::find_experiment(test);
    if (test != "pcie_dma" && !workload)
      throw rnic::InputError(
          "perf", test, kind ? "is an experiment kind: run it from a scenario" : "unknown test");
    // A verbs test is one workload from node0 to node1; pcie_dma is the experiment.
    rnic::Scenario s;
    std::map<std::string, YAML::Node> nodes;
    auto set_key = [&](const std::string& flag, const std::string& key, int64_t v) {
      const rnic::ExpKey* k = nullptr;
      for (const auto& e : kind->keys)
        if (e.key == key) k = &e;
      if (!k) throw rnic::InputError("perf " + test, flag, "not an option of " + test);
      const YAML::Node n = YAML::Load(std::to_string(v));
      rnic::check_experiment_key(*k, n, "perf " + test + " " + flag);
      nodes[key] = n;
    };
    // An option given is honoured or refused (its range checked), never replaced by a default.
    auto given = [&](const char* name) { return perf->get_option(name)->count() > 0; };
    if (test == "pcie_dma") {
      for (const char* o : {"-n", "-q", "-t", "-D"})
        if (given(o))
          throw rnic::InputError("perf pcie_dma", o,
                                 "not an option of pcie_dma (it takes -s SIZE or -a)");
      if (given("-s") && all_sizes)
        throw rnic::InputError("perf pcie_dma", "-s",
                               "-s SIZE and -a (every size) exclude each other");
      if (given("-s")) {
        set_key("-s", "min_bytes", size);
        set_key("-s", "max_bytes", size);
      }
    } else {
      if (given("-s") && all_sizes)
        throw rnic::InputError("perf " + test, "-s",
                               "-s SIZE and -a (every size) exclude each other");
      if (given("-s")) set_key("-s", "size", size);
      if (all_sizes) set_key("-a", "all", 1);
      if (given("-n")) set_key("-n", "iters", iters);
      if (given("-q")) set_key("-q", "qps", qps);
      if (given("-t")) set_key("-t", "tx_depth", depth);
      if (given("-D")) set_key("-D", "duration_us", duration_us);
    }
    if (workload) {
      rnic::WorkloadSpec w;
      w.name = w.test = test;
      w.nodes = nodes;
      w.where = "perf " + test;
      s = rnic::options_scenario(opt, {w});
      s.experiment.name = test;
    } else {
      s = rnic::options_scenario(opt);
      s.has_experiment = true;
      s.experiment.kind = s.experiment.name = test;
      // pcie_dma sweeps the PCIe generation, width, MPS and MRRS; a --preset or --set that
      // chooses one of them runs that value only instead of the sweep.
      const rnic::PcieConfig& pc = s.config.pcie;
      const std::pair<const char*, std::pair<const char*, int64_t>> swept[] = {
          {"pcie.gen", {"gens", pc.gen}},
          {"pcie.lanes", {"lanes", pc.lanes}},
          {"pcie.mps", {"mps", pc.mps}},
          {"pcie.mrrs", {"mrrs", pc.mrrs}}};
      for (const auto& [param, key] : swept) {
        bool chosen = !opt.preset.empty();
        for (const std::string& kv : opt.sets) chosen |= kv.rfind(std::string(param) + "=", 0) == 0;
        if (chosen) nodes[key.first] = YAML::Load(fmt::format("[{}]", key.second));
      }
      s.experiment.nodes = nodes;
    }
    return rnic::run_scenario(s, out, quiet);
  } catch (const rnic::InputError& e) {
    fmt::print(stderr, "rnicsim: {}\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "rnicsim: out of memory on this machine before the run started\n");
    return 1;
  } catch (const sc_core::sc_report& e) {
    fmt::print(stderr, "rnicsim: SystemC: {}\n", e.get_msg());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rnicsim: {}\n", e.what());
    return 1;
  }
}

RNIC_SYSTEMC_MAIN
