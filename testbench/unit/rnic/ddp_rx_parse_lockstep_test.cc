// ddp_rx_parse lockstep: the model's pin face (RxParsePinModel) and the Verilated RTL
// (rtl/rnic/ddp_rx_parse.sv) driven by the same constrained-random segments
// (testbench/common/ddp_segments.h: every header outcome) with random valid and ready, every output
// compared at every edge; and the mutation check (a build of the RTL with one Terminate code wrong
// must make the comparison fail). The seed is logged; `RNIC_SEED=N` replays one, and `--trace fst`
// writes both pin bundles and the RTL's internals to ddp_rx_parse_lockstep_w<B>_seed<N>.fst.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <systemc.h>
#include <verilated_fst_sc.h>

#include <cstdlib>
#include <random>

#include "Vddp_rx_parse_w16.h"
#include "Vddp_rx_parse_w16_mut.h"
#include "models/rnic/rx_parse/ddp_rx_parse_ports.h"
#include "sim/fst_trace.h"
#include "testbench/common/ddp_segments.h"
#include "testbench/common/lockstep.h"
#include "testbench/common/trace_option.h"

namespace rnic {
namespace {

constexpr uint64_t kParse = 2;  // core.rx_parse_cycles, the RTL's PARSE_CYCLES
static_assert(rx_parse_ports_match<Vddp_rx_parse_w16, 16>(),
              "the Verilated block has the ddp_rx_parse port list");

// At a datapath of kBytes (the test runs rnic-10g's, 16).
template <int kBytes, class V>
class Lockstep : public sc_core::sc_module {
 public:
  sc_core::sc_clock clk{"clk", 4, sc_core::SC_NS};
  RxParseSignals<kBytes> m{"m"}, r{"r"};  // the model's pins, the RTL's pins
  RxParsePinModel<kBytes> model{"model", kParse};
  V rtl{"rtl"};

