#include "models/tcp/mpa.h"

#include <cstring>

#include "models/common/bytes.h"
#include "models/common/crc32.h"

namespace rnic::mpa {

namespace {

constexpr char kReqKey[] = "MPA ID Req Frame";
constexpr char kRepKey[] = "MPA ID Rep Frame";

void put_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

uint32_t get_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

const Crc32& crc32c() {
  static const Crc32 c(Crc32::kPolyCastagnoli);
  return c;
}

}  // namespace

std::vector<uint8_t> encode_start(const StartFrame& f) {
  const size_t pd = (f.enhanced ? 4 : 0) + f.private_data.size();
  std::vector<uint8_t> o(kStartHeaderBytes + pd);
  std::memcpy(o.data(), f.reply ? kRepKey : kReqKey, kKeyBytes);
  o[16] = uint8_t((f.markers ? 0x80 : 0) | (f.crc ? 0x40 : 0) | (f.reject ? 0x20 : 0) |
                  (f.enhanced ? 0x10 : 0));
  o[17] = f.revision;
  put_be16(o.data() + 18, uint16_t(pd));
  uint8_t* q = o.data() + kStartHeaderBytes;
  if (f.enhanced) {
    put_be16(q, uint16_t((f.peer_to_peer ? 0x8000 : 0) | (f.zero_length_rtr ? 0x4000 : 0) |
                         (f.ird & kIrdOrdMask)));
    put_be16(q + 2, uint16_t((f.rtr_write ? 0x8000 : 0) | (f.rtr_read ? 0x4000 : 0) |
                             (f.ord & kIrdOrdMask)));
    q += 4;
  }
  if (!f.private_data.empty()) std::memcpy(q, f.private_data.data(), f.private_data.size());
  return o;
}

StartError decode_start(const uint8_t* p, size_t len, StartFrame* f, size_t* consumed) {
  if (len < kStartHeaderBytes) return StartError::kShort;
  if (std::memcmp(p, kReqKey, kKeyBytes) == 0)
    f->reply = false;
  else if (std::memcmp(p, kRepKey, kKeyBytes) == 0)
    f->reply = true;
  else
    return StartError::kKey;
  f->markers = p[16] & 0x80;
  f->crc = p[16] & 0x40;
  f->reject = p[16] & 0x20;
  f->enhanced = p[16] & 0x10;
  f->revision = p[17];
  if (f->revision < 1 || f->revision > 2 || (f->enhanced && f->revision != 2))
    return StartError::kRevision;
  const size_t pd = get_be16(p + 18);
  if (pd > kMaxPrivateData) return StartError::kLength;
  if (len < kStartHeaderBytes + pd) return StartError::kShort;
  const uint8_t* q = p + kStartHeaderBytes;
  size_t rest = pd;
  if (f->enhanced) {
    if (pd < 4) return StartError::kEnhanced;
    const uint16_t ird = get_be16(q), ord = get_be16(q + 2);
    f->peer_to_peer = ird & 0x8000;
    f->zero_length_rtr = ird & 0x4000;
    f->ird = ird & kIrdOrdMask;
    f->rtr_write = ord & 0x8000;
    f->rtr_read = ord & 0x4000;
    f->ord = ord & kIrdOrdMask;
    q += 4;
    rest -= 4;
  }
  f->private_data.assign(q, q + rest);
  *consumed = kStartHeaderBytes + pd;
  return StartError::kOk;
}

void append_fpdu(const uint8_t* ulpdu, size_t len, std::vector<uint8_t>& out) {
  const size_t start = out.size();
  const size_t n = fpdu_bytes(len);
  out.resize(start + n);
  uint8_t* o = out.data() + start;
  put_be16(o, uint16_t(len));
  if (len) std::memcpy(o + kLengthBytes, ulpdu, len);
  std::memset(o + kLengthBytes + len, 0, n - kCrcBytes - kLengthBytes - len);
  put_le32(o + n - kCrcBytes, crc32c().compute(o, n - kCrcBytes));
}

FpduError parse_fpdu(const uint8_t* p, size_t len, size_t* ulpdu_len, size_t* consumed) {
  if (len < kLengthBytes) return FpduError::kShort;
  const size_t u = get_be16(p);
  const size_t n = fpdu_bytes(u);
  if (len < n) return FpduError::kShort;
  if (get_le32(p + n - kCrcBytes) != crc32c().compute(p, n - kCrcBytes)) return FpduError::kCrc;
  *ulpdu_len = u;
  *consumed = n;
  return FpduError::kOk;
}

}  // namespace rnic::mpa
