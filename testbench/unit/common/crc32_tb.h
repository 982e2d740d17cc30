// Test bench for the crc32 block: a stimulus of messages with valid/ready duty patterns driven
// into one or more pin-level implementations (model pin face or Verilated RTL) in lockstep, a
// ready/valid checker on both streams of every bundle, and a record of every result with the
// cycle m_valid rose and the cycle the message's last beat was accepted.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <random>
#include <systemc>
#include <vector>

#include "models/common/crc32_ports.h"
#include "testbench/common/stream_checker.h"

namespace rnic::tb {

// Bitwise reference CRC, independent of the model's table-driven code.
inline uint32_t reference_crc(uint32_t poly_normal, const std::vector<uint8_t>& m) {
  uint32_t pr = 0;
  for (int i = 0; i < 32; ++i) pr |= ((poly_normal >> i) & 1u) << (31 - i);
  uint32_t c = 0xFFFFFFFF;
  for (uint8_t b : m) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? pr : 0u);
  }
  return ~c;
}

struct Crc32Stimulus {
  std::vector<std::vector<uint8_t>> messages;
  std::vector<bool> valid_pattern{true};  // s_valid offered on cycle c if pattern[c % size]
  std::vector<bool> ready_pattern{true};  // m_ready on cycle c is pattern[c % size]
};

struct Crc32Result {
  uint32_t crc;
  uint64_t rise_cycle;         // first edge at which m_valid was seen high for this result
  uint64_t last_accept_cycle;  // edge at which the message's last beat was accepted
};

template <int BYTES>
class Crc32Bench : public sc_core::sc_module {
 public:
  using Bundle = Crc32Signals<BYTES>;
  static constexpr int kPeriodNs = 4;

  sc_core::sc_clock clk{"clk", kPeriodNs, sc_core::SC_NS};

