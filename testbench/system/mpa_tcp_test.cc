// Verbs over MPA/TCP (card.transport: mpa_tcp): two hosts whose cards carry DDP segments in TCP
// connections, one per QP (docs/transport.md). Scoreboard: every RDMA Write, RDMA Read and Send
// lands exactly where it must (guard bytes around each buffer untouched), every WR completes
// with success, and the TCP offload engines say what they did: one connection per QP, no EFE
// on either card, and retransmissions only where the link loses frames.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::counter;
using testbench::kGuard;
using testbench::pattern;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr size_t kBuf = 1 << 20;
constexpr size_t kWrite = 300'000;  // at offset 0 of the responder's buffer
constexpr size_t kRead = 120'000;   // from offset 512 KiB of the responder's buffer
constexpr size_t kSend = 5'000;     // into a receive at offset 768 KiB

SystemConfig tcp_config(double loss) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.set("card.transport", "mpa_tcp", "test");
  cfg.link.loss = loss;
  return cfg;
}

// Host a writes, reads and sends over each of `qps` QPs to host b; b checks what landed.
// setup: faults placed on the built system.
void write_read_send(StatRegistry& stats, const SystemConfig& cfg, int qps,
                     const std::function<void(Cluster&)>& setup = {}) {
  Cluster cl(cfg, stats);
  if (setup) setup(cl);
  EndpointConfig ec;
  ec.buf_bytes = kBuf;
  ec.qps = qps;
  const std::vector<uint8_t> w = pattern(kWrite, 1), r = pattern(kRead, 2), s = pattern(kSend, 3);
  Oob oob;
  Endpoint a, b;
  cl.run({[&] {
            a.open(ec);
            testbench::mem_fill(a.buf, kBuf);
            testbench::mem_write(a.buf, 0, w);
            testbench::mem_write(a.buf, 512 << 10, s);
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            oob.get(0);  // b's receives are posted
            for (int q = 0; q < qps; ++q) {
              const uint64_t off = uint64_t(q) * 8192;  // each QP its own stretch of b's Write area
              ibv_sge ws{a.addr(), uint32_t(kWrite - off), a.mr->lkey};
              ibv_send_wr wr = testbench::rdma_write_wr(1, &ws, 1, peer.addr, peer.rkey, true);
              ibv_send_wr* bad = nullptr;
              if (q > 0) ws.length = 8192, wr.wr.rdma.remote_addr = peer.addr + off;
              ws.addr = a.addr() + off;
              ASSERT_EQ(ibv_post_send(a.qps[size_t(q)], &wr, &bad), 0);
              EXPECT_EQ(wait_one(a.cq, 100'000'000).status, IBV_WC_SUCCESS) << "Write, QP " << q;
            }
            // RDMA Read of b's bytes at 512 KiB into a's buffer at 640 KiB.
            ibv_sge rs{a.addr() + (640 << 10), uint32_t(kRead), a.mr->lkey};
            ibv_send_wr rd{};
            rd.wr_id = 2;
            rd.opcode = IBV_WR_RDMA_READ;
            rd.send_flags = IBV_SEND_SIGNALED;
            rd.sg_list = &rs;
            rd.num_sge = 1;
            rd.wr.rdma.remote_addr = peer.addr + (512 << 10);
            rd.wr.rdma.rkey = peer.rkey;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &rd, &bad), 0);
            EXPECT_EQ(wait_one(a.cq, 100'000'000).status, IBV_WC_SUCCESS) << "Read";
            // Send of kSend bytes (after the Write: b sees it complete once the Write is placed).
            ibv_sge ss{a.addr() + (512 << 10), uint32_t(kSend), a.mr->lkey};
            ibv_send_wr sd{};
            sd.wr_id = 3;
            sd.opcode = IBV_WR_SEND;
            sd.send_flags = IBV_SEND_SIGNALED;
            sd.sg_list = &ss;
            sd.num_sge = 1;
            ASSERT_EQ(ibv_post_send(a.qps[0], &sd, &bad), 0);
            EXPECT_EQ(wait_one(a.cq, 100'000'000).status, IBV_WC_SUCCESS) << "Send";
            const std::vector<uint8_t> got = testbench::mem_read(a.buf, kBuf);
            EXPECT_EQ(std::memcmp(got.data() + (640 << 10), r.data(), kRead), 0) << "Read data";
            EXPECT_EQ(got[(640 << 10) - 1], kGuard);
            EXPECT_EQ(got[(640 << 10) + kRead], kGuard);
          },
          [&] {
            b.open(ec);
            testbench::mem_fill(b.buf, kBuf);
            testbench::mem_write(b.buf, 512 << 10, r);
            oob.put(0, b.info());
            b.connect(oob.get(1));
            ibv_sge rs{b.addr() + (768 << 10), uint32_t(kSend), b.mr->lkey};
            ibv_recv_wr rw{};
            rw.wr_id = 7;
            rw.sg_list = &rs;
            rw.num_sge = 1;
            ibv_recv_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &rw, &bad), 0);
            oob.put(0, {});
            const ibv_wc wc = wait_one(b.cq, 200'000'000);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
            EXPECT_EQ(wc.byte_len, kSend);
            const std::vector<uint8_t> got = testbench::mem_read(b.buf, kBuf);
            EXPECT_EQ(std::memcmp(got.data(), w.data(), kWrite), 0) << "Write data";
            EXPECT_EQ(got[kWrite], kGuard);
            EXPECT_EQ(std::memcmp(got.data() + (768 << 10), s.data(), kSend), 0) << "Send data";
            EXPECT_EQ(got[(768 << 10) + kSend], kGuard);
          }});
  for (const auto& n : cl.nodes) {
    EXPECT_EQ(n->card.efe, nullptr);
    ASSERT_NE(n->card.toe, nullptr);
  }
}

