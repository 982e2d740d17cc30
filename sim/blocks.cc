#include "sim/blocks.h"

#include <fmt/format.h>

#include <algorithm>

#include "Vcrc32cc_w1.h"
#include "Vcrc32cc_w16.h"
#include "Vcrc32cc_w2.h"
#include "Vcrc32cc_w32.h"
#include "Vcrc32cc_w4.h"
#include "Vcrc32cc_w64.h"
#include "Vcrc32cc_w8.h"
#include "Vddp_rx_parse_cc_w16.h"
#include "Vddp_rx_parse_cc_w64.h"
#include "Vddp_rx_parse_cc_w8.h"
#include "Vrnic_xlat_cc.h"
#include "models/common/crc32_cc.h"
#include "models/rnic/ddp_rx_parse_cc.h"
#include "models/rnic/xlat_cc.h"
#include "sim/config.h"

namespace rnic {

namespace {
// rnic_xlat's C++-mode build (rtl/CMakeLists.txt): 2^16 SMT and 2^20 PBLMT entries.
using XlatRtl = XlatCcChannel<Vrnic_xlat_cc, 16, 20>;
}  // namespace

const std::vector<BlockInfo>& blocks() {
  static const std::vector<BlockInfo> b = {
      {"crc32", "Ethernet FCS generator and checker in every MAC", true, {1, 2, 4, 8, 16, 32, 64}},
      {"ddp_rx_parse", "receive-side DDP/RDMAP header parser and checks", true, {8, 16, 64}},
      {"rnic_xlat", "STag translation with the SMT and PBLMT", true, {}},
      {"rnic_dmac", "bus-master DMA: splits, tags, reassembly, timeouts", false, {}},
  };
  return b;
}

bool Implementations::rtl(const std::string& block) const {
  auto it = of.find(block);
  return it != of.end() && it->second == "rtl";
}

std::string Implementations::summary() const {
  std::string s;
  for (const auto& b : blocks()) {
    auto it = of.find(b.name);
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", b.name,
                     it == of.end() ? "model" : it->second);
  }
  return s;
}

Implementations resolve_implementations(const std::vector<std::string>& rtl,
                                        const SystemConfig& cfg, const std::string& where) {
  const int datapath_bytes = int(cfg.core.datapath_bytes);
  Implementations impl;
  for (const auto& b : blocks()) impl.of[b.name] = "model";
  std::string names, with_rtl;
  for (const auto& b : blocks()) {
    names += (names.empty() ? "" : ", ") + b.name;
    if (b.has_rtl) with_rtl += (with_rtl.empty() ? "" : ", ") + b.name;
  }
  for (const auto& r : rtl) {
    std::vector<const BlockInfo*> chosen;
    if (r == "all") {
      for (const auto& b : blocks())
        if (b.has_rtl) chosen.push_back(&b);
    } else {
      auto it = std::find_if(blocks().begin(), blocks().end(),
                             [&](const BlockInfo& b) { return b.name == r; });
      if (it == blocks().end())
        throw InputError(where, "rtl", fmt::format("'{}' is not a block (blocks: {})", r, names));
      if (!it->has_rtl)
        throw InputError(where, "rtl",
                         fmt::format("'{}' has no RTL yet (blocks with RTL: {})", r, with_rtl));
      chosen.push_back(&*it);
    }
    for (const BlockInfo* b : chosen) {
      if (!b->rtl_widths.empty() && std::find(b->rtl_widths.begin(), b->rtl_widths.end(),
                                              datapath_bytes) == b->rtl_widths.end())
        throw InputError(
            where, "rtl",
            fmt::format("{}'s RTL is not built for a {}-byte datapath", b->name, datapath_bytes));
      // Run-time parameters the RTL takes as Verilog parameters: only the value it is built at.
      if (b->name == "ddp_rx_parse" && cfg.core.rx_parse_cycles != 2)
        throw InputError(where, "rtl",
                         fmt::format("ddp_rx_parse's RTL is built for core.rx_parse_cycles 2, "
                                     "not {} (docs/rtl.md)",
                                     cfg.core.rx_parse_cycles));
      if (b->name == "rnic_xlat" && (cfg.core.stags > int64_t(XlatRtl::kMaxSmt) ||
                                     cfg.core.pbl_entries > int64_t(XlatRtl::kMaxPbl)))
        throw InputError(
            where, "rtl",
            fmt::format("rnic_xlat's RTL is built for at most {} STags (core.stags) "
                        "and {} PBL entries (core.pbl_entries), not {} and {} "
                        "(docs/rtl.md)",
                        XlatRtl::kMaxSmt, XlatRtl::kMaxPbl, cfg.core.stags, cfg.core.pbl_entries));
      impl.of[b->name] = "rtl";
    }
  }
  return impl;
}

namespace {

template <class V, int BYTES>
std::unique_ptr<Crc32Channel> make_rtl(const std::string& name, ClockDomain clk) {
  return std::make_unique<Crc32CcChannel<V, BYTES>>(name.c_str(), clk);
}

}  // namespace

RxParseFactory rx_parse_factory(const Implementations& impl) {
  if (!impl.rtl("ddp_rx_parse")) return rx_parse_model_factory();
  return [](const std::string& name, uint64_t parse_cycles, uint64_t dp,
            ClockDomain clk) -> std::unique_ptr<RxParseChannel> {
    if (parse_cycles != 2)
      throw std::logic_error(
          "ddp_rx_parse RTL: parse cycles not checked by resolve_implementations");
    switch (dp) {
      case 8:
        return std::make_unique<RxParseCcChannel<Vddp_rx_parse_cc_w8, 8>>(name.c_str(), clk);
      case 16:
        return std::make_unique<RxParseCcChannel<Vddp_rx_parse_cc_w16, 16>>(name.c_str(), clk);
      case 64:
        return std::make_unique<RxParseCcChannel<Vddp_rx_parse_cc_w64, 64>>(name.c_str(), clk);
    }
    throw std::logic_error("ddp_rx_parse RTL width not checked by resolve_implementations");
  };
}

XlatFactory xlat_factory(const Implementations& impl) {
  if (!impl.rtl("rnic_xlat")) return xlat_model_factory();
  return [](const std::string& name, size_t smt, size_t pbl,
            ClockDomain clk) -> std::unique_ptr<XlatChannel> {
    return std::make_unique<XlatRtl>(name.c_str(), smt, pbl, clk);
  };
}

Crc32Factory crc32_factory(const Implementations& impl) {
  if (!impl.rtl("crc32")) return crc32_model_factory();
  return [](const std::string& name, uint32_t poly, unsigned bytes,
            ClockDomain clk) -> std::unique_ptr<Crc32Channel> {
    sc_assert(poly == Crc32::kPolyIeee);  // the MACs' FCS; the Verilated builds are IEEE
    switch (bytes) {
      case 1:
        return make_rtl<Vcrc32cc_w1, 1>(name, clk);
      case 2:
        return make_rtl<Vcrc32cc_w2, 2>(name, clk);
      case 4:
        return make_rtl<Vcrc32cc_w4, 4>(name, clk);
      case 8:
        return make_rtl<Vcrc32cc_w8, 8>(name, clk);
      case 16:
        return make_rtl<Vcrc32cc_w16, 16>(name, clk);
      case 32:
        return make_rtl<Vcrc32cc_w32, 32>(name, clk);
      case 64:
        return make_rtl<Vcrc32cc_w64, 64>(name, clk);
    }
    throw std::logic_error("crc32 RTL width not checked by resolve_implementations");
  };
}

}  // namespace rnic
