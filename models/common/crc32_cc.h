// The crc32 channel (crc32_channel.h) over a crc32 Verilated in C++ mode (V: no SystemC ports,
// eval() per clock edge). The adapter clocks the RTL only while it has work: when a request
// comes, it drives the message's beats at their cycles and clocks on until m_valid, then hands
// m_crc back at that cycle through the same event as the model channel. Its inputs are all known
// at the request (the beats and their cycles), so it runs them at once, in cycle order, ahead of
// simulated time; the cycles between messages are skipped (the block holds no state across
// messages but the result register, which the next clocked edge empties: m_ready is high). The
// run therefore has the same SystemC events as with the model, and the same results to the
// picosecond wherever the RTL agrees with the model. Where a waveform must show the block, its
// SystemC-mode twin and signal bundle (crc32_ports.h) are the way; runs do not trace it yet.
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <verilated.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "models/common/crc32_channel.h"
#include "models/common/crc32_ports.h"

namespace rnic {

// Verilator's C++-mode port types: up to 8 bits CData, 16 SData, 32 IData, 64 QData, wider
// VlWide of 32-bit words.
template <int W>
using cc_pin_t = std::conditional_t<
    (W <= 8), CData,
    std::conditional_t<
        (W <= 16), SData,
        std::conditional_t<(W <= 32), IData,
                           std::conditional_t<(W <= 64), QData, VlWide<(W + 31) / 32>>>>>;

#define RNIC_CHECK_CC_PORT(dir, name, w)                                                   \
  static_assert(std::is_same_v<std::remove_reference_t<decltype(std::declval<V&>().name)>, \
                               rnic::cc_pin_t<(w)>>,                                       \
                "Verilated (C++ mode) port " #name " differs from the port list");

// Compile-time proof that C++-mode Verilated class V has the crc32 port list at width BYTES.
template <class V, int BYTES>
constexpr bool crc32_cc_ports_match() {
  RNIC_CHECK_CC_PORT(in, clk, 1)
  RNIC_CRC32_PORTS(RNIC_CHECK_CC_PORT)
  return true;
}

// One clock edge of a C++-mode Verilated model: clk high, evaluate, clk low, evaluate.
template <class V>
void cc_tick(V& v) {
  v.clk = 1;
  v.eval();
  v.clk = 0;
  v.eval();
}

// The first n bytes of a C++-mode data port (byte 0 in bits 7..0) into p.
template <class T>
void cc_get_bytes(const T& port, uint8_t* p, size_t n) {
  if constexpr (std::is_integral_v<T>) {
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(uint64_t(port) >> (8 * i));
  } else {
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(port[i / 4] >> (8 * (i % 4)));
  }
}

// Bytes p[0..n) into a C++-mode data port, byte 0 in bits 7..0; the rest zero.
template <class T>
void cc_set_bytes(T& port, const uint8_t* p, size_t n) {
  if constexpr (std::is_integral_v<T>) {
    T v = 0;
    for (size_t i = 0; i < n; ++i) v |= T(T(p[i]) << (8 * i));
    port = v;
  } else {
    for (size_t w = 0; w < sizeof(port) / sizeof(EData); ++w) {
      EData v = 0;
      for (size_t b = 0; b < 4 && 4 * w + b < n; ++b) v |= EData(p[4 * w + b]) << (8 * b);
      port[w] = v;
    }
  }
}

template <class V, int BYTES>
class Crc32CcChannel : public Crc32Channel, public sc_core::sc_module {
  static_assert(crc32_cc_ports_match<V, BYTES>(), "crc32 port list");

 public:
  static constexpr uint64_t kMaxLatency = 1000;  // cycles after the last beat before giving up

  Crc32CcChannel(sc_core::sc_module_name n, ClockDomain clk)
      : sc_core::sc_module(n),
        ctx_(std::make_unique<VerilatedContext>()),
        rtl_(std::make_unique<V>(ctx_.get(), "crc32")),
        clk_(clk),
        beats_(Crc32::kPolyIeee, BYTES) {
    rtl_->clk = 0;
    rtl_->rst = 1;
    rtl_->m_ready = 1;
    rtl_->s_valid = 0;
    rtl_->eval();
    tick();  // reset
    rtl_->rst = 0;
  }
  ~Crc32CcChannel() override { rtl_->final(); }

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
  void tick() { cc_tick(*rtl_); }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> rtl_;
  ClockDomain clk_;
  Crc32Model beats_;  // beat counting only
  EventQueue eq_{"eq"};
  uint64_t last_cycle_ = 0;
  bool clocked_ = false;
};

}  // namespace rnic
