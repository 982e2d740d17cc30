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
// TRACED: V is a build with FST tracing (rnic_verilate_cc_traced), in the thread's context, and
// the adapter clocks the same edges in simulated time instead, each at its own time (f + e
// periods, one event each): the RTL sees the same inputs edge for edge, and the result and
// `ready` go out at the same times, so the run is the untraced one's, with the block's internals
// in the waveform.
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <verilated_fst_sc.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/common/rtl_cc.h"
#include "models/rnic/rx_parse/ddp_rx_parse_channel.h"
#include "models/rnic/rx_parse/ddp_rx_parse_ports.h"

namespace rnic {

// Compile-time proof that C++-mode Verilated class V has the ddp_rx_parse port list.
RNIC_CC_PORTS_MATCH(rx_parse_cc_ports_match, RNIC_RX_PARSE_PORTS)

template <class V, int BYTES, bool TRACED = false>
class RxParseCcChannel : public RxParseChannel, public sc_core::sc_module {
  static_assert(rx_parse_cc_ports_match<V, BYTES>(), "ddp_rx_parse port list");

 public:
  static constexpr uint64_t kMaxCycles = 100000;  // per segment, before giving up

  RxParseCcChannel(sc_core::sc_module_name n, ClockDomain clk)
      : sc_core::sc_module(n),
        rtl_("ddp_rx_parse", !TRACED, TRACED ? std::string(name()) + ".rtl" : std::string()),
        clk_(clk) {
    rtl_->s_valid = 0;
    rtl_->h_ready = 1;
    rtl_->p_ready = 1;
    rtl_.reset(2, 1);  // s_ready rises
    if constexpr (TRACED) {
      std::string fall = std::string(name()) + "_clk_fall";
      std::replace(fall.begin(), fall.end(), '.', '_');
      rtl_.show_clock(fall, clk.period_ps);
    }
  }

  void request(Segment seg, std::function<void(const RxParseResult&)> done,
               std::function<void()> ready) override {
    if constexpr (TRACED) {
      if (seg_.active) {  // edges past the last segment's `ready`: clocked now, as untraced
        Seg& o = seg_;
        while (edge(o)) {
        }
        o.active = false;
        if (o.done) {
          o.r.cycles = o.e_h;
          eq_.at(o.f + o.e_h * clk_.period_ps, [r = o.r, done = std::move(o.done)] { done(r); });
        }
        if (o.ready) eq_.at(o.f + o.e_r * clk_.period_ps, std::move(o.ready));
      }
    }
    if (!rtl_->s_ready)
      throw std::logic_error(std::string(name()) + ": the RTL is not ready for a segment");
    Seg g;
    g.f = clk_.edge_after(now_ps(), 0);  // the first beat's edge
    g.beats = seg->size() ? (seg->size() + BYTES - 1) / BYTES : 1;
    g.seg = std::move(seg);
    if constexpr (TRACED) {
      g.serial = ++serial_;
      g.done = std::move(done);
      g.ready = std::move(ready);
      g.active = true;
      seg_ = std::move(g);
      eq_.at(seg_.f, [this, n = seg_.serial] { step_in_time(n); });
    } else {  // every edge of the segment now, ahead of simulated time
      while (edge(g)) {
      }
      g.r.cycles = g.e_h;
      eq_.at(g.f + g.e_h * clk_.period_ps, [r = g.r, done = std::move(done)] { done(r); });
      eq_.at(g.f + g.e_r * clk_.period_ps, std::move(ready));
    }
  }

  // Traced: the RTL's internals in the run's waveform under <name>.rtl.ddp_rx_parse.*.
  void trace(TraceSink& t) const override {
    if constexpr (TRACED)
      t.add_verilated([this](VerilatedFstSc& f) { const_cast<CcRtl<V, TRACED>&>(rtl_).trace(f); });
  }

 private:
  // The segment in the block: its beats, the edges clocked since its first beat's (e), the beats
  // taken (k), and what the edges showed: the header result (at edge e_h) and when the next
  // segment may start (e_r). Traced, the segment being clocked in time keeps its answers here.
  struct Seg {
    Segment seg;
    std::function<void(const RxParseResult&)> done;
    std::function<void()> ready;
    uint64_t serial = 0;  // the request's
    uint64_t f = 0, e = 0, e_h = 0, e_r = 0;
    size_t beats = 0, k = 0;
    bool active = false, have = false, can_start = false;
    RxParseResult r;
  };

  // One edge of the segment's: its beat offered (while any is left), the clock, and what the
  // outputs show. False once the result and the next segment's start are known. Inlined: the
  // untraced loop then keeps the segment's counters in registers (as a call, a --rtl
  // ddp_rx_parse run took 0.6% more instructions).
  __attribute__((always_inline)) bool edge(Seg& g) {
    const size_t len = g.seg->size();
    const bool offer = g.k < g.beats;
    if (offer) {
      const size_t off = g.k * BYTES, n = len > off ? std::min<size_t>(BYTES, len - off) : 0;
      rtl_->s_valid = 1;
      rtl_->s_last = g.k + 1 == g.beats;
      rtl_->s_cnt = CData(n);
      rtl_->s_len = SData(len);
      cc_set_bytes(rtl_->s_data, g.seg->data() + off, n);
    } else {
      rtl_->s_valid = 0;
    }
    const bool taken = offer && rtl_->s_ready;
    rtl_.tick();
    ++g.e;
    if (taken) ++g.k;
    if (!g.have && rtl_->h_valid) {  // presented from the edge just clocked
      g.have = true;
      g.e_h = g.e - 1;
      g.r = result();
    }
    if (!g.can_start && g.k == g.beats && rtl_->s_ready) {  // the next edge would take a beat
      g.can_start = true;
      g.e_r = g.e;
    }
    if (g.e > kMaxCycles)
      throw std::runtime_error(std::string(name()) + ": ddp_rx_parse RTL gave no result");
    const bool more = g.k < g.beats || !g.have || !g.can_start;
    if (!more) rtl_->s_valid = 0;
    return more;
  }

  // Traced: the edge due now, at f + (e - 1) periods; the result goes out at its edge's time,
  // `ready` at the edge after the one that showed it (the untraced times), the next edge a
  // period on. The next edge is queued before `ready`, so that at one time the result goes
  // first, as untraced.
  void step_in_time(uint64_t serial) {
    Seg& g = seg_;
    if (!g.active || g.serial != serial) return;  // (a request came first: it clocked the rest)
    const bool had = g.have, could = g.can_start;
    const bool more = edge(g);
    if (more) eq_.at(now_ps() + clk_.period_ps, [this, serial] { step_in_time(serial); });
    if (!could && g.can_start)
      eq_.at(g.f + g.e_r * clk_.period_ps, std::exchange(g.ready, nullptr));
    if (!more) g.active = false;
    if (!had && g.have) {  // (done may make the next request: g is then that segment's)
      g.r.cycles = g.e_h;
      auto done = std::exchange(g.done, nullptr);
      const RxParseResult r = g.r;
      done(r);
    }
  }

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

  CcRtl<V, TRACED> rtl_;
  ClockDomain clk_;
  Seg seg_;
  uint64_t serial_ = 0;
  EventQueue eq_{"eq"};
};

}  // namespace rnic
