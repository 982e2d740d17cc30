// The MPA/TCP transport's wire code (models/tcp/): IPv4 and TCP headers with their checksums
// and options, MPA start-up frames (RFC 5044, RFC 6581) and FPDU framing with CRC32c.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "models/tcp/ip_tcp.h"
#include "models/tcp/mpa.h"

namespace rnic::tcp {
namespace {

TEST(InternetChecksum, Rfc1071Example) {
  // RFC 1071 §3: the one's complement sum of 0001 f203 f4f5 f6f7 is ddf2.
  const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(internet_checksum(b, sizeof b), uint16_t(~0xddf2));
  const uint8_t odd[] = {0x01};  // an odd byte is the high half of a last word
  EXPECT_EQ(internet_checksum(odd, 1), uint16_t(~0x0100));
}

TEST(Ipv4, RoundTripAndChecks) {
  Ipv4Header h;
  h.ecn = kCe;
  h.dscp = 10;
  h.total_length = 60;
  h.id = 77;
  h.src = 0x0A000001;
  h.dst = 0x0A000002;
  uint8_t b[60] = {};
  encode_ipv4(h, b);
  EXPECT_EQ(internet_checksum(b, kIpv4HeaderBytes), 0);
  Ipv4Header g;
  ASSERT_EQ(decode_ipv4(b, sizeof b, &g), Ipv4Error::kOk);
  EXPECT_EQ(g.ecn, kCe);
  EXPECT_EQ(g.dscp, 10);
  EXPECT_EQ(g.total_length, 60);
  EXPECT_EQ(g.src, h.src);
  EXPECT_EQ(g.dst, h.dst);
  EXPECT_EQ(decode_ipv4(b, 19, &g), Ipv4Error::kShort);
  EXPECT_EQ(decode_ipv4(b, 59, &g), Ipv4Error::kLength);  // total length beyond the frame
  uint8_t c[60];
  std::memcpy(c, b, sizeof c);
  c[8] ^= 1;  // TTL changed, checksum not
  EXPECT_EQ(decode_ipv4(c, sizeof c, &g), Ipv4Error::kChecksum);
  std::memcpy(c, b, sizeof c);
  c[0] = 0x65;
  EXPECT_EQ(decode_ipv4(c, sizeof c, &g), Ipv4Error::kVersion);
  c[0] = 0x46;
  EXPECT_EQ(decode_ipv4(c, sizeof c, &g), Ipv4Error::kOptions);
  std::memcpy(c, b, sizeof c);
  c[6] = 0x20;  // MF: a fragment
  EXPECT_EQ(decode_ipv4(c, sizeof c, &g), Ipv4Error::kFragment);
}

TcpHeader syn_header() {
  TcpHeader h;
  h.sport = 40000;
  h.dport = 4791;
  h.seq = 0xFFFFFFF0;
  h.ack = 0;
  h.flags = kSyn | kEce | kCwr;  // an ECN-setup SYN (RFC 3168)
  h.window = 65535;
  h.opt.mss = 1460;
  h.opt.wscale = 7;
  h.opt.sack_permitted = true;
  h.opt.timestamps = true;
  h.opt.ts_val = 123;
  return h;
}

TEST(Tcp, OptionsLaidOutAndReadBack) {
  const TcpHeader h = syn_header();
  EXPECT_EQ(h.header_bytes(), 40u);  // MSS 4, SACK-permitted + timestamps 12, window scale 4
  uint8_t b[40];
  encode_tcp(h, 1, 2, nullptr, 0, b);
  // Linux's order: MSS, SACK-permitted, timestamps, NOP, window scale.
  const uint8_t opts[] = {2, 4, 0x05, 0xB4, 4, 2, 8, 10, 0, 0, 0, 123, 0, 0, 0, 0, 1, 3, 3, 7};
  EXPECT_EQ(std::memcmp(b + 20, opts, sizeof opts), 0);
  TcpHeader g;
  size_t off = 0;
  ASSERT_EQ(decode_tcp(b, sizeof b, 1, 2, &g, &off), TcpError::kOk);
  EXPECT_EQ(off, 40u);
  EXPECT_EQ(g.seq, h.seq);
  EXPECT_EQ(g.flags, h.flags);
  EXPECT_EQ(g.opt.mss, 1460);
  EXPECT_EQ(g.opt.wscale, 7);
  EXPECT_TRUE(g.opt.sack_permitted);
  EXPECT_TRUE(g.opt.timestamps);
  EXPECT_EQ(g.opt.ts_val, 123u);
  // The checksum covers the pseudo-header: another address fails it.
  EXPECT_EQ(decode_tcp(b, sizeof b, 1, 3, &g, &off), TcpError::kChecksum);
}

TEST(Tcp, SackBlocksAndPayload) {
  TcpHeader h;
  h.flags = kAck;
  h.opt.timestamps = true;
  h.opt.sack = {{100, 200}, {300, 400}, {500, 600}};
  EXPECT_EQ(h.header_bytes(), 20u + 12 + 4 + 24);
  const std::string data = "payload bytes";
  std::vector<uint8_t> b(h.header_bytes() + data.size());
  encode_tcp(h, 7, 9, reinterpret_cast<const uint8_t*>(data.data()), data.size(), b.data());
  TcpHeader g;
  size_t off = 0;
  ASSERT_EQ(decode_tcp(b.data(), b.size(), 7, 9, &g, &off), TcpError::kOk);
  EXPECT_EQ(g.opt.sack, h.opt.sack);
  EXPECT_EQ(std::string(b.begin() + long(off), b.end()), data);
  b.back() ^= 0x10;  // a payload bit: the checksum catches it
  EXPECT_EQ(decode_tcp(b.data(), b.size(), 7, 9, &g, &off), TcpError::kChecksum);
}

TEST(Tcp, MalformedHeadersAreRefused) {
  TcpHeader h = syn_header();
  uint8_t b[40];
  encode_tcp(h, 1, 2, nullptr, 0, b);
  TcpHeader g;
  size_t off = 0;
  EXPECT_EQ(decode_tcp(b, 19, 1, 2, &g, &off), TcpError::kShort);
  uint8_t c[40];
  std::memcpy(c, b, sizeof c);
  c[12] = 0x40;  // data offset 16 bytes: below the header
  EXPECT_EQ(decode_tcp(c, sizeof c, 1, 2, &g, &off), TcpError::kOffset);
  // An option whose length runs past the header (the checksum recomputed so only the option is
  // wrong).
  h.opt = {};
  h.opt.timestamps = true;
  uint8_t d[32];
  encode_tcp(h, 1, 2, nullptr, 0, d);
  d[23] = 30;  // the timestamps option claims 30 bytes
  d[16] = d[17] = 0;
  const uint16_t sum = internet_checksum(d, sizeof d, 1 + 2 + kProtoTcp + 32);
  d[16] = uint8_t(sum >> 8), d[17] = uint8_t(sum);
  EXPECT_EQ(decode_tcp(d, sizeof d, 1, 2, &g, &off), TcpError::kOption);
}

TEST(Tcp, FrameCarriesEthernetIpv4AndTcp) {
  const TcpHeader h = syn_header();
  Ipv4Header ip;
  ip.src = 0x0A000001;
  ip.dst = 0x0A000002;
  const auto f =
      build_frame({{2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}, kEtherTypeIpv4}, ip, h, nullptr, 0);
  ASSERT_EQ(f.size(), 14u + 20 + 40);
  EXPECT_EQ(f[12], 0x08);
  EXPECT_EQ(f[13], 0x00);
  Ipv4Header g;
  ASSERT_EQ(decode_ipv4(f.data() + 14, f.size() - 14, &g), Ipv4Error::kOk);
  EXPECT_EQ(g.total_length, 60);
  TcpHeader t;
  size_t off = 0;
  EXPECT_EQ(decode_tcp(f.data() + 34, g.total_length - 20, g.src, g.dst, &t, &off), TcpError::kOk);
}

}  // namespace
}  // namespace rnic::tcp