TEST(MpaTcp, WriteReadAndSendArriveIntact) {
  StatRegistry stats;
  write_read_send(stats, tcp_config(0), 1);
  // One connection: made by the active end (node0: the lower MAC), taken by the passive one.
  EXPECT_EQ(counter(stats, "node0.toe", "connections"), 1u);
  EXPECT_EQ(counter(stats, "node1.toe", "connections"), 1u);
  for (const char* n : {"node0.toe", "node1.toe"}) {
    EXPECT_EQ(counter(stats, n, "retransmissions"), 0u) << n;
    EXPECT_EQ(counter(stats, n, "rx_bad_frames"), 0u) << n;
    EXPECT_EQ(counter(stats, n, "failures"), 0u) << n;
  }
  // 300,000 B of Write in FPDUs of at most 1,442 B of DDP segment: at least 209 data segments.
  EXPECT_GE(counter(stats, "node0.toe", "tx_segments"), 209u);
}

TEST(MpaTcp, EachQpHasItsOwnConnection) {
  StatRegistry stats;
  write_read_send(stats, tcp_config(0), 4);
  EXPECT_EQ(counter(stats, "node0.toe", "connections"), 4u);
  EXPECT_EQ(counter(stats, "node1.toe", "connections"), 4u);
}

TEST(MpaTcp, LossIsRepairedByTcp) {
  StatRegistry stats;
  write_read_send(stats, tcp_config(0.02), 1);
  EXPECT_GT(counter(stats, "node0.toe", "retransmissions") +
                counter(stats, "node1.toe", "retransmissions"),
            0u);
  EXPECT_EQ(counter(stats, "node0.toe", "failures"), 0u);
  EXPECT_EQ(counter(stats, "node1.toe", "failures"), 0u);
}

