// rnic_xlat lockstep: the model's pin face (XlatPinModel) and the Verilated RTL
// (rtl/rnic/rnic_xlat.sv, 32 SMT and 512 PBLMT entries, two cycles per extent switch) given the
// same table writes and the same constrained-random requests (testbench/common/xlat_stimulus.h:
// every entry type and every outcome), every output compared at every edge while rsp_ready is
// always high (the block's exact timing); under random valid and ready the RTL may present a beat
// later than the model (its producer waits for the output register, the model's queue does not), so
// there the beats are compared in order and content, and never earlier. The mutation check: a build
// of the RTL that reports a PD mismatch as an access violation must fail the comparison. The seed
// is logged; `RNIC_SEED=N` replays one, and `--trace fst` writes both pin bundles and the RTL's
// internals to rnic_xlat_lockstep_seed<N>.fst.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <systemc.h>
#include <verilated_fst_sc.h>

#include <cstdlib>
#include <deque>
#include <random>

#include "Vrnic_xlat_s32.h"
#include "Vrnic_xlat_s32_mut.h"
#include "models/rnic/xlat/xlat_ports.h"
#include "sim/fst_trace.h"
#include "testbench/common/lockstep.h"
#include "testbench/common/trace_option.h"
#include "testbench/common/xlat_stimulus.h"

namespace rnic {
namespace {

constexpr size_t kSmt = 32, kPbl = 512;  // the RTL's SMT_AW 5, PBL_AW 9
constexpr XlatTiming kTiming{2, 2, 2};   // and EXT_SWITCH_CYCLES 2 (the card's is 1)
static_assert(xlat_ports_match<Vrnic_xlat_s32>(),
              "the Verilated block has the rnic_xlat port list");

struct Beat {
  uint64_t edge, pa;
  uint32_t len;
  unsigned status;
  bool last;
};

template <class V>
class Lockstep : public sc_core::sc_module {
 public:
  sc_core::sc_clock clk{"clk", 4, sc_core::SC_NS};
  XlatSignals m{"m"}, r{"r"};  // the model's pins, the RTL's pins
  XlatPinModel model{"model", kSmt, kPbl, kTiming};
  V rtl{"rtl"};

