// The EFE header (WIRE.md), 20 bytes right after the Ethernet header:
//
//   byte   bits  field
//   0      7-4   version = 1
//   0      3-0   type: 0 DATA, 1 ACK, 2 NACK, 3 RNR (receiver not ready)
//   1      7     AR  the sender asks for an immediate ACK
//   1      6     CE  congestion experienced (set by an EFE-aware switch)
//   1      5     ECE congestion echo (in ACK/NACK)
//   1      4     RTX this DATA frame is a retransmission
//   1      3     RQ  reflected QPN: the destination QPN field names the QPN this frame's
//                receiver addressed at its sender (the answer to a segment for a QP that is
//                not there; docs/errors.md)
//   1      2     SY  resynchronise: this DATA frame's SEQ starts the channel afresh (the
//                sender's channel failed and was re-established; docs/efe.md)
//   1      1     QD  (ACK/NACK/RNR) bytes 12-14 carry the forward queueing delay of the DATA
//                frame whose TS this echoes: its one-way delay above the lowest the receiver
//                saw on the channel, in ns, saturating at 2^24 - 1 (efe.cc_delay one_way;
//                docs/decisions.md). 0 in DATA.
//   1      0     UT  byte 15 carries a path utilisation (switch.int_window_ns; docs/decisions.md):
//                in DATA the highest an EFE-aware switch on the way stamped, in ACK/NACK/RNR
//                the one the DATA frame whose TS this echoes arrived with
//   2-3          payload length after this header (excludes padding and FCS)
//   4-7          SEQ: DATA, this frame's sequence number; ACK/NACK/RNR, one past the highest
//                SEQ the sender has sent (every DATA frame it sent before this one is below)
//   8-11         ACK: cumulative, the next SEQ the peer's core has not yet validated; NACK,
//                the first missing SEQ; RNR, the first SEQ the receiver could not take
//   12-14        destination QPN (24 bits); in ACK/NACK/RNR with QD the forward queueing
//                delay, else 0
//   15           with UT: the utilisation in 1/64ths (0-255, saturating): the output port's
//                bytes queued plus (a running estimate of) those sent in the last
//                int_window, over what it can send in that time; else 0
//   16-19        TS: DATA, sender's clock in ns mod 2^32; ACK/NACK, TS of the DATA that
//                triggered it
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/eth/ethernet.h"

namespace rnic::efe {

constexpr size_t kHeaderBytes = 20;
constexpr uint8_t kVersion = 1;

enum class Type : uint8_t { kData = 0, kAck = 1, kNack = 2, kRnr = 3 };

struct Header {
  Type type = Type::kData;
  bool ar = false, ce = false, ece = false, rtx = false, rq = false, sy = false, qd = false,
       ut = false;
  uint16_t length = 0;
  uint32_t seq = 0;
  uint32_t ack = 0;
  uint32_t dst_qpn = 0;  // 24 bits
  uint32_t ts = 0;
  uint8_t util = 0;  // with ut, byte 15: the path's utilisation x 64
};

// Byte 15's scale: a utilisation u is stamped as round(u x 64), at most 255.
constexpr double kUtilScale = 64;

enum class ParseError { kOk, kShort, kVersion, kType, kReserved, kLength };
const char* to_string(ParseError e);

void encode(const Header& h, uint8_t* out);
// Checks version, type, reserved bits and that `length` fits in `avail` bytes after the header.
ParseError decode(const uint8_t* p, size_t avail, Header* h);

// An Ethernet frame (no FCS) carrying h and `len` payload bytes; h.length is set to len.
std::vector<uint8_t> build_frame(const eth::Header& eh, Header h, const uint8_t* payload,
                                 size_t len);

}  // namespace rnic::efe
