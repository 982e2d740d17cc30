// What every block's C++-mode RTL adapter shares (DESIGN.md §4, docs/rtl.md): Verilator's C++-mode
// port types, the compile-time check of a Verilated class against the block's port list, the
// Verilated block held in a context of its own (CcRtl), one clock edge, and byte access to wide
// data ports. A block's adapter is then only what is its own: how a request of its channel
// becomes pin values and edges, and how the outputs become the answer.
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "models/common/ports.h"
#include "models/common/sim_time.h"

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

}  // namespace rnic

#define RNIC_CHECK_CC_PORT(dir, name, w)                                                   \
  static_assert(std::is_same_v<std::remove_reference_t<decltype(std::declval<V&>().name)>, \
                               rnic::cc_pin_t<(w)>>,                                       \
                "Verilated (C++ mode) port " #name " differs from the port list");

// Defines `template <class V, int BYTES = 0> constexpr bool fn()`: the compile-time proof that
// C++-mode Verilated class V has clk and every port of PORTS (the block's X(dir, name, width)
// list, ports.h) at width BYTES, each with Verilator's type for its width.
#define RNIC_CC_PORTS_MATCH(fn, PORTS) RNIC_PORTS_MATCH_BY(fn, PORTS, RNIC_CHECK_CC_PORT)

namespace rnic {

// One clock edge of a C++-mode Verilated model: clk high and evaluate, then clk low. Every
// block acts on clk's rising edge alone (nothing in rtl/ reads clk otherwise), so evaluating at
// clk low would only compute the input-driven logic again from the same inputs and state, and
// find no edge; it is skipped. What that evaluation would have left behind is Verilator's record
// of clk's level at the last evaluation, from which the next evaluation sees a rising edge: it
// is set low here. (It is the generated root's member; V's root header must be included where
// this is used, and a Verilator that names it otherwise does not compile.)
template <class V>
void cc_tick(V& v) {
  v.clk = 1;
  v.eval();
  v.clk = 0;
  v.rootp->__Vtrigrprev__TOP__clk = 0;
}

// A block Verilated in C++ mode (V: no SystemC ports, eval() per clock edge), with clk low and
// rst high and evaluated once, in a VerilatedContext of its own (several blocks in one process
// each keep their own time and state). Making a context, or a model in it, makes it the
// thread's context, which the SystemC-mode blocks and the waveform file made later would then
// share: the thread's is put back. With own_context false the block lives in the thread's
// context instead (the lockstep benches write that context's coverage counters; a traced run's
// waveform file takes blocks of one context only). `name`: the model's (its scope in a
// waveform); the top module's name if empty. SHOW_CLOCK: a traced build, which may show its
// clock (show_clock); an untraced one's edge has no branch for it.
template <class V, bool SHOW_CLOCK = false>
class CcRtl {
 public:
  explicit CcRtl(const char* top, bool own_context = true, const std::string& name = "") {
    VerilatedContext* const prev = Verilated::threadContextp();
    if (own_context) ctx_ = std::make_unique<VerilatedContext>();
    v_ = std::make_unique<V>(own_context ? ctx_.get() : prev, name.empty() ? top : name.c_str());
    Verilated::threadContextp(prev);
    v_->clk = 0;
    v_->rst = 1;
    v_->eval();
  }
  ~CcRtl() { v_->final(); }
  CcRtl(const CcRtl&) = delete;
  CcRtl& operator=(const CcRtl&) = delete;

  V& operator*() { return *v_; }
  V* operator->() { return v_.get(); }
  const V* operator->() const { return v_.get(); }
  void tick() {
    if constexpr (SHOW_CLOCK) {
      if (half_ps_) return rise();
    }
    cc_tick(*v_);
  }
  // A traced build's clock in the waveform: from now on each edge leaves clk high for half a
  // period (`period_ps` / 2), when a process of its own (`process`, a unique name) lowers it and
  // evaluates again, so that every edge clocked shows as a pulse (edges not clocked, none). The
  // evaluation at clk low finds no edge and changes no register (every block acts on clk's
  // rising edge alone): the run is the untraced one's. During elaboration, after reset().
  void show_clock(const std::string& process, uint64_t period_ps) {
    static_assert(SHOW_CLOCK, "a CcRtl built to show its clock (a traced build)");
    half_ps_ = std::max<uint64_t>(period_ps / 2, 1);
    spawn_method_on(fall_ev_, process.c_str(), [this] { fall(); });
  }
  // A build with FST tracing (rnic_verilate_cc_traced): its internals into a waveform file of
  // the thread's context (F: VerilatedFstC or a class derived from it), every level.
  template <class F>
  void trace(F& f) {
    v_->trace(&f, 99);
  }
  // rst held high for `high` edges, then low for `low` more (the inputs as the caller set them).
  void reset(int high, int low) {
    v_->rst = 1;
    for (int i = 0; i < high; ++i) tick();
    v_->rst = 0;
    for (int i = 0; i < low; ++i) tick();
  }

 private:
  // An edge with the clock shown (show_clock): low first if an edge at this time left it high.
  void rise() {
    fall();
    v_->clk = 1;
    v_->eval();
    notify_at(fall_ev_, now_ps() + half_ps_);
  }
  void fall() {
    if (!v_->clk) return;
    v_->clk = 0;
    v_->eval();
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> v_;
  uint64_t half_ps_ = 0;  // show_clock
  sc_core::sc_event fall_ev_;
};

// On a little-endian host a port's bytes lie in memory in their order (an integer's lowest
// first; a VlWide's 32-bit words lowest first, each lowest byte first): the byte copies below are
// then one memcpy (the per-byte loops took 13% of an `--rtl all` run's instructions, most of
// them in rnic_dmac's four 32-byte data ports every edge).
inline constexpr bool kCcBytesInOrder = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// The first n bytes of a C++-mode data port (byte 0 in bits 7..0) into p.
template <class T>
void cc_get_bytes(const T& port, uint8_t* p, size_t n) {
  if constexpr (kCcBytesInOrder) {
    std::memcpy(p, &port, std::min(n, sizeof(T)));
  } else if constexpr (std::is_integral_v<T>) {
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(uint64_t(port) >> (8 * i));
  } else {
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(port[i / 4] >> (8 * (i % 4)));
  }
}

// Bytes p[0..n) into a C++-mode data port, byte 0 in bits 7..0; the rest zero.
template <class T>
void cc_set_bytes(T& port, const uint8_t* p, size_t n) {
  if constexpr (kCcBytesInOrder) {
    const size_t k = std::min(n, sizeof(T));
    auto* b = reinterpret_cast<uint8_t*>(&port);
    std::memcpy(b, p, k);
    std::memset(b + k, 0, sizeof(T) - k);
  } else if constexpr (std::is_integral_v<T>) {
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

}  // namespace rnic
