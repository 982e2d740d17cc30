// Every RDMAP operation between two simulated hosts, through verbs: the bytes that arrive, the
// completions on both sides, and guard bytes around every target untouched (the scoreboard).
// Each case runs in both WQE modes (host.wqe_mode): WQEs written into the card by MMIO, and
// host-memory rings the card fetches by DMA after a doorbell.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"
#include "testbench/common/wire_log.h"

namespace rnic {
namespace {

using testbench::kGuard;
using testbench::mem_fill;
using testbench::pattern;
using testbench::test_name;
using testbench::wait_one;
using testbench::WireLog;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

std::vector<uint8_t> read(uint64_t addr, size_t len) {
  return testbench::mem_read(reinterpret_cast<const void*>(addr), len);
}

// Bytes [0, off) and [off+len, total) of the buffer still hold the guard value.
void expect_guards(uint64_t base, size_t total, size_t off, size_t len) {
  const std::vector<uint8_t> all = read(base, total);
  for (size_t i = 0; i < total; ++i)
    if (i < off || i >= off + len) {
      ASSERT_EQ(all[i], kGuard) << "guard byte " << i << " overwritten";
    }
}

class VerbsOps : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { cfg.host.wqe_mode = GetParam(); }
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Oob oob;
  // Each side opens an endpoint with the buffer filled with guard bytes and connects.
  void connect(Endpoint& ep, int me, const EndpointConfig& c = {}) {
    ep.open(c);
    mem_fill(ep.buf, c.buf_bytes);
    oob.put(1 - me, ep.info());
    ep.connect(oob.get(me));
  }
  void path_mtu_case(ibv_mtu mtu, int64_t link_mtu);
};

TEST_P(VerbsOps, RdmaWriteLandsExactlyAndCompletes) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr size_t kLen = 65536 + 123, kSrcOff = 4096 + 7, kDstOff = 8192 + 5;
  const std::vector<uint8_t> data = pattern(kLen, 1);
  PeerInfo server;
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            server = oob.get(0);
            ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(a.buf) + kSrcOff, data.data(), kLen), 0);
            ibv_sge sge{a.addr() + kSrcOff, uint32_t(kLen), a.mr->lkey};
            ibv_send_wr wr{};
            wr.wr_id = 42;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            wr.opcode = IBV_WR_RDMA_WRITE;
            wr.send_flags = IBV_SEND_SIGNALED;
            wr.wr.rdma.remote_addr = server.addr + kDstOff;
            wr.wr.rdma.rkey = server.rkey;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
            EXPECT_EQ(wc.wr_id, 42u);
            // The Write's completion frees the source (RFC 5040); a Send after it completes at
            // the responder only once the Write is placed.
            ibv_send_wr fence{};
            fence.wr_id = 43;
            fence.opcode = IBV_WR_SEND;
            fence.send_flags = IBV_SEND_SIGNALED;
            ASSERT_EQ(ibv_post_send(a.qps[0], &fence, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
          },
          [&] {
            connect(b, 1);
            ibv_recv_wr fence{43, nullptr, nullptr, 0};
            ibv_recv_wr* bad_fence = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &fence, &bad_fence), 0);
            oob.put(0, b.info());
            EXPECT_EQ(wait_one(b.cq).status, IBV_WC_SUCCESS);  // the Send after the Write
            EXPECT_EQ(read(b.addr() + kDstOff, kLen), data);
            expect_guards(b.addr(), EndpointConfig{}.buf_bytes, kDstOff, kLen);
          }});
  EXPECT_EQ(stats.group("node1.core").counter("rx_payload_bytes", "", "").value, kLen);
}

// path_mtu caps every segment's payload below what the link carries: an RDMA Write, a Send and
// the Read Responses of an RDMA Read of 64 KiB + 123 with IBV_MTU_1024 go in segments of at most
// 1024 payload bytes (65 or 66 of them), and the bytes arrive exactly.
TEST_P(VerbsOps, PathMtuCapsEverySegment) { path_mtu_case(IBV_MTU_1024, 1500); }
TEST_P(VerbsOps, PathMtu4096CapsJumboFrames) { path_mtu_case(IBV_MTU_4096, 9000); }

void VerbsOps::path_mtu_case(ibv_mtu mtu, int64_t link_mtu) {
  cfg.mac.mtu = link_mtu;
  const size_t cap = size_t(128) << int(mtu);
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr size_t kLen = 65536 + 123, kSrcOff = 4096 + 7, kDstOff = 8192 + 5, kBack = 0x40000;
  const std::vector<uint8_t> data = pattern(kLen, 3), back = pattern(kLen, 4);
  EndpointConfig ec;
  ec.path_mtu = mtu;
  PeerInfo server;
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0, ec);
            server = oob.get(0);
            ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(a.buf) + kSrcOff, data.data(), kLen), 0);
            ibv_sge sge{a.addr() + kSrcOff, uint32_t(kLen), a.mr->lkey};
            ibv_sge rsge{a.addr() + kBack, uint32_t(kLen), a.mr->lkey};
            ibv_send_wr wr[2] = {};
            wr[0].wr_id = 1;
            wr[0].sg_list = &sge;
            wr[0].num_sge = 1;
            wr[0].opcode = IBV_WR_RDMA_WRITE;
            wr[0].wr.rdma.remote_addr = server.addr + kDstOff;
            wr[0].wr.rdma.rkey = server.rkey;
            wr[0].next = &wr[1];
            wr[1].wr_id = 2;
            wr[1].sg_list = &rsge;
            wr[1].num_sge = 1;
            wr[1].opcode = IBV_WR_RDMA_READ;
            wr[1].send_flags = IBV_SEND_SIGNALED;
            wr[1].wr.rdma.remote_addr = server.addr + kBack;
            wr[1].wr.rdma.rkey = server.rkey;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], wr, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(read(a.addr() + kBack, kLen), back);
            oob.put(1, {});
          },
          [&] {
            connect(b, 1, ec);
            ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(b.buf) + kBack, back.data(), kLen), 0);
            oob.put(0, b.info());
            oob.get(1);
            EXPECT_EQ(read(b.addr() + kDstOff, kLen), data);
          }});
  size_t writes = 0, responses = 0;
  for (const testbench::WireFrame& f : wire.frames) {
    if (!f.data()) continue;
    const size_t payload = f.ddp.size() - f.seg.header_bytes();
    if (f.seg.opcode == uint8_t(rdmap::Opcode::kWrite) ||
        f.seg.opcode == uint8_t(rdmap::Opcode::kReadResponse)) {
      EXPECT_LE(payload, cap);
      ++(f.seg.opcode == uint8_t(rdmap::Opcode::kWrite) ? writes : responses);
    }
  }
  EXPECT_EQ(writes, (kLen + cap - 1) / cap);
  EXPECT_EQ(responses, (kLen + cap - 1) / cap);
}

