// rnic_dmac's cycle contract (models/rnic/dmac/dmac_core.h) on its model: the pin timing to the
// cycle (reads and writes with their MRRS / MPS / 4 KiB splits, the MWr / MRd alternation,
// timeouts, one piece event per edge, waking after skipped cycles), and the random bench
// (testbench/common/dmac_stimulus.h) with stalls, RCB-split completions interleaved across tags,
// failures, dropped and invented completions, and idle edges skipped against a core clocked at
// every edge.
#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "models/rnic/dmac/dmac_core.h"
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

// A driver as the card's DMA service is (models/rnic/dmac/dmac.h), without SystemC: requests,
// writes and completions queue with the edge they reach the block, completions' beats are
// presented back to back, write data beat by beat, every output taken. With `runs`, it clocks
// beat edges at once (DmacModel::beat_run) where it can, in runs of at most a random length.
struct BeatDriver {
  struct Cpl {
    uint64_t first;
    uint16_t tag;
    uint8_t status;
    uint32_t bc, len;
    std::vector<uint8_t> data;
  };
  struct Sent {  // a TLP as the link would get it, or a read's done
    uint64_t edge = 0;
    bool write = false, done = false;
    uint64_t addr = 0;
    uint32_t len = 0;
    uint16_t tag = 0;
    std::vector<uint8_t> data;
    bool operator==(const Sent& o) const {
      return edge == o.edge && write == o.write && done == o.done && addr == o.addr &&
             len == o.len && tag == o.tag && data == o.data;
    }
  };
  DmacModel m;
  int B;
  bool runs;
  std::mt19937_64 rng;
  DmacIn in;
  std::deque<std::pair<uint64_t, std::pair<uint64_t, uint32_t>>> rq;  // due, (addr, len)
  std::deque<std::pair<uint64_t, std::vector<uint8_t>>> wq;           // due, data (addr = 0x1000)
  std::deque<std::vector<uint8_t>> wd;
  size_t wd_pos = 0;
  std::deque<Cpl> cp;
  uint32_t cp_k = 0;
  std::vector<std::vector<uint8_t>> slot{256};
  std::deque<uint8_t> ids;
  Sent tx;
  std::vector<Sent> sent;
  uint64_t run_edges = 0, header_runs = 0, tlp_runs = 0, skip_runs = 0;

