// Local errors and verbs misuse (WIRE.md, "Errors"): a bad WR is refused by ibv_post_send /
// ibv_post_recv with an errno and bad_wr pointing at it (the WRs before it posted and carried
// out); an illegal QP transition is refused; a WR whose local SGEs fail the card's checks
// completes with IBV_WC_LOC_PROT_ERR / IBV_WC_LOC_LEN_ERR, moves its QP to ERROR and flushes the
// WRs behind it. In every case nothing of the refused or failed WR goes on the wire, the peer
// is untouched (scoreboard: its whole buffer still guard bytes unless a good WR wrote there).
#include <gtest/gtest.h>

#include <functional>

#include "models/host/verbs/verbs_internal.h"
#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"
#include "testbench/common/wire_log.h"

namespace rnic {
namespace {

using testbench::expect_bytes;
using testbench::kGuard;
using testbench::mem_fill;
using testbench::mem_read;
using testbench::qp_state;
using testbench::rdma_write_wr;
using testbench::wait_completions;
using testbench::WireLog;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr size_t kBuf = 1 << 20;

class LocalErrors : public ::testing::Test {
 protected:
  // Runs `requester` on node 0 with a connected endpoint (2 SGEs per WR, SQ depth 4) and the
  // peer's info; node 1 connects and waits. Afterwards: the peer's buffer is expected to hold
  // guard bytes except [peer_written_off, + peer_written.size()), which must equal
  // peer_written.
  void run(const std::function<void(Endpoint&, const PeerInfo&)>& requester, bool connect = true) {
    SystemConfig cfg = preset_config("rnic-10g", "test");
    cfg.host.wqe_mode = wqe_mode;
    StatRegistry st;
    Cluster cl(cfg, st);
    WireLog w(cl.link(0), testbench::test_name());
    Oob oob;
    EndpointConfig ec;
    ec.sge = 2;
    ec.send_depth = 4;
    ec.recv_depth = 4;
    cl.run({[&] {
              a.open(ec);
              mem_fill(a.buf, kBuf);
              oob.put(1, a.info());
              const PeerInfo peer = oob.get(0);
              if (connect) a.connect(peer);
              requester(a, peer);
              oob.put(1, {});
            },
            [&] {
              b.open(ec);
              mem_fill(b.buf, kBuf);
              const PeerInfo peer = oob.get(1);
              oob.put(0, b.info());
              b.connect(peer);
              oob.get(1);
              std::vector<uint8_t> want(kBuf, kGuard);
              std::copy(peer_written.begin(), peer_written.end(), want.begin() + peer_written_off);
              expect_bytes("peer buffer", b.buf, want);
              // A requester QP that failed locally closes its stream: the peer's QP follows.
              for (int i = 0; i < 100 && qp_state(b.qps[0]) != peer_state; ++i) rnic_spend_ns(1000);
              EXPECT_EQ(qp_state(b.qps[0]), peer_state);
            }});
    for (const auto& f : w.frames) {
      if (!f.data()) continue;
      if (f.opcode() == uint8_t(rdmap::Opcode::kTerminate))
        ++terminates;
      else
        data_frames.push_back(f.seg);
    }
    local_errors = st.group("node0.core").counter("local_errors", "", "").value;
    wqe_fetch_errors = st.group("node0.core").counter("wqe_fetch_errors", "", "").value;
    ur_reads = st.group("node0.rc").counter("ur_reads", "", "").value;
  }

