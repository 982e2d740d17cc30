// The crc32 channel (crc32_channel.h) over a crc32 Verilated in C++ mode (V: no SystemC ports,
// eval() per clock edge). The adapter clocks the RTL only while it has work: when a request
// comes, it drives the message's beats at their cycles and clocks on until m_valid, then hands
// m_crc back at that cycle through the same event as the model channel. Its inputs are all known
// at the request (the beats and their cycles), so it runs them at once, in cycle order, ahead of
// simulated time; the cycles between messages are skipped (the block holds no state across
// messages but the result register, which the next clocked edge empties: m_ready is high). The
// run therefore has the same SystemC events as with the model, and the same results to the
// picosecond wherever the RTL agrees with the model. Where a waveform must show the block, its
// SystemC-mode twin and signal bundle are the way (crc32_sc.h: a traced run with --rtl crc32).
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/crc32_channel.h"
#include "models/common/crc32_ports.h"
#include "models/common/rtl_cc.h"

namespace rnic {

// Compile-time proof that C++-mode Verilated class V has the crc32 port list at width BYTES.
RNIC_CC_PORTS_MATCH(crc32_cc_ports_match, RNIC_CRC32_PORTS)

template <class V, int BYTES>
class Crc32CcChannel : public Crc32Channel, public sc_core::sc_module {
  static_assert(crc32_cc_ports_match<V, BYTES>(), "crc32 port list");

 public:
  static constexpr uint64_t kMaxLatency = 1000;  // cycles after the last beat before giving up

  Crc32CcChannel(sc_core::sc_module_name n, ClockDomain clk)
      : sc_core::sc_module(n), rtl_("crc32"), clk_(clk), beats_(Crc32::kPolyIeee, BYTES) {
    rtl_->m_ready = 1;
    rtl_->s_valid = 0;
    rtl_.reset(1, 0);
  }

  void request(Message msg, const std::vector<uint64_t>& cycles, Done done) override {
    if (clocked_ && cycles.front() <= last_cycle_)
      throw std::logic_error(std::string(name()) +
                             ": a request's beats overlap the previous one's");
    uint64_t c = 0;
    for (size_t b = 0; b < cycles.size(); ++b) {
      c = cycles[b];
      const size_t len = msg->size(), off = b * BYTES;
      const bool last = b + 1 == cycles.size();
      const size_t n = std::min<size_t>(BYTES, len > off ? len - off : 0);
      rtl_->s_valid = 1;
      rtl_->s_last = last;
      rtl_->s_cnt = CData(last ? n : BYTES);
      cc_set_bytes(rtl_->s_data, msg->data() + off, n);
      tick();
    }
    rtl_->s_valid = 0;
    while (!rtl_->m_valid) {
      if (++c > cycles.back() + kMaxLatency)
        throw std::runtime_error(std::string(name()) + ": crc32 RTL gave no result");
      tick();
    }
    // m_valid rose at edge c: seen (and taken) at cycle c + 1.
    const uint32_t crc = uint32_t(rtl_->m_crc);
    const uint64_t valid = c + 1;
    last_cycle_ = c;
    clocked_ = true;
    eq_.at(valid * clk_.period_ps, [crc, valid, done = std::move(done)] { done(crc, valid); });
  }
  uint64_t beats(size_t len) const override { return beats_.beats(len); }

 private:
  void tick() { rtl_.tick(); }

  CcRtl<V> rtl_;
  ClockDomain clk_;
  Crc32Model beats_;  // beat counting only
  EventQueue eq_{"eq"};
  uint64_t last_cycle_ = 0;
  bool clocked_ = false;
};

}  // namespace rnic
