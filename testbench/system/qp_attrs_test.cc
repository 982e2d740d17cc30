// QP attributes as rdma-core programs set them (docs/verbs.md): the requester's Read Response
// timer (timeout x (retry_cnt + 1)) fails a Read nobody answers with IBV_WC_RETRY_EXC_ERR and
// never fires while responses flow; the attributes with no iWARP meaning are accepted; every
// attribute or value the card cannot honour is refused with EINVAL and the QP left as it was.
#include <gtest/gtest.h>

#include "models/host/verbs/qp_state.h"
#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::qp_state;
using testbench::rdma_write_wr;
using testbench::wait_completions;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

// 4.096 us x 2^timeout x (retry_cnt + 1), the IB encoding.
TEST(QpAttrs, ReadTimeoutEncoding) {
  EXPECT_EQ(read_timeout_ns(0, 7), 0u) << "timeout 0: no timer";
  EXPECT_EQ(read_timeout_ns(1, 0), 8192u);
  EXPECT_EQ(read_timeout_ns(10, 2), 4096u * 1024 * 3);
  EXPECT_EQ(read_timeout_ns(14, 7), 4096ull * 16384 * 8);
  EXPECT_EQ(read_timeout_ns(31, 7), 4096ull * (1ull << 31) * 8);
  EXPECT_EQ(path_mtu_bytes(IBV_MTU_256), 256u);
  EXPECT_EQ(path_mtu_bytes(IBV_MTU_4096), 4096u);
}

class ReadTimer : public ::testing::Test {
 protected:
  // Node 0 reads kLen bytes from node 1 with the given timer; returns the Read's completion and
  // the simulated ns from posting it to its completion (a Write posted behind it completes too).
  void read(uint8_t timeout, uint8_t retry_cnt, size_t len) {
    Cluster cl(cfg, stats);
    Oob oob;
    Endpoint a, b;
    EndpointConfig ec;
    ec.timeout = timeout;
    ec.retry_cnt = retry_cnt;
    cl.run({[&] {
              a.open(ec);
              oob.put(1, a.info());
              const PeerInfo peer = oob.get(0);
              a.connect(peer);
              ibv_sge s{a.addr(), uint32_t(len), a.mr->lkey};
              ibv_sge w{a.addr(), 64, a.mr->lkey};
              ibv_send_wr wr[2] = {rdma_write_wr(1, &s, 1, peer.addr, peer.rkey, true),
                                   rdma_write_wr(2, &w, 1, peer.addr, peer.rkey, true)};
              wr[0].opcode = IBV_WR_RDMA_READ;
              wr[0].next = &wr[1];
              ibv_send_wr* bad = nullptr;
              const uint64_t t0 = rnic_now_ns();
              ASSERT_EQ(ibv_post_send(a.qps[0], wr, &bad), 0);
              const std::vector<ibv_wc> wcs = wait_completions(a.cq, 2, 100'000'000);
              ASSERT_EQ(wcs.size(), 2u);
              elapsed_ns = rnic_now_ns() - t0;
              wc_read = wcs[0];
              wc_write = wcs[1];
              a_state = qp_state(a.qps[0]);
              oob.put(1, {});
            },
            [&] {
              b.open(ec);
              const PeerInfo peer = oob.get(1);
              oob.put(0, b.info());
              b.connect(peer);
              oob.get(1);
              for (int i = 0; i < 100 && qp_state(b.qps[0]) == IBV_QPS_RTS; ++i)
                rnic_spend_ns(1000);
              b_state = qp_state(b.qps[0]);
            }});
  }
  uint64_t counter(const char* node, const char* name) {
    return stats.group(std::string(node) + ".core").counter(name, "", "").value;
  }
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  ibv_wc wc_read{}, wc_write{};
  uint64_t elapsed_ns = 0;
  ibv_qp_state a_state = IBV_QPS_RESET, b_state = IBV_QPS_RESET;
};

