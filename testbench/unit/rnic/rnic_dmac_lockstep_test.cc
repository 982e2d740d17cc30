// rnic_dmac's RTL (rtl/rnic/rnic_dmac.sv, Verilated in C++ mode) in lockstep with DmacModel
// under the random bench (testbench/common/dmac_stimulus.h): random valid/ready on every port,
// completions split at a 64-byte RCB and interleaved across tags, failed, dropped (timeouts) and
// invented completions; every output pin compared after every edge, and the bench's own checks.
// Also with idle edges not clocked (the RTL told how many it missed) against a model clocked at
// every edge, and the mutant (a piece done at any completion's last beat) caught. The seed is
// logged; RNIC_SEED replays it, RNIC_LOCKSTEP_SCALE lengthens the run (rtl-long).
#include <gtest/gtest.h>

#include "Vrnic_dmac_cc_w32.h"
#include "Vrnic_dmac_cc_w32___024root.h"
#include "Vrnic_dmac_cc_w32_mut.h"
#include "Vrnic_dmac_cc_w32_mut___024root.h"
#include "Vrnic_dmac_cc_w64.h"
#include "Vrnic_dmac_cc_w64___024root.h"
#include "Vrnic_dmac_cc_w8.h"
#include "Vrnic_dmac_cc_w8___024root.h"
#include "models/rnic/dmac/dmac_cc.h"
#include "testbench/common/dmac_stimulus.h"
#include "testbench/common/lockstep.h"

