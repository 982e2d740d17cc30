// The EFE over a faulty link between two hosts (label fault; the full matrix, with more data per
// case, under fault-long): random loss, bit errors and a link down for less than the retry
// budget, for RDMA Write, RDMA Read and Send on one and on four QPs, with the EFE's selective
// resend (the default). Every case runs again with go-back-N (efe.resend: go_back_n, named
// gbn_...) and between cards of the MPA/TCP transport (named tcp_...), where TCP repairs the
// same faults.
// Scoreboard: each message has its own region and its own pattern, so every destination byte equal
// to the source's means each arrived exactly once and in place; the guard bytes between and around
// the regions are untouched; every completion succeeds. The link's and the EFE's counters show the
// faults happened and were recovered from. And beyond the budget: a link down longer than the retry
// budget allows fails the channel, the requester's QP completes its oldest WR with
// IBV_WC_RETRY_EXC_ERR and flushes the rest, and once the link is back a new QP to the same peer
// works.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

#ifndef EFE_FAULTS_LONG
#define EFE_FAULTS_LONG 0
#endif

namespace rnic {
namespace {

using testbench::counter;
using testbench::kGuard;
using testbench::pattern;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

enum class Op { kWrite, kRead, kSend };
const char* op_name(Op o) { return o == Op::kWrite ? "write" : o == Op::kRead ? "read" : "send"; }

struct Fault {
  const char* name;
  double loss = 0, ber = 0;
  uint64_t down_from_us = 0, down_to_us = 0;  // the link is down [from, to) after posting
  bool observed = false;  // enough frames are hit that the counters must show it
};

struct Case {
  Op op;
  int qps;
  Fault fault;
  bool tcp = false;      // card.transport: mpa_tcp (TCP repairs the faults) instead of the EFE
  bool go_back = false;  // the EFE with efe.resend: go_back_n (the default is selective)
};

constexpr uint64_t kEdge = 4096;  // guard bytes before the first region and after the last
constexpr uint64_t kGap = 64;     // guard bytes after each region
constexpr uint32_t kSize = 16384;
// Per case: kMsgs messages of kSize over all QPs (the long form moves 8 times as much, and
// also runs 16 QPs).
constexpr int kMsgs = EFE_FAULTS_LONG ? 256 : 32;

uint64_t region(int q, int m, int msgs) { return kEdge + uint64_t(q * msgs + m) * (kSize + kGap); }

std::vector<uint8_t> message(int q, int m) { return pattern(kSize, uint64_t(1 + q * 1000 + m)); }

// `buf` holds message (q, m) in each region, guard bytes everywhere else.
void expect_regions(const char* what, const void* buf, int qps, int msgs) {
  const uint64_t total = region(qps, 0, msgs) + kEdge;
  const std::vector<uint8_t> got = testbench::mem_read(buf, size_t(total));
  uint64_t at = 0;
  auto guards_until = [&](uint64_t end) {
    for (; at < end; ++at) ASSERT_EQ(got[at], kGuard) << what << ": guard byte at " << at;
  };
  for (int q = 0; q < qps; ++q)
    for (int m = 0; m < msgs; ++m) {
      guards_until(region(q, m, msgs));
      const std::vector<uint8_t> want = message(q, m);
      ASSERT_EQ(std::memcmp(got.data() + at, want.data(), kSize), 0)
          << what << ": QP " << q << " message " << m << " differs";
      at += kSize;
    }
  guards_until(total);
}

void run_case(const Case& c) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  if (c.tcp) cfg.set("card.transport", "mpa_tcp", "test");
  if (c.go_back) cfg.set("efe.resend", "go_back_n", "test");
  cfg.link.loss = c.fault.loss;
  cfg.link.ber = c.fault.ber;
  StatRegistry stats;
  Cluster cl(cfg, stats);
  const int msgs = kMsgs / c.qps;
  EndpointConfig ec;
  ec.qps = c.qps;
  ec.send_depth = ec.recv_depth = uint32_t(std::max(128, msgs + 1));
  ec.buf_bytes = size_t(region(c.qps, 0, msgs) + kEdge);
  Oob oob;
  Endpoint a, b;
  const uint64_t kWaitNs = 200'000'000;
  cl.run({[&] {
            a.open(ec);
            testbench::mem_fill(a.buf, ec.buf_bytes);
            if (c.op != Op::kRead)
              for (int q = 0; q < c.qps; ++q)
                for (int m = 0; m < msgs; ++m)
                  testbench::mem_write(a.buf, region(q, m, msgs), message(q, m));
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            oob.get(0);  // the responder is ready
            std::vector<ibv_sge> sges(size_t(c.qps * msgs));
            const uint64_t t0 = uint64_t(rnic_now_ns()) * 1000;
            if (c.fault.down_to_us)
              cl.link(0).add_down(t0 + c.fault.down_from_us * 1000000,
                                  t0 + c.fault.down_to_us * 1000000);
            for (int m = 0; m < msgs; ++m)
              for (int q = 0; q < c.qps; ++q) {
                ibv_sge& s = sges[size_t(q * msgs + m)];
                s = {a.addr() + region(q, m, msgs), kSize, a.mr->lkey};
                ibv_send_wr wr{};
                wr.wr_id = uint64_t(q * msgs + m);
                wr.sg_list = &s;
                wr.num_sge = 1;
                wr.send_flags = IBV_SEND_SIGNALED;
                wr.opcode = c.op == Op::kWrite  ? IBV_WR_RDMA_WRITE
                            : c.op == Op::kRead ? IBV_WR_RDMA_READ
                                                : IBV_WR_SEND;
                wr.wr.rdma.remote_addr = peer.addr + region(q, m, msgs);
                wr.wr.rdma.rkey = peer.rkey;
                ibv_send_wr* bad = nullptr;
                ASSERT_EQ(ibv_post_send(a.qps[size_t(q)], &wr, &bad), 0);
              }
            for (const ibv_wc& wc :
                 testbench::wait_completions(a.cq, size_t(c.qps * msgs), kWaitNs))
              EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "WR " << wc.wr_id;
            if (c.op == Op::kRead) expect_regions("requester", a.buf, c.qps, msgs);
            if (c.op == Op::kWrite) {
              // A Send behind the Writes: the responder checks once it has arrived (placed
              // after them).
              ibv_send_wr wr{};
              wr.opcode = IBV_WR_SEND;
              wr.send_flags = IBV_SEND_SIGNALED;
              ibv_send_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
              EXPECT_EQ(testbench::wait_one(a.cq, kWaitNs).status, IBV_WC_SUCCESS);
            }
          },
          [&] {
            b.open(ec);
            testbench::mem_fill(b.buf, ec.buf_bytes);
            if (c.op == Op::kRead)
              for (int q = 0; q < c.qps; ++q)
                for (int m = 0; m < msgs; ++m)
                  testbench::mem_write(b.buf, region(q, m, msgs), message(q, m));
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            std::vector<ibv_sge> sges(size_t(c.qps * msgs));
            const int recvs = c.op == Op::kSend ? msgs : c.op == Op::kWrite ? 1 : 0;
            for (int q = 0; q < c.qps; ++q)
              for (int m = 0; m < recvs; ++m) {
                ibv_sge& s = sges[size_t(q * msgs + m)];
                s = {b.addr() + region(q, m, msgs), c.op == Op::kSend ? kSize : 0, b.mr->lkey};
                ibv_recv_wr r{};
                r.wr_id = uint64_t(q * msgs + m);
                r.sg_list = &s;
                r.num_sge = 1;
                ibv_recv_wr* bad = nullptr;
                ASSERT_EQ(ibv_post_recv(b.qps[size_t(q)], &r, &bad), 0);
              }
            oob.put(0, {});
            if (c.op == Op::kSend) {
              for (const ibv_wc& wc :
                   testbench::wait_completions(b.cq, size_t(c.qps * msgs), kWaitNs)) {
                EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "receive " << wc.wr_id;
                EXPECT_EQ(wc.byte_len, kSize) << "receive " << wc.wr_id;
              }
            } else if (c.op == Op::kWrite) {
              // The receive on QP 0 (region (0, 0)) was posted with no room: a zero-length Send.
              const ibv_wc wc = testbench::wait_one(b.cq, kWaitNs);
              EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
              EXPECT_EQ(wc.byte_len, 0u);
            }
            if (c.op != Op::kRead) expect_regions("responder", b.buf, c.qps, msgs);
          }});
  const uint64_t lost_down = counter(stats, "eth0", "lost_down");
  const uint64_t lost = counter(stats, "eth0", "lost_random");
  const uint64_t corrupted = counter(stats, "eth0", "corrupted");
  uint64_t retx = 0, timeouts = 0, failures = 0;
  if (c.tcp) {
    for (const char* n : {"node0.toe", "node1.toe"}) {
      retx += counter(stats, n, "retransmissions");
      failures += counter(stats, n, "failures");
    }
    EXPECT_EQ(counter(stats, "node0.toe", "connections"), uint64_t(c.qps)) << "one per QP";
  } else {
    for (const char* n : {"node0.efe", "node1.efe"}) {
      retx += counter(stats, n, "retransmissions");
      failures += counter(stats, n, "channel_failures");
    }
    for (const char* g : {"node0.efe.peer_020000000002", "node1.efe.peer_020000000001"})
      timeouts += counter(stats, g, "timeouts");
  }
  fmt::print("{} {} x{} {}: lost {} down {} corrupted {}, retransmitted {}, timeouts {}\n",
             c.tcp       ? "mpa_tcp"
             : c.go_back ? "efe go_back_n"
                         : "efe",
             op_name(c.op), c.qps, c.fault.name, lost, lost_down, corrupted, retx, timeouts);
  EXPECT_EQ(failures, 0u) << "no channel or connection fails inside the retry budget";
  EXPECT_EQ(
      counter(stats, "node1.mac", "rx_fcs_errors") + counter(stats, "node0.mac", "rx_fcs_errors"),
      corrupted)
      << "every corrupted frame is dropped by the receiving MAC";
  if (c.fault.loss == 0) {
    EXPECT_EQ(lost, 0u);
  }
  if (c.fault.ber == 0) {
    EXPECT_EQ(corrupted, 0u);
  }
  if (!c.fault.observed) return;
  if (c.fault.loss > 0) {
    EXPECT_GT(lost, 0u);
  }
  if (c.fault.ber > 0) {
    EXPECT_GT(corrupted, 0u);
  }
  if (c.fault.down_to_us) {
    EXPECT_GT(lost_down, 0u);
  }
  EXPECT_GT(retx, 0u);
}

#if !EFE_FAULTS_LONG
// n Writes of `msg` bytes from a's buffer to the peer's, message i at offset i x msg, wr_id i.
void post_writes(Endpoint& a, const PeerInfo& peer, int n, uint32_t msg) {
  for (int i = 0; i < n; ++i) {
    ibv_sge sge{a.addr() + uint64_t(i) * msg, msg, a.mr->lkey};
    ibv_send_wr w =
        testbench::rdma_write_wr(uint64_t(i), &sge, 1, peer.addr + uint64_t(i) * msg, peer.rkey);
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
  }
}

// The link goes down at 200 us for 1.9 ms, longer than the retry budget (the EFE's channel
// fails efe.retry_budget_ns, 1 ms, after its first resend: about 1.04 ms after the cut; on
// MPA/TCP tcp.retry_budget_ms set to 1, which with tcp.rto_min_us 200 and its doubling fails the
// connection about 1.4 ms after the cut), while 8 Writes of 64 KiB (0.45 ms at 10 Gb/s) are
// under way: the Writes acknowledged before it succeed, the oldest outstanding one completes
// IBV_WC_RETRY_EXC_ERR and the rest IBV_WC_WR_FLUSH_ERR, in order; the QP is in ERROR with a QP
// fatal event. After the link is back, new QPs between the same hosts work: the EFE's channel is
// re-established (SY), or the new QP's own TCP connection is made.
// On the EFE the peer learns of it too: the re-established channel's first frame (SY, sent at
// the failure and resent, backed off, until the link is back) fails its QP, which was
// connected before the link went down (a QP fatal event, its posted receive flushed), and not
// the new one. No segment of the failed Writes crosses the new channel: the peer's buffer does
// not change after the requester saw its Writes fail.
void link_down_beyond_the_budget(bool tcp) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  if (tcp) {
    cfg.set("card.transport", "mpa_tcp", "test");
    cfg.set("tcp.retry_budget_ms", "1", "test");
  }
  Topology topo = two_hosts(cfg);
  topo.links[0].params.down_ps = {{200'000'000, 2'100'000'000}};
  StatRegistry stats;
  Cluster cl(topo, cfg, stats);
  constexpr uint32_t kMsg = 65536;
  constexpr int kWrites = 8;
  EndpointConfig ec;
  ec.buf_bytes = kMsg * kWrites;
  Oob oob;
  Endpoint a, b, a2, b2;
  std::vector<ibv_wc> wcs;
  ibv_qp_state state = IBV_QPS_RTS;
  ibv_async_event ev{};
  cl.run({[&] {
            a.open(ec);
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            oob.get(0);
            post_writes(a, peer, kWrites, kMsg);
            wcs = testbench::wait_completions(a.cq, kWrites, 5'000'000);
            oob.put(5, {});  // the peer's buffer as it is now must not change
            state = testbench::qp_state(a.qps[0]);
            EXPECT_EQ(ibv_get_async_event(a.ctx, &ev), 0);
            // After the link is back: a new pair of QPs.
            rnic_spend_ns(2'200'000 - uint64_t(rnic_now_ns()));
            a2.open(ec);
            oob.put(3, a2.info());
            const PeerInfo peer2 = oob.get(2);
            a2.connect(peer2);
            oob.get(2);
            ibv_sge s{a2.addr(), kMsg, a2.mr->lkey};
            ibv_send_wr w = testbench::rdma_write_wr(9, &s, 1, peer2.addr, peer2.rkey);
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a2.qps[0], &w, &bad), 0);
            EXPECT_EQ(testbench::wait_one(a2.cq, 5'000'000).status, IBV_WC_SUCCESS)
                << "a new QP works once the link is back";
          },
          [&] {
            b.open(ec);
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            ibv_sge rs{b.addr(), 64, b.mr->lkey};
            ASSERT_EQ(testbench::post_recv(b.qps[0], &rs, 77), 0);
            oob.put(0, {});
            oob.get(5);
            const std::vector<uint8_t> at_failure = testbench::mem_read(b.buf, ec.buf_bytes);
            const PeerInfo peer2 = oob.get(3);
            b2.open(ec);
            oob.put(2, b2.info());
            b2.connect(peer2);
            oob.put(2, {});
            if (tcp) return;  // (the peer's connection stays: TCP has no word for it)
            ibv_async_event bev{};
            ASSERT_EQ(ibv_get_async_event(b.ctx, &bev), 0);
            EXPECT_EQ(bev.event_type, IBV_EVENT_QP_FATAL) << "the peer's QP learns of it";
            EXPECT_EQ(bev.element.qp, b.qps[0]) << "the old QP, not the new one";
            const ibv_wc rwc = testbench::wait_one(b.cq, 5'000'000);
            EXPECT_EQ(rwc.wr_id, 77u);
            EXPECT_EQ(rwc.status, IBV_WC_WR_FLUSH_ERR) << "its posted receive is flushed";
            EXPECT_EQ(testbench::qp_state(b.qps[0]), IBV_QPS_ERR);
            rnic_spend_ns(3'000'000 - uint64_t(rnic_now_ns()));
            EXPECT_EQ(testbench::qp_state(b2.qps[0]), IBV_QPS_RTS) << "the new QP lives";
            EXPECT_TRUE(testbench::mem_read(b.buf, ec.buf_bytes) == at_failure)
                << "no segment of the failed Writes was placed after they failed";
          }});
  ASSERT_EQ(wcs.size(), size_t(kWrites));
  size_t ok = 0;
  while (ok < wcs.size() && wcs[ok].status == IBV_WC_SUCCESS) ++ok;
  EXPECT_GT(ok, 0u) << "the Writes before the link went down succeed";
  ASSERT_LT(ok, wcs.size());
  EXPECT_EQ(wcs[ok].status, IBV_WC_RETRY_EXC_ERR) << "the oldest outstanding WR";
  for (size_t i = ok + 1; i < wcs.size(); ++i)
    EXPECT_EQ(wcs[i].status, IBV_WC_WR_FLUSH_ERR) << "WR " << wcs[i].wr_id;
  for (size_t i = 0; i < wcs.size(); ++i) EXPECT_EQ(wcs[i].wr_id, i) << "in order";
  EXPECT_EQ(state, IBV_QPS_ERR);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
  if (tcp) {
    // The first QP's connection failed (the peer's own stays established: it had nothing to
    // send); the new QPs made a second one.
    EXPECT_EQ(counter(stats, "node0.toe", "failures"), 1u);
    EXPECT_EQ(counter(stats, "node0.toe", "connections"), 2u);
    return;
  }
  // Once: the new channel's announcement (SY) and the QP's close waited out the link.
  EXPECT_EQ(counter(stats, "node0.efe", "channel_failures"), 1u);
  // What crossed the new channel for B's old QP: the close behind the announcement, dropped
  // there (the QP is in ERROR by then); no segment of the failed Writes.
  EXPECT_EQ(counter(stats, "node1.core", "rx_dropped"), 1u);
  EXPECT_EQ(counter(stats, "node1.efe.peer_020000000001", "resyncs"), 1u)
      << "the peer took the new channel's first frame (SY)";
}
TEST(EfeChannel, ALinkDownBeyondTheRetryBudgetFailsThePeersQpsAndTheChannelComesBack) {
  link_down_beyond_the_budget(false);
}
TEST(TcpConnection, ALinkDownBeyondTheRetryBudgetFailsTheQpAndANewConnectionWorksOnceItIsBack) {
  link_down_beyond_the_budget(true);
}

