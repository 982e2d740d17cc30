// libFuzzer target over the receive path *with its state*, outside SystemC, under ASan and
// UBSan: the input is a sequence of records, each a received frame or a host action, fed to the
// engines' plain classes one after another. The EFE receiver (EfeRx) takes DATA frames in SEQ
// order only (duplicates and gaps dropped, SY starting afresh), the sender (EfeTx, holding frames
// of its own) takes every frame's ACK field, NACKs and RNRs; a delivered segment goes through
// ddp_rx_parse and RxLogic (MSN and MO checks, receive WQEs, outbound Reads, IRD, Send with
// Invalidate, Terminates) and, when it places data, through xlat (SMT and PBLMT with page lists)
// into a guarded host memory. Properties: no byte outside a registered region the placement may
// write ever changes; a placement writes exactly the segment's payload; a failed QP places
// nothing more; the EFE's window stays consistent.
//
// Records: byte 0 the kind, then its bytes.
//   0 FRAME   u16 length, the frame (Ethernet header on)
//   1 RECV    u8 qp, u8 sge count, then per SGE u8 region, u16 offset, u16 length: post a WQE
//   2 READ    u8 qp, u8 region, u16 offset, u16 length: an outbound Read (its sink in the region)
//   3 IRDFREE u8 qp: the read-response engine answered the oldest inbound Read Request
//   4 INVAL   u8 region: invalidate that region's STag locally
//   5 SEND    u16 length: the EFE sender queues and sends a frame of that many bytes
//   6 POST    u8 qp, u8 opcode, u16 length: a send WQE (RDMA Write, Send or RDMA Read) on the SQ;
//             a received Terminate names one of them (SendQueueLogic), and an accepted Read
//             Request is answered segment by segment (ReadResponseLogic)
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "models/efe/efe_channel.h"
#include "models/efe/efe_header.h"
#include "models/eth/ethernet.h"
#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/rnic/read_response/read_response.h"
#include "models/rnic/rx/rx_logic.h"
#include "models/rnic/rx_parse/ddp_rx_parse.h"
#include "models/rnic/sq/send_queue.h"

using namespace rnic;

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

constexpr uint8_t kGuard = 0xA5;
constexpr size_t kMemBytes = 1 << 16;  // 64 KiB of host memory, 16 pages
constexpr uint32_t kQps = 4;
const MacAddr kPeer{2, 0, 0, 0, 0, 2};

// Registered regions: tagged offsets from 0x10000 each, their pages scattered (a page list in
// reverse order) over physical memory; what they allow.
struct Region {
  uint32_t index;
  uint8_t key;
  uint8_t access;
  uint64_t to;
  uint32_t pages;
  uint32_t first_page;  // physical page of the region's last tagged page (they go downwards)
};
const Region kRegions[] = {
    {1, 0x11, access::kRemoteWrite | access::kRemoteRead | access::kLocalWrite, 0x10000, 4, 1},
    {2, 0x22, access::kLocalWrite, 0x20000, 4, 6},
    {3, 0x33, access::kRemoteRead, 0x30000, 2, 11},
    {4, 0x44, access::kRemoteWrite, 0x40000, 1, 14},
};

// Where a placement may write: the pages of the regions that allow writing (computed once).
const std::vector<bool>& writable_map() {
  static const std::vector<bool> w = [] {
    std::vector<bool> v(kMemBytes, false);
    for (const Region& r : kRegions)
      if (r.access & (access::kRemoteWrite | access::kLocalWrite))
        for (uint32_t i = 0; i < r.pages; ++i)
          for (uint64_t b = 0; b < 4096; ++b)
            v[size_t((uint64_t(r.first_page + i) << 12) + b)] = true;
    return v;
  }();
  return w;
}

struct Harness {
  std::vector<uint8_t> mem = std::vector<uint8_t>(kMemBytes, kGuard);
  const std::vector<bool>& writable = writable_map();
  XlatBlock xl{16, 64};
  RxLogic rx{kQps};
  std::vector<QpCtx> ctx = std::vector<QpCtx>(kQps);
  std::vector<uint32_t> recv_index = std::vector<uint32_t>(kQps);
  std::vector<uint32_t> read_index = std::vector<uint32_t>(kQps);
  SendQueueLogic sq{kQps};
  ReadResponseLogic resp{kQps};
  std::vector<uint32_t> sq_index = std::vector<uint32_t>(kQps);
  efe::EfeRx efe_rx;
  efe::EfeTx efe_tx{efe::EfeChannelConfig{}};
  uint64_t now = 0;

