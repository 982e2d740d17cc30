#include "models/tcp/ip_tcp.h"

#include <cstring>

namespace rnic::tcp {

uint16_t internet_checksum(const uint8_t* p, size_t len, uint32_t sum) {
  uint64_t s = sum;
  size_t i = 0;
  for (; i + 1 < len; i += 2) s += uint32_t(p[i]) << 8 | p[i + 1];
  if (i < len) s += uint32_t(p[i]) << 8;
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return uint16_t(~s);
}

void encode_ipv4(const Ipv4Header& h, uint8_t* o) {
  o[0] = 0x45;
  o[1] = uint8_t(h.dscp << 2 | (h.ecn & 3));
  put_be16(o + 2, h.total_length);
  put_be16(o + 4, h.id);
  put_be16(o + 6, 0x4000);  // DF, offset 0
  o[8] = h.ttl;
  o[9] = h.protocol;
  put_be16(o + 10, 0);
  put_be32(o + 12, h.src);
  put_be32(o + 16, h.dst);
  put_be16(o + 10, internet_checksum(o, kIpv4HeaderBytes));
}

Ipv4Error decode_ipv4(const uint8_t* p, size_t len, Ipv4Header* h) {
  if (len < kIpv4HeaderBytes) return Ipv4Error::kShort;
  if (p[0] >> 4 != 4) return Ipv4Error::kVersion;
  if ((p[0] & 0xF) != 5) return Ipv4Error::kOptions;
  if ((get_be16(p + 6) & 0x3FFF) != 0) return Ipv4Error::kFragment;  // MF or an offset
  if (internet_checksum(p, kIpv4HeaderBytes) != 0) return Ipv4Error::kChecksum;
  h->dscp = p[1] >> 2;
  h->ecn = p[1] & 3;
  h->total_length = get_be16(p + 2);
  if (h->total_length < kIpv4HeaderBytes || h->total_length > len) return Ipv4Error::kLength;
  h->id = get_be16(p + 4);
  h->ttl = p[8];
  h->protocol = p[9];
  h->src = get_be32(p + 12);
  h->dst = get_be32(p + 16);
  return Ipv4Error::kOk;
}

size_t TcpHeader::header_bytes() const {
  size_t n = kTcpHeaderBytes;
  if (opt.mss) n += 4;
  if (opt.timestamps)
    n += 12;
  else if (opt.sack_permitted)
    n += 4;
  if (opt.wscale >= 0) n += 4;
  if (!opt.sack.empty()) n += 4 + 8 * opt.sack.size();
  return n;
}

namespace {

uint32_t pseudo_sum(uint32_t src, uint32_t dst, size_t tcp_len) {
  return (src >> 16) + (src & 0xFFFF) + (dst >> 16) + (dst & 0xFFFF) + kProtoTcp +
         uint32_t(tcp_len);
}

}  // namespace

void encode_tcp(const TcpHeader& h, uint32_t src, uint32_t dst, const uint8_t* payload, size_t len,
                uint8_t* o) {
  const size_t hb = h.header_bytes();
  put_be16(o, h.sport);
  put_be16(o + 2, h.dport);
  put_be32(o + 4, h.seq);
  put_be32(o + 8, h.ack);
  o[12] = uint8_t(hb / 4 << 4);
  o[13] = h.flags;
  put_be16(o + 14, h.window);
  put_be16(o + 16, 0);
  put_be16(o + 18, 0);
  uint8_t* q = o + kTcpHeaderBytes;
  const TcpOptions& t = h.opt;
  if (t.mss) {
    q[0] = 2, q[1] = 4;
    put_be16(q + 2, t.mss);
    q += 4;
  }
  if (t.timestamps) {
    if (t.sack_permitted)
      q[0] = 4, q[1] = 2;
    else
      q[0] = 1, q[1] = 1;
    q[2] = 8, q[3] = 10;
    put_be32(q + 4, t.ts_val);
    put_be32(q + 8, t.ts_ecr);
    q += 12;
  } else if (t.sack_permitted) {
    q[0] = 1, q[1] = 1, q[2] = 4, q[3] = 2;
    q += 4;
  }
  if (t.wscale >= 0) {
    q[0] = 1, q[1] = 3, q[2] = 3, q[3] = uint8_t(t.wscale);
    q += 4;
  }
  if (!t.sack.empty()) {
    q[0] = 1, q[1] = 1, q[2] = 5, q[3] = uint8_t(2 + 8 * t.sack.size());
    q += 4;
    for (const auto& [l, r] : t.sack) {
      put_be32(q, l);
      put_be32(q + 4, r);
      q += 8;
    }
  }
  if (len) std::memcpy(o + hb, payload, len);
  put_be16(o + 16, internet_checksum(o, hb + len, pseudo_sum(src, dst, hb + len)));
}

TcpError decode_tcp(const uint8_t* p, size_t len, uint32_t src, uint32_t dst, TcpHeader* h,
                    size_t* payload_off) {
  if (len < kTcpHeaderBytes) return TcpError::kShort;
  const size_t hb = size_t(p[12] >> 4) * 4;
  if (hb < kTcpHeaderBytes || hb > len) return TcpError::kOffset;
  if (internet_checksum(p, len, pseudo_sum(src, dst, len)) != 0) return TcpError::kChecksum;
  h->sport = get_be16(p);
  h->dport = get_be16(p + 2);
  h->seq = get_be32(p + 4);
  h->ack = get_be32(p + 8);
  h->flags = p[13];
  h->window = get_be16(p + 14);
  h->opt = TcpOptions{};
  for (size_t i = kTcpHeaderBytes; i < hb;) {
    const uint8_t kind = p[i];
    if (kind == 0) break;  // end of options
    if (kind == 1) {
      ++i;
      continue;
    }
    if (i + 1 >= hb) return TcpError::kOption;
    const uint8_t n = p[i + 1];
    if (n < 2 || i + n > hb) return TcpError::kOption;
    const uint8_t* v = p + i + 2;
    switch (kind) {
      case 2:
        if (n != 4) return TcpError::kOption;
        h->opt.mss = get_be16(v);
        break;
      case 3:
        if (n != 3) return TcpError::kOption;
        h->opt.wscale = int8_t(v[0] > 14 ? 14 : v[0]);  // RFC 7323: at most 14
        break;
      case 4:
        if (n != 2) return TcpError::kOption;
        h->opt.sack_permitted = true;
        break;
      case 5:
        if ((n - 2) % 8 != 0 || n == 2 || n > 2 + 8 * 4) return TcpError::kOption;
        for (size_t b = 0; b < size_t(n - 2) / 8; ++b)
          h->opt.sack.emplace_back(get_be32(v + 8 * b), get_be32(v + 8 * b + 4));
        break;
      case 8:
        if (n != 10) return TcpError::kOption;
        h->opt.timestamps = true;
        h->opt.ts_val = get_be32(v);
        h->opt.ts_ecr = get_be32(v + 4);
        break;
      default:
        break;  // an option this stack does not use: skipped
    }
    i += n;
  }
  *payload_off = hb;
  return TcpError::kOk;
}

std::vector<uint8_t> build_frame(const eth::Header& eh, Ipv4Header ip, const TcpHeader& th,
                                 const uint8_t* payload, size_t len) {
  const size_t tcp_len = th.header_bytes() + len;
  ip.total_length = uint16_t(kIpv4HeaderBytes + tcp_len);
  std::vector<uint8_t> f = eth::build_frame(eh, nullptr, kIpv4HeaderBytes + tcp_len);
  encode_ipv4(ip, f.data() + eth::kHeaderBytes);
  encode_tcp(th, ip.src, ip.dst, payload, len, f.data() + eth::kHeaderBytes + kIpv4HeaderBytes);
  return f;
}

}  // namespace rnic::tcp