// Three hosts behind a switch; h2's link goes down for 3 ms (beyond the retry budget; on
// MPA/TCP tcp.retry_budget_ms 1) while h0 writes to h1 and to h2 on one QP each: only the QP to
// h2 fails (its oldest WR IBV_WC_RETRY_EXC_ERR, the rest flushed); every Write to h1 succeeds
// and lands.
void a_failure_leaves_other_peers_alone(bool tcp) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  if (tcp) {
    cfg.set("card.transport", "mpa_tcp", "test");
    cfg.set("tcp.retry_budget_ms", "1", "test");
  }
  const Topology topo = leaf_spine(cfg, 3, 3, 1);  // h0, h1, h2 behind leaf0
  StatRegistry stats;
  Cluster cl(topo, cfg, stats);
  constexpr uint32_t kMsg = 65536;
  constexpr int kWrites = 8;
  EndpointConfig ec;
  ec.buf_bytes = kMsg * kWrites;
  Oob oob;
  Endpoint a1, a2, b1, b2;
  std::vector<ibv_wc> to_h1, to_h2;
  const std::vector<uint8_t> data = pattern(ec.buf_bytes, 3);
  cl.run({{0,
           [&] {
             a1.open(ec);
             a2.open(ec);
             testbench::mem_write(a1.buf, 0, data);
             oob.put(1, a1.info());
             oob.put(3, a2.info());
             const PeerInfo p1 = oob.get(0), p2 = oob.get(2);
             a1.connect(p1);
             a2.connect(p2);
             oob.get(0);
             oob.get(2);
             const uint64_t t0 = uint64_t(rnic_now_ns()) * 1000;
             cl.link(2).add_down(t0 + 20'000'000, t0 + 3'020'000'000);
             std::vector<ibv_sge> s1(kWrites), s2(kWrites);
             for (int i = 0; i < kWrites; ++i) {
               ibv_send_wr* bad = nullptr;
               s1[size_t(i)] = {a1.addr() + uint64_t(i) * kMsg, kMsg, a1.mr->lkey};
               ibv_send_wr w1 = testbench::rdma_write_wr(uint64_t(i), &s1[size_t(i)], 1,
                                                         p1.addr + uint64_t(i) * kMsg, p1.rkey);
               ASSERT_EQ(ibv_post_send(a1.qps[0], &w1, &bad), 0);
               s2[size_t(i)] = {a2.addr() + uint64_t(i) * kMsg, kMsg, a2.mr->lkey};
               ibv_send_wr w2 = testbench::rdma_write_wr(uint64_t(i), &s2[size_t(i)], 1,
                                                         p2.addr + uint64_t(i) * kMsg, p2.rkey);
               ASSERT_EQ(ibv_post_send(a2.qps[0], &w2, &bad), 0);
             }
             to_h1 = testbench::wait_completions(a1.cq, kWrites, 10'000'000);
             to_h2 = testbench::wait_completions(a2.cq, kWrites, 10'000'000);
             oob.put(4, {});  // h1 checks its memory now: the Writes to it completed
           }},
          {1,
           [&] {
             b1.open(ec);
             testbench::mem_fill(b1.buf, ec.buf_bytes);
             const PeerInfo p = oob.get(1);
             oob.put(0, b1.info());
             b1.connect(p);
             oob.put(0, {});
             oob.get(4);
             rnic_spend_ns(10000);  // the last placement lands
             testbench::expect_bytes("h1", b1.buf, data);
           }},
          {2, [&] {
             b2.open(ec);
             const PeerInfo p = oob.get(3);
             oob.put(2, b2.info());
             b2.connect(p);
             oob.put(2, {});
             if (tcp) return;
             ibv_async_event ev{};
             ASSERT_EQ(ibv_get_async_event(b2.ctx, &ev), 0);
             EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL) << "h2 hears of it when its link is back";
             EXPECT_GE(rnic_now_ns(), 3'020'000) << "not before";
           }}});
  ASSERT_EQ(to_h1.size(), size_t(kWrites));
  for (const ibv_wc& wc : to_h1) EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "to h1, WR " << wc.wr_id;
  ASSERT_EQ(to_h2.size(), size_t(kWrites));
  size_t ok = 0;
  while (ok < to_h2.size() && to_h2[ok].status == IBV_WC_SUCCESS) ++ok;
  ASSERT_LT(ok, to_h2.size());
  EXPECT_EQ(to_h2[ok].status, IBV_WC_RETRY_EXC_ERR);
  for (size_t i = ok + 1; i < to_h2.size(); ++i)
    EXPECT_EQ(to_h2[i].status, IBV_WC_WR_FLUSH_ERR) << "to h2, WR " << to_h2[i].wr_id;
  if (tcp) {
    EXPECT_EQ(counter(stats, "h0.toe", "failures"), 1u) << "the connection to h2 alone";
    EXPECT_EQ(counter(stats, "h0.toe.peer_020000000002", "retransmissions"), 0u);
    return;
  }
  // Once (the announcement waits out the link, backed off), and never towards h1.
  EXPECT_EQ(counter(stats, "h0.efe.peer_020000000003", "failures"), 1u);
  EXPECT_EQ(counter(stats, "h0.efe.peer_020000000002", "failures"), 0u);
}
TEST(EfeChannel, AFailedChannelLeavesOtherPeersAlone) { a_failure_leaves_other_peers_alone(false); }

