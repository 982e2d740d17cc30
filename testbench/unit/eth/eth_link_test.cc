// Ethernet link and MACs: exact frame timing (preamble, padding, FCS, IFG, propagation, the
// crc32 block's beats and latency, edge alignment), back-to-back line rate with the transmit
// FIFO's back-pressure, FCS errors dropped and counted, MTU, and the wire tap.
#include "models/eth/eth_link.h"

#include <gtest/gtest.h>

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
    link = std::make_unique<EthLink>("eth", lp, *a, *b);
    b->set_receiver([this](EthLink::Frame&& f) { got.push_back({now_ps(), std::move(f)}); });
    link->set_wire_tap(
        [this](uint64_t t, const EthLink::Frame&, const uint8_t*) { starts.push_back(t); });
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
