// DDP (RFC 5041) and RDMAP (RFC 5040) as WIRE.md frames them: one DDP segment per EFE DATA
// frame, right after the EFE header. Offsets from the first DDP byte.
//
//   DDP control   T 0x80 tagged, L 0x40 last segment, reserved 0x3C, DV 0x03 (version 1)
//   RDMAP control RV 0xC0 (version 1: 0x40), reserved 0x30, opcode 0x0F
//
//   tagged (14 B):   0 DDP ctrl, 1 RDMAP ctrl, 2-5 STag, 6-13 tagged offset
//   untagged (18 B): 0 DDP ctrl, 1 RDMAP ctrl, 2-5 Invalidate STag or 0, 6-9 QN, 10-13 MSN,
//                    14-17 MO
//
//   Read Request payload (28 B after the untagged header): 0-3 sink STag, 4-11 sink TO,
//   12-15 read message size, 16-19 source STag, 20-27 source TO
//
//   Atomic Request payload (52 B after the untagged header, QN 1; RFC 7306, laid out as
//   Wireshark's iwarp_ddp_rdmap reads it): 0-3 atomic opcode (low 4 bits: 0 FetchAdd, 2 CmpSwap),
//   4-7 request identifier, 8-11 remote STag, 12-19 remote tagged offset, 20-27 add or swap data,
//   28-35 add or swap mask, 36-43 compare data, 44-51 compare mask.
//   Atomic Response payload (12 B after the untagged header, QN 3): 0-3 the request's identifier,
//   4-11 the target's value before the operation.
//
//   Immediate Data payload (8 B after the untagged header, QN 0; RFC 7306 leaves the 8 bytes to
//   the ULP, the verbs mapping is docs/decisions.md's): 0-3 verbs' imm_data as the program
//   stored it, 4-7 (big-endian) the byte count the receive completion reports (an RDMA Write
//   with Immediate: the Write's length), or bit 31 alone: it belongs to the Send that follows.
//
//   Terminate payload: 0 layer (high nibble: 0 RDMAP, 1 DDP, 2 LLP) | error type (low nibble),
//   1 error code, 2 M 0x80 D 0x40 R 0x20 + reserved, 3 reserved; when D: DDP segment length (2)
//   and the terminated DDP header (14 or 18 B); when R: the terminated Read Request (28 B).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rnic::rdmap {

enum class Opcode : uint8_t {
  kWrite = 0,
  kReadRequest = 1,
  kReadResponse = 2,
  kSend = 3,
  kSendInvalidate = 4,
  kSendSe = 5,
  kSendSeInvalidate = 6,
  kTerminate = 7,
  kImmediate = 8,        // RFC 7306 Immediate Data
  kImmediateSe = 9,      // ... with Solicited Event
  kAtomicRequest = 0xA,  // RFC 7306
  kAtomicResponse = 0xB,
};

constexpr uint8_t kDdpTagged = 0x80, kDdpLast = 0x40, kDdpReserved = 0x3C, kDdpVersionMask = 0x03;
constexpr uint8_t kDdpVersion = 1, kRdmapVersion = 1;
constexpr size_t kTaggedBytes = 14, kUntaggedBytes = 18, kReadRequestBytes = 28;
constexpr size_t kAtomicRequestBytes = 52, kAtomicResponseBytes = 12, kImmediateBytes = 8;
// Queue numbers: Atomic Requests share queue 1 (and its MSNs, IRD and ORD) with Read Requests;
// Atomic Responses have queue 3 (docs/decisions.md, "RFC 7306 atomics").
constexpr uint32_t kQnSend = 0, kQnReadRequest = 1, kQnTerminate = 2, kQnAtomicResponse = 3;

// Which queue an untagged opcode goes to, and whether an opcode is tagged.
bool is_tagged(Opcode op);
uint32_t queue_of(Opcode op);
const char* to_string(Opcode op);

struct Segment {
  bool tagged = false;
  bool last = true;
  uint8_t ddp_version = kDdpVersion;
  uint8_t rdmap_version = kRdmapVersion;
  uint8_t opcode = 0;  // raw: an unknown opcode must still be representable
  uint32_t stag = 0;   // tagged
  uint64_t to = 0;     // tagged
  uint32_t inv_stag = 0;
  uint32_t qn = 0, msn = 0, mo = 0;  // untagged
  size_t header_bytes() const { return tagged ? kTaggedBytes : kUntaggedBytes; }
};

struct ReadRequest {
  uint32_t sink_stag = 0;
  uint64_t sink_to = 0;
  uint32_t size = 0;
  uint32_t src_stag = 0;
  uint64_t src_to = 0;
};

