// Wire formats against byte vectors written out by hand from WIRE.md: Ethernet + FCS, the EFE
// header, DDP/RDMAP tagged and untagged headers, the Read Request, Terminate; the header checks
// and their Terminate causes; malformed input never read past its end.
#include <gtest/gtest.h>

#include <random>

#include "models/efe/efe_header.h"
#include "models/eth/ethernet.h"
#include "models/rnic/ddp/ddp_rdmap.h"

namespace rnic {
namespace {

using Bytes = std::vector<uint8_t>;

TEST(Ethernet, FrameIsPaddedAndFcsGoesLsbFirst) {
  eth::Header h{{0x02, 0, 0, 0, 0, 0x01}, {0x02, 0, 0, 0, 0, 0x02}, eth::kEtherTypeEfe};
  const uint8_t payload[3] = {0xAA, 0xBB, 0xCC};
  Bytes f = eth::build_frame(h, payload, 3);
  ASSERT_EQ(f.size(), 60u);
  EXPECT_EQ(Bytes(f.begin(), f.begin() + 17),
            (Bytes{0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x88, 0xB5, 0xAA, 0xBB, 0xCC}));
  EXPECT_EQ(f[59], 0);
  eth::append_fcs(f);
  ASSERT_EQ(f.size(), 64u);
  EXPECT_TRUE(eth::fcs_ok(f.data(), f.size()));
  f[20] ^= 1;
  EXPECT_FALSE(eth::fcs_ok(f.data(), f.size()));
  EXPECT_EQ(eth::wire_bytes(60), 8u + 60 + 4 + 12);
  EXPECT_EQ(eth::wire_bytes(20), 84u);  // padded to the minimum
  EXPECT_EQ(eth::wire_bytes(1500 + 14), 8u + 1514 + 4 + 12);
}

TEST(Ethernet, FcsOfAKnownFrame) {
  // "123456789" as a frame body has the CRC-32 0xCBF43926: on the wire 26 39 F4 CB.
  Bytes f = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  eth::append_fcs(f);
  EXPECT_EQ(Bytes(f.end() - 4, f.end()), (Bytes{0x26, 0x39, 0xF4, 0xCB}));
}

TEST(Efe, HeaderBytes) {
  efe::Header h;
  h.type = efe::Type::kData;
  h.ar = true;
  h.rtx = true;
  h.length = 0x0123;
  h.seq = 0x01020304;
  h.ack = 0xA0B0C0D0;
  h.dst_qpn = 0xABCDEF;
  h.ts = 0xDEADBEEF;
  uint8_t b[20];
  efe::encode(h, b);
  EXPECT_EQ(Bytes(b, b + 20), (Bytes{0x10, 0x90, 0x01, 0x23, 0x01, 0x02, 0x03, 0x04, 0xA0, 0xB0,
                                     0xC0, 0xD0, 0xAB, 0xCD, 0xEF, 0x00, 0xDE, 0xAD, 0xBE, 0xEF}));
  Bytes frame(b, b + 20);
  frame.resize(20 + 0x123);
  efe::Header d;
  ASSERT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kOk);
  EXPECT_EQ(d.seq, h.seq);
  EXPECT_EQ(d.dst_qpn, h.dst_qpn);
  EXPECT_TRUE(d.ar && d.rtx && !d.ce && !d.ece && !d.rq);
  // RQ (reflected QPN) is byte 1's bit 3.
  h.ar = h.rtx = false;
  h.rq = true;
  efe::encode(h, frame.data());
  EXPECT_EQ(frame[1], 0x08);
  ASSERT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kOk);
  EXPECT_TRUE(d.rq && !d.ar && !d.sy);
  // SY (resynchronise) is bit 2.
  h.rq = false;
  h.sy = true;
  efe::encode(h, frame.data());
  EXPECT_EQ(frame[1], 0x04);
  ASSERT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kOk);
  EXPECT_TRUE(d.sy && !d.rq);
  // RNR is type 3.
  frame[0] = 0x13;
  frame[1] = 0;
  ASSERT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kOk);
  EXPECT_EQ(d.type, efe::Type::kRnr);
  // Hostile headers.
  EXPECT_EQ(efe::decode(frame.data(), 19, &d), efe::ParseError::kShort);
  EXPECT_EQ(efe::decode(frame.data(), 20 + 0x122, &d), efe::ParseError::kLength);
  frame[0] = 0x20;
  EXPECT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kVersion);
  frame[0] = 0x14;
  EXPECT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kType);
  // QD is bit 1: an ACK's bytes 12-14 are then its forward queueing delay; in DATA it is
  // reserved, as bit 0 is in every frame.
  frame[0] = 0x11;
  h = efe::Header();
  h.type = efe::Type::kAck;
  h.qd = true;
  h.dst_qpn = 30378;
  h.length = 0x123;
  efe::encode(h, frame.data());
  EXPECT_EQ(frame[1], 0x02);
  ASSERT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kOk);
  EXPECT_TRUE(d.qd);
  EXPECT_EQ(d.dst_qpn, 30378u);
  frame[0] = 0x10;
  frame[1] = 0x02;
  EXPECT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kReserved);
  // UT is bit 0, in any frame: byte 15 is then a path's utilisation in 1/64ths (a switch's
  // stamp in DATA, its echo in ACK/NACK/RNR); without UT byte 15 is reserved.
  h = efe::Header();
  h.ut = true;
  h.util = 0xC3;
  efe::encode(h, frame.data());
  EXPECT_EQ(frame[1], 0x01);
  EXPECT_EQ(frame[15], 0xC3);
  ASSERT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kOk);
  EXPECT_TRUE(d.ut);
  EXPECT_EQ(d.util, 0xC3);
  h.ut = false;
  efe::encode(h, frame.data());
  EXPECT_EQ(frame[15], 0) << "no stamp: byte 15 stays 0";
  frame[15] = 0x01;
  EXPECT_EQ(efe::decode(frame.data(), frame.size(), &d), efe::ParseError::kReserved);
}

