// RnicCore: the RX engine: header checks, validation, placement of tagged data, RQ WQEs for
// untagged data, inbound Read Requests, Terminates; and the EFE's acknowledgements.
#include <cstring>

#include "models/common/log.h"
#include "models/rnic/errors.h"
#include "models/rnic/rnic_core.h"

namespace rnic {

using rdmap::Layer;
using rdmap::Opcode;
using rdmap::TermCause;

namespace {
bool seq_before(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }

// The requester's completion status for a Terminate's cause (WIRE.md's table; docs/errors.md).
uint8_t wc_status_for(const TermCause& c) {
  if (c.layer == Layer::kDdp && c.etype == 1 && c.code == 0x04)
    return abi::kCqeRemInvReqError;  // tagged segment with a bad DDP version
  if (c.etype == 1 && (c.layer == Layer::kDdp || c.layer == Layer::kRdmap))
    return abi::kCqeRemAccessError;
  if (c.layer == Layer::kDdp && c.etype == 2)
    return c.code == 0x02 ? abi::kCqeRemOpError : abi::kCqeRemInvReqError;
  if (c.layer == Layer::kRdmap && c.etype == 2)
    return c.code == 0x05 || c.code == 0x06 ? abi::kCqeRemInvReqError : abi::kCqeRemOpError;
  return abi::kCqeRemOpError;
}
}  // namespace

void RnicCore::rx_push(RxItem&& it) {
  rx_q_.push_back(std::move(it));
  if (rx_q_.size() > rx_fifo_max_.value) rx_fifo_max_.value = rx_q_.size();
  if (!rx_busy_ && !rx_stalled_) {
    rx_busy_ = true;
    eq_.at(edge(0), [this] { rx_step(); });
  }
}

void RnicCore::rx_step() {
  rx_busy_ = false;
  while (!rx_q_.empty() && !rx_stalled_) {
    RxItem it = std::move(rx_q_.front());
    rx_q_.pop_front();
    if (it.is_ack) {
      mark(Probe::kAck, 0, now_ps());
      rx_ack(it.peer, it.ack);
      continue;
    }
    mark(Probe::kRxStart, it.seg.dst_qpn, now_ps());
    // ddp_rx_parse through its channel: the segment's checks continue when its header result
    // arrives; the next segment starts when the block's input has taken this one.
    rx_busy_ = true;
    auto seg = std::make_shared<efe::EfePassThrough::RxSegment>(std::move(it.seg));
    // The channel shares the segment's bytes (no copy): an aliasing pointer into `seg`.
    RxParseChannel::Segment bytes(seg, &seg->ddp);
    rx_parse_->request(
        bytes, [this, seg](const RxParseResult& pr) { rx_segment(*seg, pr); },
        [this] { rx_step(); });
    return;
  }
}

void RnicCore::rx_ack(const eth::Mac& peer, uint32_t ack) {
  auto it = unacked_.find(peer);
  if (it == unacked_.end()) return;
  std::deque<Unacked>& d = it->second;
  while (!d.empty() && seq_before(d.front().seq, ack)) {
    const Unacked u = d.front();
    d.pop_front();
    SqEntry* e = send_.find(u.qpn, u.index);
    if (!e) continue;
    e->done = true;
    try_complete(u.qpn);
  }
}

void RnicCore::place(uint32_t qpn, const std::vector<XlatChunk>& chunks, const uint8_t* data,
                     uint64_t at_ps) {
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> writes;
  for (const XlatChunk& c : chunks) {
    writes.emplace_back(c.pa, std::vector<uint8_t>(data, data + c.len));
    data += c.len;
  }
  eq_.at(at_ps, [this, qpn, writes = std::move(writes)]() mutable {
    mark(Probe::kRxPlace, qpn, now_ps());
    for (auto& [pa, d] : writes) dmac_.write(pa, std::move(d));
  });
}

void RnicCore::fail_qp(uint32_t qpn, const TermCause& why, const rdmap::Segment& h,
                       const efe::EfePassThrough::RxSegment& s, abi::AsyncEvent ev,
                       int recv_status) {
  Qp& q = qps_[qpn];
  ++rx_errors_;
  log::info("{}: QP {} terminates: layer {} type {} code {:#04x}", name(), qpn, int(why.layer),
            why.etype, why.code);
  if (recv_status >= 0 && !recv_.empty(qpn)) {
    uint64_t placed = 0;
    const RecvLogic::Entry r = recv_.take(qpn, &placed, false);
    Cqe c;
    c.wr_id = r.wqe.wr_id;
    c.qp_num = qpn;
    c.wqe_index = r.index;
    c.status = uint8_t(recv_status);
    c.opcode = abi::kCqeRecv;
    c.byte_len = uint32_t(placed);
    post_cqe(q.rcq, c);
  }
  rx_stalled_ = true;
  const eth::Mac src = s.src;
  const uint32_t seq = s.seq;
  const bool ar = s.ar;
  queue_terminate(qpn, why, h, s.ddp.data(), s.ddp.size(), [this, src, seq, ar] {
    efe_.validated(src, seq, ar);
    rx_stalled_ = false;
    if (!rx_busy_ && !rx_q_.empty()) {
      rx_busy_ = true;
      eq_.at(edge(0), [this] { rx_step(); });
    }
  });
  set_qp_state(qpn, abi::kQpError);
  if (ev != kNoAsyncEvent) push_event(ev, qpn);
}

void RnicCore::rx_segment(efe::EfePassThrough::RxSegment& s, const RxParseResult& pr) {
  ++rx_segments_;
  const uint32_t qpn = s.dst_qpn;
  mark(Probe::kRxChecked, qpn, now_ps());
  const rdmap::Segment& h = pr.h;
  if (qpn >= qps_.size() || !qps_[qpn].valid ||
      (qps_[qpn].state != abi::kQpRtr && qps_[qpn].state != abi::kQpRts) ||
      qps_[qpn].peer_mac != s.src || pr.dropped) {
    ++rx_dropped_;
    log::debug("{}: segment for QP {} dropped", name(), qpn);
    efe_.validated(s.src, s.seq, s.ar);
    return;
  }
  Qp& q = qps_[qpn];
  if (!pr.ok) return fail_qp(qpn, pr.why, h, s, abi::kEvQpFatal, -1);
  const uint8_t* payload = s.ddp.data() + pr.payload_off;
  const uint32_t len = pr.payload_len;
  const uint64_t now = now_ps();
  const Opcode op = Opcode(h.opcode);

  if (op == Opcode::kWrite || op == Opcode::kReadResponse) {
    const bool resp = op == Opcode::kReadResponse;
    if (resp && !send_.response_fits(qpn, h.stag, h.to, len))
      return fail_qp(qpn, {Layer::kRdmap, 2, 0x06}, h, s, abi::kEvQpFatal, -1);
    uint64_t at = now;
    if (len > 0) {
      const XlatResult x = xlat_.translate(
          {h.stag, h.to, len, resp ? access::kLocalWrite : access::kRemoteWrite, q.pd});
      if (x.status != XlatStatus::kOk)
        return fail_qp(qpn, term_for_tagged(x.status), h, s,
                       resp ? abi::kEvQpFatal : abi::kEvQpAccessError, -1);
      at = now + cycles_ps(x.cycles);
      place(qpn, x.chunks, payload, at);
      rx_payload_bytes_ += len;
    }
    eq_.at(at, [this, src = s.src, seq = s.seq, ar = s.ar] { efe_.validated(src, seq, ar); });
    if (resp) {
      const int64_t answered = send_.response(qpn, len, h.last);
      if (answered >= 0) {  // every request of the Read is answered: done once placed
        const uint32_t index = uint32_t(answered);
        eq_.at(at, [this, qpn, index] {
          if (SqEntry* e = send_.find(qpn, index)) e->done = true;
          try_complete(qpn);
        });
      }
      if (h.last) activate(qpn);  // a slot of ORD freed
    }
    return;
  }

  if (op == Opcode::kReadRequest) {
    if (!pr.rr_ok) return fail_qp(qpn, {Layer::kRdmap, 2, 0xFF}, h, s, abi::kEvQpFatal, -1);
    const rdmap::ReadRequest& rr = pr.rr;
    if (h.msn != recv_.read_msn(qpn))
      return fail_qp(qpn, {Layer::kDdp, 2, 0x03}, h, s, abi::kEvQpFatal, -1);
    if (h.mo != 0) return fail_qp(qpn, {Layer::kDdp, 2, 0x04}, h, s, abi::kEvQpFatal, -1);
    if (responses_.full(qpn, q.ird))
      return fail_qp(qpn, {Layer::kRdmap, 2, 0x07}, h, s, abi::kEvQpFatal, -1);
    uint64_t at = now;
    if (rr.size > 0) {
      const XlatResult x =
          xlat_.translate({rr.src_stag, rr.src_to, rr.size, access::kRemoteRead, q.pd});
      if (x.status != XlatStatus::kOk)
        return fail_qp(qpn, term_for_read_source(x.status), h, s, abi::kEvQpAccessError, -1);
      at = now + cycles_ps(xlat_.timing().smt_cycles);
    }
    recv_.read_accepted(qpn);
    eq_.at(at, [this, qpn, rr, src = s.src, seq = s.seq, ar = s.ar] {
      efe_.validated(src, seq, ar);
      Qp& q = qps_[qpn];
      if (q.state != abi::kQpRts && q.state != abi::kQpRtr) return;
      responses_.accept(qpn, rr);
      activate(qpn);
    });
    return;
  }

  if (op == Opcode::kTerminate) {
    ++rx_terminates_;
    rx_terminate(qpn, q, payload, len);
    efe_.validated(s.src, s.seq, s.ar);
    return;
  }

  // Send, Send with Invalidate, Send with SE (and Invalidate)
  if (h.msn != recv_.send_msn(qpn))
    return fail_qp(qpn, {Layer::kDdp, 2, 0x03}, h, s, abi::kEvQpFatal, -1);
  if (recv_.empty(qpn)) return fail_qp(qpn, {Layer::kDdp, 2, 0x02}, h, s, abi::kEvQpFatal, -1);
  if (h.mo != recv_.placed(qpn))
    return fail_qp(qpn, {Layer::kDdp, 2, 0x04}, h, s, abi::kEvQpFatal, -1);
  const RecvLogic::Entry r = recv_.front(qpn);
  if (uint64_t(h.mo) + len > r.wqe.total_length())
    return fail_qp(qpn, {Layer::kDdp, 2, 0x05}, h, s, kNoAsyncEvent, abi::kCqeLocLenError);
  uint64_t cycles = 0;
  std::vector<XlatChunk> chunks;
  if (translate_sges(r.wqe, h.mo, len, access::kLocalWrite, q.pd, &chunks, &cycles) !=
      XlatStatus::kOk)
    return fail_qp(qpn, {Layer::kRdmap, 0, 0x00}, h, s, abi::kEvQpFatal, abi::kCqeLocProtError);
  const uint64_t at = now + cycles_ps(cycles);
  if (len > 0) {
    place(qpn, chunks, payload, at);
    rx_payload_bytes_ += len;
  }
  recv_.place(qpn, len);
  if (h.last) {
    const bool inv = op == Opcode::kSendInvalidate || op == Opcode::kSendSeInvalidate;
    if (inv) {
      if (!xlat_.invalidate(h.inv_stag, &q.pd))
        return fail_qp(qpn, {Layer::kRdmap, 2, 0x09}, h, s, abi::kEvQpFatal, abi::kCqeRemOpError);
    }
    Cqe c;
    c.wr_id = r.wqe.wr_id;
    c.qp_num = qpn;
    c.wqe_index = r.index;
    uint64_t placed = 0;
    recv_.take(qpn, &placed, true);
    c.byte_len = uint32_t(placed);
    c.opcode = abi::kCqeRecv;
    c.status = abi::kCqeSuccess;
    if (inv) {
      c.wc_flags = abi::kCqeWithInv;
      c.invalidated_rkey = h.inv_stag;
    }
    c.solicited = op == Opcode::kSendSe || op == Opcode::kSendSeInvalidate;
    const uint32_t cqn = q.rcq;
    eq_.at(at, [this, cqn, c] { post_cqe(cqn, c); });
  }
  eq_.at(at, [this, src = s.src, seq = s.seq, ar = s.ar] { efe_.validated(src, seq, ar); });
}

void RnicCore::rx_terminate(uint32_t qpn, Qp& q, const uint8_t* p, size_t n) {
  rdmap::Terminate t;
  if (!rdmap::decode(p, n, &t)) {
    log::warn("{}: QP {}: malformed Terminate", name(), qpn);
    set_qp_state(qpn, abi::kQpError);
    return;
  }
  log::info("{}: QP {} received Terminate: layer {} type {} code {:#04x}", name(), qpn,
            int(t.cause.layer), t.cause.etype, t.cause.code);
  // Which WR the Terminate names: a Read Request by its sink STag and TO, a Send by its MSN,
  // an RDMA Write by its STag and TO; otherwise the oldest WR not yet complete.
  rdmap::Segment bad;
  const bool have_hdr = t.d && rdmap::decode(t.ddp_header.data(), t.ddp_header.size(), &bad);
  rdmap::ReadRequest rr;
  const bool have_rr = t.r && rdmap::decode(t.rdmap_header.data(), t.rdmap_header.size(), &rr);
  SqEntry* hit = send_.named_by_terminate(qpn, have_rr ? &rr : nullptr, have_hdr ? &bad : nullptr);
  if (hit) {
    hit->status = wc_status_for(t.cause);
    hit->done = true;
  }
  set_qp_state(qpn, abi::kQpError);
}

}  // namespace rnic
