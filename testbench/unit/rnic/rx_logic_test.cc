// The RX engine's decision logic (RxLogic, rx_logic.h) driven directly, with no SystemC: for
// each kind of segment the checks in their order and the Terminate cause each failure gives
// (WIRE.md's error table, docs/errors.md), the translation each success asks for, and the
// receive bookkeeping the next segment is checked against.
#include "models/rnic/rx/rx_logic.h"

#include <gtest/gtest.h>

namespace rnic {
namespace {

using Kind = RxDecision::Kind;
using rdmap::Layer;
using rdmap::Opcode;

constexpr MacAddr kPeer{2, 0, 0, 0, 0, 1};
constexpr uint32_t kQp = 3;

QpCtx live_qp() {
  QpCtx q;
  q.valid = true;
  q.state = abi::kQpRts;
  q.pd = 7;
  q.peer_mac = kPeer;
  q.ird = 2;
  q.epoch = 1;
  q.access = access::kRemoteWrite | access::kRemoteRead;
  return q;
}

RxParseResult tagged(Opcode op, uint32_t stag, uint64_t to, uint32_t len, bool last = true) {
  RxParseResult p;
  p.ok = true;
  p.h.tagged = true;
  p.h.last = last;
  p.h.opcode = uint8_t(op);
  p.h.stag = stag;
  p.h.to = to;
  p.payload_len = len;
  return p;
}

RxParseResult send(uint32_t msn, uint32_t mo, uint32_t len, bool last, Opcode op = Opcode::kSend) {
  RxParseResult p;
  p.ok = true;
  p.h.tagged = false;
  p.h.last = last;
  p.h.opcode = uint8_t(op);
  p.h.qn = rdmap::kQnSend;
  p.h.msn = msn;
  p.h.mo = mo;
  p.h.inv_stag = 0x1234;
  p.payload_len = len;
  return p;
}

RxParseResult read_request(uint32_t msn, uint32_t size) {
  RxParseResult p;
  p.ok = true;
  p.h.tagged = false;
  p.h.last = true;
  p.h.opcode = uint8_t(Opcode::kReadRequest);
  p.h.qn = rdmap::kQnReadRequest;
  p.h.msn = msn;
  p.rr_ok = true;
  p.payload_len = rdmap::kReadRequestBytes;
  p.rr = {0x55, 0x8000, size, 0x99, 0x2000};  // sink STag, TO, size, source STag, TO
  return p;
}

Wqe recv_wqe(uint64_t id, uint32_t len) {
  Wqe w;
  w.wr_id = id;
  w.num_sge = 1;
  w.sge[0] = {0x10000, len, 0x42};
  return w;
}

void expect_fail(const RxDecision& d, Layer layer, uint8_t etype, uint8_t code) {
  ASSERT_EQ(d.kind, Kind::kFail);
  EXPECT_EQ(d.why.layer, layer);
  EXPECT_EQ(d.why.etype, etype);
  EXPECT_EQ(d.why.code, code);
}

// A segment for a QPN with no stream from its sender here is answered with a reset; one for a
// QP in ERROR (its peer was told) or too short to parse is dropped; a Terminate is never
// answered.
TEST(RxLogic, SegmentsForAQpnNotConnectedToTheirSenderAreReset) {
  RxLogic x(4);
  QpCtx q = live_qp();
  const RxParseResult w = tagged(Opcode::kWrite, 0x42, 0, 10);
  EXPECT_EQ(x.decide(kQp, q, MacAddr{2, 0, 0, 0, 0, 9}, w).kind, Kind::kReset);  // another peer
  EXPECT_EQ(x.decide(9, q, kPeer, w).kind, Kind::kReset);          // beyond the QP table
  EXPECT_EQ(x.decide(kQp, QpCtx{}, kPeer, w).kind, Kind::kReset);  // never created, destroyed
  q.state = abi::kQpReset;
  EXPECT_EQ(x.decide(kQp, q, kPeer, w).kind, Kind::kReset);
  q.state = abi::kQpInit;
  EXPECT_EQ(x.decide(kQp, q, kPeer, w).kind, Kind::kReset);
  EXPECT_EQ(x.decide(kQp, q, kPeer, send(1, 0, 10, true)).kind, Kind::kReset);
  q.state = abi::kQpRtr;  // RTR receives
  EXPECT_EQ(x.decide(kQp, q, kPeer, w).kind, Kind::kPlace);
  q.state = abi::kQpError;
  EXPECT_EQ(x.decide(kQp, q, kPeer, w).kind, Kind::kDrop);
  RxParseResult term = send(1, 0, 4, true, Opcode::kTerminate);
  term.h.qn = rdmap::kQnTerminate;
  EXPECT_EQ(x.decide(9, live_qp(), kPeer, term).kind, Kind::kDrop);
  EXPECT_EQ(x.decide(kQp, QpCtx{}, kPeer, term).kind, Kind::kDrop);
  RxParseResult short_seg;
  short_seg.dropped = true;
  EXPECT_EQ(x.decide(kQp, live_qp(), kPeer, short_seg).kind, Kind::kDrop);
  EXPECT_EQ(x.decide(9, live_qp(), kPeer, short_seg).kind, Kind::kDrop);
}

TEST(RxLogic, AHeaderThatFailsItsChecksFailsTheQpWithItsCause) {
  RxLogic x(4);
  RxParseResult p;
  p.why = {Layer::kDdp, 1, 0x06};
  const RxDecision d = x.decide(kQp, live_qp(), kPeer, p);
  expect_fail(d, Layer::kDdp, 1, 0x06);
  EXPECT_EQ(d.event, abi::kEvQpFatal);
}

// As Linux siw: a tagged message may not cut into another of the same QP (an RDMA Write's
// segments interrupted by a Read Response): RDMAP / 2 / 0x06.
TEST(RxLogic, ATaggedMessageMayNotCutIntoAnother) {
  RxLogic x(4);
  x.read_issued(kQp, {5, 0x7, 0x1000, 100, 1});
  ASSERT_EQ(x.decide(kQp, live_qp(), kPeer, tagged(Opcode::kWrite, 0x42, 0, 1466, false)).kind,
            Kind::kPlace);
  expect_fail(x.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1000, 100)),
              Layer::kRdmap, 2, 0x06);
  RxLogic y(4);
  y.read_issued(kQp, {5, 0x7, 0x1000, 100, 1});
  ASSERT_EQ(y.decide(kQp, live_qp(), kPeer, tagged(Opcode::kWrite, 0x42, 0, 1466, true)).kind,
            Kind::kPlace);  // the Write ended: a Read Response may follow
  EXPECT_EQ(y.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1000, 100)).kind,
            Kind::kPlace);
}

