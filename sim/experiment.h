// Experiments: built-in measurements a scenario's `experiment:` section selects by `kind`, each
// with its own keys (type, default, range, unit, description) checked at load time, and each
// writing rows to results.json = {"experiment", "preset", "axes": {"x", "y": [...], "stack"?:
// [...]}, "rows"}.
#pragma once

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/common/stats.h"
#include "sim/pcap_writer.h"
#include "sim/scenario.h"

namespace rnic {

struct ExpKey {
  std::string key;
  enum Type { kInt, kIntList, kStringList } type;
  std::string def;                   // default, as YAML text
  double lo, hi;                     // range of each integer
  std::vector<std::string> choices;  // for string lists
  std::string unit, desc;
};

class RunTrace;
class RequestTrace;
struct HostCard;
class Cluster;

struct ExperimentContext {
  ExperimentContext(Scenario& s, SystemConfig& c, StatRegistry& st)
      : scenario(s), cfg(c), stats(st) {}

  Scenario& scenario;
  SystemConfig& cfg;
  StatRegistry& stats;
  bool quiet = false;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::string x;
  std::vector<std::string> y;
  // Fields that add up to one of y per row (a latency's stages): drawn as stacked bars.
  std::vector<std::string> stack;
  std::string summary;  // printed after the run
  // With workloads: one entry per workload (name, test, from, to, x, y); its rows are in `rows`
  // with their "workload".
  nlohmann::ordered_json workloads = nlohmann::ordered_json::array();
  RunTrace* trace = nullptr;          // set when the run writes a waveform
  RequestTrace* requests = nullptr;   // set with a timeline or a breakdown
  nlohmann::ordered_json breakdown;   // OUT/breakdown.json when set (latency workloads)
  nlohmann::ordered_json topology;    // stats.json's: hosts, switches, links (attach(Cluster&))
  std::string out_dir;                // where captures go
  std::vector<std::string> captures;  // the capture files the run wrote
  std::vector<std::unique_ptr<PcapWriter>> capture_writers;  // open until the run ends
  // Over several processes with outputs.pcap: this rank's frames of each link with an end here,
  // (time, end, frame) records that rank 0 merges into the link's capture after the run
  // (merge_rank_captures).
  std::vector<std::unique_ptr<std::ofstream>> rank_captures;
  // Over several processes: the rank that simulates each host, switch and link by name (a link
  // whose ends are on two ranks: -1, its counts are the two ranks' sum); set by attach(Cluster&).
  std::map<std::string, int> owner;

  // Every experiment calls this once its system is built: waveform signals and window; with
  // outputs.pcap, a capture of each of a Cluster's links (OUT/<link>.pcap); the request trace's
  // probes.
  void attach(HostCard& sys);
  void attach(Cluster& sys);

  // Rank 0, after the run over several processes: each link's capture from every rank's records
  // (frames of one time by their sending end, as one process writes them); the records go.
  // Every rank calls it (it waits for all of them to close theirs).
  void merge_rank_captures();

  int64_t get_int(const std::string& key) const;
  std::vector<int64_t> get_ints(const std::string& key) const;
  std::vector<std::string> get_strings(const std::string& key) const;
};

struct ExperimentKind {
  std::string kind;
  std::string desc;
  std::vector<ExpKey> keys;
  // Elaborates what it needs, runs the simulation, fills ctx.rows. Returns the exit code.
  std::function<int(ExperimentContext&)> run;
  bool has_links = false;  // builds Ethernet links (so --pcap applies)
  // Runs over several processes (mpirun): each rank's rows are the whole run's (what it sums
  // over hosts it sums over every rank).
  bool parallel = false;
};

const std::vector<ExperimentKind>& experiment_kinds();
// Workload tests (`workloads:` and `rnicsim perf`): each with its keys; `run` unused. Defined
// outside sim/ (sim/traffic/) and registered with the runner of a scenario's workloads.
const std::vector<ExperimentKind>& workload_kinds();
const ExperimentKind* find_workload(const std::string& test);
void add_workload_kind(ExperimentKind k);
void set_workload_runner(std::function<int(ExperimentContext&)> run);
const std::function<int(ExperimentContext&)>& workload_runner();
struct Topology;
// The checks of a scenario's workloads that need the topology built (host memory, this
// machine's memory): run before any run and by validate; throw InputError.
void set_workload_checker(std::function<void(const Scenario&, const Topology&)> check);
const std::function<void(const Scenario&, const Topology&)>& workload_checker();
// A workload's key as given, or its test's default.
int64_t workload_int(const WorkloadSpec& w, const std::string& key);
std::vector<int64_t> workload_ints(const WorkloadSpec& w, const std::string& key);
// Adds kinds defined outside sim/ (the verbs traffic generators); before any scenario loads.
void add_experiment_kind(ExperimentKind k);
const ExperimentKind* find_experiment(const std::string& kind);

// Checks one experiment key's text against its schema; throws InputError(where, key, reason).
void check_experiment_key(const ExpKey& k, const YAML::Node& value, const std::string& where);

}  // namespace rnic
