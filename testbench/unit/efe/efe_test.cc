// The EFE engine (models/efe/efe.h) between two MAC ports on one link, with no RNIC Core: the
// test plays the core (hands segments over, validates what arrives). Pinned: ACK coalescing
// (every efe.ack_every_frames, else efe.ack_delay_ns after the first frame owed), the
// retransmit timer (a resend exactly efe.rto_ns after the frame went, then at doubled
// intervals), the retry budget (the channel fails efe.retry_budget_ns after its first retry), RNR
// back-off that spends no retries,
// the order the core relies on (an ACK value that arrives before a DATA frame the peer sent
// ahead of it waits for that frame), the loopback of frames to the EFE's own MAC, and the choice
// of the next frame once every input of a time step has arrived.
#include "models/efe/efe.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "models/eth/eth_link.h"

namespace rnic::efe {
namespace {

using eth::EthLink;
using eth::EthMac;

const eth::Mac kMacA{2, 0, 0, 0, 0, 1}, kMacB{2, 0, 0, 0, 0, 2};

struct Event {
  char who;  // 'a' or 'b': whose core heard it
  std::string what;
  uint64_t at;
};

// Two EFEs (rnic-10g clocks: 250 MHz core, 10 Gb/s) joined by one link. Each side validates a
// segment as it arrives unless `hold_b` (then the test validates B's itself).
struct Pair {
  EthMacParams mp;
  StatRegistry stats;
  std::unique_ptr<EthMac> ma, mb;
  std::unique_ptr<EthLink> link;
  std::unique_ptr<Efe> a, b;
  std::vector<Event> events;
  std::vector<std::pair<uint64_t, Header>> wire;  // every frame's first bit and EFE header
  bool a_qp_alive = true, b_qp_alive = true;      // the QP each side's "core" fails with a channel
  std::vector<Efe::RxSegment> held;               // B's segments not yet validated
  bool hold_b = false;
  explicit Pair(const EfeConfig& cfg, LinkParams lp = {}) {
    ma = std::make_unique<EthMac>("ma", mp, stats);
    mb = std::make_unique<EthMac>("mb", mp, stats);
    link = std::make_unique<EthLink>("link", lp, *ma, *mb, stats);
    a = std::make_unique<Efe>("a", *ma, kMacA, 250, cfg, stats);
    b = std::make_unique<Efe>("b", *mb, kMacB, 250, cfg, stats);
    link->add_wire_tap([this](uint64_t t, const EthMac::Frame& f, const uint8_t*, int) {
      Header h;
      if (decode(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes, &h) == ParseError::kOk)
        wire.push_back({t, h});
    });
    for (auto [e, who] : {std::pair{a.get(), 'a'}, std::pair{b.get(), 'b'}}) {
      Efe* self = e;
      const char w = who;
      e->on_segment = [this, self, w](Efe::RxSegment&& s) {
        events.push_back({w, "seg " + std::to_string(s.seq), now_ps()});
        if (w == 'b' && hold_b)
          held.push_back(std::move(s));
        else
          self->validated(s.src, s.seq, s.ar);
      };
      e->on_ack = [this, w](const TransportStream&, uint32_t ack) {
        events.push_back({w, "ack " + std::to_string(ack), now_ps()});
      };
      // As the core: the QP on the channel (QPN 1 at A, 2 at B) fails with it, once.
      e->on_failed = [this, self, w](const TransportStream& s) {
        events.push_back({w, "failed", now_ps()});
        bool& alive = w == 'a' ? a_qp_alive : b_qp_alive;
        self->failure_taken(
            s, alive ? std::vector<uint32_t>{w == 'a' ? 1u : 2u} : std::vector<uint32_t>{});
        alive = false;
      };
      e->on_reset = [this, w](const TransportStream&, const std::vector<uint32_t>& qpns) {
        std::string what = "reset";
        for (uint32_t q : qpns) what += " " + std::to_string(q);
        events.push_back({w, what, now_ps()});
      };
    }
  }
  uint64_t counter(const std::string& g, const char* n) {
    return stats.group(g).counter(n, "", "").value;
  }
  const Event* find(char who, const std::string& what) const {
    for (const Event& e : events)
      if (e.who == who && e.what == what) return &e;
    return nullptr;
  }
  std::vector<std::pair<uint64_t, Header>> frames(Type t, bool from_a) const {
    std::vector<std::pair<uint64_t, Header>> v;
    for (const auto& w : wire)
      if (w.second.type == t && (t != Type::kData || w.second.dst_qpn == (from_a ? 1u : 2u)))
        v.push_back(w);
    return v;
  }
};

std::vector<uint8_t> seg(size_t n) { return std::vector<uint8_t>(n, 0x5A); }

// The ACK and wire-time rules below are pinned on a channel that starts at line rate: a slow
// start (the default) paces the first frames and asks for an ACK at once (AR) to learn the RTT.
EfeConfig line_start() {
  EfeConfig c;
  c.cc_start_fraction = 1;
  return c;
}

// A DATA frame from A to B (QPN 1) with SEQ seq and 100 bytes, as a hostile or a hand-made peer
// would put it on the wire, past A's EFE.
std::vector<uint8_t> raw_data(uint32_t seq) {
  Header h;
  h.type = Type::kData;
  h.seq = seq;
  h.dst_qpn = 1;
  const std::vector<uint8_t> payload(100, 0x5A);
  return build_frame({kMacB, kMacA, eth::kEtherTypeEfe}, h, payload.data(), payload.size());
}

// A switch's utilisation stamp on a DATA frame (UT, byte 15) comes back in the ACK that echoes
// the frame's TS; a frame without one is echoed without. A's EFE, which hears the ACKs, keeps
// the echoed stamp as a time series (`util`) from the first one.
TEST(EfeTiming, AnAckEchoesTheUtilisationStampOfTheFrameItAnswers) {
  EfeConfig c = line_start();
  c.ack_every_frames = 1;
  Pair p(c);
  for (uint32_t seq = 0; seq < 2; ++seq) {
    Header h;
    h.type = Type::kData;
    h.seq = seq;
    h.dst_qpn = 1;
    h.ar = true;
    h.ut = seq == 0;
    h.util = seq == 0 ? 0x30 : 0;
    const std::vector<uint8_t> payload(100, 0x5A);
    p.ma->send(build_frame({kMacB, kMacA, eth::kEtherTypeEfe}, h, payload.data(), payload.size()));
  }
  sc_core::sc_start();
  const auto acks = p.frames(Type::kAck, false);
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_TRUE(acks[0].second.ut);
  EXPECT_EQ(acks[0].second.util, 0x30);
  EXPECT_FALSE(acks[1].second.ut);
  EXPECT_EQ(acks[1].second.util, 0);
  const auto j = p.stats.json();
  bool series = false;
  for (const auto& [g, v] : j.items())
    if (g.rfind("a.peer_", 0) == 0 && v.contains("util")) series = true;
  EXPECT_TRUE(series) << j.dump();
}

TEST(EfeTiming, AnAckGoesEveryKValidatedFrames) {
  EfeConfig c = line_start();
  c.ack_every_frames = 4;
  c.ack_delay_ns = 1'000'000;  // never, in this test
  Pair p(c);
  for (int i = 0; i < 8; ++i) p.a->send(kMacB, 1, seg(100), false);
  sc_core::sc_start();
  EXPECT_EQ(p.counter("b", "tx_acks"), 2u) << "after frames 4 and 8";
  const auto acks = p.frames(Type::kAck, false);
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0].second.ack, 4u);
  EXPECT_EQ(acks[1].second.ack, 8u);
  ASSERT_TRUE(p.find('a', "ack 8"));
  EXPECT_TRUE(p.a->can_send(kMacB, size_t(c.retx_buffer_bytes))) << "the buffer is empty";
}

