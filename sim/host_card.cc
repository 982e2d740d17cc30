#include "sim/host_card.h"

#include <fmt/format.h>

namespace rnic {

HostCard::HostCard(const SystemConfig& c, StatRegistry& stats)
    : cfg(c),
      mem(c.host),
      link("pcie", c.pcie, stats),
      rc("rc", mem, link, c, stats),
      card_if("card_pcie", link, c, stats),
      regs(c.core),
      os(mem, rc, c, stats),
      background("background") {
  background.every(uint64_t(c.sim.stats_interval_ns) * 1000,
                   [&stats] { stats.sample(sc_core::sc_time_stamp().value()); });
  bar0 = c.host.hole_mib > 0 ? uint64_t(c.host.hole_base_mib) << 20 : mem.size();
  bar2 = bar0 + (16ull << 20);
  card_if.set_bar(0, {bar0, 64 * 1024});
  card_if.set_bar(2, {bar2, uint64_t(c.core.qps) * reg::kQpPage});
  card_if.set_target(&regs);
}

void HostCard::trace(TraceSink& t) const {
  link.trace(t);
  rc.trace(t);
  card_if.trace(t);
}

void HostCard::configure(const SystemConfig& c) {
  cfg = c;
  link.configure(c.pcie);
  rc.configure(c);
  card_if.configure(c);
  os.configure(c);
}

void run_host_thread(const char* name, std::function<void()> fn) {
  bool done = false;
  sc_core::sc_spawn_options o;
  sc_core::sc_spawn(
      [&] {
        fn();
        done = true;
      },
      name, &o);
  sc_core::sc_start();
  if (!done)
    throw HungError(
        fmt::format("host thread '{}' is still waiting at {} ns with nothing left to happen", name,
                    sc_core::sc_time_stamp().to_seconds() * 1e9));
}

}  // namespace rnic

namespace rnic {

void run_host_thread(HostCard& sys, const char* name, std::function<void()> fn) {
  sys.background.kick();
  run_host_thread(name, std::move(fn));
}

}  // namespace rnic
