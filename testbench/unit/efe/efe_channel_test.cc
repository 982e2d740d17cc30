// The EFE's reliable channel logic (efe_channel.h), with no SystemC: the retransmit buffer and
// its cumulative ACKs, go-back-N on a NACK or the timer, the timer's back-off and the retry budget
// in time, RNR back-off, the receiver's verdicts, SEQ wrap; and a lossy loop in which every payload
// arrives exactly once and in order.
#include "models/efe/efe_channel.h"

#include <gtest/gtest.h>

namespace rnic::efe {
namespace {

std::vector<uint8_t> bytes(size_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

// Puts every due frame on the wire at `now`; returns their SEQs.
std::vector<uint32_t> drain(EfeTx& tx, uint64_t now) {
  std::vector<uint32_t> out;
  while (const EfeTx::Frame* f = tx.next(now)) {
    out.push_back(f->seq);
    tx.sent(now);
  }
  return out;
}

TEST(EfeTx, TheBufferHoldsWhatIsUnacknowledged) {
  EfeChannelConfig c;
  c.retx_buffer_bytes = 300;
  EfeTx tx(c);
  for (uint8_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(tx.can_send(100));
    EXPECT_EQ(tx.send(bytes(100, i)), i);
  }
  EXPECT_FALSE(tx.can_send(1)) << "the buffer is full";
  EXPECT_EQ(drain(tx, 0), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(tx.on_ack(2, 10), 2u);
  EXPECT_EQ(tx.buffered_bytes(), 100u);
  EXPECT_TRUE(tx.can_send(200));
  EXPECT_EQ(tx.on_ack(1, 11), 0u) << "a stale ACK frees nothing";
  EXPECT_EQ(tx.on_ack(7, 12), 0u) << "an ACK beyond what was sent is ignored";
  EXPECT_EQ(tx.retransmissions(), 0u);
}

// An echo (a TS plus the time the peer held the frame) is matched to the newest frame sent at or
// before it: here a 100-byte frame at 1 us and a 1400-byte one at 3 us (TS in ns).
TEST(EfeTx, AnEchoIsMatchedToTheNewestFrameSentBeforeIt) {
  EfeChannelConfig c;
  EfeTx tx(c);
  tx.send(bytes(100, 1));
  EXPECT_EQ(drain(tx, 1'000'000).size(), 1u);
  tx.send(bytes(1400, 2));
  EXPECT_EQ(drain(tx, 3'000'000).size(), 1u);
  EXPECT_EQ(tx.echoed_bytes(999), 0u) << "before anything was sent";
  EXPECT_EQ(tx.echoed_bytes(1500), 100u) << "the first, held 0.5 us";
  EXPECT_EQ(tx.echoed_bytes(3000), 1400u);
  EXPECT_EQ(tx.echoed_bytes(5000), 1400u) << "the second, held 2 us";
  EXPECT_EQ(tx.on_ack(1, 3'500'000), 1u);
  EXPECT_EQ(tx.echoed_bytes(1500), 0u) << "an acknowledged frame is no longer looked at";
}

TEST(EfeTx, AGoBackNNackGoesBackToTheFirstMissing) {
  EfeChannelConfig c;
  c.selective = false;
  EfeTx tx(c);
  for (int i = 0; i < 4; ++i) tx.send(bytes(10, 1));
  drain(tx, 0);
  tx.on_nack(1, 100);  // 0 arrived, 1 did not
  EXPECT_EQ(tx.unacked(), 3u) << "the NACK acknowledged SEQ 0";
  const EfeTx::Frame* f = tx.next(100);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->seq, 1u);
  EXPECT_TRUE(f->retransmission);
  EXPECT_EQ(drain(tx, 100), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(tx.retransmissions(), 3u);
  EXPECT_EQ(tx.nacks(), 1u);
}

// Selective: frames 0-7 on the wire, the NACK says 1 and 4-5 are missing. Only they go again;
// 2 and 3 (between the ranges) are held by the receiver and stay out of a timeout's resend, which
// takes every frame sent and not known held (1, 4, 5, and 6-7, which no NACK has covered).
TEST(EfeTx, ASelectiveNackResendsItsRangesAlone) {
  EfeTx tx(EfeChannelConfig{});
  for (int i = 0; i < 8; ++i) tx.send(bytes(10, 1));
  drain(tx, 0);
  tx.on_nack(1, 100, {{1, 2}, {4, 6}});
  EXPECT_EQ(tx.unacked(), 7u) << "the NACK acknowledged SEQ 0";
  const EfeTx::Frame* f = tx.next(100);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->retransmission);
  EXPECT_EQ(drain(tx, 100), (std::vector<uint32_t>{1, 4, 5}));
  EXPECT_EQ(tx.retransmissions(), 3u);
  tx.on_timeout(tx.deadline());
  EXPECT_EQ(drain(tx, 150), (std::vector<uint32_t>{1, 4, 5, 6, 7}));
  EXPECT_EQ(tx.on_ack(8, 200), 7u);
  EXPECT_EQ(tx.next(200), nullptr);
}

// A NACK that cannot have seen a resend does not ask for it again: 1 is resent at 5 us; a NACK
// whose TS echo is 4 us (the receiver's last frame went before the resend) names 1 again and
// leaves it alone; one echoing 6 us has it resent.
TEST(EfeTx, ANackOlderThanAResendLeavesItOnItsWay) {
  EfeTx tx(EfeChannelConfig{});
  for (int i = 0; i < 4; ++i) tx.send(bytes(10, 1));
  drain(tx, 0);
  tx.on_nack(1, 1'000'000, {{1, 2}});
  EXPECT_EQ(drain(tx, 5'000'000), (std::vector<uint32_t>{1}));
  tx.on_nack(1, 5'500'000, {{1, 2}}, 4000);
  EXPECT_EQ(tx.next(5'500'000), nullptr) << "1 is on its way";
  tx.on_nack(1, 7'000'000, {{1, 2}}, 6000);
  EXPECT_EQ(drain(tx, 7'000'000), (std::vector<uint32_t>{1})) << "lost again";
}

// The RTO doubles at each expiry up to its cap, and the channel fails when the budget, counted
// from the first retry, is spent: resends at 1050, 3050 and 7050 (RTOs of 1000, 2000, 4000), the
// next expiry (4000 capped, at 11050) beyond the budget's end (1050 + 9000), which fails it.
TEST(EfeTx, TheTimerBacksOffAndTheChannelFailsWhenItsBudgetIsSpent) {
  EfeChannelConfig c;
  c.rto_ps = 1000;
  c.rto_max_ps = 4000;
  c.retry_budget_ps = 9000;
  EfeTx tx(c);
  tx.send(bytes(10, 1));
  EXPECT_EQ(tx.deadline(), UINT64_MAX) << "nothing on the wire yet";
  drain(tx, 50);
  EXPECT_EQ(tx.deadline(), 1050u);
  tx.on_timeout(1049);
  EXPECT_EQ(tx.timeouts(), 0u) << "before the deadline";
  const uint64_t resends[] = {1050, 3050, 7050};
  for (uint64_t at : resends) {
    ASSERT_EQ(tx.deadline(), at);
    tx.on_timeout(at);
    EXPECT_FALSE(tx.failed()) << "at " << at;
    EXPECT_EQ(drain(tx, at).size(), 1u);
  }
  EXPECT_EQ(tx.rto_now(), 4000u) << "capped";
  EXPECT_EQ(tx.deadline(), 10050u) << "the budget's end comes before the next expiry";
  tx.on_timeout(10050);
  EXPECT_TRUE(tx.failed());
  EXPECT_EQ(tx.next(1'000'000), nullptr) << "a failed channel sends nothing";
  EXPECT_EQ(tx.timeouts(), 3u);
}

TEST(EfeTx, AnAckThatMovesTheWindowResetsTheRetries) {
  EfeChannelConfig c;
  c.rto_ps = 1000;
  c.retry_budget_ps = 1500;
  EfeTx tx(c);
  tx.send(bytes(10, 1));
  tx.send(bytes(10, 2));
  drain(tx, 0);
  tx.on_timeout(1000);
  drain(tx, 1000);
  EXPECT_EQ(tx.rto_now(), 2000u) << "backed off";
  tx.on_ack(1, 1500);  // progress
  EXPECT_EQ(tx.rto_now(), 1000u) << "the back-off ends";
  ASSERT_EQ(tx.deadline(), 2500u);
  tx.on_timeout(2500);  // the budget from the first retry (1000) would end here
  EXPECT_FALSE(tx.failed()) << "the retry at 2500 is the first since the progress";
  EXPECT_EQ(tx.deadline(), 4000u) << "gone back, nothing on the wire: the budget's end stands";
  tx.on_timeout(4000);
  EXPECT_TRUE(tx.failed());
}

TEST(EfeTx, AnRnrBacksOffWithoutSpendingRetries) {
  EfeChannelConfig c;
  c.retry_budget_ps = 1;
  c.rnr_delay_ps = 500;
  EfeTx tx(c);
  tx.send(bytes(10, 1));
  for (int k = 0; k < 10; ++k) {
    const uint64_t now = uint64_t(k) * 1000;
    ASSERT_EQ(drain(tx, now).size(), 1u) << "round " << k;
    tx.on_rnr(0, now + 10);
    EXPECT_EQ(tx.next(now + 10 + 499), nullptr) << "during the back-off";
  }
  EXPECT_FALSE(tx.failed());
  EXPECT_EQ(tx.rnrs(), 10u);
}

TEST(EfeRx, InOrderDuplicatesAndOneNackPerGap) {
  EfeRx rx;
  using V = EfeRx::Verdict;
  EXPECT_EQ(rx.on_data(0), V::kDeliver);
  EXPECT_EQ(rx.on_data(2), V::kGap);
  EXPECT_TRUE(rx.nack_owed());
  rx.nack_sent();
  EXPECT_EQ(rx.on_data(3), V::kGap);
  EXPECT_FALSE(rx.nack_owed()) << "one NACK per gap";
  EXPECT_EQ(rx.on_data(0), V::kDuplicate);
  EXPECT_EQ(rx.on_data(1), V::kDeliver);
  EXPECT_EQ(rx.on_data(3), V::kGap) << "2 is still missing: a new gap";
  EXPECT_TRUE(rx.nack_owed());
  EXPECT_EQ(rx.expected(), 2u);
  EXPECT_EQ(rx.duplicates(), 1u);
  EXPECT_EQ(rx.out_of_order(), 3u);
}

TEST(EfeChannel, SeqWrapsAt2To32) {
  const uint32_t first = 0xFFFFFFFEu;
  EfeTx tx(EfeChannelConfig{}, first);
  EfeRx rx(first);
  for (int i = 0; i < 4; ++i) tx.send(bytes(1, uint8_t(i)));
  for (uint32_t s : drain(tx, 0)) EXPECT_EQ(rx.on_data(s), EfeRx::Verdict::kDeliver) << s;
  EXPECT_EQ(rx.expected(), 2u);
  EXPECT_EQ(tx.on_ack(rx.expected(), 1), 4u);
}

// Frames over a channel that drops every 4th frame and every 7th ACK, with the timer and NACKs:
// every payload arrives exactly once, in order, and nothing fails.
void lossy_loop(bool selective) {
  EfeChannelConfig c;
  c.selective = selective;
  c.rto_ps = 10'000;
  c.retry_budget_ps = 0;  // no budget: a failure here would be a livelock, seen as a short count
  c.retx_buffer_bytes = 8;
  EfeTx tx(c);
  EfeRx rx;
  std::vector<uint8_t> got;
  uint8_t next_payload = 0;
  uint64_t frames = 0, acks = 0;
  for (uint64_t now = 0; now < 10'000'000 && got.size() < 200; now += 100) {
    while (next_payload < 200 && tx.can_send(1)) tx.send(bytes(1, next_payload++));
    if (now >= tx.deadline()) tx.on_timeout(now);
    while (const EfeTx::Frame* f = tx.next(now)) {
      const uint32_t seq = f->seq;
      const uint8_t v = f->payload[0];
      tx.sent(now);
      if (++frames % 4 == 0) continue;  // lost on the wire
      if (rx.on_data(seq) == EfeRx::Verdict::kDeliver) got.push_back(v);
      if (rx.nack_owed()) {
        rx.nack_sent();
        tx.on_nack(rx.expected(), now);
        break;
      }
      if (++acks % 7 != 0) tx.on_ack(rx.expected(), now);  // every 7th ACK lost
    }
  }
  ASSERT_EQ(got.size(), 200u);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], uint8_t(i)) << "payload " << i;
  EXPECT_FALSE(tx.failed());
  EXPECT_GT(tx.retransmissions(), 0u);
}
TEST(EfeChannel, ALossyLoopDeliversEveryPayloadOnceInOrder) { lossy_loop(true); }

// The bytes on the wire (what congestion control's window bounds) follow every event: sends,
// resends, ACKs, NACKs with ranges, timeouts, RNRs and a change of resend mode, in both modes,
// against a scan of the frames after each step.
TEST(EfeTx, TheBytesOnTheWireFollowEveryEvent) {
  for (bool selective : {true, false}) {
    EfeChannelConfig c;
    c.selective = selective;
    c.retry_budget_ps = 0;
    c.rto_ps = 1000;
    c.rnr_delay_ps = 500;
    EfeTx tx(c);
    uint32_t seed = 12345;
    auto rnd = [&](uint32_t n) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 8) % n;
    };
    uint64_t now = 0, moved = 0;
    for (int step = 0; step < 20000; ++step) {
      now += 100;
      const uint32_t op = rnd(100);
      if (op < 30) {
        if (tx.can_send(2000)) tx.send(bytes(1 + rnd(1500), 1));
      } else if (op < 60) {
        if (tx.next(now)) tx.sent(now);
      } else if (op < 75) {
        const uint32_t sent = tx.highest_sent() - tx.base();
        if (sent) moved += tx.on_ack(tx.base() + 1 + rnd(sent), now);
      } else if (op < 88) {
        const uint32_t sent = tx.highest_sent() - tx.base();
        if (!sent) continue;
        const uint32_t first = tx.base() + rnd(sent);
        std::vector<EfeTx::Range> rs{{first, first + 1 + rnd(3)}};
        const uint32_t second = rs[0].end + 1 + rnd(4);
        if (seq_before(second, tx.highest_sent())) rs.push_back({second, second + 1});
        tx.on_nack(first, now, rs, uint32_t(now / 1000) - rnd(3));
      } else if (op < 95) {
        if (now >= tx.deadline()) tx.on_timeout(now);
      } else if (op < 98) {
        const uint32_t sent = tx.highest_sent() - tx.base();
        tx.on_rnr(tx.base() + (sent ? rnd(sent) : 0), now);
      } else {
        tx.set_selective(selective);
      }
      ASSERT_EQ(tx.flight_bytes(), tx.flight_bytes_recounted()) << "step " << step << " op " << op;
    }
    EXPECT_GT(moved, 1000u);  // the walk did go through many frames
    EXPECT_GT(tx.retransmissions(), 100u);
  }
}
TEST(EfeChannel, ALossyGoBackNLoopDeliversEveryPayloadOnceInOrder) { lossy_loop(false); }

}  // namespace
}  // namespace rnic::efe
