// libFuzzer target over the receive path's parse and validate functions, outside SystemC,
// under ASan and UBSan: any byte string as a received Ethernet frame. Besides memory errors it
// checks that whatever decodes re-encodes to the same bytes (reserved bits aside).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "models/efe/efe_header.h"
#include "models/eth/ethernet.h"
#include "models/rnic/ddp_rdmap.h"

using namespace rnic;

static void require(bool ok) {
  if (!ok) std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  eth::fcs_ok(data, size);
  eth::Header eh;
  if (!eth::parse_header(data, size, &eh)) return 0;
  const uint8_t* p = data + eth::kHeaderBytes;
  const size_t n = size - eth::kHeaderBytes;
  efe::Header h;
  if (efe::decode(p, n, &h) != efe::ParseError::kOk) return 0;
  uint8_t again[efe::kHeaderBytes];
  efe::encode(h, again);
  require(std::memcmp(again, p, efe::kHeaderBytes) == 0);
  if (h.type != efe::Type::kData) return 0;
  const uint8_t* d = p + efe::kHeaderBytes;
  const size_t dn = h.length;
  rdmap::Segment s;
  if (!rdmap::decode(d, dn, &s)) return 0;
  uint8_t hdr[rdmap::kUntaggedBytes];
  rdmap::encode(s, hdr);
  // Reserved DDP bits (0x3C) and RDMAP bits (0x30) are not carried by Segment.
  require((hdr[0] | 0x3C) == (d[0] | 0x3C) && (hdr[1] | 0x30) == (d[1] | 0x30));
  require(std::memcmp(hdr + 2, d + 2, s.header_bytes() - 2) == 0);
  rdmap::TermCause why;
  const bool good = rdmap::check_header(s, &why);
  if (!good) require(why.layer == rdmap::Layer::kDdp || why.layer == rdmap::Layer::kRdmap);
  const uint8_t* body = d + s.header_bytes();
  const size_t bn = dn - s.header_bytes();
  if (good && s.opcode == uint8_t(rdmap::Opcode::kReadRequest)) {
    rdmap::ReadRequest r;
    if (rdmap::decode(body, bn, &r)) {
      uint8_t b[rdmap::kReadRequestBytes];
      rdmap::encode(r, b);
      require(std::memcmp(b, body, sizeof b) == 0);
    }
  }
  if (good && s.opcode == uint8_t(rdmap::Opcode::kTerminate)) {
    rdmap::Terminate t;
    if (rdmap::decode(body, bn, &t)) {
      const auto b = rdmap::encode(t);
      require(b.size() <= bn);
      require(std::memcmp(b.data(), body, 2) == 0);
    }
  }
  return 0;
}
