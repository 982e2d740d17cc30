// Ready/valid protocol checker, attachable to any stream of any bundle: once valid is high it
// must stay high, with the payload unchanged, until the cycle ready is also high. A broken rule
// is counted (and reported) even when the data came out right.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <systemc>

namespace rnic::tb {

class StreamChecker : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk{"clk"};

  // valid, ready and payload are read at each rising edge (their settled pre-edge values).
  StreamChecker(sc_core::sc_module_name n, std::function<bool()> valid, std::function<bool()> ready,
                std::function<std::string()> payload)
      : sc_core::sc_module(n),
        valid_(std::move(valid)),
        ready_(std::move(ready)),
        payload_(std::move(payload)) {
    SC_HAS_PROCESS(StreamChecker);
    SC_METHOD(on_clock);
    sensitive << clk.pos();
    dont_initialize();
  }

  int violations() const { return violations_; }
  uint64_t transfers() const { return transfers_; }

 private:
  void on_clock() {
    const bool v = valid_(), r = ready_();
    const std::string p = v ? payload_() : std::string();
    if (waiting_) {
      if (!v) {
        fail("valid dropped before ready");
      } else if (p != held_) {
        fail(fmt::format("payload changed while stalled: {} -> {}", held_, p));
      }
    }
    waiting_ = v && !r;
    held_ = p;
    if (v && r) ++transfers_;
  }
  void fail(const std::string& why) {
    ++violations_;
    if (violations_ <= 5)
      fmt::print(stderr, "{}: {} at {}\n", name(), why, sc_core::sc_time_stamp().to_string());
  }

  std::function<bool()> valid_, ready_;
  std::function<std::string()> payload_;
  bool waiting_ = false;
  std::string held_;
  int violations_ = 0;
  uint64_t transfers_ = 0;
};

}  // namespace rnic::tb
