// Two TCP offload engines (models/tcp/toe.h) on two MAC ports (rnic-10g: 10 Gb/s) joined by one
// link, driven through the Transport seam as the engines drive it: the QPs' connection opens by
// the role rule, segments arrive once and in order for the right QP, and every send is
// acknowledged; the same through a lossy link.
#include "models/tcp/toe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/common/sim_time.h"
#include "models/eth/eth_link.h"

namespace rnic::tcp {
namespace {

const eth::Mac kMacA{2, 0, 0, 0, 0, 1}, kMacB{2, 0, 0, 0, 0, 2};

struct Pair {
  EthMacParams mp;
  StatRegistry stats;
  std::unique_ptr<eth::EthMac> ma, mb;
  std::unique_ptr<eth::EthLink> link;
  std::unique_ptr<Toe> a, b;
  std::vector<TransportSegment> at_b;
  uint32_t acked_at_a = 0;
  uint32_t to_send = 0, sent = 0;
  const TransportStream a_to_b{kMacB, 5}, b_to_a{kMacA, 3};
  std::vector<uint64_t> at_b_ps;  // when each segment was handed up
  size_t most_queued_at_a = 0;    // a's frames made and not yet taken by its MAC, at most
  explicit Pair(LinkParams lp = {}, uint32_t tx_buffer = 256 << 10, uint32_t tx_cycles = 0,
                uint32_t rx_cycles = 0, const std::string& pre = "") {
    ma = std::make_unique<eth::EthMac>((pre + "ma").c_str(), mp, stats);
    mb = std::make_unique<eth::EthMac>((pre + "mb").c_str(), mp, stats);
    link = std::make_unique<eth::EthLink>((pre + "link").c_str(), lp, *ma, *mb, stats);
    ToeParams pa;
    pa.tx_buffer_bytes = tx_buffer;
    pa.tx_cycles = tx_cycles;
    pa.rx_cycles = rx_cycles;
    a = std::make_unique<Toe>((pre + "a").c_str(), *ma, kMacA, 0x0A000001, pa, stats);
    b = std::make_unique<Toe>((pre + "b").c_str(), *mb, kMacB, 0x0A000002, pa, stats);
    a->add_peer(kMacB, 0x0A000002);
    b->add_peer(kMacA, 0x0A000001);
    b->on_segment = [this](TransportSegment&& s) {
      b->validated(s.stream(), s.seq, s.ar);  // as the engines would, at once
      most_queued_at_a = std::max(most_queued_at_a, a->tx_queued());
      at_b.push_back(std::move(s));
      at_b_ps.push_back(now_ps());
    };
    a->on_ack = [this](const TransportStream& s, uint32_t n) {
      EXPECT_EQ(s, a_to_b);
      acked_at_a = n;
    };
    a->on_space = [this] { fill(); };
  }
  static std::vector<uint8_t> ddp(uint32_t i) {
    std::vector<uint8_t> d(1400);
    for (size_t k = 0; k < d.size(); ++k) d[k] = uint8_t(i * 7 + k);
    return d;
  }
  void fill() {
    most_queued_at_a = std::max(most_queued_at_a, a->tx_queued());
    while (sent < to_send && a->can_send(a_to_b, 1400)) a->send(a_to_b, 5, ddp(sent++), true);
  }
  void run(uint32_t n) {
    to_send = n;
    a->open(a_to_b, 3);  // QP 3 on a to QP 5 on b: a's (MAC, QPN) is the lower, a opens
    b->open(b_to_a, 5);
    fill();
    sc_core::sc_start();
  }
};

void check_delivery(const Pair& p, uint32_t n) {
  ASSERT_EQ(p.at_b.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(p.at_b[i].ddp, Pair::ddp(i)) << i;
    EXPECT_EQ(p.at_b[i].dst_qpn, 5u);
    EXPECT_EQ(p.at_b[i].stream(), p.b_to_a);
  }
  EXPECT_EQ(p.acked_at_a, n);
}

TEST(Toe, AQpConnectionCarriesItsSegmentsInOrder) {
  Pair p;
  p.run(400);
  check_delivery(p, 400);
  ASSERT_NE(p.a->connection(p.a_to_b), nullptr);
  EXPECT_TRUE(p.a->connection(p.a_to_b)->rdma_mode());
  EXPECT_EQ(p.a->connection(p.a_to_b)->sender()->retransmits(), 0u);
}

TEST(Toe, ALossyLinkLosesNothing) {
  LinkParams lp;
  lp.loss = 0.02;
  lp.seed = 7;
  Pair p(lp);
  p.run(400);
  check_delivery(p, 400);
  EXPECT_GT(p.a->connection(p.a_to_b)->sender()->retransmits(), 0u);
}

// A SYN to a QP that may not be connected to (b's accepts: only its QP 5, and only from a's QP
// 3) is answered with a RST: a's connection to b's QP 6 fails at once (on_failed), b makes no
// connection and counts the refusal; a's QP 3 to b's QP 5 still connects and carries data.
TEST(Toe, ASynToAQpThatMayNotBeConnectedToGetsARst) {
  Pair p;
  p.b->accepts = [](const TransportPeer& peer, uint32_t remote, uint32_t local) {
    return local == 5 && remote == 3 && peer == kMacA;
  };
  std::vector<TransportStream> failed;
  p.a->on_failed = [&](const TransportStream& s) { failed.push_back(s); };
  const TransportStream to_6{kMacB, 6};
  p.a->open(to_6, 3, 1);  // active
  sc_core::sc_start(sc_core::sc_time(50, sc_core::SC_US));
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], to_6);
  EXPECT_EQ(p.b->connection({kMacA, 3}), nullptr);
  EXPECT_EQ(p.stats.group("b").counter("syn_refused", "", "").value, 1u);
  EXPECT_EQ(p.stats.group("b").counter("connections", "", "").value, 0u);
  p.run(20);
  check_delivery(p, 20);
}

