// IPv4 (RFC 791) and TCP (RFC 9293) headers as the MPA/TCP transport puts them on the wire,
// after an Ethernet header of EtherType 0x0800, and reads them back. TCP options: MSS, window
// scale (RFC 7323), SACK-permitted and SACK blocks (RFC 2018), timestamps (RFC 7323), each laid
// out as Linux lays them out (NOPs keep the 32-bit fields aligned). The ECN bits are the IPv4
// header's low two bits of the TOS byte (RFC 3168); ECE and CWR are TCP flags.
//
//   IPv4 (20 B, no options): version/IHL 0x45, TOS (DSCP 0, ECN), total length, identification,
//   flags (DF) and fragment offset 0x4000, TTL, protocol 6, header checksum, source, destination.
//   TCP (20 B + options): ports, sequence, acknowledgement, data offset, flags, window,
//   checksum (over the pseudo-header, the header and the payload), urgent pointer 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/eth/ethernet.h"

namespace rnic::tcp {

using eth::kEtherTypeIpv4;
constexpr size_t kIpv4HeaderBytes = 20;
constexpr size_t kTcpHeaderBytes = 20;  // without options
constexpr uint8_t kProtoTcp = 6;

// ECN codepoints (the TOS byte's low two bits).
constexpr uint8_t kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3;

struct Ipv4Header {
  uint8_t dscp = 0;
  uint8_t ecn = kNotEct;
  uint16_t total_length = 0;  // header and payload; encode_ipv4 takes it as given
  uint16_t id = 0;
  uint8_t ttl = 64;
  uint8_t protocol = kProtoTcp;
  uint32_t src = 0, dst = 0;
};

// The Internet checksum (RFC 1071) of len bytes, starting from a partial sum.
uint16_t internet_checksum(const uint8_t* p, size_t len, uint32_t sum = 0);
// 20 bytes, with the header checksum.
void encode_ipv4(const Ipv4Header& h, uint8_t* out);
enum class Ipv4Error { kOk, kShort, kVersion, kOptions, kFragment, kChecksum, kLength };
// Checks version 4, no options, not a fragment, the header checksum, and that the total length
// fits in len.
Ipv4Error decode_ipv4(const uint8_t* p, size_t len, Ipv4Header* h);

// TCP flags.
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10, kEce = 0x40,
                  kCwr = 0x80;

struct TcpOptions {
  uint16_t mss = 0;             // 0: absent (SYN only)
  int8_t wscale = -1;           // -1: absent (SYN only)
  bool sack_permitted = false;  // SYN only
  bool timestamps = false;
  uint32_t ts_val = 0, ts_ecr = 0;
  std::vector<std::pair<uint32_t, uint32_t>> sack;  // [left, right) blocks, at most 3 with
                                                    // timestamps, 4 without
};

struct TcpHeader {
  uint16_t sport = 0, dport = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;  // as sent (before the peer's scale)
  TcpOptions opt;
  // 20 plus the options, padded to a multiple of 4.
  size_t header_bytes() const;
};

// The header and the payload after it, with the checksum over the pseudo-header (src, dst).
void encode_tcp(const TcpHeader& h, uint32_t src, uint32_t dst, const uint8_t* payload, size_t len,
                uint8_t* out);
enum class TcpError { kOk, kShort, kOffset, kOption, kChecksum };
// A segment of len bytes (header and payload): the header in *h, the payload from *payload_off.
TcpError decode_tcp(const uint8_t* p, size_t len, uint32_t src, uint32_t dst, TcpHeader* h,
                    size_t* payload_off);

// Ethernet, IPv4 and TCP headers and the payload, padded to the Ethernet minimum (no FCS).
// ip.total_length is set here.
std::vector<uint8_t> build_frame(const eth::Header& eh, Ipv4Header ip, const TcpHeader& th,
                                 const uint8_t* payload, size_t len);
// Bytes of IPv4 and TCP headers a segment with these options carries.
inline size_t ip_tcp_header_bytes(const TcpHeader& th) {
  return kIpv4HeaderBytes + th.header_bytes();
}

}  // namespace rnic::tcp
