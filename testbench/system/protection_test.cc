// Protection when memory goes away under a running WR, between two simulated hosts, with guard
// bytes around everything: no segment ever carries bytes the card could not fetch (each DATA
// frame's payload is checked against its source), a WR that cannot fetch its data completes
// with an error and its QP goes to ERROR, a message already partly sent is ended with a
// Terminate so the peer never completes it, and nothing lands where it must not.
#include <gtest/gtest.h>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"
#include "testbench/common/wire_log.h"

namespace rnic {
namespace {

using rdmap::Layer;
using rdmap::Opcode;
using testbench::expect_bytes;
using testbench::kGuard;
using testbench::mem_fill;
using testbench::mem_read;
using testbench::mem_write;
using testbench::pattern;
using testbench::qp_state;
using testbench::rdma_write_wr;
using testbench::wait_one;
using testbench::WireFrame;
using testbench::WireLog;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr size_t kBuf = 1 << 20;
constexpr uint32_t kLen = 512 << 10;        // 358 segments at MTU 1500
constexpr uint64_t kSrc = 0x10000;          // where the message comes from in its source buffer
constexpr uint64_t kDst = 0x40000;          // where it goes in the sink buffer
constexpr uint64_t kDeregAfterNs = 50'000;  // about 40 of its segments

// The one Terminate on the wire, from `from`.
rdmap::Terminate only_terminate(const WireLog& wire, const eth::Mac& from) {
  const std::vector<const WireFrame*> t = wire.with_opcode(Opcode::kTerminate);
  rdmap::Terminate term;
  EXPECT_EQ(t.size(), 1u);
  if (t.size() != 1) return term;
  EXPECT_TRUE(t[0]->from(from));
  EXPECT_TRUE(rdmap::decode(t[0]->ddp.data() + rdmap::kUntaggedBytes,
                            t[0]->ddp.size() - rdmap::kUntaggedBytes, &term));
  return term;
}

// Every tagged DATA frame of `op` from `from` carries exactly the source's bytes at its offset;
// returns the payload bytes they carried.
uint64_t check_payloads(const WireLog& wire, const eth::Mac& from, Opcode op, uint64_t sink_base,
                        const std::vector<uint8_t>& src) {
  uint64_t bytes = 0;
  for (const WireFrame* f : wire.with_opcode(op)) {
    if (!f->from(from)) continue;
    const size_t hb = f->seg.header_bytes();
    const uint64_t off = f->seg.to - sink_base;
    const std::vector<uint8_t> got(f->ddp.begin() + int64_t(hb), f->ddp.end());
    EXPECT_LE(off + got.size(), src.size());
    if (off + got.size() > src.size()) continue;
    EXPECT_TRUE(std::equal(got.begin(), got.end(), src.begin() + int64_t(off)))
        << "a segment at offset " << off << " carries bytes that are not the source's";
    bytes += got.size();
  }
  return bytes;
}

// The requester's source MR is deregistered while its RDMA Write is on the wire: the segments
// not yet fetched are never sent, the WR completes IBV_WC_LOC_PROT_ERR, the requester's QP goes
// to ERROR and tells the peer with a Terminate (RDMAP local catastrophic), whose QP goes to
// ERROR too; the sink holds the source's bytes up to what was sent and guard bytes after.
TEST(Protection, SourceDeregisteredMidWriteEndsTheMessageWithATerminate) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  WireLog wire(cl.link(0), testbench::test_name());
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> src = pattern(kLen, 7);
  std::vector<uint8_t> sink_after;
  cl.run({[&] {
            a.open(EndpointConfig{});
            mem_fill(a.buf, kBuf);
            mem_write(a.buf, kSrc, src);
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            ibv_sge s{a.addr() + kSrc, kLen, a.mr->lkey};
            ibv_send_wr wr = rdma_write_wr(1, &s, 1, peer.addr + kDst, peer.rkey, true);
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            rnic_spend_ns(kDeregAfterNs);
            ASSERT_EQ(ibv_dereg_mr(a.mr), 0);
            a.mr = nullptr;
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.wr_id, 1u);
            EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(qp_state(a.qps[0]), IBV_QPS_ERR);
            oob.put(1, {});
          },
          [&] {
            b.open(EndpointConfig{});
            mem_fill(b.buf, kBuf);
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            oob.get(1);
            while (qp_state(b.qps[0]) != IBV_QPS_ERR) rnic_spend_ns(1000);
            sink_after = mem_read(b.buf, kBuf);
          }});
  const uint64_t sent = check_payloads(wire, cl.nodes[0]->mac, Opcode::kWrite,
                                       reinterpret_cast<uint64_t>(b.buf) + kDst, src);
  EXPECT_GT(sent, 0u) << "part of the message left before the source went";
  EXPECT_LT(sent, uint64_t(kLen)) << "and not all of it";
  std::vector<uint8_t> want(kBuf, kGuard);
  std::copy(src.begin(), src.begin() + int64_t(sent), want.begin() + int64_t(kDst));
  EXPECT_TRUE(sink_after == want) << "the sink holds the bytes sent, guard bytes elsewhere";
  const rdmap::Terminate t = only_terminate(wire, cl.nodes[0]->mac);
  EXPECT_EQ(int(t.cause.layer), int(Layer::kRdmap));
  EXPECT_EQ(t.cause.etype, 0);  // local catastrophic
  EXPECT_EQ(stats.group("node0.core").counter("fetch_errors", "", "").value, 1u);
}