TEST_P(VerbsOps, SendGathersAndScattersAcrossSges) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  const std::vector<uint8_t> data = pattern(10000, 2);
  EndpointConfig c;
  c.sge = 3;
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0, c);
            oob.get(0);  // receives posted
            ASSERT_EQ(rnic_mem_write(a.buf, data.data(), 3000), 0);
            ASSERT_EQ(
                rnic_mem_write(static_cast<uint8_t*>(a.buf) + 100000, data.data() + 3000, 7000), 0);
            ibv_sge sge[2] = {{a.addr(), 3000, a.mr->lkey}, {a.addr() + 100000, 7000, a.mr->lkey}};
            ibv_send_wr wr{};
            wr.wr_id = 7;
            wr.sg_list = sge;
            wr.num_sge = 2;
            wr.opcode = IBV_WR_SEND;
            wr.send_flags = IBV_SEND_SIGNALED;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_SEND);
          },
          [&] {
            connect(b, 1, c);
            // Receive into three pieces: 1000 B, 5000 B, 6000 B (room for 12000).
            ibv_sge sge[3] = {{b.addr() + 0, 1000, b.mr->lkey},
                              {b.addr() + 20000, 5000, b.mr->lkey},
                              {b.addr() + 50000, 6000, b.mr->lkey}};
            ibv_recv_wr rwr{};
            rwr.wr_id = 9;
            rwr.sg_list = sge;
            rwr.num_sge = 3;
            ibv_recv_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &rwr, &bad), 0);
            oob.put(0, {});
            const ibv_wc wc = wait_one(b.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_RECV);
            EXPECT_EQ(wc.byte_len, 10000u);
            EXPECT_EQ(wc.wr_id, 9u);
            std::vector<uint8_t> got = read(b.addr(), 1000);
            const std::vector<uint8_t> g2 = read(b.addr() + 20000, 5000);
            const std::vector<uint8_t> g3 = read(b.addr() + 50000, 4000);
            got.insert(got.end(), g2.begin(), g2.end());
            got.insert(got.end(), g3.begin(), g3.end());
            EXPECT_EQ(got, data);
            const std::vector<uint8_t> rest = read(b.addr() + 54000, 2000);
            EXPECT_EQ(rest, std::vector<uint8_t>(2000, kGuard));
          }});
}

TEST_P(VerbsOps, RdmaReadFetchesRemoteBytes) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr size_t kLen = 100000;
  const std::vector<uint8_t> data = pattern(kLen, 3);
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            const PeerInfo server = oob.get(0);
            ibv_sge sge{a.addr() + 64, uint32_t(kLen), a.mr->lkey};
            ibv_send_wr wr{};
            wr.wr_id = 5;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            wr.opcode = IBV_WR_RDMA_READ;
            wr.send_flags = IBV_SEND_SIGNALED;
            wr.wr.rdma.remote_addr = server.addr + 300;
            wr.wr.rdma.rkey = server.rkey;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(wc.opcode, IBV_WC_RDMA_READ);
            EXPECT_EQ(read(a.addr() + 64, kLen), data);
            expect_guards(a.addr(), EndpointConfig{}.buf_bytes, 64, kLen);
          },
          [&] {
            connect(b, 1);
            ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(b.buf) + 300, data.data(), kLen), 0);
            oob.put(0, b.info());
          }});
}

// rnic_wait_cqs sleeps over several CQs: it times out when none has a CQE, and wakes on the one
// that gets a completion (its index + 1), as rnic_wait_cq does for one.
TEST_P(VerbsOps, WaitCqsWakesOnTheCqThatCompletes) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());  // its capture, as every case here writes one
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            const PeerInfo server = oob.get(0);
            ibv_cq* idle = ibv_create_cq(a.ctx, 4, nullptr, nullptr, 0);
            ASSERT_NE(idle, nullptr);
            ibv_cq* cqs[2] = {idle, a.cq};
            const double t0 = rnic_now_ns();
            EXPECT_EQ(rnic_wait_cqs(cqs, 2, 2000), 0);
            EXPECT_GE(rnic_now_ns() - t0, 2000.0);
            ibv_sge sge{a.addr(), 64, a.mr->lkey};
            ibv_send_wr wr = testbench::rdma_write_wr(9, &sge, 1, server.addr, server.rkey, true);
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            EXPECT_EQ(rnic_wait_cqs(cqs, 2, RNIC_WAIT_FOREVER), 2);
            ibv_wc wc{};
            EXPECT_EQ(ibv_poll_cq(idle, 1, &wc), 0);
            ASSERT_EQ(ibv_poll_cq(a.cq, 1, &wc), 1);
            EXPECT_EQ(wc.wr_id, 9u);
            EXPECT_EQ(rnic_wait_cqs(cqs, 0, 1000), 0) << "no CQ to wait on";
            EXPECT_EQ(ibv_destroy_cq(idle), 0);
          },
          [&] {
            connect(b, 1);
            oob.put(0, b.info());
          }});
}

