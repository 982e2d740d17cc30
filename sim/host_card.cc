#include "sim/host_card.h"

#include <fmt/format.h>

namespace rnic {

HostCard::HostCard(const SystemConfig& c, StatRegistry& stats, bool sample,
                   const std::string& os_group, const DmacCoreFactory& dmac_core)
    : cfg(c),
      stats(stats),
      mem(c.host),
      link("pcie", c.pcie, stats),
      rc("rc", mem, link, c.pcie, c.cost, stats),
      card_if("card_pcie", link, c.pcie_if(), stats),
      dmac("card_dmac", card_if, c.dmac(), stats, dmac_core),
      regs(c.core),
      os(mem, rc, c.cost, stats, os_group) {
  os.set_free_pages(uint64_t(c.host.free_mib) * 256);
  os.set_llc_bytes(uint64_t(c.host.llc_kib) * 1024);
  os.set_l1_bytes(uint64_t(c.host.l1d_kib) * 1024);
  if (sample)
    background.every(uint64_t(c.sim.stats_interval_ns) * 1000,
                     [&stats](uint64_t t) { stats.sample(t); });
  bar0 = c.host.hole_mib > 0 ? uint64_t(c.host.hole_base_mib) << 20 : mem.size();
  bar2 = bar0 + (16ull << 20);
  card_if.set_bar(0, {bar0, 64 * 1024});
  card_if.set_bar(2, {bar2, uint64_t(c.core.qps) * reg::kQpPage});
  card_if.set_target(&regs);
}

void HostCard::trace(TraceSink& t) const {
  link.trace(t);
  rc.trace(t);
  dmac.trace(t);
}

void HostCard::configure(const SystemConfig& c) {
  cfg = c;
  link.configure(c.pcie);
  rc.configure(c.pcie, c.cost);
  card_if.configure(c.pcie_if());
  dmac.configure(c.dmac());
  os.configure(c.cost);
}

}  // namespace rnic

namespace rnic {

void run_host_thread(HostCard& sys, const char* name, std::function<void()> fn) {
  run_control::run_threads(sys.cfg, sys.stats, sys.background, {{name, std::move(fn)}},
                           [&sys] { return sys.dump_state(); });
}

std::string HostCard::dump_state() const {
  std::string s;
  const nlohmann::ordered_json all = stats.json();  // items() below refers into it
  for (const auto& [group, v] : all.items()) {
    std::string line;
    for (const auto& [k, x] : v.items())
      if (x.contains("value") && x["value"] != 0)
        line += fmt::format(" {}={}", k, x["value"].dump());
    if (!line.empty()) s += fmt::format("  {}:{}\n", group, line);
  }
  s += link.describe();
  s += fmt::format("  card_dmac: tags in use {}, reads in flight {}\n", dmac.tags_in_use(),
                   dmac.reads_in_flight());
  return s;
}

}  // namespace rnic
