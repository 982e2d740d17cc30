#include "models/efe/efe_header.h"

#include <algorithm>

#include "models/common/bytes.h"

namespace rnic::efe {

const char* to_string(ParseError e) {
  switch (e) {
    case ParseError::kOk:
      return "ok";
    case ParseError::kShort:
      return "shorter than an EFE header";
    case ParseError::kVersion:
      return "EFE version is not 1";
    case ParseError::kType:
      return "unknown EFE type";
    case ParseError::kReserved:
      return "reserved EFE bits set";
    case ParseError::kLength:
      return "EFE length past the end of the frame";
  }
  return "?";
}

void encode(const Header& h, uint8_t* p) {
  p[0] = uint8_t(kVersion << 4 | uint8_t(h.type));
  p[1] = uint8_t((h.ar ? 0x80 : 0) | (h.ce ? 0x40 : 0) | (h.ece ? 0x20 : 0) | (h.rtx ? 0x10 : 0) |
                 (h.rq ? 0x08 : 0) | (h.sy ? 0x04 : 0) | (h.qd ? 0x02 : 0) | (h.ut ? 0x01 : 0));
  put_be16(p + 2, h.length);
  put_be32(p + 4, h.seq);
  put_be32(p + 8, h.ack);
  put_be24(p + 12, h.dst_qpn & 0xFFFFFF);
  p[15] = h.ut ? h.util : 0;
  put_be32(p + 16, h.ts);
}

ParseError decode(const uint8_t* p, size_t avail, Header* h) {
  if (avail < kHeaderBytes) return ParseError::kShort;
  if ((p[0] >> 4) != kVersion) return ParseError::kVersion;
  if ((p[0] & 0xF) > uint8_t(Type::kRnr)) return ParseError::kType;
  if (!(p[1] & 0x01) && p[15]) return ParseError::kReserved;
  if ((p[1] & 0x02) && Type(p[0] & 0xF) == Type::kData) return ParseError::kReserved;
  h->type = Type(p[0] & 0xF);
  h->ar = p[1] & 0x80;
  h->ce = p[1] & 0x40;
  h->ece = p[1] & 0x20;
  h->rtx = p[1] & 0x10;
  h->rq = p[1] & 0x08;
  h->sy = p[1] & 0x04;
  h->qd = p[1] & 0x02;
  h->ut = p[1] & 0x01;
  h->util = p[15];
  h->length = get_be16(p + 2);
  h->seq = get_be32(p + 4);
  h->ack = get_be32(p + 8);
  h->dst_qpn = get_be24(p + 12);
  h->ts = get_be32(p + 16);
  if (h->length > avail - kHeaderBytes) return ParseError::kLength;
  return ParseError::kOk;
}

std::vector<uint8_t> build_frame(const eth::Header& eh, Header h, const uint8_t* payload,
                                 size_t len) {
  // Written once: the EFE header in place, then the payload, then any padding (no zero fill of
  // the whole frame first).
  const size_t n = std::max(eth::kMinFrameBytes, eth::kHeaderBytes + kHeaderBytes + len);
  std::vector<uint8_t> f = eth::frame_head(eh, n);
  h.length = uint16_t(len);
  f.resize(eth::kHeaderBytes + kHeaderBytes);
  encode(h, f.data() + eth::kHeaderBytes);
  if (len) f.insert(f.end(), payload, payload + len);
  f.resize(n);
  return f;
}

}  // namespace rnic::efe
