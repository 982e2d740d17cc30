// rnic_xlat: every SMT entry type, every check in its order, chunk boundaries, cycle counts,
// and a randomized comparison with a byte-by-byte reference of where each tagged byte lives.
#include "models/rnic/xlat/rnic_xlat.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace rnic {
namespace {

struct Tables {
  Smt smt{64};
  Pblmt pbl{4096};
  uint32_t next_pbl = 0;

  uint32_t add_mr(uint32_t idx, uint8_t key, uint32_t pd, uint8_t acc, uint64_t base_to,
                  uint64_t len, const std::vector<uint64_t>& pages,
                  SmtEntry::Type type = SmtEntry::Type::kMemoryRegion) {
    SmtEntry& e = smt.at(idx);
    e = {};
    e.state = SmtEntry::State::kValid;
    e.type = type;
    e.key = key;
    e.pd = pd;
    e.access = acc;
    e.base_to = base_to;
    e.length = len;
    e.first_page_offset = base_to & 4095;
    e.pbl_first = next_pbl;
    e.pbl_count = uint32_t(pages.size());
    for (uint64_t p : pages) pbl.at(next_pbl++).addr = p;
    return make_stag(idx, key);
  }
  uint32_t add_sg(uint32_t idx, uint8_t key, uint32_t pd, uint8_t acc, uint64_t base_to,
                  const std::vector<PblEntry>& extents) {
    SmtEntry& e = smt.at(idx);
    e = {};
    e.state = SmtEntry::State::kValid;
    e.type = SmtEntry::Type::kSgHandle;
    e.key = key;
    e.pd = pd;
    e.access = acc;
    e.base_to = base_to;
    for (const auto& x : extents) e.length += x.len;
    e.pbl_first = next_pbl;
    e.pbl_count = uint32_t(extents.size());
    for (const auto& x : extents) pbl.at(next_pbl++) = x;
    return make_stag(idx, key);
  }
};

constexpr uint8_t kAll = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead;

TEST(RnicXlat, PageListChunksAtPageBoundaries) {
  Tables t;
  const uint64_t base = 0x7F0000001100;  // 0x100 into its first page
  const uint32_t stag =
      t.add_mr(5, 0x3C, 7, kAll, base, 3 * 4096, {0x10000, 0x55000, 0x23000, 0x99000});
  RnicXlat x(t.smt, t.pbl);
  auto r = x.translate({stag, base + 0xE00, 0x1400, access::kRemoteWrite, 7});
  ASSERT_EQ(r.status, XlatStatus::kOk);
  // base + 0xE00 is 0xF00 into page 0: 0x100 bytes there, then 0x1000 in page 1, 0x300 in page 2.
  ASSERT_EQ(r.chunks.size(), 3u);
  EXPECT_EQ(r.chunks[0].pa, 0x10F00u);
  EXPECT_EQ(r.chunks[0].len, 0x100u);
  EXPECT_EQ(r.chunks[1].pa, 0x55000u);
  EXPECT_EQ(r.chunks[1].len, 0x1000u);
  EXPECT_EQ(r.chunks[2].pa, 0x23000u);
  EXPECT_EQ(r.chunks[2].len, 0x300u);
  EXPECT_EQ(r.cycles, 2u + 2 + 3);
}

TEST(RnicXlat, ChecksInTheirOrder) {
  Tables t;
  const uint32_t stag = t.add_mr(5, 0x3C, 7, access::kLocalWrite | access::kRemoteRead, 0x1000,
                                 8192, {0x10000, 0x20000});
  RnicXlat x(t.smt, t.pbl);
  auto st = [&](XlatRequest q) { return x.translate(q).status; };
  EXPECT_EQ(st({make_stag(63, 0x3C), 0x1000, 8, 0, 7}), XlatStatus::kInvalidStag);  // free entry
  EXPECT_EQ(st({make_stag(1000, 0x3C), 0x1000, 8, 0, 7}),
            XlatStatus::kInvalidStag);                                             // off the table
  EXPECT_EQ(st({make_stag(5, 0x3D), 0x1000, 8, 0, 9}), XlatStatus::kInvalidStag);  // key before PD
  EXPECT_EQ(st({stag, 0x1000, 8, access::kRemoteWrite, 9}),
            XlatStatus::kPdMismatch);  // PD before rights
  EXPECT_EQ(st({stag, 0x0, 8, access::kRemoteWrite, 7}),
            XlatStatus::kAccess);  // rights before bounds
  EXPECT_EQ(st({stag, ~0ull - 3, 8, access::kRemoteRead, 7}), XlatStatus::kToWrap);
  EXPECT_EQ(st({stag, 0xFFF, 8, access::kRemoteRead, 7}), XlatStatus::kBounds);
  EXPECT_EQ(st({stag, 0x1000 + 8192 - 7, 8, access::kRemoteRead, 7}), XlatStatus::kBounds);
  EXPECT_EQ(st({stag, 0x1000 + 8192, 0, access::kRemoteRead, 7}),
            XlatStatus::kOk);  // empty, at the end
  EXPECT_EQ(st({stag, 0x1000, 8192, access::kRemoteRead, 7}), XlatStatus::kOk);
  EXPECT_EQ(x.translate({stag, 0xFFF, 8, access::kRemoteRead, 7}).cycles,
            2u);                                  // errors after the SMT read
  t.smt.at(5).state = SmtEntry::State::kInvalid;  // invalidated
  EXPECT_EQ(st({stag, 0x1000, 8, access::kRemoteRead, 7}), XlatStatus::kInvalidStag);
}

TEST(RnicXlat, ScatterGatherHandleSwitchesExtents) {
  Tables t;
  const uint32_t stag =
      t.add_sg(9, 1, 3, kAll, 0, {{0x100000, 1000}, {0x200010, 24}, {0x300000, 5000}});
  RnicXlat x(t.smt, t.pbl, {2, 2, 3});
  auto r = x.translate({stag, 990, 40, access::kRemoteRead, 3});
  ASSERT_EQ(r.status, XlatStatus::kOk);
  ASSERT_EQ(r.chunks.size(), 3u);
  EXPECT_EQ(r.chunks[0].pa, 0x100000u + 990);
  EXPECT_EQ(r.chunks[0].len, 10u);
  EXPECT_EQ(r.chunks[1].pa, 0x200010u);
  EXPECT_EQ(r.chunks[1].len, 24u);
  EXPECT_EQ(r.chunks[2].pa, 0x300000u);
  EXPECT_EQ(r.chunks[2].len, 6u);
  EXPECT_EQ(r.cycles, 2u + 2 + 3 + 2 * 3);  // three chunks, two extent switches of 3 cycles
  EXPECT_EQ(x.translate({stag, 6000, 25, access::kRemoteRead, 3}).status, XlatStatus::kBounds);
  // The scan passes over the extents before the offset, one cycle each.
  r = x.translate({stag, 1030, 10, access::kRemoteRead, 3});
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].pa, 0x300006u);
  EXPECT_EQ(r.cycles, 2u + 2 + 2 + 1);
}

