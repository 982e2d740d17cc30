#include "sim/cluster.h"

#include <fmt/format.h>

#include "models/host/verbs/verbs.h"
#include "sim/run_control.h"

namespace rnic {

MacAddr default_mac(int n) { return {0x02, 0, 0, 0, 0, uint8_t(n + 1)}; }

Topology two_hosts(const SystemConfig& cfg) {
  Topology t;
  for (int i = 0; i < 2; ++i) t.hosts.push_back({fmt::format("node{}", i), default_mac(i), cfg});
  t.links.push_back({"eth0", 0, 1, cfg.eth_link()});
  return t;
}

Node::Node(sc_core::sc_module_name n, int i, const HostSpec& spec, StatRegistry& stats,
           const Implementations& impl)
    : sc_core::sc_module(n),
      index(i),
      mac(spec.mac),
      cfg(spec.cfg),
      hc(cfg, stats, false, std::string(name()) + ".os"),
      port("mac", cfg.eth_mac(), stats, crc32_factory(impl)),
      efe("efe", port, mac, cfg.core.clk_mhz, cfg.efe, stats),
      core("core", cfg.core, cfg.mac, hc.dmac, hc.regs, efe, stats, rx_parse_factory(impl),
           xlat_factory(impl)),
      driver(std::string(name()) + ".driver", hc.mem, hc.rc, hc.os, hc.bar0, hc.bar2, mac,
             cfg.caps(), cfg.host, cfg.cost) {}

Cluster::Cluster(const SystemConfig& c, StatRegistry& s, const Implementations& impl)
    : Cluster(two_hosts(c), c, s, impl) {}

Cluster::Cluster(const Topology& topo, const SystemConfig& c, StatRegistry& s,
                 const Implementations& impl)
    : cfg(c), stats(s) {
  host::oob_clear();
  background.every(uint64_t(c.sim.stats_interval_ns) * 1000, [&s](uint64_t t) { s.sample(t); });
  for (size_t i = 0; i < topo.hosts.size(); ++i)
    nodes.push_back(
        std::make_unique<Node>(topo.hosts[i].name.c_str(), int(i), topo.hosts[i], s, impl));
  for (const LinkSpec& l : topo.links) {
    LinkParams p = l.params;
    p.seed = uint64_t(c.sim.seed) * 1000003 + links.size() + 1;  // each link its own draws
    links.push_back(
        std::make_unique<eth::EthLink>(l.name.c_str(), p, nodes[l.a]->port, nodes[l.b]->port, s));
    link_names.push_back(l.name);
  }
}

Cluster::~Cluster() = default;

int Cluster::find(const std::string& host) const {
  for (const auto& n : nodes)
    if (host == n->name()) return n->index;
  return -1;
}

void Cluster::run(const std::vector<std::function<void()>>& programs) {
  std::vector<Program> p;
  for (size_t i = 0; i < programs.size() && i < nodes.size(); ++i)
    if (programs[i]) p.push_back({int(i), programs[i]});
  run(p);
}

void Cluster::run(const std::vector<Program>& programs) {
  std::vector<std::pair<std::string, std::function<void()>>> threads;
  for (const Program& pr : programs) {
    Node& n = *nodes[size_t(pr.node)];
    if (!n.proc)
      n.proc = std::make_unique<host::Process>(
          n.hc.mem, n.cfg.host, uint64_t(cfg.sim.seed) * 7919 + uint64_t(n.index), pid_++);
    host::Process* proc = n.proc.get();
    threads.emplace_back(fmt::format("{}_proc{}_{}", n.name(), proc->pid(), runs_++),
                         [&n, proc, fn = pr.fn] {
                           host::bind_current_process({&n.driver, proc});
                           fn();
                           host::unbind_current_process();
                         });
  }
  run_control::run_threads(cfg, stats, background, threads, [this] { return dump_state(); });
}

std::string Cluster::dump_state() const {
  std::string s;
  for (const auto& n : nodes) {
    s += n->hc.dump_state();
    s += n->core.dump_state();
    s += n->efe.dump_state();
  }
  return s;
}

void Cluster::trace(TraceSink& t) const {
  for (const auto& n : nodes) {
    n->hc.trace(t);
    n->port.trace(t);
  }
}

}  // namespace rnic
