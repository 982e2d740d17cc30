// Big-endian (network order) field access over byte buffers, bounds checked by the callers'
// length checks. Used by every wire-format header; little-endian for a host memory word.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rnic {

// An Ethernet MAC address, first byte first (as on the wire).
using MacAddr = std::array<uint8_t, 6>;

// Whether two MACs are the same: two loads and compares, where std::array's == calls memcmp.
inline bool same_mac(const MacAddr& a, const MacAddr& b) {
  uint32_t a4, b4;
  uint16_t a2, b2;
  std::memcpy(&a4, a.data(), 4);
  std::memcpy(&b4, b.data(), 4);
  std::memcpy(&a2, a.data() + 4, 2);
  std::memcpy(&b2, b.data() + 4, 2);
  return a4 == b4 && a2 == b2;
}

inline void put_be16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
inline void put_be24(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 16);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v);
}
inline void put_be32(uint8_t* p, uint32_t v) {
  put_be16(p, uint16_t(v >> 16));
  put_be16(p + 2, uint16_t(v));
}
inline void put_be64(uint8_t* p, uint64_t v) {
  put_be32(p, uint32_t(v >> 32));
  put_be32(p + 4, uint32_t(v));
}
inline uint16_t get_be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t get_be24(const uint8_t* p) {
  return uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2];
}
inline uint32_t get_be32(const uint8_t* p) { return uint32_t(get_be16(p)) << 16 | get_be16(p + 2); }
inline uint64_t get_be64(const uint8_t* p) { return uint64_t(get_be32(p)) << 32 | get_be32(p + 4); }

// A MAC as a 48-bit number, its first byte the most significant (a key for hash tables).
inline uint64_t mac_value(const MacAddr& m) {
  return uint64_t(get_be16(m.data())) << 32 | get_be32(m.data() + 2);
}

// Little-endian: a 64-bit word in host memory (the hosts are little-endian, as the card's ABI).
inline void put_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
inline uint64_t get_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

}  // namespace rnic