// The responder drops every Read Request (core.fault_drop_read_requests): after timeout 10 and
// retry_cnt 2 (12.58 ms) the Read completes IBV_WC_RETRY_EXC_ERR, the Write behind it flushes,
// the requester's QP goes to ERROR and its peer's follows (the stream is closed). The Read is
// never issued again.
TEST_F(ReadTimer, AReadNobodyAnswersCompletesRetryExceeded) {
  cfg.core.fault_drop_read_requests = 1;
  read(10, 2, 4096);
  const uint64_t t = read_timeout_ns(10, 2);
  EXPECT_EQ(wc_read.wr_id, 1u);
  EXPECT_EQ(wc_read.status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(wc_read.status);
  EXPECT_EQ(wc_write.wr_id, 2u);
  EXPECT_EQ(wc_write.status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wc_write.status);
  EXPECT_GE(elapsed_ns, t) << "before the timer ran out";
  EXPECT_LT(elapsed_ns, t + 20'000) << "well after the timer ran out";
  EXPECT_EQ(a_state, IBV_QPS_ERR);
  EXPECT_EQ(b_state, IBV_QPS_ERR) << "the peer was not told";
  EXPECT_EQ(counter("node0", "read_timeouts"), 1u);
  EXPECT_EQ(counter("node1", "rx_reads_dropped"), 1u) << "the Read Request was issued again";
}

// Without the fault the same timer never fires, and a Read far longer than it (1 MiB, about
// 0.9 ms, against timeout 1, retry_cnt 0: 8.2 us) completes, as each Read Response segment
// restarts it.
TEST_F(ReadTimer, ResponsesKeepTheTimerFromFiring) {
  // At a slow start's first rate (1/16 of line rate) a full segment leaves every 19.7 us, more
  // than the timer: this Read's responses start at line rate.
  cfg.efe.cc_start_fraction = 1;
  read(1, 0, 1 << 20);
  EXPECT_EQ(wc_read.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc_read.status);
  EXPECT_EQ(wc_write.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc_write.status);
  EXPECT_GT(elapsed_ns, 800'000u);
  EXPECT_EQ(counter("node0", "read_timeouts"), 0u);
  EXPECT_EQ(a_state, IBV_QPS_RTS);
}

// Timeout 0 (the default): no timer; the unanswered Read stays outstanding.
TEST_F(ReadTimer, TimeoutZeroMeansNoTimer) {
  cfg.core.fault_drop_read_requests = 1;
  cfg.sim.watchdog_us = 100000;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  EndpointConfig ec;
  ec.timeout = 0;
  cl.run({[&] {
            a.open(ec);
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            ibv_sge s{a.addr(), 4096, a.mr->lkey};
            ibv_send_wr wr = rdma_write_wr(1, &s, 1, peer.addr, peer.rkey, true);
            wr.opcode = IBV_WR_RDMA_READ;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            rnic_spend_ns(50'000'000);  // far past any timer the attributes could give
            ibv_wc wc{};
            EXPECT_EQ(ibv_poll_cq(a.cq, 1, &wc), 0) << "the Read completed";
            EXPECT_EQ(qp_state(a.qps[0]), IBV_QPS_RTS);
          },
          [&] {
            b.open(ec);
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
          }});
  EXPECT_EQ(counter("node0", "read_timeouts"), 0u);
}

// One QP in INIT, moved towards RTR/RTS with one attribute or value the card cannot honour at a
// time: each refused with EINVAL (and a log line naming the field), the QP still in INIT; the
// attributes with no iWARP meaning that rc_pingpong sets are accepted.
class RefusedAttrs : public ::testing::Test {
 protected:
  // Runs f(qp) with a QP in INIT whose peer is a second QP of the same context.
  void with_qp(const std::function<void(ibv_qp*, uint32_t peer_qpn, const ibv_gid&)>& f) {
    SystemConfig cfg = preset_config("rnic-10g", "test");
    StatRegistry stats;
    Cluster cl(cfg, stats);
    cl.run({[&] {
      Endpoint e;
      EndpointConfig ec;
      ec.qps = 2;
      e.open(ec);
      ibv_qp_attr a{};
      a.qp_state = IBV_QPS_INIT;
      a.port_num = 1;
      a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
      ASSERT_EQ(ibv_modify_qp(e.qps[0], &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
      ibv_gid gid{};
      ASSERT_EQ(ibv_query_gid(e.ctx, 1, 0, &gid), 0);
      f(e.qps[0], e.qps[1]->qp_num, gid);
    }});
  }
  // An RTR attribute set that is accepted: the peer's GID (is_global), its QPN, IRD, MTU.
  static ibv_qp_attr rtr(uint32_t peer_qpn, const ibv_gid& gid) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = gid;
    a.ah_attr.port_num = 1;
    a.dest_qp_num = peer_qpn;
    a.max_dest_rd_atomic = 1;
    a.path_mtu = IBV_MTU_1024;
    return a;
  }
  static constexpr int kRtr =
      IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_PATH_MTU;
  // Expects the RTR transition with `a` and `mask` to be refused, the warning to name `field`,
  // and the QP to stay in INIT.
  void refused_at_rtr(const char* field, const std::function<void(ibv_qp_attr&, int&)>& change) {
    with_qp([&](ibv_qp* qp, uint32_t peer, const ibv_gid& gid) {
      ibv_qp_attr a = rtr(peer, gid);
      int mask = kRtr;
      change(a, mask);
      ::testing::internal::CaptureStderr();
      EXPECT_EQ(ibv_modify_qp(qp, &a, mask), EINVAL);
      const std::string log = ::testing::internal::GetCapturedStderr();
      EXPECT_NE(log.find(field), std::string::npos) << "the warning: " << log;
      EXPECT_EQ(qp_state(qp), IBV_QPS_INIT);
      ibv_qp_attr ok = rtr(peer, gid);
      EXPECT_EQ(ibv_modify_qp(qp, &ok, kRtr), 0) << "the unchanged attributes are refused too";
    });
  }
};

TEST_F(RefusedAttrs, LidAddressingWithoutAGrh) {
  refused_at_rtr("ah_attr.is_global", [](ibv_qp_attr& a, int&) {
    a.ah_attr.is_global = 0;
    a.ah_attr.dlid = 7;
  });
}
TEST_F(RefusedAttrs, AhAttrOnAnotherPort) {
  refused_at_rtr("ah_attr.port_num", [](ibv_qp_attr& a, int&) { a.ah_attr.port_num = 2; });
}
TEST_F(RefusedAttrs, PathMtuOutOfRange) {
  refused_at_rtr("path_mtu", [](ibv_qp_attr& a, int&) { a.path_mtu = ibv_mtu(6); });
}
TEST_F(RefusedAttrs, PathMtuZero) {
  refused_at_rtr("path_mtu", [](ibv_qp_attr& a, int&) { a.path_mtu = ibv_mtu(0); });
}
TEST_F(RefusedAttrs, MaxDestRdAtomicAboveTheDevice) {
  refused_at_rtr("max_dest_rd_atomic",
                 [](ibv_qp_attr& a, int&) { a.max_dest_rd_atomic = 17; });  // IRD is 16
}
TEST_F(RefusedAttrs, MinRnrTimerOutOfRange) {
  refused_at_rtr("min_rnr_timer", [](ibv_qp_attr& a, int& m) {
    a.min_rnr_timer = 32;
    m |= IBV_QP_MIN_RNR_TIMER;
  });
}
TEST_F(RefusedAttrs, AlternatePath) {
  refused_at_rtr("IBV_QP_ALT_PATH", [](ibv_qp_attr&, int& m) { m |= IBV_QP_ALT_PATH; });
}
TEST_F(RefusedAttrs, UnknownMaskBit) {
  refused_at_rtr("bit 24", [](ibv_qp_attr&, int& m) { m |= 1 << 24; });
}
TEST_F(RefusedAttrs, QkeyOnAnRcQp) {
  refused_at_rtr("IBV_QP_QKEY", [](ibv_qp_attr& a, int& m) {
    a.qkey = 0x11111111;
    m |= IBV_QP_QKEY;
  });
}

// RTS values: refused with EINVAL, the QP stays in RTR; rc_pingpong's own values accepted.
TEST_F(RefusedAttrs, RtsValuesOutOfRangeAndRcPingpongsAccepted) {
  with_qp([&](ibv_qp* qp, uint32_t peer, const ibv_gid& gid) {
    ibv_qp_attr a = rtr(peer, gid);
    a.rq_psn = 0x123456;
    a.min_rnr_timer = 12;
    ASSERT_EQ(ibv_modify_qp(qp, &a, kRtr | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER), 0);
    const auto rts = [] {
      ibv_qp_attr r{};
      r.qp_state = IBV_QPS_RTS;
      r.timeout = 14;
      r.retry_cnt = 7;
      r.rnr_retry = 7;
      r.sq_psn = 0x654321;
      r.max_rd_atomic = 1;
      return r;
    };
    constexpr int kRts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                         IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
    struct Bad {
      const char* field;
      void (*set)(ibv_qp_attr&);
    };
    const Bad bad[] = {
        {"timeout", [](ibv_qp_attr& r) { r.timeout = 32; }},
        {"retry_cnt", [](ibv_qp_attr& r) { r.retry_cnt = 8; }},
        {"rnr_retry", [](ibv_qp_attr& r) { r.rnr_retry = 8; }},
        {"max_rd_atomic", [](ibv_qp_attr& r) { r.max_rd_atomic = 17; }},  // ORD is 16
    };
    for (const Bad& b : bad) {
      ibv_qp_attr r = rts();
      b.set(r);
      EXPECT_EQ(ibv_modify_qp(qp, &r, kRts), EINVAL) << b.field;
      EXPECT_EQ(qp_state(qp), IBV_QPS_RTR) << b.field;
    }
    ibv_qp_attr r = rts();
    ASSERT_EQ(ibv_modify_qp(qp, &r, kRts), 0);
    EXPECT_EQ(qp_state(qp), IBV_QPS_RTS);
    ibv_qp_attr q{};
    ibv_qp_init_attr qi{};
    ASSERT_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE, &qi), 0);
    EXPECT_EQ(q.path_mtu, IBV_MTU_1024);
    EXPECT_EQ(q.timeout, 14);
    EXPECT_EQ(q.retry_cnt, 7);
    EXPECT_EQ(q.rnr_retry, 7) << "accepted and kept, with no iWARP meaning";
    EXPECT_EQ(q.sq_psn, 0x654321u);
    EXPECT_EQ(q.rq_psn, 0x123456u);
  });
}

TEST_F(RefusedAttrs, PortAndPkeyIndexAtInit) {
  with_qp([&](ibv_qp* qp, uint32_t, const ibv_gid&) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 2;
    EXPECT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
    a.port_num = 1;
    a.pkey_index = 1;
    EXPECT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX), EINVAL);
    a.pkey_index = 0;
    EXPECT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX), 0);
  });
}

}  // namespace
}  // namespace rnic