// rnic_poll_rounds goes on with a loop polling CQs in rounds after a round that found nothing:
// it returns the poll that finds a CQE, at a look's time on the loop's grid (each round poll_ns
// and then one cq_poll_ns look a CQ), with all of that as CPU time; with nothing to find it
// returns at the first round's start at or after its limit. (That it finds what the loop finds
// at the same time: the check poll_skip, which runs scale both ways.)
TEST_P(VerbsOps, PollRoundsReturnsOnTheLoopsGrid) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr uint64_t kPollNs = 100;
  const double look = double(cfg.cost.cq_poll_ns), round = double(kPollNs) + 2 * look;
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            const PeerInfo server = oob.get(0);
            ibv_cq* idle = ibv_create_cq(a.ctx, 4, nullptr, nullptr, 0);
            ASSERT_NE(idle, nullptr);
            ibv_cq* cqs[2] = {idle, a.cq};
            ibv_wc wc[4];
            int which = 5;
            EXPECT_EQ(rnic_poll_rounds(cqs, 0, kPollNs, UINT64_MAX, 4, wc, &which), -1);
            EXPECT_EQ(errno, EINVAL);
            // Nothing to find: back at the start of the first round at or after 1 us from now,
            // 100 ns and 8 rounds on.
            double t = rnic_now_ns(), cpu = rnic_cpu_ns();
            EXPECT_EQ(rnic_poll_rounds(cqs, 2, kPollNs, uint64_t(t + 1000) * 1000, 4, wc, &which),
                      0);
            EXPECT_EQ(which, -1);
            EXPECT_EQ(rnic_now_ns() - t, double(kPollNs) + 8 * round);
            EXPECT_EQ(rnic_cpu_ns() - cpu, double(kPollNs) + 8 * round);
            // A Write's completion: found by the look at its CQ (the second), on the grid.
            ibv_sge sge{a.addr(), 64, a.mr->lkey};
            ibv_send_wr wr = testbench::rdma_write_wr(7, &sge, 1, server.addr, server.rkey, true);
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            int got = 0;
            for (int k = 0; k < 2; ++k) got += ibv_poll_cq(cqs[k], 4, wc);
            ASSERT_EQ(got, 0) << "a Write completes later than its post";
            t = rnic_now_ns();
            cpu = rnic_cpu_ns();
            ASSERT_EQ(rnic_poll_rounds(cqs, 2, kPollNs, UINT64_MAX, 4, wc, &which), 1);
            EXPECT_EQ(which, 1);
            EXPECT_EQ(wc[0].wr_id, 7u);
            EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
            // Its look, the next one (which finds the CQ empty again) and the CQ's doorbell (an
            // MMIO write: not CPU time).
            const double took = rnic_now_ns() - t, doorbell = took - (rnic_cpu_ns() - cpu);
            EXPECT_GT(took, round);
            EXPECT_EQ(doorbell, double(cfg.cost.mmio_issue_ns));
            EXPECT_EQ(std::fmod(took - double(kPollNs) - 3 * look - doorbell, round), 0.0) << took;
            EXPECT_EQ(ibv_destroy_cq(idle), 0);
          },
          [&] {
            connect(b, 1);
            oob.put(0, b.info());
          }});
}

// A responder left in RTR (perftest's bandwidth servers never go to RTS) answers RDMA Reads, as an
// InfiniBand responder does; it sends nothing of its own.
TEST_P(VerbsOps, AResponderInRtrAnswersReads) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr size_t kLen = 50000;
  const std::vector<uint8_t> data = pattern(kLen, 9);
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            const PeerInfo server = oob.get(0);
            std::vector<ibv_send_wr> wr(4);
            std::vector<ibv_sge> sge(4);
            for (size_t i = 0; i < 4; ++i) {
              sge[i] = {a.addr() + i * kLen, uint32_t(kLen), a.mr->lkey};
              wr[i].wr_id = i;
              wr[i].sg_list = &sge[i];
              wr[i].num_sge = 1;
              wr[i].opcode = IBV_WR_RDMA_READ;
              wr[i].send_flags = IBV_SEND_SIGNALED;
              wr[i].wr.rdma = {server.addr, server.rkey};
              wr[i].next = i + 1 < 4 ? &wr[i + 1] : nullptr;
            }
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], wr.data(), &bad), 0);
            for (const ibv_wc& wc : testbench::wait_completions(a.cq, 4))
              EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            for (size_t i = 0; i < 4; ++i) EXPECT_EQ(read(a.addr() + i * kLen, kLen), data) << i;
          },
          [&] {
            EndpointConfig c;
            b.open(c);
            ASSERT_EQ(rnic_mem_write(b.buf, data.data(), kLen), 0);
            oob.put(0, b.info());
            traffic::connect_qp(b.qps[0], oob.get(1), 0, c, IBV_QPS_RTR);
            oob.put(0, b.info());
            EXPECT_EQ(testbench::qp_state(b.qps[0]), IBV_QPS_RTR);
          }});
}

