#include "sim/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "sim/numbers.h"

namespace rnic {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::vector<ParamInfo> SystemConfig::params() {
  std::vector<ParamInfo> p;
  ParamList c{p, "core."};
  core.describe(c);
  ParamList fw{p, "firmware."};
  firmware.describe(fw);
  ParamList e{p, "pcie."};
  pcie.describe(e);
  ParamList h{p, "host."};
  host.describe(h);
  ParamList k{p, "cost."};
  cost.describe(k);
  ParamList cd{p, "card."};
  cd.s("transport", transport, {"efe", "mpa_tcp"},
       "what carries the RNIC Core's DDP segments: efe (the EFE's lossless Ethernet, "
       "docs/efe.md) or mpa_tcp (MPA over TCP by a TCP offload engine, docs/transport.md)");
  ParamList f{p, "efe."};
  efe.describe(f);
  ParamList t{p, "tcp."};
  tcp.describe(t);
  ParamList m{p, "mac."};
  mac.describe(m);
  ParamList l{p, "link."};
  link.describe(l);
  ParamList w{p, "switch."};
  sw.describe(w);
  ParamList s{p, "sim."};
  s.i("seed", sim.seed, "", 0, double(INT64_MAX), "random seed");
  s.i("stats_interval_ns", sim.stats_interval_ns, "ns", 0, 1e12,
      "time-series sample interval (0: off)");
  s.i("watchdog_us", sim.watchdog_us, "us", 1, 1e9,
      "no-progress time before the watchdog stops a run");
  s.r("spin_guard_s", sim.spin_guard_s, "s", 0, 1e6,
      "the simulation's user-mode CPU time with simulated time standing still (a host program "
      "spinning) before the run stops with exit 3 (0: never)");
  s.i("exec_quantum_ns", sim.exec_quantum_ns, "ns", 0, 1e9,
      "an executable run as a simulated process that polls an empty CQ again and again: one "
      "poll waits up to this long for a completion, as its loop would see it (0: every poll "
      "returns at once)");
  s.i("decoy_ns", sim.decoy_ns, "ns", 0, 1e9,
      "a determinism check: a process that wakes this often (or at the next event, when that "
      "comes first) while anything else is pending, and does nothing. It reshapes SystemC's "
      "queue of timed events, and so the order in which processes of one time run; results and "
      "captures must not change (0: none)");
  return p;
}

void SystemConfig::set(const std::string& key, const std::string& value, const std::string& where) {
  auto ps = params();
  auto it = std::find_if(ps.begin(), ps.end(), [&](const ParamInfo& p) { return p.key == key; });
  if (it == ps.end()) throw InputError(where, key, "unknown key (rnicsim presets lists every key)");
  const ParamInfo& p = *it;
  auto range_check = [&](double v) {
    if (v < p.lo || v > p.hi)
      throw InputError(where, key,
                       fmt::format("{} is out of range [{}, {}]{}", value, p.lo, p.hi,
                                   p.unit.empty() ? "" : " " + p.unit));
  };
  switch (p.kind) {
    case ParamKind::kInt: {
      int64_t v = 0;
      if (const std::string why = parse_int(value, &v); !why.empty())
        throw InputError(where, key, why);
      range_check(double(v));
      if (!p.allowed.empty() &&
          std::find(p.allowed.begin(), p.allowed.end(), v) == p.allowed.end()) {
        std::vector<std::string> a;
        for (auto x : p.allowed) a.push_back(std::to_string(x));
        throw InputError(where, key, fmt::format("{} is not one of {}", v, join(a)));
      }
      *static_cast<int64_t*>(p.ptr) = v;
      break;
    }
    case ParamKind::kReal: {
      double v = 0;
      if (const std::string why = parse_real(value, &v); !why.empty())
        throw InputError(where, key, why);
      range_check(v);
      *static_cast<double*>(p.ptr) = v;
      break;
    }
    case ParamKind::kBool: {
      bool v;
      if (value == "true" || value == "1")
        v = true;
      else if (value == "false" || value == "0")
        v = false;
      else
        throw InputError(where, key, fmt::format("'{}' is not true or false", value));
      *static_cast<bool*>(p.ptr) = v;
      break;
    }
    case ParamKind::kString:
      if (!p.choices.empty() &&
          std::find(p.choices.begin(), p.choices.end(), value) == p.choices.end())
        throw InputError(where, key, fmt::format("'{}' is not one of {}", value, join(p.choices)));
      *static_cast<std::string*>(p.ptr) = value;
      break;
  }
}

std::string SystemConfig::get(const std::string& key) {
  for (const auto& p : params()) {
    if (p.key != key) continue;
    switch (p.kind) {
      case ParamKind::kInt:
        return std::to_string(*static_cast<int64_t*>(p.ptr));
      case ParamKind::kReal:
        return fmt::format("{}", *static_cast<double*>(p.ptr));
      case ParamKind::kBool:
        return *static_cast<bool*>(p.ptr) ? "true" : "false";
      case ParamKind::kString:
        return *static_cast<std::string*>(p.ptr);
    }
  }
  throw InputError("get", key, "unknown key");
}

void SystemConfig::check(const std::string& where) {
  const double core_gbps = core.gbps();
  if (core_gbps < double(mac.rate_gbps))
    throw InputError(
        where, "core.datapath_bytes",
        fmt::format("core_clk {} MHz x {} B carries {:.1f} Gb/s, below the {} Gb/s line rate",
                    core.clk_mhz, core.datapath_bytes, core_gbps, mac.rate_gbps));
  check_pairs(where);
}

void SystemConfig::check_pairs(const std::string& where) const {
  if (host.hole_mib > 0 && host.hole_base_mib + host.hole_mib > host.mem_mib)
    throw InputError(where, "host.hole_base_mib", "the hole ends past the end of memory");
  // Pairs whose order the models rely on.
  if (host.free_mib > host.mem_mib)
    throw InputError(where, "host.free_mib",
                     fmt::format("{} MiB free is more than host.mem_mib's {} MiB of memory",
                                 host.free_mib, host.mem_mib));
  if (efe.cc_low_ns > efe.cc_high_ns)
    throw InputError(where, "efe.cc_low_ns",
                     fmt::format("{} ns is above efe.cc_high_ns {} ns: the rate grows below the "
                                 "low mark and falls above the high one",
                                 efe.cc_low_ns, efe.cc_high_ns));
  if (efe.cc_min_fraction > efe.cc_start_fraction)
    throw InputError(where, "efe.cc_min_fraction",
                     fmt::format("{} is above efe.cc_start_fraction {}: a channel would start "
                                 "below the lowest rate it may fall to",
                                 efe.cc_min_fraction, efe.cc_start_fraction));
  if (sw.pause_xon_bytes > sw.pause_xoff_bytes)
    throw InputError(where, "switch.pause_xon_bytes",
                     fmt::format("{} B is above switch.pause_xoff_bytes {} B: a port is resumed "
                                 "below the level that paused it",
                                 sw.pause_xon_bytes, sw.pause_xoff_bytes));
  // The switch queues a frame as its Ethernet header and payload (eth_switch.cc).
  if (sw.port_buffer_bytes < mac.mtu + 14)
    throw InputError(where, "switch.port_buffer_bytes",
                     fmt::format("{} B cannot hold one frame of mac.mtu {} B ({} B with its "
                                 "Ethernet header): every full-size frame would be dropped",
                                 sw.port_buffer_bytes, mac.mtu, mac.mtu + 14));
  if (sw.ecn_bytes > sw.port_buffer_bytes)
    throw InputError(where, "switch.ecn_bytes",
                     fmt::format("{} B is above switch.port_buffer_bytes {} B: a queue never "
                                 "grows that long, so nothing would be marked",
                                 sw.ecn_bytes, sw.port_buffer_bytes));
}

namespace {

void rnic_10g(SystemConfig&) {}

void rnic_100g(SystemConfig& c) {
  c.core.datapath_bytes = 64;
  c.core.dma_bytes = 64;
  c.pcie.gen = 4;
  c.pcie.lanes = 16;
  c.pcie.mps = 512;
  c.pcie.mrrs = 4096;
  c.pcie.tags = 256;
  c.mac.rate_gbps = 100;
}

// The ExpEther development board: PCIe Gen1 x1 behind an ExpEther bridge (PCIe tunnelled over
// Ethernet, which is what link_latency_ns stands for here), 1 GbE, host costs of a Core 2 Duo
// E6600 system fitted to the published measurements (docs/calibration.md).
void expether_1g(SystemConfig& c) {
  c.core.clk_mhz = 125;
  c.firmware.clk_mhz = 125;
  c.core.datapath_bytes = 8;
  c.core.dma_bytes = 8;
  c.core.reg_read_cycles = 2;
  c.pcie.gen = 1;
  c.pcie.lanes = 1;
  c.pcie.mps = 128;
  c.pcie.mrrs = 512;
  c.pcie.tags = 32;
  c.pcie.link_latency_ns = 148;
  c.pcie.rc_read_latency_ns = 110;
  c.cost.syscall_entry_ns = 120;
  c.cost.syscall_exit_ns = 100;
  c.cost.ioctl_dispatch_ns = 430;
  c.cost.walk_step_ns = 25;
  c.cost.copy_line_ns = 35;
  c.cost.mlock_page_ns = 32;
  c.cost.page_fault_ns = 1200;  // Core 2 at 2.4 GHz: about twice a current core's
  c.cost.zero_page_ns = 1300;   // 4 KiB at about 3 GB/s (its FSB-era memory bandwidth)
  c.cost.mmio_issue_ns = 45;
  c.cost.mmio_return_ns = 25;
  c.cost.llc_miss_ns = 21;  // a 64 B line at about 3 GB/s
  c.cost.l1_miss_ns = 6;    // the Core 2's L2 load-to-use latency, 14 cycles at 2.4 GHz
  // The host of the ExpEther measurements: 2 GiB of memory (below the PCI window, which holds
  // no memory then), a 32 KiB L1 data cache and a 4 MiB L2.
  c.host.mem_mib = 2048;
  c.host.hole_mib = 0;
  c.host.llc_kib = 4096;
  c.host.l1d_kib = 32;
  c.mac.rate_gbps = 1;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = {
      {"rnic-10g", "default: PCIe Gen3 x8, 10 GbE, core 250 MHz x 16 B, DMAC x 32 B", rnic_10g},
      {"rnic-100g", "PCIe Gen4 x16, 100 GbE, core 250 MHz x 64 B, DMAC x 64 B", rnic_100g},
      {"expether-1g", "ExpEther board: PCIe Gen1 x1 over ExpEther, 1 GbE, core 125 MHz x 8 B",
       expether_1g},
  };
  return p;
}

SystemConfig preset_config(const std::string& name, const std::string& where) {
  for (const auto& p : presets()) {
    if (p.name == name) {
      SystemConfig c;
      p.apply(c);
      return c;
    }
  }
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  throw InputError(where, "preset",
                   fmt::format("unknown preset '{}' (known: {})", name, join(names)));
}

}  // namespace rnic