// Frames to the EFE's own MAC (two QPs of one card) are looped back by the MAC, none on the
// wire: each arrives at the receive side its wire time after the last (line rate, one at a time),
// the first kTxCycles + its wire time + kRxCycles after it was handed over; the channel acks
// itself as any peer.
TEST(EfeTiming, ALoopedFrameTakesItsWireTime) {
  Pair p(line_start());
  const uint64_t wire_bytes =
      std::max<size_t>(eth::kHeaderBytes + kHeaderBytes + 100, 60) + 8 + 4 + 12;
  const uint64_t wire_ps = wire_bytes * p.ma->byte_ps();
  for (int i = 0; i < 3; ++i) p.a->send(kMacA, 1, seg(100), false);
  sc_core::sc_start();
  EXPECT_TRUE(p.wire.empty()) << "nothing on the wire";
  const Event* s0 = p.find('a', "seg 0");
  const Event* s1 = p.find('a', "seg 1");
  const Event* s2 = p.find('a', "seg 2");
  ASSERT_TRUE(s0 && s1 && s2);
  // Handed over at 0, on the MAC's loopback from the edge kTxCycles later; the k-th frame is
  // back (k + 1) wire times after that, and handled kRxCycles after the next core edge.
  const uint64_t cycle = 4000, out = Efe::kTxCycles * cycle;
  auto handled = [&](uint64_t k) {
    const uint64_t back = out + (k + 1) * wire_ps;
    return (back + cycle - 1) / cycle * cycle + Efe::kRxCycles * cycle;
  };
  EXPECT_EQ(s0->at, handled(0));
  EXPECT_EQ(s1->at, handled(1));
  EXPECT_EQ(s2->at, handled(2));
  EXPECT_EQ(p.counter("a", "looped"), p.counter("a", "tx_data") + p.counter("a", "tx_acks"));
  EXPECT_TRUE(p.find('a', "ack 3")) << "acknowledged by itself";
}

TEST(EfeTiming, AnAckGoesAckDelayAfterTheFirstFrameOwed) {
  EfeConfig c = line_start();
  c.ack_every_frames = 100;
  c.ack_delay_ns = 5000;
  Pair p(c);
  for (int i = 0; i < 3; ++i) p.a->send(kMacB, 1, seg(100), false);
  sc_core::sc_start();
  const Event* first = p.find('b', "seg 0");
  ASSERT_TRUE(first);
  const auto acks = p.frames(Type::kAck, false);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].second.ack, 3u);
  // The timer acts on the first edge at or after validation + 5 us; a 60 B frame's first bit
  // is 5 cycles (20 ns) after it is handed to the MAC (EthLink.OneFrameLatency).
  const uint64_t fire = (first->at + 5'000'000 + 3999) / 4000 * 4000;
  EXPECT_EQ(acks[0].first, fire + 20000);
}