TEST(Ddp, TaggedWriteHeader) {
  rdmap::Segment s;
  s.tagged = true;
  s.last = true;
  s.opcode = uint8_t(rdmap::Opcode::kWrite);
  s.stag = 0x01020304;
  s.to = 0x1122334455667788ull;
  uint8_t b[14];
  rdmap::encode(s, b);
  EXPECT_EQ(Bytes(b, b + 14), (Bytes{0xC1, 0x40, 0x01, 0x02, 0x03, 0x04, 0x11, 0x22, 0x33, 0x44,
                                     0x55, 0x66, 0x77, 0x88}));
  rdmap::Segment d;
  ASSERT_TRUE(rdmap::decode(b, 14, &d));
  EXPECT_TRUE(d.tagged && d.last);
  EXPECT_EQ(d.stag, s.stag);
  EXPECT_EQ(d.to, s.to);
  rdmap::TermCause why;
  EXPECT_TRUE(rdmap::check_header(d, &why));
  EXPECT_FALSE(rdmap::decode(b, 13, &d));  // announced tagged, 13 bytes: not a header
}

TEST(Ddp, UntaggedSendWithInvalidateHeader) {
  rdmap::Segment s;
  s.last = false;
  s.opcode = uint8_t(rdmap::Opcode::kSendSeInvalidate);
  s.inv_stag = 0xCAFEF00D;
  s.qn = 0;
  s.msn = 1;
  s.mo = 0x5DC;
  uint8_t b[18];
  rdmap::encode(s, b);
  EXPECT_EQ(Bytes(b, b + 18),
            (Bytes{0x01, 0x46, 0xCA, 0xFE, 0xF0, 0x0D, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x05, 0xDC}));
}

TEST(Ddp, ReadRequestPayload) {
  rdmap::ReadRequest r{0x11111111, 0x2222222222222222ull, 0x00010000, 0x33333333,
                       0x4444444444444444ull};
  uint8_t b[28];
  rdmap::encode(r, b);
  EXPECT_EQ(Bytes(b, b + 28), (Bytes{0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22, 0x22, 0x22,
                                     0x22, 0x22, 0x00, 0x01, 0x00, 0x00, 0x33, 0x33, 0x33, 0x33,
                                     0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44}));
  rdmap::ReadRequest d;
  ASSERT_TRUE(rdmap::decode(b, 28, &d));
  EXPECT_EQ(d.src_to, r.src_to);
  EXPECT_FALSE(rdmap::decode(b, 27, &d));
}

