// Ethernet II framing (WIRE.md): destination MAC, source MAC, EtherType, payload padded to the
// 60-byte minimum, FCS (CRC-32, IEEE 802.3) last and least significant byte first. On the wire
// a frame also costs 8 B preamble+SFD and 12 B inter-frame gap.
//
//   bytes  field
//   0-5    destination MAC
//   6-11   source MAC
//   12-13  EtherType (0x88B5 for EFE)
//   14..   payload, then padding to 60 bytes
//   last 4 FCS
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/bytes.h"

namespace rnic::eth {

using Mac = MacAddr;

constexpr uint16_t kEtherTypeEfe = 0x88B5;
// IEEE 802.3x PAUSE: MAC control (EtherType 0x8808), opcode 0x0001, then the pause time in
// quanta of 512 bit times; sent to 01:80:C2:00:00:01. A time of 0 resumes at once (XON).
constexpr uint16_t kEtherTypeMacControl = 0x8808;
constexpr uint16_t kPauseOpcode = 0x0001;
constexpr MacAddr kPauseDst{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
// A PAUSE frame from src asking for `quanta` x 512 bit times (padded to the minimum size).
std::vector<uint8_t> pause_frame(const MacAddr& src, uint16_t quanta);
// Whether the frame is a PAUSE; its quanta in *quanta.
bool parse_pause(const uint8_t* frame, size_t len, uint16_t* quanta);
// IPv4 (RFC 791), for the switch's ECN marking (RFC 3168): the ECN field is the low two bits of
// the TOS byte (frame byte 15), the header checksum bytes 24-25.
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
// Whether the frame (without FCS) is IPv4 with ECT(0) or ECT(1): one a switch may mark CE.
bool ipv4_ect(const uint8_t* frame, size_t len);
// Sets CE in such a frame and updates its header checksum incrementally (RFC 1624).
void mark_ipv4_ce(uint8_t* frame);
constexpr size_t kHeaderBytes = 14;
constexpr size_t kMinFrameBytes = 60;  // without FCS
constexpr size_t kFcsBytes = 4;
constexpr size_t kPreambleBytes = 8;
constexpr size_t kIfgBytes = 12;

struct Header {
  Mac dst{};
  Mac src{};
  uint16_t ethertype = kEtherTypeEfe;
};

// "02:00:00:00:00:01"
std::string to_string(const Mac& m);
// Header + payload + padding (no FCS). A null payload leaves its `len` bytes zero for the caller.
std::vector<uint8_t> build_frame(const Header& h, const uint8_t* payload, size_t len);
// The 14-byte header alone, in a buffer that holds `capacity` bytes without growing: the
// caller appends the rest (and pads to kMinFrameBytes) without zeroing it first.
std::vector<uint8_t> frame_head(const Header& h, size_t capacity);
// Appends the FCS, least significant byte first.
void append_fcs(std::vector<uint8_t>& frame);
// True if the last 4 bytes are the FCS of the rest.
bool fcs_ok(const uint8_t* frame, size_t len_with_fcs);
// Parses the header; false if the frame is shorter than a header.
bool parse_header(const uint8_t* frame, size_t len, Header* h);
// Bytes a frame of `frame_len` (without FCS) occupies on the wire: preamble, frame, FCS, IFG.
inline size_t wire_bytes(size_t frame_len) {
  return kPreambleBytes + (frame_len < kMinFrameBytes ? kMinFrameBytes : frame_len) + kFcsBytes +
         kIfgBytes;
}

}  // namespace rnic::eth
