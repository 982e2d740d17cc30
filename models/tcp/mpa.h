// MPA (RFC 5044) with the enhanced connection set-up of RFC 6581: the start-up frames each side
// sends once the TCP connection is up, and the framing of each DDP segment (ULPDU) as one FPDU.
//
// Start-up frame (request from the active side, reply from the passive one):
//   bytes 0-15  key, "MPA ID Req Frame" or "MPA ID Rep Frame"
//   byte 16     M 0x80 (the sender wants markers), C 0x40 (wants CRC), R 0x20 (reply: rejected),
//               E 0x10 (RFC 6581: the private data starts with IRD/ORD), rest reserved
//   byte 17     revision (2 with E; 1 without)
//   bytes 18-19 private data length (at most 512)
//   private data: with E, first IRD (2 bytes: P 0x8000 peer-to-peer, Z 0x4000 zero-length RTR,
//   14-bit IRD) and ORD (2 bytes: W 0x8000 RTR by zero-length RDMA Write, R 0x4000 by RDMA Read,
//   14-bit ORD); then the consumer's own bytes.
//
// FPDU: ULPDU length (2 bytes), the ULPDU, 0-3 pad bytes to a multiple of 4, CRC32c (4 bytes)
// of everything before it, least significant byte first (as iSCSI sends its CRC32c; Wireshark's
// iwarp_mpa checks it so). This transport never asks for markers
// and rejects a peer that does (as Linux siw does; docs/transport.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rnic::mpa {

constexpr size_t kKeyBytes = 16;
constexpr size_t kStartHeaderBytes = 20;
constexpr size_t kMaxPrivateData = 512;
constexpr size_t kLengthBytes = 2;
constexpr size_t kCrcBytes = 4;
constexpr uint16_t kIrdOrdMask = 0x3FFF;

struct StartFrame {
  bool reply = false;
  bool markers = false, crc = true, reject = false, enhanced = true;
  uint8_t revision = 2;
  // With `enhanced`: the RFC 6581 fields.
  bool peer_to_peer = true;
  bool zero_length_rtr = false;
  bool rtr_write = true, rtr_read = false;
  uint16_t ird = 0, ord = 0;
  std::vector<uint8_t> private_data;  // the consumer's, after IRD/ORD
};

std::vector<uint8_t> encode_start(const StartFrame& f);
enum class StartError { kOk, kShort, kKey, kRevision, kLength, kEnhanced };
// A start-up frame at p (it may be followed by other bytes); its size in *consumed. kShort: not
// all of it is here yet.
StartError decode_start(const uint8_t* p, size_t len, StartFrame* f, size_t* consumed);

// Bytes on the wire of an FPDU carrying `ulpdu` bytes.
inline size_t fpdu_bytes(size_t ulpdu) {
  return kLengthBytes + ulpdu + (4 - (kLengthBytes + ulpdu) % 4) % 4 + kCrcBytes;
}
// The largest ULPDU an FPDU of at most `bytes` carries.
inline size_t max_ulpdu(size_t bytes) { return (bytes - kCrcBytes) / 4 * 4 - kLengthBytes; }
// Appends one FPDU to out.
void append_fpdu(const uint8_t* ulpdu, size_t len, std::vector<uint8_t>& out);
enum class FpduError { kOk, kShort, kCrc };
// The FPDU at p: the ULPDU at p + kLengthBytes of *ulpdu_len bytes, the whole FPDU *consumed
// bytes. kShort: not all of it is here yet.
FpduError parse_fpdu(const uint8_t* p, size_t len, size_t* ulpdu_len, size_t* consumed);

}  // namespace rnic::mpa