// RFC 7306's Atomic Request and Response, laid out as Wireshark's iwarp_ddp_rdmap reads them.
TEST(Ddp, AtomicRequestAndResponsePayloads) {
  rdmap::AtomicRequest a;
  a.op = uint8_t(rdmap::AtomicOp::kCmpSwap);
  a.req_id = 0x01020304;
  a.stag = 0x0A0B0C0D;
  a.to = 0x1000200030004000ull;
  a.add_swap = 0x5555555555555555ull;
  a.add_swap_mask = ~0ull;
  a.compare = 0x7777777777777777ull;
  a.compare_mask = ~0ull;
  uint8_t b[52];
  rdmap::encode(a, b);
  EXPECT_EQ(Bytes(b, b + 12), (Bytes{0, 0, 0, 2, 1, 2, 3, 4, 0x0A, 0x0B, 0x0C, 0x0D}));
  EXPECT_EQ(Bytes(b + 12, b + 20), (Bytes{0x10, 0, 0x20, 0, 0x30, 0, 0x40, 0}));
  EXPECT_EQ(b[20], 0x55);
  EXPECT_EQ(b[28], 0xFF);
  EXPECT_EQ(b[36], 0x77);
  EXPECT_EQ(b[51], 0xFF);
  rdmap::AtomicRequest d;
  ASSERT_TRUE(rdmap::decode(b, 52, &d));
  EXPECT_EQ(d.op, a.op);
  EXPECT_EQ(d.req_id, a.req_id);
  EXPECT_EQ(d.to, a.to);
  EXPECT_EQ(d.compare, a.compare);
  EXPECT_EQ(d.compare_mask, a.compare_mask);
  EXPECT_FALSE(rdmap::decode(b, 51, &d));
  b[0] = 0xF0;  // the opcode word's upper bits are reserved: ignored
  ASSERT_TRUE(rdmap::decode(b, 52, &d));
  EXPECT_EQ(d.op, a.op);

  rdmap::AtomicResponse r{0x01020304, 0x1122334455667788ull};
  uint8_t c[12];
  rdmap::encode(r, c);
  EXPECT_EQ(Bytes(c, c + 12), (Bytes{1, 2, 3, 4, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));
  rdmap::AtomicResponse e;
  ASSERT_TRUE(rdmap::decode(c, 12, &e));
  EXPECT_EQ(e.req_id, r.req_id);
  EXPECT_EQ(e.value, r.value);
  EXPECT_FALSE(rdmap::decode(c, 11, &e));
  EXPECT_EQ(rdmap::queue_of(rdmap::Opcode::kAtomicRequest), rdmap::kQnReadRequest);
  EXPECT_EQ(rdmap::queue_of(rdmap::Opcode::kAtomicResponse), rdmap::kQnAtomicResponse);
}

TEST(Ddp, AtomicOperationsAndTheirMasks) {
  rdmap::AtomicRequest a;
  a.op = uint8_t(rdmap::AtomicOp::kFetchAdd);
  a.add_swap = 5;
  EXPECT_EQ(rdmap::apply(a, 10), 15u);
  EXPECT_EQ(rdmap::apply(a, ~0ull), 4u);  // wraps
  // Two 32-bit fields: bit 31 set in the mask stops the low field's carry.
  a.add_swap = 1;
  a.add_swap_mask = 1ull << 31;
  EXPECT_EQ(rdmap::apply(a, 0x00000005FFFFFFFFull), 0x0000000500000000ull);
  a.add_swap_mask = 0;
  EXPECT_EQ(rdmap::apply(a, 0x00000005FFFFFFFFull), 0x0000000600000000ull);

  a.op = uint8_t(rdmap::AtomicOp::kCmpSwap);
  a.add_swap = 99;
  a.add_swap_mask = ~0ull;
  a.compare = 7;
  a.compare_mask = ~0ull;
  EXPECT_EQ(rdmap::apply(a, 7), 99u);
  EXPECT_EQ(rdmap::apply(a, 8), 8u);  // no match: unchanged
  a.compare_mask = 0xFF;              // only the low byte compared
  EXPECT_EQ(rdmap::apply(a, 0x1207), 99u);
  a.add_swap = 0xAB00;
  a.add_swap_mask = 0xFF00;  // only the second byte swapped
  EXPECT_EQ(rdmap::apply(a, 0x1207), 0xAB07u);
  a.op = 7;  // unknown: unchanged
  EXPECT_FALSE(rdmap::known_atomic(a.op));
  EXPECT_EQ(rdmap::apply(a, 0x1207), 0x1207u);
}

TEST(Ddp, TerminateOfABadWrite) {
  // DDP / tagged buffer / invalid STag, M and D, the 14-byte header of the offending segment.
  rdmap::Terminate t;
  t.cause = {rdmap::Layer::kDdp, 1, 0x00};
  t.m = t.d = true;
  t.ddp_seg_len = 1454;
  t.ddp_header = {0xC1, 0x40, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0x10, 0};
  const Bytes b = rdmap::encode(t);
  EXPECT_EQ(b, (Bytes{0x11, 0x00, 0xC0, 0x00, 0x05, 0xAE, 0xC1, 0x40, 0,    0,
                      0x12, 0x34, 0,    0,    0,    0,    0,    0,    0x10, 0}));
  rdmap::Terminate d;
  ASSERT_TRUE(rdmap::decode(b.data(), b.size(), &d));
  EXPECT_TRUE(d.cause == t.cause);
  EXPECT_EQ(d.ddp_header, t.ddp_header);
  EXPECT_FALSE(d.r);
  EXPECT_FALSE(rdmap::decode(b.data(), b.size() - 1, &d));
}

TEST(Ddp, HeaderChecksGiveTheTerminateOfWireMd) {
  rdmap::Segment s;
  rdmap::TermCause why;
  s.tagged = true;
  s.opcode = 0;
  s.ddp_version = 2;
  EXPECT_FALSE(rdmap::check_header(s, &why));
  EXPECT_TRUE(why == (rdmap::TermCause{rdmap::Layer::kDdp, 1, 0x04}));
  s.tagged = false;
  s.opcode = 3;
  EXPECT_FALSE(rdmap::check_header(s, &why));
  EXPECT_TRUE(why == (rdmap::TermCause{rdmap::Layer::kDdp, 2, 0x06}));
  s.ddp_version = 1;
  s.rdmap_version = 0;
  EXPECT_FALSE(rdmap::check_header(s, &why));
  EXPECT_TRUE(why == (rdmap::TermCause{rdmap::Layer::kRdmap, 2, 0x05}));
  s.rdmap_version = 1;
  s.opcode = 0xC;  // 0-7 RFC 5040's, 8-0xB RFC 7306's
  EXPECT_FALSE(rdmap::check_header(s, &why));
  EXPECT_TRUE(why == (rdmap::TermCause{rdmap::Layer::kRdmap, 2, 0x06}));
  s.opcode = 3;
  s.qn = 1;
  EXPECT_FALSE(rdmap::check_header(s, &why));
  EXPECT_TRUE(why == (rdmap::TermCause{rdmap::Layer::kDdp, 2, 0x01}));
  s.opcode = 1;  // Read Request belongs to QN 1
  EXPECT_TRUE(rdmap::check_header(s, &why));
  s.tagged = true;  // a Read Request with the T bit
  EXPECT_FALSE(rdmap::check_header(s, &why));
  EXPECT_TRUE(why == (rdmap::TermCause{rdmap::Layer::kRdmap, 2, 0x06}));
}

// Random bytes: decoders never read past the buffer (ASan in the fuzz build; here: no crash and
// consistent results on every prefix).
TEST(Ddp, DecodersStayInsideRandomBuffers) {
  std::mt19937 rng(5);
  for (int i = 0; i < 20000; ++i) {
    Bytes b(rng() % 64);
    for (auto& x : b) x = uint8_t(rng());
    rdmap::Segment s;
    rdmap::Terminate t;
    rdmap::ReadRequest r;
    efe::Header h;
    if (rdmap::decode(b.data(), b.size(), &s)) {
      EXPECT_GE(b.size(), s.header_bytes());
    }
    if (rdmap::decode(b.data(), b.size(), &t)) {
      EXPECT_GE(b.size(), 4u);
    }
    EXPECT_EQ(rdmap::decode(b.data(), b.size(), &r), b.size() >= 28);
    if (efe::decode(b.data(), b.size(), &h) == efe::ParseError::kOk) {
      EXPECT_LE(h.length + 20u, b.size());
    }
  }
}

}  // namespace
}  // namespace rnic