// Send, Send with Solicited Event, Send with Invalidate and with SE and Invalidate, and 0-byte
// Send and Write, posted as one list with only the last WR signalled: one completion on the
// requester; on the responder a receive completion each, in order, with the invalidated STags
// reported and really invalid afterwards (an RDMA Write to one is refused with a Terminate).
TEST_P(VerbsOps, SendVariantsUnsignalledAndZeroLength) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  const std::vector<uint8_t> data = pattern(4 * 300, 4);
  Endpoint a, b;
  uint32_t inv1 = 0, inv2 = 0;
  void* spare[2] = {};
  cl.run(
      {[&] {
         connect(a, 0);
         const PeerInfo server = oob.get(0);
         inv1 = oob.get(0).rkey;
         inv2 = oob.get(0).rkey;
         ASSERT_EQ(rnic_mem_write(a.buf, data.data(), data.size()), 0);
         ibv_sge sge[4];
         ibv_send_wr wr[6] = {};
         const ibv_wr_opcode ops[6] = {IBV_WR_SEND,          IBV_WR_SEND, IBV_WR_SEND_WITH_INV,
                                       IBV_WR_SEND_WITH_INV, IBV_WR_SEND, IBV_WR_RDMA_WRITE};
         for (int i = 0; i < 6; ++i) {
           wr[i].wr_id = uint64_t(i);
           wr[i].opcode = ops[i];
           if (i < 4) {
             sge[i] = {a.addr() + uint64_t(i) * 300, 300, a.mr->lkey};
             wr[i].sg_list = &sge[i];
             wr[i].num_sge = 1;
           }
           if (i == 1 || i == 3) wr[i].send_flags = IBV_SEND_SOLICITED;
           if (i + 1 < 6) wr[i].next = &wr[i + 1];
         }
         wr[2].invalidate_rkey = inv1;
         wr[3].invalidate_rkey = inv2;
         wr[5].wr.rdma.remote_addr = server.addr + 7;  // 0 bytes: names no memory
         wr[5].wr.rdma.rkey = server.rkey;
         wr[5].send_flags = IBV_SEND_SIGNALED;
         ibv_send_wr* bad = nullptr;
         ASSERT_EQ(ibv_post_send(a.qps[0], wr, &bad), 0);
         const ibv_wc wc = wait_one(a.cq);
         EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
         EXPECT_EQ(wc.wr_id, 5u);
         EXPECT_EQ(wc.byte_len, 0u);
         ibv_wc more{};
         EXPECT_EQ(ibv_poll_cq(a.cq, 1, &more), 0) << "unsignalled WR " << more.wr_id;
         oob.get(0);  // the responder has checked its receives
         // The invalidated STag no longer admits an RDMA Write.
         ibv_send_wr w{};
         w.wr_id = 6;
         w.sg_list = &sge[0];
         w.num_sge = 1;
         w.opcode = IBV_WR_RDMA_WRITE;
         w.send_flags = IBV_SEND_SIGNALED;
         w.wr.rdma.remote_addr = reinterpret_cast<uint64_t>(spare[0]);
         w.wr.rdma.rkey = inv1;
         ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
         EXPECT_EQ(wait_one(a.cq).status, IBV_WC_REM_ACCESS_ERR);
       },
       [&] {
         connect(b, 1);
         ibv_mr* mr[2];
         for (int i = 0; i < 2; ++i) {
           spare[i] = rnic_malloc(8192);
           mem_fill(spare[i], 8192);
           mr[i] =
               ibv_reg_mr(b.pd, spare[i], 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
           ASSERT_TRUE(mr[i]);
         }
         for (int i = 0; i < 5; ++i) {
           ibv_sge sge{b.addr() + uint64_t(i) * 1000, 1000, b.mr->lkey};
           ibv_recv_wr r{};
           r.wr_id = 10 + uint64_t(i);
           r.sg_list = &sge;
           r.num_sge = 1;
           ibv_recv_wr* bad = nullptr;
           ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad), 0);
         }
         oob.put(0, b.info());
         PeerInfo p;
         p.rkey = mr[0]->rkey;
         oob.put(0, p);
         p.rkey = mr[1]->rkey;
         oob.put(0, p);
         for (int i = 0; i < 5; ++i) {
           const ibv_wc wc = wait_one(b.cq);
           EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
           EXPECT_EQ(wc.wr_id, 10u + uint64_t(i));
           EXPECT_EQ(wc.opcode, IBV_WC_RECV);
           EXPECT_EQ(wc.byte_len, i < 4 ? 300u : 0u);
           if (i == 2 || i == 3) {
             EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
             EXPECT_EQ(wc.invalidated_rkey, i == 2 ? mr[0]->rkey : mr[1]->rkey);
           } else {
             EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_INV);
           }
           if (i < 4) {
             EXPECT_EQ(read(b.addr() + uint64_t(i) * 1000, 300),
                       std::vector<uint8_t>(data.begin() + i * 300, data.begin() + i * 300 + 300));
           }
         }
         for (int i = 0; i < 5; ++i) {
           const uint64_t at = uint64_t(i) * 1000 + (i < 4 ? 300 : 0);
           EXPECT_EQ(read(b.addr() + at, 1000 - (at - uint64_t(i) * 1000)),
                     std::vector<uint8_t>(1000 - (at - uint64_t(i) * 1000), kGuard));
         }
         expect_guards(b.addr() + 5000, EndpointConfig{}.buf_bytes - 5000, 0, 0);
         for (void* s : spare) expect_guards(reinterpret_cast<uint64_t>(s), 8192, 0, 0);
         oob.put(0, {});
         ibv_async_event ev{};
         ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);  // the refused Write
         EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
       }});
}

