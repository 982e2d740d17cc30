// Channel (models/common/channel.h): a message reaches the receiver's handler at its time, in
// the receiver's event queue (not inside the sender), in sending order at equal times; the depth
// bound is enforced and the deepest occupancy kept.
#include "models/common/channel.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace rnic {
namespace {

struct Receiver : sc_core::sc_module {
  EventQueue eq{"eq"};
  Channel<int> in{"rx.in", 3};
  std::vector<std::pair<int, uint64_t>> got;
  explicit Receiver(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    in.bind(eq, [this](int&& v) { got.push_back({v, now_ps()}); });
  }
};

TEST(Channel, DeliversAtItsTimeInOrderAndKeepsItsDepth) {
  Receiver rx("rx");
  EventQueue tx("tx");
  bool overflowed = false;
  size_t seen_in_sender = 0;
  tx.at(1000, [&] {
    rx.in.send(1);
    rx.in.send(2);
    seen_in_sender = rx.got.size();  // not delivered inside the sender
    rx.in.send(3, 5000);
    try {
      rx.in.send(4);
    } catch (const std::logic_error&) {
      overflowed = true;
    }
  });
  tx.at(2000, [&] { rx.in.send(5, 1500); });  // a time in the past: now
  sc_core::sc_start(10, sc_core::SC_US);
  EXPECT_EQ(seen_in_sender, 0u);
  EXPECT_TRUE(overflowed);
  ASSERT_EQ(rx.got.size(), 4u);
  EXPECT_EQ(rx.got[0], std::make_pair(1, uint64_t(1000)));
  EXPECT_EQ(rx.got[1], std::make_pair(2, uint64_t(1000)));
  EXPECT_EQ(rx.got[2], std::make_pair(5, uint64_t(2000)));
  EXPECT_EQ(rx.got[3], std::make_pair(3, uint64_t(5000)));
  EXPECT_EQ(rx.in.max_in_flight(), 3u);
  EXPECT_EQ(rx.in.in_flight(), 0u);
  EXPECT_EQ(rx.in.sent(), 4u);
}

}  // namespace
}  // namespace rnic