  Harness() {
    uint32_t pbl = 0;
    for (const Region& r : kRegions) {
      std::vector<PblEntry> pages;
      for (uint32_t i = 0; i < r.pages; ++i) {
        const uint64_t pa = uint64_t(r.first_page + r.pages - 1 - i) << 12;
        pages.push_back({pa, 0});
      }
      require(xl.write_pbl(pbl, pages));
      SmtEntry e;
      e.state = SmtEntry::State::kValid;
      e.key = r.key;
      e.pd = 1;
      e.access = r.access;
      e.base_to = r.to;
      e.length = uint64_t(r.pages) << 12;
      e.pbl_first = pbl;
      e.pbl_count = r.pages;
      require(xl.write_smt(r.index, e));
      pbl += r.pages;
    }
    for (uint32_t q = 1; q < kQps; ++q) {
      ctx[q].valid = true;
      ctx[q].state = abi::kQpRts;
      ctx[q].pd = 1;
      ctx[q].peer_mac = kPeer;
      ctx[q].peer_qpn = q;
      ctx[q].ird = 2;
      ctx[q].ord = 2;
      ctx[q].access = access::kRemoteWrite | access::kRemoteRead;
    }
  }

  uint32_t stag(uint8_t region) const {
    const Region& r = kRegions[region % 4];
    return abi::make_stag(r.index, r.key);
  }

  // The placement's DMA writes: only where a region allows writing, exactly the payload.
  void place(const std::vector<XlatChunk>& chunks, const uint8_t* payload, uint32_t len) {
    uint64_t off = 0;
    for (const XlatChunk& c : chunks) {
      require(c.pa + c.len <= kMemBytes);
      for (uint32_t i = 0; i < c.len; ++i) {
        require(writable[size_t(c.pa + i)]);
        mem[size_t(c.pa + i)] = payload[off + i];
      }
      off += c.len;
    }
    require(off == len);
  }

  void fail(uint32_t q) {
    if (ctx[q].state == abi::kQpError) return;
    ctx[q].state = abi::kQpError;
    rx.flush(q);
    sq.flush(q);
    resp.clear(q);
    for (const Cqe& c : sq.complete(q)) require(c.status != abi::kCqeSuccess || c.qp_num == q);
  }

  // A Terminate from the peer: the WR it names completes with its status, the rest flush.
  void terminated(uint32_t q, const uint8_t* p, size_t n) {
    rdmap::Terminate t;
    if (rdmap::decode(p, n, &t) && t.cause.layer != rdmap::Layer::kLlp) {
      rdmap::ReadRequest rr;
      rdmap::Segment bad;
      const bool have_rr = t.r && rdmap::decode(t.rdmap_header.data(), t.rdmap_header.size(), &rr);
      const bool have_hdr = t.d && rdmap::decode(t.ddp_header.data(), t.ddp_header.size(), &bad);
      if (SqEntry* e =
              sq.named_by_terminate(q, have_rr ? &rr : nullptr, have_hdr ? &bad : nullptr)) {
        e->status = abi::kCqeRemAccessError;
        e->done = true;
      }
    }
    fail(q);
  }

  // A receive WQE's SGEs [mo, mo + len) through xlat (what translate_sge_list does).
  XlatStatus translate_sges(const Wqe& w, uint64_t mo, uint32_t len, std::vector<XlatChunk>* out) {
    uint64_t skip = mo;
    uint32_t left = len;
    for (uint32_t i = 0; i < w.num_sge && left; ++i) {
      const Sge& s = w.sge[i];
      if (skip >= s.length) {
        skip -= s.length;
        continue;
      }
      const uint32_t n = uint32_t(std::min<uint64_t>(s.length - skip, left));
      XlatRequest r;
      r.stag = s.lkey;
      r.to = s.addr + skip;
      r.len = n;
      r.access = access::kLocalWrite;
      r.pd = 1;
      const XlatResult x = xl.translate(r);
      if (x.status != XlatStatus::kOk) return x.status;
      out->insert(out->end(), x.chunks.begin(), x.chunks.end());
      left -= n;
      skip = 0;
    }
    return left ? XlatStatus::kBounds : XlatStatus::kOk;
  }