// Completion events through a completion channel: armed for solicited events only, the CQ
// raises no event for a plain Send and one for a Send with Solicited Event; re-armed for every
// completion, the next plain Send raises one.
TEST_P(VerbsOps, SolicitedOnlyNotificationWaitsForTheSolicitedSend) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  EndpointConfig c;
  c.comp_channel = true;
  Endpoint a, b;
  uint64_t se_posted_ps = 0;
  auto send = [&](uint64_t id, int flags) {
    ibv_sge sge{a.addr(), 100, a.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | flags;
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
    EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
  };
  cl.run({[&] {
            connect(a, 0, c);
            oob.get(0);  // receives posted, CQ armed
            send(1, 0);
            rnic_spend_ns(20'000);
            se_posted_ps = sc_core::sc_time_stamp().value();
            send(2, IBV_SEND_SOLICITED);
            oob.get(0);  // re-armed
            send(3, 0);
          },
          [&] {
            connect(b, 1, c);
            for (int i = 0; i < 3; ++i) {
              ibv_sge sge{b.addr() + uint64_t(i) * 1000, 1000, b.mr->lkey};
              ibv_recv_wr r{};
              r.wr_id = 10 + uint64_t(i);
              r.sg_list = &sge;
              r.num_sge = 1;
              ibv_recv_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad), 0);
            }
            ASSERT_EQ(ibv_req_notify_cq(b.cq, 1), 0);
            oob.put(0, {});
            ibv_cq* cq = nullptr;
            void* ctx = nullptr;
            ASSERT_EQ(ibv_get_cq_event(b.channel, &cq, &ctx), 0);
            EXPECT_EQ(cq, b.cq);
            EXPECT_GT(sc_core::sc_time_stamp().value(), se_posted_ps)
                << "an event before the solicited Send";
            ibv_wc wc[4];
            EXPECT_EQ(ibv_poll_cq(b.cq, 4, wc), 2);  // the plain Send's and the SE Send's
            ASSERT_EQ(ibv_req_notify_cq(b.cq, 0), 0);
            oob.put(0, {});
            ASSERT_EQ(ibv_get_cq_event(b.channel, &cq, &ctx), 0);
            EXPECT_EQ(ibv_poll_cq(b.cq, 4, wc), 1);
            EXPECT_EQ(wc[0].wr_id, 12u);
            EXPECT_EQ(ibv_destroy_comp_channel(b.channel), EBUSY);  // its CQ still exists
            ibv_ack_cq_events(b.cq, 2);
          }});
}

// Several RDMA Reads outstanding at once, never more than ORD (16, as the endpoints connect):
// counted on the wire from Read Requests sent to the last segment of their Read Responses.
// Every Read completes in order with the remote bytes.
TEST_P(VerbsOps, ReadsOutstandingUpToOrd) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr int kReads = 24;
  constexpr uint32_t kLen = 4096;
  const std::vector<uint8_t> data = pattern(size_t(kReads) * kLen, 5);
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0);
            const PeerInfo server = oob.get(0);
            std::vector<ibv_sge> sge(kReads);
            std::vector<ibv_send_wr> wr(kReads);
            for (int i = 0; i < kReads; ++i) {
              sge[i] = {a.addr() + uint64_t(i) * 8192, kLen, a.mr->lkey};
              wr[i] = ibv_send_wr{};
              wr[i].wr_id = uint64_t(i);
              wr[i].sg_list = &sge[i];
              wr[i].num_sge = 1;
              wr[i].opcode = IBV_WR_RDMA_READ;
              wr[i].send_flags = IBV_SEND_SIGNALED;
              wr[i].wr.rdma.remote_addr = server.addr + uint64_t(i) * kLen;
              wr[i].wr.rdma.rkey = server.rkey;
              wr[i].next = i + 1 < kReads ? &wr[i + 1] : nullptr;
            }
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], wr.data(), &bad), 0);
            for (int i = 0; i < kReads; ++i) {
              const ibv_wc wc = wait_one(a.cq);
              EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
              EXPECT_EQ(wc.wr_id, uint64_t(i));
              EXPECT_EQ(
                  read(a.addr() + uint64_t(i) * 8192, kLen),
                  std::vector<uint8_t>(data.begin() + i * kLen, data.begin() + (i + 1) * kLen));
              expect_guards(a.addr() + uint64_t(i) * 8192 + kLen, 8192 - kLen, 0, 0);
            }
          },
          [&] {
            connect(b, 1);
            ASSERT_EQ(rnic_mem_write(b.buf, data.data(), data.size()), 0);
            oob.put(0, b.info());
          }});
  int out = 0, most = 0, requests = 0;
  for (const auto& f : wire.frames) {
    if (!f.data() || !f.seg_ok) continue;
    if (f.opcode() == uint8_t(rdmap::Opcode::kReadRequest)) {
      ++requests;
      most = std::max(most, ++out);
    } else if (f.opcode() == uint8_t(rdmap::Opcode::kReadResponse) && f.seg.last) {
      --out;
    }
  }
  EXPECT_EQ(requests, kReads);
  EXPECT_EQ(out, 0);
  EXPECT_EQ(most, 16) << "outstanding Read Requests: ORD";
}

// A CQ that overflows raises IBV_EVENT_CQ_ERR and moves the QPs that use it to ERROR (each
// with IBV_EVENT_QP_FATAL).
TEST_P(VerbsOps, CqOverflowRaisesCqErrAndFailsItsQps) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  EndpointConfig c;
  c.cqe = 4;
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0, c);
            const PeerInfo server = oob.get(0);
            const int n = a.cq->cqe + 1;
            ibv_sge sge{a.addr(), 64, a.mr->lkey};
            std::vector<ibv_send_wr> wr(static_cast<size_t>(n));
            for (int i = 0; i < n; ++i) {
              wr[i] = testbench::rdma_write_wr(uint64_t(i), &sge, 1, server.addr, server.rkey);
              wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
            }
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], wr.data(), &bad), 0);
            ibv_async_event ev{};
            ASSERT_EQ(ibv_get_async_event(a.ctx, &ev), 0);
            EXPECT_EQ(ev.event_type, IBV_EVENT_CQ_ERR);
            EXPECT_EQ(ev.element.cq, a.cq);
            ibv_ack_async_event(&ev);
            ASSERT_EQ(ibv_get_async_event(a.ctx, &ev), 0);
            EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
            EXPECT_EQ(ev.element.qp, a.qps[0]);
            ibv_ack_async_event(&ev);
            EXPECT_EQ(testbench::qp_state(a.qps[0]), IBV_QPS_ERR);
            oob.put(1, {});
          },
          [&] {
            connect(b, 1, c);
            oob.put(0, b.info());
            oob.get(1);
            // The failed QP closed its stream: the peer's QP follows.
            for (int i = 0; i < 100 && testbench::qp_state(b.qps[0]) != IBV_QPS_ERR; ++i)
              rnic_spend_ns(1000);
            EXPECT_EQ(testbench::qp_state(b.qps[0]), IBV_QPS_ERR);
          }});
  EXPECT_EQ(stats.group("node0.core").counter("cq_overflows", "", "").value, 1u);
}

