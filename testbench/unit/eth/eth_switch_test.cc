// The switch (eth_switch.h) between three MAC ports (rnic-10g: 10 Gb/s, 5 ns links): its
// latency pinned for store and forward and for cut through, its output queue's bound and tail
// drop, CE marking that keeps the FCS good, and the order of frames that arrive at once.
#include "models/eth/eth_switch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "models/eth/eth_mac.h"
#include "models/eth/ethernet.h"

namespace rnic::eth {
namespace {

const Mac kA{2, 0, 0, 0, 0, 1}, kB{2, 0, 0, 0, 0, 2}, kC{2, 0, 0, 0, 0, 3};

struct Bench {
  EthMacParams mp;
  StatRegistry stats;
  std::unique_ptr<EthMac> a, b, c;
  std::unique_ptr<EthSwitch> sw;
  std::unique_ptr<EthLink> la, lb, lc;
  std::vector<uint64_t> a_starts, out_starts;  // first bits: from a; from the switch to b
  std::vector<EthMac::Frame> got;              // what b's upper side received
  explicit Bench(const SwitchConfig& cfg) {
    a = std::make_unique<EthMac>("a", mp, stats);
    b = std::make_unique<EthMac>("b", mp, stats);
    c = std::make_unique<EthMac>("c", mp, stats);
    sw = std::make_unique<EthSwitch>("sw", 3, cfg, stats);
    la = std::make_unique<EthLink>("la", LinkParams{}, *a, sw->port(0), stats);
    lb = std::make_unique<EthLink>("lb", LinkParams{}, sw->port(1), *b, stats);
    lc = std::make_unique<EthLink>("lc", LinkParams{}, *c, sw->port(2), stats);
    sw->set_route(kA, {0});
    sw->set_route(kB, {1});
    sw->set_route(kC, {2});
    la->add_wire_tap(
        [this](uint64_t t, const EthMac::Frame&, const uint8_t*, int) { a_starts.push_back(t); });
    lb->add_wire_tap(
        [this](uint64_t t, const EthMac::Frame&, const uint8_t*, int) { out_starts.push_back(t); });
    b->set_receiver([this](const EthMac::FramePtr& f) { got.push_back(*f); });
  }
  uint64_t counter(const char* g, const char* n) { return stats.group(g).counter(n, "", "").value; }