// The link goes down for 600 us in the middle of the Write: TCP's timer brings everything
// again once it is back, and nothing is lost, doubled or failed.
TEST(MpaTcp, ALinkDownForAWhileLosesNothing) {
  StatRegistry stats;
  write_read_send(stats, tcp_config(0), 1,
                  [](Cluster& cl) { cl.link(0).add_down(150'000'000, 750'000'000); });
  EXPECT_GT(counter(stats, "eth0", "lost_down"), 0u);
  EXPECT_GT(counter(stats, "node0.toe", "retransmissions"), 0u);
  EXPECT_EQ(counter(stats, "node0.toe", "failures"), 0u);
  EXPECT_EQ(counter(stats, "node1.toe", "failures"), 0u);
}

// Bit errors: the receiving MAC's FCS drops a corrupted frame, and TCP resends it; MPA's CRC
// never sees one.
TEST(MpaTcp, BitErrorsAreRepairedByTcp) {
  StatRegistry stats;
  SystemConfig cfg = tcp_config(0);
  cfg.link.ber = 2e-6;
  write_read_send(stats, cfg, 1);
  EXPECT_GT(
      counter(stats, "node1.mac", "rx_fcs_errors") + counter(stats, "node0.mac", "rx_fcs_errors"),
      0u);
  EXPECT_GT(counter(stats, "node0.toe", "retransmissions") +
                counter(stats, "node1.toe", "retransmissions"),
            0u);
  EXPECT_EQ(counter(stats, "node0.toe", "failures") + counter(stats, "node1.toe", "failures"), 0u);
}

// The link is cut for good, once the connection is up (a first Write has completed) or while
// it is being made (right after the QPs reach RTS): the connection spends its retry budget
// (tcp.retry_budget_ms, 5 ms here) and fails; the Write completes IBV_WC_RETRY_EXC_ERR and the
// QP is in ERROR. In the handshake's case the passive side's connection fails too (its SYN-ACK
// has the same budget).
void cut_for_good(bool established) {
  StatRegistry stats;
  SystemConfig cfg = tcp_config(0);
  cfg.set("tcp.retry_budget_ms", "5", "test");
  Cluster cl(cfg, stats);
  EndpointConfig ec;
  ec.buf_bytes = kBuf;
  Oob oob;
  Endpoint a, b;
  ibv_wc wc{};
  uint64_t failed_at_ns = 0, cut_ns = 0;
  cl.run({[&] {
            a.open(ec);
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            oob.get(0);
            ibv_sge sge{a.addr(), 65536, a.mr->lkey};
            ibv_send_wr wr = testbench::rdma_write_wr(1, &sge, 1, peer.addr, peer.rkey, true);
            ibv_send_wr* bad = nullptr;
            if (established) {
              ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
              ASSERT_EQ(wait_one(a.cq, 10'000'000).status, IBV_WC_SUCCESS);
            }
            cut_ns = rnic_now_ns() + 1000;
            cl.link(0).add_down(cut_ns * 1000, UINT64_MAX);
            rnic_spend_ns(2000);
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            wc = wait_one(a.cq, 100'000'000);
            failed_at_ns = rnic_now_ns();
            EXPECT_EQ(testbench::qp_state(a.qps[0]), IBV_QPS_ERR);
          },
          [&] {
            b.open(ec);
            const PeerInfo p = oob.get(1);
            oob.put(0, b.info());
            b.connect(p);
            oob.put(0, {});
          }});
  EXPECT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(counter(stats, "node0.toe", "failures"), 1u);
  if (!established) {
    EXPECT_EQ(counter(stats, "node1.toe", "failures"), 1u);
  }
  // The budget is counted from the first expiry, and the failure comes at the first expiry 5 ms
  // or more after it (the timer doubling from its start): within 100 ms of the cut.
  EXPECT_GE(failed_at_ns - cut_ns, 5'000'000u);
  EXPECT_LT(failed_at_ns - cut_ns, 100'000'000u);
}

