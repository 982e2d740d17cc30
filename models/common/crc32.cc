#include "models/common/crc32.h"

namespace rnic {

namespace {
uint32_t reflect32(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
}  // namespace

Crc32::Crc32(uint32_t poly) : poly_(poly) {
  const uint32_t pr = reflect32(poly);
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int b = 0; b < 8; ++b) c = (c >> 1) ^ ((c & 1u) ? pr : 0u);
    table_[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (int t = 1; t < 8; ++t)
      table_[t][i] = (table_[t - 1][i] >> 8) ^ table_[0][table_[t - 1][i] & 0xFF];
}

uint32_t Crc32::update(uint32_t c, const uint8_t* p, size_t len) const {
  while (len >= 8) {
    const uint32_t lo =
        c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    c = table_[7][lo & 0xFF] ^ table_[6][(lo >> 8) & 0xFF] ^ table_[5][(lo >> 16) & 0xFF] ^
        table_[4][lo >> 24] ^ table_[3][p[4]] ^ table_[2][p[5]] ^ table_[1][p[6]] ^ table_[0][p[7]];
    p += 8;
    len -= 8;
  }
  while (len--) c = (c >> 8) ^ table_[0][(c ^ *p++) & 0xFF];
  return c;
}

}  // namespace rnic