TEST(RxLogic, RdmaWriteAsksForItsTargetWithRemoteWrite) {
  RxLogic x(4);
  const RxDecision d = x.decide(kQp, live_qp(), kPeer, tagged(Opcode::kWrite, 0x42, 0x100, 64));
  ASSERT_EQ(d.kind, Kind::kPlace);
  EXPECT_FALSE(d.response);
  EXPECT_EQ(d.target.stag, 0x42u);
  EXPECT_EQ(d.target.to, 0x100u);
  EXPECT_EQ(d.target.len, 64u);
  EXPECT_EQ(d.target.access, access::kRemoteWrite);
  EXPECT_EQ(d.target.pd, 7u);
  EXPECT_FALSE(d.target.check_only);
  RxDecision f = d;
  x.xlat_failed(kQp, f, XlatStatus::kAccess);
  EXPECT_EQ(f.kind, Kind::kFail);
  EXPECT_EQ(f.event, abi::kEvQpAccessError);
  EXPECT_EQ(f.why.layer, Layer::kRdmap);  // a protection error (errors.h)
}

TEST(RxLogic, RemoteWritesAndReadsNeedTheQpsAccessRight) {
  RxLogic x(4);
  QpCtx q = live_qp();
  q.access = access::kRemoteRead;
  RxDecision d = x.decide(kQp, q, kPeer, tagged(Opcode::kWrite, 0x42, 0x100, 64));
  expect_fail(d, Layer::kRdmap, 1, 0x02);  // access rights violation, as for the MR's rights
  EXPECT_EQ(d.event, abi::kEvQpAccessError);
  EXPECT_EQ(x.decide(kQp, q, kPeer, tagged(Opcode::kWrite, 0x42, 0x100, 0)).kind, Kind::kPlace)
      << "a zero-length Write touches nothing";
  EXPECT_EQ(x.decide(kQp, q, kPeer, read_request(1, 100)).kind, Kind::kReadRequest);
  q.access = access::kRemoteWrite;
  d = x.decide(kQp, q, kPeer, read_request(2, 100));
  expect_fail(d, Layer::kRdmap, 1, 0x02);
  EXPECT_EQ(d.event, abi::kEvQpAccessError);
  x.read_issued(kQp, {5, 0x7, 0x1000, 10, 1});
  q.access = 0;  // the requester's own Read Responses need no remote right
  EXPECT_EQ(x.decide(kQp, q, kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1000, 10)).kind,
            Kind::kPlace);
}

