// Ring (models/common/ring.h): first in, first out across the wrap of its array; its capacity
// is the depth asked for rounded up to a power of two; a push onto a full ring throws. GrowRing
// keeps its order as it grows.
#include "models/common/ring.h"

#include <gtest/gtest.h>

#include <deque>
#include <stdexcept>
#include <vector>

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

// GrowRing keeps its order when it grows with its contents wrapped round its array, and indexes
// from the front.
TEST(GrowRing, KeepsItsOrderAcrossWrapsAndGrowth) {
  GrowRing<std::vector<int>> r;
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 40;
       ++round) {  // one more in than out each round: grows while wrapped
    for (int i = 0; i < 3; ++i) r.push_back(std::vector<int>{next_in++});
    for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(r[i].at(0), next_out + int(i));
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(r.front().at(0), next_out++);
      r.pop_front();
    }
  }
  EXPECT_EQ(r.size(), 40u);
  while (!r.empty()) {
    EXPECT_EQ(r.front().at(0), next_out++);
    r.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

// insert, take and drop keep the others' order, wrapped round the array or not, across growth:
// the PCIe link's queue puts a TLP behind same-delta ones and takes one that passes a blocked
// one. A slot filled in place (emplace_back) or left by drop_front holds what it is given.
TEST(GrowRing, InsertAndTakeInTheMiddleKeepTheOthersInOrder) {
  GrowRing<std::vector<int>> r;
  std::deque<int> ref;
  uint32_t x = 12345;
  int next = 0;
  for (int step = 0; step < 2000; ++step) {
    x = x * 1103515245u + 12345u;
    const uint32_t op = (x >> 16) % 7;
    if (op < 2 || ref.empty()) {
      const size_t at = ref.empty() ? 0 : (x >> 8) % (ref.size() + 1);
      r.insert(at, std::vector<int>{next});
      ref.insert(ref.begin() + int64_t(at), next++);
    } else if (op == 2) {
      r.emplace_back() = std::vector<int>{next};
      ref.push_back(next++);
    } else if (op == 3) {
      const size_t at = (x >> 8) % ref.size();
      ASSERT_EQ(r.take(at).at(0), ref[at]);
      ref.erase(ref.begin() + int64_t(at));
    } else if (op == 4) {
      const size_t at = (x >> 8) % ref.size();
      r.drop(at);
      ref.erase(ref.begin() + int64_t(at));
    } else if (op == 5) {
      r.drop_front();
      ref.pop_front();
    } else {
      ASSERT_EQ(r.take_front().at(0), ref.front());
      ref.pop_front();
    }
    ASSERT_EQ(r.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(r[i].at(0), ref[i]) << "step " << step;
  }
}

}  // namespace
}  // namespace rnic
