// Where a model registers the signals it shows in a waveform: its observable state, read when
// the waveform is dumped (every simulated time step while tracing). Models depend on this
// interface only; sim/fst_trace.h implements it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <type_traits>

class VerilatedFstSc;

namespace rnic {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // A value of `bits` bits (up to 2048), read into 32-bit words, least significant first.
  virtual void add_raw(const std::string& scope, const std::string& name, int bits,
                       std::function<void(uint32_t*)> read) = 0;
  // A Verilated SystemC-mode block's internals (its trace(VerilatedFstSc*, levels)), registered
  // when the file opens; sinks that are not an FST file ignore it.
  virtual void add_verilated(std::function<void(VerilatedFstSc&)> /*register_block*/) {}
  // A signal: scope is the hierarchical path ("tb.model"), name the signal's own name; bits its
  // width in the port list (0: the width of T). Signal bundles register through this
  // (RNIC_SIGNAL_FST, ports.h).
  template <class T>
  void add(const std::string& scope, const std::string& name, const sc_core::sc_signal_in_if<T>& s,
           int bits = 0) {
    add_raw(scope, name, bits ? bits : bits_of<T>(), [&s](uint32_t* w) { words_of(s.read(), w); });
  }
  // A value of up to 64 bits.
  void add_value(const std::string& scope, const std::string& name, int bits,
                 std::function<uint64_t()> read) {
    add_raw(scope, name, bits, [read = std::move(read)](uint32_t* w) {
      const uint64_t v = read();
      w[0] = uint32_t(v);
      w[1] = uint32_t(v >> 32);
    });
  }

 private:
  template <class T>
  struct BvWidth;
  template <int N>
  struct BvWidth<sc_dt::sc_bv<N>> {
    static constexpr int value = N;
  };
  template <class T>
  static constexpr int bits_of() {
    if constexpr (std::is_same_v<T, bool>)
      return 1;
    else if constexpr (std::is_integral_v<T>)
      return int(8 * sizeof(T));
    else
      return BvWidth<T>::value;
  }
  template <class T>
  static void words_of(const T& v, uint32_t* w) {
    if constexpr (std::is_integral_v<T>) {
      w[0] = uint32_t(uint64_t(v));
      if constexpr (sizeof(T) > 4) w[1] = uint32_t(uint64_t(v) >> 32);
    } else {
      for (int i = 0; i < (BvWidth<T>::value + 31) / 32; ++i) w[i] = v.get_word(i);
    }
  }
};

}  // namespace rnic