// RFC 7306's atomic operations (the Atomic Request's opcode field).
enum class AtomicOp : uint8_t { kFetchAdd = 0, kSwap = 1, kCmpSwap = 2 };

struct AtomicRequest {
  uint8_t op = 0;  // AtomicOp, raw
  uint32_t req_id = 0;
  uint32_t stag = 0;
  uint64_t to = 0;
  uint64_t add_swap = 0, add_swap_mask = 0;
  uint64_t compare = 0, compare_mask = 0;
};

struct AtomicResponse {
  uint32_t req_id = 0;
  uint64_t value = 0;  // the target's value before the operation
};

// The value an atomic operation leaves in a target that held `orig`: FetchAdd adds add_swap,
// a carry not passing a bit set in add_swap_mask (0: a plain 64-bit add); CmpSwap replaces the
// bits of swap_mask with add_swap's when orig equals compare on the bits of compare_mask (all
// ones: a plain compare-and-swap); Swap replaces the bits of swap_mask. An opcode it does not
// know leaves orig.
uint64_t apply(const AtomicRequest& a, uint64_t orig);
bool known_atomic(uint8_t op);

// RFC 7306 Immediate Data as verbs use it.
struct Immediate {
  uint32_t imm = 0;        // verbs' imm_data (its bytes as the program stored them)
  uint32_t len = 0;        // the byte count the receive completion reports
  bool with_send = false;  // the Send that follows completes with it (no receive of its own)
};

enum class Layer : uint8_t { kRdmap = 0, kDdp = 1, kLlp = 2 };

// A Terminate's cause: layer, error type, error code (RFC 5040 §7, RFC 5041 §7).
struct TermCause {
  Layer layer = Layer::kRdmap;
  uint8_t etype = 0;
  uint8_t code = 0;
  bool operator==(const TermCause& o) const {
    return layer == o.layer && etype == o.etype && code == o.code;
  }
};

struct Terminate {
  TermCause cause;
  bool m = false, d = false, r = false;
  uint16_t ddp_seg_len = 0;           // when d
  std::vector<uint8_t> ddp_header;    // when d: 14 or 18 bytes
  std::vector<uint8_t> rdmap_header;  // when r: 28 bytes
};

void encode(const Segment& s, uint8_t* out);         // header_bytes() bytes
void encode(const ReadRequest& r, uint8_t* out);     // 28 bytes
void encode(const AtomicRequest& a, uint8_t* out);   // 52 bytes
void encode(const AtomicResponse& a, uint8_t* out);  // 12 bytes
void encode(const Immediate& m, uint8_t* out);       // 8 bytes
std::vector<uint8_t> encode(const Terminate& t);
// A whole Terminate segment: its untagged header (QN 2, MSN msn, MO 0, L) and t.
std::vector<uint8_t> terminate_segment(const Terminate& t, uint32_t msn);
// The DDP Segment Length a Terminate quotes for a rejected segment of `seg_bytes` bytes whose
// header is h, as Linux siw fills it (siw_send_terminate): the segment's length less the
// opcode's fixed headers (tagged 14; untagged 18; a Read Request 18 + 28; a Terminate 18 + 4;
// siw has no atomics: an Atomic Request 18 + 52, an Atomic Response 18 + 12), 0 when shorter.
// docs/errors.md says how this reads RFC 5040 §4.8.
uint16_t terminated_length(const Segment& h, size_t seg_bytes);

// Decodes the header's fields (never reads past len). Returns false only if there are not
// enough bytes for the header the T bit announces.
bool decode(const uint8_t* p, size_t len, Segment* s);
bool decode(const uint8_t* p, size_t len, ReadRequest* r);
bool decode(const uint8_t* p, size_t len, AtomicRequest* a);
bool decode(const uint8_t* p, size_t len, AtomicResponse* a);
bool decode(const uint8_t* p, size_t len, Immediate* m);
bool decode(const uint8_t* p, size_t len, Terminate* t);

// The header checks a receiver makes before anything else, in this order, with the Terminate
// each failure gets (WIRE.md): DDP version (tagged: DDP/1/0x04, untagged: DDP/2/0x06), RDMAP
// version (RDMAP/2/0x05), opcode (RDMAP/2/0x06: unknown, or tagged-ness that does not match
// it), QN of an untagged segment (DDP/2/0x01). Returns true when the header passes.
bool check_header(const Segment& s, TermCause* why);

}  // namespace rnic::rdmap