// The responder's MR is deregistered while it answers an RDMA Read: no Read Response segment
// carries bytes it could not fetch; the Read Request is answered with a Terminate quoting it
// (RDMAP remote protection, invalid STag), the requester's WR completes IBV_WC_REM_ACCESS_ERR;
// the requester's sink holds the source's bytes up to what arrived and guard bytes after.
TEST(Protection, ResponderMrDeregisteredMidReadAnswersWithATerminate) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  WireLog wire(cl.link(0), testbench::test_name());
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> src = pattern(kLen, 9);
  std::vector<uint8_t> sink_after;
  cl.run({[&] {
            a.open(EndpointConfig{});
            mem_fill(a.buf, kBuf);
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            ibv_sge s{a.addr() + kDst, kLen, a.mr->lkey};
            ibv_send_wr wr = rdma_write_wr(1, &s, 1, peer.addr + kSrc, peer.rkey, true);
            wr.opcode = IBV_WR_RDMA_READ;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            oob.put(1, {});
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(qp_state(a.qps[0]), IBV_QPS_ERR);
            sink_after = mem_read(a.buf, kBuf);
          },
          [&] {
            b.open(EndpointConfig{});
            mem_fill(b.buf, kBuf);
            mem_write(b.buf, kSrc, src);
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            oob.get(1);  // the Read is posted
            rnic_spend_ns(kDeregAfterNs);
            ASSERT_EQ(ibv_dereg_mr(b.mr), 0);
            b.mr = nullptr;
            while (qp_state(b.qps[0]) != IBV_QPS_ERR) rnic_spend_ns(1000);
          }});
  const uint64_t got = check_payloads(wire, cl.nodes[1]->mac, Opcode::kReadResponse,
                                      reinterpret_cast<uint64_t>(a.buf) + kDst, src);
  EXPECT_GT(got, 0u);
  EXPECT_LT(got, uint64_t(kLen));
  std::vector<uint8_t> want(kBuf, kGuard);
  std::copy(src.begin(), src.begin() + int64_t(got), want.begin() + int64_t(kDst));
  EXPECT_TRUE(sink_after == want) << "the sink holds the bytes that arrived, guard bytes elsewhere";
  const rdmap::Terminate t = only_terminate(wire, cl.nodes[1]->mac);
  EXPECT_EQ(int(t.cause.layer), int(Layer::kRdmap));
  EXPECT_EQ(t.cause.etype, 1);    // remote protection
  EXPECT_EQ(t.cause.code, 0x00);  // invalid STag
  EXPECT_TRUE(t.r) << "the Terminate quotes the Read Request";
}

// Destroying a connected QP closes its stream: its peer hears a Terminate (layer LLP) ahead of
// any acknowledgement of segments still arriving, its QP goes to ERROR and everything
// outstanding flushes; an RDMA Write in flight to the destroyed QP never completes as a
// success. Moving a QP to ERROR does the same (`close` false: the responder moves it instead).
void destroy_mid_write(bool destroy) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  WireLog wire(cl.link(0), testbench::test_name());
  Oob oob;
  Endpoint a, b;
  cl.run({[&] {
            a.open(EndpointConfig{});
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            ibv_sge rs{a.addr(), 64, a.mr->lkey};
            ibv_recv_wr r{};
            r.wr_id = 9;
            r.sg_list = &rs;
            r.num_sge = 1;
            ibv_recv_wr* bad_r = nullptr;
            ASSERT_EQ(ibv_post_recv(a.qps[0], &r, &bad_r), 0);
            ibv_sge s{a.addr() + kSrc, kLen, a.mr->lkey};
            ibv_send_wr wr[2] = {rdma_write_wr(1, &s, 1, peer.addr + kDst, peer.rkey, true),
                                 rdma_write_wr(2, &s, 1, peer.addr + kDst, peer.rkey, true)};
            wr[0].next = &wr[1];
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], wr, &bad), 0);
            oob.put(1, {});
            for (const ibv_wc& wc : testbench::wait_completions(a.cq, 3))
              EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR)
                  << "WR " << wc.wr_id << ": " << ibv_wc_status_str(wc.status);
            EXPECT_EQ(qp_state(a.qps[0]), IBV_QPS_ERR);
            oob.put(1, {});
          },
          [&] {
            b.open(EndpointConfig{});
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            oob.get(1);  // the Writes are posted
            rnic_spend_ns(kDeregAfterNs);
            if (destroy) {
              ASSERT_EQ(ibv_destroy_qp(b.qps[0]), 0);
              b.qps.clear();
            } else {
              ibv_qp_attr at{};
              at.qp_state = IBV_QPS_ERR;
              ASSERT_EQ(ibv_modify_qp(b.qps[0], &at, IBV_QP_STATE), 0);
            }
            oob.get(1);
          }});
  const rdmap::Terminate t = only_terminate(wire, cl.nodes[1]->mac);
  EXPECT_EQ(int(t.cause.layer), int(Layer::kLlp));
}

TEST(Protection, DestroyingAQpMidWriteFlushesThePeersWork) { destroy_mid_write(true); }
TEST(Protection, MovingAQpToErrorMidWriteFlushesThePeersWork) { destroy_mid_write(false); }

}  // namespace
}  // namespace rnic
