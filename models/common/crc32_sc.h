// The crc32 channel (crc32_channel.h) over a crc32 Verilated in SystemC mode (V: sc_in/sc_out
// ports), clocked in simulated time so that a run's waveform can show it: used instead of the
// C++-mode adapter (crc32_cc.h) when a run with `--rtl crc32` is traced.
//
// The adapter drives the block's clock itself and, like the C++-mode adapter, gives it only the
// edges that do work: one per beat, at the beat's cycle, and those until the result shows (the
// clock is flat while the block is idle, so a run still ends when nothing is left to do). The
// edge of cycle c rises at c*P + P/2, half a period after the cycle boundary the MAC counts in,
// so the beat driven at c*P is stable around it. The result read at the boundary after the edge
// it rose at gives the same cycle as the C++-mode adapter's and the model's (crc32_channel_test,
// waveform.py).
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <verilated_fst_sc.h>

#include <deque>
#include <stdexcept>
#include <string>

#include "models/common/crc32_channel.h"
#include "models/common/crc32_ports.h"
#include "models/common/scheduler.h"
#include "models/common/sim_time.h"

namespace rnic {

template <class V, int BYTES>
class Crc32ScChannel : public Crc32Channel, public sc_core::sc_module {
  static_assert(crc32_ports_match<V, BYTES>(), "crc32 port list");

 public:
  static constexpr uint64_t kMaxLatency = 1000;  // cycles after the last beat before giving up

  Crc32ScChannel(sc_core::sc_module_name n, ClockDomain clk)
      : sc_core::sc_module(n), clk_(clk), beats_(Crc32::kPolyIeee, BYTES) {
    Scheduler::get().need_kernel_steps();  // a thread on a clock of its own
    SC_HAS_PROCESS(Crc32ScChannel);
    rtl_.clk(clock_);
    pins_.connect(rtl_);
    SC_THREAD(run);
  }

  void request(Message msg, const std::vector<uint64_t>& cycles, Done done) override {
    q_.push_back({std::move(msg), cycles, std::move(done)});
    notify_now(wake_);
  }
  uint64_t beats(size_t len) const override { return beats_.beats(len); }

  void trace(TraceSink& t) const override {
    pins_.trace_fst(t, std::string(name()) + ".pins");
    t.add_verilated([this](VerilatedFstSc& f) { const_cast<V&>(rtl_).trace(&f, 99); });
  }

 private:
  struct Req {
    Message msg;
    std::vector<uint64_t> cycles;
    Done done;
  };

  uint64_t period() const { return clk_.period_ps; }
  void until(uint64_t t_ps) {
    const uint64_t now = now_ps();
    if (t_ps < now) throw std::logic_error(std::string(name()) + ": a beat's cycle has passed");
    if (t_ps > now) wait(sc_core::sc_time(double(t_ps - now), sc_core::SC_PS));
  }
  // The rising edge of cycle c (the inputs set at c*P).
  void edge(uint64_t c) {
    until(c * period() + period() / 2);
    clock_.write(true);
  }
  // The boundary of cycle c: the clock falls, the outputs of edge c - 1 are there to read.
  void boundary(uint64_t c) {
    until(c * period());
    clock_.write(false);
  }

  void run() {
    pins_.rst.write(true);
    pins_.s_valid.write(false);
    pins_.m_ready.write(true);
    for (uint64_t c = 0; c < 2; ++c) {
      boundary(c);
      edge(c);
    }
    boundary(2);
    pins_.rst.write(false);
    for (;;) {
      while (q_.empty()) wait(wake_);
      Req r = std::move(q_.front());
      q_.pop_front();
      const size_t len = r.msg->size();
      for (size_t b = 0; b < r.cycles.size(); ++b) {
        boundary(r.cycles[b]);
        const size_t off = b * BYTES, n = std::min<size_t>(BYTES, len > off ? len - off : 0);
        const bool last = b + 1 == r.cycles.size();
        pins_.s_valid.write(true);
        pins_.s_last.write(last);
        pins_.s_cnt.write(unsigned(last ? n : BYTES));
        pins_.s_data.write(n ? pack_beat<pin_t<8 * BYTES>>(r.msg->data() + off, n)
                             : pin_t<8 * BYTES>{});
        edge(r.cycles[b]);
        if (b + 1 < r.cycles.size() && r.cycles[b + 1] > r.cycles[b] + 1) {
          boundary(r.cycles[b] + 1);  // idle (unclocked) until the next beat's cycle
          pins_.s_valid.write(false);
        }
      }
      // The result rises at an edge c and reads as high at the boundary of c + 1.
      uint64_t c = r.cycles.back();
      boundary(c + 1);
      pins_.s_valid.write(false);
      while (!pins_.m_valid.read()) {
        if (++c > r.cycles.back() + kMaxLatency)
          throw std::runtime_error(std::string(name()) + ": crc32 RTL gave no result");
        edge(c);
        boundary(c + 1);
      }
      r.done(uint32_t(pins_.m_crc.read()), c + 1);
    }
  }

  ClockDomain clk_;
  Crc32Model beats_;  // beat counting only
  sc_core::sc_signal<bool> clock_{"clk"};
  Crc32Signals<BYTES> pins_{"pins"};
  V rtl_{"rtl"};
  std::deque<Req> q_;
  sc_core::sc_event wake_;
};

}  // namespace rnic