  Endpoint a, b;
  std::vector<uint8_t> peer_written;
  uint64_t peer_written_off = 0;
  std::vector<rdmap::Segment> data_frames;  // every DATA frame's DDP header but Terminates'
  uint64_t terminates = 0;                  // Terminates on the wire (a close), both directions
  ibv_qp_state peer_state = IBV_QPS_RTS;    // the peer's QP 0 at the end
  uint64_t local_errors = 0, wqe_fetch_errors = 0, ur_reads = 0;
  std::string wqe_mode = "mmio";
};

ibv_send_wr write_wr(uint64_t id, ibv_sge* sge, int n, const PeerInfo& p, uint64_t off) {
  return rdma_write_wr(id, sge, n, p.addr + off, p.rkey);
}

TEST_F(LocalErrors, PostInResetIsRefusedAndSendsNothing) {
  run(
      [&](Endpoint& ep, const PeerInfo& p) {
        ASSERT_EQ(qp_state(ep.qps[0]), IBV_QPS_RESET);
        ibv_sge s{ep.addr(), 64, ep.mr->lkey};
        ibv_send_wr wr = write_wr(1, &s, 1, p, 0);
        ibv_send_wr* bad = nullptr;
        EXPECT_EQ(ibv_post_send(ep.qps[0], &wr, &bad), EINVAL);
        EXPECT_EQ(bad, &wr);
        ibv_recv_wr r{};
        r.sg_list = &s;
        r.num_sge = 1;
        ibv_recv_wr* bad_r = nullptr;
        EXPECT_EQ(ibv_post_recv(ep.qps[0], &r, &bad_r), EINVAL);
        EXPECT_EQ(bad_r, &r);
        rnic_spend_ns(10'000);
        ibv_wc wc{};
        EXPECT_EQ(ibv_poll_cq(ep.cq, 1, &wc), 0);
      },
      /*connect=*/false);
  EXPECT_TRUE(data_frames.empty());
}

TEST_F(LocalErrors, BadWrInAListStopsThereAndTheOnesBeforeItRun) {
  const std::vector<uint8_t> d(64, 0x11);
  peer_written = d;
  peer_written_off = 0x100;
  run([&](Endpoint& ep, const PeerInfo& p) {
    ASSERT_EQ(rnic_mem_write(ep.buf, d.data(), d.size()), 0);
    ibv_sge s[3] = {{ep.addr(), 64, ep.mr->lkey},
                    {ep.addr() + 64, 1, ep.mr->lkey},
                    {ep.addr() + 65, 1, ep.mr->lkey}};
    ibv_send_wr good = write_wr(1, s, 1, p, 0x100);
    ibv_send_wr too_many = write_wr(2, s, 3, p, 0x200);  // max_send_sge is 2
    ibv_send_wr after = write_wr(3, s, 1, p, 0x300);
    good.next = &too_many;
    too_many.next = &after;
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_send(ep.qps[0], &good, &bad), EINVAL);
    EXPECT_EQ(bad, &too_many);

    ibv_send_wr unknown = write_wr(4, s, 1, p, 0x400);
    unknown.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;  // no atomics on this card
    EXPECT_EQ(ibv_post_send(ep.qps[0], &unknown, &bad), EINVAL);
    EXPECT_EQ(bad, &unknown);
    unknown.opcode = ibv_wr_opcode(77);
    EXPECT_EQ(ibv_post_send(ep.qps[0], &unknown, &bad), EINVAL);
    EXPECT_EQ(bad, &unknown);

    ibv_recv_wr r1{}, r2{};
    r1.wr_id = 5;
    r1.sg_list = s;
    r1.num_sge = 1;
    r2.wr_id = 6;
    r2.sg_list = s;
    r2.num_sge = 3;
    r1.next = &r2;
    ibv_recv_wr* bad_r = nullptr;
    EXPECT_EQ(ibv_post_recv(ep.qps[0], &r1, &bad_r), EINVAL);
    EXPECT_EQ(bad_r, &r2);

    const std::vector<ibv_wc> wcs = wait_completions(ep.cq, 1);
    ASSERT_EQ(wcs.size(), 1u);
    EXPECT_EQ(wcs[0].wr_id, 1u);
    EXPECT_EQ(wcs[0].status, IBV_WC_SUCCESS);
    rnic_spend_ns(10'000);
    ibv_wc wc{};
    EXPECT_EQ(ibv_poll_cq(ep.cq, 1, &wc), 0) << "wr_id " << wc.wr_id;
    EXPECT_EQ(qp_state(ep.qps[0]), IBV_QPS_RTS);
  });
  ASSERT_EQ(data_frames.size(), 1u);  // the good Write only
  EXPECT_EQ(data_frames[0].opcode, uint8_t(rdmap::Opcode::kWrite));
}

TEST_F(LocalErrors, FullQueueIsRefusedWithEnomem) {
  const std::vector<uint8_t> d(64, 0x22);
  peer_written = d;
  run([&](Endpoint& ep, const PeerInfo& p) {
    ASSERT_EQ(rnic_mem_write(ep.buf, d.data(), d.size()), 0);
    ibv_sge s{ep.addr(), 64, ep.mr->lkey};
    std::vector<ibv_send_wr> wr(5);
    for (size_t i = 0; i < wr.size(); ++i) {
      wr[i] = write_wr(i, &s, 1, p, 0);
      if (i + 1 < wr.size()) wr[i].next = &wr[i + 1];
    }
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_send(ep.qps[0], wr.data(), &bad), ENOMEM);  // depth 4
    EXPECT_EQ(bad, &wr[4]);
    for (const ibv_wc& w : wait_completions(ep.cq, 4))
      EXPECT_EQ(w.status, IBV_WC_SUCCESS) << w.wr_id;
    // Completions freed the slots: the fifth goes now.
    wr[4].next = nullptr;
    EXPECT_EQ(ibv_post_send(ep.qps[0], &wr[4], &bad), 0);
    EXPECT_EQ(wait_completions(ep.cq, 1).at(0).status, IBV_WC_SUCCESS);
  });
  EXPECT_EQ(data_frames.size(), 5u);
}

TEST_F(LocalErrors, IllegalTransitionsAreRefused) {
  run(
      [&](Endpoint& ep, const PeerInfo& p) {
        ibv_qp_attr at{};
        at.qp_state = IBV_QPS_RTS;
        EXPECT_EQ(ibv_modify_qp(ep.qps[0], &at, IBV_QP_STATE), EINVAL);  // RESET -> RTS
        EXPECT_EQ(qp_state(ep.qps[0]), IBV_QPS_RESET);
        at = ibv_qp_attr{};
        at.qp_state = IBV_QPS_INIT;
        at.port_num = 1;
        at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
        ASSERT_EQ(ibv_modify_qp(ep.qps[0], &at, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
                  0);
        at.qp_state = IBV_QPS_RTS;
        EXPECT_EQ(ibv_modify_qp(ep.qps[0], &at, IBV_QP_STATE), EINVAL);  // INIT -> RTS
        at.qp_state = IBV_QPS_RTR;  // without the attributes RTR requires
        EXPECT_EQ(ibv_modify_qp(ep.qps[0], &at, IBV_QP_STATE), EINVAL);
        EXPECT_EQ(qp_state(ep.qps[0]), IBV_QPS_INIT);
        ibv_sge s{ep.addr(), 64, ep.mr->lkey};
        ibv_send_wr wr = write_wr(1, &s, 1, p, 0);
        ibv_send_wr* bad = nullptr;
        EXPECT_EQ(ibv_post_send(ep.qps[0], &wr, &bad), EINVAL);  // INIT cannot send
      },
      /*connect=*/false);
  EXPECT_TRUE(data_frames.empty());
}

// A WR the card rejects locally: it completes with `status`, the WR behind it is flushed, the
// QP is in ERROR, nothing was sent.
void expect_local_error(Endpoint& ep, ibv_send_wr& wr, ibv_wc_status status, const PeerInfo& p) {
  ibv_sge fs{ep.addr(), 8, ep.mr->lkey};
  ibv_send_wr behind = write_wr(99, &fs, 1, p, 0x800);
  wr.next = &behind;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(ep.qps[0], &wr, &bad), 0);
  const std::vector<ibv_wc> wcs = wait_completions(ep.cq, 2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, wr.wr_id);
  EXPECT_EQ(wcs[0].status, status) << ibv_wc_status_str(wcs[0].status);
  EXPECT_EQ(wcs[1].wr_id, 99u);
  EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wcs[1].status);
  EXPECT_EQ(qp_state(ep.qps[0]), IBV_QPS_ERR);
}

TEST_F(LocalErrors, BadLkeyCompletesLocProtErr) {
  peer_state = IBV_QPS_ERR;  // the failed QP closes its stream
  run([&](Endpoint& ep, const PeerInfo& p) {
    ibv_sge s{ep.addr(), 64, ep.mr->lkey ^ 0x33};
    ibv_send_wr wr = write_wr(1, &s, 1, p, 0);
    expect_local_error(ep, wr, IBV_WC_LOC_PROT_ERR, p);
  });
  EXPECT_TRUE(data_frames.empty());
  EXPECT_EQ(terminates, 1u) << "the close";
  EXPECT_EQ(local_errors, 1u);
}

TEST_F(LocalErrors, SgeOutsideItsMrCompletesLocProtErr) {
  peer_state = IBV_QPS_ERR;  // the failed QP closes its stream
  run([&](Endpoint& ep, const PeerInfo& p) {
    ibv_sge s[2] = {{ep.addr(), 64, ep.mr->lkey}, {ep.addr() + kBuf - 8, 64, ep.mr->lkey}};
    ibv_send_wr wr = write_wr(1, s, 2, p, 0);
    wr.opcode = IBV_WR_SEND;
    expect_local_error(ep, wr, IBV_WC_LOC_PROT_ERR, p);
  });
  EXPECT_TRUE(data_frames.empty());
  EXPECT_EQ(terminates, 1u) << "the close";
}

TEST_F(LocalErrors, ReadIntoMrWithoutLocalWriteCompletesLocProtErr) {
  peer_state = IBV_QPS_ERR;  // the failed QP closes its stream
  run([&](Endpoint& ep, const PeerInfo& p) {
    void* ro = rnic_malloc(4096);
    ibv_mr* mr = ibv_reg_mr(ep.pd, ro, 4096, IBV_ACCESS_REMOTE_READ);
    ASSERT_TRUE(mr);
    mem_fill(ro, 4096);
    ibv_sge s{reinterpret_cast<uint64_t>(ro), 64, mr->lkey};
    ibv_send_wr wr = write_wr(1, &s, 1, p, 0);
    wr.opcode = IBV_WR_RDMA_READ;
    expect_local_error(ep, wr, IBV_WC_LOC_PROT_ERR, p);
    const std::vector<uint8_t> got = mem_read(ro, 4096);
    EXPECT_EQ(got, std::vector<uint8_t>(4096, kGuard));
  });
  EXPECT_TRUE(data_frames.empty());
  EXPECT_EQ(terminates, 1u) << "the close";
}

TEST_F(LocalErrors, MessageLongerThanMaxMsgSzCompletesLocLenErr) {
  peer_state = IBV_QPS_ERR;  // the failed QP closes its stream
  run([&](Endpoint& ep, const PeerInfo& p) {
    ibv_device_attr da{};
    ASSERT_EQ(ibv_query_device(ep.ctx, &da), 0);
    ibv_port_attr pa{};
    ASSERT_EQ(ibv_query_port(ep.ctx, 1, &pa), 0);
    // Two SGEs of 1 GiB + 4 KiB: 8 KiB beyond max_msg_sz (2 GiB). The length check
    // comes before any translation, so the SGEs need not be registered.
    const uint32_t half = pa.max_msg_sz / 2 + 4096;
    ibv_sge s[2] = {{ep.addr(), half, ep.mr->lkey}, {ep.addr(), half, ep.mr->lkey}};
    ibv_send_wr wr = write_wr(1, s, 2, p, 0);
    wr.opcode = IBV_WR_SEND;
    expect_local_error(ep, wr, IBV_WC_LOC_LEN_ERR, p);
  });
  EXPECT_TRUE(data_frames.empty());
  EXPECT_EQ(terminates, 1u) << "the close";
}

// A gather DMA read that fails (an STag of a physical region inside the memory hole: the root
// complex answers Unsupported Request): the WR completes IBV_WC_LOC_QP_OP_ERR with a QP fatal
// event, the WR behind it is flushed, nothing is sent (no zero-filled segment).
TEST_F(LocalErrors, FailedGatherReadCompletesLocQpOpErrAndSendsNothing) {
  peer_state = IBV_QPS_ERR;  // the failed QP closes its stream
  run([&](Endpoint& ep, const PeerInfo& p) {
    rnic::host::Driver& drv = rnic::host::context_driver(ep.ctx);
    const HostConfig host = preset_config("rnic-10g", "test").host;  // run()'s memory map
    abi::WriteStag w;
    w.index = drv.caps().stags - 1;
    w.key = 0x11;
    w.type = abi::kStagPhysical;
    w.pd = ep.pd->handle;
    w.base_to = 0x1000;
    w.length = 4096;
    w.phys_base = (uint64_t(host.hole_base_mib) + uint64_t(host.hole_mib) / 2) << 20;
    ASSERT_EQ(drv.command(w), 0);
    ibv_sge s{0x1000, 64, w.index << 8 | w.key};
    ibv_send_wr wr = write_wr(1, &s, 1, p, 0);
    wr.send_flags = IBV_SEND_SIGNALED;
    expect_local_error(ep, wr, IBV_WC_LOC_QP_OP_ERR, p);
    ibv_async_event ev{};
    ASSERT_EQ(ibv_get_async_event(ep.ctx, &ev), 0);
    EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
    ibv_ack_async_event(&ev);
  });
  EXPECT_TRUE(data_frames.empty());
  EXPECT_EQ(terminates, 1u) << "the close";
  EXPECT_EQ(local_errors, 1u);
  EXPECT_GE(ur_reads, 1u);
}

// Host-ring WQE mode: a WQE fetch whose DMA read fails (here a QP created, through a firmware command,
// with its SQ ring in the device-reserved hole, which the root complex answers with UR) moves
// the QP to ERROR with IBV_EVENT_QP_FATAL; nothing is sent and the other QP carries on.
TEST_F(LocalErrors, FailedWqeFetchMovesTheQpToErrorWithQpFatal) {
  wqe_mode = "ring";
  const std::vector<uint8_t> d(64, 0x22);
  peer_written = d;
  peer_written_off = 0x40;
  uint32_t bad_qpn = 0;
  run([&](Endpoint& ep, const PeerInfo& p) {
    rnic::host::Driver& drv = rnic::host::context_driver(ep.ctx);
    const HostConfig host = preset_config("rnic-10g", "test").host;  // run()'s memory map
    bad_qpn = drv.caps().qps - 1;
    const uint64_t hole = (uint64_t(host.hole_base_mib) + uint64_t(host.hole_mib) / 2) << 20;
    const abi::CreateQp create{
        bad_qpn, ep.pd->handle, ep.cq->handle, ep.cq->handle, 4, 4, abi::CreateQp::kQpHostRings,
        hole,    hole};
    ASSERT_EQ(drv.command(create), 0);
    drv.rc().mmio_write_le(drv.qp_page(bad_qpn) + reg::kSqDoorbell, 1, 8);
    ibv_async_event ev{};
    ASSERT_EQ(ibv_get_async_event(ep.ctx, &ev), 0);
    EXPECT_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
    EXPECT_EQ(ev.element.qp, nullptr);  // a QP the library did not create
    ibv_ack_async_event(&ev);
    const uint32_t v = drv.rc().mmio_read32(drv.qp_page(bad_qpn) + reg::kQpStatus);
    EXPECT_EQ(v & 0xFFFFFF, bad_qpn);
    EXPECT_EQ((v >> 24) & 0xF, abi::kQpError);
    // The library's own QP (host rings as well) still works.
    ASSERT_EQ(rnic_mem_write(ep.buf, d.data(), d.size()), 0);
    ibv_sge s{ep.addr(), 64, ep.mr->lkey};
    ibv_send_wr wr = write_wr(1, &s, 1, p, 0x40);
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(ep.qps[0], &wr, &bad), 0);
    ibv_wc wc = testbench::wait_one(ep.cq);
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_EQ(qp_state(ep.qps[0]), IBV_QPS_RTS);
  });
  EXPECT_EQ(wqe_fetch_errors, 1u);
  EXPECT_EQ(ur_reads, 1u);
  ASSERT_EQ(data_frames.size(), 1u);  // the good Write only
}

}  // namespace
}  // namespace rnic