  Crc32Bench(sc_core::sc_module_name n, Crc32Stimulus stim, int lanes)
      : sc_core::sc_module(n), stim_(std::move(stim)) {
    SC_HAS_PROCESS(Crc32Bench);
    for (int i = 0; i < lanes; ++i) {
      bundles_.push_back(std::make_unique<Bundle>(fmt::format("if{}", i).c_str()));
      Bundle* b = bundles_.back().get();
      auto add = [&](const char* what, auto valid, auto ready, auto payload) {
        checkers_.push_back(std::make_unique<StreamChecker>(
            fmt::format("chk_{}_{}", what, i).c_str(), valid, ready, payload));
        checkers_.back()->clk(clk);
      };
      add(
          "s", [b] { return b->s_valid.read(); }, [b] { return b->s_ready.read(); },
          [b] {
            return fmt::format("{} {} {}", pin_str(b->s_data.read()), b->s_last.read(),
                               b->s_cnt.read());
          });
      add(
          "m", [b] { return b->m_valid.read(); }, [b] { return b->m_ready.read(); },
          [b] { return fmt::format("{:08x}", b->m_crc.read()); });
    }
    for (const auto& m : stim_.messages) {
      const size_t nbeats = m.empty() ? 1 : (m.size() + BYTES - 1) / BYTES;
      for (size_t k = 0; k < nbeats; ++k) {
        Beat beat;
        beat.last = k + 1 == nbeats;
        const size_t off = k * BYTES;
        beat.cnt = beat.last ? unsigned(m.size() - off) : unsigned(BYTES);
        if (beat.cnt) beat.data = pack_beat<pin_t<8 * BYTES>>(&m[off], beat.cnt);
        // Bytes past s_cnt carry junk: the block must ignore them.
        for (unsigned j = beat.cnt; j < unsigned(BYTES); ++j)
          set_pin_byte(beat.data, int(j), uint8_t(0xA5 ^ j));
        beats_.push_back(beat);
      }
    }
    SC_THREAD(drive);
    SC_METHOD(monitor);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  Bundle& bundle(int i) { return *bundles_[i]; }
  template <class Dut>
  void connect(int i, Dut& dut) {
    dut.clk(clk);
    bundles_[i]->connect(dut);
  }

  // Runs until every result is out (or max_cycles); returns the results of lane 0.
  const std::vector<Crc32Result>& run(uint64_t max_cycles) {
    sc_core::sc_start(sc_core::sc_time(double(kPeriodNs) * double(max_cycles), sc_core::SC_NS));
    return results_;
  }
  uint64_t mismatches() const { return mismatches_; }
  int violations() const {
    int v = 0;
    for (const auto& c : checkers_) v += c->violations();
    return v;
  }
  bool done() const { return results_.size() == stim_.messages.size(); }

 private:
  struct Beat {
    pin_t<8 * BYTES> data{};
    bool last = false;
    unsigned cnt = 0;
  };

  template <class F>
  void each(F f) {
    for (auto& b : bundles_) f(*b);
  }

  void drive() {
    each([](Bundle& b) {
      b.rst.write(true);
      b.s_valid.write(false);
      b.m_ready.write(false);
    });
    wait(clk.posedge_event());
    wait(clk.posedge_event());
    each([](Bundle& b) { b.rst.write(false); });
    size_t next = 0;
    bool offering = false;
    uint64_t c = 0;
    while (true) {
      wait(clk.posedge_event());
      ++c;
      Bundle& b0 = *bundles_[0];
      if (offering && b0.s_ready.read()) {
        if (beats_[next].last) last_accepts_.push_back(c + 2);  // + the two reset edges
        ++next;
        offering = false;
      }
      if (!offering && next < beats_.size() &&
          stim_.valid_pattern[c % stim_.valid_pattern.size()]) {
        offering = true;
        const Beat& beat = beats_[next];
        each([&](Bundle& b) {
          b.s_data.write(beat.data);
          b.s_last.write(beat.last);
          b.s_cnt.write(beat.cnt);
        });
      }
      each([&](Bundle& b) {
        b.s_valid.write(offering);
        b.m_ready.write(stim_.ready_pattern[c % stim_.ready_pattern.size()]);
      });
    }
  }

  void monitor() {
    ++cycle_;
    Bundle& b0 = *bundles_[0];
    for (size_t i = 1; i < bundles_.size(); ++i) {
      Bundle& b = *bundles_[i];
      if (!b.outputs_differing(b0).empty()) {
        if (++mismatches_ <= 5)
          fmt::print(stderr,
                     "lockstep mismatch at cycle {}: ready {}/{} valid {}/{} crc {:08x}/{:08x}\n",
                     cycle_, b0.s_ready.read(), b.s_ready.read(), b0.m_valid.read(),
                     b.m_valid.read(), b0.m_crc.read(), b.m_crc.read());
      }
    }
    if (b0.m_valid.read()) {
      if (!seen_) rise_ = cycle_;
      seen_ = true;
      if (b0.m_ready.read()) {
        const size_t k = results_.size();
        results_.push_back(
            {b0.m_crc.read(), rise_, k < last_accepts_.size() ? last_accepts_[k] : 0});
        seen_ = false;
        if (done()) sc_core::sc_stop();
      }
    }
  }

  Crc32Stimulus stim_;
  std::vector<std::unique_ptr<Bundle>> bundles_;
  std::vector<std::unique_ptr<StreamChecker>> checkers_;
  std::vector<Beat> beats_;
  std::vector<Crc32Result> results_;
  std::vector<uint64_t> last_accepts_;
  uint64_t cycle_ = 0;
  uint64_t rise_ = 0;
  bool seen_ = false;
  uint64_t mismatches_ = 0;
};

// A duty pattern with roughly `percent` ones, from a seed.
inline std::vector<bool> duty_pattern(unsigned seed, unsigned percent, size_t len = 97) {
  std::mt19937 rng(seed);
  std::vector<bool> p(len);
  for (size_t i = 0; i < len; ++i) p[i] = rng() % 100 < percent;
  p[0] = true;
  return p;
}

inline std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

}  // namespace rnic::tb
