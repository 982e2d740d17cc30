// The RX engine's receive state (RecvLogic, recv_queue.h), driven directly with no SystemC:
// WQEs in posting order, bytes placed into the oldest, the Send MSN advancing only when a
// message ends, the Read Request MSN, a flush (WQEs out, MSNs kept) and a reset.
#include "models/rnic/recv_queue.h"

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

}  // namespace
}  // namespace rnic