// A RST forged with the connection's addresses and ports (RFC 5961 section 3): outside b's
// receive window it is dropped, in it but not at b's next sequence number it gets an ACK, and
// only at that number does b's connection fail; each counted.
TEST(Toe, AForgedRstEndsAConnectionOnlyAtItsNextSequenceNumber) {
  Pair p;
  std::vector<TransportStream> failed;
  p.b->on_failed = [&](const TransportStream& s) { failed.push_back(s); };
  p.run(20);
  check_delivery(p, 20);
  const uint32_t nxt = p.a->connection(p.a_to_b)->sender()->nxt();  // b's rcv_nxt
  StatGroup& g = p.stats.group("b");
  const uint64_t sent = g.counter("tx_segments", "", "").value;
  auto forge = [&](uint32_t seq) {
    TcpHeader h;
    h.sport = Toe::kPortBase + 3;  // a's QP 3 to b's QP 5
    h.dport = Toe::kPortBase + 5;
    h.seq = seq;
    h.flags = kRst;
    Ipv4Header ip;
    ip.src = 0x0A000001;
    ip.dst = 0x0A000002;
    ASSERT_TRUE(p.ma->send(build_frame({kMacB, kMacA, kEtherTypeIpv4}, ip, h, nullptr, 0)));
    sc_core::sc_start();
  };
  forge(nxt + 0x40000000u);
  EXPECT_EQ(g.counter("rst_dropped", "", "").value, 1u);
  EXPECT_EQ(g.counter("tx_segments", "", "").value, sent) << "nothing answers it";
  forge(nxt + 100);
  EXPECT_EQ(g.counter("rst_challenged", "", "").value, 1u);
  EXPECT_EQ(g.counter("tx_segments", "", "").value, sent + 1) << "the challenge ACK";
  EXPECT_TRUE(failed.empty());
  EXPECT_NE(p.b->connection(p.b_to_a), nullptr);
  forge(nxt);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], p.b_to_a);
  EXPECT_EQ(g.counter("failures", "", "").value, 1u);
  EXPECT_EQ(g.counter("rst_dropped", "", "").value, 1u);
  EXPECT_EQ(g.counter("rst_challenged", "", "").value, 1u);
}

