#include "sim/blocks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>
#include <tuple>

#include "models/common/crc32_cc.h"
#include "models/common/crc32_sc.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/dmac/dmac_cc.h"
#include "models/rnic/rx_parse/ddp_rx_parse_cc.h"
#include "models/rnic/xlat/xlat_cc.h"
#include "rnic_rtl_crc32.h"
#include "rnic_rtl_ddp_rx_parse.h"
#include "rnic_rtl_rnic_dmac.h"
#include "rnic_rtl_rnic_xlat.h"
#include "sim/config.h"
#include "sim/run_record.h"

namespace rnic {

namespace {

// One RTL build of a block: the Verilated class and the bytes per beat it is built at (0: the
// block has no datapath-wide port, the build serves any width).
template <class V, int BYTES>
struct Build {
  using type = V;
  static constexpr int kBytes = BYTES;
};

// Every build of a block in one mode, as rtl/CMakeLists.txt's rnic_rtl_block lists them
// (RNIC_RTL_BUILDS_<block>): their widths for the registry, and make(bytes, f) calling
// f(Build{}) with the build of that width.
template <class... B>
struct Builds {
  using First = std::tuple_element_t<0, std::tuple<B...>>;
  static std::vector<int> widths() {
    std::vector<int> w{B::kBytes...};
    return w == std::vector<int>{0} ? std::vector<int>{} : w;
  }
  template <class F>
  static auto make(int bytes, F&& f) {
    decltype(f(First{})) out;
    const bool built =
        ((B::kBytes == bytes || B::kBytes == 0 ? (out = f(B{}), true) : false) || ...);
    if (!built)
      throw std::logic_error(fmt::format(
          "no RTL build at {} B per beat: resolve_implementations lets none through", bytes));
    return out;
  }
};

// Each swappable block, described once: its registry entry (name, what it is, the parameter
// that sets its width), its C++-mode RTL builds and how its adapter is made at one, what its RTL
// refuses of a configuration besides the width, and whether a waveform can show its RTL. The
// model, the recorder and the SystemC face come with the face (models/common/block.h).
template <class Face>
struct Block;

template <>
struct Block<Crc32Channel> {
  static constexpr const char* kName = "crc32";
  static constexpr const char* kWhat = "Ethernet FCS generator and checker in every MAC";
  static constexpr const char* kWidthKey = "core.datapath_bytes";
  using Rtl = Builds<RNIC_RTL_BUILDS_crc32>;
  // The SystemC-mode builds, clocked in simulated time, for a traced run (crc32_sc.h).
  using Traced = Builds<RNIC_RTL_TRACED_BUILDS_crc32>;
  static int width(const SystemConfig& c) { return int(c.core.datapath_bytes); }
  static std::string refuses(const SystemConfig&) { return ""; }
  static std::string waveform(int w) {
    const std::vector<int> t = Traced::widths();
    if (std::find(t.begin(), t.end(), w) != t.end()) return "";
    return fmt::format("a waveform of crc32's RTL at {} bytes per beat is not built (it is at {})",
                       w, fmt::join(t, ", "));
  }
  static Crc32Factory model() { return crc32_model_factory(); }
  static std::unique_ptr<Crc32Channel> rtl(const Implementations& impl, const BlockArgs& a,
                                           const Crc32Channel::Params& p) {
    sc_assert(p.poly == Crc32::kPolyIeee);  // the MACs' FCS; the Verilated builds are IEEE
    if (impl.traced)
      return Traced::make(a.bytes, [&](auto b) -> std::unique_ptr<Crc32Channel> {
        using B = decltype(b);
        return std::make_unique<Crc32ScChannel<typename B::type, B::kBytes>>(a.name.c_str(), a.clk);
      });
    return Rtl::make(a.bytes, [&](auto b) -> std::unique_ptr<Crc32Channel> {
      using B = decltype(b);
      return std::make_unique<Crc32CcChannel<typename B::type, B::kBytes>>(a.name.c_str(), a.clk);
    });
  }
};

template <>
struct Block<RxParseChannel> {
  static constexpr const char* kName = "ddp_rx_parse";
  static constexpr const char* kWhat = "receive-side DDP/RDMAP header parser and checks";
  static constexpr const char* kWidthKey = "core.datapath_bytes";
  using Rtl = Builds<RNIC_RTL_BUILDS_ddp_rx_parse>;
  // The C++-mode builds with tracing, clocked in simulated time, for a traced run
  // (ddp_rx_parse_cc.h), at the same widths.
  using Traced = Builds<RNIC_RTL_TRACED_BUILDS_ddp_rx_parse>;
  static constexpr uint64_t kParseCycles = 2;  // PARSE_CYCLES of the builds
  static int width(const SystemConfig& c) { return int(c.core.datapath_bytes); }
  // Run-time parameters the RTL takes as Verilog parameters: only the value it is built at.
  static std::string refuses(const SystemConfig& c) {
    if (uint64_t(c.core.rx_parse_cycles) == kParseCycles) return "";
    return fmt::format(
        "ddp_rx_parse's RTL is built for core.rx_parse_cycles 2, not {} (docs/rtl.md)",
        c.core.rx_parse_cycles);
  }
  static std::string waveform(int) { return ""; }
  static RxParseFactory model() { return rx_parse_model_factory(); }
  static std::unique_ptr<RxParseChannel> rtl(const Implementations& impl, const BlockArgs& a,
                                             const RxParseChannel::Params& p) {
    if (p.parse_cycles != kParseCycles)
      throw std::logic_error(
          "ddp_rx_parse RTL: parse cycles not checked by resolve_implementations");
    if (impl.traced)
      return Traced::make(a.bytes, [&](auto b) -> std::unique_ptr<RxParseChannel> {
        using B = decltype(b);
        return std::make_unique<RxParseCcChannel<typename B::type, B::kBytes, true>>(a.name.c_str(),
                                                                                     a.clk);
      });
    return Rtl::make(a.bytes, [&](auto b) -> std::unique_ptr<RxParseChannel> {
      using B = decltype(b);
      return std::make_unique<RxParseCcChannel<typename B::type, B::kBytes>>(a.name.c_str(), a.clk);
    });
  }
};

template <>
struct Block<XlatChannel> {
  static constexpr const char* kName = "rnic_xlat";
  static constexpr const char* kWhat = "STag translation with the SMT and PBLMT";
  static constexpr const char* kWidthKey = "core.datapath_bytes";
  using Rtl = Builds<RNIC_RTL_BUILDS_rnic_xlat>;
  // Its one build, at the card's largest default tables: 2^16 SMT and 2^20 PBLMT entries
  // (SMT_AW and PBL_AW in rtl/CMakeLists.txt).
  using Adapter = XlatCcChannel<Rtl::First::type, 16, 20>;
  static int width(const SystemConfig& c) { return int(c.core.datapath_bytes); }
  static std::string refuses(const SystemConfig& c) {
    if (c.core.stags <= int64_t(Adapter::kMaxSmt) &&
        c.core.pbl_entries <= int64_t(Adapter::kMaxPbl))
      return "";
    return fmt::format(
        "rnic_xlat's RTL is built for at most {} STags (core.stags) and {} PBL entries "
        "(core.pbl_entries), not {} and {} (docs/rtl.md)",
        Adapter::kMaxSmt, Adapter::kMaxPbl, c.core.stags, c.core.pbl_entries);
  }
  // Its adapter runs each requester's request through the one block on its own, ahead of
  // simulated time (xlat_cc.h): requests of several requesters overlap in time, which one set of
  // the block's signals cannot show.
  static std::string waveform(int) {
    return "a waveform of rnic_xlat's RTL in a run is not built (its adapter runs each "
           "requester's request through the one block ahead of simulated time, and requests "
           "overlap); trace the model run, or the RTL in rnic_xlat_lockstep_test --trace fst";
  }
  static XlatFactory model() { return xlat_model_factory(); }
  static std::unique_ptr<XlatChannel> rtl(const Implementations&, const BlockArgs& a,
                                          const XlatChannel::Params& p) {
    return std::make_unique<Adapter>(a.name.c_str(), p.smt, p.pbl, a.clk);
  }
};

template <>
struct Block<DmacCore> {
  static constexpr const char* kName = "rnic_dmac";
  static constexpr const char* kWhat =
      "bus-master DMA: splits, tags, completion placement, timeouts";
  static constexpr const char* kWidthKey = "core.dma_bytes";
  static constexpr int kTags = 256;  // TAGS of the builds
  using Rtl = Builds<RNIC_RTL_BUILDS_rnic_dmac>;
  // The C++-mode builds with tracing, for a traced run, at the same widths: its DMA service
  // clocks every edge at its own time there (dmac.h).
  using Traced = Builds<RNIC_RTL_TRACED_BUILDS_rnic_dmac>;
  static int width(const SystemConfig& c) { return int(c.core.dma_bytes); }
  static std::string refuses(const SystemConfig& c) {
    if (c.pcie.tags <= kTags) return "";
    return fmt::format(
        "rnic_dmac's RTL is built for at most {} tags, not pcie.tags {} (docs/rtl.md)", kTags,
        c.pcie.tags);
  }
  // Its pins are in the waveform under its DMA service (dmac.h), whichever core runs; the RTL's
  // internals under <service>.rtl.rnic_dmac.
  static std::string waveform(int) { return ""; }
  static DmacCoreFactory model() { return dmac_model_factory(); }
  static std::unique_ptr<DmacCore> rtl(const Implementations& impl, const BlockArgs& a,
                                       const DmacCore::Params&) {
    if (impl.traced)
      return Traced::make(a.bytes, [&](auto b) -> std::unique_ptr<DmacCore> {
        using B = decltype(b);
        return std::make_unique<DmacRtlCore<typename B::type, B::kBytes, kTags, true>>(
            "rtl", false, a.name + ".rtl", a.clk.period_ps);
      });
    return Rtl::make(a.bytes, [](auto b) -> std::unique_ptr<DmacCore> {
      using B = decltype(b);
      return std::make_unique<DmacRtlCore<typename B::type, B::kBytes, kTags>>();
    });
  }
};

// A block's entry: the registry's, and what resolve_implementations asks of it.
struct Entry {
  BlockInfo info;
  std::function<int(const SystemConfig&)> width;
  std::function<std::string(const SystemConfig&)> refuses;
};

template <class Face>
Entry entry() {
  using B = Block<Face>;
  return {{B::kName, B::kWhat, true, B::Rtl::widths(), B::kWidthKey, &B::waveform},
          &B::width,
          &B::refuses};
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> e = {entry<Crc32Channel>(), entry<RxParseChannel>(),
                                       entry<XlatChannel>(), entry<DmacCore>()};
  return e;
}

}  // namespace

const std::vector<BlockInfo>& blocks() {
  static const std::vector<BlockInfo> b = [] {
    std::vector<BlockInfo> v;
    for (const Entry& e : entries()) v.push_back(e.info);
    return v;
  }();
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
  Implementations impl;
  for (const auto& b : blocks()) impl.of[b.name] = "model";
  std::string names, with_rtl;
  for (const auto& b : blocks()) {
    names += (names.empty() ? "" : ", ") + b.name;
    if (b.has_rtl) with_rtl += (with_rtl.empty() ? "" : ", ") + b.name;
  }
  std::set<std::string> named;
  for (const auto& r : rtl) {
    if (!r.empty() && r[0] == '-')
      throw InputError(where, "rtl",
                       fmt::format("'{}' is an option, not a block: --rtl takes a list of blocks "
                                   "({}) or all",
                                   r, with_rtl));
    if (!named.insert(r).second)
      throw InputError(where, "rtl", fmt::format("'{}' is named twice", r));
    if (rtl.size() > 1 && r == "all")
      throw InputError(where, "rtl",
                       "'all' names every block with RTL: give it alone, or a list of blocks");
    std::vector<const Entry*> chosen;
    if (r == "all") {
      for (const Entry& e : entries())
        if (e.info.has_rtl) chosen.push_back(&e);
    } else {
      auto it = std::find_if(entries().begin(), entries().end(),
                             [&](const Entry& e) { return e.info.name == r; });
      if (it == entries().end())
        throw InputError(where, "rtl", fmt::format("'{}' is not a block (blocks: {})", r, names));
      if (!it->info.has_rtl)
        throw InputError(where, "rtl",
                         fmt::format("'{}' has no RTL yet (blocks with RTL: {})", r, with_rtl));
      chosen.push_back(&*it);
    }
    for (const Entry* e : chosen) {
      const BlockInfo* b = &e->info;
      const int width = e->width(cfg);
      if (!b->rtl_widths.empty() &&
          std::find(b->rtl_widths.begin(), b->rtl_widths.end(), width) == b->rtl_widths.end())
        throw InputError(where, "rtl",
                         fmt::format("{}'s RTL is not built for a {}-byte datapath ({})", b->name,
                                     width, b->width_key));
      const std::string why = e->refuses(cfg);
      if (!why.empty()) throw InputError(where, "rtl", why);
      impl.of[b->name] = "rtl";
    }
  }
  return impl;
}

template <class Face>
BlockFactory<Face> block_factory(const Implementations& impl) {
  using B = Block<Face>;
  using Params = typename Face::Params;
  BlockFactory<Face> f = B::model();
  if (impl.rtl(B::kName))
    f = [impl](const BlockArgs& a, const Params& p) { return B::rtl(impl, a, p); };
  if (!RunRecord::get().enabled()) return f;
  return [f](const BlockArgs& a, const Params& p) -> std::unique_ptr<Face> {
    return std::make_unique<typename Face::Recorded>(f(a, p), RunRecord::get(), a);
  };
}

template BlockFactory<Crc32Channel> block_factory(const Implementations&);
template BlockFactory<RxParseChannel> block_factory(const Implementations&);
template BlockFactory<XlatChannel> block_factory(const Implementations&);
template BlockFactory<DmacCore> block_factory(const Implementations&);

}  // namespace rnic
