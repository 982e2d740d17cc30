// CRC-32 block model: the SystemC twin of rtl/common/crc32.sv.
//
// Reflected CRC with initial value 0xFFFFFFFF and inverted result (CRC-32 / IEEE 802.3 with
// kPolyIeee, CRC-32C with kPolyCastagnoli). The value returned is the CRC as a number; on the
// wire (Ethernet FCS) it goes least significant byte first.
//
// Timing (cycles of the block's clock, pinned by testbench/unit/common/crc32_test.cc):
//   - one beat of `bytes_per_beat` bytes per cycle; a message of L bytes takes max(1, ceil(L/B))
//     beats;
//   - the result is valid kLatency = 1 cycle after the last beat is accepted;
//   - queue depth: one result register; the input stalls (s_ready low) while a result waits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace rnic {

class Crc32 {
 public:
  static constexpr uint32_t kPolyIeee = 0x04C11DB7;        // IEEE 802.3, normal form
  static constexpr uint32_t kPolyCastagnoli = 0x1EDC6F41;  // CRC-32C, normal form
  static constexpr uint32_t kInit = 0xFFFFFFFF;

  explicit Crc32(uint32_t poly = kPolyIeee);

  // Running state update (state starts at kInit; the CRC is ~state).
  uint32_t update(uint32_t state, const uint8_t* data, size_t len) const;
  uint32_t compute(const uint8_t* data, size_t len) const { return ~update(kInit, data, len); }
  uint32_t poly() const { return poly_; }

 private:
  using Tables = std::array<std::array<uint32_t, 256>, 8>;  // slicing-by-8
  static const Tables& tables_for(uint32_t poly);
  uint32_t poly_;
  const Tables* table_;  // shared by every Crc32 of this polynomial
};

// Burst-level model of the block: one call per message, stamped with the cycle of its first
// beat; returns the CRC and the cycle on which m_valid rises.
class Crc32Model {
 public:
  static constexpr uint64_t kLatency = 1;

  Crc32Model(uint32_t poly, unsigned bytes_per_beat)
      : crc_(poly), bytes_per_beat_(bytes_per_beat) {}

  struct Result {
    uint32_t crc;
    uint64_t valid_cycle;
  };

  uint64_t beats(size_t len) const {
    return len == 0 ? 1 : (len + bytes_per_beat_ - 1) / bytes_per_beat_;
  }
  Result submit(const uint8_t* data, size_t len, uint64_t first_beat_cycle) const {
    return {crc_.compute(data, len), first_beat_cycle + beats(len) - 1 + kLatency};
  }
  const Crc32& crc() const { return crc_; }
  unsigned bytes_per_beat() const { return bytes_per_beat_; }

 private:
  Crc32 crc_;
  unsigned bytes_per_beat_;
};

}  // namespace rnic
