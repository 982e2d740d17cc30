// rnic_dmac's cycle contract (models/rnic/dmac_core.h) on its model: the pin timing to the
// cycle (reads and writes with their MRRS / MPS / 4 KiB splits, the MWr / MRd alternation,
// timeouts, one piece event per edge, waking after skipped cycles), and the random bench
// (testbench/common/dmac_stimulus.h) with stalls, RCB-split completions interleaved across tags,
// failures, dropped and invented completions, and idle edges skipped against a core clocked at
// every edge.
#include <gtest/gtest.h>

#include "models/rnic/dmac_core.h"
#include "testbench/common/dmac_stimulus.h"
#include "testbench/common/lockstep.h"

namespace rnic {
namespace {

constexpr uint32_t kTimeout = 1000;

// A model out of reset (edge 0) with MRRS 512, MPS 256, 4 tags; every output taken.
struct Pins {
  DmacModel m{16};
  DmacIn in;
  int edge = 0;
  Pins() {
    in.cfg_mrrs = 512;
    in.cfg_mps = 256;
    in.cfg_tags = 4;
    in.cfg_timeout = kTimeout;
    in.rst = true;
    m.edge(in);
    in.rst = false;
    m.edge(in);
    in.tx_ready = in.rd_ready = true;
  }
  const DmacOut& o() const { return m.out(); }
  void clock(uint32_t skip = 0) {
    in.skip = skip;
    m.edge(in);
    edge += 1 + int(skip);
    in.skip = 0;
  }
  void read(uint64_t addr, uint32_t len, uint8_t id) {
    in.rq_valid = true;
    in.rq_addr = addr;
    in.rq_len = len;
    in.rq_id = id;
    clock();
    in.rq_valid = false;
  }
  // One completion of `len` bytes (byte value = its offset in the piece's read + 1), beat by
  // beat; returns after the edge that takes its last beat.
  void cpl(uint16_t tag, uint32_t bc, uint32_t len, uint8_t status = 0) {
    const uint32_t beats = len ? (len + 15) / 16 : 1;
    for (uint32_t k = 0; k < beats; ++k) {
      in.cp_valid = true;
      in.cp_tag = tag;
      in.cp_status = status;
      in.cp_byte_count = bc;
      in.cp_len = len;
      in.cp_cnt = len ? std::min<uint32_t>(16, len - 16 * k) : 0;
      in.cp_last = k + 1 == beats;
      for (uint32_t i = 0; i < 16; ++i) in.cp_data[i] = uint8_t(k * 16 + i);
      clock();
    }
    in.cp_valid = false;
  }
};

// A read of 1000 B at 0x1F00 accepted at edge 1: MRds at 4 KiB and MRRS, one per cycle from
// edge 2, tags from the free list; bytes on rw the cycle after each completion beat, at the
// offset byte_count gives; rd the cycle after the last piece's last beat.
TEST(RnicDmac, ReadPinTimingToTheCycle) {
  Pins p;
  EXPECT_TRUE(p.o().rq_ready);
  p.read(0x1F00, 1000, 7);  // edge 1
  EXPECT_FALSE(p.o().tx_valid);
  EXPECT_TRUE(p.o().busy);
  const uint64_t want[3][3] = {{0x1F00, 256, 0}, {0x2000, 512, 1}, {0x2200, 232, 2}};
  for (const auto& w : want) {
    p.clock();  // edges 2, 3, 4
    ASSERT_TRUE(p.o().tx_valid) << p.edge;
    EXPECT_FALSE(p.o().tx_write);
    EXPECT_TRUE(p.o().tx_last);
    EXPECT_EQ(p.o().tx_addr, w[0]);
    EXPECT_EQ(p.o().tx_len, w[1]);
    EXPECT_EQ(p.o().tx_tag, w[2]);
  }
  EXPECT_EQ(p.o().tags_used, 3);
  p.clock();  // edge 5: the last MRd taken, nothing more to do
  EXPECT_FALSE(p.o().tx_valid);
  EXPECT_FALSE(p.o().busy);
  EXPECT_EQ(p.o().tmo_wait, kTimeout - 3);  // the first MRd went at edge 2
  // Tag 2's 232 B in two completions (64 + 168), then tag 0's, then tag 1's.
  p.cpl(2, 232, 64);
  EXPECT_TRUE(p.o().rw_valid);
  EXPECT_EQ(p.o().rw_id, 7);
  EXPECT_EQ(p.o().rw_off, 768u + 48);  // piece 2 starts 768 B into the read, 4th beat
  EXPECT_EQ(p.o().tags_used, 3);
  p.cpl(2, 168, 168);
  EXPECT_EQ(p.o().rw_off, 768u + 64 + 160);
  EXPECT_EQ(p.o().rw_cnt, 8u);
  EXPECT_EQ(p.o().tags_used, 2);
  EXPECT_FALSE(p.o().rd_valid);
  p.cpl(0, 256, 256);
  p.cpl(1, 512, 512);
  const int last = p.edge;
  EXPECT_TRUE(p.o().rd_valid);
  EXPECT_EQ(p.o().rd_id, 7);
  EXPECT_EQ(p.o().rd_status, 0);
  EXPECT_EQ(p.o().tags_used, 0);
  EXPECT_EQ(p.o().tmo_wait, 0u);
  EXPECT_EQ(last, 5 + 4 + 11 + 16 + 32);
  p.clock();
  EXPECT_FALSE(p.o().rd_valid);
  EXPECT_TRUE(p.o().rq_ready);
}

// A write of 300 B at 0x0FF8: MWrs of 8 (to 4 KiB), 256 (MPS) and 36 B; each starts when all its
// bytes are in, the first the cycle after its only beat; an MWr's beats back to back, realigned.
TEST(RnicDmac, WritePinTimingToTheCycle) {
  Pins p;
  std::vector<uint8_t> d(300);
  for (size_t i = 0; i < d.size(); ++i) d[i] = uint8_t(i * 7 + 1);
  p.in.wq_valid = true;
  p.in.wq_addr = 0x0FF8;
  p.in.wq_len = 300;
  std::vector<std::pair<int, DmacOut>> tx;
  for (uint32_t k = 0; k < 19; ++k) {  // data beats at edges 1..19
    p.in.wd_valid = true;
    p.in.wd_data.fill(0);
    std::copy_n(d.begin() + 16 * k, std::min<uint32_t>(16, 300 - 16 * k), p.in.wd_data.begin());
    p.clock();
    p.in.wq_valid = false;
    if (p.o().tx_valid) tx.push_back({p.edge, p.o()});
  }
  p.in.wd_valid = false;
  for (int i = 0; i < 30; ++i) {
    p.clock();
    if (p.o().tx_valid) tx.push_back({p.edge, p.o()});
  }
  ASSERT_EQ(tx.size(), 1u + 16 + 3);
  EXPECT_EQ(tx[0].first, 2);  // after edge 2: beat 0 came at edge 1
  EXPECT_EQ(tx[0].second.tx_addr, 0x0FF8u);
  EXPECT_EQ(tx[0].second.tx_len, 8u);
  EXPECT_TRUE(tx[0].second.tx_last);
  EXPECT_EQ(tx[1].first, 18);  // bytes 8..263 need beat 16, in at edge 17
  EXPECT_EQ(tx[1].second.tx_addr, 0x1000u);
  EXPECT_EQ(tx[1].second.tx_len, 256u);
  EXPECT_EQ(tx[1].second.tx_data[0], d[8]);  // realigned
  EXPECT_EQ(tx[16].first, 33);
  EXPECT_TRUE(tx[16].second.tx_last);
  EXPECT_EQ(tx[17].first, 34);  // bytes 264..299, ready since edge 20, after the MWr before it
  EXPECT_EQ(tx[17].second.tx_len, 36u);
  EXPECT_EQ(tx[19].second.tx_cnt, 4u);
  std::vector<uint8_t> got;
  for (const auto& [e, o] : tx)
    got.insert(got.end(), o.tx_data.begin(), o.tx_data.begin() + o.tx_cnt);
  EXPECT_EQ(got, d);
}

// Between TLPs, a ready MWr and an MRd that can take a tag alternate.
TEST(RnicDmac, MwrAndMrdAlternate) {
  Pins p;
  p.in.tx_ready = false;  // nothing leaves until both kinds wait
  p.in.wd_valid = true;
  for (int k = 0; k < 8; ++k) {  // two 64-B writes, 4 beats each, at edges 1 and 2
    p.in.wq_valid = k < 2;
    p.in.wq_addr = k == 0 ? 0x10000 : 0x20000;
    p.in.wq_len = 64;
    p.clock();
  }
  p.in.wq_valid = p.in.wd_valid = false;
  p.read(0x1000, 1024, 1);  // two MRds
  ASSERT_TRUE(p.o().tx_valid);
  EXPECT_TRUE(p.o().tx_write);  // the first write was ready first
  p.in.tx_ready = true;
  std::string order;
  for (int i = 0; i < 16; ++i) {
    const DmacOut pre = p.o();
    p.clock();
    if (pre.tx_valid && pre.tx_last) order += pre.tx_write ? 'W' : 'R';
  }
  EXPECT_EQ(order, "WRWR");
}

// A piece with no completion fails its read at issue + cfg_timeout, and a driver that sleeps
// until tmo_wait says wakes at that edge.
TEST(RnicDmac, TimeoutAtItsEdgeAlsoAfterSkippedCycles) {
  for (const bool sleep : {false, true}) {
    Pins p;
    p.read(0x1000, 100, 3);
    p.clock();  // edge 2: MRd issued
    p.clock();  // edge 3: taken
    ASSERT_FALSE(p.o().busy);
    ASSERT_EQ(p.o().tmo_wait, kTimeout - 1);
    if (sleep) {
      p.clock(p.o().tmo_wait - 1);  // wakes at edge 2 + kTimeout
    } else {
      while (!p.o().rd_valid && p.edge < 5000) p.clock();
    }
    EXPECT_EQ(p.edge, 2 + int(kTimeout)) << sleep;
    EXPECT_TRUE(p.o().rd_valid);
    EXPECT_EQ(p.o().rd_status, uint8_t(DmacStatus::kTimeout));
    EXPECT_EQ(p.o().tmo_wait, 0u);
  }
}

// At most one piece event per edge: a completion's last beat at the edge a piece times out
// defers the timeout by one edge; a completion being taken keeps its tag from timing out.
TEST(RnicDmac, OnePieceEventPerEdge) {
  Pins p;
  p.read(0x1000, 64, 1);  // tag 0, MRd at edge 2
  p.read(0x3000, 64, 2);  // tag 1, MRd at edge 3
  while (p.edge < int(kTimeout) - 2) p.clock();
  // Tag 1's completion (4 beats) ends at edge 2 + kTimeout, when tag 0 times out.
  p.cpl(1, 64, 64);
  ASSERT_EQ(p.edge, 2 + int(kTimeout));
  EXPECT_TRUE(p.o().rd_valid);
  EXPECT_EQ(p.o().rd_id, 2);  // tag 1's read, at its last beat
  EXPECT_EQ(p.o().tags_used, 1);
  p.clock();
  EXPECT_EQ(p.o().rd_id, 1);  // tag 0 timed out one edge late
  EXPECT_EQ(p.o().rd_status, uint8_t(DmacStatus::kTimeout));
}

TEST(RnicDmac, RandomTraffic) {
  const uint64_t seed = tb::seed_or(11);
  DmacModel m(16);
  tb::DmacBenchCfg c;
  c.seed = seed;
  tb::DmacBench b(m, c);
  b.run(400000);
  for (const auto& e : b.errors) ADD_FAILURE() << e << " (seed " << seed << ")";
  EXPECT_GT(b.mrds, 400u);
  EXPECT_GT(b.mwrs, 400u);
  EXPECT_EQ(b.max_tags_seen, 8u);
}

TEST(RnicDmac, RandomFaults) {
  const uint64_t seed = tb::seed_or(12);
  DmacModel m(8);
  tb::DmacBenchCfg c;
  c.seed = seed;
  c.err_pct = 5;
  c.drop_pct = 3;
  c.junk_pct = 5;
  c.mrrs = 256;
  c.mps = 128;
  tb::DmacBench b(m, c);
  b.run(2000000);
  for (const auto& e : b.errors) ADD_FAILURE() << e << " (seed " << seed << ")";
  EXPECT_GT(b.statuses[int(DmacStatus::kUnsupported)], 0u);
  EXPECT_GT(b.statuses[int(DmacStatus::kAbort)], 0u);
  EXPECT_GT(b.timeouts, 0u);
}

// Not clocking the block while it is idle (telling it on wake how many cycles passed) gives the
// outputs a block clocked at every edge has.
TEST(RnicDmac, IdleSkipMatchesEveryEdge) {
  const uint64_t seed = tb::seed_or(13);
  DmacModel m(16), ref(16);
  tb::DmacBenchCfg c;
  c.seed = seed;
  c.drop_pct = 4;
  c.max_delay = 400;
  c.skip_idle = true;
  tb::DmacBench b(m, c, &ref);
  b.run(2000000);
  for (const auto& e : b.errors) ADD_FAILURE() << e << " (seed " << seed << ")";
  EXPECT_GT(b.timeouts, 0u);
  EXPECT_LT(b.clocked() * 10, b.edges() * 9) << "too few idle edges to mean anything";
}

// The bench's checks can fail: a core that places one beat 1 byte off is caught.
class OffByOne : public DmacCore {
 public:
  void edge(const DmacIn& in) override {
    m_.edge(in);
    o_ = m_.out();
    if (o_.rw_valid && ++n_ == 50 && o_.rw_off) --o_.rw_off;
  }
  const DmacOut& out() const override { return o_; }
  int bytes() const override { return 16; }
  int max_tags() const override { return 1024; }
  const char* impl() const override { return "off-by-one"; }

 private:
  DmacModel m_{16};
  DmacOut o_;
  int n_ = 0;
};

TEST(RnicDmac, BenchCatchesAMisplacedBeat) {
  OffByOne bad;
  DmacModel ref(16);
  tb::DmacBenchCfg c;
  c.reads = 40;
  c.writes = 0;
  tb::DmacBench b(bad, c, &ref);
  b.run(100000);
  ASSERT_FALSE(b.errors.empty());
  bool data = false, pins = false;
  for (const auto& e : b.errors) {
    data |= e.find("other bytes") != std::string::npos;
    pins |= e.find("rw_off") != std::string::npos;
  }
  EXPECT_TRUE(data);
  EXPECT_TRUE(pins);
}

}  // namespace
}  // namespace rnic
