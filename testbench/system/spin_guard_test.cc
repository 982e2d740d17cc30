// A host program that loops without spending simulated time holds the simulator's only thread:
// the guard (sim.spin_guard_s of the simulation's CPU time) stops the run with exit 3 and one line
// naming the host thread and how to wait instead (docs/verbs.md, "Time").
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "models/host/verbs/verbs.h"
#include "sim/cluster.h"
#include "sim/host_card.h"

namespace rnic {
namespace {

void spin_forever(double guard_s) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.sim.spin_guard_s = guard_s;
  StatRegistry stats;
  Cluster cl(cfg, stats);
  cl.run({[&] {
            void* flag = rnic_malloc(64);
            uint8_t v = 0;
            while (v != 1) rnic_mem_read(flag, &v, 1);  // nobody ever writes it
          },
          [&] { rnic_spend_ns(1000); }});
}

TEST(SpinGuardDeathTest, AProgramPollingMemoryWithoutWaitingStopsTheRun) {
  EXPECT_EXIT(spin_forever(1.0), ::testing::ExitedWithCode(3),
              "host thread '[^']+' ran 1 s of CPU time.*without spending any.*rnic_wait_mem");
}

// A spin outside a host program's thread (a built-in experiment's, here a thread of the one-host
// system the experiments use) is named as rnicsim's own, not blamed on a program's loop.
void spin_in_an_experiment() {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.sim.spin_guard_s = 1.0;
  StatRegistry stats;
  HostCard sys(cfg, stats);
  run_host_thread(sys, "experiment", [] {
    volatile uint64_t n = 0;
    for (;;) n = n + 1;
  });
}

TEST(SpinGuardDeathTest, ASpinOutsideAProgramIsRnicsimsOwn) {
  EXPECT_EXIT(spin_in_an_experiment(), ::testing::ExitedWithCode(3),
              "'[^']*experiment' ran 1 s of CPU time.*rnicsim's own code, not a program of yours");
}

// The guard only watches: a run that advances simulated time is untouched by it.
TEST(SpinGuard, ARunThatWaitsIsNotStopped) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.sim.spin_guard_s = 0.5;
  StatRegistry stats;
  Cluster cl(cfg, stats);
  cl.run({[&] {
    for (int i = 0; i < 20; ++i) {
      rnic_spend_ns(1'000'000);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // 1 s of wall time in all
    }
  }});
  SUCCEED();
}

}  // namespace
}  // namespace rnic