// A segment for no connection (RFC 9293, the CLOSED state) is answered with a RST from the port
// it was sent to: one with an ACK by <SEQ=SEG.ACK><CTL=RST>, one without by <SEQ=0>
// <ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; a RST for no connection is not answered.
TEST(Toe, ASegmentForNoConnectionIsAnsweredWithARst) {
  Pair p;
  std::vector<TcpHeader> from_b;
  p.link->add_wire_tap([&](uint64_t, const eth::EthLink::Frame& f, const uint8_t*, int end) {
    Ipv4Header ip;
    TcpHeader th;
    size_t off = 0;
    if (end == 1 &&
        decode_ipv4(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes, &ip) ==
            Ipv4Error::kOk &&
        decode_tcp(f.data() + eth::kHeaderBytes + kIpv4HeaderBytes,
                   ip.total_length - kIpv4HeaderBytes, ip.src, ip.dst, &th, &off) == TcpError::kOk)
      from_b.push_back(th);
  });
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  StatGroup& g = p.stats.group("b");
  auto forge = [&](uint8_t flags, uint32_t seq, uint32_t ack, size_t len) {
    TcpHeader h;
    h.sport = 40000;
    h.dport = 7174;  // nothing there
    h.seq = seq;
    h.ack = ack;
    h.flags = flags;
    Ipv4Header ip;
    ip.src = 0x0A000001;
    ip.dst = 0x0A000002;
    const std::vector<uint8_t> payload(len, 0x5A);
    ASSERT_TRUE(p.ma->send(
        build_frame({kMacB, kMacA, kEtherTypeIpv4}, ip, h, payload.data(), payload.size())));
    sc_core::sc_start();
  };
  forge(kAck | kPsh, 1000, 77777, 100);
  ASSERT_EQ(from_b.size(), 1u);
  EXPECT_EQ(from_b[0].flags, kRst);
  EXPECT_EQ(from_b[0].seq, 77777u);
  EXPECT_EQ(from_b[0].sport, 7174);
  EXPECT_EQ(from_b[0].dport, 40000);
  forge(kFin, 5000, 0, 10);
  ASSERT_EQ(from_b.size(), 2u);
  EXPECT_EQ(from_b[1].flags, kRst | kAck);
  EXPECT_EQ(from_b[1].seq, 0u);
  EXPECT_EQ(from_b[1].ack, 5011u);  // its 10 bytes and its FIN
  forge(kRst, 9000, 0, 0);
  EXPECT_EQ(from_b.size(), 2u) << "a RST answers no RST";
  EXPECT_EQ(g.counter("stray_reset", "", "").value, 2u);
  EXPECT_EQ(g.counter("rx_bad_frames", "", "").value, 3u);
  EXPECT_EQ(p.stats.group("a").counter("rx_bad_frames", "", "").value, 2u)
      << "a drops the two RSTs: it has no connection there either";
}

// A connection the connection manager made runs on its ports: a (active) from its id's port
// 50000 to b's listening port 7174, b (passive) waiting for that SYN there. Every TCP segment on
// the wire is between those two ports, and the segments reach b's QP 5 from a's QP 3.
TEST(Toe, AConnectionOnTheConnectionManagersPortsUsesOnlyThem) {
  Pair p;
  std::set<std::pair<uint16_t, uint16_t>> ports;
  p.link->add_wire_tap([&](uint64_t, const eth::EthLink::Frame& f, const uint8_t*, int) {
    Ipv4Header ip;
    TcpHeader th;
    size_t off = 0;
    if (f.size() < eth::kHeaderBytes + kIpv4HeaderBytes ||
        decode_ipv4(f.data() + eth::kHeaderBytes, f.size() - eth::kHeaderBytes, &ip) !=
            Ipv4Error::kOk ||
        decode_tcp(f.data() + eth::kHeaderBytes + kIpv4HeaderBytes,
                   ip.total_length - kIpv4HeaderBytes, ip.src, ip.dst, &th, &off) != TcpError::kOk)
      return;
    ports.insert({th.sport, th.dport});
  });
  p.to_send = 20;
  p.a->open(p.a_to_b, 3, 1, {50000, 7174});
  p.b->open(p.b_to_a, 5, 2, {7174, 50000});
  p.fill();
  sc_core::sc_start();
  check_delivery(p, 20);
  EXPECT_EQ(ports, (std::set<std::pair<uint16_t, uint16_t>>{{50000, 7174}, {7174, 50000}}));
}

