// rnic_xlat's swap boundary (models/rnic/xlat/xlat_ports.h): the table entries survive packing onto
// the write ports, and the pin face gives, beat for beat and cycle for cycle, what the burst API
// gives for the same tables and requests: random regions of every SMT entry type, requests good
// and bad, under valid/ready patterns, with a ready/valid checker on both streams.
// rnic_xlat_lockstep_test runs the Verilated block against the model.
#include <gtest/gtest.h>

#include <random>

#include "models/rnic/xlat/xlat_ports.h"
#include "testbench/common/stream_checker.h"
#include "testbench/common/xlat_stimulus.h"

namespace rnic {
namespace {

using tb::StreamChecker;

SmtEntry random_entry(std::mt19937_64& rng) {
  SmtEntry e;
  e.state = SmtEntry::State(rng() % 3);
  e.type = SmtEntry::Type(rng() % 4);
  e.key = uint8_t(rng());
  e.pd = uint32_t(rng());
  e.access = uint8_t(rng() % 16);
  e.base_to = rng();
  e.length = rng();
  e.pbl_first = uint32_t(rng());
  e.pbl_count = uint32_t(rng());
  e.page_shift = uint8_t(rng() % 64);
  e.first_page_offset = rng();
  e.phys_base = rng();
  return e;
}

TEST(XlatPorts, TableEntriesSurvivePacking) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; ++i) {
    const SmtEntry e = random_entry(rng);
    const SmtEntry u = smt_unpack(smt_pack(e));
    EXPECT_EQ(u.state, e.state);
    EXPECT_EQ(u.type, e.type);
    EXPECT_EQ(u.key, e.key);
    EXPECT_EQ(u.pd, e.pd);
    EXPECT_EQ(u.access, e.access);
    EXPECT_EQ(u.base_to, e.base_to);
    EXPECT_EQ(u.length, e.length);
    EXPECT_EQ(u.pbl_first, e.pbl_first);
    EXPECT_EQ(u.pbl_count, e.pbl_count);
    EXPECT_EQ(u.page_shift, e.page_shift);
    EXPECT_EQ(u.first_page_offset, e.first_page_offset);
    EXPECT_EQ(u.phys_base, e.phys_base);
    const PblEntry p{rng(), rng()};
    const PblEntry q = pbl_unpack(pbl_pack(p));
    EXPECT_EQ(q.addr, p.addr);
    EXPECT_EQ(q.len, p.len);
  }
  // The layout is fixed: spot-check fields at their documented bits.
  SmtEntry e;
  e.key = 0xA5;
  e.phys_base = 1ull << 63;
  const SmtWord w = smt_pack(e);
  EXPECT_EQ(w.range(11, 4).to_uint(), 0xA5u);
  EXPECT_TRUE(w[377].to_bool());
  EXPECT_EQ(w.range(383, 378).to_uint(), 0u);
}

struct Observed {
  uint64_t edge;
  uint64_t pa;
  uint32_t len;
  uint8_t status;
  bool last;
};

constexpr size_t kSmt = 32, kPbl = 512;

// Drives tables and requests into the pin model, keeps a mirror of the tables for the burst
// API, and records every request acceptance and response transfer with its edge.
class XlatBench : public sc_core::sc_module {
 public:
  sc_core::sc_clock clk{"clk", 4, sc_core::SC_NS};
  XlatSignals sig{"sig"};
  XlatPinModel dut{"dut", kSmt, kPbl};

