// The crc32 block as the rest of the card reaches it (DESIGN.md §4): a request/response channel.
// A request is a message and the core-clock cycle of each of its beats (one beat per cycle at
// most, strictly increasing, none before the request is made); the response is the CRC, handed
// to `done` at the time of the cycle on which the block's m_valid is seen, so an implementation
// may answer in any number of cycles. The caller keeps one request's beats from overlapping the
// next's (the block takes one beat per cycle) and always takes the result (m_ready high). Every
// request is answered, in the order asked (the MAC keeps its frames in that order).
//
// Implementations: Crc32ModelChannel (below: the burst model, Crc32Model, one event per result)
// and Crc32RtlChannel (crc32_ports.h: a Verilated crc32 clocked only while it has work).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "models/common/crc32.h"
#include "models/common/event_queue.h"
#include "models/common/trace_sink.h"

namespace rnic {

class Crc32Channel {
 public:
  using Message = std::shared_ptr<const std::vector<uint8_t>>;
  using Done = std::function<void(uint32_t crc, uint64_t valid_cycle)>;
  virtual ~Crc32Channel() = default;
  // (beat_cycles is read during the call only.)
  virtual void request(Message msg, const std::vector<uint64_t>& beat_cycles, Done done) = 0;
  // Beats a message of `len` bytes takes.
  virtual uint64_t beats(size_t len) const = 0;
  // Waveform: what the implementation shows (the RTL's pins and internals when traced).
  virtual void trace(TraceSink& /*t*/) const {}
};

// Makes the channel a block uses: (instance name, polynomial, bytes per beat, clock).
using Crc32Factory = std::function<std::unique_ptr<Crc32Channel>(const std::string&, uint32_t,
                                                                 unsigned, ClockDomain)>;

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

 private:
  Crc32Model model_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
};

inline Crc32Factory crc32_model_factory() {
  return [](const std::string& name, uint32_t poly, unsigned bytes, ClockDomain clk) {
    return std::make_unique<Crc32ModelChannel>(name.c_str(), poly, bytes, clk);
  };
}

}  // namespace rnic