// Queues of 4 WQEs, posted in batches of 1 to 4 so that the producer counts wrap the queues
// several times and some batches span the wrap (in ring mode: one doorbell, two DMA reads).
// Every Write lands, every Send fills its receive, completions come in order.
TEST_P(VerbsOps, QueuesWrapAround) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  EndpointConfig c;
  c.send_depth = 4;
  c.recv_depth = 4;
  constexpr uint32_t kLen = 100;
  const std::vector<int> batches = {3, 4, 2, 3, 1, 4, 3};  // 20 WRs: writes and sends alternate
  const int total = std::accumulate(batches.begin(), batches.end(), 0);
  const std::vector<uint8_t> data = pattern(size_t(total) * kLen, 7);
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0, c);
            const PeerInfo server = oob.get(0);
            testbench::mem_write(a.buf, 0, data);
            int k = 0;
            for (int n : batches) {
              std::vector<ibv_sge> sge(static_cast<size_t>(n));
              std::vector<ibv_send_wr> wr(static_cast<size_t>(n));
              for (int i = 0; i < n; ++i, ++k) {
                sge[i] = {a.addr() + uint64_t(k) * kLen, kLen, a.mr->lkey};
                wr[i] = testbench::rdma_write_wr(
                    uint64_t(k), &sge[i], 1, server.addr + uint64_t(k) * kLen, server.rkey, true);
                if (k % 2) wr[i].opcode = IBV_WR_SEND;
                wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
              }
              ibv_send_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_send(a.qps[0], wr.data(), &bad), 0);
              for (int i = 0; i < n; ++i) {
                const ibv_wc wc = wait_one(a.cq);
                EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
                EXPECT_EQ(wc.wr_id, uint64_t(k - n + i));
              }
            }
            oob.put(1, {});
          },
          [&] {
            connect(b, 1, c);
            // Receives for the Sends (odd k) land where the Write of the same k would have.
            int k = 1;
            auto post = [&](int n) {
              for (int i = 0; i < n; ++i, k += 2) {
                ibv_sge sge{b.addr() + uint64_t(k) * kLen, kLen, b.mr->lkey};
                ibv_recv_wr wr{uint64_t(k), nullptr, &sge, 1};
                ibv_recv_wr* bad = nullptr;
                ASSERT_EQ(ibv_post_recv(b.qps[0], &wr, &bad), 0);
              }
            };
            post(3);
            oob.put(0, b.info());
            for (int got = 0; got < total / 2; ++got) {
              const ibv_wc wc = wait_one(b.cq);
              EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
              EXPECT_EQ(wc.wr_id, uint64_t(2 * got + 1));
              EXPECT_EQ(wc.byte_len, kLen);
              if (k < total) post(1);
            }
            oob.get(1);
            std::vector<uint8_t> want(c.buf_bytes, kGuard);
            std::copy(data.begin(), data.end(), want.begin());
            testbench::expect_bytes("responder buffer", b.buf, want);
          }});
  const uint64_t fetches = stats.group("node0.core").counter("wqe_fetches", "", "").value;
  if (std::string(GetParam()) == "ring") {
    // One read per batch, two for the batches that span the SQ's wrap: [3,7), [7,9), [13,17).
    EXPECT_EQ(fetches, batches.size() + 3);
  } else {
    EXPECT_EQ(fetches, 0u);
  }
}