// A channel starting at `start` of line rate whose peer ACKs only what AR asks for (the last
// frames' ACK comes 1 ms on) and whose timer waits 10 ms.
EfeConfig acks_on_request(double start) {
  EfeConfig c;
  c.cc_start_fraction = start;
  c.ack_every_frames = 100;
  c.ack_delay_ns = 1'000'000;
  c.rto_ns = 10'000'000;
  return c;
}

// Slow start (efe.cc_start_fraction below 1): a new channel paces its first DATA frame at 1/16
// of line rate and asks for an ACK at once (AR); each ACK doubles the rate and re-times the gap
// after the last frame, and the next frame asks again. So the gaps between first bits are 8, 4,
// 2 frame times (each ACK is back well within the gap); the fourth ACK brings line rate.
TEST(EfeTiming, SlowStartDoublesTheRateOncePerRoundTrip) {
  Pair p(acks_on_request(0.0625));
  for (int i = 0; i < 8; ++i) p.a->send(kMacB, 1, seg(1000), false);
  sc_core::sc_start();
  const auto data = p.frames(Type::kData, true);
  ASSERT_EQ(data.size(), 8u);
  const uint64_t w = (eth::kHeaderBytes + kHeaderBytes + 1000 + eth::kPreambleBytes +
                      eth::kFcsBytes + eth::kIfgBytes) *
                     800;  // ps at 10 Gb/s
  const uint64_t gaps[] = {8 * w, 4 * w, 2 * w};
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(data[i].second.ar) << "frame " << i << " asks";
  for (size_t i = 0; i < 3; ++i) {
    const uint64_t gap = data[i + 1].first - data[i].first;
    EXPECT_GE(gap, gaps[i]) << "frame " << i;
    EXPECT_LT(gap, gaps[i] + 4000) << "frame " << i << ": one 250 MHz edge at most";
  }
  // Frame 3's ACK brings line rate: frame 4 goes when it arrives, the rest back to back.
  for (size_t i = 4; i < 8; ++i)
    EXPECT_FALSE(data[i].second.ar) << "frame " << i << ": slow start ended at line rate";
  for (size_t i = 5; i < 8; ++i)
    EXPECT_LT(data[i].first - data[i - 1].first, w + 4000) << "frame " << i;
  EXPECT_EQ(p.frames(Type::kAck, false).size(), 5u) << "one per probe, then the delayed one";
  EXPECT_TRUE(p.find('a', "ack 8"));
}

// A channel at line rate whose peer sends it nothing asks for an ACK (AR) once half its window is
// out: with the peer's coalescing at 100 frames or 1 ms, its window (line rate x 10 us before an
// RTT sample, 12,500 B) would otherwise stop it until the coalesced ACK came. Where the peer sends
// DATA frames, its ACK values ride on them and nothing asks.
TEST(EfeTiming, AHalfFullWindowAsksForItsAck) {
  Pair p(acks_on_request(1));
  for (int i = 0; i < 40; ++i) p.a->send(kMacB, 1, seg(1000), false);
  sc_core::sc_start();
  const auto data = p.frames(Type::kData, true);
  ASSERT_EQ(data.size(), 40u);
  // Frame 6 puts 7,000 B out, half the window: it asks; none before it does.
  for (size_t i = 0; i < 6; ++i) EXPECT_FALSE(data[i].second.ar) << "frame " << i;
  EXPECT_TRUE(data[6].second.ar);
  // No frame waited for the 1 ms ACK: 40 frames of 1,058 B on the wire go in well under 100 us.
  EXPECT_LT(data.back().first - data.front().first, 100'000'000u);
  EXPECT_GT(p.frames(Type::kAck, false).size(), 2u) << "an ACK per AR";
  EXPECT_TRUE(p.find('a', "ack 40"));
}

TEST(EfeTiming, AWindowWhoseAcksRideOnThePeersDataAsksForNone) {
  LinkParams lp;
  lp.prop_ns = 10000;  // a 20 us round trip: more than half the window is out at line rate
  Pair p(acks_on_request(1), lp);
  for (int i = 0; i < 200; ++i) {
    p.a->send(kMacB, 1, seg(1000), false);
    p.b->send(kMacA, 2, seg(1000), false);
  }
  sc_core::sc_start();
  const auto a_data = p.frames(Type::kData, true);
  ASSERT_EQ(a_data.size(), 200u);
  // The first frames find no DATA from B yet: they may ask. Once B's frames arrive (a round trip
  // on), A's ACK values come on them, and A asks no more.
  size_t asked = 0;
  for (size_t i = 0; i < 200; ++i)
    if (a_data[i].first > a_data[0].first + 40'000'000) asked += a_data[i].second.ar;
  EXPECT_EQ(asked, 0u);
  EXPECT_TRUE(p.find('a', "ack 200"));
  EXPECT_TRUE(p.find('b', "ack 200"));
}

