#include "sim/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "sim/cluster.h"
#include "sim/exec/exec_process.h"
#include "sim/experiment.h"
#include "sim/numbers.h"
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

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 32 || !std::islower(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!std::islower(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

// Each element's index by its name (topology lists: hosts, switches): lookups stay linear in
// the topology's size.
template <class T>
std::unordered_map<std::string, int> index_by_name(const std::vector<T>& v) {
  std::unordered_map<std::string, int> m;
  for (size_t i = 0; i < v.size(); ++i) m.emplace(v[i].name, int(i));
  return m;
}

std::string mac_str(const MacAddr& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

bool parse_mac(const std::string& t, MacAddr* m) {
  unsigned v[6];
  char end;
  if (std::sscanf(t.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &end) != 6)
    return false;
  for (int i = 0; i < 6; ++i) (*m)[i] = uint8_t(v[i]);
  return true;
}

void parse_topology(const std::string& file, const YAML::Node& t, Scenario* s) {
  require_map(file, "topology", t);
  only_keys(file, "topology", t, {"hosts", "switches", "links"});
  // Names (and MACs) seen so far, with where: every check below is linear in the topology.
  std::unordered_map<std::string, std::string> names;
  if (const YAML::Node w = t["switches"]) {
    if (!w.IsSequence())
      throw InputError(at(file, w), "topology.switches", "expected a list of switches");
    for (const auto& e : w) {
      require_map(file, "topology.switches", e);
      only_keys(file, "topology.switches", e, {"name", "set"});
      SwitchTopo st;
      st.where = at(file, e);
      if (!e["name"]) throw InputError(st.where, "topology.switches.name", "missing");
      st.name = scalar(file, "topology.switches.name", e["name"]);
      if (!valid_name(st.name))
        throw InputError(at(file, e["name"]), "topology.switches.name",
                         fmt::format("'{}' is not a name", st.name));
      if (!names.emplace(st.name, st.where).second)
        throw InputError(at(file, e["name"]), "topology.switches.name",
                         fmt::format("'{}' names two switches", st.name));
      if (const YAML::Node set = e["set"]) {
        require_map(file, "topology.switches.set", set);
        std::vector<std::pair<std::string, YAML::Node>> kv;
        flatten(file, "", set, &kv);
        for (const auto& [k, v] : kv) {
          if (k.rfind("switch.", 0) != 0)
            throw InputError(at(file, v), "topology.switches.set." + k,
                             "a switch sets only its own switch. keys");
          SystemConfig probe;
          probe.set(k, scalar(file, k, v), at(file, v));
          st.sets.push_back({k, scalar(file, k, v)});
        }
      }
      s->switches.push_back(std::move(st));
    }
  }
  std::unordered_set<std::string> hosts_seen;
  struct MacOf {
    MacAddr mac;
    size_t order;
    std::string where, host;
  };
  std::vector<MacOf> macs;
  struct IpOf {
    uint32_t ip;
    size_t order;
    std::string where, host;
  };
  std::vector<IpOf> ips;
  if (const YAML::Node h = t["hosts"]) {
    if (!h.IsSequence())
      throw InputError(at(file, h), "topology.hosts", "expected a list of hosts");
    if (h.size() == 0) throw InputError(at(file, h), "topology.hosts", "the list is empty");
    for (const auto& e : h) {
      require_map(file, "topology.hosts", e);
      only_keys(file, "topology.hosts", e, {"name", "mac", "ip", "set"});
      HostTopo ht;
      ht.where = at(file, e);
      if (!e["name"]) throw InputError(ht.where, "topology.hosts.name", "missing");
      ht.name = scalar(file, "topology.hosts.name", e["name"]);
      if (!valid_name(ht.name))
        throw InputError(at(file, e["name"]), "topology.hosts.name",
                         fmt::format("'{}' is not a name: a lower-case letter, then letters, "
                                     "digits or _ (at most 32)",
                                     ht.name));
      if (const auto [it, fresh] = names.emplace(ht.name, ht.where); !fresh)
        throw InputError(at(file, e["name"]), "topology.hosts.name",
                         fmt::format(hosts_seen.count(ht.name) ? "'{}' names two hosts"
                                                               : "'{}' names a host and a switch",
                                     ht.name));
      hosts_seen.insert(ht.name);
      ht.mac = default_mac(int(s->hosts.size()));
      if (e["mac"] && !parse_mac(scalar(file, "topology.hosts.mac", e["mac"]), &ht.mac))
        throw InputError(at(file, e["mac"]), "topology.hosts.mac",
                         "expected six hex bytes as 02:00:00:00:00:05");
      if (ht.mac[0] & 1)
        throw InputError(at(file, e["mac"]), "topology.hosts.mac", "a multicast address");
      if (ht.mac == MacAddr{})
        throw InputError(at(file, e["mac"]), "topology.hosts.mac",
                         "00:00:00:00:00:00 is no station's address");
      macs.push_back({ht.mac, macs.size(), at(file, e["mac"] ? e["mac"] : e), ht.name});
      ht.ip = default_ip(int(s->hosts.size()));
      if (e["ip"]) {
        const std::string v = scalar(file, "topology.hosts.ip", e["ip"]);
        unsigned q[4];
        char tail;
        if (std::sscanf(v.c_str(), "%u.%u.%u.%u%c", &q[0], &q[1], &q[2], &q[3], &tail) != 4 ||
            q[0] > 255 || q[1] > 255 || q[2] > 255 || q[3] > 255)
          throw InputError(at(file, e["ip"]), "topology.hosts.ip",
                           fmt::format("'{}': expected an IPv4 address as 192.168.0.10", v));
        ht.ip = q[0] << 24 | q[1] << 16 | q[2] << 8 | q[3];
        // A station's unicast address: not 0.0.0.0/8, loopback, multicast or above.
        if (q[0] == 0 || q[0] == 127 || q[0] >= 224)
          throw InputError(at(file, e["ip"]), "topology.hosts.ip",
                           fmt::format("{} is not a station's unicast address", v));
      }
      ips.push_back({ht.ip, ips.size(), at(file, e["ip"] ? e["ip"] : e), ht.name});
      if (const YAML::Node set = e["set"]) {
        require_map(file, "topology.hosts.set", set);
        std::vector<std::pair<std::string, YAML::Node>> kv;
        flatten(file, "", set, &kv);
        for (const auto& [k, v] : kv) {
          const std::string prefix = k.substr(0, k.find('.'));
          if (prefix != "core" && prefix != "pcie" && prefix != "host" && prefix != "cost" &&
              prefix != "mac" && prefix != "card" && prefix != "tcp")
            throw InputError(at(file, v), "topology.hosts.set." + k,
                             "a host sets only its own card and host (core., pcie., host., "
                             "cost., mac., card., tcp.)");
          SystemConfig probe;
          probe.set(k, scalar(file, k, v), at(file, v));  // checks key, type and range now
          ht.sets.push_back({k, scalar(file, k, v)});
        }
      }
      s->hosts.push_back(std::move(ht));
    }
  }
  // Two hosts with one MAC: the EFE and the switches could not tell them apart.
  std::sort(macs.begin(), macs.end(), [](const MacOf& a, const MacOf& b) {
    return a.mac != b.mac ? a.mac < b.mac : a.order < b.order;
  });
  for (size_t i = 1; i < macs.size(); ++i)
    if (macs[i].mac == macs[i - 1].mac)
      throw InputError(macs[i].where, "topology.hosts.mac",
                       fmt::format("{} is host '{}''s MAC too ({}): each host needs its own",
                                   mac_str(macs[i].mac), macs[i - 1].host, macs[i - 1].where));
  // Nor one IPv4 address (given, or a host's default): MPA/TCP and the connection manager
  // address hosts by it.
  std::sort(ips.begin(), ips.end(), [](const IpOf& a, const IpOf& b) {
    return a.ip != b.ip ? a.ip < b.ip : a.order < b.order;
  });
  for (size_t i = 1; i < ips.size(); ++i)
    if (ips[i].ip == ips[i - 1].ip)
      throw InputError(
          ips[i].where, "topology.hosts.ip",
          fmt::format("{}.{}.{}.{} is host '{}''s address too ({}): each host needs its own",
                      ips[i].ip >> 24, (ips[i].ip >> 16) & 255, (ips[i].ip >> 8) & 255,
                      ips[i].ip & 255, ips[i - 1].host, ips[i - 1].where));
  if (const YAML::Node l = t["links"]) {
    if (!l.IsSequence())
      throw InputError(at(file, l), "topology.links", "expected a list of links");
    std::unordered_map<std::string, std::string> link_names;
    for (const auto& e : l) {
      require_map(file, "topology.links", e);
      only_keys(file, "topology.links", e, {"name", "between", "rate_gbps", "length_m", "prop_ns"});
      LinkTopo lt;
      lt.where = at(file, e);
      lt.name = e["name"] ? scalar(file, "topology.links.name", e["name"])
                          : fmt::format("link{}", s->links.size());
      if (!valid_name(lt.name))
        throw InputError(lt.where, "topology.links.name",
                         fmt::format("'{}' is not a name", lt.name));
      if (const auto [it, fresh] = link_names.emplace(lt.name, lt.where); !fresh)
        throw InputError(lt.where, "topology.links.name",
                         fmt::format("'{}' names two links (the other: {}){}", lt.name, it->second,
                                     e["name"] ? "" : "; name this one"));
      const YAML::Node b = e["between"];
      if (!b || !b.IsSequence() || b.size() != 2)
        throw InputError(b ? at(file, b) : lt.where, "topology.links.between",
                         "expected the two hosts the link joins: [h0, h1]");
      lt.a = scalar(file, "topology.links.between", b[0]);
      lt.b = scalar(file, "topology.links.between", b[1]);
      if (e["rate_gbps"]) {
        SystemConfig probe;
        probe.set("mac.rate_gbps", scalar(file, "topology.links.rate_gbps", e["rate_gbps"]),
                  at(file, e["rate_gbps"]));
        lt.rate_gbps = probe.mac.rate_gbps;
      }
      if (e["length_m"] && e["prop_ns"])
        throw InputError(lt.where, "topology.links", "give length_m or prop_ns, not both");
      if (e["length_m"] || e["prop_ns"]) {
        const YAML::Node n = e["length_m"] ? e["length_m"] : e["prop_ns"];
        const std::string key =
            e["length_m"] ? "topology.links.length_m" : "topology.links.prop_ns";
        SystemConfig probe;
        try {
          probe.set("link.prop_ns", scalar(file, key, n), at(file, n));
        } catch (const InputError& err) {
          throw InputError(err.where, key, err.reason);  // the key as the user wrote it
        }
        // A signal crosses a metre of fibre or twinax in about 5 ns.
        lt.prop_ns = e["length_m"] ? probe.link.prop_ns * 5 : probe.link.prop_ns;
        try {
          probe.set("link.prop_ns", std::to_string(lt.prop_ns), at(file, n));
        } catch (const InputError&) {
          throw InputError(at(file, n), key,
                           fmt::format("{} m is {} ns of propagation (5 ns/m), beyond "
                                       "link.prop_ns's range",
                                       probe.link.prop_ns, lt.prop_ns));
        }
      }
      s->links.push_back(std::move(lt));
    }
  }
}

// A `program:` workload: the shared object (which must exist), its hosts (at least one) and
// their arguments (a list of strings for all, or one list per host). An `exec:` workload: the
// executable and its first arguments (a list, or one string), the executable looked up as a
// shell would (exec::resolve_executable), then the same hosts and arguments.
void parse_program(const std::string& file, const YAML::Node& e, WorkloadSpec* ws, Scenario* s) {
  if (e["exec"]) {
    only_keys(file, "workloads", e, {"name", "exec", "hosts", "args", "start_us"});
    if (e["start_us"]) {
      const std::string v = scalar(file, "workloads.start_us", e["start_us"]);
      if (!parse_real(v, &ws->start_us).empty() || ws->start_us < 0 || ws->start_us > 1e9)
        throw InputError(at(file, e["start_us"]), "workloads.start_us",
                         fmt::format("'{}' is not a time in us (0 .. 1e9)", v));
    }
    const YAML::Node& x = e["exec"];
    std::vector<std::string> argv;
    if (x.IsSequence())
      for (const auto& a : x) argv.push_back(scalar(file, "workloads.exec", a));
    else
      argv.push_back(scalar(file, "workloads.exec", x));
    if (argv.empty())
      throw InputError(at(file, x), "workloads.exec", "expected the program and its arguments");
    std::string why;
    ws->program = exec::resolve_executable(argv[0], &why);
    if (ws->program.empty()) throw InputError(at(file, x), "workloads.exec", why);
    if (exec::preload_library().empty())
      throw InputError(at(file, x), "workloads.exec",
                       "librnicsim_exec.so (the preload library) is not beside rnicsim nor in "
                       "../lib/rnicsim: build it (./scripts/build)");
    ws->exec = true;
    ws->exec_args.assign(argv.begin() + 1, argv.end());
  } else {
    only_keys(file, "workloads", e, {"name", "program", "hosts", "args"});
    ws->program = scalar(file, "workloads.program", e["program"]);
    if (!std::filesystem::is_regular_file(ws->program))
      throw InputError(
          at(file, e["program"]), "workloads.program",
          fmt::format("'{}' is not a file (a path from the working directory)", ws->program));
  }
  if (!e["hosts"] || !e["hosts"].IsSequence() || e["hosts"].size() == 0)
    throw InputError(ws->where, "workloads.hosts", "expected a list of the hosts to run it on");
  for (const auto& h : e["hosts"]) ws->hosts.push_back(scalar(file, "workloads.hosts", h));
  if (e["args"]) {
    const YAML::Node& a = e["args"];
    if (!a.IsSequence())
      throw InputError(at(file, a), "workloads.args", "expected a list (or one list per host)");
    const bool per_host = a.size() > 0 && a[0].IsSequence();
    if (per_host && a.size() != ws->hosts.size())
      throw InputError(at(file, a), "workloads.args",
                       fmt::format("{} lists for {} hosts", a.size(), ws->hosts.size()));
    for (size_t i = 0; i < (per_host ? a.size() : 1); ++i) {
      const YAML::Node& l = per_host ? a[i] : a;
      if (!l.IsSequence())
        throw InputError(at(file, l), "workloads.args", "expected a list of strings");
      std::vector<std::string> v;
      for (const auto& x : l) v.push_back(scalar(file, "workloads.args", x));
      ws->args.push_back(std::move(v));
    }
  }
  ws->name = e["name"] ? scalar(file, "workloads.name", e["name"])
                       : fmt::format("program_{}", s->workloads.size());
  if (!valid_name(ws->name))
    throw InputError(ws->where, "workloads.name", fmt::format("'{}' is not a name", ws->name));
  for (const auto& o : s->workloads)
    if (o.name == ws->name)
      throw InputError(ws->where, "workloads.name",
                       fmt::format("'{}' names two workloads", ws->name));
  s->workloads.push_back(std::move(*ws));
}

void parse_workloads(const std::string& file, const YAML::Node& w, Scenario* s) {
  if (!w.IsSequence()) throw InputError(at(file, w), "workloads", "expected a list of workloads");
  for (const auto& e : w) {
    require_map(file, "workloads", e);
    WorkloadSpec ws;
    ws.where = at(file, e);
    if (e["program"] || e["exec"]) {
      parse_program(file, e, &ws, s);
      continue;
    }
    if (!e["test"]) {
      std::string list;
      for (const auto& k : workload_kinds()) list += (list.empty() ? "" : ", ") + k.kind;
      throw InputError(ws.where, "workloads.test", fmt::format("missing (one of {})", list));
    }
    ws.test = scalar(file, "workloads.test", e["test"]);
    const ExperimentKind* k = find_workload(ws.test);
    if (!k) {
      std::string list;
      for (const auto& x : workload_kinds()) list += (list.empty() ? "" : ", ") + x.kind;
      throw InputError(at(file, e["test"]), "workloads.test",
                       fmt::format("unknown test '{}' (known: {})", ws.test, list));
    }
    std::set<std::string> known = {"name", "test", "from", "to", "start_us"};
    for (const auto& key : k->keys) known.insert(key.key);
    only_keys(file, "workloads", e, known);
    ws.name = e["name"] ? scalar(file, "workloads.name", e["name"])
                        : fmt::format("{}_{}", ws.test, s->workloads.size());
    if (!valid_name(ws.name))
      throw InputError(ws.where, "workloads.name", fmt::format("'{}' is not a name", ws.name));
    for (const auto& o : s->workloads)
      if (o.name == ws.name)
        throw InputError(ws.where, "workloads.name",
                         fmt::format("'{}' names two workloads", ws.name));
    ws.from = e["from"] ? scalar(file, "workloads.from", e["from"]) : "";
    ws.to = e["to"] ? scalar(file, "workloads.to", e["to"]) : "";
    if (e["start_us"]) {
      const std::string v = scalar(file, "workloads.start_us", e["start_us"]);
      if (!parse_real(v, &ws.start_us).empty() || ws.start_us < 0 || ws.start_us > 1e9)
        throw InputError(at(file, e["start_us"]), "workloads.start_us",
                         fmt::format("'{}' is not a time in us (0 .. 1e9)", v));
    }
    // One way to give the sizes (perf refuses -s with -a alike).
    if (e["size"] && e["sizes"])
      throw InputError(at(file, e["sizes"]), "workloads.sizes",
                       "give size or sizes, not both (sizes would win)");
    if (e["all"] && (e["size"] || e["sizes"]))
      throw InputError(at(file, e["all"]), "workloads.all",
                       "all runs every size: give it without size or sizes");
    for (const auto& key : k->keys) {
      if (!e[key.key]) continue;
      try {
        check_experiment_key(key, e[key.key], at(file, e[key.key]));
      } catch (const InputError& err) {
        throw InputError(err.where, "workloads." + key.key, err.reason);
      }
      ws.nodes[key.key] = e[key.key];
    }
    s->workloads.push_back(std::move(ws));
  }
}

// The command line's options over a scenario whose preset and file keys are already applied
// (the preset itself is chosen by the callers, before anything else).
void apply_options(Scenario& s, const RunOptions& opt) {
  if (!opt.seed.empty()) s.config.set("sim.seed", opt.seed, "--seed " + opt.seed);
  for (const auto& kv : opt.sets) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--set " + kv, kv, "expected key=value");
    s.config.set(kv.substr(0, eq), kv.substr(eq + 1), "--set " + kv);
  }
  for (const auto& b : opt.rtl) s.rtl.push_back(b);
  if (opt.pcap) s.outputs.pcap = true;
  if (!opt.trace.empty()) {
    s.outputs.trace = opt.trace;
    s.outputs.trace_where = "--trace " + opt.trace;
  }
  if (!opt.trace_window.empty()) {
    s.outputs.trace_window = opt.trace_window;
    s.outputs.window_where = "--trace-window " + opt.trace_window;
  }
  if (!opt.trace_scope.empty()) s.outputs.trace_scope = opt.trace_scope;
  if (!opt.timeline.empty()) s.outputs.timeline = opt.timeline;
  if (!opt.timeline_window.empty()) s.outputs.timeline_window = opt.timeline_window;
  if (opt.breakdown) s.outputs.breakdown = true;
}

// Capabilities that runs of this version can honour.
void check_topology(const Scenario& s, const std::string& where) {
  if (s.has_experiment && !s.workloads.empty())
    throw InputError(s.workloads[0].where, "workloads",
                     "a scenario runs an experiment or workloads, not both");
  if (s.has_experiment && (s.hosts.size() > 1 || !s.links.empty()))
    throw InputError(s.hosts.size() > 1 ? s.hosts[1].where : s.links[0].where, "topology",
                     fmt::format("experiment '{}' runs on one host; hosts and links are for "
                                 "workloads",
                                 s.experiment.kind));
  if (s.has_experiment && !s.faults.empty())
    throw InputError(s.faults[0].where, "faults",
                     "an experiment runs on one host, with no link to put a fault on");
  if (s.has_experiment) return;
  if (!s.hosts.empty() && s.hosts.size() < 2 && !s.workloads.empty())
    throw InputError(s.hosts[0].where, "topology.hosts", "workloads need at least two hosts");
  if (!s.switches.empty() && s.hosts.empty())
    throw InputError(s.switches[0].where, "topology.hosts", "switches need hosts to join");
  // Linear in the topology: names looked up in maps (a topology may hold 100,000 hosts).
  const auto host_index = index_by_name(s.hosts), switch_index = index_by_name(s.switches);
  for (const SwitchTopo& w : s.switches)
    if (host_index.count(w.name))
      throw InputError(w.where, "topology.switches.name",
                       fmt::format("'{}' names a host and a switch", w.name));
  std::unordered_map<std::string, std::string> port_taken;  // host -> the link that has it
  for (size_t i = 0; i < s.links.size(); ++i) {
    const LinkTopo& l = s.links[i];
    for (const std::string& h : {l.a, l.b})
      if (!host_index.count(h) && !switch_index.count(h))
        throw InputError(l.where, "topology.links.between",
                         fmt::format("no host or switch '{}'", h));
    if (l.a == l.b)
      throw InputError(l.where, "topology.links.between",
                       fmt::format("the link joins '{}' to itself: a link joins two different "
                                   "ends",
                                   l.a));
    for (const std::string& h : {l.a, l.b}) {
      if (!host_index.count(h)) continue;
      if (const auto [it, fresh] = port_taken.emplace(h, l.where); !fresh)
        throw InputError(l.where, "topology.links.between",
                         fmt::format("host '{}' has one Ethernet port, and the link of {} takes "
                                     "it already (join several hosts through a switch)",
                                     h, it->second));
    }
  }
  const Topology topo = build_topology(s);
  for (size_t i = 0; i < topo.links.size(); ++i) {
    const LinkSpec& l = topo.links[i];
    for (int end : {l.sw_a < 0 ? l.a : -1, l.sw_b < 0 ? l.b : -1}) {
      if (end < 0) continue;
      const double gbps = topo.hosts[size_t(end)].cfg.core.gbps();
      if (gbps < double(l.params.rate_gbps))
        throw InputError(s.links.empty() ? where : s.links[i].where, "topology.links.rate_gbps",
                         fmt::format("host '{}''s core carries {:.1f} Gb/s, below the link's {} "
                                     "Gb/s",
                                     topo.hosts[size_t(end)].name, gbps, l.params.rate_gbps));
    }
  }
  const auto topo_index = index_by_name(topo.hosts);
  // Two cards a workload connects carry RDMA the same way: an EFE card and an MPA/TCP card do
  // not understand each other's frames.
  auto same_transport = [&](const WorkloadSpec& w, const char* key, int a, int b) {
    const std::string& ta = topo.hosts[size_t(a)].cfg.transport;
    const std::string& tb = topo.hosts[size_t(b)].cfg.transport;
    if (ta != tb)
      throw InputError(w.where, key,
                       fmt::format("'{}' has card.transport {} and '{}' has {}: the cards a "
                                   "workload connects must use the same transport",
                                   topo.hosts[size_t(a)].name, ta, topo.hosts[size_t(b)].name, tb));
  };
  for (const WorkloadSpec& w : s.workloads) {
    auto host = [&](const std::string& n) {
      const auto it = topo_index.find(n);
      return it == topo_index.end() ? -1 : it->second;
    };
    if (!w.program.empty()) {
      for (const std::string& h : w.hosts)
        if (host(h) < 0)
          throw InputError(w.where, "workloads.hosts", fmt::format("no host '{}'", h));
      // The hosts of one program talk to each other: each must reach the first.
      if (w.hosts.size() > 1) {
        const std::vector<int> hops = topo.hops_to(host(w.hosts[0]));
        for (const std::string& h : w.hosts)
          if (h != w.hosts[0] && hops[size_t(host(h))] <= 0)
            throw InputError(w.where, "workloads.hosts",
                             fmt::format("no link joins '{}' and '{}', directly or through "
                                         "switches: the program's hosts cannot reach each other",
                                         w.hosts[0], h));
        for (const std::string& h : w.hosts)
          same_transport(w, "workloads.hosts", host(w.hosts[0]), host(h));
      }
      continue;
    }
    const std::string from = w.from.empty() ? topo.hosts[0].name : w.from;
    const std::string to = w.to.empty() ? topo.hosts[1].name : w.to;
    if (host(from) < 0)
      throw InputError(w.where, "workloads.from", fmt::format("no host '{}'", from));
    if (host(to) < 0) throw InputError(w.where, "workloads.to", fmt::format("no host '{}'", to));
    if (from == to)
      throw InputError(w.where, "workloads.to", "a workload runs between two different hosts");
    if (!topo.reachable(host(from), host(to)))
      throw InputError(
          w.where, "workloads",
          fmt::format("no link joins '{}' and '{}', directly or through switches", from, to));
    same_transport(w, "workloads", host(from), host(to));
  }
}

void check_capabilities(Scenario& s, const std::string& where) {
  s.impl = resolve_implementations(s.rtl, s.config, where);
  s.impl.traced = !s.outputs.trace.empty();
  if (s.impl.traced)
    for (const BlockInfo& b : blocks()) {
      if (!s.impl.rtl(b.name)) continue;
      const std::string why = b.waveform(int(s.config.core.datapath_bytes));
      if (!why.empty()) throw InputError(where, "rtl", why);
    }
  check_topology(s, where);
  if (s.outputs.pcap && s.has_experiment) {
    const ExperimentKind* k = find_experiment(s.experiment.kind);
    if (k && !k->has_links)
      throw InputError(
          where, "pcap",
          fmt::format("experiment '{}' builds no Ethernet link to capture", s.experiment.kind));
  }
  if (!s.outputs.timeline.empty() && s.has_experiment) {
    const ExperimentKind* k = find_experiment(s.experiment.kind);
    if (k && !k->has_links)
      throw InputError(where, "timeline",
                       fmt::format("experiment '{}' builds no hosts joined by links: its work "
                                   "requests have no stages to show",
                                   s.experiment.kind));
  }
  if (s.outputs.breakdown &&
      std::none_of(s.workloads.begin(), s.workloads.end(), [](const WorkloadSpec& w) {
        return w.test == "write_lat" || w.test == "send_lat" || w.test == "read_lat";
      }))
    throw InputError(where, "breakdown",
                     "takes latency workloads apart (write_lat, send_lat, read_lat): this run has "
                     "none");
  // An option's error names the option, not the scenario file.
  const std::string trace_at = s.outputs.trace_where.empty() ? where : s.outputs.trace_where;
  const std::string window_at = s.outputs.window_where.empty() ? where : s.outputs.window_where;
  if (!s.outputs.trace.empty() && s.outputs.trace != "fst" && s.outputs.trace != "vcd")
    throw InputError(trace_at, "trace", fmt::format("'{}' is not fst or vcd", s.outputs.trace));
  if (s.outputs.trace == "vcd")
    throw InputError(trace_at, "trace",
                     "vcd is not built (the RTL blocks are Verilated for FST); use fst");
  if (s.outputs.trace.empty() &&
      (!s.outputs.trace_window.empty() || !s.outputs.trace_scope.empty()))
    throw InputError(s.outputs.trace_window.empty() ? where : window_at,
                     s.outputs.trace_window.empty() ? "trace_scope" : "trace_window",
                     "has no effect without --trace fst");
  uint64_t t0, t1;
  parse_trace_window(s.outputs.trace_window, window_at, &t0, &t1);
  if (s.outputs.timeline.empty() && !s.outputs.timeline_window.empty())
    throw InputError(where, "timeline_window", "has no effect without --timeline FILE");
  parse_trace_window(s.outputs.timeline_window, where, &t0, &t1, "timeline_window");
}

void parse_faults(const std::string& file, const YAML::Node& f, Scenario* s) {
  if (!f.IsSequence()) throw InputError(at(file, f), "faults", "expected a list of link faults");
  std::unordered_map<std::string, std::string> seen;  // link -> its entry
  for (const auto& e : f) {
    require_map(file, "faults", e);
    only_keys(file, "faults", e, {"link", "loss", "ber", "down_us"});
    FaultSpec fs;
    fs.where = at(file, e);
    if (!e["link"]) throw InputError(fs.where, "faults.link", "which link: the name of one");
    fs.link = scalar(file, "faults.link", e["link"]);
    if (const auto [it, fresh] = seen.emplace(fs.link, fs.where); !fresh)
      throw InputError(fs.where, "faults.link",
                       fmt::format("link '{}' has a fault entry already ({}): give its loss, ber "
                                   "and down_us in one entry",
                                   fs.link, it->second));
    if (!e["loss"] && !e["ber"] && !e["down_us"])
      throw InputError(fs.where, "faults", "give loss, ber or down_us");
    SystemConfig probe;  // checks the numbers as link.loss and link.ber are checked
    if (e["loss"]) {
      probe.set("link.loss", scalar(file, "faults.loss", e["loss"]), at(file, e["loss"]));
      fs.has_loss = true;
      fs.loss = probe.link.loss;
      if (fs.loss >= 1)  // as meant, or 1 % written as 1: said either way
        fmt::print(stderr,
                   "rnicsim: note: {}: link '{}' loses every frame (faults.loss 1; a loss is a "
                   "fraction: 1 % is 0.01)\n",
                   at(file, e["loss"]), fs.link);
    }
    if (e["ber"]) {
      probe.set("link.ber", scalar(file, "faults.ber", e["ber"]), at(file, e["ber"]));
      fs.has_ber = true;
      fs.ber = probe.link.ber;
    }
    if (const YAML::Node d = e["down_us"]) {
      // One interval [from, to] or a list of them, in microseconds of simulated time.
      std::vector<YAML::Node> spans;
      if (d.IsSequence() && d.size() > 0 && d[0].IsSequence())
        for (const auto& x : d) spans.push_back(x);
      else
        spans.push_back(d);
      for (const YAML::Node& x : spans) {
        if (!x.IsSequence() || x.size() != 2)
          throw InputError(at(file, x), "faults.down_us",
                           "expected [from, to] in microseconds, or a list of them");
        int64_t v[2];
        for (int i = 0; i < 2; ++i)
          if (const std::string why = parse_int(scalar(file, "faults.down_us", x[i]), &v[i]);
              !why.empty())
            throw InputError(at(file, x[i]), "faults.down_us", why);
        if (v[0] < 0 || v[1] <= v[0] || v[1] > int64_t(1'000'000'000))
          throw InputError(
              at(file, x), "faults.down_us",
              fmt::format("[{}, {}] is not an interval 0 <= from < to <= 1e9 us", v[0], v[1]));
        fs.down_ps.push_back({uint64_t(v[0]) * 1000000, uint64_t(v[1]) * 1000000});
      }
    }
    s->faults.push_back(std::move(fs));
  }
}

void apply_faults(const Scenario& s, Topology* t) {
  for (const FaultSpec& f : s.faults) {
    LinkSpec* l = nullptr;
    for (LinkSpec& x : t->links)
      if (x.name == f.link) l = &x;
    if (!l) throw InputError(f.where, "faults.link", fmt::format("no link '{}'", f.link));
    if (f.has_loss) l->params.loss = f.loss;
    if (f.has_ber) l->params.ber = f.ber;
    l->params.down_ps.insert(l->params.down_ps.end(), f.down_ps.begin(), f.down_ps.end());
  }
}

}  // namespace

Topology build_topology(const Scenario& s) {
  Topology t;
  if (s.hosts.empty()) {
    t = two_hosts(s.config);
    apply_faults(s, &t);
    return t;
  }
  for (const HostTopo& h : s.hosts) {
    HostSpec hs{h.name, h.mac, s.config, h.ip};
    for (const auto& [k, v] : h.sets) hs.cfg.set(k, v, h.where);
    if (!h.sets.empty()) hs.cfg.check_pairs(h.where);  // its rate: the link checks below
    t.hosts.push_back(std::move(hs));
  }
  for (const SwitchTopo& w : s.switches) {
    SwitchSpec ss{w.name, s.config.sw};
    SystemConfig c = s.config;
    for (const auto& [k, v] : w.sets) c.set(k, v, w.where);
    if (!w.sets.empty()) c.check_pairs(w.where);
    ss.cfg = c.sw;
    t.switches.push_back(std::move(ss));
  }
  const auto host_index = index_by_name(s.hosts), switch_index = index_by_name(s.switches);
  // A host's own mac.rate_gbps is its port's line rate: the rate of the link it is on.
  auto own_rate = [&](int host) -> int64_t {
    for (const auto& [k, v] : s.hosts[size_t(host)].sets)
      if (k == "mac.rate_gbps") return t.hosts[size_t(host)].cfg.mac.rate_gbps;
    return 0;
  };
  for (const LinkTopo& l : s.links) {
    LinkSpec ls;
    ls.name = l.name;
    auto find = [](const std::unordered_map<std::string, int>& m, const std::string& n) {
      const auto it = m.find(n);
      return it == m.end() ? -1 : it->second;
    };
    if (find(host_index, l.a) >= 0) ls.a = find(host_index, l.a);
    if (find(host_index, l.b) >= 0) ls.b = find(host_index, l.b);
    ls.sw_a = find(switch_index, l.a);
    ls.sw_b = find(switch_index, l.b);
    ls.params = s.config.eth_link();
    // Without rate_gbps a link runs at its hosts' mac.rate_gbps (their own where they set
    // one); the two ends of a link run at one rate.
    int64_t rate = l.rate_gbps;
    std::string rate_from = "the link's rate_gbps";
    for (int end : {ls.sw_a < 0 ? ls.a : -1, ls.sw_b < 0 ? ls.b : -1}) {
      if (end < 0) continue;
      const int64_t r = t.hosts[size_t(end)].cfg.mac.rate_gbps;
      if (l.rate_gbps && !own_rate(end)) continue;  // the link's rate, as given
      const std::string who = fmt::format("host '{}''s mac.rate_gbps", s.hosts[size_t(end)].name);
      if (rate && rate != r)
        throw InputError(l.where, "topology.links.rate_gbps",
                         fmt::format("{} is {} Gb/s and {} {}: the two ends of a link run at one "
                                     "rate",
                                     rate_from, rate, who, r));
      rate = r;
      rate_from = who;
    }
    if (rate) ls.params.rate_gbps = rate;
    if (l.prop_ns >= 0) ls.params.prop_ns = l.prop_ns;
    t.links.push_back(ls);
  }
  apply_faults(s, &t);
  return t;
}

Scenario options_scenario(const RunOptions& opt, std::vector<WorkloadSpec> workloads) {
  Scenario s;
  s.file = "(command line)";
  s.workloads = std::move(workloads);
  if (!opt.preset.empty()) s.preset = opt.preset;
  s.config = preset_config(s.preset, "--preset");
  apply_options(s, opt);
  s.config.check("--set");
  check_capabilities(s, "options");
  return s;
}

namespace {
// The whole tree, before any key is read: no key twice in a map, keys are single values, at most
// kMaxDepth levels deep, and at most kMaxNodes nodes once aliases are expanded (an alias bomb is
// refused before it can exhaust memory).
constexpr int kMaxDepth = 32;
constexpr uint64_t kMaxNodes = 1000000;

void check_tree(const std::string& file, const YAML::Node& n, int depth, uint64_t* nodes) {
  if (++*nodes > kMaxNodes)
    throw InputError(at(file, n), "(file)",
                     fmt::format("more than {} values once its aliases are expanded", kMaxNodes));
  if (depth > kMaxDepth)
    throw InputError(at(file, n), "(file)", fmt::format("nested more than {} levels", kMaxDepth));
  if (n.IsMap()) {
    std::map<std::string, int> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar())
        throw InputError(at(file, kv.first), "(key)", "a key must be a single value");
      const std::string k = kv.first.Scalar();
      const int line = kv.first.Mark().line + 1;
      if (auto it = seen.find(k); it != seen.end())
        throw InputError(at(file, kv.first), k,
                         fmt::format("given twice (first on line {})", it->second));
      seen[k] = line;
      check_tree(file, kv.second, depth + 1, nodes);
    }
  } else if (n.IsSequence()) {
    for (const auto& e : n) check_tree(file, e, depth + 1, nodes);
  }
}
}  // namespace

// About how deep `text` nests, and on which line it is deepest (1-based): brackets and braces
// of flow style, indentation (two spaces a level) of block style. For the message of a file
// the parser gives up on.
std::pair<int, int> nesting_of(const std::string& text) {
  int depth = 0, deepest = 0, line = 1, at = 1, indent = 0;
  bool line_start = true;
  for (char c : text) {
    if (c == '\n') {
      ++line;
      indent = 0;
      line_start = true;
      continue;
    }
    if (line_start && c == ' ') {
      ++indent;
      continue;
    }
    if (line_start && c != '#' && indent / 2 > deepest) {
      deepest = indent / 2;
      at = line;
    }
    line_start = false;
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (depth > deepest) {
      deepest = depth;
      at = line;
    }
  }
  return {deepest, at};
}

Scenario load_scenario(const std::string& file, const RunOptions& opt) {
  std::ifstream in(file);
  if (!in) throw InputError(file, "(file)", "cannot open the scenario file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    // yaml-cpp gives up on deep nesting with a message that does not say so.
    if (const auto [depth, line] = nesting_of(text); depth > kMaxDepth)
      throw InputError(fmt::format("{}:{}", file, line), "(file)",
                       fmt::format("nested more than {} levels (about {} here)", kMaxDepth, depth));
    throw InputError(fmt::format("{}:{}", file, e.mark.line + 1), "(syntax)",
                     "malformed YAML: " + e.msg);
  }
  if (!root.IsMap()) throw InputError(file + ":1", "(top)", "a scenario is a map of keys");
  uint64_t nodes = 0;
  check_tree(file, root, 0, &nodes);
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
  if (const YAML::Node t = root["topology"]) parse_topology(file, t, &s);
  if (const YAML::Node w = root["workloads"]) parse_workloads(file, w, &s);
  if (const YAML::Node f = root["faults"]) parse_faults(file, f, &s);
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
               "timeline_window", "breakdown", "stats_interval_ns"});
    if (o["pcap"]) s.outputs.pcap = to_bool(file, "outputs.pcap", o["pcap"]);
    if (o["pcap_fcs"]) s.outputs.pcap_fcs = to_bool(file, "outputs.pcap_fcs", o["pcap_fcs"]);
    if (o["trace"]) s.outputs.trace = scalar(file, "outputs.trace", o["trace"]);
    if (o["trace_window"])
      s.outputs.trace_window = scalar(file, "outputs.trace_window", o["trace_window"]);
    if (o["trace_scope"])
      s.outputs.trace_scope = scalar(file, "outputs.trace_scope", o["trace_scope"]);
    if (o["timeline"]) s.outputs.timeline = scalar(file, "outputs.timeline", o["timeline"]);
    if (o["timeline_window"])
      s.outputs.timeline_window = scalar(file, "outputs.timeline_window", o["timeline_window"]);
    if (o["breakdown"]) s.outputs.breakdown = to_bool(file, "outputs.breakdown", o["breakdown"]);
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
