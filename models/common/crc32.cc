#include "models/common/crc32.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rnic {

namespace {

#if defined(__x86_64__)
// CRC-32 (IEEE, reflected) of whole 16-byte blocks by carry-less multiplication: the 128-bit
// remainder so far is folded into the next block (its two halves times x^(128+64) and x^128
// modulo P, in the reflected domain), then reduced to 64 and 32 bits and by Barrett's method to
// the CRC (Gopal et al., "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", Intel,
// 2009). From 128 bytes on, four remainders 64 bytes apart are folded 512 bits ahead at a time
// (four chains of multiplications the CPU overlaps, where one chain waits for each fold), then
// into one. The same state in and out as the table method; len a non-zero multiple of 16.
// One 128-bit remainder folded `k`'s distance ahead, onto the block there.
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i r, __m128i k, __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00), _mm_clmulepi64_si128(r, k, 0x11)), next);
}

__attribute__((target("pclmul,sse4.1"))) uint32_t ieee_clmul(uint32_t crc, const uint8_t* p,
                                                             size_t len) {
  const __m128i k34 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);   // x^(128+32), x^(128-32) mod P
  const __m128i k12 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);   // x^(512+32), x^(512-32) mod P
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);              // x^64 mod P
  const __m128i mu_p = _mm_set_epi64x(0x1f7011641, 0x1db710641);  // floor(x^64 / P), P
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  auto load = [p](size_t off) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + off));
  };
  __m128i x = _mm_xor_si128(load(0), _mm_cvtsi32_si128(int(crc)));
  size_t off = 16;
  if (len >= 128) {
    // Four remainders 64 bytes apart, each folded 512 bits ahead: four independent chains
    // instead of one, then folded into one.
    __m128i x1 = load(16), x2 = load(32), x3 = load(48);
    for (off = 64; off + 64 <= len; off += 64) {
      x = fold(x, k12, load(off));
      x1 = fold(x1, k12, load(off + 16));
      x2 = fold(x2, k12, load(off + 32));
      x3 = fold(x3, k12, load(off + 48));
    }
    x = fold(fold(fold(x, k34, x1), k34, x2), k34, x3);
  }
  for (; off < len; off += 16) x = fold(x, k34, load(off));
  // 128 bits to 64.
  x = _mm_xor_si128(_mm_clmulepi64_si128(x, k34, 0x10), _mm_srli_si128(x, 8));
  // 64 bits to 32.
  x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, mask32), k5, 0x00));
  // Barrett reduction.
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), mu_p, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), mu_p, 0x00);
  return uint32_t(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
}

// CRC-32C by the CPU's own instruction (SSE4.2's crc32: the Castagnoli polynomial, reflected,
// the state in and out as the table method), 8 bytes at a time, then byte by byte.
__attribute__((target("sse4.2"))) uint32_t castagnoli_hw(uint32_t crc, const uint8_t* p,
                                                         size_t len) {
  uint64_t c = crc;
  for (; len >= 8; p += 8, len -= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  auto c32 = uint32_t(c);
  for (; len; ++p, --len) c32 = _mm_crc32_u8(c32, *p);
  return c32;
}

bool have_sse42() {
  static const bool yes = __builtin_cpu_supports("sse4.2");
  return yes;
}

bool have_clmul() {
  static const bool yes = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return yes;
}
#endif

uint32_t reflect32(uint32_t v) {
  uint32_t r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
}  // namespace

// One set of tables per polynomial, shared by every Crc32 of it (a run of many hosts has two
// FCS blocks a MAC and one a switch: private tables would be 8 KiB each in the cache).
const Crc32::Tables& Crc32::tables_for(uint32_t poly) {
  static std::mutex mu;
  static std::map<uint32_t, std::unique_ptr<Tables>> made;
  const std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Tables>& t = made[poly];
  if (t) return *t;
  t = std::make_unique<Tables>();
  Tables& table = *t;
  const uint32_t pr = reflect32(poly);
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int b = 0; b < 8; ++b) c = (c >> 1) ^ ((c & 1u) ? pr : 0u);
    table[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i)
    for (int k = 1; k < 8; ++k)
      table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xFF];
  return table;
}

Crc32::Crc32(uint32_t poly) : poly_(poly), table_(&tables_for(poly)) {}

uint32_t Crc32::update(uint32_t c, const uint8_t* p, size_t len) const {
#if defined(__x86_64__)
  if (poly_ == kPolyCastagnoli && have_sse42()) return castagnoli_hw(c, p, len);
  if (poly_ == kPolyIeee && len >= 64 && have_clmul()) {
    const size_t n = len & ~size_t(15);
    c = ieee_clmul(c, p, n);
    p += n;
    len -= n;
  }
#endif
  const Tables& t = *table_;
  while (len >= 8) {
    const uint32_t lo =
        c ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
        t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    len -= 8;
  }
  while (len--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return c;
}

}  // namespace rnic
