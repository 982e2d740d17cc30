#include "models/rnic/ddp/ddp_rdmap.h"

#include <algorithm>

#include "models/common/bytes.h"

namespace rnic::rdmap {

bool is_tagged(Opcode op) { return op == Opcode::kWrite || op == Opcode::kReadResponse; }

uint32_t queue_of(Opcode op) {
  switch (op) {
    case Opcode::kReadRequest:
    case Opcode::kAtomicRequest:
      return kQnReadRequest;
    case Opcode::kAtomicResponse:
      return kQnAtomicResponse;
    case Opcode::kTerminate:
      return kQnTerminate;
    default:
      return kQnSend;
  }
}

const char* to_string(Opcode op) {
  switch (op) {
    case Opcode::kWrite:
      return "RDMA Write";
    case Opcode::kReadRequest:
      return "RDMA Read Request";
    case Opcode::kReadResponse:
      return "RDMA Read Response";
    case Opcode::kSend:
      return "Send";
    case Opcode::kSendInvalidate:
      return "Send with Invalidate";
    case Opcode::kSendSe:
      return "Send with Solicited Event";
    case Opcode::kSendSeInvalidate:
      return "Send with SE and Invalidate";
    case Opcode::kTerminate:
      return "Terminate";
    case Opcode::kImmediate:
      return "Immediate Data";
    case Opcode::kImmediateSe:
      return "Immediate Data with SE";
    case Opcode::kAtomicRequest:
      return "Atomic Request";
    case Opcode::kAtomicResponse:
      return "Atomic Response";
  }
  return "unknown";
}

void encode(const Segment& s, uint8_t* p) {
  p[0] = uint8_t((s.tagged ? kDdpTagged : 0) | (s.last ? kDdpLast : 0) |
                 (s.ddp_version & kDdpVersionMask));
  p[1] = uint8_t((s.rdmap_version & 3) << 6 | (s.opcode & 0x0F));
  if (s.tagged) {
    put_be32(p + 2, s.stag);
    put_be64(p + 6, s.to);
  } else {
    put_be32(p + 2, s.inv_stag);
    put_be32(p + 6, s.qn);
    put_be32(p + 10, s.msn);
    put_be32(p + 14, s.mo);
  }
}

bool decode(const uint8_t* p, size_t len, Segment* s) {
  if (len < 2) return false;
  s->tagged = p[0] & kDdpTagged;
  s->last = p[0] & kDdpLast;
  s->ddp_version = p[0] & kDdpVersionMask;
  s->rdmap_version = p[1] >> 6;
  s->opcode = p[1] & 0x0F;
  if (len < s->header_bytes()) return false;
  if (s->tagged) {
    s->stag = get_be32(p + 2);
    s->to = get_be64(p + 6);
    s->inv_stag = s->qn = s->msn = s->mo = 0;
  } else {
    s->inv_stag = get_be32(p + 2);
    s->qn = get_be32(p + 6);
    s->msn = get_be32(p + 10);
    s->mo = get_be32(p + 14);
    s->stag = 0;
    s->to = 0;
  }
  return true;
}

void encode(const ReadRequest& r, uint8_t* p) {
  put_be32(p, r.sink_stag);
  put_be64(p + 4, r.sink_to);
  put_be32(p + 12, r.size);
  put_be32(p + 16, r.src_stag);
  put_be64(p + 20, r.src_to);
}

bool decode(const uint8_t* p, size_t len, ReadRequest* r) {
  if (len < kReadRequestBytes) return false;
  r->sink_stag = get_be32(p);
  r->sink_to = get_be64(p + 4);
  r->size = get_be32(p + 12);
  r->src_stag = get_be32(p + 16);
  r->src_to = get_be64(p + 20);
  return true;
}

bool known_atomic(uint8_t op) {
  return op == uint8_t(AtomicOp::kFetchAdd) || op == uint8_t(AtomicOp::kSwap) ||
         op == uint8_t(AtomicOp::kCmpSwap);
}

uint64_t apply(const AtomicRequest& a, uint64_t orig) {
  switch (AtomicOp(a.op)) {
    case AtomicOp::kFetchAdd: {
      if (a.add_swap_mask == 0) return orig + a.add_swap;
      // Bit by bit: the carry out of a bit set in the mask is dropped (the mask marks the top
      // bit of each field).
      uint64_t r = 0;
      unsigned carry = 0;
      for (int b = 0; b < 64; ++b) {
        const uint64_t bit = 1ull << b;
        const unsigned sum = unsigned((orig >> b) & 1) + unsigned((a.add_swap >> b) & 1) + carry;
        if (sum & 1) r |= bit;
        carry = (sum >> 1) && !(a.add_swap_mask & bit) ? 1 : 0;
      }
      return r;
    }
    case AtomicOp::kSwap:
      return (orig & ~a.add_swap_mask) | (a.add_swap & a.add_swap_mask);
    case AtomicOp::kCmpSwap:
      if (((orig ^ a.compare) & a.compare_mask) != 0) return orig;
      return (orig & ~a.add_swap_mask) | (a.add_swap & a.add_swap_mask);
  }
  return orig;
}

void encode(const AtomicRequest& a, uint8_t* p) {
  put_be32(p, a.op & 0x0F);
  put_be32(p + 4, a.req_id);
  put_be32(p + 8, a.stag);
  put_be64(p + 12, a.to);
  put_be64(p + 20, a.add_swap);
  put_be64(p + 28, a.add_swap_mask);
  put_be64(p + 36, a.compare);
  put_be64(p + 44, a.compare_mask);
}

bool decode(const uint8_t* p, size_t len, AtomicRequest* a) {
  if (len < kAtomicRequestBytes) return false;
  a->op = uint8_t(get_be32(p) & 0x0F);  // the upper 28 bits are reserved
  a->req_id = get_be32(p + 4);
  a->stag = get_be32(p + 8);
  a->to = get_be64(p + 12);
  a->add_swap = get_be64(p + 20);
  a->add_swap_mask = get_be64(p + 28);
  a->compare = get_be64(p + 36);
  a->compare_mask = get_be64(p + 44);
  return true;
}

void encode(const AtomicResponse& a, uint8_t* p) {
  put_be32(p, a.req_id);
  put_be64(p + 4, a.value);
}

bool decode(const uint8_t* p, size_t len, AtomicResponse* a) {
  if (len < kAtomicResponseBytes) return false;
  a->req_id = get_be32(p);
  a->value = get_be64(p + 4);
  return true;
}

void encode(const Immediate& m, uint8_t* p) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(m.imm >> (8 * i));  // the host's (little-endian) order
  put_be32(p + 4, m.with_send ? 0x80000000u : m.len & 0x7FFFFFFFu);
}