// Two hosts whose link is cut for good at 200 us, with `keepalive_ns` (0: off): A's endpoint
// writes kWrites x kMsg to B's, under way at the cut; each endpoint has room for one message more
// (a posted receive's).
struct CutForGood {
  static constexpr uint32_t kMsg = 65536;
  static constexpr int kWrites = 8;
  explicit CutForGood(const char* keepalive_ns)
      : cfg(config(keepalive_ns)), topo(cut(two_hosts(cfg))), cl(topo, cfg, stats) {
    ec.buf_bytes = kMsg * (kWrites + 1);
  }
  static SystemConfig config(const char* keepalive_ns) {
    SystemConfig c = preset_config("rnic-10g", "test");
    c.set("efe.keepalive_ns", keepalive_ns, "test");
    return c;
  }
  static Topology cut(Topology t) {
    t.links[0].params.down_ps = {{200'000'000, UINT64_MAX}};
    return t;
  }
  // A's side: connected to B (oob boxes 0 and 1); B's peer info.
  PeerInfo connect_a() { return traffic::open_connected(a, 0, ec, oob); }
  // B's side: connected to A, a receive posted (wr_id 100), and A told it is ready.
  void connect_b() {
    traffic::open_connected(b, 1, ec, oob);
    ibv_sge rs{b.addr() + kMsg * kWrites, kMsg, b.mr->lkey};
    ASSERT_EQ(testbench::post_recv(b.qps[0], &rs, 100), 0);
    oob.put(0, {});
  }
  SystemConfig cfg;
  Topology topo;
  StatRegistry stats;
  Cluster cl;
  EndpointConfig ec;
  Oob oob;
  Endpoint a, b;
};

