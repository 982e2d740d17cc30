// OrderedMutex (models/common/ordered_mutex.h) and the StepEnd it grants from: threads that ask
// at one time get the lock in the order of their names whatever order SystemC runs them in; an
// earlier request goes first; a grant takes no simulated time.
#include "models/common/ordered_mutex.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rnic {
namespace {

struct Got {
  std::string who;
  uint64_t at;
};

// Threads "t_b" and "t_a" ask at 1 ns ("t_b" is made first and so runs first), "t_0" at 2 ns
// while the lock is held; each holds it 5 ns. The order: t_a, t_b, t_0; t_a at once.
TEST(OrderedMutex, SameTimeRequestsGoInNameOrderThenByTime) {
  OrderedMutex m;
  std::vector<Got> got;
  auto user = [&](const char* name, int ask_ns) {
    sc_core::sc_spawn_options o;
    sc_core::sc_spawn(
        [&, name, ask_ns] {
          sc_core::wait(ask_ns, sc_core::SC_NS);
          m.lock();
          got.push_back({name, sc_core::sc_time_stamp().value()});
          sc_core::wait(5, sc_core::SC_NS);
          m.unlock();
        },
        name, &o);
  };
  user("t_b", 1);
  user("t_a", 1);
  user("t_0", 2);
  sc_core::sc_start();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].who, "t_a");
  EXPECT_EQ(got[0].at, 1000u) << "a grant takes no simulated time";
  EXPECT_EQ(got[1].who, "t_b") << "asked at 1 ns: before t_0, which asked at 2 ns";
  EXPECT_EQ(got[1].at, 6000u);
  EXPECT_EQ(got[2].who, "t_0");
  EXPECT_EQ(got[2].at, 11000u);
}

}  // namespace
}  // namespace rnic
