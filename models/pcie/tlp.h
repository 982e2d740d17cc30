// PCIe transaction-layer packets and what each costs on the link (DESIGN.md §3.2).
//
// Wire cost of one TLP with P payload bytes (P a whole number of DWs):
//   P + header (12 B 3DW, 16 B 4DW) + 2 B sequence number + 4 B LCRC + framing
//   (2 B STP/END for Gen1/2, 4 B STP token for Gen3+).
// A DLLP (ACK, UpdateFC) is 6 B + framing (2 B SDP/END for Gen1/2, 2 B SDP token for Gen3+) = 8 B.
// Bytes are striped over the lanes; a link byte lasts 8 bits x encoding (10/8 for Gen1/2,
// 130/128 for Gen3+) / (rate x lanes), kept as an exact fraction of a picosecond.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace rnic::pcie {

enum class TlpType : uint8_t { kMWr, kMRd, kCplD, kCpl };
enum class FcClass : uint8_t { kPosted = 0, kNonPosted = 1, kCompletion = 2 };
enum class CplStatus : uint8_t { kSc = 0, kUr = 1, kCa = 4 };

constexpr uint64_t k4GiB = 1ull << 32;

struct Tlp {
  TlpType type = TlpType::kMWr;
  uint64_t addr = 0;       // MWr, MRd: first byte address
  uint32_t len = 0;        // MWr, CplD: payload bytes; MRd: bytes requested
  uint16_t tag = 0;        // MRd and its completions
  uint16_t requester = 0;  // requester ID of an MRd (0: root complex, 1: the card)
  CplStatus status = CplStatus::kSc;
  uint32_t byte_count = 0;    // CplD/Cpl: bytes left in the request, this completion's included
  uint8_t lower_addr = 0;     // CplD: address bits 6:0 of this completion's first byte
  std::vector<uint8_t> data;  // MWr, CplD payload (len bytes)

  FcClass fc_class() const {
    switch (type) {
      case TlpType::kMWr:
        return FcClass::kPosted;
      case TlpType::kMRd:
        return FcClass::kNonPosted;
      default:
        return FcClass::kCompletion;
    }
  }
  bool four_dw() const {
    return (type == TlpType::kMWr || type == TlpType::kMRd) && addr + (len ? len - 1 : 0) >= k4GiB;
  }
  uint32_t header_bytes() const { return four_dw() ? 16 : 12; }
  // Payload on the wire: the DWs the bytes touch (byte enables cover partial DWs).
  uint32_t payload_wire_bytes() const {
    if (type == TlpType::kMRd || type == TlpType::kCpl || len == 0) return 0;
    const uint64_t first = type == TlpType::kCplD ? lower_addr : addr;
    return uint32_t(((first & 3) + len + 3) / 4 * 4);
  }
  // Flow-control data credits (16 B units) this TLP consumes.
  uint32_t data_credits() const { return (payload_wire_bytes() + 15) / 16; }
};

constexpr uint32_t framing_bytes(int gen) { return gen <= 2 ? 2 : 4; }
constexpr uint32_t tlp_wire_bytes(uint32_t payload, uint32_t header, int gen) {
  return payload + header + 2 + 4 + framing_bytes(gen);
}
constexpr uint32_t kDllpWireBytes = 8;

// Link byte time as num/den picoseconds (all lanes together).
struct LinkRate {
  uint64_t num = 1, den = 1;
  static LinkRate of(int gen, int lanes);
  double gbps_raw() const { return 8.0 * double(den) / double(num) * 1e12 / 1e9; }
};

// Theoretical limit of data throughput, in Gb/s, for a transfer of `bytes` split into TLPs of
// at most `max_payload` bytes (3DW headers): bytes / (bytes + TLPs x per-TLP overhead) at the
// link's data rate.
double tlp_limit_gbps(int gen, int lanes, uint64_t max_payload, uint64_t bytes);

// Turns byte counts into picoseconds, carrying the remainder so long streams do not drift.
class ByteClock {
 public:
  explicit ByteClock(LinkRate r = {}) : r_(r) {}
  void set_rate(LinkRate r) {
    r_ = r;
    rem_ = 0;
  }
  uint64_t ps_for(uint64_t bytes) { return peek_ps_for(bytes, rem_); }
  // What ps_for(bytes) gives after calls that left `rem` (rem() now), without changing the
  // clock: rem becomes what that call would leave, for the one after it.
  uint64_t peek_ps_for(uint64_t bytes, uint64_t& rem) const {
    uint64_t t64;
    if (!__builtin_mul_overflow(bytes, r_.num, &t64) && !__builtin_add_overflow(t64, rem, &t64)) {
      rem = t64 % r_.den;  // 64-bit arithmetic where it is exact: a packet's bytes
      return t64 / r_.den;
    }
    const unsigned __int128 t = (unsigned __int128)bytes * r_.num + rem;
    rem = uint64_t(t % r_.den);
    return uint64_t(t / r_.den);
  }
  uint64_t rem() const { return rem_; }
  const LinkRate& rate() const { return r_; }

 private:
  LinkRate r_;
  uint64_t rem_ = 0;
};

}  // namespace rnic::pcie