// The link is cut for good at 200 us. A writes to B (8 x 64 KiB, under way at the cut); B sends
// to A after the cut. Each side's channel fails by its own timer (its retry budget), and both
// QPs end in ERROR: A's oldest Write IBV_WC_RETRY_EXC_ERR, the rest flushed; B's Send
// IBV_WC_RETRY_EXC_ERR; each side's posted receive flushed. Each failed channel's announcement
// (SY) is resent for efe.resync_budget_ns and given up (a second failure each), so the run ends;
// nothing crossed (no resync).
TEST(EfeChannel, ALinkCutForGoodFailsBothSidesAndTheRunEnds) {
  CutForGood c("0");
  constexpr uint32_t kMsg = CutForGood::kMsg;
  constexpr int kWrites = CutForGood::kWrites;
  std::vector<ibv_wc> a_wcs, b_wcs;
  ibv_qp_state a_state = IBV_QPS_RTS, b_state = IBV_QPS_RTS;
  c.cl.run({[&] {
              const PeerInfo peer = c.connect_a();
              ibv_sge rs{c.a.addr() + kMsg * kWrites, kMsg, c.a.mr->lkey};
              ASSERT_EQ(testbench::post_recv(c.a.qps[0], &rs, 100), 0);
              c.oob.get(0);
              post_writes(c.a, peer, kWrites, kMsg);
              a_wcs = testbench::wait_completions(c.a.cq, kWrites + 1, 50'000'000);
              a_state = testbench::qp_state(c.a.qps[0]);
            },
            [&] {
              c.connect_b();
              rnic_spend_ns(300'000 - uint64_t(rnic_now_ns()));
              ibv_sge s{c.b.addr(), 1024, c.b.mr->lkey};
              ASSERT_EQ(testbench::post_send(c.b.qps[0], &s, 50), 0);
              b_wcs = testbench::wait_completions(c.b.cq, 2, 50'000'000);
              b_state = testbench::qp_state(c.b.qps[0]);
            }});
  ASSERT_EQ(a_wcs.size(), size_t(kWrites + 1));
  size_t ok = 0, retry = 0, flushed = 0, recv_flushed = 0;
  for (const ibv_wc& wc : a_wcs) {
    if (wc.wr_id == 100) {
      recv_flushed += wc.status == IBV_WC_WR_FLUSH_ERR;
      continue;
    }
    ok += wc.status == IBV_WC_SUCCESS;
    retry += wc.status == IBV_WC_RETRY_EXC_ERR;
    flushed += wc.status == IBV_WC_WR_FLUSH_ERR;
  }
  EXPECT_EQ(retry, 1u);
  EXPECT_EQ(ok + retry + flushed, size_t(kWrites));
  EXPECT_EQ(recv_flushed, 1u) << "A's posted receive";
  EXPECT_EQ(a_state, IBV_QPS_ERR);
  ASSERT_EQ(b_wcs.size(), 2u);
  for (const ibv_wc& wc : b_wcs) {
    if (wc.wr_id == 50)
      EXPECT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR) << "B's Send, by B's own timer";
    else
      EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR) << "B's posted receive";
  }
  EXPECT_EQ(b_state, IBV_QPS_ERR);
  for (const char* n : {"node0.efe", "node1.efe"})
    EXPECT_EQ(counter(c.stats, n, "channel_failures"), 2u) << n << ": its data, its announcement";
  EXPECT_EQ(counter(c.stats, "node0.efe.peer_020000000002", "resyncs"), 0u);
  EXPECT_EQ(counter(c.stats, "node1.efe.peer_020000000001", "resyncs"), 0u);
}