TEST(RnicXlat, ExtentsShortOfTheEntryEndTheBurstWithBounds) {
  Tables t;
  const uint32_t stag = t.add_sg(9, 1, 3, kAll, 0, {{0x100000, 1000}, {0x200000, 500}});
  t.smt.at(9).length = 2000;  // an entry longer than its extents (the write port never stores it)
  RnicXlat x(t.smt, t.pbl, {2, 2, 3});
  auto r = x.translate({stag, 900, 1000, access::kRemoteRead, 3});
  EXPECT_EQ(r.status, XlatStatus::kBounds);
  ASSERT_EQ(r.chunks.size(), 2u);  // what the extents hold, then the error at the next turn
  EXPECT_EQ(r.chunks[1].cycle, 2u + 2 + 1 + 3 + 1);
  EXPECT_EQ(r.cycles, r.chunks[1].cycle + 3 + 1);
  r = x.translate({stag, 1600, 10, access::kRemoteRead, 3});  // past every extent
  EXPECT_EQ(r.status, XlatStatus::kBounds);
  EXPECT_TRUE(r.chunks.empty());
  EXPECT_EQ(r.cycles, 2u + 2 + 2 + 1);
}

TEST(RnicXlat, PhysicalRegionIsOneChunk) {
  Tables t;
  SmtEntry& e = t.smt.at(2);
  e.state = SmtEntry::State::kValid;
  e.type = SmtEntry::Type::kPhysical;
  e.key = 9;
  e.pd = 1;
  e.access = kAll;
  e.base_to = 0;
  e.length = 1 << 20;
  e.phys_base = 0x40000000;
  RnicXlat x(t.smt, t.pbl);
  auto r = x.translate({make_stag(2, 9), 0x3000, 0x20000, access::kRemoteWrite, 1});
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].pa, 0x40003000u);
  EXPECT_EQ(r.chunks[0].len, 0x20000u);
}

