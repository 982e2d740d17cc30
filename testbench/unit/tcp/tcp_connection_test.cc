// Two MPA/TCP connection ends (models/tcp/tcp_connection.h) joined by a wire that delays every
// segment and loses the ones a test names: the handshake and its options, MPA's start-up with
// IRD/ORD, FPDUs both ways delivered once and in order through loss, a rejected start-up, the
// close.
#include "models/tcp/tcp_connection.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "testbench/common/tcp_pair.h"

namespace rnic::tcp {
namespace {

constexpr uint64_t kUs = 1'000'000;

using Wire = TcpPair;

std::vector<uint8_t> ulpdu(uint32_t n, uint32_t tag) {
  std::vector<uint8_t> u(n);
  for (uint32_t i = 0; i < n; ++i) u[i] = uint8_t(tag * 31 + i);
  return u;
}

TEST(TcpConnection, HandshakeNegotiatesOptionsAndMpaExchangesIrdOrd) {
  TcpConnConfig ca, cb;
  ca.ird = 8, ca.ord = 4;
  cb.ird = 16, cb.ord = 2;
  Wire w(ca, cb);
  w.a.open(0);
  w.b.open(0);
  w.run();
  ASSERT_TRUE(w.a.rdma_mode());
  ASSERT_TRUE(w.b.rdma_mode());
  EXPECT_EQ(w.b.peer_ird(), 8);
  EXPECT_EQ(w.b.peer_ord(), 4);
  EXPECT_EQ(w.a.peer_ird(), 16);
  EXPECT_EQ(w.a.peer_ord(), 2);
  // A 1460-byte MSS less the 12-byte timestamps option: 1448 bytes a segment, 1442 of ULPDU.
  EXPECT_EQ(w.a.max_ulpdu(), 1442u);
  EXPECT_EQ(w.a.sender()->una(), w.a.sender()->end());  // the MPA request acknowledged
}

TEST(TcpConnection, FpdusArriveOnceAndInOrderThroughLoss) {
  TcpConnConfig c;
  Wire w(c, c);
  // Every 13th data segment from a is lost the first time it is sent, and every 7th from b.
  std::set<uint32_t> dropped;
  uint32_t n[2] = {0, 0};
  w.lose = [&](bool to_b, const TcpConnection::Out& o) {
    if (o.payload.empty()) return false;
    const uint32_t key = o.h.seq ^ (to_b ? 0 : 0x80000000u);
    if (dropped.count(key)) return false;
    if (++n[to_b] % (to_b ? 13 : 7) != 0) return false;
    dropped.insert(key);
    return true;
  };
  w.a.open(0);
  w.b.open(0);
  w.run();
  ASSERT_TRUE(w.a.rdma_mode() && w.b.rdma_mode());
  for (uint32_t i = 0; i < 300; ++i) ASSERT_TRUE(w.a.send(ulpdu(i % 5 == 0 ? 77 : 1442, i)));
  for (uint32_t i = 0; i < 60; ++i) ASSERT_TRUE(w.b.send(ulpdu(200, 1000 + i)));
  w.run();
  const auto at_b = w.b.take_received();
  const auto at_a = w.a.take_received();
  ASSERT_EQ(at_b.size(), 300u);
  ASSERT_EQ(at_a.size(), 60u);
  for (uint32_t i = 0; i < 300; ++i) EXPECT_EQ(at_b[i], ulpdu(i % 5 == 0 ? 77 : 1442, i)) << i;
  for (uint32_t i = 0; i < 60; ++i) EXPECT_EQ(at_a[i], ulpdu(200, 1000 + i)) << i;
  EXPECT_GT(w.lost, 20u);
  EXPECT_GE(w.a.sender()->retransmits(), 20u);
  EXPECT_EQ(w.a.crc_errors() + w.b.crc_errors(), 0u);
  EXPECT_FALSE(w.a.sender()->outstanding());
}

TEST(TcpConnection, LostHandshakeSegmentsGoAgain) {
  TcpConnConfig c;
  Wire w(c, c);
  int lost_syn = 0, lost_synack = 0;
  w.lose = [&](bool to_b, const TcpConnection::Out& o) {
    if (to_b && o.h.flags == kSyn && lost_syn++ == 0) return true;
    if (!to_b && o.h.flags == (kSyn | kAck) && lost_synack++ == 0) return true;
    return false;
  };
  w.a.open(0);
  w.b.open(0);
  w.run();
  EXPECT_TRUE(w.a.rdma_mode());
  EXPECT_TRUE(w.b.rdma_mode());
  EXPECT_EQ(lost_syn, 2);
  EXPECT_EQ(lost_synack, 2);
  // The SYN went again after 1 ms, the SYN-ACK after 1 ms more: the start-up took over 2 ms.
  EXPECT_GT(w.now, 2000 * kUs);
}

TEST(TcpConnection, ARequestForMarkersIsRejected) {
  TcpConnConfig c;
  TcpConnection b(c, 5000, false);
  b.open(0);
  TcpHeader syn;
  syn.flags = kSyn;
  syn.seq = 77;
  syn.opt.mss = 1460;
  b.on_segment(syn, nullptr, 0, false, 0);
  const auto synack = b.poll(0);
  ASSERT_EQ(synack.size(), 1u);
  EXPECT_EQ(synack[0].h.flags, kSyn | kAck);
  EXPECT_EQ(synack[0].h.opt.wscale, -1);  // the SYN offered no window scale: none either way
  EXPECT_FALSE(synack[0].h.opt.timestamps);
  mpa::StartFrame req;
  req.markers = true;
  const auto bytes = mpa::encode_start(req);
  TcpHeader h;
  h.flags = kAck | kPsh;
  h.seq = 78;
  h.ack = 5001;
  h.window = 0xFFFF;
  b.on_segment(h, bytes.data(), bytes.size(), false, 1);
  EXPECT_EQ(b.mpa(), TcpConnection::Mpa::kRejected);
  const auto reply = b.poll(2);
  ASSERT_FALSE(reply.empty());
  mpa::StartFrame rep;
  size_t used = 0;
  ASSERT_EQ(mpa::decode_start(reply[0].payload.data(), reply[0].payload.size(), &rep, &used),
            mpa::StartError::kOk);
  EXPECT_TRUE(rep.reply);
  EXPECT_TRUE(rep.reject);
  EXPECT_FALSE(b.send(ulpdu(10, 1)));
}

// a closes, then b: both end done.
void close_both(Wire& w) {
  w.a.close(w.now);
  w.run();
  EXPECT_EQ(w.b.state(), TcpConnection::State::kCloseWait);
  w.b.close(w.now);
  w.run();
  EXPECT_EQ(w.a.state(), TcpConnection::State::kDone);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kDone);
}

// Both ends connected, and a's first ULPDU (100 bytes) delivered to b.
void connect_and_deliver_one(Wire& w) {
  w.a.open(0);
  w.b.open(0);
  w.run();
  ASSERT_TRUE(w.a.send(ulpdu(100, 1)));
  w.run();
}

TEST(TcpConnection, CloseEndsBothSides) {
  TcpConnConfig c;
  Wire w(c, c);
  connect_and_deliver_one(w);
  close_both(w);
  EXPECT_EQ(w.b.take_received().size(), 1u);
}

TEST(TcpConnection, ALostFinGoesAgain) {
  TcpConnConfig c;
  Wire w(c, c);
  int fins[2] = {0, 0}, fins_lost = 0;  // each side's first FIN is lost
  w.lose = [&](bool to_b, const TcpConnection::Out& o) {
    if (!(o.h.flags & kFin) || fins[to_b]++ > 0) return false;
    ++fins_lost;
    return true;
  };
  w.a.open(0);
  w.b.open(0);
  w.run();
  close_both(w);
  EXPECT_EQ(fins_lost, 2);
  EXPECT_GE(w.a.sender()->retransmits() + w.b.sender()->retransmits(), 2u);
}

// The side that closed first and then took the peer's FIN ends (kDone) at once, but answers
// that FIN again when it comes again, as TIME-WAIT does: its ACK of it was lost here, and the
// peer's FIN goes again and is acknowledged, so both sides end closed, not failed.
TEST(TcpConnection, AFinThatComesAgainAfterTheEndIsAcknowledgedAgain) {
  TcpConnConfig c;
  Wire w(c, c);
  connect_and_deliver_one(w);
  w.a.close(w.now);
  w.run();
  ASSERT_EQ(w.b.state(), TcpConnection::State::kCloseWait);
  int lost = 0;
  w.lose = [&](bool to_b, const TcpConnection::Out& o) {
    // a's ACK of b's FIN (a is done by then), once.
    if (!to_b || lost || (o.h.flags & kFin) || w.a.state() != TcpConnection::State::kDone)
      return false;
    ++lost;
    return true;
  };
  w.b.close(w.now);
  w.run();
  EXPECT_EQ(lost, 1);
  EXPECT_EQ(w.a.state(), TcpConnection::State::kDone);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kDone);
  EXPECT_GE(w.b.sender()->retransmits(), 1u);
}