TEST(EfeTiming, ALostFrameIsResentRtoAfterItWent) {
  EfeConfig c;
  c.rto_ns = 20000;
  LinkParams lp;
  lp.down_ps = {{0, 1'000'000}};  // the first transmission is lost
  Pair p(c, lp);
  p.a->send(kMacB, 1, seg(1000), true);
  sc_core::sc_start();
  const auto data = p.frames(Type::kData, true);
  ASSERT_EQ(data.size(), 2u);
  EXPECT_FALSE(data[0].second.rtx);
  EXPECT_TRUE(data[1].second.rtx);
  EXPECT_EQ(data[1].second.seq, 0u);
  EXPECT_EQ(data[1].first - data[0].first, 20'000'000u) << "exactly efe.rto_ns";
  EXPECT_EQ(p.counter("link", "lost_down"), 1u);
  EXPECT_EQ(p.counter("a.peer_020000000002", "timeouts"), 1u);
  EXPECT_EQ(p.counter("a.peer_020000000002", "retransmissions"), 1u);
  EXPECT_TRUE(p.find('b', "seg 0"));
  EXPECT_TRUE(p.find('a', "ack 1"));
}

// The retransmit timer against a round trip longer than efe.rto_ns (15 us of fibre each way,
// RTT about 31 us, rto_ns 20 us). Adaptive (the default): the first frame, sent before any RTT
// sample, times out once; its ACK's echo sets SRTT and RTTVAR, the RTO grows to about 100 us,
// and eight frames sent later go without a timeout. Fixed: the eight time out again before
// their first ACK is back (then each ACK restarts the timer).
void rto_against_a_long_round_trip(bool adaptive, uint64_t want_timeouts) {
  EfeConfig c;
  c.rto_ns = 20000;
  c.rto_adaptive = adaptive;
  c.ack_every_frames = 1;
  c.ack_delay_ns = 1000;
  c.cc = "off";
  LinkParams lp;
  lp.prop_ns = 15000;
  Pair p(c, lp);
  p.a->send(kMacB, 1, seg(100), false);
  sc_core::sc_start(200, sc_core::SC_US);
  ASSERT_TRUE(p.find('a', "ack 1"));
  for (int i = 0; i < 8; ++i) p.a->send(kMacB, 1, seg(100), false);
  sc_core::sc_start();
  EXPECT_TRUE(p.find('a', "ack 9"));
  EXPECT_EQ(p.counter("a.peer_020000000002", "timeouts"), want_timeouts);
}

TEST(EfeTiming, AnAdaptiveRtoLearnsTheRoundTrip) { rto_against_a_long_round_trip(true, 1); }

TEST(EfeTiming, AFixedRtoBelowTheRoundTripFiresEveryTime) {
  rto_against_a_long_round_trip(false, 2);
}

