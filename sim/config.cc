#include "sim/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace rnic {

namespace {

struct Lister {
  std::vector<ParamInfo>& out;
  std::string prefix;
  void i(const char* key, int64_t& v, const char* unit, double lo, double hi, const char* desc,
         std::vector<int64_t> allowed = {}) {
    out.push_back({prefix + key, ParamKind::kInt, &v, unit, desc, lo, hi, {}, std::move(allowed)});
  }
  void r(const char* key, double& v, const char* unit, double lo, double hi, const char* desc) {
    out.push_back({prefix + key, ParamKind::kReal, &v, unit, desc, lo, hi, {}, {}});
  }
  void s(const char* key, std::string& v, std::vector<std::string> choices, const char* desc) {
    out.push_back({prefix + key, ParamKind::kString, &v, "", desc, 0, 0, std::move(choices), {}});
  }
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

std::vector<ParamInfo> SystemConfig::params() {
  std::vector<ParamInfo> p;
  Lister c{p, "core."};
  c.i("clk_mhz", core.clk_mhz, "MHz", 1, 2000, "core_clk frequency");
  c.i("datapath_bytes", core.datapath_bytes, "B", 1, 64, "core datapath width per beat",
      {1, 2, 4, 8, 16, 32, 64});
  c.i("reg_read_cycles", core.reg_read_cycles, "cycles", 1, 1000,
      "core cycles from a register read request to its data");
  c.i("reg_write_cycles", core.reg_write_cycles, "cycles", 1, 1000,
      "core cycles to apply a register write");
  c.i("qps", core.qps, "QPs", 1, 1 << 16, "queue pairs (one BAR2 page each)");
  c.i("cqs", core.cqs, "CQs", 1, 1 << 16, "completion queues");
  c.i("stags", core.stags, "entries", 1, 1 << 24, "STag management table entries");
  c.i("pbl_entries", core.pbl_entries, "entries", 1, 1 << 26, "PBL management table entries");
  c.i("max_qp_wr", core.max_qp_wr, "WQEs", 1, 1 << 16, "WQEs each on-chip SQ and RQ holds");
  c.i("max_cqe", core.max_cqe, "CQEs", 1, 1 << 24, "largest CQ ring");
  c.i("ird", core.ird, "reads", 1, 256, "inbound RDMA Reads outstanding per QP (max)");
  c.i("ord", core.ord, "reads", 1, 256, "outbound RDMA Reads outstanding per QP (max)");
  c.i("tx_buffer_bytes", core.tx_buffer_bytes, "B", 2048, 1 << 24,
      "segments fetched by the SQ engine and not yet sent");
  c.i("sched_cycles", core.sched_cycles, "cycles", 1, 1000, "SQ engine cycles per segment");
  c.i("rx_parse_cycles", core.rx_parse_cycles, "cycles", 1, 1000,
      "segment arrival to header checked");
  c.i("cqe_cycles", core.cqe_cycles, "cycles", 1, 1000, "forming a CQE before its DMA write");
  c.i("cmd_cycles", core.cmd_cycles, "cycles", 1, 1000000, "per mailbox command");
  Lister e{p, "pcie."};
  e.i("gen", pcie.gen, "", 1, 5, "PCIe generation (1-2: 8b/10b, 3-5: 128b/130b)");
  e.i("lanes", pcie.lanes, "lanes", 1, 16, "link width", {1, 2, 4, 8, 16});
  e.i("mps", pcie.mps, "B", 128, 4096, "max payload size", {128, 256, 512, 1024, 2048, 4096});
  e.i("mrrs", pcie.mrrs, "B", 128, 4096, "max read request size",
      {128, 256, 512, 1024, 2048, 4096});
  e.i("rcb", pcie.rcb, "B", 64, 128, "read completion boundary", {64, 128});
  e.i("tags", pcie.tags, "requests", 1, 1024, "outstanding non-posted requests of the card");
  e.i("link_latency_ns", pcie.link_latency_ns, "ns", 0, 100000,
      "one-way latency past serialization (PHY, wire, tunnels)");
  e.i("ack_factor", pcie.ack_factor, "TLPs", 1, 256, "TLPs received per ACK DLLP");
  e.i("ack_timer_ns", pcie.ack_timer_ns, "ns", 1, 100000, "ACK latency timer for a partial batch");
  e.i("updatefc_factor", pcie.updatefc_factor, "TLPs", 1, 256, "TLPs consumed per UpdateFC DLLP");
  e.i("updatefc_timer_ns", pcie.updatefc_timer_ns, "ns", 1, 100000,
      "UpdateFC timer for a partial batch");
  e.i("rc_ph", pcie.rc_ph, "credits", 1, 255, "posted header credits the root complex advertises");
  e.i("rc_pd", pcie.rc_pd, "credits", 1, 4095,
      "posted data credits (16 B) the root complex advertises");
  e.i("rc_nph", pcie.rc_nph, "credits", 1, 255,
      "non-posted header credits the root complex advertises");
  e.i("card_ph", pcie.card_ph, "credits", 1, 255, "posted header credits the card advertises");
  e.i("card_pd", pcie.card_pd, "credits", 1, 4095,
      "posted data credits (16 B) the card advertises");
  e.i("card_nph", pcie.card_nph, "credits", 1, 255,
      "non-posted header credits the card advertises");
  e.i("rc_read_latency_ns", pcie.rc_read_latency_ns, "ns", 0, 100000,
      "root complex: MRd arrival to first CplD (host memory latency)");
  e.i("rc_write_latency_ns", pcie.rc_write_latency_ns, "ns", 0, 100000,
      "root complex: MWr arrival to data in memory");
  e.i("if_cycles", pcie.if_cycles, "cycles", 0, 1000,
      "core cycles through the card's PCIe I/F, each way");
  e.i("cpl_timeout_us", pcie.cpl_timeout_us, "us", 1, 1000000, "completion timeout of DMA reads");
  Lister h{p, "host."};
  h.i("mem_mib", host.mem_mib, "MiB", 64, 1 << 22, "physical memory size");
  h.s("hole_behaviour", host.hole_behaviour, {"ur", "timeout"},
      "DMA read of a hole: Unsupported Request, or no completion");
  h.s("wqe_mode", host.wqe_mode, {"mmio", "ring"},
      "WQEs written into the card by MMIO, or host-memory rings the card fetches by DMA");
  h.i("hole_base_mib", host.hole_base_mib, "MiB", 0, 1 << 22, "device-reserved window start");
  h.i("hole_mib", host.hole_mib, "MiB", 0, 1 << 22, "device-reserved window size (0 = none)");
  h.r("malloc_scatter", host.malloc_scatter, "", 0, 1,
      "probability that a buffer's next page is not physically adjacent");
  h.i("malloc_max_gap", host.malloc_max_gap, "pages", 1, 1 << 20,
      "largest jump between scattered pages");
  Lister k{p, "cost."};
  k.i("syscall_entry_ns", cost.syscall_entry_ns, "ns", 0, 1000000, "system call entry");
  k.i("syscall_exit_ns", cost.syscall_exit_ns, "ns", 0, 1000000, "system call exit");
  k.i("ioctl_dispatch_ns", cost.ioctl_dispatch_ns, "ns", 0, 1000000,
      "driver ioctl dispatch: fd lookup, argument copy-in, decode");
  k.i("walk_step_ns", cost.walk_step_ns, "ns", 0, 1000000, "one page-table entry read");
  k.i("copy_line_ns", cost.copy_line_ns, "ns", 0, 1000000, "copy to/from user, per 64 B line");
  k.i("mlock_page_ns", cost.mlock_page_ns, "ns", 0, 1000000, "pin one page");
  k.i("interrupt_entry_ns", cost.interrupt_entry_ns, "ns", 0, 1000000, "MSI-X to handler");
  k.i("mmio_issue_ns", cost.mmio_issue_ns, "ns", 0, 1000000,
      "core to root complex, per MMIO access");
  k.i("wqe_build_ns", cost.wqe_build_ns, "ns", 0, 1000000, "the verbs library forms a WQE");
  k.i("cq_poll_ns", cost.cq_poll_ns, "ns", 0, 1000000, "the verbs library reads one CQE slot");
  k.i("mmio_return_ns", cost.mmio_return_ns, "ns", 0, 1000000,
      "completion at the root complex to the load retiring");
  Lister m{p, "mac."};
  m.i("rate_gbps", mac.rate_gbps, "Gb/s", 1, 100, "Ethernet line rate", {1, 10, 25, 40, 100});
  m.i("mtu", mac.mtu, "B", 576, 9000, "MTU");
  m.i("tx_cycles", mac.tx_cycles, "cycles", 0, 1000,
      "core cycles from a frame's last beat to its first bit on the wire");
  m.i("rx_cycles", mac.rx_cycles, "cycles", 0, 1000,
      "core cycles from the FCS check to the upper layer");
  m.i("tx_fifo_frames", mac.tx_fifo_frames, "frames", 1, 4096, "MAC transmit FIFO depth");
  Lister l{p, "link."};
  l.i("prop_ns", link.prop_ns, "ns", 0, 100000000, "propagation delay of an Ethernet link");
  Lister s{p, "sim."};
  s.i("seed", sim.seed, "", 0, double(INT64_MAX), "random seed");
  s.i("stats_interval_ns", sim.stats_interval_ns, "ns", 0, 1e12,
      "time-series sample interval (0: off)");
  s.i("watchdog_us", sim.watchdog_us, "us", 1, 1e9,
      "no-progress time before the watchdog stops a run");
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
      errno = 0;
      char* end = nullptr;
      long long v = std::strtoll(value.c_str(), &end, 0);
      if (value.empty() || *end != '\0' || errno == ERANGE)
        throw InputError(where, key, fmt::format("'{}' is not an integer", value));
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
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0')
        throw InputError(where, key, fmt::format("'{}' is not a number", value));
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
  const double core_gbps = double(core.clk_mhz) * double(core.datapath_bytes) * 8 / 1000.0;
  if (core_gbps < double(mac.rate_gbps))
    throw InputError(
        where, "core.datapath_bytes",
        fmt::format("core_clk {} MHz x {} B carries {:.1f} Gb/s, below the {} Gb/s line rate",
                    core.clk_mhz, core.datapath_bytes, core_gbps, mac.rate_gbps));
  if (host.hole_mib > 0 && host.hole_base_mib + host.hole_mib > host.mem_mib)
    throw InputError(where, "host.hole_base_mib", "the hole ends past the end of memory");
}

namespace {

void rnic_10g(SystemConfig&) {}

void rnic_100g(SystemConfig& c) {
  c.core.datapath_bytes = 64;
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
  c.core.datapath_bytes = 8;
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
  c.cost.mmio_issue_ns = 45;
  c.cost.mmio_return_ns = 25;
  c.host.mem_mib = 4096;
  c.host.hole_base_mib = 3072;
  c.host.hole_mib = 512;
  c.mac.rate_gbps = 1;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> p = {
      {"rnic-10g", "default: PCIe Gen3 x8, 10 GbE, core 250 MHz x 16 B", rnic_10g},
      {"rnic-100g", "PCIe Gen4 x16, 100 GbE, core 250 MHz x 64 B", rnic_100g},
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