  // a and c each send n frames to b as fast as their MACs take them (make(from_a, i) is the
  // i-th), then the simulation runs to its end.
  void both_send(int n, std::function<EthMac::Frame(bool from_a, int i)> make) {
    auto fill = [this, n, make, sent_a = 0, sent_c = 0]() mutable {
      while (sent_a < n && a->can_send()) a->send(make(true, sent_a++));
      while (sent_c < n && c->can_send()) c->send(make(false, sent_c++));
    };
    auto shared = std::make_shared<decltype(fill)>(std::move(fill));
    a->set_space_callback([shared] { (*shared)(); });
    c->set_space_callback([shared] { (*shared)(); });
    (*shared)();
    sc_core::sc_start();
  }
};

// A 1514 B frame to b (an EFE DATA frame when efe is set: type 0 in the byte after the header).
EthMac::Frame frame(const Mac& src, uint8_t tag) {
  EthMac::Frame f =
      build_frame({kB, src, kEtherTypeEfe}, std::vector<uint8_t>(1500, tag).data(), 1500);
  f[kHeaderBytes] = 0x10;  // EFE version 1, type DATA
  f[kHeaderBytes + 1] = 0;
  return f;
}

// 1514 B: (8 + 1514 + 4) x 800 ps = 1220.8 ns on the wire, then 5 ns of link. Store and forward:
// the switch has the last bit 1225.8 ns after the first left a, queues the frame latency_ns
// (300 ns) later, and it starts at once on the idle port.
// Where two ports lead to a host, the (source, destination) pair's hash picks one, always the
// same for a pair, and pairs spread over both: of 32 senders whose MACs' last bytes are all even
// (a leaf/spine scale run's pattern), each port takes at least a quarter.
TEST(EthSwitch, EqualPathsSpreadPairsByHash) {
  StatRegistry stats;
  EthSwitch sw("sw", 3, SwitchConfig{}, stats);
  const Mac dst{2, 0, 0, 0, 0, 0x40};
  sw.set_route(dst, {1, 2});
  int on[3] = {0, 0, 0};
  for (int i = 0; i < 32; ++i) {
    const Mac src{2, 0, 0, 0, 0, uint8_t(2 * i)};
    const int out = sw.route(src, dst);
    ASSERT_TRUE(out == 1 || out == 2) << out;
    EXPECT_EQ(sw.route(src, dst), out) << "the same pair, the same path";
    ++on[out];
  }
  EXPECT_GE(on[1], 8);
  EXPECT_GE(on[2], 8);
}

TEST(EthSwitch, StoreAndForwardLatency) {
  SwitchConfig cfg;
  Bench t(cfg);
  t.a->send(frame(kA, 1));
  sc_core::sc_start();
  ASSERT_EQ(t.a_starts.size(), 1u);
  ASSERT_EQ(t.out_starts.size(), 1u);
  EXPECT_EQ(t.out_starts[0] - t.a_starts[0], 1220800u + 5000u + 300000u);
  ASSERT_EQ(t.got.size(), 1u);
  EXPECT_EQ(t.got[0], frame(kA, 1));
}

// Cut through: queued latency_ns after the preamble and the 14-byte header are in:
// 5 ns + (8 + 14) x 800 ps + 300 ns after the first bit left a.
TEST(EthSwitch, CutThroughLatency) {
  SwitchConfig cfg;
  cfg.mode = "cut_through";
  Bench t(cfg);
  t.a->send(frame(kA, 1));
  sc_core::sc_start();
  ASSERT_EQ(t.out_starts.size(), 1u);
  EXPECT_EQ(t.out_starts[0] - t.a_starts[0], 5000u + 17600u + 300000u);
}

// a and c each send 12 frames to b at line rate: the output port takes one frame time for two
// arriving, so its queue grows until port_buffer_bytes (9000: five 1514 B frames) and the rest
// are dropped at the tail. Every frame is either sent on or dropped.
// b pauses the switch's port towards it (65,535 quanta: 3.36 ms at 10 Gb/s), a sends it 3
// frames, and at 50 us b resumes it (a PAUSE of 0). The frames wait for the resume, not for the
// pause's time: the first goes on the wire as the resume's last bit is in (84 B on the wire
// after it starts: 67.2 ns, plus 5 ns of link), the others behind it.
TEST(EthSwitch, AResumeEndsAPauseEarly) {
  SwitchConfig cfg;
  Bench t(cfg);
  std::vector<uint64_t> to_b;  // first bits from the switch's end of lb (end 0)
  t.lb->add_wire_tap([&to_b](uint64_t at, const EthMac::Frame&, const uint8_t*, int end) {
    if (end == 0) to_b.push_back(at);
  });
  t.b->send(pause_frame(kB, 0xFFFF));
  sc_core::sc_start(1, sc_core::SC_US);
  ASSERT_EQ(t.counter("sw.p1", "pause_rx"), 1u);
  for (int i = 0; i < 3; ++i) t.a->send(frame(kA, uint8_t(i)));
  sc_core::sc_start(49, sc_core::SC_US);
  EXPECT_TRUE(to_b.empty()) << "paused";
  t.b->send(pause_frame(kB, 0));
  sc_core::sc_start();
  ASSERT_EQ(to_b.size(), 3u);
  EXPECT_EQ(t.counter("sw.p1", "pause_rx"), 2u);
  EXPECT_GT(to_b[0], 50'000'000u);
  EXPECT_LT(to_b[0], 51'000'000u) << "at the resume, not 3.36 ms later";
  EXPECT_EQ(t.got.size(), 3u);
}

// a pauses the switch's port towards it (65,535 quanta: 3.36 ms), then a and c each send 8
// frames to b: b's port takes one frame time for two arriving, a's frames pass xoff (2,048 B)
// and the switch pauses a and later resumes it. Its PAUSE frames to a are MAC control frames,
// which a paused port still sends (802.3 Annex 31B): they go out within microseconds, not when
// a's pause of the port ends, and in the order they were made (the last a resume, so a ends
// free to send). Nothing is dropped and b gets all 16.
TEST(EthSwitch, APausedPortStillSendsItsOwnPauseFramesInOrder) {
  SwitchConfig cfg;
  cfg.pause = true;
  cfg.pause_xoff_bytes = 2048;
  cfg.pause_xon_bytes = 1024;
  Bench t(cfg);
  std::vector<std::pair<uint64_t, uint16_t>> to_a;  // the switch's PAUSE frames: time, quanta
  t.la->add_wire_tap([&to_a](uint64_t at, const EthMac::Frame& f, const uint8_t*, int end) {
    uint16_t quanta = 0;
    if (end == 1 && parse_pause(f.data(), f.size(), &quanta)) to_a.push_back({at, quanta});
  });
  t.a->send(pause_frame(kA, 0xFFFF));
  sc_core::sc_start(1, sc_core::SC_US);
  ASSERT_EQ(t.counter("sw.p0", "pause_rx"), 1u);
  t.both_send(8, [](bool from_a, int i) {
    return from_a ? frame(kA, uint8_t(i)) : frame(kC, uint8_t(100 + i));
  });
  ASSERT_GE(to_a.size(), 2u);
  EXPECT_EQ(to_a.size(), t.counter("sw.p0", "pause_tx"));
  EXPECT_EQ(to_a[0].second, 0xFFFF) << "first a pause";
  EXPECT_LT(to_a[0].first, 20'000'000u) << "within microseconds, not after a's 3.36 ms";
  EXPECT_EQ(to_a.back().second, 0) << "last a resume";
  EXPECT_LT(to_a.back().first, 40'000'000u);
  for (size_t i = 1; i < to_a.size(); ++i) EXPECT_GE(to_a[i].first, to_a[i - 1].first);
  EXPECT_EQ(t.counter("sw.p1", "tail_drops"), 0u);
  EXPECT_EQ(t.got.size(), 16u);
}

// switch.pause_quanta below the longest: b pauses the switch's port towards it (65,535 quanta),
// so a's frames to b stay queued and a stays paused. The switch's PAUSE to a asks for 100
// quanta (5.12 us at 10 Gb/s) and goes again every half of that (2.56 us) while a holds too
// much; when b resumes at 50 us a's frames drain and a gets its resume, after which nothing
// more. With 65,535 quanta (the default) nothing is sent between the first microseconds'
// pauses and the resume.
void refreshed_pause(int64_t quanta) {
  SwitchConfig cfg;
  cfg.pause = true;
  cfg.pause_xoff_bytes = 2048;
  cfg.pause_xon_bytes = 1024;
  cfg.pause_quanta = quanta;
  Bench t(cfg);
  std::vector<std::pair<uint64_t, uint16_t>> to_a;
  t.la->add_wire_tap([&to_a](uint64_t at, const EthMac::Frame& f, const uint8_t*, int end) {
    uint16_t q = 0;
    if (end == 1 && parse_pause(f.data(), f.size(), &q)) to_a.push_back({at, q});
  });
  t.b->send(pause_frame(kB, 0xFFFF));
  sc_core::sc_start(1, sc_core::SC_US);
  for (int i = 0; i < 4; ++i) t.a->send(frame(kA, uint8_t(i)));
  sc_core::sc_start(49, sc_core::SC_US);
  t.b->send(pause_frame(kB, 0));
  sc_core::sc_start();
  EXPECT_EQ(t.got.size(), 4u);
  ASSERT_GE(to_a.size(), 2u);
  EXPECT_EQ(to_a.back().second, 0) << "the resume, last";
  EXPECT_GT(to_a.back().first, 50'000'000u) << "after b's resume";
  // The first few come as a's frames already on their way arrive (a pause again each time its
  // frames grow by half the xoff: it may have been lost), all within 10 us; after that only
  // refreshes, one every 2.56 us until the resume.
  std::vector<uint64_t> later;
  for (size_t i = 0; i + 1 < to_a.size(); ++i) {
    EXPECT_EQ(to_a[i].second, uint16_t(quanta)) << "pause " << i;
    if (to_a[i].first > 10'000'000u) later.push_back(to_a[i].first);
  }
  if (quanta == 0xFFFF) {
    EXPECT_TRUE(later.empty()) << "no refresh";
    return;
  }
  EXPECT_GE(later.size(), 15u);
  EXPECT_LE(later.size(), 17u);
  for (size_t i = 1; i < later.size(); ++i)
    EXPECT_EQ(later[i] - later[i - 1], 2'560'000u) << "refresh " << i;
}
TEST(EthSwitch, ABoundedPauseIsRefreshedWhileTheInputHoldsTooMuch) { refreshed_pause(100); }
TEST(EthSwitch, TheLongestPauseIsNotRefreshed) { refreshed_pause(0xFFFF); }

// A shared buffer: a and c each send 12 frames to b through a 12,000-byte pool (alpha 1, so an
// input is paused when its share passes the pool's free bytes: with both busy, about a third
// of the pool each), each with 16 KiB of headroom for what it sends after its PAUSE: the bench's
// MACs are kept full, and the frames their 8-frame FIFOs have already timed for the wire still
// go (about 10 frames with the one on the wire and the switch's pipeline). Both are paused and
// resumed, nothing is dropped and b gets all 24. With 3,000 bytes of headroom (one frame) what
// comes after a PAUSE is dropped at the input.
void shared_buffer(int64_t headroom, bool lossless) {
  SwitchConfig cfg;
  cfg.pause = true;
  cfg.shared_buffer_bytes = 12000;
  cfg.pause_alpha = 1;
  cfg.pause_headroom_bytes = headroom;
  cfg.pause_xon_bytes = 1514;
  Bench t(cfg);
  t.both_send(12, [](bool from_a, int i) {
    return from_a ? frame(kA, uint8_t(i)) : frame(kC, uint8_t(100 + i));
  });
  EXPECT_EQ(t.counter("sw.p1", "tail_drops"), 0u);
  EXPECT_GE(t.counter("sw.p0", "pause_tx"), 2u) << "a paused and resumed";
  EXPECT_GE(t.counter("sw.p2", "pause_tx"), 2u) << "c paused and resumed";
  const uint64_t drops = t.counter("sw.p0", "ingress_drops") + t.counter("sw.p2", "ingress_drops");
  if (lossless) {
    EXPECT_EQ(drops, 0u);
    EXPECT_EQ(t.got.size(), 24u);
    EXPECT_LE(t.counter("sw.p1", "queue_max_bytes"), 12000u + 2 * 16384u);
  } else {
    EXPECT_GT(drops, 0u);
    EXPECT_EQ(t.got.size(), 24u - drops);
  }
}
TEST(EthSwitch, ASharedBufferPausesEachInputAtItsShareAndLosesNothing) {
  shared_buffer(16384, true);
}
TEST(EthSwitch, ASharedBufferDropsWhatItsHeadroomCannotHold) { shared_buffer(3000, false); }

TEST(EthSwitch, TheOutputQueueIsBoundedAndDropsAtTheTail) {
  SwitchConfig cfg;
  cfg.port_buffer_bytes = 9000;
  Bench t(cfg);
  t.both_send(12, [](bool from_a, int i) {
    return from_a ? frame(kA, uint8_t(i)) : frame(kC, uint8_t(100 + i));
  });
  const uint64_t drops = t.counter("sw.p1", "tail_drops");
  EXPECT_GT(drops, 0u);
  EXPECT_EQ(t.counter("sw.p1", "tx_frames") + drops, 24u);
  EXPECT_EQ(t.got.size(), 24u - drops);
  EXPECT_EQ(t.counter("sw.p1", "queue_max_bytes"), 5u * 1514u);
}

// CE marking above ecn_bytes (3000: two frames queued): the frames that join a queue of two or
// more arrive marked (EFE byte 1, 0x40) with a good FCS; the first two do not.
TEST(EthSwitch, FramesJoiningALongQueueAreMarkedCe) {
  SwitchConfig cfg;
  cfg.ecn_bytes = 3000;
  Bench t(cfg);
  t.both_send(6, [](bool from_a, int i) {
    return from_a ? frame(kA, uint8_t(i)) : frame(kC, uint8_t(100 + i));
  });
  ASSERT_EQ(t.got.size(), 12u);
  EXPECT_EQ(t.counter("b", "rx_fcs_errors"), 0u) << "the FCS follows the mark";
  uint64_t marked = 0;
  for (const EthMac::Frame& f : t.got) marked += (f[kHeaderBytes + 1] & 0x40) != 0;
  EXPECT_EQ(marked, t.counter("sw.p1", "ce_marked"));
  EXPECT_GT(marked, 0u);
  EXPECT_FALSE(t.got[0][kHeaderBytes + 1] & 0x40) << "the first frame met an empty queue";
}

// Utilisation stamps (switch.int_window_ns 10 us: 12,500 B at 10 Gb/s). a's and c's first frames
// reach the idle output together: a's joins an empty queue of a port that sent nothing (0), c's
// finds a's frame queued or just started, 1,514 B or 1,538 B of 12,500 (8/64 either way). Two
// senders at line rate into one port then fill the window and build a queue: later stamps pass
// 64 (a full port and a queue). Every DATA frame carries UT, its FCS good; a frame already
// stamped higher keeps its stamp, and an ACK is never stamped. Stamping takes no time: the first
// frame leaves the switch at the store-and-forward latency, and the others back to back.
TEST(EthSwitch, EfeDataFramesCarryTheOutputsUtilisation) {
  SwitchConfig cfg;
  cfg.int_window_ns = 10000;
  Bench t(cfg);
  constexpr size_t kFlags = kHeaderBytes + 1, kUtil = kHeaderBytes + 15;
  t.both_send(16, [](bool from_a, int i) {
    EthMac::Frame f = frame(from_a ? kA : kC, uint8_t(i));
    f[kUtil] = 0;
    if (!from_a && i == 10) {  // stamped higher upstream
      f[kFlags] = 0x01;
      f[kUtil] = 250;
    }
    if (!from_a && i == 11) f[kHeaderBytes] = 0x11;  // an ACK
    return f;
  });
  ASSERT_EQ(t.got.size(), 32u);
  EXPECT_EQ(t.counter("b", "rx_fcs_errors"), 0u) << "the FCS follows the stamp";
  EXPECT_EQ(t.got[0][kFlags], 0x01);
  EXPECT_EQ(t.got[0][kUtil], 0) << "an idle port";
  EXPECT_EQ(t.got[1][kUtil], 8) << "one frame of the window";
  int most = 0, upstream = 0, acks = 0;
  for (const EthMac::Frame& f : t.got) {
    if (f[kHeaderBytes] == 0x11) {
      ++acks;
      EXPECT_EQ(f[kFlags], 0) << "an ACK is not stamped";
      EXPECT_EQ(f[kUtil], 0);
      continue;
    }
    EXPECT_EQ(f[kFlags], 0x01);
    if (f[kUtil] == 250) {
      ++upstream;
      continue;
    }
    most = std::max<int>(most, f[kUtil]);
  }
  EXPECT_EQ(acks, 1);
  EXPECT_EQ(upstream, 1) << "the higher upstream stamp stays";
  EXPECT_GT(most, 64);
  EXPECT_LT(most, 250);
  EXPECT_EQ(t.counter("sw.p1", "int_stamped"), 30u) << "all but the ACK and the higher stamp";
  ASSERT_EQ(t.out_starts.size(), 32u);
  EXPECT_EQ(t.out_starts[0] - t.a_starts[0], 1220800u + 5000u + 300000u);
  for (size_t i = 1; i < t.out_starts.size(); ++i)
    EXPECT_EQ(t.out_starts[i] - t.out_starts[i - 1], 1538u * 800u) << "frame " << i;
}

// A 1514 B IPv4 frame to b with this ECN codepoint and a good header checksum.
EthMac::Frame ipv4_frame(const Mac& src, uint8_t tag, uint8_t ecn) {
  EthMac::Frame f =
      build_frame({kB, src, kEtherTypeIpv4}, std::vector<uint8_t>(1500, tag).data(), 1500);
  uint8_t* ip = f.data() + kHeaderBytes;
  const uint8_t hdr[20] = {0x45, ecn, 0x05, 0xDC, 0, 1, 0x40, 0, 64, 6,
                           0,    0,   10,   0,    0, 1, 10,   0, 0,  2};
  std::copy(hdr, hdr + 20, ip);
  uint32_t s = 0;
  for (int i = 0; i < 20; i += 2) s += uint32_t(ip[i]) << 8 | ip[i + 1];
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  ip[10] = uint8_t(~s >> 8);
  ip[11] = uint8_t(~s);
  return f;
}

bool ipv4_checksum_ok(const EthMac::Frame& f) {
  uint32_t s = 0;
  for (size_t i = kHeaderBytes; i < kHeaderBytes + 20; i += 2) s += uint32_t(f[i]) << 8 | f[i + 1];
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return s == 0xFFFF;
}

// The same queue for IPv4 (RFC 3168): ECN-capable frames (ECT(0) from a, ECT(1) from c) that
// join a long queue get CE in the IPv4 header with its checksum updated and a good FCS; a
// frame that is not ECN-capable is never marked.
TEST(EthSwitch, EcnCapableIpv4FramesAreMarkedCe) {
  SwitchConfig cfg;
  cfg.ecn_bytes = 3000;
  Bench t(cfg);
  // From a ECT(0), every third not ECN-capable; from c ECT(1).
  t.both_send(6, [](bool from_a, int i) {
    return from_a ? ipv4_frame(kA, uint8_t(i), i % 3 == 2 ? 0 : 2)
                  : ipv4_frame(kC, uint8_t(100 + i), 1);
  });
  ASSERT_EQ(t.got.size(), 12u);
  EXPECT_EQ(t.counter("b", "rx_fcs_errors"), 0u) << "the FCS follows the mark";
  uint64_t marked = 0, not_ect_marked = 0;
  for (const EthMac::Frame& f : t.got) {
    EXPECT_TRUE(ipv4_checksum_ok(f)) << "tag " << int(f[kHeaderBytes + 20]);
    const bool ce = (f[kHeaderBytes + 1] & 3) == 3;
    marked += ce;
    const uint8_t tag = f[kHeaderBytes + 20];
    if (tag < 100 && tag % 3 == 2) not_ect_marked += (f[kHeaderBytes + 1] & 3) != 0;
  }
  EXPECT_EQ(marked, t.counter("sw.p1", "ce_marked"));
  EXPECT_GT(marked, 0u);
  EXPECT_EQ(not_ect_marked, 0u);
  EXPECT_NE(t.got[0][kHeaderBytes + 1] & 3, 3) << "the first frame met an empty queue";
}

// Frames that reach an output queue at the same time join it in input-port order, whichever
// sender's event ran first: c's frame (port 2) is handed to the switch before a's (port 0), both
// with their last bit at 2 us, and a's leaves first.
TEST(EthSwitch, SameTimeArrivalsQueueInInputPortOrder) {
  Bench t(SwitchConfig{});
  const Crc32 crc;
  auto hand = [&](int port, const Mac& src, uint8_t tag) {
    auto f = std::make_shared<const EthMac::Frame>(frame(src, tag));
    const uint32_t v = crc.compute(f->data(), f->size());
    t.sw->port(port).arrive(f, {uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)},
                            800000, 2000000);
  };
  hand(2, kC, 7);
  hand(0, kA, 3);
  sc_core::sc_start();
  ASSERT_EQ(t.got.size(), 2u);
  EXPECT_EQ(t.got[0], frame(kA, 3)) << "port 0's frame first";
  EXPECT_EQ(t.got[1], frame(kC, 7));
}

// What a port says of its next frame (LinkEnd::next_start: a run over several processes sizes
// its windows by it) holds. a sends 4 frames of 1514 B and c 12 of 300 B to b at line rate; sampled
// every 100 ns, the next frame to leave for b never starts before min(known, now + after), and
// where a frame waits behind the one on the wire it starts exactly at `known`, with the size the
// port said. `track`: the port follows the frames on their way to it; otherwise the switch's
// earliest pending action stands in for them.
void next_start_holds(bool track) {
  Bench t(SwitchConfig{});
  if (track) t.sw->track_next_starts();
  std::vector<std::pair<uint64_t, size_t>> out;  // (first bit, frame bytes) towards b
  t.lb->add_wire_tap([&out](uint64_t at, const EthMac::Frame& f, const uint8_t*, int) {
    out.emplace_back(at, f.size());
  });
  auto make = [](const Mac& src, size_t payload) {
    return build_frame({kB, src, kEtherTypeEfe}, std::vector<uint8_t>(payload, 1).data(), payload);
  };
  auto fill = [&t, make, sent_a = 0, sent_c = 0]() mutable {
    while (sent_a < 4 && t.a->can_send()) ++sent_a, t.a->send(make(kA, 1500));
    while (sent_c < 12 && t.c->can_send()) ++sent_c, t.c->send(make(kC, 286));
  };
  auto shared = std::make_shared<decltype(fill)>(std::move(fill));
  t.a->set_space_callback([shared] { (*shared)(); });
  t.c->set_space_callback([shared] { (*shared)(); });
  (*shared)();
  struct Sample {
    uint64_t t;
    LinkEnd::NextStart n;
  };
  std::vector<Sample> samples;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  while (sc_core::sc_pending_activity()) {
    samples.push_back({now_ps(), t.sw->port(1).next_start()});
    sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_NS));
  }
  ASSERT_EQ(out.size(), 16u);
  int exact = 0, coming = 0, long_known = 0;
  for (const Sample& s : samples) {
    auto next = std::find_if(out.begin(), out.end(), [&s](const auto& o) { return o.first > s.t; });
    if (next == out.end()) continue;
    const uint64_t bound =
        std::min(s.n.known_ps, s.n.after_ps > UINT64_MAX - s.t ? UINT64_MAX : s.t + s.n.after_ps);
    EXPECT_GE(next->first, bound) << "sampled at " << s.t;
    if (s.n.known_bytes > 0 && s.n.known_ps > s.t) {
      ++exact;
      if (s.n.known_bytes == 1514) ++long_known;
      EXPECT_EQ(next->first, s.n.known_ps) << "sampled at " << s.t;
      EXPECT_EQ(next->second, s.n.known_bytes) << "sampled at " << s.t;
    } else if (s.n.known_ps < UINT64_MAX) {
      ++coming;
    }
  }
  EXPECT_GT(exact, 10) << "frames waited behind one on the wire";
  EXPECT_GT(coming, 2) << "the queue was empty with a frame on its way";
  EXPECT_GT(long_known, 0) << "a's frames among them";
  EXPECT_LT(long_known, exact) << "and c's";
}
TEST(EthSwitch, APortsNextStartBoundsItsNextFrame) { next_start_holds(true); }
TEST(EthSwitch, APortsNextStartBoundsItsNextFrameByTheSwitchsNextAction) {
  next_start_holds(false);
}