TEST(EfeTiming, TheTimerBacksOffAndTheBudgetIsATime) {
  EfeConfig c;
  c.rto_ns = 20000;
  c.retry_budget_ns = 100000;
  LinkParams lp;
  lp.down_ps = {{0, UINT64_MAX}};
  Pair p(c, lp);
  p.a->send(kMacB, 1, seg(1000), true);
  sc_core::sc_start();
  const auto data = p.frames(Type::kData, true);
  ASSERT_EQ(data.size(), 3u) << "the frame and 2 resends";
  const Event* failed = p.find('a', "failed");
  ASSERT_TRUE(failed);
  // A 1034 B frame (14 + 20 + 1000) is 65 beats: its first bit is 66 cycles (264 ns) after it
  // is handed to the MAC. Handed over at t0, resent at t0 + 20 us and, the RTO doubled, at
  // t0 + 60 us; the next expiry (t0 + 140 us) is past the budget's end, 100 us after the first
  // retry, which fails the channel.
  const uint64_t t0 = data[0].first - 264000;
  EXPECT_EQ(data[1].first, t0 + 20'000'000 + 264000);
  EXPECT_EQ(data[2].first, t0 + 60'000'000 + 264000);
  EXPECT_EQ(failed->at, t0 + 120'000'000);
  // The new channel announces the QP that failed at once: an SY frame to kAnnounceQpn with its
  // QPN, AR set. The link being down, it is resent (from 20 us on, backed off) for
  // efe.resync_budget_ns (10 ms) after its first resend and given up: a second failure, with no
  // QP left to announce.
  std::vector<std::pair<uint64_t, Header>> sy;
  for (const auto& w : p.wire)
    if (w.second.type == Type::kData && w.second.dst_qpn == kAnnounceQpn) sy.push_back(w);
  ASSERT_GE(sy.size(), 2u);
  EXPECT_TRUE(sy[0].second.sy);
  EXPECT_EQ(sy[0].second.length, 4u);
  EXPECT_TRUE(sy[0].second.ar);
  EXPECT_FALSE(sy[0].second.rtx);
  EXPECT_EQ(sy[0].second.seq, 1u) << "where the failed channel stopped";
  EXPECT_GE(sy[0].first, failed->at);
  EXPECT_LT(sy[0].first, failed->at + 1'000'000);
  for (size_t k = 1; k < sy.size(); ++k) EXPECT_TRUE(sy[k].second.rtx);
  EXPECT_LE(sy.back().first, failed->at + 20'000'000 + 10'000'000'000ull);
  EXPECT_EQ(p.counter("a", "channel_failures"), 2u);
  EXPECT_EQ(p.counter("a.peer_020000000002", "retransmissions"), 2u + (sy.size() - 1));
  // The channel is re-established: the next frame starts it afresh with SY.
  EXPECT_TRUE(p.a->can_send(kMacB, 1000));
}

// The link is down until 300 us: A's channel fails at 120 us (the budget 100 us after the first
// resend at 20 us), and the core hands over the QP that failed with it (QPN 1). Its announcement
// goes at once and is resent, backed off (at 140, 180, 260 and 420 us), until one gets through:
// B hears "QP 1 failed" once, takes the new channel (SY) and acknowledges. A segment of a new
// WR after that is delivered to B's core as the next frame; nothing of the failed one is.
TEST(EfeTiming, AnAnnouncementTellsThePeerWhichQpsFailed) {
  EfeConfig c;
  c.rto_ns = 20000;
  c.rto_adaptive = false;
  c.retry_budget_ns = 100000;
  LinkParams lp;
  lp.down_ps = {{0, 300'000'000}};
  Pair p(c, lp);
  p.a->send(kMacB, 1, seg(1000), true);
  sc_core::sc_start(600, sc_core::SC_US);
  const Event* failed = p.find('a', "failed");
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->at, 120'004'000u) << "the frame was handed over one cycle in";
  const Event* reset = p.find('b', "reset 1");
  ASSERT_TRUE(reset) << "B hears which QP failed";
  EXPECT_GT(reset->at, 420'000'000u);
  EXPECT_LT(reset->at, 425'000'000u);
  EXPECT_FALSE(p.find('b', "seg 0")) << "the failed segment never reached B's core";
  EXPECT_EQ(p.counter("b.peer_020000000001", "resyncs"), 1u);
  EXPECT_EQ(p.counter("a", "channel_failures"), 1u);
  ASSERT_TRUE(p.a->can_send(kMacB, 1000));
  const uint32_t seq = p.a->send(kMacB, 1, seg(1000), true);
  EXPECT_EQ(seq, 2u) << "after the failed frame (0) and the announcement (1)";
  sc_core::sc_start();
  EXPECT_TRUE(p.find('b', "seg 2"));
  EXPECT_TRUE(p.find('a', "ack 3"));
}

// Selective resend (the default): of 8 frames A sends, the link loses the second (it is down
// while that frame is on it). B keeps the 6 behind the gap, NACKs once naming [1, 2), and A
// resends SEQ 1 alone; B's core then gets all 8 in order, each once. With efe.resend=go_back_n
// B drops the frames behind the gap and A goes back: 1-5 again (6 and 7 had not gone yet).
void one_frame_lost(bool selective, size_t want_data, uint64_t want_resent) {
  EfeConfig c;
  c.resend = selective ? "selective" : "go_back_n";
  c.cc = "off";
  LinkParams lp;
  lp.down_ps = {{1'300'000, 1'400'000}};  // frame 1's time on the link (frame 0's ends before)
  Pair p(c, lp);
  for (int i = 0; i < 8; ++i) p.a->send(kMacB, 1, seg(1000), i == 7);
  sc_core::sc_start();
  EXPECT_EQ(p.counter("link", "lost_down"), 1u);
  const auto data = p.frames(Type::kData, true);
  EXPECT_EQ(data.size(), want_data);
  EXPECT_EQ(p.counter("a.peer_020000000002", "retransmissions"), want_resent);
  const auto nacks = p.frames(Type::kNack, false);
  ASSERT_EQ(nacks.size(), 1u);
  EXPECT_EQ(nacks[0].second.ack, 1u);
  EXPECT_EQ(nacks[0].second.length, selective ? 8u : 0u) << "one range: [1, 2)";
  std::vector<std::string> segs;
  for (const Event& e : p.events)
    if (e.who == 'b' && e.what.rfind("seg ", 0) == 0) segs.push_back(e.what);
  ASSERT_EQ(segs.size(), 8u);
  for (size_t i = 0; i < segs.size(); ++i) EXPECT_EQ(segs[i], "seg " + std::to_string(i));
  EXPECT_TRUE(p.find('a', "ack 8"));
}
TEST(EfeTiming, ASelectiveNackResendsTheLostFrameAlone) { one_frame_lost(true, 9, 1); }