  Lockstep(sc_core::sc_module_name n, uint64_t seed, int requests, int valid_pct, int ready_pct)
      : sc_core::sc_module(n),
        rng_(seed),
        stim_(seed + 1, kSmt, kPbl),
        requests_(requests),
        valid_pct_(valid_pct),
        ready_pct_(ready_pct) {
    SC_HAS_PROCESS(Lockstep);
    model.clk(clk);
    m.connect(model);
    rtl.clk(clk);
    r.connect(rtl);
    SC_THREAD(drive);
    SC_METHOD(compare);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  uint64_t mismatches = 0, cycles = 0, done = 0, errors = 0, faults_after_chunks = 0, chunks = 0;
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
  bool exact() const { return ready_pct_ == 100; }

  void apply(const std::vector<tb::XlatTableWrite>& writes) {
    for (const auto& w : writes) {
      both([&](auto& s) {
        s.smt_we.write(w.smt);
        s.pbl_we.write(!w.smt);
        if (w.smt) {
          s.smt_addr.write(w.addr);
          s.smt_wdata.write(smt_pack(w.e));
        } else {
          s.pbl_addr.write(w.addr);
          s.pbl_wdata.write(pbl_pack(w.p));
        }
      });
      tick();
      both([](auto& s) {
        s.smt_we.write(false);
        s.pbl_we.write(false);
      });
    }
  }

  void drive() {
    both([](auto& s) {
      s.rst.write(true);
      s.req_valid.write(false);
      s.smt_we.write(false);
      s.pbl_we.write(false);
    });
    tick();
    tick();
    both([](auto& s) { s.rst.write(false); });
    for (uint32_t i = 0; i < kSmt; ++i) apply(stim_.region(i));
    for (int n = 0; n < requests_; ++n) {
      // Every 16 requests, once both are idle, one region is replaced.
      if (n % 16 == 15) {
        while (done != uint64_t(n)) tick();
        apply(stim_.region(uint32_t(rng_() % kSmt)));
      }
      const XlatRequest q = stim_.request();
      while (!chance(valid_pct_)) tick();
      both([&](auto& s) {
        s.req_stag.write(q.stag);
        s.req_to.write(q.to);
        s.req_len.write(q.len);
        s.req_access.write(q.access);
        s.req_pd.write(q.pd);
        s.req_valid.write(true);
      });
      // Both take it at the same edge when the timing is exact; under stalls each in its turn.
      bool m_took = false, r_took = false;
      while (!m_took || !r_took) {
        tick();  // right after the edge a signal reads as the edge sampled it
        m_took |= m.req_ready.read();
        r_took |= r.req_ready.read();
        if (m_took) m.req_valid.write(false);
        if (r_took) r.req_valid.write(false);
      }
    }
    while (done != uint64_t(requests_)) tick();
    finished = true;
    sc_core::sc_stop();
  }

  void note(const char* what, const std::string& s) {
    if (++mismatches <= 5 && report) ADD_FAILURE() << "edge " << cycles << ": " << what << s;
  }

  void compare() {
    ++cycles;
    if (exact()) {
      const std::string diff = r.outputs_differing(m);
      if (!diff.empty()) note("the RTL's outputs differ from the model's: ", diff);
    }
    // Beats taken, in order: the same contents, the RTL's never before the model's.
    auto take = [&](XlatSignals& s, std::deque<Beat>& q) {
      if (s.rsp_valid.read() && s.rsp_ready.read())
        q.push_back(
            {cycles, s.rsp_pa.read(), s.rsp_len.read(), s.rsp_status.read(), s.rsp_last.read()});
    };
    take(m, mq_);
    take(r, rq_);
    while (!mq_.empty() && !rq_.empty()) {
      const Beat a = mq_.front(), b = rq_.front();
      mq_.pop_front();
      rq_.pop_front();
      if (a.pa != b.pa || a.len != b.len || a.status != b.status || a.last != b.last)
        note("a beat differs: ", fmt::format("model {:#x}/{}/{}/{} rtl {:#x}/{}/{}/{}", a.pa, a.len,
                                             a.status, a.last, b.pa, b.len, b.status, b.last));
      if (b.edge < a.edge) note("the RTL's beat came early", "");
      chunks += a.len != 0;
      if (a.status != 0) {
        ++errors;
        faults_after_chunks += a.status == unsigned(XlatStatus::kPageFault) && run_chunks_;
      }
      run_chunks_ = a.last ? 0 : run_chunks_ + 1;
      done += a.last;
    }
    const bool ready = chance(ready_pct_);
    both([&](auto& s) { s.rsp_ready.write(ready); });
  }

  std::mt19937_64 rng_;
  tb::XlatStimulus stim_;
  int requests_, valid_pct_, ready_pct_;
  std::deque<Beat> mq_, rq_;
  uint64_t run_chunks_ = 0;
};

template <class V>
uint64_t run(uint64_t seed, int requests, int valid_pct, int ready_pct, uint64_t* cycles) {
  std::fprintf(stderr, "rnic_xlat lockstep: seed %llu (RNIC_SEED=%llu replays it)\n",
               (unsigned long long)seed, (unsigned long long)seed);
  Lockstep<V> b("lockstep", seed, requests, valid_pct, ready_pct);
  std::unique_ptr<FstTrace> ft;
  if (tb::trace_format() == "fst") {
    ft = std::make_unique<FstTrace>();
    b.m.trace_fst(*ft, "lockstep.model_if");
    b.r.trace_fst(*ft, "lockstep.rtl_if");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    b.rtl.trace(&ft->file(), 99);
    ft->open(fmt::format("rnic_xlat_lockstep_seed{}.fst", seed));
  }
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  tb::write_rtl_coverage("rnic_xlat");
  EXPECT_TRUE(b.finished);
  EXPECT_EQ(b.done, uint64_t(requests)) << "every request's burst ended";
  EXPECT_GT(b.errors, uint64_t(requests) / 10) << "errors of every kind came out";
  EXPECT_GT(b.faults_after_chunks, 10u) << "page faults after chunks came out";
  if (cycles) *cycles = b.cycles;
  std::fprintf(stderr, "%llu edges, %llu requests, %llu chunks, %llu errors\n",
               (unsigned long long)b.cycles, (unsigned long long)b.done,
               (unsigned long long)b.chunks, (unsigned long long)b.errors);
  return b.mismatches;
}

// About 1e5 edges each: outputs always taken (every pin, every edge) and under random valid and
// ready stalls (beats in order, none early).
TEST(RnicXlatLockstep, OutputsAlwaysTaken) {
  uint64_t cycles = 0;
  EXPECT_EQ(run<Vrnic_xlat_s32>(tb::seed_or(21), 16000 * tb::lockstep_scale(), 100, 100, &cycles),
            0u);
  EXPECT_GT(cycles, 50000u);
}

TEST(RnicXlatLockstep, RandomStalls) {
  uint64_t cycles = 0;
  EXPECT_EQ(run<Vrnic_xlat_s32>(tb::seed_or(22), 12000 * tb::lockstep_scale(), 50, 40, &cycles),
            0u);
  EXPECT_GT(cycles, 50000u);
}

TEST(RnicXlatLockstep, MutantIsCaught) {
  Lockstep<Vrnic_xlat_s32_mut> b("lockstep", 23, 500, 100, 100);
  b.report = false;
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  EXPECT_GT(b.mismatches, 0u);
}

}  // namespace
}  // namespace rnic
