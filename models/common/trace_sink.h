// Where a model registers the signals it shows in a waveform: its observable state, read when
// the waveform is dumped (every simulated time step while tracing). Models depend on this
// interface only; sim/fst_trace.h implements it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

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
  // A value of up to 64 bits.
  void add_value(const std::string& scope, const std::string& name, int bits,
                 std::function<uint64_t()> read) {
    add_raw(scope, name, bits, [read = std::move(read)](uint32_t* w) {
      const uint64_t v = read();
      w[0] = uint32_t(v);
      w[1] = uint32_t(v >> 32);
    });
  }
};

}  // namespace rnic
