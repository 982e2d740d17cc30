// Ring (models/common/ring.h): first in, first out across the wrap of its array; its capacity
// is the depth asked for rounded up to a power of two; a push onto a full ring throws.
#include "models/common/ring.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace rnic {
namespace {

TEST(Ring, FirstInFirstOutAcrossTheWrap) {
  Ring<int> r(4);
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 10; ++round) {  // 3 in, 3 out: the indices wrap many times
    for (int i = 0; i < 3; ++i) r.push_back(next_in++);
    EXPECT_EQ(r.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      ASSERT_FALSE(r.empty());
      EXPECT_EQ(r.front(), next_out++);
      r.pop_front();
    }
    EXPECT_TRUE(r.empty());
  }
}

TEST(Ring, HoldsItsDepthRoundedUpToAPowerOfTwoAndRefusesMore) {
  Ring<int> r(5);  // 8 slots
  for (int i = 0; i < 8; ++i) r.push_back(i);
  EXPECT_EQ(r.size(), 8u);
  EXPECT_THROW(r.push_back(8), std::logic_error);
  EXPECT_EQ(r.front(), 0) << "a refused push changes nothing";
  r.clear();
  EXPECT_TRUE(r.empty());
  r.push_back(42);
  EXPECT_EQ(r.front(), 42);
}

}  // namespace
}  // namespace rnic