// RFC 5961 section 3 (and RFC 9293 for SYN-SENT): a RST ends an established connection only at
// its next sequence number. One elsewhere in the receive window gets a challenge ACK (at
// rcv_nxt) and leaves the connection be; one outside it is dropped. In SYN-SENT a RST counts
// only if it acknowledges the SYN; a listening end takes none.
TEST(TcpConnection, ARstEndsTheConnectionOnlyAtItsNextSequenceNumber) {
  TcpConnConfig c;
  Wire w(c, c);
  connect_and_deliver_one(w);
  ASSERT_EQ(w.b.state(), TcpConnection::State::kEstablished);
  const uint32_t nxt = w.a.sender()->nxt();  // b's rcv_nxt: everything a sent is in
  TcpHeader rst;
  rst.flags = kRst;
  rst.seq = nxt + 0x40000000u;  // far outside the window
  w.b.on_segment(rst, nullptr, 0, false, w.now);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kEstablished);
  EXPECT_EQ(w.b.refusals().rst_dropped, 1u);
  EXPECT_TRUE(w.b.poll(w.now).empty()) << "nothing answers a RST outside the window";
  rst.seq = nxt + 100;  // in the window, not at rcv_nxt
  w.b.on_segment(rst, nullptr, 0, false, w.now);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kEstablished);
  EXPECT_EQ(w.b.refusals().rst_challenged, 1u);
  const std::vector<TcpConnection::Out> out = w.b.poll(w.now);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].h.flags & (kAck | kRst), kAck);
  EXPECT_EQ(out[0].h.ack, nxt);
  EXPECT_TRUE(out[0].payload.empty());
  rst.seq = nxt;
  w.b.on_segment(rst, nullptr, 0, false, w.now);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kFailed);
  EXPECT_EQ(w.b.refusals().rst_dropped, 1u);
  EXPECT_EQ(w.b.refusals().rst_challenged, 1u);

  TcpConnection syn_sent(c, 1000, true), listen(c, 2000, false);
  syn_sent.open(0);
  listen.open(0);
  TcpHeader answer;
  answer.flags = kRst | kAck;
  answer.ack = 7;  // not our SYN's
  syn_sent.on_segment(answer, nullptr, 0, false, 0);
  listen.on_segment(answer, nullptr, 0, false, 0);
  EXPECT_EQ(syn_sent.state(), TcpConnection::State::kSynSent);
  EXPECT_EQ(listen.state(), TcpConnection::State::kListen);
  EXPECT_EQ(syn_sent.refusals().rst_dropped + listen.refusals().rst_dropped, 2u);
  answer.ack = 1001;  // the SYN's sequence number + 1
  syn_sent.on_segment(answer, nullptr, 0, false, 0);
  EXPECT_EQ(syn_sent.state(), TcpConnection::State::kFailed);
}

