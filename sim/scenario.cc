#include "sim/scenario.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>

#include "sim/experiment.h"
#include "sim/run_trace.h"

namespace rnic {

namespace {

std::string at(const std::string& file, const YAML::Node& n) {
  return fmt::format("{}:{}", file, n.Mark().line + 1);
}

std::string scalar(const std::string& file, const std::string& key, const YAML::Node& n) {
  if (!n.IsScalar()) throw InputError(at(file, n), key, "expected a single value");
  return n.Scalar();
}

bool to_bool(const std::string& file, const std::string& key, const YAML::Node& n) {
  const std::string s = scalar(file, key, n);
  if (s == "true") return true;
  if (s == "false") return false;
  throw InputError(at(file, n), key, fmt::format("'{}' is not true or false", s));
}

void require_map(const std::string& file, const std::string& key, const YAML::Node& n) {
  if (!n.IsMap()) throw InputError(at(file, n), key, "expected a map of keys");
}

void only_keys(const std::string& file, const std::string& section, const YAML::Node& n,
               const std::set<std::string>& known) {
  for (const auto& kv : n) {
    const std::string k = kv.first.Scalar();
    if (!known.count(k)) {
      std::string list;
      for (const auto& x : known) list += (list.empty() ? "" : ", ") + x;
      throw InputError(at(file, kv.first), section.empty() ? k : section + "." + k,
                       fmt::format("unknown key (known here: {})", list));
    }
  }
}

// Flattens `set:` (nested maps or dotted keys) into (key, value node).
void flatten(const std::string& file, const std::string& prefix, const YAML::Node& n,
             std::vector<std::pair<std::string, YAML::Node>>* out) {
  for (const auto& kv : n) {
    const std::string k = prefix.empty() ? kv.first.Scalar() : prefix + "." + kv.first.Scalar();
    if (kv.second.IsMap())
      flatten(file, k, kv.second, out);
    else
      out->push_back({k, kv.second});
  }
}

void not_built(const std::string& file, const YAML::Node& n, const std::string& key,
               const std::string& what) {
  throw InputError(at(file, n), key, fmt::format("{} is not built yet in this version", what));
}

// The command line's options over a scenario whose preset and file keys are already applied
// (the preset itself is chosen by the callers, before anything else).
void apply_options(Scenario& s, const RunOptions& opt) {
  if (opt.seed_given) s.config.sim.seed = opt.seed;
  for (const auto& kv : opt.sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--set " + kv, kv, "expected key=value");
    s.config.set(kv.substr(0, eq), kv.substr(eq + 1), "--set " + kv);
  }
  for (const auto& b : opt.rtl) s.rtl.push_back(b);
  if (opt.pcap) s.outputs.pcap = true;
  if (!opt.trace.empty()) s.outputs.trace = opt.trace;
  if (!opt.trace_window.empty()) s.outputs.trace_window = opt.trace_window;
  if (!opt.trace_scope.empty()) s.outputs.trace_scope = opt.trace_scope;
  if (!opt.timeline.empty()) s.outputs.timeline = opt.timeline;
}

// Capabilities that runs of this version can honour.
void check_capabilities(Scenario& s, const std::string& where) {
  s.impl = resolve_implementations(s.rtl, int(s.config.core.datapath_bytes), where);
  if (s.outputs.pcap && s.has_experiment) {
    const ExperimentKind* k = find_experiment(s.experiment.kind);
    if (k && !k->has_links)
      throw InputError(
          where, "pcap",
          fmt::format("experiment '{}' builds no Ethernet link to capture", s.experiment.kind));
  }
  if (!s.outputs.trace.empty() && s.outputs.trace != "fst" && s.outputs.trace != "vcd")
    throw InputError(where, "trace", fmt::format("'{}' is not fst or vcd", s.outputs.trace));
  if (s.outputs.trace == "vcd")
    throw InputError(where, "trace",
                     "vcd is not built (the RTL blocks are Verilated for FST); use fst");
  if (s.outputs.trace.empty() &&
      (!s.outputs.trace_window.empty() || !s.outputs.trace_scope.empty()))
    throw InputError(where, s.outputs.trace_window.empty() ? "trace_scope" : "trace_window",
                     "has no effect without --trace fst");
  uint64_t t0, t1;
  parse_trace_window(s.outputs.trace_window, where, &t0, &t1);
  if (!s.outputs.timeline.empty())
    throw InputError(where, "timeline", "the timeline is not built yet");
}

}  // namespace

Scenario options_scenario(const RunOptions& opt) {
  Scenario s;
  s.file = "(command line)";
  if (!opt.preset.empty()) s.preset = opt.preset;
  s.config = preset_config(s.preset, "--preset");
  apply_options(s, opt);
  s.config.check("--set");
  check_capabilities(s, "options");
  return s;
}

Scenario load_scenario(const std::string& file, const RunOptions& opt) {
  std::ifstream in(file);
  if (!in) throw InputError(file, "(file)", "cannot open the scenario file");
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}", file, e.mark.line + 1), "(syntax)",
                     "malformed YAML: " + e.msg);
  }
  if (!root.IsMap()) throw InputError(file + ":1", "(top)", "a scenario is a map of keys");
  only_keys(file, "", root,
            {"name", "preset", "seed", "set", "topology", "workloads", "faults", "rtl", "outputs",
             "experiment"});
  Scenario s;
  s.file = file;
  if (root["name"]) s.name = scalar(file, "name", root["name"]);
  std::string preset_where = "--preset";
  if (root["preset"]) {
    s.preset = scalar(file, "preset", root["preset"]);
    preset_where = at(file, root["preset"]);
  }
  if (!opt.preset.empty()) s.preset = opt.preset;
  s.config = preset_config(s.preset, opt.preset.empty() ? preset_where : "--preset");
  if (root["seed"])
    s.config.set("sim.seed", scalar(file, "seed", root["seed"]), at(file, root["seed"]));
  if (const YAML::Node set = root["set"]) {
    require_map(file, "set", set);
    std::vector<std::pair<std::string, YAML::Node>> kv;
    flatten(file, "", set, &kv);
    for (const auto& [k, v] : kv) s.config.set(k, scalar(file, k, v), at(file, v));
  }
  if (const YAML::Node t = root["topology"]) {
    require_map(file, "topology", t);
    only_keys(file, "topology", t, {"hosts", "switches", "links"});
    if (const YAML::Node h = t["hosts"]) {
      if (!h.IsSequence())
        throw InputError(at(file, h), "topology.hosts", "expected a list of hosts");
      if (h.size() > 1) not_built(file, h, "topology.hosts", "more than one host (the network)");
      for (const auto& e : h) {
        require_map(file, "topology.hosts", e);
        only_keys(file, "topology.hosts", e, {"name"});
      }
    }
    if (t["switches"] && t["switches"].size())
      not_built(file, t["switches"], "topology.switches", "the switch");
    if (t["links"] && t["links"].size())
      not_built(file, t["links"], "topology.links", "the Ethernet link");
  }
  if (root["workloads"] && root["workloads"].size())
    not_built(file, root["workloads"], "workloads", "verbs workloads");
  if (root["faults"] && root["faults"].size())
    not_built(file, root["faults"], "faults", "fault injection");
  if (const YAML::Node r = root["rtl"]) {
    if (r.IsScalar())
      s.rtl.push_back(r.Scalar());
    else if (r.IsSequence())
      for (const auto& b : r) s.rtl.push_back(scalar(file, "rtl", b));
    else
      throw InputError(at(file, r), "rtl", "expected a block name or a list of them");
  }
  if (const YAML::Node o = root["outputs"]) {
    require_map(file, "outputs", o);
    only_keys(file, "outputs", o,
              {"pcap", "pcap_fcs", "trace", "trace_window", "trace_scope", "timeline",
               "stats_interval_ns"});
    if (o["pcap"]) s.outputs.pcap = to_bool(file, "outputs.pcap", o["pcap"]);
    if (o["pcap_fcs"]) s.outputs.pcap_fcs = to_bool(file, "outputs.pcap_fcs", o["pcap_fcs"]);
    if (o["trace"]) s.outputs.trace = scalar(file, "outputs.trace", o["trace"]);
    if (o["trace_window"])
      s.outputs.trace_window = scalar(file, "outputs.trace_window", o["trace_window"]);
    if (o["trace_scope"])
      s.outputs.trace_scope = scalar(file, "outputs.trace_scope", o["trace_scope"]);
    if (o["timeline"]) s.outputs.timeline = scalar(file, "outputs.timeline", o["timeline"]);
    if (o["stats_interval_ns"])
      s.config.set("sim.stats_interval_ns",
                   scalar(file, "outputs.stats_interval_ns", o["stats_interval_ns"]),
                   at(file, o["stats_interval_ns"]));
  }
  if (const YAML::Node e = root["experiment"]) {
    require_map(file, "experiment", e);
    if (!e["kind"])
      throw InputError(at(file, e), "experiment.kind", "missing (which measurement to run)");
    s.has_experiment = true;
    s.experiment.where = at(file, e);
    s.experiment.kind = scalar(file, "experiment.kind", e["kind"]);
    const ExperimentKind* k = find_experiment(s.experiment.kind);
    if (!k) {
      std::string list;
      for (const auto& x : experiment_kinds()) list += (list.empty() ? "" : ", ") + x.kind;
      throw InputError(at(file, e["kind"]), "experiment.kind",
                       fmt::format("unknown kind '{}' (known: {})", s.experiment.kind, list));
    }
    s.experiment.name = e["name"] ? scalar(file, "experiment.name", e["name"]) : s.experiment.kind;
    std::set<std::string> known = {"kind", "name"};
    for (const auto& key : k->keys) known.insert(key.key);
    only_keys(file, "experiment", e, known);
    for (const auto& key : k->keys) {
      if (!e[key.key]) continue;
      check_experiment_key(key, e[key.key], at(file, e[key.key]));
      s.experiment.nodes[key.key] = e[key.key];
    }
  }
  // The scenario's own overrides go first, then the command line's.
  apply_options(s, opt);
  s.config.check(file);
  check_capabilities(s, file);
  return s;
}

}  // namespace rnic