  XlatBench(sc_core::sc_module_name n, uint64_t seed, int valid_pct, int ready_pct, int requests)
      : sc_core::sc_module(n),
        rng_(seed),
        stim_(seed + 1, kSmt, kPbl),
        valid_pct_(valid_pct),
        ready_pct_(ready_pct),
        requests_(requests) {
    SC_HAS_PROCESS(XlatBench);
    dut.clk(clk);
    sig.connect(dut);
    req_chk_ = std::make_unique<StreamChecker>(
        "chk_req", [this] { return sig.req_valid.read(); }, [this] { return sig.req_ready.read(); },
        [this] {
          return fmt::format("{} {} {} {} {}", sig.req_stag.read(), sig.req_to.read(),
                             sig.req_len.read(), sig.req_access.read(), sig.req_pd.read());
        });
    rsp_chk_ = std::make_unique<StreamChecker>(
        "chk_rsp", [this] { return sig.rsp_valid.read(); }, [this] { return sig.rsp_ready.read(); },
        [this] {
          return fmt::format("{} {} {} {}", sig.rsp_pa.read(), sig.rsp_len.read(),
                             sig.rsp_status.read(), sig.rsp_last.read());
        });
    req_chk_->clk(clk);
    rsp_chk_->clk(clk);
    SC_THREAD(drive);
    SC_METHOD(monitor);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  std::vector<std::pair<uint64_t, XlatRequest>> accepted;  // edge, request
  std::vector<XlatResult> expected;                        // burst API at acceptance
  std::vector<Observed> beats;
  bool finished = false;
  int violations() const { return req_chk_->violations() + rsp_chk_->violations(); }

 private:
  bool chance(int pct) { return int(rng_() % 100) < pct; }

  void tick() { wait(clk.posedge_event()); }

  // One table write per cycle.
  void apply(const std::vector<tb::XlatTableWrite>& writes) {
    for (const auto& w : writes) {
      if (w.smt) {
        sig.smt_we.write(true);
        sig.smt_addr.write(w.addr);
        sig.smt_wdata.write(smt_pack(w.e));
      } else {
        sig.pbl_we.write(true);
        sig.pbl_addr.write(w.addr);
        sig.pbl_wdata.write(pbl_pack(w.p));
      }
      tick();
      sig.smt_we.write(false);
      sig.pbl_we.write(false);
    }
  }

  void drive() {
    sig.rst.write(true);
    sig.req_valid.write(false);
    sig.smt_we.write(false);
    sig.pbl_we.write(false);
    tick();
    tick();
    sig.rst.write(false);
    for (uint32_t i = 0; i < kSmt; ++i) apply(stim_.region(i));
    for (int n = 0; n < requests_; ++n) {
      // Every 16 requests, once the block is idle, one region is replaced.
      if (n % 16 == 15) {
        while (expected.size() != done_requests_) tick();
        apply(stim_.region(uint32_t(rng_() % kSmt)));
      }
      const XlatRequest r = stim_.request();
      while (!chance(valid_pct_)) tick();
      sig.req_stag.write(r.stag);
      sig.req_to.write(r.to);
      sig.req_len.write(r.len);
      sig.req_access.write(r.access);
      sig.req_pd.write(r.pd);
      sig.req_valid.write(true);
      do tick();
      while (!sig.req_ready.read());
      sig.req_valid.write(false);
    }
    while (done_requests_ != size_t(requests_)) tick();
    finished = true;
    sc_core::sc_stop();
  }

  void monitor() {
    ++edge_;
    if (sig.req_valid.read() && sig.req_ready.read()) {
      XlatRequest r;
      r.stag = sig.req_stag.read();
      r.to = sig.req_to.read();
      r.len = sig.req_len.read();
      r.access = uint8_t(sig.req_access.read());
      r.pd = sig.req_pd.read();
      accepted.push_back({edge_, r});
      expected.push_back(stim_.expect(r));
    }
    if (sig.rsp_valid.read() && sig.rsp_ready.read()) {
      beats.push_back({edge_, sig.rsp_pa.read(), sig.rsp_len.read(), uint8_t(sig.rsp_status.read()),
                       sig.rsp_last.read()});
      if (sig.rsp_last.read()) ++done_requests_;
    }
    sig.rsp_ready.write(chance(ready_pct_));
  }

  std::mt19937_64 rng_;
  tb::XlatStimulus stim_;
  int valid_pct_, ready_pct_, requests_;
  uint64_t edge_ = 0;
  size_t done_requests_ = 0;
  std::unique_ptr<StreamChecker> req_chk_, rsp_chk_;
};

// Beats of each request equal the burst's chunks (or its one error / empty beat); with rsp_ready
// always high each arrives exactly one edge after the cycle the burst stamps.
void check(const XlatBench& b, bool exact_timing) {
  ASSERT_TRUE(b.finished);
  EXPECT_EQ(b.violations(), 0);
  size_t k = 0;
  int errors = 0, multi = 0, faults_after_chunks = 0;
  uint64_t last_edge = 0;
  for (size_t i = 0; i < b.expected.size(); ++i) {
    const XlatResult& x = b.expected[i];
    const uint64_t a = b.accepted[i].first;
    std::vector<Observed> want;
    for (const XlatChunk& c : x.chunks) want.push_back({a + c.cycle + 1, c.pa, c.len, 0, false});
    multi += x.chunks.size() > 1;
    if (x.status != XlatStatus::kOk) {
      ++errors;
      faults_after_chunks += x.status == XlatStatus::kPageFault && !x.chunks.empty();
      want.push_back({a + x.cycles + 1, x.status == XlatStatus::kPageFault ? x.fault_to : 0, 0,
                      uint8_t(x.status), true});
    } else if (x.chunks.empty()) {
      want.push_back({a + x.cycles + 1, 0, 0, 0, true});
    } else {
      want.back().last = true;
    }
    for (const Observed& w : want) {
      ASSERT_LT(k, b.beats.size()) << "request " << i;
      const Observed& o = b.beats[k++];
      EXPECT_EQ(o.pa, w.pa) << "request " << i;
      EXPECT_EQ(o.len, w.len) << "request " << i;
      EXPECT_EQ(o.status, w.status) << "request " << i;
      EXPECT_EQ(o.last, w.last) << "request " << i;
      if (exact_timing) {
        EXPECT_EQ(o.edge, w.edge) << "request " << i;
      } else {
        EXPECT_GE(o.edge, w.edge) << "request " << i;
      }
      EXPECT_GT(o.edge, last_edge);
      last_edge = o.edge;
    }
  }
  EXPECT_EQ(k, b.beats.size());
  // The stimulus reached every kind of outcome.
  EXPECT_GT(errors, 20);
  EXPECT_GT(multi, 20);
  EXPECT_GT(faults_after_chunks, 2);
}

TEST(XlatPins, SameBeatsAndCyclesAsTheBurstApi) {
  XlatBench b("bench", 11, 100, 100, 600);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  check(b, true);
}

TEST(XlatPins, SameBeatsUnderValidAndReadyStalls) {
  XlatBench b("bench", 12, 40, 35, 600);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  check(b, false);
}

}  // namespace
}  // namespace rnic