// RFC 9293 and RFC 5961 section 5: a segment whose acknowledgement covers data not sent, or
// lies more than the peer's largest window before what is acknowledged, is not the peer's: it
// is dropped, its data with it, and answered with an ACK; the connection goes on.
TEST(TcpConnection, ASegmentAcknowledgingDataNotSentIsDroppedAndAnswered) {
  TcpConnConfig c;
  Wire w(c, c);
  connect_and_deliver_one(w);
  ASSERT_EQ(w.b.take_received().size(), 1u);
  const uint32_t b_nxt = w.b.sender()->nxt(), a_nxt = w.a.sender()->nxt();
  TcpHeader h;
  h.flags = kAck | kPsh;
  h.seq = a_nxt;  // in order: its data would be taken
  h.window = 0xFFFF;
  const std::vector<uint8_t> data(40, 0x33);
  for (uint32_t ack : {b_nxt + 1000, b_nxt - 0x20000000u}) {
    h.ack = ack;
    w.b.on_segment(h, data.data(), data.size(), false, w.now);
    const std::vector<TcpConnection::Out> out = w.b.poll(w.now);
    ASSERT_EQ(out.size(), 1u) << ack;
    EXPECT_EQ(out[0].h.flags & (kAck | kRst | kSyn), kAck);
    EXPECT_EQ(out[0].h.ack, a_nxt) << "its 40 bytes were not taken";
  }
  EXPECT_EQ(w.b.refusals().ack_challenged, 2u);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kEstablished);
  ASSERT_TRUE(w.a.send(ulpdu(50, 2)));
  w.run();
  EXPECT_EQ(w.b.take_received().size(), 1u) << "the connection goes on";
}

