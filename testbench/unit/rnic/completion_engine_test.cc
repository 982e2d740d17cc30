// The completion engine's table and decisions (CompletionLogic, completion_engine.h), driven
// directly with no SystemC: create/destroy checks, slot addresses and the owner bit over ring
// wraps, overflow and what follows it, and arming (solicited-only, disarm on the event).
#include "models/rnic/completion/completion_engine.h"

#include <gtest/gtest.h>

namespace rnic {
namespace {

TEST(CompletionLogic, CreateAndDestroyAreChecked) {
  CompletionLogic t(4, 16);
  EXPECT_FALSE(t.create(4, 0x1000, 8));   // no such CQ
  EXPECT_FALSE(t.create(0, 0x1000, 0));   // empty ring
  EXPECT_FALSE(t.create(0, 0x1000, 17));  // above max_cqe
  EXPECT_TRUE(t.create(0, 0x1000, 16));
  EXPECT_FALSE(t.create(0, 0x2000, 8));  // in use
  EXPECT_TRUE(t.valid(0));
  EXPECT_TRUE(t.destroy(0));
  EXPECT_FALSE(t.destroy(0));
  EXPECT_FALSE(t.valid(0));
}

TEST(CompletionLogic, SlotsAndOwnerBitAcrossWraps) {
  CompletionLogic t(2, 64);
  ASSERT_TRUE(t.create(1, 0x10000, 4));
  for (uint32_t i = 0; i < 12; ++i) {
    uint64_t addr = 0;
    uint8_t owner = 9;
    ASSERT_EQ(t.post(1, &addr, &owner), CompletionLogic::Post::kWrite) << i;
    EXPECT_EQ(addr, 0x10000 + (i % 4) * kCqeBytes) << i;
    EXPECT_EQ(owner, (i / 4) % 2 == 0 ? 1 : 0) << i;  // 1 on the first pass, 0 on the second
    t.doorbell(1, i + 1, false, false);               // the library consumes it at once
  }
}

TEST(CompletionLogic, AFullRingOverflowsAndTakesNothingAfter) {
  CompletionLogic t(1, 64);
  ASSERT_TRUE(t.create(0, 0, 2));
  uint64_t a;
  uint8_t o;
  EXPECT_EQ(t.post(0, &a, &o), CompletionLogic::Post::kWrite);
  EXPECT_EQ(t.post(0, &a, &o), CompletionLogic::Post::kWrite);
  EXPECT_EQ(t.post(0, &a, &o), CompletionLogic::Post::kOverflow);
  t.doorbell(0, 2, false, false);  // consuming does not clear the error
  EXPECT_EQ(t.post(0, &a, &o), CompletionLogic::Post::kDropped);
  EXPECT_TRUE(t.cq(0).error);
  EXPECT_EQ(t.post(0 + 5, &a, &o), CompletionLogic::Post::kDropped);  // no such CQ
}

TEST(CompletionLogic, ArmingAndSolicitedOnly) {
  CompletionLogic t(1, 8);
  ASSERT_TRUE(t.create(0, 0, 8));
  EXPECT_FALSE(t.notify(0, false, false));  // not armed
  t.doorbell(0, 0, true, true);             // armed, solicited only
  EXPECT_FALSE(t.notify(0, false, false));  // an unsolicited success does not raise it
  EXPECT_TRUE(t.notify(0, false, true));    // an error does, and disarms
  EXPECT_FALSE(t.notify(0, true, false));
  t.doorbell(0, 0, true, false);
  EXPECT_TRUE(t.notify(0, false, false));
}

}  // namespace
}  // namespace rnic