  static uint8_t mem(uint64_t a) { return uint8_t(a * 131 + 7); }
  BeatDriver(int bytes, bool r, uint64_t seed) : m(bytes), B(bytes), runs(r), rng(seed) {
    in.cfg_mrrs = 512;
    in.cfg_mps = 256;
    in.cfg_tags = 8;
    in.cfg_timeout = 3000;
    in.rst = true;
    m.edge(in);
    in.rst = false;
    m.edge(in);
    in.tx_ready = in.rd_ready = true;
    for (int i = 0; i < 256; ++i) ids.push_back(uint8_t(i));
  }
  // In the order of arrival (behind the completion being taken).
  void queue(Cpl&& c) {
    auto it = cp.end();
    while (it != cp.begin() + (cp_k > 0) && std::prev(it)->first > c.first) --it;
    cp.insert(it, std::move(c));
  }
  // The host's answer to an MRd taken at edge e: completions at a 64-byte RCB, after a delay
  // of the TLP's own (so both drivers see the same), some failed, some never sent.
  void answer(uint64_t e, uint64_t addr, uint32_t len, uint16_t tag) {
    const uint64_t h = addr * 0x9E3779B97F4A7C15ull;
    if ((h >> 40) % 40 == 0) return;  // dropped: the piece times out
    uint64_t first = e + 1 + (h >> 20) % 50;
    if ((h >> 30) % 30 == 0)
      return queue({first, tag, uint8_t(DmacStatus::kUnsupported), len, 0, {}});
    for (uint32_t off = 0; off < len;) {
      uint32_t n = std::min<uint32_t>(len - off, 256);
      if (off + n < len)
        n = std::max<uint32_t>(64, uint32_t((addr + off + n) / 64 * 64 - addr - off));
      Cpl c{first, tag, 0, len - off, n, {}};
      for (uint32_t i = 0; i < n; ++i) c.data.push_back(mem(addr + off + i));
      queue(std::move(c));
      off += n;
      first += (h >> 10) % 3;
    }
  }
  void step(uint64_t e, uint32_t skip = 0) {
    const DmacOut& o = m.out();
    if (o.tx_valid) {
      tx.write = o.tx_write;
      tx.addr = o.tx_addr;
      tx.len = o.tx_len;
      tx.tag = o.tx_tag;
      if (o.tx_write)
        tx.data.insert(tx.data.end(), o.tx_data.begin(), o.tx_data.begin() + o.tx_cnt);
      if (o.tx_last) {
        tx.edge = e;
        if (!tx.write) answer(e, tx.addr, tx.len, tx.tag);
        sent.push_back(std::move(tx));
        tx = Sent{};
      }
    }
    if (o.rd_valid) {
      sent.push_back({e, false, true, o.rd_id, 0, o.rd_status, std::move(slot[o.rd_id])});
      ids.push_back(o.rd_id);
    }
    const bool rq_ready = o.rq_ready, wq_ready = o.wq_ready, wd_ready = o.wd_ready;
    in.rq_valid = !rq.empty() && rq.front().first <= e && !ids.empty();
    if (in.rq_valid) {
      in.rq_addr = rq.front().second.first;
      in.rq_len = rq.front().second.second;
      in.rq_id = ids.front();
    }
    in.wq_valid = !wq.empty() && wq.front().first <= e;
    if (in.wq_valid) {
      in.wq_addr = 0x1000 + (e % 7) * 0x300;
      in.wq_len = uint32_t(wq.front().second.size());
    }
    in.wd_valid = !wd.empty();
    if (in.wd_valid) {
      const size_t n = std::min<size_t>(size_t(B), wd.front().size() - wd_pos);
      std::fill(in.wd_data.begin(), in.wd_data.end(), 0);
      std::copy_n(wd.front().begin() + int64_t(wd_pos), n, in.wd_data.begin());
    }
    in.cp_valid = !cp.empty() && cp.front().first <= e;
    if (in.cp_valid) {
      const Cpl& c = cp.front();
      const uint32_t beats = c.len ? (c.len + uint32_t(B) - 1) / uint32_t(B) : 1;
      in.cp_tag = c.tag;
      in.cp_status = c.status;
      in.cp_byte_count = c.bc;
      in.cp_len = c.len;
      in.cp_last = cp_k + 1 == beats;
      in.cp_cnt = c.len ? std::min<uint32_t>(uint32_t(B), c.len - cp_k * uint32_t(B)) : 0;
      std::fill(in.cp_data.begin(), in.cp_data.end(), 0);
      std::copy_n(c.data.begin() + cp_k * uint32_t(B), in.cp_cnt, in.cp_data.begin());
    }
    in.skip = skip;
    m.edge(in);
    in.skip = 0;
    if (o.rw_valid) std::copy_n(o.rw_data.begin(), o.rw_cnt, slot[o.rw_id].begin() + o.rw_off);
    if (in.rq_valid && rq_ready) {
      slot[ids.front()].assign(rq.front().second.second, 0);
      ids.pop_front();
      rq.pop_front();
    }
    if (in.wq_valid && wq_ready) {
      wd.push_back(std::move(wq.front().second));
      wq.pop_front();
    }
    if (in.wd_valid && wd_ready && (wd_pos += size_t(B)) >= wd.front().size()) {
      wd.pop_front();
      wd_pos = 0;
    }
    if (in.cp_valid && (++cp_k, in.cp_last)) {
      cp.pop_front();
      cp_k = 0;
    }
  }
  // Edges clocked from e: a run of beat edges, or one edge; with runs, often after idle edges
  // the block sleeps through (skip), as RnicDmac lets it.
  uint64_t clock(uint64_t e) {
    uint32_t skip = 0;
    if (runs && !m.out().busy && wd.empty() && rng() % 2) {
      uint64_t s = rng() % 4 ? 1000 : 1 + rng() % 30;  // mostly up to the next input
      auto upto = [&](uint64_t due) { s = std::min(s, due > e ? due - e : 0); };
      if (!rq.empty()) upto(rq.front().first);
      if (!wq.empty()) upto(wq.front().first);
      if (!cp.empty()) upto(cp_k > 0 ? e : cp.front().first);
      if (m.out().tmo_wait) s = std::min<uint64_t>(s, m.out().tmo_wait - 1);
      skip = uint32_t(s);
    }
    e += skip;
    if (runs) {
      DmacBeatRun r;
      r.skip = skip;
      uint64_t lim = 1 + rng() % 40;
      const DmacOut& o = m.out();
      // Half the time up to the edge that takes the MWr's last beat (which the run may take).
      const bool to_take = o.tx_valid && o.tx_write && rng() % 2;
      if (to_take) lim = (o.tx_len + uint64_t(B) - 1) / uint64_t(B) - tx.data.size() / uint64_t(B);
      auto before = [&](uint64_t due) { lim = std::min(lim, due > e ? due - e : 0); };
      if (!rq.empty()) before(rq.front().first);
      if (!wq.empty()) before(wq.front().first);
      if (!cp.empty() && cp_k == 0 && cp.front().first > e) before(cp.front().first);
      if (!cp.empty() && (cp_k > 0 || cp.front().first <= e)) {
        const Cpl& c = cp.front();
        r.cp = c.data.data() + cp_k * uint32_t(B);
        r.cp_beats = (c.len ? (c.len + uint32_t(B) - 1) / uint32_t(B) : 1) - cp_k;
        r.cp_bytes = c.len - cp_k * uint32_t(B);
        if (cp_k == 0) {  // its first beat starts the run, with its header
          r.cp_first = true;
          r.cp_tag = c.tag;
          r.cp_status = c.status;
          r.cp_byte_count = c.bc;
          r.cp_len = c.len;
        }
      }
      if (!wd.empty()) {
        r.wd = wd.front().data() + wd_pos;
        r.wd_bytes = uint32_t(wd.front().size() - wd_pos);
        r.wd_more = wd.size() > 1;
      }
      r.max_edges = lim;
      r.take_tlp = to_take || rng() % 2;
      const uint64_t n = lim ? m.beat_edges(r) : 0;
      if (n) {
        if (o.tx_valid) {  // the MWr in progress (its header, as step() takes it)
          tx.write = o.tx_write;
          tx.addr = o.tx_addr;
          tx.len = o.tx_len;
          tx.tag = o.tx_tag;
        }
        m.beat_run(r, n, tx.data);
        if (r.took_tlp) {
          tx.edge = e + n - 1;
          sent.push_back(std::move(tx));
          tx = Sent{};
          ++tlp_runs;
        }
        header_runs += r.cp_first;
        if (r.rw_cnt) std::copy_n(r.cp, r.rw_cnt, slot[r.rw_id].begin() + r.rw_off);
        const uint32_t all = cp.empty()       ? 0
                             : cp.front().len ? (cp.front().len + uint32_t(B) - 1) / uint32_t(B)
                                              : 1;
        if (r.cp_beats > 0 && (cp_k += uint32_t(n)) == all) {
          cp.pop_front();
          cp_k = 0;
        }
        if (r.wd_beats && (wd_pos += size_t(r.wd_beats) * size_t(B)) >= wd.front().size()) {
          wd.pop_front();
          wd_pos = 0;
        }
        run_edges += n;
        skip_runs += skip > 0;
        return skip + n;
      }
    }
    step(e, skip);
    return skip + 1;
  }
};

