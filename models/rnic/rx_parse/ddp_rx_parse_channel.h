// ddp_rx_parse as the RX engine reaches it (DESIGN.md §4): a request/response channel. The
// engine hands over a segment on a core edge (its first beat); the channel answers with the
// header result (`done`) at the cycle that result is valid, and tells when its input has taken
// every beat of the segment (`ready`: the engine may hand over the next one), so an
// implementation may take any number of cycles. One segment at a time: the engine waits for
// `ready` before the next request. Every request gets its `done`, in the order asked (the engine
// keeps its segments in that order).
//
// Implementations: RxParseModelChannel (below: DdpRxParse, ddp_rx_parse.h, with its timing);
// the RTL twin is rtl/rnic/ddp_rx_parse.sv behind the same channel (sim/blocks.h,
// docs/rtl.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/block.h"
#include "models/common/event_queue.h"
#include "models/common/ring.h"
#include "models/common/trace_sink.h"
#include "models/rnic/rx_parse/ddp_rx_parse.h"

namespace rnic {

class RxParseChannel {
 public:
  using Segment = std::shared_ptr<const std::vector<uint8_t>>;
  struct Params {
    uint64_t parse_cycles = 2;  // core.rx_parse_cycles
  };
  class Recorded;
  virtual ~RxParseChannel() = default;
  virtual void request(Segment seg, std::function<void(const RxParseResult&)> done,
                       std::function<void()> ready) = 0;
  // Waveform: what the implementation shows of itself (the RTL's internals in a traced run).
  virtual void trace(TraceSink& /*t*/) const {}
};

// Makes the channel the RX engine uses (BlockArgs: the datapath bytes and the core clock).
using RxParseFactory = BlockFactory<RxParseChannel>;

class RxParseModelChannel : public RxParseChannel, public sc_core::sc_module {
 public:
  RxParseModelChannel(sc_core::sc_module_name n, uint64_t parse_cycles, uint64_t datapath_bytes,
                      ClockDomain clk)
      : sc_core::sc_module(n), model_(parse_cycles, datapath_bytes), clk_(clk) {}
  void request(Segment seg, std::function<void(const RxParseResult&)> done,
               std::function<void()> ready) override {
    const RxParseResult pr = model_.parse(seg->data(), seg->size());
    const uint64_t stream = model_.stream_cycles(seg->size());
    const uint64_t now = now_ps();
    // Results leave in the order asked (a segment enters once the one before has its result),
    // so they wait here in order and the event carries only the channel.
    const uint64_t at = clk_.edge_after(now, pr.cycles);
    sc_assert(at >= last_result_ps_);
    last_result_ps_ = at;
    results_.push_back({pr, std::move(done)});
    eq_.at(at, [this] {
      Result r = results_.take_front();
      r.done(r.pr);
    });
    eq_.at(clk_.edge_after(now, std::max(pr.cycles, stream)), std::move(ready));
  }

 private:
  struct Result {
    RxParseResult pr;
    std::function<void(const RxParseResult&)> done;
  };
  GrowRing<Result> results_;
  uint64_t last_result_ps_ = 0;
  DdpRxParse model_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
};

inline RxParseFactory rx_parse_model_factory() {
  return [](const BlockArgs& a, const RxParseChannel::Params& p) {
    return std::make_unique<RxParseModelChannel>(a.name.c_str(), p.parse_cycles, uint64_t(a.bytes),
                                                 a.clk);
  };
}

// The channel for the run record (block.h): each header result as the block's result bus
// carries it (ddp_rx_parse_ports.h) with its cycles, and each time it takes the next segment.
class RxParseChannel::Recorded : public RxParseChannel {
 public:
  Recorded(std::unique_ptr<RxParseChannel> in, AnswerLog& log, const BlockArgs& a)
      : in_(std::move(in)), log_(log) {
    const std::string n = dynamic_cast<sc_core::sc_object&>(*in_).name();
    src_ = log.source(n + " ddp_rx_parse", a.clk.period_ps);
    ready_src_ = log.source(n + " ddp_rx_parse ready", a.clk.period_ps);
  }
  void request(Segment seg, std::function<void(const RxParseResult&)> done,
               std::function<void()> ready) override {
    in_->request(
        std::move(seg),
        [log = &log_, src = src_, done = std::move(done)](const RxParseResult& r) {
          const uint64_t d = record_digest({r.dropped,      r.ok,         uint64_t(r.why.layer),
                                            r.why.etype,    r.why.code,   r.h.tagged,
                                            r.h.last,       r.h.opcode,   r.h.stag,
                                            r.h.to,         r.h.inv_stag, r.h.qn,
                                            r.h.msn,        r.h.mo,       r.rr_ok,
                                            r.rr.sink_stag, r.rr.sink_to, r.rr.size,
                                            r.rr.src_stag,  r.rr.src_to,  r.payload_off,
                                            r.payload_len});
          log->add(src, now_ps(), d, r.cycles);
          done(r);
        },
        [log = &log_, src = ready_src_, ready = std::move(ready)] {
          log->add(src, now_ps(), 0, 0);
          ready();
        });
  }
  void trace(TraceSink& t) const override { in_->trace(t); }

 private:
  std::unique_ptr<RxParseChannel> in_;
  AnswerLog& log_;
  uint32_t src_ = 0, ready_src_ = 0;
};

}  // namespace rnic
