// The bandwidth tests' peak (bw_peak.h): the same least time per message as the quadratic
// definition on random schedules, and never faster than the messages could have been carried.
#include "sim/traffic/bw_peak.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace rnic::traffic {
namespace {

double brute(const std::vector<double>& p, const std::vector<double>& c) {
  double best = 1e300, done = -1e300;
  for (size_t j = 0; j < p.size(); ++j) {
    done = std::max(done, c[j]);
    for (size_t i = 0; i <= j; ++i) best = std::min(best, (done - p[i]) / double(j - i + 1));
  }
  return best;
}

TEST(BwPeak, SameAsTheQuadraticDefinitionOnRandomSchedules) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 1 + rng() % 200;
    std::vector<double> p(n), c(n);
    double t = 0;
    for (size_t k = 0; k < n; ++k) {
      t += double(rng() % 1000) / 100.0;  // posts, some at the same time
      p[k] = t;
      c[k] = t + 1 + double(rng() % 5000) / 100.0;
    }
    EXPECT_NEAR(best_time_per_message(p, c), brute(p, c), 1e-9 * (1 + brute(p, c))) << trial;
  }
}

// Two QPs, all posted at 0: QP A's 10 messages complete at 1..10 us, QP B's (interleaved in
// posting order) only at 100 us. perftest's window 0..1 would count two messages in 1 us; here a
// window ends only when every message before its end has completed.
TEST(BwPeak, AWindowEndsWhenEveryEarlierMessageHasCompleted) {
  std::vector<double> p(20, 0.0), c(20);
  for (size_t k = 0; k < 20; ++k) c[k] = k % 2 == 0 ? double(k / 2 + 1) : 100.0;
  EXPECT_DOUBLE_EQ(best_time_per_message(p, c), 1.0);  // message 0 alone, done at 1 us
  c.assign(20, 100.0);
  EXPECT_DOUBLE_EQ(best_time_per_message(p, c), 5.0);  // all 20 in 100 us
}

}  // namespace
}  // namespace rnic::traffic
