// Congestion control of one EFE channel (efe_cc.h), with no SystemC: the efe algorithm's window
// from its rate and the lowest RTT, its delay and ECE responses; DCQCN's reaction point as
// published (the cut by alpha / 2, alpha's moving average and decay, fast recovery, additive
// increase, the notification interval); off.
#include "models/efe/efe_cc.h"

#include <gtest/gtest.h>

#include <cmath>

namespace rnic::efe {
namespace {

constexpr uint64_t kUs = 1'000'000;  // ps

CcConfig config(CcAlgo a) {
  CcConfig c;
  c.algo = a;
  c.line_bps = 10e9;
  c.frame_bytes = 1480;
  return c;
}

TEST(CongestionControl, NamesParse) {
  CcAlgo a = CcAlgo::kOff;
  EXPECT_TRUE(parse_cc_algo("hpcc", &a));
  EXPECT_EQ(a, CcAlgo::kHpcc);
  EXPECT_TRUE(parse_cc_algo("dcqcn", &a));
  EXPECT_EQ(a, CcAlgo::kDcqcn);
  EXPECT_TRUE(parse_cc_algo("efe", &a));
  EXPECT_EQ(a, CcAlgo::kEfe);
  EXPECT_TRUE(parse_cc_algo("off", &a));
  EXPECT_EQ(a, CcAlgo::kOff);
  EXPECT_FALSE(parse_cc_algo("false", &a));
  EXPECT_FALSE(parse_cc_algo("timely", &a));
}

TEST(CongestionControl, OffIsLineRateWithoutAWindow) {
  CongestionControl cc(config(CcAlgo::kOff));
  cc.on_ece(10 * kUs, 10 * kUs);
  cc.on_rtt(20 * kUs, 500 * kUs);
  cc.on_timeout(30 * kUs);
  EXPECT_EQ(cc.rate(40 * kUs), 10e9);
  EXPECT_EQ(cc.window(), UINT64_MAX);
  EXPECT_FALSE(cc.probing());
}

TEST(CongestionControl, TheEfeWindowIsTheRateTimesTheLowestRttAndItsSlack) {
  CongestionControl cc(config(CcAlgo::kEfe));
  // Before a sample: line rate x 50 us = 62,500 B.
  EXPECT_EQ(cc.window(), 62500u);
  cc.on_rtt(100 * kUs, 10 * kUs);  // no queueing: stays at line rate
  EXPECT_EQ(cc.rate(100 * kUs), 10e9);
  EXPECT_EQ(cc.window(), 75000u);  // 10 Gb/s x 60 us
  // 100 us of queueing (above cc_high 50 us): x (1 - 0.5 (1 - 50/100)) = x 0.75.
  cc.on_rtt(120 * kUs, 110 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(120 * kUs), 7.5e9);
  // The queue (100 us) is deeper than the slack (50 us): the window lets 50/100 of the rate
  // through the 110 us round trip, 7.5 Gb/s x 110 us / 2 (where the slack alone would give
  // 7.5 Gb/s x 60 us = 56,250 B).
  EXPECT_EQ(cc.window(), 51562u);
  // A delay cut waits a round trip (the sample's RTT) after the last: the queue it drains shows
  // in the samples of that round trip.
  cc.on_rtt(200 * kUs, 110 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(200 * kUs), 7.5e9);
  cc.on_rtt(230 * kUs, 110 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(230 * kUs), 5.625e9);
  // ECE: half, once per round trip.
  cc.on_ece(300 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(300 * kUs), 2.8125e9);
  cc.on_ece(310 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(310 * kUs), 2.8125e9);
  cc.on_ece(321 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(321 * kUs), 1.40625e9);
  // Never below cc_min_fraction of line rate, nor a window below two frames.
  for (int i = 0; i < 20; ++i) cc.on_ece((400 + 30 * uint64_t(i)) * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(1100 * kUs), 1e8);
  EXPECT_EQ(cc.window(), 2960u);
}

// Behind one queue deeper than the window's slack, channels of different lowest RTTs at one rate
// get windows that let the same share of that rate through their round trips (lowest RTT +
// queue): slack / queue. The slack alone (rate x (lowest RTT + slack)) would let a far channel
// send a larger share of its rate than a near one.
TEST(CongestionControl, BehindADeepQueueTheWindowLetsTheSameShareThroughEveryRoundTrip) {
  CcConfig c = config(CcAlgo::kEfe);
  c.window_ps = 10 * kUs;
  c.low_ps = 200 * kUs;  // the queueing below keeps the rate where it is: the window alone moves
  c.high_ps = 400 * kUs;
  CongestionControl near(c), far(c);
  near.on_rtt(10 * kUs, 5 * kUs);  // lowest RTTs: 5 us and 45 us
  far.on_rtt(10 * kUs, 45 * kUs);
  ASSERT_EQ(near.rate(10 * kUs), far.rate(10 * kUs));
  // No queue: rate x (lowest RTT + 10 us).
  EXPECT_EQ(near.window(), 18750u);  // 10 Gb/s x 15 us
  EXPECT_EQ(far.window(), 68750u);   // 10 Gb/s x 55 us
  // 40 us of queue: each window is a quarter of rate x its round trip.
  near.on_rtt(20 * kUs, 45 * kUs);
  far.on_rtt(20 * kUs, 85 * kUs);
  ASSERT_EQ(near.rate(20 * kUs), far.rate(20 * kUs));
  EXPECT_EQ(near.window(), 14062u);  // 10 Gb/s x 45 us / 4
  EXPECT_EQ(far.window(), 26562u);   // 10 Gb/s x 85 us / 4
  const double near_share = double(near.window()) * 8e12 / 45e6 / near.rate(20 * kUs);
  const double far_share = double(far.window()) * 8e12 / 85e6 / far.rate(20 * kUs);
  EXPECT_NEAR(near_share, 0.25, 1e-4);  // (whole bytes)
  EXPECT_NEAR(far_share, 0.25, 1e-4);
}

// The additive step (1% of line rate here) is per base round trip (the lowest RTT + cc_low, 5
// us) or per ai_period, whichever is longer. Two channels of 2 and 5 us round trips (bases 7 and
// 10 us), out of slow start at 5 Gb/s, then sampled each round trip for 150 us with no queue:
// with a 15 us period both add ten steps; per round trip alone (period 0) the shorter one adds
// 150 / 7 steps and the other 15.
TEST(CongestionControl, ChannelsOfRoundTripsBelowTheAiPeriodGrowAlike) {
  auto grown = [](uint64_t period_ps, uint64_t rtt_ps) {
    CcConfig c = config(CcAlgo::kEfe);
    c.ai_period_ps = period_ps;
    CongestionControl cc(c);
    cc.on_rtt(10 * kUs, rtt_ps);          // the lowest RTT; line rate
    cc.on_ece(10 * kUs, double(rtt_ps));  // half, and slow start is over
    EXPECT_DOUBLE_EQ(cc.rate(10 * kUs), 5e9);
    for (uint64_t t = 10 * kUs + rtt_ps; t <= 160 * kUs; t += rtt_ps) cc.on_rtt(t, rtt_ps);
    return cc.rate(160 * kUs) - 5e9;
  };
  EXPECT_NEAR(grown(15 * kUs, 2 * kUs), 1e9, 1e3);
  EXPECT_NEAR(grown(15 * kUs, 5 * kUs), 1e9, 1e3);
  EXPECT_NEAR(grown(0, 2 * kUs), 1e8 * 150 / 7, 1e3);
  EXPECT_NEAR(grown(0, 5 * kUs), 1.5e9, 1e3);
}

// Utilisation stamps in a slow start from 1/16 of line rate (0.625 Gb/s), 10 us round trips, no
// queue: the path's room is the rate the stamped frame went at (before the last doubling) x 0.95
// / the stamp. While doubling stays below it the channel doubles; once a doubling would pass it,
// the slow start ends there (4.75 Gb/s, not the 5 that doubling gives), and the next sample adds
// the additive step (1% of line rate per 15 us, so 10 us of it) instead of doubling.
TEST(CongestionControl, AUtilisationStampEndsASlowStartAtThePathsRoom) {
  CcConfig c = config(CcAlgo::kEfe);
  c.start_fraction = 0.0625;
  CongestionControl cc(c);
  EXPECT_TRUE(cc.probing());
  cc.on_rtt(10 * kUs, 10 * kUs, -1, 0, 0.0);  // an idle path: double
  EXPECT_DOUBLE_EQ(cc.rate(10 * kUs), 1.25e9);
  cc.on_rtt(20 * kUs, 10 * kUs, -1, 0, 0.125);  // room for 0.625 x 7.6 = 4.75: double
  EXPECT_DOUBLE_EQ(cc.rate(20 * kUs), 2.5e9);
  cc.on_rtt(30 * kUs, 10 * kUs, -1, 0, 0.25);  // 1.25 x 3.8 = 4.75: the end of the slow start
  EXPECT_DOUBLE_EQ(cc.rate(30 * kUs), 4.75e9);
  cc.on_rtt(40 * kUs, 10 * kUs, -1, 0, 0.5);
  EXPECT_NEAR(cc.rate(40 * kUs), 4.75e9 + 1e8 * 10 / 15, 1e3);
  // Without stamps the same samples double to 5 Gb/s and on.
  CongestionControl blind(c);
  for (uint64_t t = 10; t <= 40; t += 10) blind.on_rtt(t * kUs, 10 * kUs);
  EXPECT_DOUBLE_EQ(blind.rate(40 * kUs), 10e9);
}

// A new channel on a path others already fill (a stamp of 1 or more) doubles as it would without
// stamps: its queue is what makes the others give way. A channel that has seen a stamp asks
// for an ACK once per round trip at line rate too, so that its stamps keep coming.
TEST(CongestionControl, AFullPathLeavesTheDoublingAndStampsKeepTheProbes) {
  CcConfig c = config(CcAlgo::kEfe);
  c.start_fraction = 0.0625;
  CongestionControl cc(c);
  cc.on_rtt(10 * kUs, 10 * kUs, -1, 0, 1.0);
  EXPECT_DOUBLE_EQ(cc.rate(10 * kUs), 1.25e9);
  cc.on_rtt(20 * kUs, 10 * kUs, -1, 0, 1.5);
  EXPECT_DOUBLE_EQ(cc.rate(20 * kUs), 2.5e9);
  c.start_fraction = 1;
  CongestionControl line(c), stamped(c);
  line.on_rtt(10 * kUs, 10 * kUs);
  stamped.on_rtt(10 * kUs, 10 * kUs, -1, 0, 0.9);
  EXPECT_FALSE(line.probing());
  EXPECT_TRUE(stamped.probing());
}

// HPCC (Algorithm 1 of the paper) on utilisation stamps, T = 10 us, line rate 10 Gb/s: W starts
// at line x T = 12,500 B, W_AI is 0.5% of that (62.5 B), eta 0.95. A stamp of 2 makes W =
// W_c x 0.95 / 2 + W_AI = 6,000 B (4.8 Gb/s), and W_c takes it (its first update). 5 us later a
// stamp of 0.5 weighs half (tau / T): U = 1.25, W = 6,000 x 0.95 / 1.25 + 62.5, but W_c stays
// (a round trip has not passed). Below eta W is W_c + W_AI, five times in a row (one per round
// trip); the sixth is multiplicative again: W_c x 0.95 / 0.5 + W_AI. ECE is not its signal.
TEST(CongestionControl, HpccMovesItsWindowByEtaOverTheUtilisation) {
  CongestionControl cc(config(CcAlgo::kHpcc));
  EXPECT_DOUBLE_EQ(cc.rate(0), 10e9);
  EXPECT_EQ(cc.window(), 62500u) << "before a sample: line rate x 50 us";
  EXPECT_TRUE(cc.probing());
  cc.on_rtt(10 * kUs, 10 * kUs);  // no stamp: line rate, W = line x T
  EXPECT_DOUBLE_EQ(cc.rate(10 * kUs), 10e9);
  EXPECT_EQ(cc.window(), 12500u);
  cc.on_rtt(20 * kUs, 10 * kUs, -1, 0, 2.0);
  EXPECT_EQ(cc.window(), 6000u);
  EXPECT_DOUBLE_EQ(cc.rate(20 * kUs), 4.8e9);
  cc.on_rtt(25 * kUs, 10 * kUs, -1, 0, 0.5);
  EXPECT_EQ(cc.window(), 4622u);
  cc.on_ece(26 * kUs, 10 * kUs);
  EXPECT_EQ(cc.window(), 4622u);
  cc.on_rtt(30 * kUs, 10 * kUs, -1, 0, 0.5);  // U = 0.875: additive, W_c updated
  EXPECT_EQ(cc.window(), 6062u);
  for (uint64_t t = 40; t <= 70; t += 10) cc.on_rtt(t * kUs, 10 * kUs, -1, 0, 0.5);
  EXPECT_EQ(cc.window(), 6312u);
  cc.on_rtt(80 * kUs, 10 * kUs, -1, 0, 0.5);
  EXPECT_EQ(cc.window(), 12056u);
  EXPECT_DOUBLE_EQ(cc.rate(80 * kUs), 12056.25 * 8e12 / (10 * kUs));
}

// A full frame's queueing is its RTT above the lowest RTT of full frames: store-and-forward hops
// add a full frame's time to its RTT, which a small frame's lowest RTT does not hold. Here the
// lowest RTT, 2 us, is a small frame's and full frames come back 6 us later (above cc_low, 5
// us): told the frames' sizes the channel stays at line rate; not told, it cuts.
TEST(CongestionControl, AFullFramesQueueingIsOverTheLowestRttOfFullFrames) {
  const CcConfig c = config(CcAlgo::kEfe);
  CongestionControl cc(c);
  cc.on_rtt(10 * kUs, 2 * kUs, -1, 10);
  cc.on_rtt(20 * kUs, 8 * kUs, -1, 1480);
  cc.on_rtt(30 * kUs, 8 * kUs, -1, 1480);
  EXPECT_DOUBLE_EQ(cc.rate(30 * kUs), 10e9);
  cc.on_rtt(40 * kUs, 68 * kUs, -1, 1480);  // 60 us above the full frames' lowest
  EXPECT_LT(cc.rate(40 * kUs), 10e9);
  CongestionControl blind(c);
  blind.on_rtt(10 * kUs, 2 * kUs);
  blind.on_rtt(20 * kUs, 8 * kUs);
  EXPECT_LT(blind.rate(20 * kUs), 10e9);
}

// With one_way the queueing delay is the forward path's, as the receiver measured it: an RTT
// inflated by the way back (100 us above the lowest) moves nothing when the forward queueing is
// 2 us; with rtt it cuts.
TEST(CongestionControl, OneWayDelayLeavesTheWayBackOut) {
  CcConfig c = config(CcAlgo::kEfe);
  c.one_way = true;
  CongestionControl one_way(c);
  one_way.on_rtt(10 * kUs, 10 * kUs, 0);
  one_way.on_rtt(20 * kUs, 110 * kUs, 2 * int64_t(kUs));
  EXPECT_EQ(one_way.rate(20 * kUs), 10e9);
  one_way.on_rtt(200 * kUs, 110 * kUs, 100 * int64_t(kUs));
  EXPECT_DOUBLE_EQ(one_way.rate(200 * kUs), 7.5e9);
  // No forward figure (the peer sends none): the RTT's.
  CongestionControl unknown(c);
  unknown.on_rtt(10 * kUs, 10 * kUs);
  unknown.on_rtt(20 * kUs, 110 * kUs);
  EXPECT_DOUBLE_EQ(unknown.rate(20 * kUs), 7.5e9);
  c.one_way = false;
  CongestionControl rtt(c);
  rtt.on_rtt(10 * kUs, 10 * kUs, 0);
  rtt.on_rtt(20 * kUs, 110 * kUs, 2 * int64_t(kUs));
  EXPECT_DOUBLE_EQ(rtt.rate(20 * kUs), 7.5e9);
}

// With ecn_dctcp an ECE cuts by alpha / 2, alpha the per-round-trip average (gain 1/16) of the
// fraction of echoes marked: 1 at first (a halving), then lower while few ACKs are marked.
TEST(CongestionControl, ADctcpEceCutFollowsTheMarkedFraction) {
  CcConfig c = config(CcAlgo::kEfe);
  c.ecn_dctcp = true;
  CongestionControl cc(c);
  cc.on_ece(10 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(10 * kUs), 5e9);
  // A round trip (20 us) of echoes, one in four marked: alpha = 15/16 + 1/16 x 1/4.
  for (uint64_t t = 40; t <= 60; t += 5) cc.on_echo(t * kUs, t == 45, 20 * kUs);
  const double alpha = 15.0 / 16 + 1.0 / 16 * 0.2;  // 1 of the 5 echoes (40..60 us) marked
  cc.on_ece(70 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(cc.rate(70 * kUs), 5e9 * (1 - alpha / 2));
  // Without ecn_dctcp the cut is ecn_beta whatever the echoes were.
  CongestionControl beta(config(CcAlgo::kEfe));
  for (uint64_t t = 40; t <= 60; t += 5) beta.on_echo(t * kUs, false, 20 * kUs);
  beta.on_ece(70 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(beta.rate(70 * kUs), 5e9);
}

TEST(CongestionControl, TheEfeLossCutIsOffByDefaultAndOncePerRoundTripWhenSet) {
  CongestionControl cc(config(CcAlgo::kEfe));
  cc.on_loss(10 * kUs, 20 * kUs);
  cc.on_timeout(20 * kUs);
  EXPECT_EQ(cc.rate(20 * kUs), 10e9);
  CcConfig c = config(CcAlgo::kEfe);
  c.loss_beta = 0.5;
  CongestionControl lossy(c);
  lossy.on_loss(10 * kUs, 20 * kUs);
  lossy.on_loss(20 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(lossy.rate(20 * kUs), 5e9);
  lossy.on_loss(31 * kUs, 20 * kUs);
  EXPECT_DOUBLE_EQ(lossy.rate(31 * kUs), 2.5e9);
}

TEST(CongestionControl, DcqcnCutsByHalfAlphaAndRecoversAsPublished) {
  const CcConfig c = config(CcAlgo::kDcqcn);
  CongestionControl cc(c);
  EXPECT_EQ(cc.window(), UINT64_MAX);
  EXPECT_EQ(cc.rate(0), 10e9);
  // The first notification: alpha is 1, the rate halves, alpha = (1 - g) + g = 1.
  cc.on_ece(100 * kUs, 0);
  EXPECT_DOUBLE_EQ(cc.rate(100 * kUs), 5e9);
  EXPECT_DOUBLE_EQ(cc.target_rate(), 10e9);
  EXPECT_DOUBLE_EQ(cc.alpha(), 1.0);
  // Another within the notification interval (50 us) is the same notification.
  cc.on_ece(140 * kUs, 0);
  EXPECT_DOUBLE_EQ(cc.rate(140 * kUs), 5e9);
  // Fast recovery: each timer period (55 us) halves the distance to the target rate; alpha
  // decays by (1 - g) each 55 us without a notification.
  EXPECT_DOUBLE_EQ(cc.rate(155 * kUs), 7.5e9);
  EXPECT_NEAR(cc.alpha(), 1 - 1.0 / 256, 1e-12);
  EXPECT_DOUBLE_EQ(cc.rate(210 * kUs), 8.75e9);
  // A notification at 220 us: the target is the current rate, the cut is by alpha / 2.
  const double a = cc.alpha();
  cc.on_ece(220 * kUs, 0);
  EXPECT_DOUBLE_EQ(cc.target_rate(), 8.75e9);
  EXPECT_DOUBLE_EQ(cc.rate(220 * kUs), 8.75e9 * (1 - a / 2));
  EXPECT_DOUBLE_EQ(cc.alpha(), (1 - c.g) * a + c.g);
  // After F = 5 fast-recovery steps, additive increase raises the target by R_AI per step.
  const double r0 = cc.rate(220 * kUs);
  double target = 8.75e9, rate = r0;
  for (int k = 1; k <= 7; ++k) {
    if (k > 5) target += c.rai_fraction * c.line_bps;
    rate = (target + rate) / 2;
    EXPECT_NEAR(cc.rate((220 + 55 * uint64_t(k)) * kUs), rate, 1) << "step " << k;
  }
  EXPECT_NEAR(cc.target_rate(), 8.75e9 + 2 * 1e7, 1);
  // Delay and loss are not DCQCN's signals.
  const double before = cc.rate(700 * kUs);
  cc.on_rtt(700 * kUs, 900 * kUs);
  cc.on_loss(700 * kUs, 10 * kUs);
  cc.on_timeout(700 * kUs);
  EXPECT_EQ(cc.rate(700 * kUs), before);
}

TEST(CongestionControl, DcqcnsByteCounterStepsTheRateToo) {
  CcConfig c = config(CcAlgo::kDcqcn);
  c.byte_counter = 150'000;
  CongestionControl cc(c);
  cc.on_ece(0, 0);
  EXPECT_DOUBLE_EQ(cc.rate(0), 5e9);
  cc.on_sent(1 * kUs, 149'999);
  EXPECT_DOUBLE_EQ(cc.rate(1 * kUs), 5e9);
  cc.on_sent(2 * kUs, 1);  // the counter's first step: fast recovery
  EXPECT_DOUBLE_EQ(cc.rate(2 * kUs), 7.5e9);
}

}  // namespace
}  // namespace rnic::efe
