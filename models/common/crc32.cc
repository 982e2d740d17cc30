#include "models/common/crc32.h"

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
// 2009). The same state in and out as the table method; len a non-zero multiple of 16.
__attribute__((target("pclmul,sse4.1"))) uint32_t ieee_clmul(uint32_t crc, const uint8_t* p,
                                                             size_t len) {
  const __m128i k34 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);   // x^(128+32), x^(128-32) mod P
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);              // x^64 mod P
  const __m128i mu_p = _mm_set_epi64x(0x1f7011641, 0x1db710641);  // floor(x^64 / P), P
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)),
                            _mm_cvtsi32_si128(int(crc)));
  for (size_t off = 16; off < len; off += 16) {
    const __m128i lo = _mm_clmulepi64_si128(x, k34, 0x00);
    const __m128i hi = _mm_clmulepi64_si128(x, k34, 0x11);
    x = _mm_xor_si128(_mm_xor_si128(lo, hi),
                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + off)));
  }
  // 128 bits to 64.
  x = _mm_xor_si128(_mm_clmulepi64_si128(x, k34, 0x10), _mm_srli_si128(x, 8));
  // 64 bits to 32.
  x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, mask32), k5, 0x00));
  // Barrett reduction.
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x, mask32), mu_p, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), mu_p, 0x00);
  return uint32_t(_mm_extract_epi32(_mm_xor_si128(x, t), 1));
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
