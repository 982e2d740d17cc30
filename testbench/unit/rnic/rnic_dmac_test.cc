// rnic_dmac's model (models/rnic/rnic_dmac.h): splits at MRRS/MPS and 4 KiB, the tag limit,
// completions split at RCB and interleaved across tags in any order placed right, failures and
// timeouts failing their read, 0-byte reads.
#include "models/rnic/rnic_dmac.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

namespace rnic {
namespace {

TEST(RnicDmac, SplitsAtMaxPayloadAnd4KiB) {
  const std::vector<DmacSpan> r = dmac_split(0x1F00, 1000, 512, true);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].addr, 0x1F00u);
  EXPECT_EQ(r[0].len, 256u);  // to the 4 KiB boundary
  EXPECT_EQ(r[1].addr, 0x2000u);
  EXPECT_EQ(r[1].len, 512u);
  EXPECT_EQ(r[2].len, 232u);
  EXPECT_EQ(dmac_split(0x10, 0, 512, true).size(), 1u);  // a 0-byte read is one piece
  EXPECT_TRUE(dmac_split(0x10, 0, 256, false).empty());  // a 0-byte write is nothing
}

// Random reads against a memory image, at most `tags` MRds out, completions of all outstanding
// pieces in random order and split at a 64-byte RCB: every read finishes once, with its bytes.
TEST(RnicDmac, RandomReadsWithInterleavedCompletions) {
  std::mt19937_64 rng(9);
  std::vector<uint8_t> mem(1 << 20);
  for (auto& b : mem) b = uint8_t(rng());
  DmacLogic d(512, 8);
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> reads;  // id -> addr, len
  struct Out {
    DmacLogic::Mrd m;
    uint32_t sent = 0;
  };
  std::vector<Out> out;
  size_t finished = 0;
  for (int step = 0; step < 30000; ++step) {
    if (rng() % 3 == 0 && reads.size() < 200) {
      const uint64_t addr = rng() % (mem.size() - 5000);
      const uint32_t len = uint32_t(rng() % 5000);
      reads[d.read(addr, len)] = {addr, len};
    }
    for (const auto& m : d.issue()) {
      EXPECT_GT(m.len, 0u);
      EXPECT_LE(m.len, 512u);
      EXPECT_EQ(m.addr / 4096, (m.addr + m.len - 1) / 4096) << "an MRd crosses 4 KiB";
      out.push_back({m});
    }
    EXPECT_LE(d.tags_in_use(), 8);
    if (!out.empty()) {
      // One completion of a random outstanding piece: up to the next 64-byte boundary or more.
      const size_t k = rng() % out.size();
      Out& o = out[k];
      const uint64_t a = o.m.addr + o.sent;
      const uint32_t left = o.m.len - o.sent;
      uint32_t n = std::min<uint32_t>(left, uint32_t(64 - a % 64 + 64 * (rng() % 4)));
      ASSERT_TRUE(d.completion(o.m.tag, DmacStatus::kOk, left, mem.data() + a, n));
      o.sent += n;
      if (o.sent == o.m.len) out.erase(out.begin() + int64_t(k));
    }
    for (auto& f : d.take_finished()) {
      ASSERT_EQ(f.status, DmacStatus::kOk);
      const auto [addr, len] = reads.at(f.id);
      ASSERT_EQ(f.data.size(), len);
      EXPECT_TRUE(std::equal(f.data.begin(), f.data.end(), mem.begin() + int64_t(addr)))
          << "read " << f.id;
      reads.erase(f.id);
      ++finished;
    }
  }
  EXPECT_GT(finished, 1000u);
}

TEST(RnicDmac, AFailedPieceFailsItsReadAndZeroBytesNeedNoTlp) {
  DmacLogic d(256, 4);
  const uint64_t a = d.read(0x1000, 1024);  // 4 pieces
  const uint64_t z = d.read(0x5000, 0);
  std::vector<DmacLogic::Mrd> m = d.issue();
  ASSERT_EQ(m.size(), 4u);  // all tags taken; the 0-byte piece waits for one
  EXPECT_EQ(d.waiting(), 1u);
  std::vector<uint8_t> bytes(256, 1);
  EXPECT_TRUE(d.completion(m[0].tag, DmacStatus::kOk, 256, bytes.data(), 256));
  EXPECT_TRUE(d.issue().empty());  // the freed tag went to the 0-byte piece, which completed
  std::vector<DmacLogic::Finished> f = d.take_finished();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, z);
  EXPECT_EQ(f[0].status, DmacStatus::kOk);
  EXPECT_TRUE(d.completion(m[1].tag, DmacStatus::kUnsupported, 256, nullptr, 0));
  d.expire(m[2].tag);
  EXPECT_FALSE(d.completion(m[2].tag, DmacStatus::kOk, 256, bytes.data(), 256));  // late
  EXPECT_TRUE(d.completion(m[3].tag, DmacStatus::kOk, 256, bytes.data(), 256));
  f = d.take_finished();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].id, a);
  EXPECT_EQ(f[0].status, DmacStatus::kUnsupported);  // the first failure's status
  EXPECT_TRUE(f[0].data.empty());
  EXPECT_EQ(d.tags_in_use(), 0);
}

}  // namespace
}  // namespace rnic
