#include "models/eth/ethernet.h"

#include <fmt/format.h>

#include <algorithm>

#include "models/common/byte_pool.h"
#include "models/common/bytes.h"
#include "models/common/crc32.h"

namespace rnic::eth {

namespace {
const Crc32& fcs_crc() {
  static const Crc32 c(Crc32::kPolyIeee);
  return c;
}
}  // namespace

bool ipv4_ect(const uint8_t* f, size_t len) {
  if (len < kHeaderBytes + 20 || f[12] != uint8_t(kEtherTypeIpv4 >> 8) ||
      f[13] != uint8_t(kEtherTypeIpv4 & 0xFF) || (f[14] >> 4) != 4)
    return false;
  const uint8_t ecn = f[15] & 3;
  return ecn == 1 || ecn == 2;
}

void mark_ipv4_ce(uint8_t* f) {
  // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the 16-bit word that holds the TOS byte.
  const uint16_t m = uint16_t(f[14] << 8 | f[15]);
  f[15] |= 3;
  const uint16_t m2 = uint16_t(f[14] << 8 | f[15]);
  uint32_t s = uint16_t(~uint16_t(f[24] << 8 | f[25])) + uint16_t(~m) + m2;
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  const uint16_t hc = uint16_t(~s);
  f[24] = uint8_t(hc >> 8);
  f[25] = uint8_t(hc);
}

std::vector<uint8_t> frame_head(const Header& h, size_t capacity) {
  std::vector<uint8_t> f = take_bytes(std::max(capacity, kHeaderBytes));
  f.insert(f.end(), h.dst.begin(), h.dst.end());
  f.insert(f.end(), h.src.begin(), h.src.end());
  f.push_back(uint8_t(h.ethertype >> 8));
  f.push_back(uint8_t(h.ethertype));
  return f;
}

std::vector<uint8_t> build_frame(const Header& h, const uint8_t* payload, size_t len) {
  const size_t n = std::max(kMinFrameBytes, kHeaderBytes + len);
  std::vector<uint8_t> f = frame_head(h, n);
  if (payload) f.insert(f.end(), payload, payload + len);
  f.resize(n);  // the padding (and the room for a payload written after, with none given)
  return f;
}

void append_fcs(std::vector<uint8_t>& f) {
  const uint32_t c = fcs_crc().compute(f.data(), f.size());
  for (int i = 0; i < 4; ++i) f.push_back(uint8_t(c >> (8 * i)));
}

bool fcs_ok(const uint8_t* f, size_t len) {
  if (len < kFcsBytes) return false;
  const uint32_t c = fcs_crc().compute(f, len - kFcsBytes);
  for (int i = 0; i < 4; ++i)
    if (f[len - kFcsBytes + i] != uint8_t(c >> (8 * i))) return false;
  return true;
}

bool parse_header(const uint8_t* f, size_t len, Header* h) {
  if (len < kHeaderBytes) return false;
  std::copy(f, f + 6, h->dst.begin());
  std::copy(f + 6, f + 12, h->src.begin());
  h->ethertype = get_be16(f + 12);
  return true;
}

std::string to_string(const Mac& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4],
                     m[5]);
}

std::vector<uint8_t> pause_frame(const MacAddr& src, uint16_t quanta) {
  std::vector<uint8_t> f(kMinFrameBytes, 0);
  std::copy(kPauseDst.begin(), kPauseDst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + 6);
  f[12] = uint8_t(kEtherTypeMacControl >> 8);
  f[13] = uint8_t(kEtherTypeMacControl & 0xFF);
  f[14] = uint8_t(kPauseOpcode >> 8);
  f[15] = uint8_t(kPauseOpcode & 0xFF);
  f[16] = uint8_t(quanta >> 8);
  f[17] = uint8_t(quanta & 0xFF);
  return f;
}

bool parse_pause(const uint8_t* f, size_t len, uint16_t* quanta) {
  if (len < 18 || f[12] != uint8_t(kEtherTypeMacControl >> 8) ||
      f[13] != uint8_t(kEtherTypeMacControl & 0xFF) || f[14] != 0 || f[15] != kPauseOpcode)
    return false;
  *quanta = uint16_t(f[16] << 8 | f[17]);
  return true;
}

}  // namespace rnic::eth