// The frames kept after a gap are bounded by efe.rx_buffer_bytes. Over 15 us of fibre each way
// about 36 frames arrive behind a lost one before its resend does. With the default 256 KiB B
// keeps them all and A resends the lost frame alone; with 9,000 B (nine 1,000 B frames) B keeps
// nine, drops the rest and names them in its NACKs, and A resends them too. B's core gets all 48
// in order either way.
uint64_t resends_with_rx_buffer(int64_t bytes) {
  EfeConfig c;
  c.cc = "off";
  c.rx_buffer_bytes = bytes;
  LinkParams lp;
  lp.prop_ns = 15000;
  lp.down_ps = {{1'300'000, 1'400'000}};  // frame 1's time on the link
  Pair p(c, lp);
  for (int i = 0; i < 48; ++i) p.a->send(kMacB, 1, seg(1000), i == 47);
  sc_core::sc_start();
  EXPECT_EQ(p.counter("link", "lost_down"), 1u);
  std::vector<std::string> segs;
  for (const Event& e : p.events)
    if (e.who == 'b' && e.what.rfind("seg ", 0) == 0) segs.push_back(e.what);
  EXPECT_EQ(segs.size(), 48u);
  for (size_t i = 0; i < segs.size(); ++i) EXPECT_EQ(segs[i], "seg " + std::to_string(i));
  return p.counter("a.peer_020000000002", "retransmissions");
}
TEST(EfeTiming, AFullReceiveBufferKeepsAllThatFollowsAGap) {
  EXPECT_EQ(resends_with_rx_buffer(256 << 10), 1u);
}
TEST(EfeTiming, TheFramesKeptAfterAGapAreBoundedByTheReceiveBuffer) {
  EXPECT_GT(resends_with_rx_buffer(9000), 20u);
}
TEST(EfeTiming, AGoBackNNackResendsEverythingAfterTheGap) { one_frame_lost(false, 13, 5); }

TEST(EfeTiming, AFullReceiveBufferAnswersRnrAndSpendsNoRetries) {
  EfeConfig c = line_start();
  c.rx_buffer_bytes = 3000;
  c.rnr_delay_ns = 10000;
  c.retry_budget_ns = 1;
  Pair p(c);
  p.hold_b = true;
  for (int i = 0; i < 5; ++i) p.a->send(kMacB, 1, seg(1000), i == 4);
  sc_core::sc_start(50, sc_core::SC_US);
  EXPECT_EQ(p.held.size(), 3u) << "3000 B taken, the rest refused";
  EXPECT_GE(p.counter("b.peer_020000000001", "rnrs_tx"), 4u) << "one per 10 us back-off";
  // The core validates what it holds: the buffer frees, the rest arrive.
  for (const Efe::RxSegment& s : p.held) p.b->validated(s.src, s.seq, s.ar);
  p.hold_b = false;
  sc_core::sc_start();
  EXPECT_EQ(p.counter("a", "channel_failures"), 0u) << "RNRs spend no retries";
  for (int i = 0; i < 5; ++i) {
    int n = 0;
    for (const Event& e : p.events) n += e.who == 'b' && e.what == "seg " + std::to_string(i);
    EXPECT_EQ(n, 1) << "segment " << i << " delivered once";
  }
  EXPECT_TRUE(p.find('a', "ack 5"));
}

TEST(EfeTiming, ASegmentTheCoreCannotTakeYetIsAnsweredRnr) {
  EfeConfig c;
  c.rnr_delay_ns = 10000;
  c.retry_budget_ns = 1;
  Pair p(c);
  p.b->can_take = [](const eth::Mac&, uint32_t qpn) {
    return qpn != 7 || now_ps() >= 35'000'000;  // QP 7 is parked until 35 us
  };
  p.a->send(kMacB, 7, seg(500), false);
  p.a->send(kMacB, 1, seg(500), true);
  sc_core::sc_start();
  const Event* first = p.find('b', "seg 0");
  ASSERT_TRUE(first);
  EXPECT_GE(first->at, 35'000'000u) << "delivered once the core could take it";
  EXPECT_GE(p.counter("b.peer_020000000001", "rnrs_tx"), 3u) << "every 10 us until then";
  EXPECT_EQ(p.counter("a", "channel_failures"), 0u) << "RNRs spend no retries";
  int n = 0;
  for (const Event& e : p.events) n += e.who == 'b' && e.what.rfind("seg ", 0) == 0;
  EXPECT_EQ(n, 2) << "each segment once, in order";
  EXPECT_TRUE(p.find('a', "ack 2"));
}

// The core takes back segments it was given (Efe::refuse, on-demand paging): of three segments
// held unvalidated, the first is validated and the second refused. B answers RNR naming SEQ 1 at
// once (no NACK); A resends 1 and 2 after its RNR delay, spending no retry; B gives them to the
// core again under the new receive generation, and A hears them all acknowledged.
TEST(EfeTiming, ARefusedSegmentAndThoseAfterItComeAgainAfterAnRnr) {
  EfeConfig c;
  c.rnr_delay_ns = 10000;
  c.ack_delay_ns = 1'000'000;  // no delayed ACK inside the test's window
  Pair p(c);
  p.hold_b = true;
  std::vector<uint32_t> gens;
  auto deliver = p.b->on_segment;
  p.b->on_segment = [&](Efe::RxSegment&& s) {
    gens.push_back(s.gen);
    deliver(std::move(s));
  };
  for (uint32_t q = 0; q < 3; ++q) p.a->send(kMacB, 1, seg(500), q == 2);
  sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_US));
  ASSERT_EQ(p.held.size(), 3u);
  p.b->validated(kMacA, 0, false);
  const uint64_t refused_at = now_ps();
  EXPECT_EQ(p.b->refuse(kMacA, 1), 1u);
  p.held.clear();
  p.hold_b = false;
  sc_core::sc_start();
  const auto rnrs = p.frames(Type::kRnr, false);
  ASSERT_FALSE(rnrs.empty());
  EXPECT_EQ(rnrs.front().second.ack, 1u) << "the RNR names the refused SEQ";
  EXPECT_LT(rnrs.front().first - refused_at, 2'000'000u) << "sent at once";
  EXPECT_TRUE(p.frames(Type::kNack, false).empty()) << "no NACK for the frames taken back";
  std::vector<uint64_t> seg1;
  for (const Event& e : p.events)
    if (e.who == 'b' && e.what == "seg 1") seg1.push_back(e.at);
  ASSERT_EQ(seg1.size(), 2u) << "seg 1 given to the core twice";
  EXPECT_GE(seg1[1] - rnrs.front().first, 10'000'000u) << "resent after the RNR delay";
  EXPECT_EQ(gens, (std::vector<uint32_t>{0, 0, 0, 1, 1})) << "the resends carry the new generation";
  EXPECT_EQ(p.counter("b.peer_020000000001", "rx_buffer_refused"), 1u);
  EXPECT_EQ(p.counter("a", "channel_failures"), 0u) << "an RNR spends no retry";
  EXPECT_TRUE(p.find('a', "ack 3"));
}

