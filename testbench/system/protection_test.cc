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

// Two hosts joined by a link, with a wire log and an out-of-band channel: node 0 runs endpoint
// a, node 1 endpoint b.
class Protection : public ::testing::Test {
 protected:
  // Opens a (its buffer guard bytes) and connects it to b: returns b's details.
  PeerInfo open_a() {
    a.open(EndpointConfig{});
    mem_fill(a.buf, kBuf);
    oob.put(1, a.info());
    const PeerInfo peer = oob.get(0);
    a.connect(peer);
    return peer;
  }
  // Opens b (its buffer guard bytes) and connects it to a: returns a's details.
  PeerInfo open_b() {
    b.open(EndpointConfig{});
    mem_fill(b.buf, kBuf);
    const PeerInfo peer = oob.get(1);
    oob.put(0, b.info());
    b.connect(peer);
    return peer;
  }
  void destroy_mid_write(bool destroy);
  struct GuardCase;
  void guard_case(const GuardCase& c);

  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl{cfg, stats};
  WireLog wire{cl.link(0), testbench::test_name()};
  Oob oob;
  Endpoint a, b;
};

// Endpoint e's next n completions are all IBV_WC_WR_FLUSH_ERR and its QP 0 is in ERROR.
void expect_all_flushed(const Endpoint& e, size_t n) {
  for (const ibv_wc& wc : testbench::wait_completions(e.cq, n))
    EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR)
        << "WR " << wc.wr_id << ": " << ibv_wc_status_str(wc.status);
  EXPECT_EQ(qp_state(e.qps[0]), IBV_QPS_ERR);
}

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
TEST_F(Protection, SourceDeregisteredMidWriteEndsTheMessageWithATerminate) {
  const std::vector<uint8_t> src = pattern(kLen, 7);
  std::vector<uint8_t> sink_after;
  cl.run({[&] {
            const PeerInfo peer = open_a();
            mem_write(a.buf, kSrc, src);
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
            open_b();
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
TEST_F(Protection, ResponderMrDeregisteredMidReadAnswersWithATerminate) {
  const std::vector<uint8_t> src = pattern(kLen, 9);
  std::vector<uint8_t> sink_after;
  cl.run({[&] {
            const PeerInfo peer = open_a();
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
            open_b();
            mem_write(b.buf, kSrc, src);
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
// success. Segments that still arrive for the destroyed QPN are each answered with a reset (the
// same Terminate, its EFE header reflecting the QPN), which the peer, already in ERROR, drops.
// Moving a QP to ERROR does the same (`destroy` false: the responder moves it instead), except
// that segments for a QP in ERROR are dropped without a reset.
void Protection::destroy_mid_write(bool destroy) {
  uint32_t b_qpn = 0;
  cl.run({[&] {
            const PeerInfo peer = open_a();
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
            expect_all_flushed(a, 3);
            oob.put(1, {});
          },
          [&] {
            open_b();
            b_qpn = b.qps[0]->qp_num;
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
  const std::vector<const WireFrame*> terms = wire.with_opcode(Opcode::kTerminate);
  ASSERT_GE(terms.size(), 1u);
  for (size_t i = 0; i < terms.size(); ++i) {
    const WireFrame& f = *terms[i];
    EXPECT_TRUE(f.from(cl.nodes[1]->mac));
    rdmap::Terminate t;
    ASSERT_TRUE(rdmap::decode(f.ddp.data() + rdmap::kUntaggedBytes,
                              f.ddp.size() - rdmap::kUntaggedBytes, &t));
    EXPECT_EQ(int(t.cause.layer), int(Layer::kLlp));
    EXPECT_FALSE(t.m || t.d || t.r) << "a close quotes nothing";
    // The first is the close, to the peer's QP; any others are resets reflecting B's QPN.
    EXPECT_EQ(f.efe.rq, i > 0) << "Terminate " << i;
    EXPECT_EQ(f.efe.dst_qpn, i > 0 ? b_qpn : a.qps[0]->qp_num) << "Terminate " << i;
  }
  if (destroy)
    EXPECT_GT(terms.size(), 1u) << "Writes in flight met the destroyed QPN";
  else
    EXPECT_EQ(terms.size(), 1u) << "a QP in ERROR answers nothing";
  EXPECT_EQ(stats.group("node1.core").counter("rx_resets", "", "").value, terms.size() - 1);
}

TEST_F(Protection, DestroyingAQpMidWriteFlushesThePeersWork) { destroy_mid_write(true); }
TEST_F(Protection, MovingAQpToErrorMidWriteFlushesThePeersWork) { destroy_mid_write(false); }

// A requester connected to a QPN that never existed at the peer (a wrong number told out of
// band): each of its segments is answered with a reset (a Terminate of layer LLP whose EFE
// header reflects that QPN, ahead of the segment's acknowledgement), its QP goes to ERROR and
// its WRs flush: an RDMA Write to nowhere never completes as a success. Nothing at the peer
// changes: its memory keeps its guard bytes and its own QP stays in RTS.
TEST_F(Protection, WriteToAQpnThatNeverExistedIsReset) {
  constexpr uint32_t kSmall = 4096;  // 3 segments
  uint32_t bogus = 0;
  std::vector<uint8_t> sink_after;
  cl.run({[&] {
            a.open(EndpointConfig{});
            mem_fill(a.buf, kBuf);
            oob.put(1, a.info());
            PeerInfo peer = oob.get(0);
            bogus = peer.qpns[0] + 0x100;
            peer.qpns[0] = bogus;
            a.connect(peer);
            ibv_sge s{a.addr() + kSrc, kSmall, a.mr->lkey};
            ibv_send_wr wr[2] = {rdma_write_wr(1, &s, 1, peer.addr + kDst, peer.rkey, true),
                                 rdma_write_wr(2, &s, 1, peer.addr + kDst, peer.rkey, true)};
            wr[1].opcode = IBV_WR_SEND;
            wr[0].next = &wr[1];
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], wr, &bad), 0);
            expect_all_flushed(a, 2);
            oob.put(1, {});
          },
          [&] {
            open_b();
            oob.get(1);
            EXPECT_EQ(qp_state(b.qps[0]), IBV_QPS_RTS);
            sink_after = mem_read(b.buf, kBuf);
          }});
  EXPECT_TRUE(sink_after == std::vector<uint8_t>(kBuf, kGuard)) << "the peer's memory changed";
  const std::vector<const WireFrame*> terms = wire.with_opcode(Opcode::kTerminate);
  ASSERT_GE(terms.size(), 1u);
  for (const WireFrame* f : terms) {
    EXPECT_TRUE(f->from(cl.nodes[1]->mac));
    EXPECT_TRUE(f->efe.rq);
    EXPECT_EQ(f->efe.dst_qpn, bogus);
    rdmap::Terminate t;
    ASSERT_TRUE(rdmap::decode(f->ddp.data() + rdmap::kUntaggedBytes,
                              f->ddp.size() - rdmap::kUntaggedBytes, &t));
    EXPECT_EQ(int(t.cause.layer), int(Layer::kLlp));
  }
  // Each segment that reached the peer was answered, and the first reset came before the
  // acknowledgement of the segment it answers.
  const uint64_t resets = stats.group("node1.core").counter("rx_resets", "", "").value;
  EXPECT_EQ(resets, terms.size());
  EXPECT_EQ(resets, wire.data(cl.nodes[0]->mac, bogus).size());
  EXPECT_EQ(stats.group("node0.core").counter("rx_terminates", "", "").value, 1u)
      << "resets after the first meet a QP in ERROR and are dropped";
}

// Remote access against a responder MR of 64 KiB in the middle of a 256 KiB region of guard
// bytes: after the requester's WR has completed, every byte of the region is checked (the
// bytes just before and past the MR included), and for a Read the requester's sink too.
constexpr size_t kRegion = 256 << 10;
constexpr uint64_t kMrOff = 64 << 10;
constexpr uint32_t kMrLen = 64 << 10;

struct Protection::GuardCase {
  enum class Before { kNothing, kDeregister, kInvalidate } before = Before::kNothing;
  ibv_wr_opcode op = IBV_WR_RDMA_WRITE;
  int64_t off = 0;  // from the MR's first byte
  uint32_t len = 256;
  bool wrap = false;  // the remote address is 2^64 - 32 instead
  ibv_wc_status want = IBV_WC_REM_ACCESS_ERR;
  uint64_t written = 0;  // bytes of a Write that land, from `off`
};

void Protection::guard_case(const GuardCase& c) {
  const std::vector<uint8_t> src = pattern(std::max<uint32_t>(c.len, 1), 5);
  std::vector<uint8_t> region_after, sink_after;
  cl.run({[&] {
            open_a();
            mem_write(a.buf, kSrc, src);
            const PeerInfo t = oob.get(0);  // the target MR
            ibv_send_wr* bad = nullptr;
            if (c.before == GuardCase::Before::kInvalidate) {
              ibv_sge s{a.addr() + kSrc, 16, a.mr->lkey};
              ibv_send_wr inv = rdma_write_wr(7, &s, 1, 0, 0, true);
              inv.opcode = IBV_WR_SEND_WITH_INV;
              inv.invalidate_rkey = t.rkey;
              ASSERT_EQ(ibv_post_send(a.qps[0], &inv, &bad), 0);
              const ibv_wc w = wait_one(a.cq);
              ASSERT_EQ(w.status, IBV_WC_SUCCESS) << ibv_wc_status_str(w.status);
            }
            ibv_sge s{a.addr() + (c.op == IBV_WR_RDMA_READ ? kDst : kSrc), c.len, a.mr->lkey};
            const uint64_t raddr = c.wrap ? ~uint64_t(0) - 31 : uint64_t(int64_t(t.addr) + c.off);
            ibv_send_wr wr = rdma_write_wr(1, &s, 1, raddr, t.rkey, true);
            wr.opcode = c.op;
            ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
            const ibv_wc w = wait_one(a.cq);
            EXPECT_EQ(w.status, c.want) << ibv_wc_status_str(w.status);
            sink_after = mem_read(a.buf, kBuf);
            oob.put(1, {});
          },
          [&] {
            open_b();
            void* region = rnic_malloc(kRegion);
            mem_fill(region, kRegion);
            void* mr_base = static_cast<uint8_t*>(region) + kMrOff;
            ibv_mr* mr = ibv_reg_mr(
                b.pd, mr_base, kMrLen,
                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
            ASSERT_TRUE(mr);
            ibv_sge rs{b.addr(), 4096, b.mr->lkey};
            ibv_recv_wr r{};
            r.sg_list = &rs;
            r.num_sge = 1;
            ibv_recv_wr* bad_r = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &r, &bad_r), 0);
            PeerInfo t = b.info();
            t.addr = reinterpret_cast<uint64_t>(mr_base);
            t.rkey = mr->rkey;
            if (c.before == GuardCase::Before::kDeregister) {
              ASSERT_EQ(ibv_dereg_mr(mr), 0);
            }
            oob.put(0, t);
            oob.get(1);  // the requester's WR has completed
            region_after = mem_read(region, kRegion);
          }});
  std::vector<uint8_t> want(kRegion, kGuard);
  if (c.op == IBV_WR_RDMA_WRITE)
    std::copy(src.begin(), src.begin() + int64_t(c.written),
              want.begin() + int64_t(int64_t(kMrOff) + c.off));
  EXPECT_TRUE(region_after == want) << "the responder's region: only the bytes written changed";
  if (c.op == IBV_WR_RDMA_READ) {
    std::vector<uint8_t> sink(kBuf, kGuard);
    std::copy(src.begin(), src.end(), sink.begin() + int64_t(kSrc));
    EXPECT_TRUE(sink_after == sink) << "a failed Read places nothing";
  }
}

TEST_F(Protection, WriteWithTheRkeyOfADeregisteredMr) {
  GuardCase c;
  c.before = GuardCase::Before::kDeregister;
  guard_case(c);
}

TEST_F(Protection, ReadWithTheRkeyOfADeregisteredMr) {
  GuardCase c;
  c.before = GuardCase::Before::kDeregister;
  c.op = IBV_WR_RDMA_READ;
  guard_case(c);
}

TEST_F(Protection, ReadOfAnInvalidatedStag) {
  GuardCase c;
  c.before = GuardCase::Before::kInvalidate;
  c.op = IBV_WR_RDMA_READ;
  guard_case(c);
}

// The memory is checked after this Write has completed (with its error).
TEST_F(Protection, WriteToAnInvalidatedStag) {
  GuardCase c;
  c.before = GuardCase::Before::kInvalidate;
  guard_case(c);
}

TEST_F(Protection, WriteStartingBeforeTheMrBase) {
  GuardCase c;
  c.off = -16;
  c.len = 64;
  guard_case(c);
}

TEST_F(Protection, WriteWhoseTaggedOffsetWraps) {
  GuardCase c;
  c.wrap = true;
  c.len = 64;
  guard_case(c);
}

// 8 KiB from 4000 bytes before the MR's end: two segments (2 × 1466 bytes) land, the third
// crosses the end and is rejected whole; nothing of it, nor past the end, is written.
TEST_F(Protection, MultiSegmentWriteCrossingTheMrEnd) {
  GuardCase c;
  c.off = int64_t(kMrLen) - 4000;
  c.len = 8192;
  c.written = 2 * 1466;
  guard_case(c);
}

// A zero-length RDMA Write places nothing, so its STag is not validated (as Linux siw's
// siw_proc_write returns before any check for a zero-length Write): it completes successfully
// even with the rkey of a deregistered MR, and nothing changes.
TEST_F(Protection, ZeroLengthWriteToAnInvalidStagSucceedsAndPlacesNothing) {
  GuardCase c;
  c.before = GuardCase::Before::kDeregister;
  c.len = 0;
  c.want = IBV_WC_SUCCESS;
  guard_case(c);
}

// One QP carries an RDMA Write and answers an RDMA Read of its peer at the same time: on the
// wire its tagged messages do not interleave (a Write's segments are not cut into by Read
// Responses, nor a Read Response by a Write), as Linux siw requires of a peer.
TEST_F(Protection, TaggedMessagesOfAQpDoNotInterleave) {
  constexpr uint32_t kMsg = 64 << 10;
  cl.run({[&] {
            const PeerInfo peer = open_a();
            oob.put(1, {});
            ibv_sge s{a.addr(), kMsg, a.mr->lkey};
            ibv_send_wr wr[2] = {rdma_write_wr(1, &s, 1, peer.addr, peer.rkey, false),
                                 rdma_write_wr(2, &s, 1, peer.addr + kMsg, peer.rkey, true)};
            wr[0].next = &wr[1];
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], wr, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
            oob.get(0);
          },
          [&] {
            const PeerInfo peer = open_b();
            oob.get(1);
            ibv_sge s{b.addr() + 2 * kMsg, kMsg, b.mr->lkey};
            ibv_send_wr wr = rdma_write_wr(3, &s, 1, peer.addr + 2 * kMsg, peer.rkey, true);
            wr.opcode = IBV_WR_RDMA_READ;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(b.qps[0], &wr, &bad), 0);
            EXPECT_EQ(wait_one(b.cq).status, IBV_WC_SUCCESS);
            oob.put(0, {});
          }});
  // node0's tagged frames in wire order: each message's segments back to back.
  int open = -1;  // the opcode of the tagged message in progress
  size_t writes = 0, responses = 0;
  for (const WireFrame& f : wire.frames) {
    if (!f.data() || !f.seg_ok || !f.seg.tagged || !f.from(cl.nodes[0]->mac)) continue;
    (f.opcode() == uint8_t(Opcode::kWrite) ? writes : responses)++;
    EXPECT_TRUE(open < 0 || open == f.opcode())
        << "a " << (open == 0 ? "Write" : "Read Response") << " cut into at " << f.t_ps << " ps";
    open = f.seg.last ? -1 : f.opcode();
  }
  EXPECT_EQ(writes, 2u * 45);  // 65536 / 1466 -> 45 segments each
  EXPECT_EQ(responses, 45u);
}

}  // namespace
}  // namespace rnic