  void segment(uint32_t qpn, const uint8_t* ddp, size_t n) {
    const DdpRxParse parse(2, 16);
    const RxParseResult pr = parse.parse(ddp, n);
    const uint32_t q = qpn % kQps;
    const abi::QpState before = ctx[q].state;
    RxDecision d = rx.decide(qpn, qpn < kQps ? ctx[q] : QpCtx{}, kPeer, pr);
    using Kind = RxDecision::Kind;
    if (before == abi::kQpError) require(d.kind == Kind::kDrop || d.kind == Kind::kReset);
    const uint8_t* payload = ddp + pr.payload_off;
    switch (d.kind) {
      case Kind::kPlace: {
        require(qpn < kQps);
        if (d.target.len == 0) break;
        const XlatResult x = xl.translate(d.target);
        if (x.status != XlatStatus::kOk) {
          rx.xlat_failed(q, d, x.status);
          require(d.kind == Kind::kFail);
          fail(q);
          break;
        }
        place(x.chunks, payload, pr.payload_len);
        break;
      }
      case Kind::kSend: {
        require(qpn < kQps);
        std::vector<XlatChunk> chunks;
        const XlatStatus st =
            d.len ? translate_sges(d.wqe.wqe, d.mo, d.len, &chunks) : XlatStatus::kOk;
        if (st != XlatStatus::kOk) {
          rx.xlat_failed(q, d, st);
          fail(q);
          break;
        }
        if (d.len) place(chunks, payload, d.len);
        if (d.last && d.invalidate && !xl.invalidate(d.inv_stag, &d.target.pd)) {
          RxLogic::invalidate_failed(d);
          fail(q);
        }
        break;
      }
      case Kind::kReadRequest: {
        require(qpn < kQps && rx.ird_used(q) <= ctx[q].ird);
        const XlatResult x = xl.translate(d.target);
        if (x.status != XlatStatus::kOk) {
          rx.xlat_failed(q, d, x.status);
          fail(q);
          break;
        }
        // The read-response engine answers it in segments that add up to the request.
        require(!resp.full(q, ctx[q].ird + 1));
        resp.accept(q, d.rr, pr.h.msn);
        uint64_t sent = 0;
        while (resp.pending(q)) {
          const ReadResponseLogic::Segment seg = resp.next(q, 1400);
          sent += seg.len;
          if (seg.last) {
            require(sent == seg.rr.size);
            sent = 0;
            rx.ird_free(q);
          }
        }
        break;
      }
      case Kind::kAtomicRequest: {
        // RFC 7306: 8 aligned bytes, checked (not placed) here, within the IRD; the responder
        // answers it with one segment, which frees its slot.
        require(qpn < kQps && rx.ird_used(q) <= ctx[q].ird);
        require(d.target.check_only && d.target.len == 8 && d.target.to % 8 == 0);
        const XlatResult x = xl.translate(d.target);
        if (x.status != XlatStatus::kOk) {
          rx.xlat_failed(q, d, x.status);
          fail(q);
          break;
        }
        rx.ird_free(q);
        break;
      }
      case Kind::kImmediate:
        // Its 4 bytes go in a receive's completion (or wait for the next Send): nothing placed.
        require(qpn < kQps && pr.payload_len == rdmap::kImmediateBytes);
        break;
      case Kind::kFail:
        require(qpn < kQps);
        fail(q);
        break;
      case Kind::kTerminate:
        require(qpn < kQps);
        terminated(q, payload, pr.payload_len);
        break;
      case Kind::kDrop:
      case Kind::kReset:
        break;
    }
  }

  void frame(const uint8_t* f, size_t n) {
    eth::Header eh;
    if (!eth::parse_header(f, n, &eh)) return;
    efe::Header h;
    if (efe::decode(f + eth::kHeaderBytes, n - eth::kHeaderBytes, &h) != efe::ParseError::kOk)
      return;
    now += 1000;
    // The sender's side takes what the frame says of its own frames.
    const uint64_t before = efe_tx.buffered_bytes();
    switch (h.type) {
      case efe::Type::kNack:
        efe_tx.on_nack(h.ack, now);
        break;
      case efe::Type::kRnr:
        efe_tx.on_rnr(h.ack, now);
        break;
      default:
        efe_tx.on_ack(h.ack, now);
    }
    require(efe_tx.buffered_bytes() <= before);
    require(efe_tx.unacked() <= 64);
    efe_tx.on_timeout(now);
    while (efe_tx.next(now)) efe_tx.sent(now);
    if (h.type != efe::Type::kData) return;
    if (efe_rx.on_data(h.seq, h.sy) != efe::EfeRx::Verdict::kDeliver) return;
    segment(h.dst_qpn, f + eth::kHeaderBytes + efe::kHeaderBytes, h.length);
  }

