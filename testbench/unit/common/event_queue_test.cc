// EventQueue (models/common/event_queue.h): actions run at their times; the alarm runs after
// the actions due at its time; moving the alarm later or cancelling it leaves every action
// queued behind it on time (an action due after the alarm is woken by the alarm's own run, so
// the wake-up must survive the alarm going away).
#include "models/common/event_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace rnic {
namespace {

struct Log {
  std::vector<std::pair<char, uint64_t>> v;
  void add(char c) { v.push_back({c, now_ps()}); }
};

TEST(EventQueue, TheAlarmRunsAfterTheActionsDueAtItsTime) {
  EventQueue q("q"), drv("drv");
  Log log;
  drv.at(1000, [&] {
    q.set_alarm(5000, [&] { log.add('A'); });
    q.at(5000, [&] { log.add('a'); });
    q.at(7000, [&] { log.add('b'); });
  });
  sc_core::sc_start(20, sc_core::SC_NS);
  const std::vector<std::pair<char, uint64_t>> want{{'a', 5000}, {'A', 5000}, {'b', 7000}};
  EXPECT_EQ(log.v, want);
}

TEST(EventQueue, AnAlarmMovedLaterOrCancelledLeavesLaterActionsOnTime) {
  EventQueue q("q"), drv("drv");
  Log log;
  drv.at(1000, [&] {
    q.set_alarm(2000, [&] { log.add('A'); });
    q.at(3000, [&] { log.add('a'); });         // after the alarm: the alarm's run would wake it
    q.set_alarm(9000, [&] { log.add('B'); });  // moved past it
  });
  drv.at(10000, [&] {
    q.set_alarm(11000, [&] { log.add('C'); });
    q.at(12000, [&] { log.add('b'); });
    q.cancel_alarm();
  });
  sc_core::sc_start(20, sc_core::SC_NS);
  const std::vector<std::pair<char, uint64_t>> want{{'a', 3000}, {'B', 9000}, {'b', 12000}};
  EXPECT_EQ(log.v, want);
}

}  // namespace
}  // namespace rnic