  Lockstep(sc_core::sc_module_name n, uint64_t seed, int segments, int valid_pct, int ready_pct)
      : sc_core::sc_module(n), rng_(seed), valid_pct_(valid_pct), ready_pct_(ready_pct) {
    SC_HAS_PROCESS(Lockstep);
    model.clk(clk);
    m.connect(model);
    rtl.clk(clk);
    r.connect(rtl);
    for (int i = 0; i < segments; ++i) segs_.push_back(tb::random_ddp_segment(rng_));
    SC_THREAD(drive);
    SC_METHOD(compare);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  uint64_t mismatches = 0, cycles = 0, headers = 0, payload_beats = 0;
  bool report = true;  // each of the first mismatches a test failure (not for the mutant)
  bool finished = false;

 private:
  bool chance(int pct) { return int(rng_() % 100) < pct; }
  void tick() { wait(clk.posedge_event()); }
  template <class F>
  void both(F f) {
    f(m);
    f(r);
  }

  void drive() {
    both([](auto& s) {
      s.rst.write(true);
      s.s_valid.write(false);
    });
    tick();
    tick();
    both([](auto& s) { s.rst.write(false); });
    for (const auto& d : segs_) {
      const size_t beats = d.empty() ? 1 : (d.size() + kBytes - 1) / kBytes;
      for (size_t k = 0; k < beats; ++k) {
        while (!chance(valid_pct_)) {
          both([](auto& s) { s.s_valid.write(false); });
          tick();
        }
        pin_t<8 * kBytes> v{};
        const size_t n = std::min<size_t>(kBytes, d.size() - std::min(d.size(), k * kBytes));
        if (n) v = pack_beat<pin_t<8 * kBytes>>(&d[k * kBytes], n);
        for (size_t i = n; i < size_t(kBytes); ++i) set_pin_byte(v, int(i), 0xEE);  // junk
        both([&](auto& s) {
          s.s_data.write(v);
          s.s_last.write(k + 1 == beats);
          s.s_cnt.write(unsigned(n));
          s.s_len.write(uint32_t(d.size()));
          s.s_valid.write(true);
        });
        do tick();
        while (!m.s_ready.read());
      }
    }
    both([](auto& s) { s.s_valid.write(false); });
    for (int i = 0; i < 3000; ++i) tick();  // everything queued comes out
    finished = true;
    sc_core::sc_stop();
  }

  void compare() {
    ++cycles;
    const std::string diff = r.outputs_differing(m);
    if (!diff.empty() && ++mismatches <= 5 && report)
      ADD_FAILURE() << "edge " << cycles << ": the RTL's " << diff << " differ from the model's";
    if (m.h_valid.read() && m.h_ready.read()) ++headers;
    if (m.p_valid.read() && m.p_ready.read()) ++payload_beats;
    const bool hr = chance(ready_pct_), pr = chance(ready_pct_);
    both([&](auto& s) {
      s.h_ready.write(hr);
      s.p_ready.write(pr);
    });
  }

  std::mt19937_64 rng_;
  int valid_pct_, ready_pct_;
  std::vector<std::vector<uint8_t>> segs_;
};

template <int B, class V>
uint64_t run(uint64_t seed, int segments, int valid_pct, int ready_pct, uint64_t* cycles) {
  std::fprintf(stderr, "ddp_rx_parse lockstep: seed %llu (RNIC_SEED=%llu replays it)\n",
               (unsigned long long)seed, (unsigned long long)seed);
  Lockstep<B, V> b("lockstep", seed, segments, valid_pct, ready_pct);
  // --trace fst: both pin bundles and the RTL's internals in one file.
  std::unique_ptr<FstTrace> ft;
  if (tb::trace_format() == "fst") {
    ft = std::make_unique<FstTrace>();
    b.m.trace_fst(*ft, "lockstep.model_if");
    b.r.trace_fst(*ft, "lockstep.rtl_if");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    b.rtl.trace(&ft->file(), 99);
    ft->open(fmt::format("ddp_rx_parse_lockstep_w{}_seed{}.fst", B, seed));
  }
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  tb::write_rtl_coverage("ddp_rx_parse");
  EXPECT_TRUE(b.finished);
  EXPECT_EQ(b.headers, uint64_t(segments)) << "every segment's header result came out";
  EXPECT_GT(b.payload_beats, uint64_t(segments)) << "payloads came out";
  if (cycles) *cycles = b.cycles;
  std::fprintf(stderr, "%llu edges, %llu headers, %llu payload beats\n",
               (unsigned long long)b.cycles, (unsigned long long)b.headers,
               (unsigned long long)b.payload_beats);
  return b.mismatches;
}

// About 1e5 edges each: back to back with ready outputs (the exact burst timing), and under
// random valid/ready stalls (the queues fill, s_ready falls).
TEST(DdpRxParseLockstep, BackToBack) {
  uint64_t cycles = 0;
  EXPECT_EQ(
      (run<16, Vddp_rx_parse_w16>(tb::seed_or(11), 4000 * tb::lockstep_scale(), 100, 100, &cycles)),
      0u);
  EXPECT_GT(cycles, 50000u);
}

TEST(DdpRxParseLockstep, RandomStalls) {
  uint64_t cycles = 0;
  EXPECT_EQ(
      (run<16, Vddp_rx_parse_w16>(tb::seed_or(12), 2500 * tb::lockstep_scale(), 60, 40, &cycles)),
      0u);
  EXPECT_GT(cycles, 50000u);
}

TEST(DdpRxParseLockstep, MutantIsCaught) {
  // The mutant answers an untagged QN fault with the wrong code: the comparison must see it.
  Lockstep<16, Vddp_rx_parse_w16_mut> b("lockstep", 13, 400, 100, 100);
  b.report = false;
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  EXPECT_GT(b.mismatches, 0u);
}

}  // namespace
}  // namespace rnic
