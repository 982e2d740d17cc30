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

#include <deque>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/crc32.h"
#include "models/common/crc32_channel.h"
#include "models/common/ports.h"

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
struct Crc32Signals : sc_core::sc_module {
  RNIC_CRC32_PORTS(RNIC_SIGNAL_DECL)

  explicit Crc32Signals(sc_core::sc_module_name n) : sc_core::sc_module(n) {}

  // Binds every port of m (a model, a Verilated block, a checker) by name.
  template <class T>
  void connect(T& m) {
    RNIC_CRC32_PORTS(RNIC_SIGNAL_BIND)
  }
  void trace(sc_core::sc_trace_file* tf) const { RNIC_CRC32_PORTS(RNIC_SIGNAL_TRACE) }
  // Into an FstTrace (sim/fst_trace.h) under `scope`.
  template <class F>
  void trace_fst(F& ft, const std::string& scope) const {
    RNIC_CRC32_PORTS(RNIC_SIGNAL_FST)
  }
};

// Compile-time proof that Verilated class V has the crc32 port list at width BYTES.
template <class V, int BYTES>
constexpr bool crc32_ports_match() {
  RNIC_CHECK_PORT(in, clk, 1)
  RNIC_CRC32_PORTS(RNIC_CHECK_PORT)
  return true;
}

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

// The crc32 channel (crc32_channel.h) over a Verilated crc32 V of width BYTES: the adapter drives
// each request's beats onto the pins at their cycles and hands back m_crc at the cycle m_valid is
// seen. The block's clock runs only while it has work: the adapter's thread raises clk at each
// cycle it needs (a beat due, then until m_valid) and sleeps otherwise; the RTL has no timers, so
// skipping idle cycles changes nothing it computes. A result is taken by the next clocked edge.
template <class V, int BYTES>
class Crc32RtlChannel : public Crc32Channel, public sc_core::sc_module {
  static_assert(crc32_ports_match<V, BYTES>(), "crc32 port list");

 public:
  Crc32RtlChannel(sc_core::sc_module_name n, uint32_t poly, ClockDomain clk)
      : sc_core::sc_module(n), rtl_("rtl"), pins_("pins"), clk_(clk), beats_model_(poly, BYTES) {
    rtl_.clk(clk_sig_);
    pins_.connect(rtl_);
    SC_HAS_PROCESS(Crc32RtlChannel);
    SC_THREAD(run);
  }
  void request(Message msg, std::vector<uint64_t> beat_cycles, Done done) override {
    sc_assert(queue_.empty() || queue_.back().cycles.back() < beat_cycles.front());
    queue_.push_back({std::move(msg), std::move(beat_cycles), std::move(done)});
    work_.notify(sc_core::SC_ZERO_TIME);
  }
  uint64_t beats(size_t len) const override { return beats_model_.beats(len); }

 private:
  struct Req {
    Message msg;
    std::vector<uint64_t> cycles;
    Done done;
  };
  void wait_until(uint64_t t_ps) {
    const uint64_t now = now_ps();
    if (t_ps > now) sc_core::wait(sc_core::sc_time::from_value(t_ps - now));
  }
  // One rising edge at `cycle` with this beat (or none) on the inputs; returns m_valid after it.
  bool edge(uint64_t cycle, const Req* r, size_t beat) {
    wait_until(cycle * clk_.period_ps);
    pins_.m_ready.write(true);
    pins_.rst.write(false);
    if (r) {
      const size_t len = r->msg->size(), off = beat * BYTES;
      const bool last = beat + 1 == r->cycles.size();
      const size_t n = std::min<size_t>(BYTES, len > off ? len - off : 0);
      pins_.s_valid.write(true);
      pins_.s_last.write(last);
      pins_.s_cnt.write(pin_t<StreamWidths<BYTES>::CNT_W>(last ? n : BYTES));
      pins_.s_data.write(pack_beat<pin_t<StreamWidths<BYTES>::DATA_W>>(r->msg->data() + off, n));
    } else {
      pins_.s_valid.write(false);
    }
    sc_core::wait(sc_core::SC_ZERO_TIME);  // inputs settle
    clk_sig_.write(true);
    sc_core::wait(sc_core::SC_ZERO_TIME);  // the edge
    sc_core::wait(sc_core::SC_ZERO_TIME);  // outputs settle
    clk_sig_.write(false);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    return pins_.m_valid.read();
  }
  void run() {
    for (;;) {
      while (queue_.empty()) sc_core::wait(work_);
      Req r = std::move(queue_.front());
      queue_.pop_front();
      bool valid = false;
      uint64_t c = 0;
      for (size_t b = 0; b < r.cycles.size(); ++b) {
        c = r.cycles[b];
        valid = edge(c, &r, b);
      }
      while (!valid) valid = edge(++c, nullptr, 0);
      // m_valid rose at edge c: the consumer sees it at cycle c + 1, and takes it then.
      const uint32_t crc = uint32_t(pins_.m_crc.read());
      wait_until((c + 1) * clk_.period_ps);
      r.done(crc, c + 1);  // the next clocked edge takes it (m_ready is always high)
    }
  }

  V rtl_;
  Crc32Signals<BYTES> pins_;
  sc_core::sc_signal<bool> clk_sig_{"clk"};
  ClockDomain clk_;
  Crc32Model beats_model_;  // beat counting only
  std::deque<Req> queue_;
  sc_core::sc_event work_;
};

}  // namespace rnic
