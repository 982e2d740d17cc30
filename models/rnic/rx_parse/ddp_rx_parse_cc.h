// The ddp_rx_parse channel (ddp_rx_parse_channel.h) over the block's RTL (rtl/rnic/
// ddp_rx_parse.sv) Verilated in C++ mode (V: no SystemC ports, eval() per clock edge).
//
// A request hands over a whole segment, so the adapter knows every input beat at once: it
// drives the beats back to back (h_ready and p_ready high) and clocks the RTL until the header
// result is presented (e_h edges after the first beat was taken) and until the block would take
// the next segment's first beat (e_r edges after), then answers `done` at F + e_h and `ready` at
// F + e_r, F being the request's edge, through its event queue: the same events at the same
// times as the model channel, wherever the RTL agrees with the model. The RTL runs ahead of
// simulated time and its idle cycles between segments are not clocked: with its outputs always
// taken, what it shows of a segment (the result, its edge, and when the next may start) counts
// from that segment's first beat, and the engine sends no segment before `ready`. Payload beats
// still coming out when the next segment starts are clocked with it; the payload stays in the
// segment's buffer, as with the model.
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "models/common/rtl_cc.h"
#include "models/rnic/rx_parse/ddp_rx_parse_channel.h"
#include "models/rnic/rx_parse/ddp_rx_parse_ports.h"

namespace rnic {

// Compile-time proof that C++-mode Verilated class V has the ddp_rx_parse port list.
RNIC_CC_PORTS_MATCH(rx_parse_cc_ports_match, RNIC_RX_PARSE_PORTS)

template <class V, int BYTES>
class RxParseCcChannel : public RxParseChannel, public sc_core::sc_module {
  static_assert(rx_parse_cc_ports_match<V, BYTES>(), "ddp_rx_parse port list");

 public:
  static constexpr uint64_t kMaxCycles = 100000;  // per segment, before giving up

  RxParseCcChannel(sc_core::sc_module_name n, ClockDomain clk)
      : sc_core::sc_module(n), rtl_("ddp_rx_parse"), clk_(clk) {
    rtl_->s_valid = 0;
    rtl_->h_ready = 1;
    rtl_->p_ready = 1;
    rtl_.reset(2, 1);  // s_ready rises
  }

  void request(Segment seg, std::function<void(const RxParseResult&)> done,
               std::function<void()> ready) override {
    const uint64_t f = clk_.edge_after(now_ps(), 0);  // the first beat's edge
    const size_t len = seg->size();
    const size_t beats = len ? (len + BYTES - 1) / BYTES : 1;
    if (!rtl_->s_ready)
      throw std::logic_error(std::string(name()) + ": the RTL is not ready for a segment");
    RxParseResult r;
    bool have = false, can_start = false;
    uint64_t e = 0, e_h = 0, e_r = 0;  // edges clocked since the first beat's
    size_t k = 0;
    while (k < beats || !have || !can_start) {
      const bool offer = k < beats;
      if (offer) {
        const size_t off = k * BYTES, n = len > off ? std::min<size_t>(BYTES, len - off) : 0;
        rtl_->s_valid = 1;
        rtl_->s_last = k + 1 == beats;
        rtl_->s_cnt = CData(n);
        rtl_->s_len = SData(len);
        cc_set_bytes(rtl_->s_data, seg->data() + off, n);
      } else {
        rtl_->s_valid = 0;
      }
      const bool taken = offer && rtl_->s_ready;
      tick();
      ++e;
      if (taken) ++k;
      if (!have && rtl_->h_valid) {  // presented from the edge just clocked
        have = true;
        e_h = e - 1;
        r = result();
      }
      if (!can_start && k == beats && rtl_->s_ready) {  // the next edge would take a beat
        can_start = true;
        e_r = e;
      }
      if (e > kMaxCycles)
        throw std::runtime_error(std::string(name()) + ": ddp_rx_parse RTL gave no result");
    }
    rtl_->s_valid = 0;
    r.cycles = e_h;
    eq_.at(f + e_h * clk_.period_ps, [r, done = std::move(done)] { done(r); });
    eq_.at(f + e_r * clk_.period_ps, std::move(ready));
  }

 private:
  void tick() { rtl_.tick(); }

  RxParseResult result() const {
    RxParseResult r;
    r.dropped = rtl_->h_dropped;
    r.ok = rtl_->h_ok;
    r.why = {rdmap::Layer(rtl_->h_layer), uint8_t(rtl_->h_etype), uint8_t(rtl_->h_code)};
    r.h.tagged = rtl_->h_tagged;
    r.h.last = rtl_->h_last;
    r.h.opcode = uint8_t(rtl_->h_opcode);
    r.h.stag = rtl_->h_stag;
    r.h.to = rtl_->h_to;
    r.h.inv_stag = rtl_->h_inv_stag;
    r.h.qn = rtl_->h_qn;
    r.h.msn = rtl_->h_msn;
    r.h.mo = rtl_->h_mo;
    r.rr_ok = rtl_->h_rr_ok;
    r.rr = {rtl_->h_rr_sink_stag, rtl_->h_rr_sink_to, rtl_->h_rr_size, rtl_->h_rr_src_stag,
            rtl_->h_rr_src_to};
    r.payload_len = rtl_->h_payload_len;
    r.payload_off = r.dropped ? 0 : uint32_t(r.h.header_bytes());
    return r;
  }

  CcRtl<V> rtl_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
};

}  // namespace rnic
