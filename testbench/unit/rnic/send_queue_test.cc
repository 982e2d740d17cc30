// The SQ engine's queue state (SendQueueLogic, send_queue.h), outside SystemC: in-order
// completion and the CQEs owed (signalled or failed WRs only), ORD and Read Responses in
// request order, a flush, and which WR a Terminate names.
#include "models/rnic/sq/send_queue.h"

#include <gtest/gtest.h>

namespace rnic {
namespace {

Wqe wqe(uint8_t op, uint64_t id, bool signaled, uint32_t len = 100) {
  Wqe w;
  w.opcode = op;
  w.wr_id = id;
  w.flags = signaled ? abi::kWqeSignaled : 0;
  w.num_sge = 1;
  w.sge[0] = {0x1000, len, 7};
  w.rkey = 0x55;
  w.remote_addr = 0x8000;
  return w;
}

// Issues the current WQE whole (as the SQ engine does when its last segment is out).
void issue(SendQueueLogic& s, uint32_t qpn) {
  SqEntry* e = s.current(qpn);
  ASSERT_NE(e, nullptr);
  e->checked = e->sent = true;
  s.advance(qpn);
}

TEST(SendQueueLogic, CompletesInOrderWithCqesOnlyWhereOwed) {
  SendQueueLogic s(2);
  s.post(1, wqe(abi::kOpRdmaWrite, 10, false), 0);
  s.post(1, wqe(abi::kOpSend, 11, true), 1);
  s.post(1, wqe(abi::kOpRdmaWrite, 12, true), 2);
  issue(s, 1);
  issue(s, 1);
  s.find(1, 1)->done = true;           // the second is acknowledged first
  EXPECT_TRUE(s.complete(1).empty());  // it waits for the first
  s.find(1, 0)->done = true;
  const std::vector<Cqe> c = s.complete(1);
  ASSERT_EQ(c.size(), 1u);  // the unsignalled Write completes without a CQE
  EXPECT_EQ(c[0].wr_id, 11u);
  EXPECT_EQ(c[0].opcode, abi::kCqeSend);
  EXPECT_EQ(c[0].wqe_index, 1u);
  EXPECT_EQ(c[0].byte_len, 100u);
  EXPECT_EQ(s.depth(1), 1u);
  s.find(1, 2)->done = true;  // done but not issued yet: it stays
  EXPECT_TRUE(s.complete(1).empty());
  EXPECT_EQ(s.find(1, 0), nullptr);
}

TEST(SendQueueLogic, OrdSlotsAndReadCompletion) {
  SendQueueLogic s(1);
  s.post(0, wqe(abi::kOpRdmaRead, 1, true, 3000), 0);
  EXPECT_TRUE(s.ready(0, 1));
  SqEntry* e = s.current(0);
  e->checked = true;
  s.read_issued(0, {0, 7, 0x1000, 3000, 1});
  EXPECT_EQ(e->reads_left, 1u);
  e->sent = true;
  s.advance(0);
  s.post(0, wqe(abi::kOpRdmaRead, 2, true), 1);
  s.current(0)->checked = true;
  EXPECT_FALSE(s.ready(0, 1));  // ORD 1 is taken
  EXPECT_TRUE(s.ready(0, 2));
  s.read_slot_free(0);  // its last response passed its checks: the slot is free
  EXPECT_EQ(s.reads_out(0), 0u);
  EXPECT_TRUE(s.ready(0, 1));
  EXPECT_FALSE(s.find(0, 0)->done);
  EXPECT_TRUE(s.read_placed(0, 0));   // placed: WR 0 is answered in full
  EXPECT_FALSE(s.read_placed(0, 0));  // and only once
}

TEST(OrdTable, ResponsesInRequestOrderEachInOrder) {
  OrdTable t(1);
  t.issued(0, {0, 7, 0x1000, 3000, 1});
  t.issued(0, {1, 9, 0x5000, 100, 2});
  EXPECT_FALSE(t.fits(0, 7, 0x1000 + 10, 100));  // not where the response stands
  EXPECT_FALSE(t.fits(0, 8, 0x1000, 100));       // another sink STag
  EXPECT_FALSE(t.fits(0, 9, 0x5000, 100));       // the second request's, before the first's
  EXPECT_TRUE(t.fits(0, 7, 0x1000, 1466));
  EXPECT_EQ(t.take(0, 1466, false), -1);
  EXPECT_FALSE(t.fits(0, 7, 0x1000 + 1466, 2000));  // longer than the request
  EXPECT_TRUE(t.fits(0, 7, 0x1000 + 1466, 1534));
  EXPECT_EQ(t.take(0, 1534, true), 0);  // request of WR 0 answered in full
  EXPECT_EQ(t.size(0), 1u);
  EXPECT_TRUE(t.fits(0, 9, 0x5000, 100));
  t.clear(0);
  EXPECT_FALSE(t.fits(0, 9, 0x5000, 100));
}

TEST(SendQueueLogic, FlushCompletesEverythingWithFlushStatus) {
  SendQueueLogic s(1);
  s.post(0, wqe(abi::kOpSend, 1, true), 0);
  s.post(0, wqe(abi::kOpSend, 2, false), 1);
  issue(s, 0);
  s.progress(0).off = 500;
  s.flush(0);
  EXPECT_EQ(s.progress(0).off, 0u);
  const std::vector<Cqe> c = s.complete(0);
  ASSERT_EQ(c.size(), 2u);  // a flushed WR gets its CQE, signalled or not
  EXPECT_EQ(c[0].status, abi::kCqeFlushed);
  EXPECT_EQ(c[1].wr_id, 2u);
  EXPECT_EQ(s.depth(0), 0u);
}

TEST(SendQueueLogic, TerminateNamesItsWr) {
  SendQueueLogic s(1);
  Wqe send = wqe(abi::kOpSend, 1, true);
  Wqe write = wqe(abi::kOpRdmaWrite, 2, true, 4000);
  s.post(0, send, 0);
  s.post(0, write, 1);
  s.post(0, wqe(abi::kOpRdmaRead, 3, true), 2);
  for (int i = 0; i < 3; ++i) issue(s, 0);
  s.find(0, 0)->msn = 4;
  s.read_issued(0, {2, 7, 0x1000, 100, 9});
  rdmap::Segment w;
  w.tagged = true;
  w.opcode = uint8_t(rdmap::Opcode::kWrite);
  w.stag = 0x55;
  w.to = 0x8000 + 2932;
  EXPECT_EQ(s.named_by_terminate(0, nullptr, &w)->index, 1u);
  rdmap::Segment sd;
  sd.tagged = false;
  sd.qn = rdmap::kQnSend;
  sd.msn = 4;
  EXPECT_EQ(s.named_by_terminate(0, nullptr, &sd)->index, 0u);
  rdmap::ReadRequest rr{7, 0x1000, 100, 0x55, 0x8000};
  EXPECT_EQ(s.named_by_terminate(0, &rr, nullptr)->index, 2u);
  rdmap::Segment rq;  // a Read Request's DDP header alone (no R): named by its MSN
  rq.tagged = false;
  rq.qn = rdmap::kQnReadRequest;
  rq.msn = 9;
  EXPECT_EQ(s.named_by_terminate(0, nullptr, &rq)->index, 2u);
  s.find(0, 0)->done = true;
  EXPECT_EQ(s.named_by_terminate(0, nullptr, nullptr)->index, 1u);  // the oldest not done
}

}  // namespace
}  // namespace rnic
