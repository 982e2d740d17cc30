#include "models/rnic/rx/rx_logic.h"

#include "models/rnic/ddp/errors.h"

namespace rnic {

using rdmap::Layer;
using rdmap::Opcode;

RxDecision RxLogic::fail(uint32_t qpn, rdmap::TermCause why, abi::AsyncEvent ev, int recv_status) {
  RxDecision d;
  d.kind = RxDecision::Kind::kFail;
  d.why = why;
  d.event = ev;
  d.recv_status = recv_status;
  recv_.claim(qpn);
  if (recv_status >= 0 && !recv_.empty(qpn)) {
    d.has_wqe = true;
    d.wqe = recv_.take(qpn, &d.placed, false);
  }
  return d;
}

RxDecision RxLogic::decide(uint32_t qpn, const QpCtx& q, const MacAddr& src,
                           const RxParseResult& pr, const uint8_t* payload) {
  if (qpn >= ird_used_.size()) return decide_segment(qpn, q, src, pr, payload);
  RxUndo u;
  u.tagged_open = tagged_open_[qpn];
  u.off = recv_.placed(qpn);
  u.send_msn = recv_.send_msn(qpn);
  u.read_msn = recv_.read_msn(qpn);
  u.atomic_msn = recv_.atomic_msn(qpn);
  u.imm_held = imm_[qpn].held;
  u.imm = imm_[qpn].imm;
  const uint32_t ird = ird_used_[qpn];
  if (const ReadOut* r = ord_.oldest(qpn)) {
    u.had_read = true;
    u.oldest = *r;
  }
  RxDecision d = decide_segment(qpn, q, src, pr, payload);
  u.ird_taken = ird_used_[qpn] > ird;
  d.undo = u;
  return d;
}

void RxLogic::undo(uint32_t qpn, const RxDecision& d) {
  const RxUndo& u = d.undo;
  tagged_open_[qpn] = u.tagged_open;
  if (d.has_wqe) recv_.push_front(qpn, d.wqe);
  recv_.restore(qpn, u.off, u.send_msn, u.read_msn, u.atomic_msn);
  imm_[qpn] = {u.imm_held, u.imm};
  if (u.ird_taken && ird_used_[qpn] > 0) --ird_used_[qpn];
  if (u.had_read) ord_.restore_oldest(qpn, u.oldest, d.answered >= 0);
}

RxDecision RxLogic::decide_segment(uint32_t qpn, const QpCtx& q, const MacAddr& src,
                                   const RxParseResult& pr, const uint8_t* payload) {
  RxDecision d;
  if (pr.dropped) return d;
  const bool connected = qpn < ird_used_.size() && q.valid && q.state != abi::kQpReset &&
                         q.state != abi::kQpInit && q.peer_mac == src;
  if (!connected) {
    // No stream from src to this QPN (TCP would answer with a reset): say so, but never
    // answer a Terminate (a close or a reset crossing ours).
    if (!(pr.ok && Opcode(pr.h.opcode) == Opcode::kTerminate)) d.kind = RxDecision::Kind::kReset;
    return d;
  }
  if (!q.receives()) return d;  // in ERROR: its peer was told already
  if (!pr.ok) return fail(qpn, pr.why, abi::kEvQpFatal);
  const rdmap::Segment& h = pr.h;
  const uint32_t len = pr.payload_len;
  const Opcode op = Opcode(h.opcode);

  if (op == Opcode::kWrite || op == Opcode::kReadResponse) {
    const bool resp = op == Opcode::kReadResponse;
    // A tagged message cutting into another one of the QP: an unexpected opcode.
    if (tagged_open_[qpn] && tagged_open_[qpn] != h.opcode + 1)
      return fail(qpn, {Layer::kRdmap, 2, 0x06}, abi::kEvQpFatal);
    // A Read Response that is not the next one expected, case by case as siw: no Read
    // outstanding (DDP catastrophic), another sink STag (invalid STag), another offset or a
    // length the request does not have (base or bounds).
    switch (resp ? ord_.check(qpn, h.stag, h.to, len, h.last) : OrdTable::Fit::kOk) {
      case OrdTable::Fit::kOk:
        break;
      case OrdTable::Fit::kNoRead:
        return fail(qpn, {Layer::kDdp, 0, 0x00}, abi::kEvQpFatal);
      case OrdTable::Fit::kStag:
        return fail(qpn, {Layer::kDdp, 1, 0x00}, abi::kEvQpFatal);
      case OrdTable::Fit::kTo:
      case OrdTable::Fit::kLength:
        return fail(qpn, {Layer::kDdp, 1, 0x01}, abi::kEvQpFatal);
    }
    // The QP must grant remote writes as well as the MR (a zero-length Write touches nothing
    // and is not checked, as its STag is not).
    if (!resp && len > 0 && !(q.access & access::kRemoteWrite))
      return fail(qpn, term_for_tagged(XlatStatus::kAccess), abi::kEvQpAccessError);
    tagged_open_[qpn] = h.last ? 0 : uint8_t(h.opcode + 1);
    d.kind = RxDecision::Kind::kPlace;
    d.response = resp;
    d.target = {h.stag, h.to, len, resp ? access::kLocalWrite : access::kRemoteWrite, q.pd};
    if (resp) d.answered = ord_.take(qpn, len, h.last);
    return d;
  }

  if (op == Opcode::kReadRequest) {
    // A Read Request carries exactly its 28 bytes and is one segment (L set). Linux siw drops
    // the stream for any other (siw_proc_rreq: -EPROTO, no Terminate): a close (layer LLP).
    if (!pr.rr_ok || len != rdmap::kReadRequestBytes || !h.last)
      return fail(qpn, {Layer::kLlp, 0, 0x00}, abi::kEvQpFatal);
    if (h.msn != recv_.read_msn(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x03}, abi::kEvQpFatal);
    if (h.mo != 0) return fail(qpn, {Layer::kDdp, 2, 0x04}, abi::kEvQpFatal);
    if (ird_used_[qpn] >= q.ird) return fail(qpn, {Layer::kRdmap, 2, 0x07}, abi::kEvQpFatal);
    // The QP must grant remote reads as well as the MR.
    if (pr.rr.size > 0 && !(q.access & access::kRemoteRead))
      return fail(qpn, term_for_read_source(XlatStatus::kAccess), abi::kEvQpAccessError);
    recv_.read_accepted(qpn);
    ++ird_used_[qpn];
    d.kind = RxDecision::Kind::kReadRequest;
    d.rr = pr.rr;
    d.target = {pr.rr.src_stag, pr.rr.src_to, pr.rr.size, access::kRemoteRead, q.pd};
    d.target.check_only = true;
    return d;
  }

  if (op == Opcode::kAtomicRequest) {
    // RFC 7306: one segment of exactly its 52 bytes (anything else: the stream is dropped, as for
    // a malformed Read Request); queue 1's MSN, IRD and the QP's remote-atomic right as a Read's;
    // an operation the card does not know and a target not 8-byte aligned get a Remote
    // Operation Error (docs/errors.md).
    rdmap::AtomicRequest a;
    if (!payload || len != rdmap::kAtomicRequestBytes || !h.last ||
        !rdmap::decode(payload, len, &a))
      return fail(qpn, {Layer::kLlp, 0, 0x00}, abi::kEvQpFatal);
    if (h.msn != recv_.read_msn(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x03}, abi::kEvQpFatal);
    if (h.mo != 0) return fail(qpn, {Layer::kDdp, 2, 0x04}, abi::kEvQpFatal);
    if (ird_used_[qpn] >= q.ird) return fail(qpn, {Layer::kRdmap, 2, 0x07}, abi::kEvQpFatal);
    if (!rdmap::known_atomic(a.op)) return fail(qpn, {Layer::kRdmap, 2, 0x06}, abi::kEvQpReqError);
    if (!(q.access & access::kRemoteAtomic))
      return fail(qpn, term_for_read_source(XlatStatus::kAccess), abi::kEvQpAccessError);
    if (a.to % 8 != 0) return fail(qpn, {Layer::kRdmap, 2, 0xFF}, abi::kEvQpReqError);
    recv_.read_accepted(qpn);
    ++ird_used_[qpn];
    d.kind = RxDecision::Kind::kAtomicRequest;
    d.ar = a;
    d.target = {a.stag, a.to, 8, access::kRemoteAtomic, q.pd};
    d.target.check_only = true;
    return d;
  }

  if (op == Opcode::kAtomicResponse) {
    // One segment of its 12 bytes, queue 3's next MSN, answering the oldest outstanding
    // request, which must be an Atomic Request with its identifier.
    rdmap::AtomicResponse r;
    if (!payload || len != rdmap::kAtomicResponseBytes || !h.last ||
        !rdmap::decode(payload, len, &r))
      return fail(qpn, {Layer::kLlp, 0, 0x00}, abi::kEvQpFatal);
    if (h.msn != recv_.atomic_msn(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x03}, abi::kEvQpFatal);
    if (h.mo != 0) return fail(qpn, {Layer::kDdp, 2, 0x04}, abi::kEvQpFatal);
    const ReadOut* o = ord_.oldest(qpn);
    if (!o || !o->atomic || o->msn != r.req_id)
      return fail(qpn, {Layer::kRdmap, 2, 0x06}, abi::kEvQpFatal);
    recv_.atomic_answered(qpn);
    d.kind = RxDecision::Kind::kPlace;
    d.response = true;
    d.atomic = true;
    put_le64(d.value, r.value);
    d.target = {o->sink_stag, o->sink_to, 8, access::kLocalWrite, q.pd};
    d.answered = ord_.take(qpn, 8, true);
    return d;
  }

  if (op == Opcode::kTerminate) {
    d.kind = RxDecision::Kind::kTerminate;
    return d;
  }

  if (op == Opcode::kImmediate || op == Opcode::kImmediateSe) {
    // RFC 7306 Immediate Data: one segment of its 8 bytes on queue 0 with the queue's next MSN.
    // One for a Send with Immediate is held for that Send (which completes with it); any other
    // completes the next receive WQE (docs/decisions.md).
    rdmap::Immediate m;
    if (!payload || len != rdmap::kImmediateBytes || !h.last || !rdmap::decode(payload, len, &m))
      return fail(qpn, {Layer::kLlp, 0, 0x00}, abi::kEvQpFatal);
    recv_.claim(qpn);
    if (h.msn != recv_.send_msn(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x03}, abi::kEvQpFatal);
    if (h.mo != 0 || recv_.placed(qpn) != 0)
      return fail(qpn, {Layer::kDdp, 2, 0x04}, abi::kEvQpFatal);
    d.kind = RxDecision::Kind::kImmediate;
    d.imm = m.imm;
    if (m.with_send) {
      imm_[qpn] = {true, m.imm};
      recv_.skip_msn(qpn);
      return d;
    }
    if (recv_.empty(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x02}, abi::kEvQpFatal);
    d.with_imm = true;
    d.imm_len = m.len;
    d.solicited = op == Opcode::kImmediateSe;
    d.has_wqe = true;
    d.wqe = recv_.take(qpn, &d.placed, true);
    return d;
  }

  // Send, Send with Invalidate, Send with SE (and Invalidate)
  recv_.claim(qpn);
  if (h.msn != recv_.send_msn(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x03}, abi::kEvQpFatal);
  if (recv_.empty(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x02}, abi::kEvQpFatal);
  if (h.mo != recv_.placed(qpn)) return fail(qpn, {Layer::kDdp, 2, 0x04}, abi::kEvQpFatal);
  if (uint64_t(h.mo) + len > recv_.front(qpn).wqe.total_length())
    return fail(qpn, {Layer::kDdp, 2, 0x05}, kNoAsyncEvent, abi::kCqeLocLenError);
  d.kind = RxDecision::Kind::kSend;
  d.target.pd = q.pd;
  d.mo = h.mo;
  d.len = len;
  d.last = h.last;
  d.invalidate = op == Opcode::kSendInvalidate || op == Opcode::kSendSeInvalidate;
  d.solicited = op == Opcode::kSendSe || op == Opcode::kSendSeInvalidate;
  d.inv_stag = h.inv_stag;
  d.wqe = recv_.front(qpn);
  recv_.place(qpn, len);
  if (h.last) {
    d.has_wqe = true;
    recv_.take(qpn, &d.placed, true);
    if (imm_[qpn].held) {  // a Send with Immediate
      d.with_imm = true;
      d.imm = imm_[qpn].imm;
      imm_[qpn] = {};
    }
  }
  return d;
}

void RxLogic::xlat_failed(uint32_t qpn, RxDecision& d, XlatStatus st) {
  switch (d.kind) {
    case RxDecision::Kind::kPlace:
      d.why = term_for_tagged(st);
      d.event = d.response ? abi::kEvQpFatal : abi::kEvQpAccessError;
      break;
    case RxDecision::Kind::kReadRequest:
    case RxDecision::Kind::kAtomicRequest:
      d.why = term_for_read_source(st);
      d.event = abi::kEvQpAccessError;
      break;
    case RxDecision::Kind::kSend:
      // The WQE the segment writes into completes with the error: taken already (the last
      // segment), or still at the head of the RQ.
      d.why = {Layer::kRdmap, 0, 0x00};
      d.event = abi::kEvQpFatal;
      d.recv_status = abi::kCqeLocProtError;
      if (!d.has_wqe && !recv_.empty(qpn) && recv_.front(qpn).index == d.wqe.index) {
        d.has_wqe = true;
        d.wqe = recv_.take(qpn, &d.placed, false);
      }
      break;
    default:
      return;
  }
  d.kind = RxDecision::Kind::kFail;
}

void RxLogic::invalidate_failed(RxDecision& d) {
  d.kind = RxDecision::Kind::kFail;
  d.why = {Layer::kRdmap, 2, 0x09};
  d.event = abi::kEvQpFatal;
  d.recv_status = abi::kCqeRemOpError;
}

std::vector<RecvLogic::Entry> RxLogic::flush(uint32_t qpn) {
  imm_[qpn] = {};
  ord_.clear(qpn);
  ird_used_[qpn] = 0;
  tagged_open_[qpn] = 0;
  return recv_.flush(qpn);
}

void RxLogic::reset(uint32_t qpn, uint32_t srq) {
  recv_.reset(qpn);
  recv_.bind(qpn, srq);
  imm_[qpn] = {};
  ord_.clear(qpn);
  ird_used_[qpn] = 0;
  tagged_open_[qpn] = 0;
}

}  // namespace rnic
