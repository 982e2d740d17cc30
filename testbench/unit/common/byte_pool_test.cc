#include "models/common/byte_pool.h"

#include <gtest/gtest.h>

namespace rnic {
namespace {

// Empties the class that holds `bytes` of whatever earlier tests left there.
void drain(size_t bytes) {
  for (int i = 0; i < 300; ++i) take_bytes(bytes);
}

// A buffer given back is taken again by the next take of its size class, empty and with its room
// (no allocation); a take of another class does not get it; one with no room is not kept.
TEST(BytePool, ABufferGivenBackIsTakenAgainByItsSizeClass) {
  drain(1500);
  drain(100);
  Bytes a = take_bytes(1500);
  EXPECT_TRUE(a.empty());
  EXPECT_GE(a.capacity(), 1500u);
  a.assign(1400, 7);
  const uint8_t* mem = a.data();
  const size_t before = kept_bytes_buffers();
  give_bytes(std::move(a));
  give_bytes(Bytes{});
  EXPECT_EQ(kept_bytes_buffers(), before + 1);
  Bytes small = take_bytes(100);  // another class: a buffer of its own
  EXPECT_NE(small.data(), mem);
  Bytes b = take_bytes(1100);
  EXPECT_TRUE(b.empty());
  EXPECT_GE(b.capacity(), 1400u);
  EXPECT_EQ(b.data(), mem);
  EXPECT_EQ(kept_bytes_buffers(), before);
}

// A shared buffer's storage goes back when its last owner lets go, not before.
TEST(BytePool, ASharedBufferGoesBackWithItsLastOwner) {
  drain(2000);
  Bytes a = take_bytes(2000);
  a.assign(1800, 1);
  const uint8_t* mem = a.data();
  const size_t before = kept_bytes_buffers();
  std::shared_ptr<const Bytes> one = share_bytes(std::move(a));
  std::shared_ptr<const Bytes> two = one;
  EXPECT_EQ(one->size(), 1800u);
  one.reset();
  EXPECT_EQ(kept_bytes_buffers(), before);
  two.reset();
  EXPECT_EQ(kept_bytes_buffers(), before + 1);
  EXPECT_EQ(take_bytes(1900).data(), mem);
}

// A buffer past the largest class (64 KiB, which keeps buffers below 128 KiB) is not kept.
TEST(BytePool, LargeBuffersAreNotKept) {
  const size_t before = kept_bytes_buffers();
  Bytes big = take_bytes(200000);
  EXPECT_GE(big.capacity(), 200000u);
  give_bytes(std::move(big));
  EXPECT_EQ(kept_bytes_buffers(), before);
}

}  // namespace
}  // namespace rnic