namespace rnic {
namespace {

constexpr int kTags = 256;  // the builds' TAGS

template <class V, int B>
void lockstep(uint64_t dflt_seed, tb::DmacBenchCfg c, const char* what) {
  const uint64_t seed = tb::seed_or(dflt_seed);
  c.seed = seed;
  c.reads *= tb::lockstep_scale();
  c.writes *= tb::lockstep_scale();
  DmacRtlCore<V, B, kTags> rtl("rtl", false);
  DmacModel model(B, kTags);
  tb::DmacBench b(rtl, c, &model);
  b.run(uint64_t(4000000) * uint64_t(tb::lockstep_scale()));
  std::printf(
      "%s: seed %llu, %llu edges (%llu clocked), %llu MRds, %llu MWrs, %llu rw beats, "
      "%llu timeouts\n",
      what, (unsigned long long)seed, (unsigned long long)b.edges(),
      (unsigned long long)b.clocked(), (unsigned long long)b.mrds, (unsigned long long)b.mwrs,
      (unsigned long long)b.rw_beats, (unsigned long long)b.timeouts);
  for (const auto& e : b.errors) ADD_FAILURE() << e << " (seed " << seed << ")";
  EXPECT_GT(b.mrds, 100u);
  tb::write_rtl_coverage("rnic_dmac");
}

tb::DmacBenchCfg faults() {
  tb::DmacBenchCfg c;
  c.reads = c.writes = 500;
  c.tags = 16;
  c.err_pct = 3;
  c.drop_pct = 2;
  c.junk_pct = 3;
  c.timeout = 3000;
  return c;
}

TEST(RnicDmacLockstep, Width32) { lockstep<Vrnic_dmac_cc_w32, 32>(31, faults(), "w32"); }

TEST(RnicDmacLockstep, Width8SmallSplits) {
  tb::DmacBenchCfg c = faults();
  c.mrrs = 128;
  c.mps = 128;
  c.tags = 64;
  c.max_len = 1500;
  // 64 tags of 128 B at 8 B per beat: up to 1,024 completion beats queue at the completer, which
  // answers in random order; a piece may wait longer than 3,000 cycles without being dropped.
  c.timeout = 20000;
  lockstep<Vrnic_dmac_cc_w8, 8>(32, c, "w8");
}

TEST(RnicDmacLockstep, Width64LargeSplits) {
  tb::DmacBenchCfg c = faults();
  c.mrrs = 4096;
  c.mps = 512;
  c.tags = 4;
  c.max_len = 9000;
  lockstep<Vrnic_dmac_cc_w64, 64>(33, c, "w64");
}

TEST(RnicDmacLockstep, IdleEdgesSkipped) {
  tb::DmacBenchCfg c = faults();
  c.skip_idle = true;
  c.max_delay = 400;
  lockstep<Vrnic_dmac_cc_w32, 32>(34, c, "w32 idle skipped");
}

// A directed case the random bench rarely makes: the oldest piece past its timeout while its own
// completion is being taken (it is kept), so the next oldest times out; then the oldest, its
// completion short of its byte count, times out too: a second failure of one read (the first
// failure's status is kept). RTL and model compared after every edge.
TEST(RnicDmacLockstep, NextOldestTimesOutWhileTheOldestsCompletionIsTaken) {
  DmacRtlCore<Vrnic_dmac_cc_w32, 32, kTags> rtl("rtl", false);
  DmacModel model(32, kTags);
  DmacIn in;
  in.cfg_mrrs = 512;
  in.cfg_mps = 256;
  in.cfg_tags = 8;
  in.cfg_timeout = 100;
  int edge = 0;
  auto clock = [&] {
    rtl.edge(in);
    model.edge(in);
    ++edge;
    EXPECT_TRUE(rtl.out() == model.out()) << "edge " << edge;
  };
  in.rst = true;
  clock();
  in.rst = false;
  in.tx_ready = in.rd_ready = true;
  clock();  // edge 2: out of reset
  in.rq_valid = true;
  in.rq_addr = 0x10000;  // read 1: 1,024 B, tags 0 and 1 (MRds loaded at edges 4 and 5)
  in.rq_len = 1024;
  in.rq_id = 1;
  clock();               // edge 3
  in.rq_addr = 0x20000;  // read 2: 64 B, tag 2
  in.rq_len = 64;
  in.rq_id = 2;
  clock();  // edge 4
  in.rq_valid = false;
  while (edge < 4 + 100 - 2) clock();
  // Tag 0's completion: 512 B (16 beats) whose byte count says 1,024: it cannot complete the
  // piece. One beat now, the rest after both deadlines.
  in.cp_valid = true;
  in.cp_tag = 0;
  in.cp_byte_count = 1024;
  in.cp_len = 512;
  in.cp_cnt = 32;
  in.cp_last = false;
  clock();
  in.cp_valid = false;
  int tag1_out = 0;
  while (edge < 4 + 100 + 6) {
    clock();
    if (!tag1_out && model.out().tags_used == 2) tag1_out = edge;
  }
  EXPECT_EQ(tag1_out, 5 + 100) << "tag 1 times out at its deadline, tag 0 kept";
  for (int k = 1; k < 16; ++k) {
    in.cp_valid = true;
    in.cp_last = k == 15;
    clock();
  }
  in.cp_valid = false;
  bool done1 = false;
  for (int i = 0; i < 200 && !done1; ++i) {
    clock();
    if (model.out().rd_valid && model.out().rd_id == 1) {
      done1 = true;
      EXPECT_EQ(model.out().rd_status, uint8_t(DmacStatus::kTimeout));
    }
  }
  EXPECT_TRUE(done1);
  EXPECT_EQ(model.out().tags_used, 0);
  tb::write_rtl_coverage("rnic_dmac");
}

TEST(RnicDmacLockstep, MutantIsCaught) {
  tb::DmacBenchCfg c;
  c.seed = tb::seed_or(35);
  c.reads = 60;
  c.writes = 0;
  DmacRtlCore<Vrnic_dmac_cc_w32_mut, 32, kTags> rtl("rtl mutant");
  DmacModel model(32, kTags);
  tb::DmacBench b(rtl, c, &model);
  b.run(200000);
  ASSERT_FALSE(b.errors.empty()) << "the mutant went unnoticed";
  EXPECT_NE(b.errors.front().find("differs"), std::string::npos) << b.errors.front();
}

}  // namespace
}  // namespace rnic