// The transmit buffer per stream: with 10,000 bytes, seven FPDUs of a 1400-byte segment (1408
// bytes each) are taken at once and the eighth waits for an acknowledgement.
TEST(Toe, TheTransmitBufferBoundsAStream) {
  Pair p({}, 10000);
  p.a->on_space = nullptr;
  p.a->open(p.a_to_b, 3);
  p.b->open(p.b_to_a, 5);
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));  // the handshake and MPA start-up
  ASSERT_TRUE(p.a->connection(p.a_to_b)->rdma_mode());
  uint32_t taken = 0;
  while (taken < 100 && p.a->can_send(p.a_to_b, 1400))
    p.a->send(p.a_to_b, 5, Pair::ddp(taken++), true);
  EXPECT_EQ(taken, 7u);
  sc_core::sc_start();
  EXPECT_EQ(p.at_b.size(), 7u);
  EXPECT_TRUE(p.a->can_send(p.a_to_b, 1400));
}

// The engine's latencies (core_clk, 4 ns at 250 MHz): one segment sent on an edge once the
// connection is up reaches the peer's engines tx_cycles + rx_cycles later than through engines
// with none (the MAC, the link and the peer's MAC are the same in both). Both pairs run side by
// side in one simulation.
TEST(Toe, SegmentLatencyIsTxPlusRxCycles) {
  Pair none({}, 256 << 10, 0, 0, "n_"), some({}, 256 << 10, 10, 20, "s_");
  for (Pair* p : {&none, &some}) {
    p->a->on_space = nullptr;
    p->a->open(p->a_to_b, 3);
    p->b->open(p->b_to_a, 5);
  }
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));  // the handshakes and MPA start-ups
  const uint64_t t0 = now_ps();
  ASSERT_EQ(t0 % 4000, 0u);
  for (Pair* p : {&none, &some}) {
    ASSERT_TRUE(p->a->connection(p->a_to_b)->rdma_mode());
    p->a->send(p->a_to_b, 5, Pair::ddp(0), true);
  }
  sc_core::sc_start();
  ASSERT_EQ(none.at_b_ps.size(), 1u);
  ASSERT_EQ(some.at_b_ps.size(), 1u);
  EXPECT_EQ(some.at_b_ps[0] - t0, none.at_b_ps[0] - t0 + 30 * 4000);
}

// A stream whose transmit buffer is full sends again when an acknowledgement frees room, also
// when nothing else is queued (a send waits for on_space): 50 segments through a buffer of 7.
TEST(Toe, AnAcknowledgementThatFreesTheBufferWakesTheSender) {
  Pair p({}, 10000);
  p.run(50);
  check_delivery(p, 50);
}

// The engine makes frames only as far ahead of the line as its pipeline needs: at 10 Gb/s a
// 1538-byte frame takes 1,230.4 ns, 88 cycles at 250 MHz are 352 ns, so 2 + 1 frames; a window
// of 400 segments never queues more than that, and the bound is reached.
TEST(Toe, FramesAreMadeOnlyTxAheadOfTheLine) {
  Pair p({}, 1 << 20, 88, 88);
  EXPECT_EQ(p.a->tx_ahead(), 3u);
  p.run(400);
  check_delivery(p, 400);
  EXPECT_EQ(p.most_queued_at_a, 3u);
}

}  // namespace
}  // namespace rnic::tcp