  // Everything outside a writable region still holds its guard bytes (page by page: a page is
  // writable whole or not at all).
  void check_guards() const {
    static const std::vector<uint8_t> guard(4096, kGuard);
    for (size_t page = 0; page < kMemBytes / 4096; ++page)
      if (!writable[page * 4096])
        require(std::memcmp(mem.data() + page * 4096, guard.data(), 4096) == 0);
  }
};

uint16_t u16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness h;
  size_t at = 0;
  int records = 0;
  while (at < size && records++ < 64) {
    const uint8_t kind = data[at++] % 7;
    const size_t left = size - at;
    const uint8_t* p = data + at;
    if (kind == 0) {  // FRAME
      if (left < 2) break;
      const size_t n = std::min<size_t>(u16(p), left - 2);
      h.frame(p + 2, n);
      at += 2 + n;
    } else if (kind == 1) {  // RECV
      if (left < 2) break;
      const uint32_t q = p[0] % kQps;
      const uint32_t sges = std::min<uint32_t>(p[1] % 5, uint32_t(kMaxSge));
      if (left < 2 + 5 * size_t(sges)) break;
      Wqe w;
      w.num_sge = uint8_t(sges);
      w.wr_id = h.recv_index[q];
      for (uint32_t i = 0; i < sges; ++i) {
        const uint8_t* s = p + 2 + 5 * i;
        const Region& r = kRegions[s[0] % 4];
        w.sge[i] = {r.to + u16(s + 1) % 0x4000, uint32_t(u16(s + 3) % 0x2000), h.stag(s[0])};
      }
      h.rx.post(q, w, h.recv_index[q]++);
      at += 2 + 5 * size_t(sges);
    } else if (kind == 2) {  // READ
      if (left < 6) break;
      const uint32_t q = p[0] % kQps;
      ReadOut r;
      r.sq_index = h.read_index[q]++;
      r.sink_stag = h.stag(p[1]);
      r.sink_to = kRegions[p[1] % 4].to + u16(p + 2) % 0x4000;
      r.len = u16(p + 4);
      r.msn = r.sq_index + 1;
      if (h.rx.ord().size(q) < 4) h.rx.read_issued(q, r);
      at += 6;
    } else if (kind == 3) {  // IRDFREE
      if (left < 1) break;
      if (h.rx.ird_used(p[0] % kQps)) h.rx.ird_free(p[0] % kQps);
      at += 1;
    } else if (kind == 4) {  // INVAL
      if (left < 1) break;
      const uint32_t pd = 1;
      h.xl.invalidate(h.stag(p[0]), &pd);
      at += 1;
    } else if (kind == 6) {  // POST
      if (left < 4) break;
      const uint32_t q = p[0] % kQps;
      Wqe w;
      const uint8_t ops[] = {abi::kOpRdmaWrite, abi::kOpSend, abi::kOpRdmaRead,
                             abi::kOpSendWithInv};
      w.opcode = ops[p[1] % 4];
      w.flags = abi::kWqeSignaled;
      w.num_sge = 1;
      w.sge[0] = {kRegions[0].to, uint32_t(u16(p + 2) % 0x4000), h.stag(0)};
      w.remote_addr = 0x10000 + u16(p + 2);
      w.rkey = h.stag(p[1]);
      w.wr_id = h.sq_index[q];
      if (h.ctx[q].state != abi::kQpError && h.sq.depth(q) < 16) {
        h.sq.post(q, w, h.sq_index[q]++);
        if (SqEntry* e = h.sq.current(q)) {
          e->checked = true;
          if (w.opcode == abi::kOpRdmaRead) {
            h.sq.read_issued(q, {e->index, e->wqe.sge[0].lkey, e->wqe.sge[0].addr,
                                 uint32_t(e->wqe.total_length()), e->index + 1});
          } else {
            e->sent = e->done = true;
          }
          h.sq.advance(q);
        }
        for (const Cqe& c : h.sq.complete(q)) require(c.qp_num == q);
      }
      at += 4;
    } else {  // SEND
      if (left < 2) break;
      const size_t n = u16(p) % 2000;
      if (h.efe_tx.can_send(n)) h.efe_tx.send(std::vector<uint8_t>(n, 0x5A));
      at += 2;
    }
  }
  h.check_guards();
  return 0;
}
