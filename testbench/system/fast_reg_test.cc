// Fast registration with pre-allocated STags (rnic_alloc_fast_mr, rnic_map_fast_mr,
// RNIC_WR_FAST_REG_MR; docs/memory.md), local invalidation (IBV_WR_LOCAL_INV) and remote
// invalidation (a peer's Send with Invalidate). The responder registers part of its buffer
// through its SQ; the requester's RDMA Write lands there and nowhere else; once the STag is
// invalidated, locally or by the peer, a Write with it is refused with the remote access error
// and changes nothing; registered again with a new key it works again, the old key refused.
// Bad WRs: a fast registration of an STag of another PD and a local invalidation of an STag of
// another PD complete with IBV_WC_LOC_PROT_ERR; mapping more pages than allocated is EINVAL.
#include <gtest/gtest.h>

#include <cerrno>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::kGuard;
using testbench::mem_fill;
using testbench::pattern;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::Oob;
using traffic::open_connected;
using traffic::PeerInfo;

constexpr int kRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
constexpr size_t kOff = 4096 + 100, kLen = 8000;  // the registered part of node1's buffer

ibv_send_wr fast_reg_wr(uint64_t id, ibv_mr* mr, uint8_t key) {
  ibv_send_wr w{};
  w.wr_id = id;
  rnic_wr_fast_reg(&w, mr, key, kRemote);
  w.send_flags = IBV_SEND_SIGNALED;
  return w;
}

ibv_send_wr local_inv_wr(uint64_t id, uint32_t stag) {
  ibv_send_wr w{};
  w.wr_id = id;
  w.opcode = IBV_WR_LOCAL_INV;
  w.send_flags = IBV_SEND_SIGNALED;
  w.invalidate_rkey = stag;
  return w;
}

// node0 writes `data` at the region's start with `rkey`; returns the WR's status.
ibv_wc_status write_to(Endpoint& a, const PeerInfo& p, uint32_t rkey,
                       const std::vector<uint8_t>& data) {
  EXPECT_EQ(rnic_mem_write(a.buf, data.data(), data.size()), 0);
  ibv_sge s{a.addr(), uint32_t(data.size()), a.mr->lkey};
  ibv_send_wr w = testbench::rdma_write_wr(1, &s, 1, p.addr, rkey, true);
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
  const ibv_wc_status st = wait_one(a.cq).status;
  if (st != IBV_WC_SUCCESS) return st;
  // A 0-byte Read behind it: its answer comes once the Write is placed.
  ibv_send_wr r = testbench::rdma_write_wr(2, &s, 0, p.addr, rkey, true);
  r.opcode = IBV_WR_RDMA_READ;
  EXPECT_EQ(ibv_post_send(a.qps[0], &r, &bad), 0);
  EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
  return st;
}