// Two QPs take their receives from one shared receive queue: each message lands in the next SRQ
// WQE free when it starts, even while the other QP's long message is still arriving into the one
// before; completions name the QP that took the WQE; a QP that uses the SRQ takes no receives of
// its own; the SRQ frees its slots as completions come, in any order; it and its PD cannot go
// while a QP uses it.
TEST_P(VerbsOps, SharedReceiveQueueServesSeveralQps) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  EndpointConfig ca, cb;
  ca.qps = cb.qps = 2;
  cb.srq_depth = 4;
  constexpr uint32_t kSlot = 65536;
  // Per message: the QP (index) it is sent on and its length. The first is long (many
  // segments); the second, on the other QP, is posted right behind it.
  const std::vector<std::pair<int, uint32_t>> msgs = {{0, 60000}, {1, 100}, {1, 3000}, {0, 7}};
  std::vector<std::vector<uint8_t>> data;
  for (size_t m = 0; m < msgs.size(); ++m) data.push_back(pattern(msgs[m].second, int(m) + 1));
  Endpoint a, b;
  cl.run({[&] {
            connect(a, 0, ca);
            oob.get(0);  // the receives are posted
            std::vector<ibv_sge> sge(msgs.size());
            for (size_t m = 0; m < msgs.size(); ++m) {
              testbench::mem_write(a.buf, m * kSlot, data[m]);
              sge[m] = {a.addr() + m * kSlot, msgs[m].second, a.mr->lkey};
              ibv_send_wr wr{};
              wr.wr_id = m;
              wr.sg_list = &sge[m];
              wr.num_sge = 1;
              wr.opcode = IBV_WR_SEND;
              wr.send_flags = IBV_SEND_SIGNALED;
              ibv_send_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_send(a.qps[size_t(msgs[m].first)], &wr, &bad), 0);
            }
            for (size_t m = 0; m < msgs.size(); ++m)
              EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
          },
          [&] {
            cb.buf_bytes = 8 * kSlot;
            connect(b, 1, cb);
            ibv_srq* const srq = b.srq;
            ASSERT_NE(srq, nullptr);
            auto post = [&](uint64_t id) {
              ibv_sge sge{b.addr() + (id % 8) * kSlot, kSlot, b.mr->lkey};
              ibv_recv_wr wr{id, nullptr, &sge, 1};
              ibv_recv_wr* bad = nullptr;
              return ibv_post_srq_recv(srq, &wr, &bad);
            };
            for (uint64_t id = 0; id < 4; ++id) ASSERT_EQ(post(id), 0);
            EXPECT_EQ(post(4), ENOMEM);  // all 4 slots in use
            ibv_sge sge{b.addr(), 64, b.mr->lkey};
            ibv_recv_wr own{99, nullptr, &sge, 1};
            ibv_recv_wr* bad = nullptr;
            EXPECT_EQ(ibv_post_recv(b.qps[0], &own, &bad), EINVAL);
            EXPECT_EQ(bad, &own);
            EXPECT_EQ(ibv_destroy_srq(b.srq), EBUSY);
            ibv_srq_attr sa{};
            ASSERT_EQ(ibv_query_srq(b.srq, &sa), 0);
            EXPECT_EQ(sa.max_wr, 4u);
            oob.put(0, {});
            std::vector<bool> seen(msgs.size());
            for (size_t n = 0; n < msgs.size(); ++n) {
              const ibv_wc wc = wait_one(b.cq);
              ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
              EXPECT_EQ(wc.opcode, IBV_WC_RECV);
              // The WQE a message took is the n-th to start; its bytes are that message's.
              ASSERT_LT(wc.wr_id, msgs.size());
              const size_t m = size_t(wc.wr_id);
              seen[m] = true;
              EXPECT_EQ(wc.qp_num, b.qps[size_t(msgs[m].first)]->qp_num) << "WQE " << m;
              EXPECT_EQ(wc.byte_len, msgs[m].second);
              EXPECT_EQ(read(b.addr() + m * kSlot, msgs[m].second), data[m]) << "WQE " << m;
              if (n == 0) {
                // The short message behind the long one started later but ended first.
                EXPECT_EQ(wc.wr_id, 1u);
              }
            }
            EXPECT_EQ(seen, std::vector<bool>(msgs.size(), true));
            for (uint64_t id = 4; id < 8; ++id) EXPECT_EQ(post(id), 0);  // freed again
            EXPECT_EQ(ibv_dealloc_pd(b.pd), EBUSY);
            for (ibv_qp* qp : b.qps) ASSERT_EQ(ibv_destroy_qp(qp), 0);
            b.qps.clear();
            b.srq = nullptr;
            EXPECT_EQ(ibv_destroy_srq(srq), 0);
            EXPECT_EQ(post(8), EINVAL);  // destroyed: quarantined
          }});
  EXPECT_EQ(stats.group("node1.core").counter("rx_payload_bytes", "", "").value,
            60000u + 100 + 3000 + 7);
}