TEST(RxLogic, ReadResponsesMatchTheOutboundRequestsInOrder) {
  RxLogic x(4);
  // None outstanding: DDP catastrophic (as siw).
  expect_fail(x.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1000, 100)),
              Layer::kDdp, 0, 0x00);
  RxLogic y(4), z(4), w(4);
  for (RxLogic* l : {&x, &y, &z, &w}) l->read_issued(kQp, {5, 0x7, 0x1000, 3000, 1});
  // Another sink STag: invalid STag; another offset, too long, or ending short: base or bounds.
  expect_fail(y.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x8, 0x1000, 100)),
              Layer::kDdp, 1, 0x00);
  expect_fail(z.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1010, 100)),
              Layer::kDdp, 1, 0x01);
  expect_fail(w.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1000, 100)),
              Layer::kDdp, 1, 0x01);  // the last segment, 2900 bytes short
  RxDecision d =
      x.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1000, 1000, false));
  ASSERT_EQ(d.kind, Kind::kPlace);
  EXPECT_TRUE(d.response);
  EXPECT_EQ(d.target.access, access::kLocalWrite);
  EXPECT_EQ(d.answered, -1);
  d = x.decide(kQp, live_qp(), kPeer, tagged(Opcode::kReadResponse, 0x7, 0x1000 + 1000, 2000));
  EXPECT_EQ(d.answered, 5);  // WR 5's request answered in full
  EXPECT_EQ(x.ord().size(kQp), 0u);
  x.xlat_failed(kQp, d, XlatStatus::kBounds);
  EXPECT_EQ(d.event, abi::kEvQpFatal);  // a bad sink of our own Read is not an access error
}

TEST(RxLogic, ReadRequestChecksMsnOffsetAndIrdThenChecksItsSource) {
  RxLogic x(4);
  expect_fail(x.decide(kQp, live_qp(), kPeer, read_request(2, 100)), Layer::kDdp, 2, 0x03);
  RxParseResult mo = read_request(1, 100);
  mo.h.mo = 4;
  expect_fail(x.decide(kQp, live_qp(), kPeer, mo), Layer::kDdp, 2, 0x04);
  // Not exactly 28 bytes in one segment: the stream is closed (layer LLP), as siw drops it.
  RxParseResult cut = read_request(1, 100);
  cut.rr_ok = false;
  cut.payload_len = 10;
  expect_fail(x.decide(kQp, live_qp(), kPeer, cut), Layer::kLlp, 0, 0x00);
  RxParseResult trailing = read_request(1, 100);
  trailing.payload_len = rdmap::kReadRequestBytes + 1;
  expect_fail(x.decide(kQp, live_qp(), kPeer, trailing), Layer::kLlp, 0, 0x00);
  RxParseResult not_last = read_request(1, 100);
  not_last.h.last = false;
  expect_fail(x.decide(kQp, live_qp(), kPeer, not_last), Layer::kLlp, 0, 0x00);
  RxDecision d = x.decide(kQp, live_qp(), kPeer, read_request(1, 100));
  ASSERT_EQ(d.kind, Kind::kReadRequest);
  EXPECT_TRUE(d.target.check_only);
  EXPECT_EQ(d.target.stag, 0x99u);
  EXPECT_EQ(d.target.access, access::kRemoteRead);
  EXPECT_EQ(d.rr.sink_stag, 0x55u);
  EXPECT_EQ(x.ird_used(kQp), 1u);
  EXPECT_EQ(x.decide(kQp, live_qp(), kPeer, read_request(2, 100)).kind, Kind::kReadRequest);
  expect_fail(x.decide(kQp, live_qp(), kPeer, read_request(3, 100)), Layer::kRdmap, 2, 0x07);
  x.ird_free(kQp);
  EXPECT_EQ(x.decide(kQp, live_qp(), kPeer, read_request(3, 100)).kind, Kind::kReadRequest);
  x.xlat_failed(kQp, d, XlatStatus::kInvalidStag);
  EXPECT_EQ(d.kind, Kind::kFail);
  EXPECT_EQ(d.event, abi::kEvQpAccessError);
}