// node1 registers its buffer's [kOff, kOff + kLen) with key 0x11 through its SQ; node0 writes
// it. node1 invalidates it (IBV_WR_LOCAL_INV); node0's next Write is refused. node1 registers it
// again with key 0x22 on a new connection; node0's Write with it lands; node0 invalidates it by
// Send with Invalidate and node1's receive reports it (IBV_WC_WITH_INV); node0's next Write with
// it is refused. Every other byte of node1's buffer keeps its guard value.
TEST(FastReg, RegisterInvalidateReregister) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b, a2, b2;
  const std::vector<uint8_t> d1 = pattern(kLen, 1), d2 = pattern(kLen, 2), d3 = pattern(kLen, 3);
  ibv_wc_status after_inv = IBV_WC_SUCCESS, new_key = IBV_WC_GENERAL_ERR,
                after_remote_inv = IBV_WC_SUCCESS;
  std::vector<uint8_t> seen1, seen2;
  ibv_wc recv{};
  uint32_t stag1 = 0, stag2 = 0;
  cl.run({[&] {
            open_connected(a, 0, {}, oob);
            const PeerInfo p = oob.get(0);  // the fast-registered region
            EXPECT_EQ(write_to(a, p, p.rkey, d1), IBV_WC_SUCCESS);
            oob.put(1, {});
            oob.get(0);  // invalidated
            after_inv = write_to(a, p, p.rkey, d2);
            oob.put(1, {});
            open_connected(a2, 0, {}, oob);
            const PeerInfo q = oob.get(0);  // registered again
            new_key = write_to(a2, q, q.rkey, d3);
            oob.put(1, {});
            oob.get(0);
            ibv_send_wr inv{};
            inv.wr_id = 9;
            inv.opcode = IBV_WR_SEND_WITH_INV;
            inv.send_flags = IBV_SEND_SIGNALED;
            inv.invalidate_rkey = q.rkey;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a2.qps[0], &inv, &bad), 0);
            EXPECT_EQ(wait_one(a2.cq).status, IBV_WC_SUCCESS);
            oob.put(1, {});
            oob.get(0);
            after_remote_inv = write_to(a2, q, q.rkey, d2);
            oob.put(1, {});
          },
          [&] {
            b.open({});
            mem_fill(b.buf, b.cfg.buf_bytes);
            oob.put(0, b.info());
            b.connect(oob.get(1));
            ibv_mr* mr = rnic_alloc_fast_mr(b.pd, 4);
            ASSERT_NE(mr, nullptr);
            EXPECT_EQ(rnic_map_fast_mr(mr, static_cast<uint8_t*>(b.buf) + kOff, 5 * 4096), EINVAL);
            ASSERT_EQ(rnic_map_fast_mr(mr, static_cast<uint8_t*>(b.buf) + kOff, kLen), 0);
            ibv_send_wr* bad = nullptr;
            ibv_send_wr fr = fast_reg_wr(1, mr, 0x11);
            ASSERT_EQ(ibv_post_send(b.qps[0], &fr, &bad), 0);
            const ibv_wc w = wait_one(b.cq);
            EXPECT_EQ(w.status, IBV_WC_SUCCESS);
            EXPECT_EQ(w.opcode, RNIC_WC_FAST_REG_MR);
            stag1 = mr->rkey;
            PeerInfo p = b.info();
            p.addr = b.addr() + kOff;
            p.rkey = mr->rkey;
            oob.put(0, p);
            oob.get(1);
            seen1 = testbench::mem_read(b.buf, 3 * 8192);
            ibv_send_wr li = local_inv_wr(2, mr->rkey);
            ASSERT_EQ(ibv_post_send(b.qps[0], &li, &bad), 0);
            const ibv_wc l = wait_one(b.cq);
            EXPECT_EQ(l.status, IBV_WC_SUCCESS);
            EXPECT_EQ(l.opcode, IBV_WC_LOCAL_INV);
            oob.put(0, {});
            oob.get(1);  // node0's Write was refused: the QPs are in ERROR; connect again
            open_connected(b2, 1, {}, oob);
            ibv_recv_wr rw{7, nullptr, nullptr, 0};
            ibv_recv_wr* bad_recv = nullptr;
            ASSERT_EQ(ibv_post_recv(b2.qps[0], &rw, &bad_recv), 0);
            ibv_mr* mr2 = rnic_alloc_fast_mr(b2.pd, 4);
            ASSERT_NE(mr2, nullptr);
            ASSERT_EQ(rnic_map_fast_mr(mr2, static_cast<uint8_t*>(b.buf) + kOff, kLen), 0);
            ibv_send_wr fr2 = fast_reg_wr(3, mr2, 0x22);
            ASSERT_EQ(ibv_post_send(b2.qps[0], &fr2, &bad), 0);
            EXPECT_EQ(wait_one(b2.cq).status, IBV_WC_SUCCESS);
            stag2 = mr2->rkey;
            PeerInfo q = b2.info();
            q.addr = b.addr() + kOff;
            q.rkey = mr2->rkey;
            oob.put(0, q);
            oob.get(1);
            seen2 = testbench::mem_read(b.buf, 3 * 8192);
            oob.put(0, {});
            oob.get(1);  // the Send with Invalidate
            recv = wait_one(b2.cq);
            oob.put(0, {});
            oob.get(1);
          }});
  ASSERT_EQ(seen1.size(), 3u * 8192);
  std::vector<uint8_t> want(3 * 8192, kGuard);
  std::copy(d1.begin(), d1.end(), want.begin() + kOff);
  EXPECT_EQ(seen1, want) << "the first Write landed in the region and nowhere else";
  EXPECT_EQ(after_inv, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(new_key, IBV_WC_SUCCESS);
  std::copy(d3.begin(), d3.end(), want.begin() + kOff);
  EXPECT_EQ(seen2, want) << "the refused Write changed nothing; the third landed";
  EXPECT_EQ(stag1 & 0xFF, 0x11u);
  EXPECT_EQ(stag2 & 0xFF, 0x22u);
  EXPECT_EQ(recv.status, IBV_WC_SUCCESS);
  EXPECT_TRUE(recv.wc_flags & IBV_WC_WITH_INV);
  EXPECT_EQ(recv.invalidated_rkey, stag2);
  EXPECT_EQ(after_remote_inv, IBV_WC_REM_ACCESS_ERR) << "the STag was invalidated by the Send";
  EXPECT_EQ(stats.group("node1.core.firmware").counter("local_ops", "", "").value, 3u);
}