namespace rnic::mpa {
namespace {

// CRC32c bit by bit (reflected polynomial 0x82F63B78), independent of the table code.
uint32_t reference_crc32c(const uint8_t* p, size_t len) {
  uint32_t c = 0xFFFFFFFF;
  for (size_t i = 0; i < len; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82F63B78 & (0u - (c & 1)));
  }
  return ~c;
}

TEST(Mpa, ReferenceCrc32cMatchesRfc3720) {
  // RFC 3720 B.4: 32 bytes of zeros give aa 36 91 8a on the wire (0x8A9136AA); "123456789" is
  // the CRC-32C check value 0xE3069283.
  const std::vector<uint8_t> zeros(32, 0);
  EXPECT_EQ(reference_crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  const std::string s = "123456789";
  EXPECT_EQ(reference_crc32c(reinterpret_cast<const uint8_t*>(s.data()), s.size()), 0xE3069283u);
}

TEST(Mpa, StartFramesRoundTrip) {
  StartFrame f;
  f.ird = 16;
  f.ord = 8;
  f.private_data = {1, 2, 3};
  const auto b = encode_start(f);
  ASSERT_EQ(b.size(), kStartHeaderBytes + 4 + 3);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 16), "MPA ID Req Frame");
  EXPECT_EQ(b[16], 0x50);  // C and E
  EXPECT_EQ(b[17], 2);
  EXPECT_EQ(b[19], 7);
  EXPECT_EQ(b[20], 0x80);  // P, IRD 16
  EXPECT_EQ(b[21], 16);
  EXPECT_EQ(b[22], 0x80);  // RTR by zero-length Write, ORD 8
  EXPECT_EQ(b[23], 8);
  StartFrame g;
  size_t n = 0;
  ASSERT_EQ(decode_start(b.data(), b.size(), &g, &n), StartError::kOk);
  EXPECT_EQ(n, b.size());
  EXPECT_FALSE(g.reply);
  EXPECT_EQ(g.ird, 16);
  EXPECT_EQ(g.ord, 8);
  EXPECT_TRUE(g.peer_to_peer);
  EXPECT_TRUE(g.rtr_write);
  EXPECT_EQ(g.private_data, f.private_data);
  EXPECT_EQ(decode_start(b.data(), b.size() - 1, &g, &n), StartError::kShort);