// Beat runs change nothing: the model's outputs after each run, the TLPs (their edges and
// bytes) and the reads' data and edges are those of the same driver clocking every edge.
TEST(RnicDmac, BeatRunsMatchTheirEdges) {
  uint64_t skip_runs = 0;
  for (const int bytes : {8, 32, 64}) {
    const uint64_t seed = tb::seed_or(14) + uint64_t(bytes);
    BeatDriver ref(bytes, false, seed), fast(bytes, true, seed);
    for (BeatDriver* d : {&ref, &fast}) {
      std::mt19937_64 g(seed);
      uint64_t at = 2;
      for (int i = 0; i < 300; ++i) {
        at += g() % 80;
        const uint32_t len = g() % 25 == 0 ? 0 : uint32_t(1 + g() % 3000);
        if (g() % 2)
          d->rq.push_back({at, {0x10000 + g() % 0x40000, len}});
        else
          d->wq.push_back({at, std::vector<uint8_t>(len, uint8_t(i))});
      }
    }
    uint64_t e = 2, beats = 0;
    for (const auto& r : ref.rq) beats += (r.second.second + uint32_t(bytes) - 1) / uint32_t(bytes);
    for (const auto& w : ref.wq) beats += (w.second.size() + size_t(bytes) - 1) / size_t(bytes);
    const uint64_t end = std::max(ref.wq.back().first, ref.rq.back().first) + 20000;
    while (e < end) {
      const uint64_t n = fast.clock(e);
      for (uint64_t k = 0; k < n; ++k) ref.clock(e + k);
      e += n;
      ASSERT_TRUE(fast.m.out() == ref.m.out())
          << "outputs differ after edge " << e - 1 << " (" << bytes << " B, seed " << seed << ")";
      ASSERT_EQ(fast.tx.data, ref.tx.data) << "MWr bytes differ after edge " << e - 1;
    }
    EXPECT_TRUE(fast.sent == ref.sent) << bytes << " B, seed " << seed;
    EXPECT_EQ(fast.slot, ref.slot);
    EXPECT_GT(ref.sent.size(), 900u);
    EXPECT_GT(fast.run_edges * 12, beats) << "too few beat runs to mean anything";
    EXPECT_GT(fast.header_runs, 100u) << "too few runs that take a completion's header";
    EXPECT_GT(fast.tlp_runs, 100u) << "too few runs that end by taking an MWr";
    skip_runs += fast.skip_runs;
    size_t fails = 0;
    for (const auto& s : ref.sent) fails += s.done && s.tag != 0;
    EXPECT_GT(fails, 0u) << "no read failed or timed out";
  }
  EXPECT_GT(skip_runs, 50u) << "too few runs after edges slept through";
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