// A fast registration of an STag allocated in another PD, and a local invalidation of an STag
// of another PD, complete IBV_WC_LOC_PROT_ERR (the QP then goes to ERROR: the second is on a
// QP of its own).
TEST(FastReg, OtherPdsStagsAreRefused) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  ibv_wc_status reg = IBV_WC_SUCCESS, inv = IBV_WC_SUCCESS;
  traffic::EndpointConfig two;
  two.qps = 2;
  cl.run({[&] {
            open_connected(a, 0, two, oob);
            oob.get(0);
          },
          [&] {
            open_connected(b, 1, two, oob);
            ibv_pd* other = ibv_alloc_pd(b.ctx);
            ibv_mr* mr = rnic_alloc_fast_mr(other, 4);
            ASSERT_NE(mr, nullptr);
            ASSERT_EQ(rnic_map_fast_mr(mr, b.buf, 4096), 0);
            ibv_send_wr* bad = nullptr;
            ibv_send_wr fr = fast_reg_wr(1, mr, 0x33);
            ASSERT_EQ(ibv_post_send(b.qps[0], &fr, &bad), 0);
            reg = wait_one(b.cq).status;
            ibv_mr* plain = ibv_reg_mr(other, b.buf, 4096, kRemote);
            ASSERT_NE(plain, nullptr);
            ibv_send_wr li = local_inv_wr(2, plain->rkey);
            ASSERT_EQ(ibv_post_send(b.qps[1], &li, &bad), 0);
            inv = wait_one(b.cq).status;
            oob.put(0, {});
          }});
  EXPECT_EQ(reg, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(inv, IBV_WC_LOC_PROT_ERR);
}

// A fast registration of an STag that is still valid is refused (it must be invalidated first,
// as Linux siw requires): IBV_WC_LOC_PROT_ERR, and the STag keeps its first registration (a
// Write with its first key still lands, one with the refused key does not).
TEST(FastReg, AValidStagIsNotRegisteredAgain) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  ibv_wc_status again = IBV_WC_SUCCESS, old_key = IBV_WC_GENERAL_ERR, new_key = IBV_WC_SUCCESS;
  const std::vector<uint8_t> d = pattern(4096, 4);
  traffic::EndpointConfig two;  // the refused WR errs QP 1; the Writes go over QP 0
  two.qps = 2;
  cl.run({[&] {
            open_connected(a, 0, two, oob);
            const PeerInfo p = oob.get(0);
            old_key = write_to(a, p, p.rkey, d);
            const PeerInfo q = oob.get(0);  // the key of the refused registration
            new_key = write_to(a, q, q.rkey, d);
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, two, oob);
            ibv_mr* mr = rnic_alloc_fast_mr(b.pd, 2);
            ASSERT_NE(mr, nullptr);
            ASSERT_EQ(rnic_map_fast_mr(mr, b.buf, 4096), 0);
            ibv_send_wr* bad = nullptr;
            ibv_send_wr fr = fast_reg_wr(1, mr, 0x44);
            ASSERT_EQ(ibv_post_send(b.qps[0], &fr, &bad), 0);
            ASSERT_EQ(wait_one(b.cq).status, IBV_WC_SUCCESS);
            const uint32_t first = mr->rkey;
            ibv_send_wr fr2 = fast_reg_wr(2, mr, 0x55);
            ASSERT_EQ(ibv_post_send(b.qps[1], &fr2, &bad), 0);
            again = wait_one(b.cq).status;
            PeerInfo p = b.info();
            p.rkey = first;
            oob.put(0, p);
            p.rkey = (first & ~0xFFu) | 0x55;
            oob.put(0, p);
            oob.get(1);
          }});
  EXPECT_EQ(again, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(old_key, IBV_WC_SUCCESS);
  EXPECT_EQ(new_key, IBV_WC_REM_ACCESS_ERR);
}

}  // namespace
}  // namespace rnic