// The link is cut for good at 200 us while A writes to B (8 x 64 KiB); B only waits for its
// posted receive and sends nothing. Without a keepalive B would wait for ever (its QP in RTS,
// nothing left to happen). With efe.keepalive_ns 100 us B's channel, idle and hearing nothing,
// probes A; the probe is resent until the retry budget (1 ms) is spent, the channel fails, and
// B's QP ends in ERROR with its receive flushed. The run then ends.
TEST(EfeChannel, AKeepaliveTellsAnIdlePeerThatTheLinkIsCutForGood) {
  CutForGood c("100000");
  std::vector<ibv_wc> a_wcs, b_wcs;
  ibv_qp_state b_state = IBV_QPS_RTS;
  uint64_t b_learnt_ns = 0;
  c.cl.run({[&] {
              const PeerInfo peer = c.connect_a();
              c.oob.get(0);
              post_writes(c.a, peer, CutForGood::kWrites, CutForGood::kMsg);
              a_wcs = testbench::wait_completions(c.a.cq, CutForGood::kWrites, 50'000'000);
            },
            [&] {
              c.connect_b();
              b_wcs = testbench::wait_completions(c.b.cq, 1, 50'000'000);
              b_learnt_ns = uint64_t(rnic_now_ns());
              b_state = testbench::qp_state(c.b.qps[0]);
            }});
  ASSERT_EQ(a_wcs.size(), size_t(CutForGood::kWrites));
  ASSERT_EQ(b_wcs.size(), 1u);
  EXPECT_EQ(b_wcs[0].wr_id, 100u);
  EXPECT_EQ(b_wcs[0].status, IBV_WC_WR_FLUSH_ERR) << "B's posted receive";
  EXPECT_EQ(b_state, IBV_QPS_ERR);
  // The last frame from A came before 200 us; the probe 100 us later; the budget 1 ms after the
  // probe's first resend.
  EXPECT_GT(b_learnt_ns, 1'300'000u);
  EXPECT_LT(b_learnt_ns, 2'000'000u);
  EXPECT_EQ(counter(c.stats, "node1.efe", "keepalives"), 1u);
  EXPECT_GE(counter(c.stats, "node1.efe", "retransmissions"), 2u) << "the probe's resends";
  EXPECT_EQ(counter(c.stats, "node0.efe", "rx_keepalives"), 0u) << "none got through";
  EXPECT_GE(counter(c.stats, "node1.efe.peer_020000000001", "failures"), 1u);
}