TEST(RnicXlat, OnDemandRegionFaultsOnAnAbsentPage) {
  Tables t;
  const uint32_t stag = t.add_mr(4, 2, 1, kAll, 0x10000, 4 * 4096, {0x1000, 0x2000, 0, 0x4000},
                                 SmtEntry::Type::kOnDemand);
  RnicXlat x(t.smt, t.pbl);
  EXPECT_EQ(x.translate({stag, 0x10000, 8192, access::kRemoteRead, 1}).status, XlatStatus::kOk);
  auto r = x.translate({stag, 0x11800, 8192, access::kRemoteRead, 1});
  EXPECT_EQ(r.status, XlatStatus::kPageFault);
  EXPECT_EQ(r.fault_to, 0x12000u);
  ASSERT_EQ(r.chunks.size(), 1u);  // the page before the absent one, and the fault at its turn
  EXPECT_EQ(r.chunks[0].pa, 0x2800u);
  EXPECT_EQ(r.chunks[0].len, 0x800u);
  EXPECT_EQ(r.chunks[0].cycle, 2u + 2 + 1);
  EXPECT_EQ(r.cycles, 2u + 2 + 2);
}

// Random regions and requests: the chunks, laid end to end, must put every tagged byte where a
// byte-by-byte reference puts it.
TEST(RnicXlat, RandomAgainstByteReference) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 300; ++round) {
    Tables t;
    std::map<uint64_t, uint64_t> where;  // region offset -> physical address
    uint32_t stag;
    uint64_t base, len = 0;
    if (rng() % 2) {
      base = (rng() % 1000) * 4096 + rng() % 4096;
      const size_t pages = 1 + rng() % 6;
      std::vector<uint64_t> pg;
      for (size_t i = 0; i < pages; ++i) pg.push_back((1 + rng() % 100000) * 4096);
      len = pages * 4096 - (base & 4095);  // >= 1
      const uint64_t trim = rng() % 100;
      if (len > trim) len -= trim;
      stag = t.add_mr(1, 1, 1, kAll, base, len, pg);
      for (uint64_t o = 0; o < len; ++o) {
        const uint64_t in_list = o + (base & 4095);
        where[o] = pg[in_list / 4096] + in_list % 4096;
      }
    } else {
      base = rng() % 100000;
      std::vector<PblEntry> ex;
      for (size_t i = 0, n = 1 + rng() % 6; i < n; ++i)
        ex.push_back({(1 + rng() % 100000) * 64, 1 + rng() % 3000});
      stag = t.add_sg(1, 1, 1, kAll, base, ex);
      uint64_t o = 0;
      for (const auto& x : ex)
        for (uint64_t k = 0; k < x.len; ++k) where[o++] = x.addr + k;
      len = o;
    }
    RnicXlat x(t.smt, t.pbl);
    for (int q = 0; q < 20; ++q) {
      const uint64_t off = rng() % len, n = 1 + rng() % (len - off);
      auto r = x.translate({stag, base + off, uint32_t(n), access::kRemoteRead, 1});
      ASSERT_EQ(r.status, XlatStatus::kOk);
      uint64_t o = off;
      for (const auto& c : r.chunks) {
        ASSERT_GT(c.len, 0u);
        for (uint32_t k = 0; k < c.len; k += std::max<uint32_t>(1, c.len / 7))
          ASSERT_EQ(c.pa + k, where[o + k]);
        ASSERT_EQ(c.pa + c.len - 1, where[o + c.len - 1]);
        o += c.len;
      }
      ASSERT_EQ(o, off + n);
    }
  }
}

}  // namespace
}  // namespace rnic

#include "models/rnic/ddp/errors.h"