// RFC 5961 section 4 and RFC 9293: a SYN to a live connection does not replace it but gets an
// ACK. A peer that started over (in SYN-SENT, its new ISS) answers that ACK, which acknowledges
// nothing it sent, with a RST at the ACK's number: the live end takes it (its next sequence
// number, as it acknowledged it) and fails, and the peer's SYN then makes a new connection.
TEST(TcpConnection, ASynToALiveConnectionGetsAnAckAndAPeerThatStartedOverResetsIt) {
  TcpConnConfig c;
  Wire w(c, c);
  connect_and_deliver_one(w);
  ASSERT_EQ(w.b.state(), TcpConnection::State::kEstablished);
  EXPECT_FALSE(w.b.new_syn());
  TcpConnection again(c, 0x12345678u, true);  // a's end, started over
  again.open(w.now);
  const std::vector<TcpConnection::Out> syn = again.poll(w.now);
  ASSERT_EQ(syn.size(), 1u);
  ASSERT_EQ(syn[0].h.flags, kSyn);
  w.b.on_segment(syn[0].h, nullptr, 0, false, w.now);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kEstablished);
  EXPECT_EQ(w.b.refusals().syn_challenged, 1u);
  const std::vector<TcpConnection::Out> challenge = w.b.poll(w.now);
  ASSERT_EQ(challenge.size(), 1u);
  EXPECT_EQ(challenge[0].h.flags & (kSyn | kAck | kRst), kAck);
  again.on_segment(challenge[0].h, nullptr, 0, false, w.now);
  EXPECT_EQ(again.state(), TcpConnection::State::kSynSent);
  EXPECT_EQ(again.refusals().ack_reset, 1u);
  const std::vector<TcpConnection::Out> rst = again.poll(w.now);
  ASSERT_GE(rst.size(), 1u);
  EXPECT_EQ(rst[0].h.flags, kRst);
  EXPECT_EQ(rst[0].h.seq, challenge[0].h.ack);
  w.b.on_segment(rst[0].h, nullptr, 0, false, w.now);
  EXPECT_EQ(w.b.state(), TcpConnection::State::kFailed);
  EXPECT_TRUE(w.b.new_syn()) << "the SYN that comes again makes a new connection";
}

}  // namespace
}  // namespace rnic::tcp