// A frame handed over late (another process's, up to its far_hold_ps after its last bit) still
// joins its queue switch.latency_ns after that last bit: an idle port promises that much less
// beyond E, never less than E.
TEST(EthSwitch, InputsTakenLateShortenAnIdlePortsPromise) {
  Bench t(SwitchConfig{});
  t.sw->track_next_starts();
  EXPECT_EQ(t.sw->port(1).next_start().after_ps, 300'000u);
  t.sw->take_inputs_late(200'000);
  EXPECT_EQ(t.sw->port(1).next_start().after_ps, 100'000u);
  t.sw->take_inputs_late(100'000);
  EXPECT_EQ(t.sw->port(1).next_start().after_ps, 100'000u) << "the latest input counts";
  t.sw->take_inputs_late(400'000);
  EXPECT_EQ(t.sw->port(1).next_start().after_ps, 0u);
  EXPECT_EQ(t.sw->port(1).next_start().known_ps, UINT64_MAX);
}

// A switch another process counts on for no PAUSE refuses to turn PAUSE on; off stays allowed.
TEST(EthSwitch, ASwitchPromisedToSendNoPauseRefusesToTurnItOn) {
  Bench t(SwitchConfig{});
  t.sw->set_pause(true);
  t.sw->set_pause(false);
  t.sw->promise_no_pause();
  EXPECT_NO_THROW(t.sw->set_pause(false));
  EXPECT_THROW(t.sw->set_pause(true), std::logic_error);
}

// With PAUSE a port may send a frame of its own at any time (a resume when another port's frame
// leaves): it promises nothing beyond now.
TEST(EthSwitch, APausingPortPromisesNothing) {
  SwitchConfig cfg;
  cfg.pause = true;
  Bench t(cfg);
  t.sw->track_next_starts();
  const LinkEnd::NextStart n = t.sw->port(1).next_start();
  EXPECT_EQ(n.known_ps, UINT64_MAX);
  EXPECT_EQ(n.after_ps, 0u);
}

}  // namespace
}  // namespace rnic::eth
