// libFuzzer target over the receive path's parse and validate functions, outside SystemC,
// under ASan and UBSan: any byte string as a received Ethernet frame. Besides memory errors it
// checks that whatever decodes re-encodes to the same bytes (reserved bits aside), and drives
// the RX engine's decision logic (ddp_rx_parse, then RxLogic) with the segment against a QP
// that has receive WQEs and an outstanding Read: every decision stays inside what the QP's
// state allows.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "models/efe/efe_header.h"
#include "models/eth/ethernet.h"
#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/rnic/rx/rx_logic.h"
#include "models/rnic/rx_parse/ddp_rx_parse.h"

using namespace rnic;

static void require(bool ok) {
  if (!ok) std::abort();
}

static MacAddr src_of(const eth::Header& h) { return h.src; }

// The RX engine's decisions for the segment: a QP (number 1) in RTS with the frame's sender as
// peer, IRD 2, two receive WQEs of 100 and 4000 bytes, one outbound Read of 3000 bytes.
static void rx_decide(const MacAddr& src, const uint8_t* ddp, size_t n) {
  const DdpRxParse parse(2, 16);
  const RxParseResult pr = parse.parse(ddp, n);
  require(pr.dropped || pr.payload_off + size_t(pr.payload_len) <= n);
  RxLogic x(2);
  QpCtx q;
  q.valid = true;
  q.state = abi::kQpRts;
  q.peer_mac = src;
  q.ird = 2;
  Wqe w;
  w.num_sge = 1;
  w.sge[0] = {0x1000, 100, 1};
  x.post(1, w, 0);
  w.sge[0].length = 4000;
  x.post(1, w, 1);
  x.read_issued(1, {0, 0x77, 0x5000, 3000, 1});
  for (int round = 0; round < 2; ++round) {  // the same segment twice: the state moved on
    RxDecision d = x.decide(1, q, src, pr, pr.dropped ? nullptr : ddp + pr.payload_off);
    switch (d.kind) {
      case RxDecision::Kind::kDrop:
        require(pr.dropped);
        break;
      case RxDecision::Kind::kReset:  // the QP is connected to src
        require(false);
        break;
      case RxDecision::Kind::kFail:
        require(d.why.layer != rdmap::Layer::kLlp ||
                rdmap::Opcode(pr.h.opcode) == rdmap::Opcode::kReadRequest ||
                rdmap::Opcode(pr.h.opcode) == rdmap::Opcode::kAtomicRequest ||
                rdmap::Opcode(pr.h.opcode) == rdmap::Opcode::kAtomicResponse ||
                rdmap::Opcode(pr.h.opcode) == rdmap::Opcode::kImmediate ||
                rdmap::Opcode(pr.h.opcode) == rdmap::Opcode::kImmediateSe);
        require(!d.has_wqe || d.recv_status >= 0);
        break;
      case RxDecision::Kind::kPlace:
        require((d.atomic ? 8u : pr.payload_len) == d.target.len && !d.target.check_only);
        require(!d.response || d.target.access == access::kLocalWrite);
        break;
      case RxDecision::Kind::kReadRequest:
        require(d.target.check_only && x.ird_used(1) <= q.ird);
        break;
      case RxDecision::Kind::kAtomicRequest:
        require(d.target.check_only && d.target.len == 8 && d.target.to % 8 == 0 &&
                x.ird_used(1) <= q.ird);
        break;
      case RxDecision::Kind::kSend:
        require(d.mo + d.len <= d.wqe.wqe.total_length());
        require(!d.has_wqe || d.placed <= d.wqe.wqe.total_length());
        break;
      case RxDecision::Kind::kTerminate:
        break;
      case RxDecision::Kind::kImmediate:  // takes a receive, or is held for the next Send
        require(d.has_wqe == d.with_imm && pr.payload_len == rdmap::kImmediateBytes);
        break;
    }
    x.xlat_failed(1, d, XlatStatus::kBounds);  // (nothing to translate: no change)
    require(d.kind == RxDecision::Kind::kFail || d.kind == RxDecision::Kind::kDrop ||
            d.kind == RxDecision::Kind::kTerminate || d.kind == RxDecision::Kind::kImmediate);
  }
  // The same segment for QPs not connected to src (none, destroyed, INIT, another peer): a
  // reset, except for what is too short and for a Terminate; nothing else happens.
  const bool quiet =
      pr.dropped || (pr.ok && rdmap::Opcode(pr.h.opcode) == rdmap::Opcode::kTerminate);
  QpCtx init = q;
  init.state = abi::kQpInit;
  QpCtx other = q;
  other.peer_mac[5] ^= 1;
  for (const auto& [n, c] :
       {std::pair<uint32_t, QpCtx>{0, QpCtx{}}, {1, init}, {1, other}, {7, q}}) {
    RxDecision d = x.decide(n, c, src, pr);
    require(d.kind == (quiet ? RxDecision::Kind::kDrop : RxDecision::Kind::kReset));
  }
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
  rx_decide(src_of(eh), d, dn);
  return 0;
}
