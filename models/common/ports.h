// Swap-boundary plumbing shared by every block with an RTL twin (DESIGN.md §4).
//
// A block's boundary is written once as an X-macro list of X(dir, name, width) entries, dir being
// `in` or `out` as seen from the block. From that list these helpers make the model's ports, the
// signal bundle (an sc_module, so each signal is named `<bundle>.<port>`), the bundle's connect()
// and trace(), and a compile-time check that a Verilated
// class has exactly the same ports with exactly the same types.
#pragma once

#include <string>
#include <systemc>
#include <type_traits>
#include <vector>

#include "models/common/scheduler.h"

namespace rnic {

// Verilator's SystemC port-type mapping: 1 bit -> bool, up to 32 -> uint32_t, up to 64 ->
// uint64_t, wider -> sc_bv<W>.
template <int W>
using pin_t = std::conditional_t<
    W == 1, bool,
    std::conditional_t<(W <= 32), uint32_t,
                       std::conditional_t<(W <= 64), uint64_t, sc_dt::sc_bv<W>>>>;

constexpr int clog2(long long v) {
  int r = 0;
  while ((1LL << r) < v) ++r;
  return r;
}

// Widths of a byte stream BYTES wide: its data pin and its byte count (0..BYTES) pin.
template <int BYTES>
struct StreamWidths {
  static constexpr int DATA_W = 8 * BYTES;
  static constexpr int CNT_W = clog2(BYTES + 1) < 1 ? 1 : clog2(BYTES + 1);
};

}  // namespace rnic

#define RNIC_PORT_DECL(dir, name, w) sc_core::sc_##dir<rnic::pin_t<(w)>> name{#name};
#define RNIC_SIGNAL_DECL(dir, name, w) sc_core::sc_signal<rnic::pin_t<(w)>> name{#name};
#define RNIC_SIGNAL_BIND(dir, name, w) m.name(name);
#define RNIC_SIGNAL_TRACE(dir, port, w) sc_core::sc_trace(tf, port, port.name());
#define RNIC_SIGNAL_FST(dir, port, w) ft.add(scope, #port, port, (w));
#define RNIC_SIGNAL_DIFF_in(name)
#define RNIC_SIGNAL_DIFF_out(name) \
  if (name.read() != o.name.read()) d += std::string(d.empty() ? "" : ", ") + #name;
#define RNIC_SIGNAL_DIFF(dir, name, w) RNIC_SIGNAL_DIFF_##dir(name)
#define RNIC_CHECK_PORT(dir, name, w)                                                      \
  static_assert(std::is_same_v<std::remove_reference_t<decltype(std::declval<V&>().name)>, \
                               sc_core::sc_##dir<rnic::pin_t<(w)>>>,                       \
                "Verilated port " #name " differs from the port list");

// Defines struct Name, the block's signal bundle from its port list PORTS: an sc_module with one
// sc_signal per port (named `<bundle>.<port>`), connect(m) binding every port of m (a pin model,
// a SystemC-mode Verilated block, a checker) by name, trace() into a VCD file, trace_fst()
// into an FstTrace (sim/fst_trace.h) under a scope, and outputs_differing(o), the lockstep
// benches' comparison of every output with another bundle's. Pins are read at the kernel's time
// steps, so the scheduler runs none ahead of the kernel while a bundle exists. Put `template <int
// BYTES>` before it when the list has datapath-wide ports.
#define RNIC_SIGNAL_BUNDLE(Name, PORTS)                                            \
  struct Name : sc_core::sc_module {                                               \
    PORTS(RNIC_SIGNAL_DECL)                                                        \
    explicit Name(sc_core::sc_module_name n) : sc_core::sc_module(n) {             \
      rnic::Scheduler::get().need_kernel_steps();                                  \
    }                                                                              \
    template <class T>                                                             \
    void connect(T& m) {                                                           \
      PORTS(RNIC_SIGNAL_BIND)                                                      \
    }                                                                              \
    void trace(sc_core::sc_trace_file* tf) const { PORTS(RNIC_SIGNAL_TRACE) }      \
    template <class F>                                                             \
    void trace_fst(F& ft, const std::string& scope) const {PORTS(RNIC_SIGNAL_FST)} \
    /* The outputs whose values differ from o's, comma-separated ("": none). */    \
    std::string outputs_differing(const Name& o) const {                           \
      std::string d;                                                               \
      PORTS(RNIC_SIGNAL_DIFF)                                                      \
      return d;                                                                    \
    }                                                                              \
  };

// Defines `template <class V, int BYTES = 0> constexpr bool fn()`: a compile-time proof that
// class V has clk and every port of PORTS at width BYTES, each as CHECK(dir, name, width) wants.
#define RNIC_PORTS_MATCH_BY(fn, PORTS, CHECK) \
  template <class V, int BYTES = 0>           \
  constexpr bool fn() {                       \
    CHECK(in, clk, 1)                         \
    PORTS(CHECK)                              \
    return true;                              \
  }
// ... that class V (a SystemC-mode Verilated block, or the pin model) has them, each an
// sc_in/sc_out of the width's type.
#define RNIC_PORTS_MATCH(fn, PORTS) RNIC_PORTS_MATCH_BY(fn, PORTS, RNIC_CHECK_PORT)

namespace rnic {

// Byte i (bits 8i+7..8i) of a data pin value, and the reverse.
template <class T>
uint8_t pin_byte(const T& v, int i) {
  if constexpr (std::is_integral_v<T>) {
    return uint8_t(uint64_t(v) >> (8 * i));
  } else {
    return uint8_t(v.range(8 * i + 7, 8 * i).to_uint());
  }
}
template <class T>
void set_pin_byte(T& v, int i, uint8_t b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    v = T((U(v) & ~(U(0xFF) << (8 * i))) | (U(b) << (8 * i)));
  } else {
    v.range(8 * i + 7, 8 * i) = b;
  }
}

// A beat holding bytes p[0..n) (byte 0 in bits 7..0), the rest zero; and the reverse, appending
// a beat's first n bytes to out.
template <class T>
T pack_beat(const uint8_t* p, size_t n) {
  T v{};
  for (size_t i = 0; i < n; ++i) set_pin_byte(v, int(i), p[i]);
  return v;
}
template <class T>
void unpack_beat(const T& v, size_t n, std::vector<uint8_t>& out) {
  for (size_t i = 0; i < n; ++i) out.push_back(pin_byte(v, int(i)));
}

// A pin value as text (decimal for integers, hex for sc_bv), for checkers and messages.
template <class T>
std::string pin_str(const T& v) {
  if constexpr (std::is_integral_v<T>) {
    return std::to_string(uint64_t(v));
  } else {
    return v.to_string(sc_dt::SC_HEX);
  }
}

}  // namespace rnic
