// The RX engine's receive state (RecvLogic, recv_queue.h), driven directly with no SystemC:
// WQEs in posting order, bytes placed into the oldest, the Send MSN advancing only when a
// message ends, the Read Request MSN, a flush (WQEs out, MSNs kept) and a reset; QPs bound to a
// shared receive queue claiming its WQEs one message at a time.
#include "models/rnic/rx/recv_queue.h"

#include <gtest/gtest.h>

namespace rnic {
namespace {

Wqe wqe(uint64_t id) {
  Wqe w;
  w.wr_id = id;
  return w;
}

TEST(RecvLogic, MessagesTakeWqesInOrder) {
  RecvLogic r(4);
  r.post(3, wqe(10), 0);
  r.post(3, wqe(11), 1);
  EXPECT_EQ(r.send_msn(3), 1u);
  r.place(3, 1000);
  r.place(3, 500);
  EXPECT_EQ(r.placed(3), 1500u);
  uint64_t bytes = 0;
  RecvLogic::Entry e = r.take(3, &bytes, true);
  EXPECT_EQ(e.wqe.wr_id, 10u);
  EXPECT_EQ(bytes, 1500u);
  EXPECT_EQ(r.placed(3), 0u);
  EXPECT_EQ(r.send_msn(3), 2u);
  e = r.take(3, &bytes, false);  // taken by an error: the MSN stays
  EXPECT_EQ(e.wqe.wr_id, 11u);
  EXPECT_EQ(e.index, 1u);
  EXPECT_EQ(r.send_msn(3), 2u);
  EXPECT_TRUE(r.empty(3));
  EXPECT_EQ(r.read_msn(3), 1u);
  r.read_accepted(3);
  EXPECT_EQ(r.read_msn(3), 2u);
  EXPECT_EQ(r.read_msn(2), 1u);  // per QP
}

TEST(RecvLogic, FlushKeepsMsnsResetDoesNot) {
  RecvLogic r(2);
  r.post(1, wqe(1), 0);
  r.post(1, wqe(2), 1);
  r.place(1, 64);
  uint64_t b;
  r.read_accepted(1);
  r.post(1, wqe(3), 2);
  (void)r.take(1, &b, true);
  const auto out = r.flush(1);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].wqe.wr_id, 2u);
  EXPECT_EQ(out[1].wqe.wr_id, 3u);
  EXPECT_TRUE(r.empty(1));
  EXPECT_EQ(r.send_msn(1), 2u);
  EXPECT_EQ(r.read_msn(1), 2u);
  r.reset(1);
  EXPECT_EQ(r.send_msn(1), 1u);
  EXPECT_EQ(r.read_msn(1), 1u);
}

// QPs 1 and 2 take from SRQ 3: each claims the SRQ's oldest WQE when a message starts on it, a
// message in progress keeps its WQE while the other QP claims the next, and a flush of one QP
// gives back only what it claimed.
TEST(RecvLogic, SrqWqesGoToTheQpWhoseMessageStartsFirst) {
  RecvLogic r(4);
  r.bind(1, 3);
  r.bind(2, 3);
  for (uint32_t i = 0; i < 4; ++i) r.post(3, wqe(100 + i), i);
  EXPECT_TRUE(r.empty(1));  // nothing claimed yet
  r.claim(1);
  ASSERT_FALSE(r.empty(1));
  EXPECT_EQ(r.front(1).wqe.wr_id, 100u);
  EXPECT_EQ(r.depth(3), 3u);
  r.place(1, 1000);  // QP 1's message in progress ...
  r.claim(1);        // ... keeps its WQE: nothing more is claimed
  EXPECT_EQ(r.depth(1), 1u);
  r.claim(2);  // QP 2's message takes the next one
  EXPECT_EQ(r.front(2).wqe.wr_id, 101u);
  EXPECT_EQ(r.front(2).index, 1u);
  uint64_t bytes = 0;
  EXPECT_EQ(r.take(2, &bytes, true).wqe.wr_id, 101u);  // QP 2 finishes first
  EXPECT_EQ(r.take(1, &bytes, true).wqe.wr_id, 100u);
  EXPECT_EQ(bytes, 1000u);
  r.claim(2);
  ASSERT_EQ(r.flush(2).size(), 1u);  // QP 2's claimed WQE (102) flushes with it ...
  EXPECT_EQ(r.depth(3), 1u);         // ... the SRQ keeps the rest
  r.claim(1);
  EXPECT_EQ(r.front(1).wqe.wr_id, 103u);
  r.reset(1);  // a reset unbinds
  EXPECT_EQ(r.srq(1), RecvLogic::kNoSrq);
  r.post(3, wqe(104), 4);
  r.claim(1);
  EXPECT_TRUE(r.empty(1));
  EXPECT_EQ(r.depth(3), 1u);
}

}  // namespace
}  // namespace rnic