// Hostile frames straight from a's MAC (not a's EFE): a gap, a duplicate, a truncated header,
// a reserved byte, another MAC's frame. Only the in-order frame reaches the core; each of the
// others moves its counter, and the gap draws one NACK naming the first missing SEQ (the frame
// behind it none), then, with nothing more arriving, three more 10 us apart (the timer's).
TEST(EfeTiming, HostileFramesPlaceNothingAndMoveTheirCounters) {
  Pair p(EfeConfig{});
  auto data = raw_data;
  p.ma->send(data(0));  // in order: delivered
  p.ma->send(data(0));  // again: a duplicate
  p.ma->send(data(5));  // a gap: dropped, NACK for 1
  p.ma->send(data(6));  // still the gap: dropped, no second NACK
  std::vector<uint8_t> cut = data(1);
  cut.resize(eth::kHeaderBytes + 10);  // shorter than an EFE header (padded by the MAC)
  cut[eth::kHeaderBytes] = 0x1F;       // and a type that does not exist
  p.ma->send(cut);
  std::vector<uint8_t> rsvd = data(1);
  rsvd[eth::kHeaderBytes + 1] = 0;
  rsvd[eth::kHeaderBytes + 15] = 0x40;  // byte 15 without UT (reserved then)
  p.ma->send(rsvd);
  std::vector<uint8_t> other = data(1);
  other[5] ^= 0x40;  // for another MAC
  p.ma->send(other);
  sc_core::sc_start();
  int segs = 0;
  for (const Event& e : p.events) segs += e.who == 'b' && e.what.rfind("seg ", 0) == 0;
  EXPECT_EQ(segs, 1) << "only SEQ 0 reaches the core";
  EXPECT_EQ(p.counter("b", "rx_duplicates"), 1u);
  EXPECT_EQ(p.counter("b", "rx_out_of_seq"), 2u);
  EXPECT_EQ(p.counter("b", "rx_dropped"), 3u) << "truncated, reserved byte, not ours";
  EXPECT_EQ(p.counter("b", "tx_nacks"), 4u) << "one NACK for the gap, three on the timer";
  const auto nacks = p.frames(Type::kNack, false);
  ASSERT_EQ(nacks.size(), 4u);
  for (size_t i = 0; i < nacks.size(); ++i) {
    EXPECT_EQ(nacks[i].second.ack, 1u) << "NACK " << i;
    if (i > 0) EXPECT_GE(nacks[i].first, nacks[i - 1].first + 10'000'000) << "NACK " << i;
  }
}

// Selective: a gap still open efe.ack_delay_ns (10 us) after its last NACK is NACKed again (that
// NACK, or the resend it asked for, may have been lost), when the time comes whether or not a
// frame arrives (a sender its window holds back sends none), at most three times in a row with
// nothing arriving from the peer; sooner, a frame behind the gap draws nothing.
TEST(EfeTiming, AGapStillOpenIsNackedAgain) {
  Pair p(EfeConfig{});
  auto data = raw_data;
  p.ma->send(data(0));
  p.ma->send(data(2));  // a gap at 1: a NACK
  sc_core::sc_start(5, sc_core::SC_US);
  p.ma->send(data(3));  // 5 us on: nothing more
  sc_core::sc_start(15, sc_core::SC_US);
  p.ma->send(data(4));  // 20 us on: the timer's NACK has just gone
  sc_core::sc_start(5, sc_core::SC_US);
  p.ma->send(data(2));  // a duplicate, within 10 us of that NACK: a plain ACK
  sc_core::sc_start();
  const auto nacks = p.frames(Type::kNack, false);
  // At about 0, 10 and 20 us, then three more 10 us apart after the last arrival (25 us).
  ASSERT_EQ(nacks.size(), 6u);
  for (size_t i = 0; i < nacks.size(); ++i) {
    EXPECT_EQ(nacks[i].second.ack, 1u) << "NACK " << i;
    EXPECT_EQ(nacks[i].second.length, 8u) << "NACK " << i << ": one range, [1, 2)";
    if (i > 0) {
      EXPECT_GE(nacks[i].first, nacks[i - 1].first + 10'000'000) << "NACK " << i;
      EXPECT_LT(nacks[i].first, nacks[i - 1].first + 10'100'000) << "NACK " << i;
    }
  }
  EXPECT_LT(nacks[1].first, 11'000'000u) << "the timer's, with no frame since 5 us";
  EXPECT_EQ(p.counter("b", "rx_duplicates"), 1u);
}

