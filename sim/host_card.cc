#include "sim/host_card.h"

#include <fmt/format.h>

namespace rnic {

Host::Host(const SystemConfig& c, StatRegistry& stats, const std::string& os_group)
    : cfg(c),
      stats(stats),
      mem(c.host),
      link("pcie", c.pcie, stats),
      rc("rc", mem, link, c.pcie, c.cost, stats),
      os(mem, rc, c.cost, stats, os_group) {
  os.set_free_pages(uint64_t(c.host.free_mib) * 256);
  os.set_llc_bytes(uint64_t(c.host.llc_kib) * 1024);
  os.set_l1_bytes(uint64_t(c.host.l1d_kib) * 1024);
  bar0 = c.host.hole_mib > 0 ? uint64_t(c.host.hole_base_mib) << 20 : mem.size();
  bar2 = bar0 + (16ull << 20);
}

void Host::trace(TraceSink& t) const {
  link.trace(t);
  rc.trace(t);
}

void Host::configure(const SystemConfig& c) {
  cfg = c;
  link.configure(c.pcie);
  rc.configure(c.pcie, c.cost);
  os.configure(c.cost);
}

std::string nonzero_stats(const StatRegistry& stats) {
  std::string s;
  const nlohmann::ordered_json all = stats.json();  // items() below refers into it
  for (const auto& [group, v] : all.items()) {
    std::string line;
    for (const auto& [k, x] : v.items())
      if (x.contains("value") && x["value"] != 0)
        line += fmt::format(" {}={}", k, x["value"].dump());
    if (!line.empty()) s += fmt::format("  {}:{}\n", group, line);
  }
  return s;
}

std::string Host::dump_state() const { return link.describe(); }

HostCard::HostCard(const SystemConfig& c, StatRegistry& stats, bool sample,
                   const std::string& os_group, const DmacCoreFactory& dmac_core)
    : Host(c, stats, os_group), card(c.card(), link, stats, dmac_core) {
  card.map(bar0, bar2);
  if (sample)
    background.every(uint64_t(c.sim.stats_interval_ns) * 1000,
                     [&stats](uint64_t t) { stats.sample(t); });
}

void HostCard::trace(TraceSink& t) const {
  Host::trace(t);
  card.trace(t);
}

void HostCard::configure(const SystemConfig& c) {
  Host::configure(c);
  card.configure(c.card());
}

std::string HostCard::dump_state() const {
  return nonzero_stats(stats) + Host::dump_state() + card.dump_state();
}

void run_host_thread(HostCard& sys, const char* name, std::function<void()> fn) {
  run_control::run_threads(sys.cfg, sys.stats, sys.background, {{name, std::move(fn)}},
                           [&sys] { return sys.dump_state(); });
}

}  // namespace rnic
