// The crc32 block's boundary, written once (DESIGN.md §4), and what comes from it: the port
// list, the signal bundle, the model's pin face and the check against a Verilated class.
//
//   clk, rst                 clock, synchronous active-high reset
//   s_valid/s_ready          message beats in
//   s_data  [8*BYTES]        byte 0 in bits 7..0 is the first byte of the stream
//   s_last                   last beat of the message
//   s_cnt   [clog2(BYTES+1)] bytes valid in the last beat (0..BYTES)
//   m_valid/m_ready          result out
//   m_crc   [32]             the CRC (value, not wire order)
#pragma once

#include <systemc>
#include <vector>

#include "models/common/crc32.h"
#include "models/common/ports.h"
#include "models/common/scheduler.h"

// clk is bound by whoever owns the clock; the bundle carries the rest.
#define RNIC_CRC32_PORTS(X)                        \
  X(in, rst, 1)                                    \
  X(in, s_valid, 1)                                \
  X(out, s_ready, 1)                               \
  X(in, s_data, rnic::StreamWidths<BYTES>::DATA_W) \
  X(in, s_last, 1)                                 \
  X(in, s_cnt, rnic::StreamWidths<BYTES>::CNT_W)   \
  X(out, m_valid, 1)                               \
  X(in, m_ready, 1)                                \
  X(out, m_crc, 32)

namespace rnic {

template <int BYTES>
RNIC_SIGNAL_BUNDLE(Crc32Signals, RNIC_CRC32_PORTS)

// Compile-time proof that Verilated class V has the crc32 port list at width BYTES.
RNIC_PORTS_MATCH(crc32_ports_match, RNIC_CRC32_PORTS)

    // The model behind the crc32 pin list: the adapter collapses the beats of a message into one
    // burst for Crc32Model, and expands the model's result back onto m_valid/m_crc on the cycle the
    // model stamps, held until m_ready. Same ports, same cycle behaviour as the RTL.
    template <int BYTES>
    class Crc32PinModel : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk{"clk"};
  RNIC_CRC32_PORTS(RNIC_PORT_DECL)

  Crc32PinModel(sc_core::sc_module_name n, uint32_t poly)
      : sc_core::sc_module(n), model_(poly, BYTES) {
    SC_HAS_PROCESS(Crc32PinModel);
    SC_METHOD(on_clock);
    sensitive << clk.pos();
    dont_initialize();
    SC_METHOD(drive_ready);
    sensitive << m_ready << out_valid_;
  }

 private:
  void on_clock() {
    ++cycle_;
    static_assert(Crc32Model::kLatency == 1, "the pin face registers the result once");
    const bool out_valid = out_valid_.read();
    bool next_valid = out_valid && !m_ready.read();
    const bool accept = s_valid.read() && (!out_valid || m_ready.read());
    if (accept) {
      const auto data = s_data.read();
      const unsigned n = s_last.read() ? unsigned(s_cnt.read()) : unsigned(BYTES);
      unpack_beat(data, std::min<size_t>(n, BYTES), msg_);
      if (s_last.read()) {
        // Beats arrived on the pins at their own pace; the result rises kLatency after the last.
        m_crc.write(model_.submit(msg_.data(), msg_.size(), cycle_).crc);
        next_valid = true;
        msg_.clear();
      }
    }
    if (rst.read()) {
      next_valid = false;
      msg_.clear();
      m_crc.write(0);
    }
    out_valid_.write(next_valid);
    m_valid.write(next_valid);
  }
  void drive_ready() { s_ready.write(!out_valid_.read() || m_ready.read()); }

  Crc32Model model_;
  sc_core::sc_signal<bool> out_valid_{"out_valid"};
  std::vector<uint8_t> msg_;
  uint64_t cycle_ = 0;
};

}  // namespace rnic