// A QP moved to ERROR sends its Terminate and closes its connection: FIN after the Terminate,
// the peer (its QP now in ERROR too) closes its side, and both count a close. Both QPs are then
// reset and connected again, to each other: a new connection is made (a second on each side)
// and a Write over it lands.
TEST(MpaTcp, AQpInErrorClosesItsConnectionAndANewOneIsMadeWhenItConnectsAgain) {
  StatRegistry stats;
  Cluster cl(tcp_config(0), stats);
  EndpointConfig ec;
  ec.buf_bytes = 65536;
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> d1 = pattern(ec.buf_bytes, 1), d2 = pattern(ec.buf_bytes, 2);
  ibv_wc_status first = IBV_WC_GENERAL_ERR, second = IBV_WC_GENERAL_ERR;
  ibv_qp_state b_state = IBV_QPS_RTS;
  uint64_t closes_after_error = 0;
  std::vector<uint8_t> seen1, seen2;
  auto write = [&](const PeerInfo& p) {
    ibv_sge sge{a.addr(), uint32_t(ec.buf_bytes), a.mr->lkey};
    ibv_send_wr wr = testbench::rdma_write_wr(1, &sge, 1, p.addr, p.rkey, true);
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
    return wait_one(a.cq, 10'000'000).status;
  };
  auto reset = [](ibv_qp* qp) {
    ibv_qp_attr at{};
    at.qp_state = IBV_QPS_RESET;
    EXPECT_EQ(ibv_modify_qp(qp, &at, IBV_QP_STATE), 0);
  };
  cl.run({[&] {
            const PeerInfo peer = traffic::open_connected(a, 0, ec, oob);
            testbench::mem_write(a.buf, 0, d1);
            oob.get(0);
            first = write(peer);
            oob.put(1, {});  // b reads what landed
            oob.get(0);
            ibv_qp_attr at{};
            at.qp_state = IBV_QPS_ERR;
            EXPECT_EQ(ibv_modify_qp(a.qps[0], &at, IBV_QP_STATE), 0);
            rnic_spend_ns(100'000);  // the Terminate, the FINs
            closes_after_error = counter(stats, "node0.toe", "closes");
            oob.put(1, {});
            oob.get(0);  // b reset its QP
            reset(a.qps[0]);
            a.connect(peer);
            oob.put(1, {});
            oob.get(0);  // b connected again
            testbench::mem_write(a.buf, 0, d2);
            second = write(peer);
            oob.put(1, {});
          },
          [&] {
            const PeerInfo peer = traffic::open_connected(b, 1, ec, oob);
            oob.put(0, {});
            oob.get(1);
            seen1 = testbench::mem_read(b.buf, ec.buf_bytes);
            oob.put(0, {});
            oob.get(1);
            b_state = testbench::qp_state(b.qps[0]);
            reset(b.qps[0]);
            oob.put(0, {});
            oob.get(1);
            b.connect(peer);
            oob.put(0, {});
            oob.get(1);
            seen2 = testbench::mem_read(b.buf, ec.buf_bytes);
          }});
  EXPECT_EQ(first, IBV_WC_SUCCESS);
  EXPECT_EQ(seen1, d1);
  EXPECT_EQ(b_state, IBV_QPS_ERR) << "the peer took the Terminate";
  EXPECT_EQ(closes_after_error, 1u) << "FIN both ways";
  EXPECT_EQ(counter(stats, "node1.toe", "closes"), 1u);
  EXPECT_EQ(second, IBV_WC_SUCCESS);
  EXPECT_EQ(seen2, d2);
  EXPECT_EQ(counter(stats, "node0.toe", "connections"), 2u);
  EXPECT_EQ(counter(stats, "node1.toe", "connections"), 2u);
  EXPECT_EQ(counter(stats, "node0.toe", "failures") + counter(stats, "node1.toe", "failures"), 0u);
}

// A program connects an EFE card to an MPA/TCP card (ibv_modify_qp alone: nothing in the
// scenario shows it). tcp_host is the MPA/TCP card's host; with it on node0 (the lower MAC) its QP
// is the active side and sends a SYN at RTS: the EFE card fails its channel at that first IPv4
// frame, and its QP is in ERROR well before the EFE's retry budget (400 us) would have said so;
// the Terminate it then sends is an EFE frame, which fails the MPA/TCP card's QP in turn.
// With it on node1 (passive), the EFE card's first DATA frame (a Write) makes the MPA/TCP card
// fail its QP at once; the EFE card's Write completes IBV_WC_RETRY_EXC_ERR at its retry budget.
void mixed_cards(int tcp_host) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  Topology topo = two_hosts(cfg);
  topo.hosts[size_t(tcp_host)].cfg.set("card.transport", "mpa_tcp", "test");
  StatRegistry stats;
  Cluster cl(topo, cfg, stats);
  EndpointConfig ec;
  ec.buf_bytes = 65536;
  Oob oob;
  Endpoint a, b;
  ibv_wc wc{};
  ibv_qp_state a_state = IBV_QPS_RTS, b_state = IBV_QPS_RTS;
  ibv_async_event a_ev{}, b_ev{};
  uint64_t a_error_ns = 0, b_error_ns = 0, t0 = 0;
  cl.run({[&] {
            const PeerInfo peer = traffic::open_connected(a, 0, ec, oob);
            t0 = uint64_t(rnic_now_ns());
            oob.get(0);
            if (tcp_host == 1) {
              ibv_sge sge{a.addr(), 4096, a.mr->lkey};
              ibv_send_wr wr = testbench::rdma_write_wr(1, &sge, 1, peer.addr, peer.rkey, true);
              ibv_send_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
              wc = wait_one(a.cq, 10'000'000);
            }
            EXPECT_EQ(ibv_get_async_event(a.ctx, &a_ev), 0);
            a_error_ns = uint64_t(rnic_now_ns()) - t0;
            a_state = testbench::qp_state(a.qps[0]);
            oob.put(1, {});
          },
          [&] {
            traffic::open_connected(b, 1, ec, oob);
            oob.put(0, {});
            EXPECT_EQ(ibv_get_async_event(b.ctx, &b_ev), 0);
            b_error_ns = uint64_t(rnic_now_ns()) - t0;
            b_state = testbench::qp_state(b.qps[0]);
            oob.get(1);
          }});
  EXPECT_EQ(a_state, IBV_QPS_ERR);
  EXPECT_EQ(b_state, IBV_QPS_ERR);
  EXPECT_EQ(a_ev.event_type, IBV_EVENT_QP_FATAL);
  EXPECT_EQ(b_ev.event_type, IBV_EVENT_QP_FATAL);
  const std::string tcp = fmt::format("node{}", tcp_host),
                    efe = fmt::format("node{}", 1 - tcp_host);
  EXPECT_EQ(counter(stats, tcp + ".toe", "connections"), uint64_t(tcp_host == 0));
  EXPECT_EQ(counter(stats, tcp + ".toe", "failures"), 1u);
  if (tcp_host == 0) {
    EXPECT_EQ(counter(stats, efe + ".efe", "rx_other_transport"), 1u) << "the SYN";
    EXPECT_LT(b_error_ns, 50'000u) << "the EFE card's QP fails at the SYN, not at its budget";
    EXPECT_LT(a_error_ns, 50'000u)
        << "the EFE card's Terminate (an EFE frame) fails the MPA/TCP card's QP at once";
  } else {
    EXPECT_GE(counter(stats, tcp + ".toe", "rx_other_transport"), 1u) << "the Write's frames";
    EXPECT_LT(b_error_ns, 50'000u) << "the MPA/TCP card's QP fails at the first EFE frame";
    EXPECT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
  }
}

TEST(MixedCards, AnEfeCardFailsItsQpAtTheFirstFrameOfAnMpaTcpCard) { mixed_cards(0); }
TEST(MixedCards, AnMpaTcpCardFailsItsQpAtTheFirstFrameOfAnEfeCard) { mixed_cards(1); }

TEST(MpaTcp, ALinkCutForGoodFailsTheConnection) { cut_for_good(true); }
TEST(MpaTcp, ALinkCutDuringTheHandshakeFailsBothEnds) { cut_for_good(false); }

}  // namespace
}  // namespace rnic
