// Ethernet link and MACs: exact frame timing (preamble, padding, FCS, IFG, propagation, the
// crc32 block's beats and latency, edge alignment), back-to-back line rate with the transmit
// FIFO's back-pressure, FCS errors dropped and counted, MTU, and the wire tap.
#include "models/eth/eth_link.h"

#include <gtest/gtest.h>

#include <functional>

#include "models/eth/eth_mac.h"
#include "models/eth/ethernet.h"

namespace rnic::eth {
namespace {

struct Bench {
  // rnic-10g: 250 MHz x 16 B core, 10 Gb/s (800 ps a byte), prop 5 ns
  EthMacParams cfg;
  LinkParams lp;
  StatRegistry stats;
  std::unique_ptr<EthMac> a, b;
  std::unique_ptr<EthLink> link;
  std::vector<std::pair<uint64_t, EthLink::Frame>> got;  // (time, frame) at port b
  std::vector<uint64_t> starts;                          // first bit on the wire
  explicit Bench(void (*tweak)(EthMacParams&, LinkParams&) = nullptr) {
    if (tweak) tweak(cfg, lp);
    a = std::make_unique<EthMac>("a", cfg, stats);
    b = std::make_unique<EthMac>("b", cfg, stats);
    link = std::make_unique<EthLink>("eth", lp, *a, *b, stats);
    b->set_receiver([this](const EthMac::FramePtr& f) { got.push_back({now_ps(), *f}); });
    link->add_wire_tap(
        [this](uint64_t t, const EthLink::Frame&, const uint8_t*, int) { starts.push_back(t); });
  }
  uint64_t counter(const char* g, const char* n) { return stats.group(g).counter(n, "", "").value; }
};

EthLink::Frame frame(size_t len, uint8_t seed) {
  EthLink::Frame f(len);
  for (size_t i = 0; i < len; ++i) f[i] = uint8_t(seed + i * 7);
  return f;
}

// 60 B frame handed over at t = 0: 4 beats of 16 B, first bit at (3 + 2) cycles = 20 ns; on the
// wire (8 + 60 + 4) x 800 ps = 57.6 ns; + 5 ns: last bit at 82.6 ns; next edge 84 ns, + (1 + 2)
// cycles = 96 ns at the peer's upper layer.
TEST(EthLink, OneFrameLatency) {
  Bench b;
  b.a->send(frame(60, 1));
  sc_core::sc_start();
  ASSERT_EQ(b.got.size(), 1u);
  EXPECT_EQ(b.starts[0], 20000u);
  EXPECT_EQ(b.got[0].first, 96000u);
  EXPECT_EQ(b.got[0].second, frame(60, 1));
}

// A short frame is padded to 60 B and costs what a 60 B frame costs.
TEST(EthLink, ShortFramesArePadded) {
  Bench b;
  b.a->send(frame(20, 1));
  sc_core::sc_start();
  ASSERT_EQ(b.got.size(), 1u);
  EXPECT_EQ(b.got[0].second.size(), 60u);
  EXPECT_EQ(b.counter("a", "tx_wire_bytes"), 84u);
}

// Full-size frames back to back through a 8-frame FIFO refilled on every free slot: first bits
// exactly (8 + 1514 + 4 + 12) x 800 ps = 1230.4 ns apart; 10 Gb/s on the wire.
TEST(EthLink, BackToBackAtLineRate) {
  Bench b;
  int sent = 0;
  const int n = 100;
  auto fill = [&] {
    while (sent < n && b.a->can_send()) b.a->send(frame(1514, uint8_t(sent++)));
  };
  b.a->set_space_callback(fill);
  fill();
  EXPECT_EQ(sent, 8);  // the FIFO's depth
  sc_core::sc_start();
  ASSERT_EQ(b.got.size(), size_t(n));
  for (int i = 1; i < n; ++i) EXPECT_EQ(b.starts[i] - b.starts[i - 1], 1230400u) << i;
  for (int i = 0; i < n; ++i) EXPECT_EQ(b.got[i].second, frame(1514, uint8_t(i)));
  EXPECT_EQ(b.counter("a", "tx_wire_bytes"), uint64_t(n) * 1538);
}

TEST(EthLink, CorruptedFrameIsDroppedAndCounted) {
  Bench b;
  b.a->corrupt_next(200);
  b.a->send(frame(100, 1));
  b.a->send(frame(100, 2));
  sc_core::sc_start();
  ASSERT_EQ(b.got.size(), 1u);
  EXPECT_EQ(b.got[0].second, frame(100, 2));
  EXPECT_EQ(b.counter("b", "rx_fcs_errors"), 1u);
  EXPECT_EQ(b.counter("b", "rx_frames"), 1u);
}

// Link faults (eth_link.h). Frames of 1514 B back to back (1230.4 ns apart): a down interval
// loses exactly the frames with bits on the wire inside it; random loss and bit errors are drawn
// from the seed, counted, and the survivors arrive intact and in order.
int send_n(Bench& b, int n) {
  static int sent;
  sent = 0;
  static std::function<void()> fill;
  fill = [&b, n] {
    while (sent < n && b.a->can_send()) b.a->send(frame(1514, uint8_t(sent++)));
  };
  b.a->set_space_callback([] { fill(); });
  fill();
  sc_core::sc_start();
  return sent;
}

TEST(EthLinkFaults, ADownIntervalLosesTheFramesOnTheWireInsideIt) {
  // Down from 10 us to 20 us: frame i is on the wire [s_i, s_i + 1220.8 ns) (s_i from the tap);
  // those overlapping the interval are lost: 9 of them, 1230.4 ns apart.
  Bench b([](EthMacParams&, LinkParams& l) { l.down_ps = {{10'000'000, 20'000'000}}; });
  ASSERT_EQ(send_n(b, 40), 40);
  ASSERT_EQ(b.starts.size(), 40u) << "captures show every frame sent";
  std::vector<int> expect;
  for (int i = 0; i < 40; ++i)
    if (b.starts[size_t(i)] + 1220800 <= 10'000'000 || b.starts[size_t(i)] >= 20'000'000)
      expect.push_back(i);
  EXPECT_EQ(expect.size(), 31u);
  EXPECT_EQ(b.counter("eth", "lost_down"), 9u);
  ASSERT_EQ(b.got.size(), expect.size());
  for (size_t k = 0; k < b.got.size(); ++k)
    EXPECT_EQ(b.got[k].second, frame(1514, uint8_t(expect[k]))) << k;
}

TEST(EthLinkFaults, RandomLossIsCountedAndTheRestArriveInOrder) {
  Bench b([](EthMacParams&, LinkParams& l) {
    l.loss = 0.2;
    l.seed = 7;
  });
  ASSERT_EQ(send_n(b, 1000), 1000);
  const uint64_t lost = b.counter("eth", "lost_random");
  EXPECT_EQ(lost + b.got.size(), 1000u);
  EXPECT_GT(lost, 150u);  // 200 expected; 1000 draws of p = 0.2 stay within 150..250
  EXPECT_LT(lost, 250u);
  for (size_t k = 1; k < b.got.size(); ++k)
    EXPECT_LT(uint8_t(b.got[k].second[0] - b.got[k - 1].second[0]), 128) << "in order";
  EXPECT_EQ(b.counter("b", "rx_fcs_errors"), 0u);
}

TEST(EthLinkFaults, BitErrorsFailTheReceiversFcs) {
  // BER 1e-4 over (1514 + 4) x 8 bits: a frame has an error with probability 1 - (1 - 1e-4)^12144
  // = 0.70.
  Bench b([](EthMacParams&, LinkParams& l) { l.ber = 1e-4; });
  ASSERT_EQ(send_n(b, 1000), 1000);
  const uint64_t bad = b.counter("eth", "corrupted");
  EXPECT_GT(bad, 640u);
  EXPECT_LT(bad, 760u);
  EXPECT_EQ(b.counter("b", "rx_fcs_errors"), bad) << "every corrupted frame fails the FCS";
  EXPECT_EQ(b.got.size(), 1000u - bad);
}

// IEEE 802.3x PAUSE (eth_mac.h): a 60 B PAUSE handed over at 0 reaches b's upper side at 96 ns
// (EthLink.OneFrameLatency), where it holds b's transmitter for its quanta x 512 bit times
// (100 x 64 B x 800 ps = 5.12 us): a frame b is given at 200 ns waits until 5216 ns. A PAUSE of
// 0 quanta resumes at once.
TEST(EthLinkPause, APauseHoldsTheReceiversTransmitterForItsQuanta) {
  Bench b;
  std::vector<uint64_t> b_starts;
  b.link->add_wire_tap([&](uint64_t t, const EthLink::Frame& f, const uint8_t*, int) {
    if (f[6] == 0xBB) b_starts.push_back(t);  // frames from b (source MAC byte 0)
  });
  b.a->send(pause_frame({0xAA, 0, 0, 0, 0, 1}, 100));
  EthLink::Frame f = frame(200, 1);
  f[6] = 0xBB;
  sc_core::sc_start(200, sc_core::SC_NS);
  b.b->send(f);
  sc_core::sc_start();
  ASSERT_EQ(b_starts.size(), 1u);
  EXPECT_EQ(b_starts[0], 5216000u);
  EXPECT_EQ(b.counter("b", "rx_pause"), 1u);
  EXPECT_EQ(b.counter("b", "rx_frames"), 0u) << "a PAUSE is not handed up";
}

TEST(EthLinkPause, APauseOfZeroResumesAtOnce) {
  Bench b;
  std::vector<uint64_t> b_starts;
  b.link->add_wire_tap([&](uint64_t t, const EthLink::Frame& f, const uint8_t*, int) {
    if (f[6] == 0xBB) b_starts.push_back(t);
  });
  b.a->send(pause_frame({0xAA, 0, 0, 0, 0, 1}, 0xFFFF));  // 3.36 ms
  EthLink::Frame f = frame(200, 1);
  f[6] = 0xBB;
  sc_core::sc_start(200, sc_core::SC_NS);
  b.b->send(f);
  sc_core::sc_start(1000, sc_core::SC_NS);
  EXPECT_TRUE(b_starts.empty()) << "held";
  b.a->send(pause_frame({0xAA, 0, 0, 0, 0, 1}, 0));  // at 1200 ns: arrives at 1296 ns
  sc_core::sc_start();
  ASSERT_EQ(b_starts.size(), 1u);
  EXPECT_EQ(b_starts[0], 1296000u) << "resumed when the PAUSE of 0 arrived";
  EXPECT_EQ(b.counter("b", "rx_pause"), 2u);
}

TEST(EthLink, OversizeFramesAreRefused) {
  Bench b;
  EXPECT_FALSE(b.a->send(frame(1515, 1)));
  EXPECT_TRUE(b.a->send(frame(1514, 1)));
  sc_core::sc_start();
  EXPECT_EQ(b.got.size(), 1u);
  EXPECT_EQ(b.counter("a", "tx_oversize"), 1u);
}

// 100 GbE: 80 ps a byte; 64 B core datapath: a 1514 B frame is 24 beats.
TEST(EthLink, HundredGig) {
  Bench b([](EthMacParams& c, LinkParams& l) {
    l.rate_gbps = 100;
    c.datapath_bytes = 64;
  });
  EXPECT_EQ(b.link->byte_ps(), 80u);
  b.a->send(frame(1514, 1));
  b.a->send(frame(1514, 2));
  sc_core::sc_start();
  ASSERT_EQ(b.starts.size(), 2u);
  EXPECT_EQ(b.starts[0], (24u - 1 + 2) * 4000);
  EXPECT_EQ(b.starts[1] - b.starts[0], 1538u * 80);
}

}  // namespace
}  // namespace rnic::eth