namespace rnic {
namespace {

// WIRE.md's error table, row by row.
TEST(RnicErrors, TerminatesOfWireMd) {
  using rdmap::Layer;
  using T = rdmap::TermCause;
  EXPECT_TRUE(term_for_tagged(XlatStatus::kInvalidStag) == (T{Layer::kDdp, 1, 0x00}));
  EXPECT_TRUE(term_for_tagged(XlatStatus::kBounds) == (T{Layer::kDdp, 1, 0x01}));
  EXPECT_TRUE(term_for_tagged(XlatStatus::kPdMismatch) == (T{Layer::kDdp, 1, 0x02}));
  EXPECT_TRUE(term_for_tagged(XlatStatus::kAccess) == (T{Layer::kRdmap, 1, 0x02}));
  EXPECT_TRUE(term_for_read_source(XlatStatus::kInvalidStag) == (T{Layer::kRdmap, 1, 0x00}));
  EXPECT_TRUE(term_for_read_source(XlatStatus::kBounds) == (T{Layer::kRdmap, 1, 0x01}));
  EXPECT_TRUE(term_for_read_source(XlatStatus::kAccess) == (T{Layer::kRdmap, 1, 0x02}));
  EXPECT_TRUE(term_for_read_source(XlatStatus::kPdMismatch) == (T{Layer::kRdmap, 1, 0x03}));
  // Where WIRE.md is silent (docs/errors.md): TO wrap per RFC 5041 / RFC 5040.
  EXPECT_TRUE(term_for_tagged(XlatStatus::kToWrap) == (T{Layer::kDdp, 1, 0x03}));
  EXPECT_TRUE(term_for_read_source(XlatStatus::kToWrap) == (T{Layer::kRdmap, 1, 0x04}));
}

// The block's table-write port: the only way the card changes its SMT and PBLMT.
TEST(XlatBlock, TableWritePort) {
  XlatBlock b(8, 16);
  SmtEntry e;
  e.state = SmtEntry::State::kValid;
  e.key = 5;
  e.pd = 3;
  e.access = kAll;
  e.base_to = 0x1000;
  e.length = 8192;
  e.pbl_first = 14;
  e.pbl_count = 2;
  e.first_page_offset = 0;
  EXPECT_FALSE(b.write_smt(8, e));  // no such index
  e.pbl_count = 3;
  EXPECT_FALSE(b.write_smt(1, e));  // its page list runs past the PBLMT
  EXPECT_EQ(b.smt().find(1)->state, SmtEntry::State::kFree);
  e.pbl_count = 2;
  ASSERT_TRUE(b.write_smt(1, e));
  EXPECT_FALSE(b.write_pbl(15, {{0xA000, 0}, {0xB000, 0}}));  // past the end: nothing written
  EXPECT_EQ(b.pblmt().at(15).addr, 0u);
  ASSERT_TRUE(b.write_pbl(14, {{0xA000, 0}, {0xC000, 0}}));
  const uint32_t stag = make_stag(1, 5);
  XlatResult r = b.translate({stag, 0x1000 + 4090, 10, access::kRemoteRead, 3});
  ASSERT_EQ(r.status, XlatStatus::kOk);
  ASSERT_EQ(r.chunks.size(), 2u);
  EXPECT_EQ(r.chunks[0].pa, 0xA000u + 4090);
  EXPECT_EQ(r.chunks[1].pa, 0xC000u);
  const uint32_t other_pd = 4;
  EXPECT_FALSE(b.invalidate(make_stag(1, 6)));  // another key
  EXPECT_FALSE(b.invalidate(stag, &other_pd));  // another PD (Send with Invalidate)
  EXPECT_EQ(b.translate({stag, 0x1000, 1, 0, 3}).status, XlatStatus::kOk);
  EXPECT_TRUE(b.invalidate(stag));
  EXPECT_EQ(b.translate({stag, 0x1000, 1, 0, 3}).status, XlatStatus::kInvalidStag);
  EXPECT_FALSE(b.invalidate(stag));  // no longer valid
  EXPECT_FALSE(b.free(8));
  EXPECT_TRUE(b.free(1));
  EXPECT_EQ(b.smt().find(1)->state, SmtEntry::State::kFree);
}

}  // namespace
}  // namespace rnic
