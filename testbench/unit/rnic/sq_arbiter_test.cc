// The SQ engine's arbitration (SqArbiter, sq_arbiter.h) driven directly, with no SystemC: the
// round robin over QPs with work, joining and leaving it, and each QP's alternation between its
// Read Responses and its SQ.
#include "models/rnic/sq/sq_arbiter.h"

#include <gtest/gtest.h>

namespace rnic {
namespace {

TEST(SqArbiter, RoundRobinOverQpsWithWork) {
  SqArbiter a(8);
  EXPECT_TRUE(a.empty());
  a.activate(5);
  a.activate(2);
  a.activate(5);  // already in: keeps its place
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.next(), 5u);
  a.requeue(5, true);  // more work: to the back
  EXPECT_EQ(a.next(), 2u);
  a.requeue(2, false);  // none: out
  EXPECT_EQ(a.next(), 5u);
  a.activate(2);  // back in, behind nobody
  a.requeue(5, true);
  EXPECT_EQ(a.next(), 2u);
  a.requeue(2, false);
  EXPECT_EQ(a.next(), 5u);
  a.requeue(5, false);
  EXPECT_TRUE(a.empty());
  a.activate(5);  // out, so it joins again
  EXPECT_EQ(a.size(), 1u);
}

TEST(SqArbiter, ResponsesAndSqTakeTurnsPerQp) {
  SqArbiter a(4);
  EXPECT_TRUE(a.responses_first(1));
  EXPECT_TRUE(a.responses_turn(1));  // read back without flipping
  EXPECT_FALSE(a.responses_first(1));
  EXPECT_FALSE(a.responses_turn(1));
  EXPECT_TRUE(a.responses_first(1));
  EXPECT_TRUE(a.responses_first(2));  // per QP
  a.reset(1);
  EXPECT_TRUE(a.responses_first(1));  // starts over
}

}  // namespace
}  // namespace rnic
