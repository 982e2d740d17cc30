// RFC 7306 Immediate Data as verbs use it (docs/decisions.md): node 0 posts, in order on one QP,
//   1. an RDMA Write with Immediate of 300 bytes: the bytes land at the target, and the next
//      receive completes IBV_WC_RECV_RDMA_WITH_IMM with IBV_WC_WITH_IMM, the imm_data and
//      byte_len 300, its buffer untouched;
//   2. a 0-byte RDMA Write with Immediate with an rkey that names nothing (IBTA C9-88: no
//      target is checked): only the Immediate Data goes; byte_len 0;
//   3. a Send with Immediate of 100 bytes: one receive takes the bytes and completes IBV_WC_RECV
//      with IBV_WC_WITH_IMM and the imm_data;
//   4. a plain Send of 50 bytes: the receive after that one, no immediate data.
// Node 1 posts four receives. The wire holds Write, Immediate Data, Immediate Data, Immediate
// Data, Send, Send (opcodes 0, 8, 8, 8, 3, 3) from node 0 on that QP.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"
#include "testbench/common/wire_log.h"

namespace rnic {
namespace {

using testbench::expect_bytes;
using testbench::kGuard;
using testbench::mem_fill;
using testbench::mem_write;
using testbench::pattern;
using testbench::wait_completions;
using testbench::WireLog;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::open_connected;

constexpr uint64_t kWriteDst = 0x1000, kRecvOff = 0x10000, kRecvLen = 0x1000;
constexpr uint32_t kWriteLen = 300, kSendLen = 100, kPlainLen = 50;

TEST(Immediate, WriteAndSendWithImmediateCompleteTheirReceives) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  WireLog wire(cl.link(0), testbench::test_name());
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> wdata = pattern(kWriteLen, 1), sdata = pattern(kSendLen, 2),
                             pdata = pattern(kPlainLen, 3);
  std::vector<ibv_wc> got;
  cl.run(
      {[&] {
         open_connected(a, 0, EndpointConfig{}, oob);
         const traffic::PeerInfo peer = oob.get(0);  // b's receives are posted
         mem_write(a.buf, 0, wdata);
         mem_write(a.buf, 0x1000, sdata);
         mem_write(a.buf, 0x2000, pdata);
         ibv_sge s1{a.addr(), kWriteLen, a.mr->lkey}, s3{a.addr() + 0x1000, kSendLen, a.mr->lkey},
             s4{a.addr() + 0x2000, kPlainLen, a.mr->lkey};
         ibv_send_wr w[4]{};
         w[0].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
         w[0].sg_list = &s1;
         w[0].num_sge = 1;
         w[0].imm_data = htonl(0x11223344);
         w[0].wr.rdma = {peer.addr + kWriteDst, peer.rkey};
         w[1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
         w[1].imm_data = htonl(0x55667788);
         w[1].wr.rdma = {0, 0xDEAD00u};  // names nothing: a 0-byte Write checks nothing
         w[2].opcode = IBV_WR_SEND_WITH_IMM;
         w[2].sg_list = &s3;
         w[2].num_sge = 1;
         w[2].imm_data = htonl(0x99AABBCC);
         w[3].opcode = IBV_WR_SEND;
         w[3].sg_list = &s4;
         w[3].num_sge = 1;
         for (int i = 0; i < 4; ++i) {
           w[i].wr_id = uint64_t(i + 1);
           w[i].send_flags = IBV_SEND_SIGNALED;
           w[i].next = i < 3 ? &w[i + 1] : nullptr;
         }
         ibv_send_wr* bad = nullptr;
         ASSERT_EQ(ibv_post_send(a.qps[0], w, &bad), 0);
         for (const ibv_wc& wc : wait_completions(a.cq, 4)) {
           EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << wc.wr_id;
           EXPECT_EQ(wc.opcode, wc.wr_id <= 2 ? IBV_WC_RDMA_WRITE : IBV_WC_SEND) << wc.wr_id;
         }
         oob.put(1, {});
       },
       [&] {
         open_connected(b, 1, EndpointConfig{}, oob);
         mem_fill(b.buf, b.cfg.buf_bytes);
         for (int i = 0; i < 4; ++i) {
           ibv_sge s{b.addr() + kRecvOff + uint64_t(i) * kRecvLen, uint32_t(kRecvLen), b.mr->lkey};
           ibv_recv_wr r{};
           r.wr_id = 100 + uint64_t(i);
           r.sg_list = &s;
           r.num_sge = 1;
           ibv_recv_wr* bad = nullptr;
           ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad), 0);
         }
         oob.put(0, b.info());
         got = wait_completions(b.cq, 4);
         oob.get(1);
         std::vector<uint8_t> img(b.cfg.buf_bytes, kGuard);
         std::copy(wdata.begin(), wdata.end(), img.begin() + kWriteDst);
         std::copy(sdata.begin(), sdata.end(), img.begin() + kRecvOff + 2 * kRecvLen);
         std::copy(pdata.begin(), pdata.end(), img.begin() + kRecvOff + 3 * kRecvLen);
         expect_bytes("responder buffer", b.buf, img);
       }});
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got[i].status, IBV_WC_SUCCESS) << i;
    EXPECT_EQ(got[i].wr_id, 100 + i);  // in order, one receive each
  }
  EXPECT_EQ(got[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(got[0].wc_flags & IBV_WC_WITH_IMM, unsigned(IBV_WC_WITH_IMM));
  EXPECT_EQ(ntohl(got[0].imm_data), 0x11223344u);
  EXPECT_EQ(got[0].byte_len, kWriteLen);
  EXPECT_EQ(got[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(ntohl(got[1].imm_data), 0x55667788u);
  EXPECT_EQ(got[1].byte_len, 0u);
  EXPECT_EQ(got[2].opcode, IBV_WC_RECV);
  EXPECT_EQ(got[2].wc_flags & IBV_WC_WITH_IMM, unsigned(IBV_WC_WITH_IMM));
  EXPECT_EQ(ntohl(got[2].imm_data), 0x99AABBCCu);
  EXPECT_EQ(got[2].byte_len, kSendLen);
  EXPECT_EQ(got[3].opcode, IBV_WC_RECV);
  EXPECT_EQ(got[3].wc_flags & IBV_WC_WITH_IMM, 0u);
  EXPECT_EQ(got[3].byte_len, kPlainLen);

  std::vector<int> ops;
  for (const auto* f : wire.data(cl.nodes[0]->mac, b.qps[0]->qp_num)) ops.push_back(f->seg.opcode);
  // The 300-byte Write is one segment at this MTU.
  EXPECT_EQ(ops, (std::vector<int>{0, 8, 8, 8, 3, 3}));
}

}  // namespace
}  // namespace rnic