// rdma-core's extended verbs: an extended QP (ibv_create_qp_ex with send_ops_flags,
// ibv_qp_to_qp_ex) posts an RDMA Write, an inline Send and an RDMA Read in one
// ibv_wr_start..ibv_wr_complete; an extended CQ (ibv_create_cq_ex) gives their completions
// through ibv_start_poll / ibv_next_poll / ibv_end_poll and the readers; what the card does not
// do is refused (a timestamp field, an atomic: nothing posted).
TEST_P(VerbsOps, ExtendedQpAndCqPostAndPoll) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr uint32_t kLen = 3000;
  const std::vector<uint8_t> data = pattern(kLen, 5);
  const char greeting[] = "inline hello";
  Endpoint b;
  cl.run({[&] {
            ibv_device** list = ibv_get_device_list(nullptr);
            ibv_context* ctx = ibv_open_device(list[0]);
            ibv_free_device_list(list);
            ibv_pd* pd = ibv_alloc_pd(ctx);
            ibv_cq_init_attr_ex ca{};
            ca.cqe = 64;
            ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
            EXPECT_EQ(ibv_create_cq_ex(ctx, &ca), nullptr);
            EXPECT_EQ(errno, EOPNOTSUPP);
            ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
            ibv_cq_ex* cq = ibv_create_cq_ex(ctx, &ca);
            ASSERT_NE(cq, nullptr);
            ibv_qp_init_attr_ex qa{};
            qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
            qa.pd = pd;
            qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(cq);
            qa.qp_type = IBV_QPT_RC;
            qa.cap = {16, 16, 1, 1, 64};
            qa.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE;  // not done by the card
            EXPECT_EQ(ibv_create_qp_ex(ctx, &qa), nullptr);
            qa.send_ops_flags =
                IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
            ibv_qp* qp = ibv_create_qp_ex(ctx, &qa);
            ASSERT_NE(qp, nullptr);
            ibv_qp_ex* qx = ibv_qp_to_qp_ex(qp);
            ASSERT_NE(qx, nullptr);
            void* buf = rnic_malloc(2 * kLen);
            ibv_mr* mr = ibv_reg_mr(pd, buf, 2 * kLen, IBV_ACCESS_LOCAL_WRITE);
            testbench::mem_write(buf, 0, data);
            // Connected to b's QP as Endpoint::connect does it.
            const PeerInfo peer = oob.get(0);
            PeerInfo me;
            ibv_query_gid(ctx, 1, 0, &me.gid);
            me.qpns = {qp->qp_num};
            oob.put(1, me);
            traffic::connect_qp(qp, peer, 0, EndpointConfig{});
            oob.get(0);  // b's receive is posted
            ibv_wr_start(qx);
            qx->wr_id = 1;
            qx->wr_flags = IBV_SEND_SIGNALED;
            ibv_wr_rdma_write(qx, peer.rkey, peer.addr);
            ibv_wr_set_sge(qx, mr->lkey, reinterpret_cast<uint64_t>(buf), kLen);
            qx->wr_id = 2;
            ibv_wr_send(qx);
            ibv_wr_set_inline_data(qx, const_cast<char*>(greeting), sizeof greeting);
            qx->wr_id = 3;
            ibv_wr_rdma_read(qx, peer.rkey, peer.addr);
            ibv_wr_set_sge(qx, mr->lkey, reinterpret_cast<uint64_t>(buf) + kLen, kLen);
            ASSERT_EQ(ibv_wr_complete(qx), 0);
            std::vector<std::pair<uint64_t, ibv_wc_opcode>> got;
            for (int tries = 0; got.size() < 3 && tries < 100; ++tries) {
              ibv_poll_cq_attr pa{};
              if (ibv_start_poll(cq, &pa) == ENOENT) {
                rnic_wait_cq(ibv_cq_ex_to_cq(cq), 1000000);
                continue;
              }
              do {
                EXPECT_EQ(cq->status, IBV_WC_SUCCESS);
                EXPECT_EQ(ibv_wc_read_qp_num(cq), qp->qp_num);
                got.push_back({cq->wr_id, ibv_wc_read_opcode(cq)});
                if (cq->wr_id == 3) {
                  EXPECT_EQ(ibv_wc_read_byte_len(cq), kLen);
                }
              } while (ibv_next_poll(cq) == 0);
              ibv_end_poll(cq);
            }
            EXPECT_EQ(got, (std::vector<std::pair<uint64_t, ibv_wc_opcode>>{
                               {1, IBV_WC_RDMA_WRITE}, {2, IBV_WC_SEND}, {3, IBV_WC_RDMA_READ}}));
            EXPECT_EQ(read(reinterpret_cast<uint64_t>(buf) + kLen, kLen), data) << "read back";
            // An operation the card does not do: refused, nothing of the batch posted.
            ibv_wr_start(qx);
            qx->wr_id = 4;
            ibv_wr_send(qx);
            ibv_wr_set_sge(qx, mr->lkey, reinterpret_cast<uint64_t>(buf), 8);
            const uint64_t eight = 8;
            ibv_wr_atomic_write(qx, peer.rkey, peer.addr, &eight);
            EXPECT_EQ(ibv_wr_complete(qx), EOPNOTSUPP);
            ibv_poll_cq_attr pa{};
            EXPECT_EQ(ibv_start_poll(cq, &pa), ENOENT);
            oob.put(1, {});
          },
          [&] {
            EndpointConfig c;
            c.buf_bytes = 65536;
            b.open(c);
            mem_fill(b.buf, c.buf_bytes);
            oob.put(0, b.info());
            b.connect(oob.get(1));
            ibv_sge sge{b.addr() + 8192, 64, b.mr->lkey};
            ibv_recv_wr r{9, nullptr, &sge, 1};
            ibv_recv_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad), 0);
            oob.put(0, {});
            const ibv_wc wc = wait_one(b.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
            EXPECT_EQ(wc.byte_len, sizeof greeting);
            EXPECT_EQ(read(b.addr() + 8192, sizeof greeting),
                      std::vector<uint8_t>(greeting, greeting + sizeof greeting));
            EXPECT_EQ(read(b.addr(), kLen), data) << "the Write";
            oob.get(1);
          }});
}

// Two QPs of one card connected to each other: an RDMA Write from one into the buffer and a
// Send to the other arrive exactly, their frames looped back by the MAC (efe.looped) and none on
// the wire.
TEST_P(VerbsOps, TwoQpsOfOneCardTalkThroughTheLoopback) {
  Cluster cl(cfg, stats);
  const WireLog wire(cl.link(0), test_name());
  constexpr uint32_t kLen = 20000;
  const std::vector<uint8_t> data = pattern(kLen, 3);
  Endpoint e;
  cl.run({[&] {
    EndpointConfig c;
    c.qps = 2;
    e.open(c);
    mem_fill(e.buf, c.buf_bytes);
    PeerInfo self = e.info();
    std::swap(self.qpns[0], self.qpns[1]);  // QP 0 to QP 1 and back
    e.connect(self);
    testbench::mem_write(e.buf, 0, data);
    ibv_sge rs{e.addr() + 200000, 64, e.mr->lkey};
    ibv_recv_wr r{7, nullptr, &rs, 1};
    ibv_recv_wr* bad_r = nullptr;
    ASSERT_EQ(ibv_post_recv(e.qps[1], &r, &bad_r), 0);
    ibv_sge ws{e.addr(), kLen, e.mr->lkey};
    ibv_send_wr w = testbench::rdma_write_wr(1, &ws, 1, e.addr() + 100000, e.mr->rkey, true);
    ibv_sge ss{e.addr(), 64, e.mr->lkey};
    ibv_send_wr snd{};
    snd.wr_id = 2;
    snd.sg_list = &ss;
    snd.num_sge = 1;
    snd.opcode = IBV_WR_SEND;
    snd.send_flags = IBV_SEND_SIGNALED;
    w.next = &snd;
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(e.qps[0], &w, &bad), 0);
    std::vector<ibv_wc> wcs = testbench::wait_completions(e.cq, 3);
    ASSERT_EQ(wcs.size(), 3u);
    for (const ibv_wc& wc : wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << wc.wr_id;
    EXPECT_EQ(read(e.addr() + 100000, kLen), data) << "the Write";
    EXPECT_EQ(read(e.addr() + 200000, 64), std::vector<uint8_t>(data.begin(), data.begin() + 64))
        << "the Send";
  }});
  EXPECT_GT(stats.group("node0.efe").counter("looped", "", "").value, 0u);
  EXPECT_EQ(stats.group("node0.efe").counter("tx_data", "", "").value,
            stats.group("node0.efe").counter("rx_data", "", "").value);
  EXPECT_TRUE(wire.frames.empty()) << "nothing on the wire";
}

INSTANTIATE_TEST_SUITE_P(WqeModes, VerbsOps, ::testing::Values("mmio", "ring"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace rnic
