#include "sim/blocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "Vcrc32_w1.h"
#include "Vcrc32_w16.h"
#include "Vcrc32_w64.h"
#include "Vcrc32_w8.h"
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
#include "Vrnic_dmac_cc_w32.h"
#include "Vrnic_dmac_cc_w64.h"
#include "Vrnic_dmac_cc_w8.h"
#include "Vrnic_xlat_cc.h"
#include "models/common/crc32_cc.h"
#include "models/common/crc32_sc.h"
#include "models/rnic/dmac/dmac_cc.h"
#include "models/rnic/rx_parse/ddp_rx_parse_cc.h"
#include "models/rnic/xlat/xlat_cc.h"
#include "sim/config.h"
#include "sim/run_record.h"

namespace rnic {

namespace {
// rnic_xlat's C++-mode build (rtl/CMakeLists.txt): 2^16 SMT and 2^20 PBLMT entries.
using XlatRtl = XlatCcChannel<Vrnic_xlat_cc, 16, 20>;
// rnic_dmac's C++-mode builds: 256 tags.
constexpr int kDmacRtlTags = 256;
}  // namespace

const std::vector<BlockInfo>& blocks() {
  static const std::vector<BlockInfo> b = {
      {"crc32", "Ethernet FCS generator and checker in every MAC", true, {1, 2, 4, 8, 16, 32, 64}},
      {"ddp_rx_parse", "receive-side DDP/RDMAP header parser and checks", true, {8, 16, 64}},
      {"rnic_xlat", "STag translation with the SMT and PBLMT", true, {}},
      {"rnic_dmac",
       "bus-master DMA: splits, tags, completion placement, timeouts",
       true,
       {8, 32, 64},
       "core.dma_bytes"},
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
      const int width =
          int(b->width_key == "core.dma_bytes" ? cfg.core.dma_bytes : cfg.core.datapath_bytes);
      if (!b->rtl_widths.empty() &&
          std::find(b->rtl_widths.begin(), b->rtl_widths.end(), width) == b->rtl_widths.end())
        throw InputError(where, "rtl",
                         fmt::format("{}'s RTL is not built for a {}-byte datapath ({})", b->name,
                                     width, b->width_key));
      if (b->name == "rnic_dmac" && cfg.pcie.tags > kDmacRtlTags)
        throw InputError(where, "rtl",
                         fmt::format("rnic_dmac's RTL is built for at most {} tags, not "
                                     "pcie.tags {} (docs/rtl.md)",
                                     kDmacRtlTags, cfg.pcie.tags));
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

// The recorders (sim/run_record.h): each wraps a block's channel, model or RTL alike, and
// records what it answers and when.
class RecordedCrc32 : public Crc32Channel {
 public:
  RecordedCrc32(std::unique_ptr<Crc32Channel> in, ClockDomain clk)
      : in_(std::move(in)),
        src_(RunRecord::get().source(
            std::string(dynamic_cast<sc_core::sc_object&>(*in_).name()) + " crc32",
            clk.period_ps)) {}
  void request(Message msg, const std::vector<uint64_t>& beat_cycles, Done done) override {
    in_->request(std::move(msg), beat_cycles,
                 [src = src_, done = std::move(done)](uint32_t crc, uint64_t valid) {
                   RunRecord::get().add(src, now_ps(), crc, valid);
                   done(crc, valid);
                 });
  }
  uint64_t beats(size_t len) const override { return in_->beats(len); }
  void trace(TraceSink& t) const override { in_->trace(t); }

 private:
  std::unique_ptr<Crc32Channel> in_;
  uint32_t src_;
};

class RecordedRxParse : public RxParseChannel {
 public:
  RecordedRxParse(std::unique_ptr<RxParseChannel> in, ClockDomain clk) : in_(std::move(in)) {
    const std::string n = dynamic_cast<sc_core::sc_object&>(*in_).name();
    src_ = RunRecord::get().source(n + " ddp_rx_parse", clk.period_ps);
    ready_src_ = RunRecord::get().source(n + " ddp_rx_parse ready", clk.period_ps);
  }
  void request(Segment seg, std::function<void(const RxParseResult&)> done,
               std::function<void()> ready) override {
    in_->request(
        std::move(seg),
        [src = src_, done = std::move(done)](const RxParseResult& r) {
          // What the block's result bus carries (ddp_rx_parse_ports.h).
          const uint64_t d = record_digest({r.dropped,      r.ok,         uint64_t(r.why.layer),
                                            r.why.etype,    r.why.code,   r.h.tagged,
                                            r.h.last,       r.h.opcode,   r.h.stag,
                                            r.h.to,         r.h.inv_stag, r.h.qn,
                                            r.h.msn,        r.h.mo,       r.rr_ok,
                                            r.rr.sink_stag, r.rr.sink_to, r.rr.size,
                                            r.rr.src_stag,  r.rr.src_to,  r.payload_off,
                                            r.payload_len});
          RunRecord::get().add(src, now_ps(), d, r.cycles);
          done(r);
        },
        [src = ready_src_, ready = std::move(ready)] {
          RunRecord::get().add(src, now_ps(), 0, 0);
          ready();
        });
  }

 private:
  std::unique_ptr<RxParseChannel> in_;
  uint32_t src_ = 0, ready_src_ = 0;
};

// Not base_to: a verbs program's own memory (plain memory, sim/traffic/program.h) is registered
// at its real virtual addresses, which differ from process to process (ASLR), and the model and
// RTL runs of a test are two processes.
uint64_t entry_digest(const SmtEntry& e) {
  return record_digest({uint64_t(e.state), uint64_t(e.type), e.key, e.pd, e.access, e.length,
                        e.pbl_first, e.pbl_count, e.page_shift, e.first_page_offset, e.phys_base});
}

class RecordedXlat : public XlatChannel {
 public:
  RecordedXlat(std::unique_ptr<XlatChannel> in, ClockDomain clk)
      : in_(std::move(in)),
        src_(RunRecord::get().source(
            std::string(dynamic_cast<sc_core::sc_object&>(*in_).name()) + " rnic_xlat",
            clk.period_ps)),
        wr_(RunRecord::get().source(
            std::string(dynamic_cast<sc_core::sc_object&>(*in_).name()) + " rnic_xlat write",
            clk.period_ps)) {}
  void request(const XlatRequest& r, EventQueue& to, Reply reply) override {
    in_->request(r, to, [src = src_, reply = std::move(reply)](XlatResult&& x) {
      std::vector<uint64_t> w{uint64_t(x.status), x.fault_to, x.chunks.size()};
      for (const XlatChunk& c : x.chunks) w.insert(w.end(), {c.pa, c.len, c.cycle});
      RunRecord::get().add(src, now_ps(), record_digest(w), x.cycles);
      reply(std::move(x));
    });
  }
  bool write_smt(uint32_t index, const SmtEntry& e) override {
    return note(index, entry_digest(e), in_->write_smt(index, e));
  }
  bool invalidate(uint32_t stag, const uint32_t* pd) override {
    return note(stag, pd ? *pd : ~0ull, in_->invalidate(stag, pd));
  }
  bool free(uint32_t index) override { return note(index, 1, in_->free(index)); }
  bool write_pbl(uint32_t first, const std::vector<PblEntry>& e) override {
    std::vector<uint64_t> w;
    for (const PblEntry& p : e) w.insert(w.end(), {p.addr, p.len});
    return note(first, record_digest(w), in_->write_pbl(first, e));
  }
  size_t pbl_entries() const override { return in_->pbl_entries(); }
  const XlatTiming& timing() const override { return in_->timing(); }
  const SmtEntry* entry(uint32_t index) const override { return in_->entry(index); }

 private:
  bool note(uint64_t a, uint64_t b, bool ok) {
    RunRecord::get().add(wr_, now_ps(), a, b ^ uint64_t(ok));
    return ok;
  }
  std::unique_ptr<XlatChannel> in_;
  uint32_t src_, wr_;
};

template <class V, int BYTES>
std::unique_ptr<Crc32Channel> make_rtl(const std::string& name, ClockDomain clk) {
  return std::make_unique<Crc32CcChannel<V, BYTES>>(name.c_str(), clk);
}

}  // namespace

// What rnic_dmac does that its users see, at the edge it does it: each TLP's last beat on tx
// (it goes to the PCIe I/F when taken), and each read's done with a digest of the bytes its
// completions put on rw and when.
class RecordedDmac : public DmacCore {
 public:
  RecordedDmac(std::unique_ptr<DmacCore> in, const std::string& name, uint64_t period_ps)
      : in_(std::move(in)),
        tx_(RunRecord::get().source(name + " rnic_dmac tx", period_ps)),
        rd_(RunRecord::get().source(name + " rnic_dmac rd", period_ps)) {}
  void edge(const DmacIn& in) override {
    in_->edge(in);
    if (in.rst) return;
    const DmacOut& o = in_->out();
    RunRecord& r = RunRecord::get();
    // The DMA service takes every beat the edge after it is presented (tx_ready, rd_ready high).
    if (o.tx_valid && o.tx_last)
      r.add(tx_, in.t_ps, o.tx_addr, record_digest({o.tx_write, o.tx_len, o.tx_tag}));
    // A read's rw beats (edge, offset, bytes) fold into one digest, recorded with its done.
    if (o.rw_valid)
      rw_digest_[o.rw_id] =
          record_digest({rw_digest_[o.rw_id], in.t_ps, o.rw_off,
                         record_digest_bytes(o.rw_data.data(), o.rw_cnt, o.rw_cnt)});
    if (o.rd_valid) {
      r.add(rd_, in.t_ps, (uint64_t(o.rd_id) << 8) | o.rd_status, rw_digest_[o.rd_id]);
      rw_digest_[o.rd_id] = 0;
    }
  }
  const DmacOut& out() const override { return in_->out(); }
  int bytes() const override { return in_->bytes(); }
  int max_tags() const override { return in_->max_tags(); }
  const char* impl() const override { return in_->impl(); }

 private:
  std::unique_ptr<DmacCore> in_;
  uint32_t tx_, rd_;
  std::array<uint64_t, 256> rw_digest_{};  // by read id
};

DmacCoreFactory dmac_factory(const Implementations& impl) {
  DmacCoreFactory f = dmac_impl_factory(impl);
  if (!RunRecord::get().enabled()) return f;
  return [f](const std::string& name, int bytes, uint64_t period_ps) -> std::unique_ptr<DmacCore> {
    std::unique_ptr<DmacCore> in =
        f ? f(name, bytes, period_ps) : std::make_unique<DmacModel>(bytes);
    return std::make_unique<RecordedDmac>(std::move(in), name, period_ps);
  };
}

DmacCoreFactory dmac_impl_factory(const Implementations& impl) {
  if (!impl.rtl("rnic_dmac")) return {};
  return [](const std::string&, int bytes, uint64_t) -> std::unique_ptr<DmacCore> {
    switch (bytes) {
      case 8:
        return std::make_unique<DmacRtlCore<Vrnic_dmac_cc_w8, 8, kDmacRtlTags>>();
      case 32:
        return std::make_unique<DmacRtlCore<Vrnic_dmac_cc_w32, 32, kDmacRtlTags>>();
      case 64:
        return std::make_unique<DmacRtlCore<Vrnic_dmac_cc_w64, 64, kDmacRtlTags>>();
    }
    throw std::logic_error("rnic_dmac RTL width not checked by resolve_implementations");
  };
}

RxParseFactory rx_parse_factory(const Implementations& impl) {
  RxParseFactory f = rx_parse_impl_factory(impl);
  if (!RunRecord::get().enabled()) return f;
  return [f](const std::string& name, uint64_t parse_cycles, uint64_t dp, ClockDomain clk) {
    return std::make_unique<RecordedRxParse>(f(name, parse_cycles, dp, clk), clk);
  };
}

XlatFactory xlat_factory(const Implementations& impl) {
  XlatFactory f = xlat_impl_factory(impl);
  if (!RunRecord::get().enabled()) return f;
  return [f](const std::string& name, size_t smt, size_t pbl, ClockDomain clk) {
    return std::make_unique<RecordedXlat>(f(name, smt, pbl, clk), clk);
  };
}

Crc32Factory crc32_factory(const Implementations& impl) {
  Crc32Factory f = crc32_impl_factory(impl);
  if (!RunRecord::get().enabled()) return f;
  return [f](const std::string& name, uint32_t poly, unsigned bytes, ClockDomain clk) {
    return std::make_unique<RecordedCrc32>(f(name, poly, bytes, clk), clk);
  };
}

RxParseFactory rx_parse_impl_factory(const Implementations& impl) {
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

XlatFactory xlat_impl_factory(const Implementations& impl) {
  if (!impl.rtl("rnic_xlat")) return xlat_model_factory();
  return [](const std::string& name, size_t smt, size_t pbl,
            ClockDomain clk) -> std::unique_ptr<XlatChannel> {
    return std::make_unique<XlatRtl>(name.c_str(), smt, pbl, clk);
  };
}

Crc32Factory crc32_impl_factory(const Implementations& impl) {
  if (!impl.rtl("crc32")) return crc32_model_factory();
  if (impl.traced)  // the SystemC-mode builds, clocked in simulated time (crc32_sc.h)
    return [](const std::string& name, uint32_t poly, unsigned bytes,
              ClockDomain clk) -> std::unique_ptr<Crc32Channel> {
      sc_assert(poly == Crc32::kPolyIeee);
      switch (bytes) {
        case 1:
          return std::make_unique<Crc32ScChannel<Vcrc32_w1, 1>>(name.c_str(), clk);
        case 8:
          return std::make_unique<Crc32ScChannel<Vcrc32_w8, 8>>(name.c_str(), clk);
        case 16:
          return std::make_unique<Crc32ScChannel<Vcrc32_w16, 16>>(name.c_str(), clk);
        case 64:
          return std::make_unique<Crc32ScChannel<Vcrc32_w64, 64>>(name.c_str(), clk);
      }
      throw std::logic_error("traced crc32 RTL width not checked by check_capabilities");
    };
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