// Probes a peer answers change nothing and do not keep a run going: A writes 4 x 64 KiB to B,
// then both stay idle 300 us with efe.keepalive_ns 20 us; every probe is acknowledged, nothing
// fails, the data lands, and the run ends within a probe's round trip of the programs' end.
TEST(EfeChannel, AnsweredKeepalivesChangeNothingAndTheRunEnds) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.set("efe.keepalive_ns", "20000", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  constexpr uint32_t kMsg = 65536;
  constexpr int kWrites = 4;
  EndpointConfig ec;
  ec.buf_bytes = kMsg * kWrites;
  Oob oob;
  Endpoint a, b;
  std::vector<ibv_wc> a_wcs;
  const std::vector<uint8_t> data = pattern(ec.buf_bytes, 7);
  uint64_t end_ns = 0;
  cl.run({[&] {
            const PeerInfo peer = traffic::open_connected(a, 0, ec, oob);
            testbench::mem_write(a.buf, 0, data);
            oob.get(0);
            post_writes(a, peer, kWrites, kMsg);
            a_wcs = testbench::wait_completions(a.cq, kWrites, 50'000'000);
            oob.put(1, {});
            rnic_spend_ns(300'000);
            end_ns = std::max(end_ns, uint64_t(rnic_now_ns()));
          },
          [&] {
            traffic::open_connected(b, 1, ec, oob);
            testbench::mem_fill(b.buf, ec.buf_bytes);
            oob.put(0, {});
            oob.get(1);
            rnic_spend_ns(300'000);
            testbench::expect_bytes("B", b.buf, data);
            end_ns = std::max(end_ns, uint64_t(rnic_now_ns()));
          }});
  ASSERT_EQ(a_wcs.size(), size_t(kWrites));
  for (const ibv_wc& wc : a_wcs) EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  const uint64_t sent_a = counter(stats, "node0.efe", "keepalives"),
                 sent_b = counter(stats, "node1.efe", "keepalives");
  // 300 us idle: a probe every 20 us and its round trip, from each side (the other's probe is
  // heard, which puts off one's own).
  EXPECT_GE(sent_a + sent_b, 10u);
  EXPECT_EQ(counter(stats, "node1.efe", "rx_keepalives"), sent_a);
  EXPECT_EQ(counter(stats, "node0.efe", "rx_keepalives"), sent_b);
  EXPECT_EQ(counter(stats, "node0.efe", "channel_failures"), 0u);
  EXPECT_EQ(counter(stats, "node1.efe", "channel_failures"), 0u);
  EXPECT_EQ(counter(stats, "node0.efe", "retransmissions"), 0u);
  EXPECT_LT(now_ps(), end_ns * 1000 + 20'000'000) << "the probes did not keep the run going";
}

TEST(TcpConnection, AFailedConnectionLeavesOtherPeersAlone) {
  a_failure_leaves_other_peers_alone(true);
}
#endif

class EfeFaults : public testing::TestWithParam<Case> {};

TEST_P(EfeFaults, EveryByteArrivesOnceAndEveryCompletionSucceeds) { run_case(GetParam()); }

std::vector<Case> cases() {
  const bool l = EFE_FAULTS_LONG;
  const std::vector<Fault> faults = {
      {"loss_0.1pct", 0.001, 0, 0, 0, false}, {"loss_1pct", 0.01, 0, 0, 0, l},
      {"loss_5pct", 0.05, 0, 0, 0, true},     {"ber_1e-7", 0, 1e-7, 0, 0, false},
      {"ber_1e-6", 0, 1e-6, 0, 0, l},         {"ber_1e-5", 0, 1e-5, 0, 0, true},
      {"down_100us", 0, 0, 20, 120, true},
  };
  std::vector<Case> v;
  for (Op op : {Op::kWrite, Op::kRead, Op::kSend})
    for (int qps : EFE_FAULTS_LONG ? std::vector<int>{1, 4, 16} : std::vector<int>{1, 4})
      for (const Fault& f : faults)
        for (int t : {0, 1, 2}) v.push_back({op, qps, f, t == 1, t == 2});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Matrix, EfeFaults, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& i) {
                           std::string n =
                               fmt::format("{}{}_{}qp_{}",
                                           i.param.tcp       ? "tcp_"
                                           : i.param.go_back ? "gbn_"
                                                             : "",
                                           op_name(i.param.op), i.param.qps, i.param.fault.name);
                           for (char& ch : n)
                             if (ch == '.' || ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace rnic