TEST(EfeTiming, AnAckWaitsForTheDataFrameThePeerSentBeforeIt) {
  // B answers A's segment with a DATA frame of its own (a Terminate, say) that carries the ACK;
  // that frame is lost. A's resend draws a standalone ACK from B, which arrives before B's resend
  // of its DATA frame: A's core must hear the DATA frame first.
  EfeConfig c;
  c.rto_ns = 20000;
  Pair p(c);
  bool answered = false;
  p.b->on_segment = [&](Efe::RxSegment&& s) {
    p.events.push_back({'b', "seg " + std::to_string(s.seq), now_ps()});
    if (!answered) {
      answered = true;
      p.link->add_down(now_ps(), now_ps() + 5'000'000);  // B's frame is lost
      p.b->send(kMacA, 2, seg(50), true);
    }
    p.b->validated(s.src, s.seq, s.ar);
  };
  p.a->send(kMacB, 1, seg(1000), true);
  sc_core::sc_start();
  std::vector<std::string> at_a;
  for (const Event& e : p.events)
    if (e.who == 'a') at_a.push_back(e.what);
  ASSERT_GE(at_a.size(), 2u);
  EXPECT_EQ(at_a[0], "seg 0") << "B's DATA frame before the ACK sent after it";
  EXPECT_EQ(at_a[1], "ack 1");
  EXPECT_GE(p.counter("b", "retransmissions"), 1u);
  EXPECT_GE(p.counter("b.peer_020000000001", "duplicates"), 1u) << "A resent; B answered";
}

// What goes to the MAC is chosen once every input of the time step has arrived (StepEnd), not
// in the order SystemC runs the senders: B's DATA frame leaves its pipeline at t, and the core
// validates A's segment at t one delta later. The DATA frame carries that validation's ACK, and
// no ACK frame goes (chosen at the first delta, the DATA frame would leave with the old ACK and
// a standalone ACK behind it).
TEST(EfeTiming, AValidationAtTheTimeADataFrameLeavesRidesOnIt) {
  EfeConfig c = line_start();
  c.ack_every_frames = 1;
  Pair p(c);
  p.hold_b = true;
  p.a->send(kMacB, 1, seg(100), false);
  sc_core::sc_spawn([&] {
    sc_core::wait(5, sc_core::SC_US);  // A's segment is held by B's core by then
    ASSERT_EQ(p.held.size(), 1u);
    p.b->send(kMacA, 2, seg(100), false);  // leaves the pipeline at the next edge
    sc_core::wait(4, sc_core::SC_NS);
    sc_core::wait(sc_core::SC_ZERO_TIME);
    p.b->validated(p.held[0].src, p.held[0].seq, p.held[0].ar);
  });
  sc_core::sc_start();
  const auto data = p.frames(Type::kData, false);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(data[0].second.ack, 1u) << "B's DATA frame acknowledges A's segment";
  EXPECT_EQ(p.counter("b", "tx_acks"), 0u) << "no ACK frame besides";
  EXPECT_TRUE(p.find('a', "ack 1"));
}

// Control frames owed at one time leave in their peers' MAC order, whichever of their causes ran
// first (a validation from the core, the ACK timer, a received frame): another process's event
// at that time, or a run split over several processes, must not reorder them. At 1 us B owes
// ACKs to a high then a low MAC, at 2 us to a low then a high one: the low goes first each time.
TEST(EfeTiming, ControlFramesOwedAtOneTimeLeaveInTheirPeersMacOrder) {
  EfeConfig c;
  Pair p(c);
  std::vector<eth::Mac> to;
  p.link->add_wire_tap([&](uint64_t, const EthMac::Frame& f, const uint8_t*, int end) {
    if (end == 1) to.push_back({f[0], f[1], f[2], f[3], f[4], f[5]});
  });
  const eth::Mac lo1{2, 0, 0, 0, 1, 0x10}, hi1{2, 0, 0, 0, 1, 0x20};
  const eth::Mac lo2{2, 0, 0, 0, 2, 0x10}, hi2{2, 0, 0, 0, 2, 0x20};
  sc_core::sc_spawn([&] {
    sc_core::wait(1, sc_core::SC_US);
    p.b->validated(hi1, 0, true);
    p.b->validated(lo1, 0, true);
    sc_core::wait(1, sc_core::SC_US);
    p.b->validated(lo2, 0, true);
    p.b->validated(hi2, 0, true);
  });
  sc_core::sc_start(10, sc_core::SC_US);
  EXPECT_EQ(to, (std::vector<eth::Mac>{lo1, hi1, lo2, hi2}));
}

}  // namespace
}  // namespace rnic::efe
