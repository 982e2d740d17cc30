// The rnic_xlat channel (xlat_channel.h) over the block's RTL (rtl/rnic/rnic_xlat.sv) Verilated
// in C++ mode (V: no SystemC ports, eval() per clock edge).
//
// Tables: the SMT and PBLMT the engines translate against are the RTL's memories, written only
// through its smt_we / pbl_we ports, one entry per clocked edge. The table-write port's
// acceptance checks (an index outside the configured table, a PBL range outside the PBLMT, an
// invalidation of an entry not valid or of another key or PD) are the write side's, made here
// against a copy of the SMT entries as written (the firmware's view); an invalidation or a free
// writes the whole updated entry.
//
// Requests: with the outputs always taken (rsp_ready high), the adapter presents the request,
// clocks the RTL from its accepting edge A until the last beat (edge A + c), and records each
// beat's cycle; the result is handed to the requester c core cycles after the request, through
// its event queue, as the model channel does. The RTL runs ahead of simulated time and its idle
// cycles are not clocked: one request at a time holds no state across requests but the tables,
// and the result counts from the accepting edge. The model serves each requester as its own port
// (xlat_channel.h); so does the adapter, by running each request through the block on its own,
// which is what one block instance per requester sharing the tables would do. A check request
// (status only) runs the whole translation and answers after the SMT cycles, as the model's does
// (an on-demand region's absent page is known then, before the walk could have reached it).
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "models/common/rtl_cc.h"
#include "models/rnic/latency_mutation.h"
#include "models/rnic/xlat/xlat_channel.h"
#include "models/rnic/xlat/xlat_ports.h"

namespace rnic {

// Compile-time proof that C++-mode Verilated class V has the rnic_xlat port list.
RNIC_CC_PORTS_MATCH(xlat_cc_ports_match, RNIC_XLAT_PORTS)

template <class V, int SMT_AW, int PBL_AW>
class XlatCcChannel : public XlatChannel, public sc_core::sc_module {
  static_assert(xlat_cc_ports_match<V>(), "rnic_xlat port list");

 public:
  static constexpr size_t kMaxSmt = size_t(1) << SMT_AW, kMaxPbl = size_t(1) << PBL_AW;
  static constexpr uint64_t kMaxCycles = 1ull << 34;  // a 4 GiB request in 4 KiB pages, and more

  XlatCcChannel(sc_core::sc_module_name n, size_t smt, size_t pbl, ClockDomain clk,
                XlatTiming t = {})
      : sc_core::sc_module(n), rtl_("rnic_xlat"), smt_(smt), pbl_entries_(pbl), clk_(clk), t_(t) {
    if (smt > kMaxSmt || pbl > kMaxPbl)
      throw std::logic_error(std::string(name()) + ": tables larger than the RTL's");
    rtl_->req_valid = 0;
    rtl_->rsp_ready = 1;
    rtl_->smt_we = 0;
    rtl_->pbl_we = 0;
    rtl_.reset(2, 1);  // req_ready rises
  }

  void request(const XlatRequest& r, EventQueue& to, Reply reply) override {
    XlatResult x = run(r);
    if (r.check_only) {
      x.chunks.clear();
      x.cycles = t_.smt_cycles;
    }
    const uint64_t at = now_ps() + (x.cycles + mutation::extra(mutation::kXlat)) * clk_.period_ps;
    to.at(at, [x = std::move(x), reply = std::move(reply)]() mutable { reply(std::move(x)); });
  }

  bool write_smt(uint32_t index, const SmtEntry& e) override {
    if (index >= smt_.size() || uint64_t(e.pbl_first) + e.pbl_count > pbl_entries_) return false;
    put_smt(index, e);
    return true;
  }
  bool invalidate(uint32_t stag, const uint32_t* pd) override {
    const SmtEntry* e = smt_.find(stag_index(stag));
    if (!e || e->state != SmtEntry::State::kValid || e->key != stag_key(stag) ||
        (pd && e->pd != *pd))
      return false;
    SmtEntry u = *e;
    u.state = SmtEntry::State::kInvalid;
    put_smt(stag_index(stag), u);
    return true;
  }
  bool free(uint32_t index) override {
    if (index >= smt_.size()) return false;
    SmtEntry u = smt_.at(index);
    u.state = SmtEntry::State::kFree;
    put_smt(index, u);
    return true;
  }
  bool write_pbl(uint32_t first, const std::vector<PblEntry>& entries) override {
    if (uint64_t(first) + entries.size() > pbl_entries_) return false;
    rtl_->pbl_we = 1;
    for (size_t i = 0; i < entries.size(); ++i) {
      rtl_->pbl_addr = uint32_t(first + i);
      const PblEntry& p = entries[i];
      rtl_->pbl_wdata[0] = uint32_t(p.addr);
      rtl_->pbl_wdata[1] = uint32_t(p.addr >> 32);
      rtl_->pbl_wdata[2] = uint32_t(p.len);
      rtl_->pbl_wdata[3] = uint32_t(p.len >> 32);
      tick();
    }
    rtl_->pbl_we = 0;
    return true;
  }
  size_t pbl_entries() const override { return pbl_entries_; }
  const XlatTiming& timing() const override { return t_; }
  const SmtEntry* entry(uint32_t index) const override { return smt_.find(index); }

 private:
  void tick() { rtl_.tick(); }

  void put_smt(uint32_t index, const SmtEntry& e) {
    smt_.at(index) = e;
    const SmtWord w = smt_pack(e);
    for (int k = 0; k < kSmtEntryBits / 32; ++k)
      rtl_->smt_wdata[k] = uint32_t(w.range(32 * k + 31, 32 * k).to_uint());
    rtl_->smt_addr = index;
    rtl_->smt_we = 1;
    tick();
    rtl_->smt_we = 0;
  }

  // One request through the RTL, from its accepting edge to the edge that takes its last beat.
  XlatResult run(const XlatRequest& r) {
    if (!rtl_->req_ready)
      throw std::logic_error(std::string(name()) + ": the RTL is not ready for a request");
    rtl_->req_stag = r.stag;
    rtl_->req_to = r.to;
    rtl_->req_len = r.len;
    rtl_->req_access = r.access;
    rtl_->req_pd = r.pd;
    rtl_->req_valid = 1;
    tick();  // the accepting edge
    rtl_->req_valid = 0;
    XlatResult x;
    for (uint64_t c = 1;; ++c) {
      tick();
      if (!rtl_->rsp_valid) {
        if (c > kMaxCycles)
          throw std::runtime_error(std::string(name()) + ": rnic_xlat RTL gave no result");
        continue;
      }
      const auto status = XlatStatus(rtl_->rsp_status);
      if (status != XlatStatus::kOk) {
        x.status = status;
        if (status == XlatStatus::kPageFault) x.fault_to = rtl_->rsp_pa;
      } else if (r.len) {  // (a 0-byte request's one beat carries no chunk)
        x.chunks.push_back({rtl_->rsp_pa, rtl_->rsp_len, c});
      }
      if (rtl_->rsp_last) {
        x.cycles = c;
        break;
      }
    }
    tick();  // the last beat is taken, req_ready rises
    return x;
  }

  CcRtl<V> rtl_;
  Smt smt_;  // the entries as written: the write side's checks
  size_t pbl_entries_;
  ClockDomain clk_;
  XlatTiming t_;
};

}  // namespace rnic
