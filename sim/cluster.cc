#include "sim/cluster.h"

#include <fmt/format.h>

#include "models/host/verbs/verbs.h"
#include "sim/run_control.h"

namespace rnic {

Node::Node(sc_core::sc_module_name n, int i, const SystemConfig& cfg, StatRegistry& stats,
           eth::EthLink& eth)
    : sc_core::sc_module(n),
      index(i),
      mac{0x02, 0, 0, 0, 0, uint8_t(i + 1)},
      hc(cfg, stats, false, std::string(name()) + ".os"),
      efe("efe", eth, i, mac, cfg.core.clk_mhz, stats),
      core("core", cfg.core, cfg.mac, hc.dmac, hc.regs, efe, stats),
      driver(std::string(name()) + ".driver", hc.mem, hc.rc, hc.os, hc.bar0, hc.bar2, mac,
             cfg.caps(), cfg.host, cfg.cost) {}

Cluster::Cluster(const SystemConfig& c, StatRegistry& s, const Implementations& impl)
    : cfg(c),
      stats(s),
      background("background"),
      eth("eth0", c.eth_link(), s, crc32_factory(impl)) {
  background.every(uint64_t(c.sim.stats_interval_ns) * 1000,
                   [&s] { s.sample(sc_core::sc_time_stamp().value()); });
  for (int i = 0; i < kNodes; ++i)
    nodes.push_back(std::make_unique<Node>(fmt::format("node{}", i).c_str(), i, c, s, eth));
}

Cluster::~Cluster() = default;

void Cluster::run(const std::vector<std::function<void()>>& programs) {
  std::vector<std::pair<std::string, std::function<void()>>> threads;
  for (size_t i = 0; i < programs.size() && i < nodes.size(); ++i) {
    if (!programs[i]) continue;
    Node& n = *nodes[i];
    if (!n.proc)
      n.proc = std::make_unique<host::Process>(n.hc.mem, cfg.host,
                                               uint64_t(cfg.sim.seed) * 7919 + i, pid_++);
    host::Process* proc = n.proc.get();
    threads.emplace_back(fmt::format("node{}_proc{}_{}", i, proc->pid(), runs_++),
                         [&n, proc, fn = programs[i]] {
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
  }
  return s;
}

void Cluster::trace(TraceSink& t) const {
  for (const auto& n : nodes) n->hc.trace(t);
  eth.trace(t);
}

}  // namespace rnic
