// The crc32 block as the rest of the card reaches it (DESIGN.md §4): a request/response channel.
// A request is a message and the core-clock cycle of each of its beats (one beat per cycle at
// most, strictly increasing, none before the request is made); the response is the CRC, handed
// to `done` at the time of the cycle on which the block's m_valid is seen, so an implementation
// may answer in any number of cycles. The caller keeps one request's beats from overlapping the
// next's (the block takes one beat per cycle) and always takes the result (m_ready high). Every
// request is answered, in the order asked (the MAC keeps its frames in that order).
//
// Implementations: Crc32ModelChannel (below: the burst model, Crc32Model, one event per result),
// Crc32CcChannel (crc32_cc.h: a Verilated crc32 clocked only while it has work) and
// Crc32ScChannel (crc32_sc.h: its SystemC-mode build, for waveforms). The seam they share with
// the other blocks: block.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "models/common/block.h"
#include "models/common/crc32.h"
#include "models/common/event_queue.h"
#include "models/common/trace_sink.h"

namespace rnic {

class Crc32Channel {
 public:
  using Message = std::shared_ptr<const std::vector<uint8_t>>;
  using Done = std::function<void(uint32_t crc, uint64_t valid_cycle)>;
  struct Params {
    uint32_t poly = Crc32::kPolyIeee;
  };
  class Recorded;
  virtual ~Crc32Channel() = default;
  // (beat_cycles is read during the call only.)
  virtual void request(Message msg, const std::vector<uint64_t>& beat_cycles, Done done) = 0;
  // Whether request() reads only the last beat's cycle (the C++ model): the caller may then pass
  // that one alone instead of working out every beat's.
  virtual bool last_beat_only() const { return false; }
  // Beats a message of `len` bytes takes.
  virtual uint64_t beats(size_t len) const = 0;
  // Waveform: what the implementation shows (the RTL's pins and internals when traced).
  virtual void trace(TraceSink& /*t*/) const {}
};

// Makes the channel a MAC uses (BlockArgs: its bytes per beat and clock).
using Crc32Factory = BlockFactory<Crc32Channel>;

class Crc32ModelChannel : public Crc32Channel, public sc_core::sc_module {
 public:
  Crc32ModelChannel(sc_core::sc_module_name n, uint32_t poly, unsigned bytes, ClockDomain clk)
      : sc_core::sc_module(n), model_(poly, bytes), clk_(clk) {}
  void request(Message msg, const std::vector<uint64_t>& beat_cycles, Done done) override {
    const uint64_t last = beat_cycles.back();
    const uint64_t valid = last + Crc32Model::kLatency;
    const uint32_t crc = model_.crc().compute(msg->data(), msg->size());
    eq_.at(valid * clk_.period_ps, [crc, valid, done = std::move(done)] { done(crc, valid); });
  }
  uint64_t beats(size_t len) const override { return model_.beats(len); }
  bool last_beat_only() const override { return true; }

 private:
  Crc32Model model_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
};

inline Crc32Factory crc32_model_factory() {
  return [](const BlockArgs& a, const Crc32Channel::Params& p) {
    return std::make_unique<Crc32ModelChannel>(a.name.c_str(), p.poly, unsigned(a.bytes), a.clk);
  };
}

// The channel for the run record (block.h): each CRC and the cycle it is valid at, when done.
class Crc32Channel::Recorded : public Crc32Channel {
 public:
  Recorded(std::unique_ptr<Crc32Channel> in, AnswerLog& log, const BlockArgs& a)
      : in_(std::move(in)),
        log_(log),
        src_(log.source(std::string(dynamic_cast<sc_core::sc_object&>(*in_).name()) + " crc32",
                        a.clk.period_ps)) {}
  void request(Message msg, const std::vector<uint64_t>& beat_cycles, Done done) override {
    in_->request(std::move(msg), beat_cycles,
                 [log = &log_, src = src_, done = std::move(done)](uint32_t crc, uint64_t valid) {
                   log->add(src, now_ps(), crc, valid);
                   done(crc, valid);
                 });
  }
  uint64_t beats(size_t len) const override { return in_->beats(len); }
  bool last_beat_only() const override { return in_->last_beat_only(); }
  void trace(TraceSink& t) const override { in_->trace(t); }

 private:
  std::unique_ptr<Crc32Channel> in_;
  AnswerLog& log_;
  uint32_t src_;
};

}  // namespace rnic