TEST(RxLogic, SendsCheckMsnQueueOffsetAndLengthAndTakeTheirWqe) {
  RxLogic x(4);
  expect_fail(x.decide(kQp, live_qp(), kPeer, send(1, 0, 10, true)), Layer::kDdp, 2, 0x02);
  x.post(kQp, recv_wqe(10, 3000), 0);
  x.post(kQp, recv_wqe(11, 100), 1);
  expect_fail(x.decide(kQp, live_qp(), kPeer, send(2, 0, 10, true)), Layer::kDdp, 2, 0x03);
  expect_fail(x.decide(kQp, live_qp(), kPeer, send(1, 8, 10, true)), Layer::kDdp, 2, 0x04);
  RxDecision d = x.decide(kQp, live_qp(), kPeer, send(1, 0, 1466, false));
  ASSERT_EQ(d.kind, Kind::kSend);
  EXPECT_EQ(d.wqe.wqe.wr_id, 10u);
  EXPECT_EQ(d.mo, 0u);
  EXPECT_FALSE(d.has_wqe);
  EXPECT_EQ(x.recv().placed(kQp), 1466u);
  d = x.decide(kQp, live_qp(), kPeer, send(1, 1466, 1534, true, Opcode::kSendSeInvalidate));
  ASSERT_EQ(d.kind, Kind::kSend);
  EXPECT_TRUE(d.has_wqe);
  EXPECT_EQ(d.placed, 3000u);
  EXPECT_TRUE(d.invalidate);
  EXPECT_TRUE(d.solicited);
  EXPECT_EQ(d.inv_stag, 0x1234u);
  EXPECT_EQ(x.recv().send_msn(kQp), 2u);
  // The next message is longer than WQE 11: a local length error completes that WQE.
  const RxDecision f = x.decide(kQp, live_qp(), kPeer, send(2, 0, 101, true));
  expect_fail(f, Layer::kDdp, 2, 0x05);
  EXPECT_EQ(f.event, kNoAsyncEvent);
  EXPECT_EQ(f.recv_status, abi::kCqeLocLenError);
  ASSERT_TRUE(f.has_wqe);
  EXPECT_EQ(f.wqe.wqe.wr_id, 11u);
  EXPECT_TRUE(x.recv().empty(kQp));
}

TEST(RxLogic, AFailedSendTranslationCompletesTheWqeItWritesInto) {
  RxLogic x(4);
  x.post(kQp, recv_wqe(10, 3000), 0);
  RxDecision first = x.decide(kQp, live_qp(), kPeer, send(1, 0, 1000, false));
  x.xlat_failed(kQp, first, XlatStatus::kBounds);
  ASSERT_EQ(first.kind, Kind::kFail);
  EXPECT_EQ(first.recv_status, abi::kCqeLocProtError);
  ASSERT_TRUE(first.has_wqe);  // taken from the head of the RQ
  EXPECT_EQ(first.wqe.wqe.wr_id, 10u);
  EXPECT_EQ(first.placed, 1000u);
  EXPECT_TRUE(x.recv().empty(kQp));
  RxDecision inv = first;
  RxLogic::invalidate_failed(inv);
  expect_fail(inv, Layer::kRdmap, 2, 0x09);
  EXPECT_EQ(inv.recv_status, abi::kCqeRemOpError);
}

TEST(RxLogic, FlushAndResetStartTheReceiveStateOver) {
  RxLogic x(4);
  x.post(kQp, recv_wqe(10, 100), 0);
  x.post(kQp, recv_wqe(11, 100), 1);
  x.read_issued(kQp, {0, 0x7, 0x1000, 10, 1});
  ASSERT_EQ(x.decide(kQp, live_qp(), kPeer, read_request(1, 10)).kind, Kind::kReadRequest);
  const std::vector<RecvLogic::Entry> out = x.flush(kQp);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].wqe.wr_id, 11u);
  EXPECT_EQ(x.ord().size(kQp), 0u);
  EXPECT_EQ(x.ird_used(kQp), 0u);
  EXPECT_EQ(x.recv().read_msn(kQp), 2u);  // a flush keeps the MSNs
  x.reset(kQp, QpCtx::kNoSrq);
  EXPECT_EQ(x.recv().read_msn(kQp), 1u);
}

}  // namespace
}  // namespace rnic