  StartFrame r;
  r.reply = true;
  r.reject = true;
  r.enhanced = false;
  r.revision = 1;
  const auto rb = encode_start(r);
  ASSERT_EQ(decode_start(rb.data(), rb.size(), &g, &n), StartError::kOk);
  EXPECT_TRUE(g.reply);
  EXPECT_TRUE(g.reject);
  EXPECT_FALSE(g.enhanced);
}

TEST(Mpa, BadStartFramesAreRefused) {
  StartFrame f;
  auto b = encode_start(f);
  StartFrame g;
  size_t n = 0;
  auto c = b;
  c[3] = 'x';
  EXPECT_EQ(decode_start(c.data(), c.size(), &g, &n), StartError::kKey);
  c = b;
  c[17] = 1;  // enhanced needs revision 2
  EXPECT_EQ(decode_start(c.data(), c.size(), &g, &n), StartError::kRevision);
  c = b;
  c[18] = 0x02, c[19] = 0x01;  // 513 bytes of private data
  EXPECT_EQ(decode_start(c.data(), c.size(), &g, &n), StartError::kLength);
  c = b;
  c[19] = 2;  // enhanced with room for no IRD/ORD
  EXPECT_EQ(decode_start(c.data(), c.size(), &g, &n), StartError::kEnhanced);
}

TEST(Mpa, FpduPadsToFourAndEndsWithCrc32c) {
  for (size_t u = 0; u < 12; ++u) {
    EXPECT_EQ(fpdu_bytes(u) % 4, 0u) << u;
    EXPECT_GE(fpdu_bytes(u), kLengthBytes + u + kCrcBytes) << u;
    EXPECT_LT(fpdu_bytes(u), kLengthBytes + u + kCrcBytes + 4) << u;
  }
  // The largest ULPDU in a 1448-byte TCP payload (1460 MSS less the timestamps option): 1442.
  EXPECT_EQ(max_ulpdu(1448), 1442u);
  EXPECT_EQ(fpdu_bytes(max_ulpdu(1448)), 1448u);
  std::vector<uint8_t> out;
  const std::vector<uint8_t> ulpdu(26, 0);
  append_fpdu(ulpdu.data(), ulpdu.size(), out);
  ASSERT_EQ(out.size(), 32u);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 26);
  // The CRC: CRC32c of the 28 bytes before it, least significant byte first.
  const uint32_t crc = reference_crc32c(out.data(), 28);
  EXPECT_EQ(out[28], uint8_t(crc));
  EXPECT_EQ(out[31], uint8_t(crc >> 24));
  size_t u = 0, n = 0;
  ASSERT_EQ(parse_fpdu(out.data(), out.size(), &u, &n), FpduError::kOk);
  EXPECT_EQ(u, 26u);
  EXPECT_EQ(n, 32u);
  EXPECT_EQ(parse_fpdu(out.data(), 31, &u, &n), FpduError::kShort);
  out[5] ^= 1;
  EXPECT_EQ(parse_fpdu(out.data(), out.size(), &u, &n), FpduError::kCrc);
}

}  // namespace
}  // namespace rnic::mpa
