// The TCP engine's decisions (models/tcp/tcp_logic.h): windows, loss recovery, the
// retransmission timer, ECN and DCTCP on the sender; delivery, SACK and ACK timing on the
// receiver.
#include "models/tcp/tcp_logic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace rnic::tcp {
namespace {

constexpr uint32_t kMss = 1000;
constexpr uint64_t kUs = 1'000'000;  // ps

TcpLogicConfig config() {
  TcpLogicConfig c;
  c.mss = kMss;
  c.rcv_buffer = 1 << 20;
  return c;
}

// Sends whatever the windows allow at `now`; returns the segments sent.
std::vector<TcpSender::Tx> pump(TcpSender& s, uint64_t now) {
  std::vector<TcpSender::Tx> out;
  while (auto t = s.next()) {
    s.sent(*t, now);
    out.push_back(*t);
  }
  return out;
}

// A sender with n segments of kMss queued and what its windows allow of them sent at 0.
TcpSender sender(int n, const TcpLogicConfig& c = config(), uint32_t iss = 0) {
  TcpSender s(c, iss);
  for (int i = 0; i < n; ++i) s.queue(kMss);
  pump(s, 0);
  return s;
}

TcpSender::Ack ack(uint32_t a, std::vector<SackBlock> sack = {}, bool ece = false) {
  TcpSender::Ack k;
  k.ack = a;
  k.window = 1 << 20;
  k.sack = std::move(sack);
  k.ece = ece;
  return k;
}

TEST(TcpSender, InitialWindowThenSlowStartByBytesAcknowledged) {
  TcpSender s(config(), 0);
  for (int i = 0; i < 40; ++i) s.queue(kMss);
  EXPECT_EQ(pump(s, 0).size(), 10u);  // RFC 6928
  EXPECT_EQ(s.in_flight(), 10 * kMss);
  // One segment acknowledged: cwnd grows by it, so two more go.
  EXPECT_EQ(s.on_ack(ack(kMss), 10 * kUs), kMss);
  EXPECT_EQ(s.cwnd(), 11u * kMss);
  EXPECT_EQ(pump(s, 10 * kUs).size(), 2u);
  // A stretch ACK of five segments grows cwnd by two at most (RFC 3465, L = 2).
  s.on_ack(ack(6 * kMss), 11 * kUs);
  EXPECT_EQ(s.cwnd(), 13u * kMss);
}

TEST(TcpSender, PeerWindowBoundsWhatIsSent) {
  TcpSender s = sender(10);
  TcpSender::Ack a = ack(kMss);
  a.window = 3 * kMss;  // the peer takes three segments beyond una
  s.on_ack(a, 1);
  EXPECT_TRUE(pump(s, 1).empty());  // nine sent, una + 3 is already passed
  a = ack(10 * kMss);
  a.window = 3 * kMss;
  for (int i = 0; i < 10; ++i) s.queue(kMss);
  s.on_ack(a, 2);
  EXPECT_EQ(pump(s, 2).size(), 3u);
}

TEST(TcpSender, RetransmissionTimerFollowsRfc6298AndBacksOff) {
  TcpSender s(config(), 0);
  EXPECT_EQ(s.rto(), 1000 * kUs);  // before any sample
  s.queue(kMss);
  pump(s, 0);
  s.on_ack(ack(kMss), 100 * kUs);  // R = 100 us: SRTT 100, RTTVAR 50, RTO = 100 + 4 x 50
  EXPECT_EQ(s.srtt(), 100 * kUs);
  EXPECT_EQ(s.rto(), 300 * kUs);
  s.queue(kMss);
  pump(s, 200 * kUs);
  EXPECT_EQ(s.rto_deadline(), 500 * kUs);
  // R = 20 us: RTTVAR = 3/4 x 50 + 1/4 x 80 = 57.5, SRTT = 7/8 x 100 + 1/8 x 20 = 90.
  s.on_ack(ack(2 * kMss), 220 * kUs);
  EXPECT_EQ(s.srtt(), 90 * kUs);
  EXPECT_EQ(s.rto(), 90 * kUs + 4 * 57'500'000);
  // Small, steady samples: the RTO stays at the 200 us floor.
  for (uint32_t i = 2; i < 40; ++i) {
    s.queue(kMss);
    pump(s, i * 1000 * kUs);
    s.on_ack(ack((i + 1) * kMss), i * 1000 * kUs + 10 * kUs);
  }
  EXPECT_EQ(s.rto(), 200 * kUs);
  // Expiries double it; the window falls to one segment and the segment goes again.
  s.queue(kMss);
  pump(s, 100'000 * kUs);
  ASSERT_TRUE(s.on_rto(100'200 * kUs));
  EXPECT_EQ(s.rto(), 400 * kUs);
  EXPECT_EQ(s.cwnd(), kMss);
  const auto again = pump(s, 100'200 * kUs);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_TRUE(again[0].retransmit);
  EXPECT_EQ(again[0].seq, 40 * kMss);
  ASSERT_TRUE(s.on_rto(100'600 * kUs));
  EXPECT_EQ(s.rto(), 800 * kUs);
  // Karn: the acknowledgement of a retransmitted segment gives no sample.
  const uint64_t srtt = s.srtt();
  pump(s, 100'600 * kUs);
  s.on_ack(ack(41 * kMss), 150'000 * kUs);
  EXPECT_EQ(s.srtt(), srtt);
  EXPECT_EQ(s.rto_deadline(), UINT64_MAX);
}

TEST(TcpSender, RetryBudgetInTime) {
  TcpLogicConfig c = config();
  c.retry_budget_ps = 10'000 * kUs;
  TcpSender s(c, 0);
  s.queue(kMss);
  pump(s, 0);
  uint64_t t = 0;
  int expiries = 0;
  while (s.on_rto(t = s.rto_deadline())) {
    pump(s, t);
    ++expiries;
  }
  // Expiries at 1, 3 and 7 ms (the RTO doubling from 1 ms); the one at 15 ms is 14 ms after
  // the first, past the 10 ms budget.
  EXPECT_EQ(expiries, 3);
  EXPECT_EQ(t, 15'000 * kUs);
}

TEST(TcpSender, FastRetransmitWithSack) {
  TcpSender s = sender(10);
  // Segment 0 is lost; 1, 2, 3 arrive: three duplicate ACKs with growing SACK blocks.
  for (uint32_t k = 2; k <= 4; ++k) {
    s.on_ack(ack(0, {{kMss, k * kMss}}), 10 * kUs);
  }
  EXPECT_TRUE(s.in_recovery());
  EXPECT_EQ(s.ssthresh(), 3500u);  // half of the 7 segments in flight
  const auto tx = pump(s, 10 * kUs);
  ASSERT_FALSE(tx.empty());
  EXPECT_TRUE(tx[0].retransmit);
  EXPECT_EQ(tx[0].seq, 0u);
  // The SACKed segments never go again; the full ACK ends recovery at ssthresh.
  for (const auto& t : tx) EXPECT_FALSE(t.retransmit && t.seq != 0) << t.seq;
  s.on_ack(ack(s.nxt()), 20 * kUs);
  EXPECT_FALSE(s.in_recovery());
  EXPECT_EQ(s.cwnd(), 3500u);
  EXPECT_EQ(s.retransmits(), 1u);
}

// Segment 0 is lost and 1..3 SACKed; its fast retransmission fills the hole, but the ACK that
// covers all four is lost too: the timer expires with every outstanding segment SACKed. The
// timeout forgets the SACK information, so segment 1 goes again and the receiver's answer (a
// cumulative ACK of all) ends it; kept, nothing would be resent and the timer would expire
// until the retry budget failed the connection.
TEST(TcpSender, ATimeoutForgetsSackAndResendsWhatWasSacked) {
  TcpSender s = sender(4);
  for (uint32_t k = 2; k <= 4; ++k) s.on_ack(ack(0, {{kMss, k * kMss}}), 10 * kUs);
  auto tx = pump(s, 10 * kUs);
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx[0].seq, 0u);
  s.on_ack(ack(kMss, {{kMss, 4 * kMss}}), 20 * kUs);  // a partial ACK: segment 0 is in
  ASSERT_TRUE(s.outstanding());
  ASSERT_TRUE(s.on_rto(s.rto_deadline()));
  tx = pump(s, s.rto_deadline());
  ASSERT_FALSE(tx.empty()) << "the timeout resends";
  EXPECT_EQ(tx[0].seq, kMss);
  EXPECT_TRUE(tx[0].retransmit);
  s.on_ack(ack(4 * kMss), s.rto_deadline());
  EXPECT_FALSE(s.outstanding());
}

TEST(TcpSender, AWindowUpdateIsNoDuplicateAck) {
  TcpLogicConfig c = config();
  c.sack = false;
  TcpSender s = sender(10, c);
  for (uint32_t w = 1; w <= 3; ++w) {
    TcpSender::Ack a = ack(0);
    a.window = (1 << 20) + w * kMss;  // the receiver opened its window: not a sign of loss
    s.on_ack(a, w);
  }
  EXPECT_FALSE(s.in_recovery());
  EXPECT_EQ(s.retransmits(), 0u);
}

TEST(TcpSender, NewRenoPartialAckResendsTheNextHole) {
  TcpLogicConfig c = config();
  c.sack = false;
  TcpSender s = sender(10, c);
  // Segments 0 and 4 are lost.
  for (int i = 0; i < 3; ++i) s.on_ack(ack(0), 10 * kUs);
  ASSERT_TRUE(s.in_recovery());
  auto tx = pump(s, 10 * kUs);
  ASSERT_FALSE(tx.empty());
  EXPECT_EQ(tx[0].seq, 0u);
  EXPECT_TRUE(tx[0].retransmit);
  // Segment 0's resend fills the first hole: the ACK stops at the second, a partial ACK.
  s.on_ack(ack(4 * kMss), 20 * kUs);
  EXPECT_TRUE(s.in_recovery());
  tx = pump(s, 20 * kUs);
  ASSERT_FALSE(tx.empty());
  EXPECT_EQ(tx[0].seq, 4 * kMss);
  EXPECT_TRUE(tx[0].retransmit);
  s.on_ack(ack(10 * kMss), 30 * kUs);
  EXPECT_FALSE(s.in_recovery());
}

TEST(TcpSender, EcnHalvesOnceARoundTripAndSendsCwr) {
  TcpSender s = sender(40);
  s.on_ack(ack(kMss, {}, true), 10 * kUs);  // cwnd 10 -> halved to 5 segments
  EXPECT_EQ(s.cwnd(), 5u * kMss);
  s.on_ack(ack(2 * kMss, {}, true), 11 * kUs);  // the same round trip: no second cut
  EXPECT_EQ(s.cwnd(), 5u * kMss);  // congestion avoidance: no growth before a window is acked
  EXPECT_TRUE(pump(s, 11 * kUs).empty());  // 8 segments in flight
  s.on_ack(ack(6 * kMss), 12 * kUs);       // 5 segments acknowledged since the cut: cwnd 6
  EXPECT_EQ(s.cwnd(), 6u * kMss);
  const auto tx = pump(s, 12 * kUs);
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_TRUE(tx[0].cwr);
  for (size_t i = 1; i < tx.size(); ++i) EXPECT_FALSE(tx[i].cwr);
}

TEST(TcpSender, DctcpAlphaFollowsTheMarkedFraction) {
  TcpLogicConfig c = config();
  c.dctcp = true;
  TcpSender s(c, 0);
  EXPECT_DOUBLE_EQ(s.alpha(), 1.0);
  for (int i = 0; i < 8; ++i) s.queue(kMss);
  pump(s, 0);
  // The first ACK closes the first window (nothing was outstanding when it began): no mark, so
  // alpha = 15/16 alpha; the next window is what is outstanding now, to 8 segments.
  s.on_ack(ack(4 * kMss), 1);
  EXPECT_DOUBLE_EQ(s.alpha(), 15.0 / 16);
  EXPECT_EQ(s.cwnd(), 12u * kMss);  // slow start
  s.on_ack(ack(6 * kMss, {}, true), 2);
  EXPECT_DOUBLE_EQ(s.alpha(), 15.0 / 16);  // the window is not over
  const uint64_t cwnd = s.cwnd();
  EXPECT_EQ(cwnd, 14u * kMss);
  // The window ends with half its bytes marked: alpha = 15/16 alpha + 1/16 x 1/2, and the window
  // is cut by alpha / 2.
  s.on_ack(ack(8 * kMss), 3);
  const double want = 15.0 / 16 * 15.0 / 16 + 1.0 / 16 * 0.5;
  EXPECT_DOUBLE_EQ(s.alpha(), want);
  EXPECT_EQ(s.cwnd(), uint64_t(double(cwnd) * (1 - want / 2)));
  EXPECT_EQ(s.ssthresh(), s.cwnd());
}

TEST(TcpSender, SequenceNumbersWrap) {
  TcpSender s(config(), 0xFFFFF000u);
  for (int i = 0; i < 10; ++i) s.queue(kMss);
  EXPECT_EQ(pump(s, 0).size(), 10u);
  EXPECT_EQ(s.nxt(), 0xFFFFF000u + 10 * kMss);
  EXPECT_EQ(s.on_ack(ack(0xFFFFF000u + 10 * kMss), 5 * kUs), 10 * kMss);
  EXPECT_FALSE(s.outstanding());
}

TEST(TcpReceiver, DelayedAckEverySecondFullSegment) {
  TcpReceiver r(config(), 100);
  auto x = r.on_data(100, kMss, false, 0);
  EXPECT_TRUE(x.accepted);
  ASSERT_EQ(x.deliver.size(), 1u);
  EXPECT_FALSE(x.ack_now);
  EXPECT_EQ(r.delack_deadline(), 40 * kUs);
  x = r.on_data(100 + kMss, kMss, false, 5 * kUs);
  EXPECT_TRUE(x.ack_now);
  EXPECT_EQ(r.rcv_nxt(), 100 + 2 * kMss);
  r.acked();
  EXPECT_EQ(r.delack_deadline(), UINT64_MAX);
}

TEST(TcpReceiver, OutOfOrderGivesSackAtOnceAndFillsInOrder) {
  TcpReceiver r(config(), 0);
  r.on_data(0, kMss, false, 0);
  auto x = r.on_data(2 * kMss, kMss, false, 1);  // segment 1 missing
  EXPECT_TRUE(x.accepted);
  EXPECT_TRUE(x.deliver.empty());
  EXPECT_TRUE(x.ack_now);
  EXPECT_EQ(r.rcv_nxt(), kMss);
  r.on_data(3 * kMss, kMss, false, 2);
  r.on_data(5 * kMss, kMss, false, 3);  // segment 4 missing too
  auto blocks = r.sack_blocks();
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0], (SackBlock{5 * kMss, 6 * kMss}));  // the most recent first
  EXPECT_EQ(blocks[1], (SackBlock{2 * kMss, 4 * kMss}));
  EXPECT_EQ(r.window(), 1u << 20);  // its right edge stays put
  // Segment 1 arrives: 1, 2, 3 are delivered, the ACK goes at once.
  x = r.on_data(kMss, kMss, false, 4);
  ASSERT_EQ(x.deliver.size(), 3u);
  EXPECT_TRUE(x.ack_now);
  EXPECT_EQ(r.rcv_nxt(), 4 * kMss);
  blocks = r.sack_blocks();
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0], (SackBlock{5 * kMss, 6 * kMss}));
  // A duplicate is refused and acknowledged at once.
  x = r.on_data(2 * kMss, kMss, false, 5);
  EXPECT_FALSE(x.accepted);
  EXPECT_TRUE(x.ack_now);
}

TEST(TcpReceiver, AtMostThreeSackBlocksAndABoundedBuffer) {
  TcpLogicConfig c = config();
  c.rcv_buffer = 10 * kMss;
  TcpReceiver r(c, 0);
  for (uint32_t k = 1; k <= 4; ++k) EXPECT_TRUE(r.on_data(2 * k * kMss, kMss, false, k).accepted);
  EXPECT_EQ(r.sack_blocks().size(), 3u);
  EXPECT_EQ(r.sack_blocks()[0], (SackBlock{8 * kMss, 9 * kMss}));
  EXPECT_EQ(r.sack_blocks()[2], (SackBlock{4 * kMss, 5 * kMss}));
  const auto x = r.on_data(10 * kMss, kMss, false, 5);  // past rcv_nxt + the buffer: dropped
  EXPECT_FALSE(x.accepted);
  EXPECT_TRUE(x.ack_now);
}

TEST(TcpReceiver, CeEchoClassicUntilCwrDctcpPerSegment) {
  TcpReceiver classic(config(), 0);
  classic.on_data(0, kMss, true, 0);
  classic.on_data(kMss, kMss, false, 1);
  EXPECT_TRUE(classic.ece());  // held until CWR
  classic.on_cwr();
  EXPECT_FALSE(classic.ece());

  TcpLogicConfig c = config();
  c.dctcp = true;
  TcpReceiver d(c, 0);
  EXPECT_FALSE(d.on_data(0, 100, false, 0).ack_now);  // a short segment, no change of CE
  EXPECT_TRUE(d.on_data(100, 100, true, 1).ack_now);  // CE starts: an ACK at once
  EXPECT_TRUE(d.ece());
  EXPECT_TRUE(d.on_data(200, 100, false, 2).ack_now);  // CE ends
  EXPECT_FALSE(d.ece());
}

}  // namespace
}  // namespace rnic::tcp
