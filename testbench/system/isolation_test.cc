// Protection domains across processes (docs/memory.md, "Security"): two processes of node1,
// each with its own PD. Process A registers a buffer; process B's QP is connected to node0.
// node0's RDMA Write on B's QP with A's rkey is refused (DDP tagged buffer error, STag not
// associated with the stream: IBV_WC_REM_ACCESS_ERR) and not one byte of A's buffer, nor of
// the guard bytes around it, changes; the same Write with B's own rkey lands.
#include <gtest/gtest.h>

#include "models/host/verbs/verbs_internal.h"
#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::kGuard;
using testbench::mem_fill;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::Oob;
using traffic::PeerInfo;

TEST(Isolation, AnotherProcesssRkeyIsRefusedOnThisProcesssQp) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;  // boxes: 0 node0 (from B), 3 node0 (from A), 1 process B, 2 process A
  Endpoint n0, a, b;
  ibv_wc_status foreign = IBV_WC_SUCCESS, own = IBV_WC_GENERAL_ERR;
  std::vector<uint8_t> a_mem, b_mem;
  constexpr size_t kLen = 4096;
  cl.run({{0,
           [&] {
             n0.open({});
             mem_fill(n0.buf, 64, 0x77);
             oob.put(1, n0.info());
             const PeerInfo bk = oob.get(0);  // B's QP, buffer and rkey
             n0.connect(bk);
             const PeerInfo ak = oob.get(3);  // A's buffer and rkey
             ibv_sge s{n0.addr(), 64, n0.mr->lkey};
             ibv_send_wr* bad = nullptr;
             // B's own rkey on B's QP lands (a 0-byte Read behind it: placed when answered).
             ibv_send_wr w = testbench::rdma_write_wr(1, &s, 1, bk.addr + 100, bk.rkey, true);
             ASSERT_EQ(ibv_post_send(n0.qps[0], &w, &bad), 0);
             own = wait_one(n0.cq).status;
             ibv_send_wr r = testbench::rdma_write_wr(2, &s, 0, bk.addr, bk.rkey, true);
             r.opcode = IBV_WR_RDMA_READ;
             ASSERT_EQ(ibv_post_send(n0.qps[0], &r, &bad), 0);
             EXPECT_EQ(wait_one(n0.cq).status, IBV_WC_SUCCESS);
             // A's rkey on B's QP: another process's PD.
             ibv_send_wr f = testbench::rdma_write_wr(3, &s, 1, ak.addr + 100, ak.rkey, true);
             ASSERT_EQ(ibv_post_send(n0.qps[0], &f, &bad), 0);
             foreign = wait_one(n0.cq).status;
             oob.put(1, {});
             oob.put(2, {});
           }},
          {1,
           [&] {
             b.open({});
             mem_fill(b.buf, b.cfg.buf_bytes);
             oob.put(0, b.info());
             b.connect(oob.get(1));
             oob.get(1);
             b_mem = testbench::mem_read(b.buf, 2 * kLen);
           },
           false, 1},
          {1, [&] {
             a.open({});
             mem_fill(a.buf, a.cfg.buf_bytes);
             oob.put(3, a.info());
             oob.get(2);
             a_mem = testbench::mem_read(a.buf, 2 * kLen);
           }}});
  EXPECT_NE(&rnic::host::context_process(a.ctx), &rnic::host::context_process(b.ctx))
      << "two processes";
  EXPECT_NE(rnic::host::context_process(a.ctx).pid(), rnic::host::context_process(b.ctx).pid());
  EXPECT_EQ(own, IBV_WC_SUCCESS);
  std::vector<uint8_t> want(2 * kLen, kGuard);
  std::fill(want.begin() + 100, want.begin() + 164, 0x77);
  EXPECT_EQ(b_mem, want) << "B's own Write landed, nothing else";
  EXPECT_EQ(foreign, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(a_mem, std::vector<uint8_t>(2 * kLen, kGuard)) << "A's memory is untouched";
}

}  // namespace
}  // namespace rnic