bool decode(const uint8_t* p, size_t len, Immediate* m) {
  if (len < kImmediateBytes) return false;
  m->imm = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  const uint32_t w = get_be32(p + 4);
  m->with_send = w & 0x80000000u;
  m->len = w & 0x7FFFFFFFu;
  return true;
}

std::vector<uint8_t> encode(const Terminate& t) {
  std::vector<uint8_t> v(4, 0);
  v[0] = uint8_t(uint8_t(t.cause.layer) << 4 | (t.cause.etype & 0x0F));
  v[1] = t.cause.code;
  v[2] = uint8_t((t.m ? 0x80 : 0) | (t.d ? 0x40 : 0) | (t.r ? 0x20 : 0));
  if (t.d) {
    v.push_back(uint8_t(t.ddp_seg_len >> 8));
    v.push_back(uint8_t(t.ddp_seg_len));
    v.insert(v.end(), t.ddp_header.begin(), t.ddp_header.end());
  }
  if (t.r) v.insert(v.end(), t.rdmap_header.begin(), t.rdmap_header.end());
  return v;
}

std::vector<uint8_t> terminate_segment(const Terminate& t, uint32_t msn) {
  Segment h;
  h.tagged = false;
  h.opcode = uint8_t(Opcode::kTerminate);
  h.qn = kQnTerminate;
  h.msn = msn;
  const std::vector<uint8_t> body = encode(t);
  std::vector<uint8_t> v(kUntaggedBytes + body.size());
  encode(h, v.data());
  std::copy(body.begin(), body.end(), v.begin() + kUntaggedBytes);
  return v;
}

uint16_t terminated_length(const Segment& h, size_t seg_bytes) {
  size_t fixed = h.header_bytes();
  if (!h.tagged && h.opcode == uint8_t(Opcode::kReadRequest)) fixed += kReadRequestBytes;
  if (!h.tagged && h.opcode == uint8_t(Opcode::kAtomicRequest)) fixed += kAtomicRequestBytes;
  if (!h.tagged && h.opcode == uint8_t(Opcode::kAtomicResponse)) fixed += kAtomicResponseBytes;
  if (!h.tagged && h.opcode == uint8_t(Opcode::kTerminate)) fixed += 4;
  return seg_bytes > fixed ? uint16_t(std::min<size_t>(seg_bytes - fixed, 0xFFFF)) : 0;
}

bool decode(const uint8_t* p, size_t len, Terminate* t) {
  if (len < 4) return false;
  t->cause = {Layer(p[0] >> 4), uint8_t(p[0] & 0x0F), p[1]};
  t->m = p[2] & 0x80;
  t->d = p[2] & 0x40;
  t->r = p[2] & 0x20;
  size_t off = 4;
  t->ddp_header.clear();
  t->rdmap_header.clear();
  if (t->d) {
    if (len < off + 2 + 1) return false;
    t->ddp_seg_len = get_be16(p + off);
    off += 2;
    const size_t h = (p[off] & kDdpTagged) ? kTaggedBytes : kUntaggedBytes;
    if (len < off + h) return false;
    t->ddp_header.assign(p + off, p + off + h);
    off += h;
  }
  if (t->r) {
    if (len < off + kReadRequestBytes) return false;
    t->rdmap_header.assign(p + off, p + off + kReadRequestBytes);
  }
  return true;
}

bool check_header(const Segment& s, TermCause* why) {
  if (s.ddp_version != kDdpVersion) {
    *why = s.tagged ? TermCause{Layer::kDdp, 1, 0x04} : TermCause{Layer::kDdp, 2, 0x06};
    return false;
  }
  if (s.rdmap_version != kRdmapVersion) {
    *why = {Layer::kRdmap, 2, 0x05};
    return false;
  }
  const bool known = s.opcode <= uint8_t(Opcode::kAtomicResponse);  // RFC 5040's and 7306's
  if (!known || is_tagged(Opcode(s.opcode)) != s.tagged) {
    *why = {Layer::kRdmap, 2, 0x06};
    return false;
  }
  if (!s.tagged && s.qn != queue_of(Opcode(s.opcode))) {
    *why = {Layer::kDdp, 2, 0x01};
    return false;
  }
  return true;
}

}  // namespace rnic::rdmap
