// The SQ engine's segmentation (next_sq_segment, sq_segmenter.h), outside SystemC: an RDMA Write
// cut at the tagged payload with its TOs and L bit, a Send's MSN and MOs (the MSN advancing once
// per message), the Send opcodes from the SE and Invalidate flags, an RDMA Read as one Read
// Request per local SGE with its sink and source, and 0-byte messages.
#include "models/rnic/sq/sq_segmenter.h"

#include <gtest/gtest.h>

#include "models/rnic/abi/codes.h"

namespace rnic {
namespace {

using rdmap::Opcode;

Wqe wqe(uint8_t op, std::vector<uint32_t> lens) {
  Wqe w;
  w.opcode = op;
  w.rkey = 0x1234;
  w.remote_addr = 0x100000;
  w.num_sge = uint8_t(lens.size());
  for (size_t i = 0; i < lens.size(); ++i)
    w.sge[i] = {0x5000 + 0x10000 * i, lens[i], uint32_t(0x40 + i)};
  return w;
}

TEST(SqSegmenter, WriteIsCutAtTheTaggedPayload) {
  const Wqe w = wqe(abi::kOpRdmaWrite, {2000, 1000});
  SqProgress p;
  std::vector<SqSegment> segs;
  do segs.push_back(next_sq_segment(w, p, 1466, 1462));
  while (!segs.back().wqe_done);
  ASSERT_EQ(segs.size(), 3u);
  const uint32_t lens[] = {1466, 1466, 68};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(segs[i].h.tagged);
    EXPECT_EQ(segs[i].h.opcode, uint8_t(Opcode::kWrite));
    EXPECT_EQ(segs[i].h.stag, 0x1234u);
    EXPECT_EQ(segs[i].h.to, 0x100000u + 1466 * i);
    EXPECT_EQ(segs[i].off, 1466u * i);
    EXPECT_EQ(segs[i].len, lens[i]);
    EXPECT_EQ(segs[i].h.last, i == 2);
    EXPECT_EQ(segs[i].first, i == 0);
  }
  EXPECT_EQ(p.off, 0u);
  EXPECT_EQ(p.send_msn, 1u);  // a Write sends no MSN
}

TEST(SqSegmenter, SendsCarryOneMsnPerMessageAndTheirMo) {
  SqProgress p;
  Wqe a = wqe(abi::kOpSend, {3000});
  std::vector<SqSegment> segs;
  do segs.push_back(next_sq_segment(a, p, 1466, 1462));
  while (!segs.back().wqe_done);
  ASSERT_EQ(segs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(segs[i].h.tagged);
    EXPECT_EQ(segs[i].h.qn, rdmap::kQnSend);
    EXPECT_EQ(segs[i].h.msn, 1u);
    EXPECT_EQ(segs[i].h.mo, 1462u * i);
    EXPECT_EQ(segs[i].h.opcode, uint8_t(Opcode::kSend));
  }
  EXPECT_EQ(segs[2].len, 3000u - 2 * 1462);
  EXPECT_EQ(p.send_msn, 2u);
  Wqe b = wqe(abi::kOpSendWithInv, {});
  b.flags = abi::kWqeSolicited;
  b.invalidate_rkey = 0xABCD;
  const SqSegment s = next_sq_segment(b, p, 1466, 1462);  // 0 bytes: one segment
  EXPECT_TRUE(s.wqe_done && s.h.last && s.len == 0);
  EXPECT_EQ(s.h.opcode, uint8_t(Opcode::kSendSeInvalidate));
  EXPECT_EQ(s.h.inv_stag, 0xABCDu);
  EXPECT_EQ(s.h.msn, 2u);
  EXPECT_EQ(p.send_msn, 3u);
  Wqe c = wqe(abi::kOpSend, {8});
  c.flags = abi::kWqeSolicited;
  EXPECT_EQ(next_sq_segment(c, p, 1466, 1462).h.opcode, uint8_t(Opcode::kSendSe));
  Wqe d = wqe(abi::kOpSendWithInv, {8});
  EXPECT_EQ(next_sq_segment(d, p, 1466, 1462).h.opcode, uint8_t(Opcode::kSendInvalidate));
}

TEST(SqSegmenter, ReadIsOneRequestPerLocalSge) {
  const Wqe w = wqe(abi::kOpRdmaRead, {100, 200, 300});
  SqProgress p;
  p.read_msn = 7;
  std::vector<SqSegment> reqs;
  do reqs.push_back(next_sq_segment(w, p, 1466, 1462));
  while (!reqs.back().wqe_done);
  ASSERT_EQ(reqs.size(), 3u);
  const uint64_t src_off[] = {0, 100, 300};
  for (size_t i = 0; i < 3; ++i) {
    const SqSegment& r = reqs[i];
    EXPECT_TRUE(r.read_request);
    EXPECT_EQ(r.h.opcode, uint8_t(Opcode::kReadRequest));
    EXPECT_EQ(r.h.qn, rdmap::kQnReadRequest);
    EXPECT_EQ(r.h.msn, 7u + i);
    EXPECT_EQ(r.rr.sink_stag, w.sge[i].lkey);
    EXPECT_EQ(r.rr.sink_to, w.sge[i].addr);
    EXPECT_EQ(r.rr.size, w.sge[i].length);
    EXPECT_EQ(r.rr.src_stag, 0x1234u);
    EXPECT_EQ(r.rr.src_to, 0x100000u + src_off[i]);
    EXPECT_EQ(r.first, i == 0);
  }
  EXPECT_EQ(p.read_msn, 10u);
  const SqSegment none = next_sq_segment(wqe(abi::kOpRdmaRead, {}), p, 1466, 1462);
  EXPECT_TRUE(none.read_request && none.wqe_done);
  EXPECT_EQ(none.rr.size, 0u);
}

TEST(SqSegmenter, RestartAbandonsTheWqeInProgress) {
  const Wqe w = wqe(abi::kOpSend, {5000});
  SqProgress p;
  (void)next_sq_segment(w, p, 1466, 1462);
  EXPECT_EQ(p.off, 1462u);
  p.restart();
  EXPECT_EQ(p.off, 0u);
  EXPECT_EQ(p.send_msn, 1u);  // the message never ended: its MSN is the next one's
}

}  // namespace
}  // namespace rnic
