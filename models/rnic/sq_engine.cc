// RnicCore: the SQ engine (and the read-response engine, which shares its issue slots):
// arbitration among QPs with work, segmentation, gather of local SGEs by DMA, in-order
// emission to the EFE.
#include <cstring>

#include "models/common/log.h"
#include "models/rnic/rnic_core.h"

namespace rnic {

using rdmap::Opcode;

uint32_t RnicCore::max_payload(bool tagged) const {
  return uint32_t(mac_.mtu) - uint32_t(efe::kHeaderBytes) -
         uint32_t(tagged ? rdmap::kTaggedBytes : rdmap::kUntaggedBytes);
}

void RnicCore::activate(uint32_t qpn) {
  Qp& q = qps_[qpn];
  if (!q.in_active) {
    q.in_active = true;
    active_.push_back(qpn);
  }
  tx_kick();
}

void RnicCore::tx_kick() {
  if (tx_scheduled_ || active_.empty()) return;
  tx_scheduled_ = true;
  eq_.at(std::max(edge(0), tx_next_ps_), [this] {
    tx_scheduled_ = false;
    tx_step();
  });
}

void RnicCore::tx_step() {
  for (size_t tries = active_.size(); tries > 0 && !active_.empty(); --tries) {
    if (tx_buffered_ >= uint64_t(cfg_.tx_buffer_bytes)) return;  // tx_emit resumes
    const uint32_t qpn = active_.front();
    active_.pop_front();
    Qp& q = qps_[qpn];
    const bool issued = q.valid && q.state == abi::kQpRts && issue_one(qpn);
    const bool sq_ready = send_.ready(qpn, q.ord);
    const bool more = q.valid && q.state == abi::kQpRts && (sq_ready || responses_.pending(qpn));
    if (more)
      active_.push_back(qpn);
    else
      q.in_active = false;
    if (issued) {
      tx_next_ps_ = std::max(tx_next_ps_, now_ps()) + cycles_ps(uint64_t(cfg_.sched_cycles));
      tx_kick();
      return;
    }
  }
}

bool RnicCore::issue_one(uint32_t qpn) {
  Qp& q = qps_[qpn];
  q.turn_responses = !q.turn_responses;
  if (q.turn_responses) return issue_response(qpn, q) || issue_sq(qpn, q);
  return issue_sq(qpn, q) || issue_response(qpn, q);
}

RnicCore::TxSeg* RnicCore::new_seg(uint32_t qpn, const Qp& q) {
  auto s = std::make_unique<TxSeg>();
  s->qpn = qpn;
  s->dst = q.peer_mac;
  s->dst_qpn = q.peer_qpn;
  TxSeg* p = s.get();
  tx_q_.push_back(std::move(s));
  return p;
}

bool RnicCore::check_wqe(Qp& q, SqEntry& e) {
  const Wqe& w = e.wqe;
  uint8_t st = abi::kCqeSuccess;
  if (w.opcode != abi::kOpRdmaWrite && w.opcode != abi::kOpSend &&
      w.opcode != abi::kOpSendWithInv && w.opcode != abi::kOpRdmaRead)
    st = abi::kCqeLocQpOpError;
  else if (w.num_sge > kMaxSge)
    st = abi::kCqeLocQpOpError;
  else if (w.total_length() > (1ull << 31))
    st = abi::kCqeLocLenError;
  for (int i = 0; st == abi::kCqeSuccess && i < w.num_sge; ++i) {
    const Sge& g = w.sge[i];
    if (g.length == 0) continue;
    const uint8_t need = w.opcode == abi::kOpRdmaRead ? access::kLocalWrite : 0;
    const XlatResult r = xlat_.translate({g.lkey, g.addr, g.length, need, q.pd});
    if (r.status != XlatStatus::kOk) st = abi::kCqeLocProtError;
  }
  e.checked = true;
  if (st == abi::kCqeSuccess) return true;
  e.status = st;
  e.done = e.sent = true;
  ++local_errors_;
  return false;
}

bool RnicCore::issue_sq(uint32_t qpn, Qp& q) {
  SqEntry* current = send_.current(qpn);
  if (!current) return false;
  SqEntry& e = *current;
  const Wqe& w = e.wqe;
  const uint64_t issued = std::max(edge(0), tx_next_ps_);
  uint64_t start = issued;
  if (!e.checked) {
    // The SGE checks occupy the engine: smt_cycles per SGE before this WQE's first segment.
    const bool ok = check_wqe(q, e);
    start += cycles_ps(xlat_.timing().smt_cycles * uint64_t(std::max<int>(w.num_sge, 1)));
    tx_next_ps_ = start;
    if (!ok) {
      send_.advance(qpn);
      set_qp_state(qpn, abi::kQpError);  // flushes the rest; completes this one with its error
      return true;
    }
  }
  if (w.opcode == abi::kOpRdmaRead && send_.reads_out(qpn) >= q.ord) return false;
  const SqSegment g =
      next_sq_segment(w, send_.progress(qpn), max_payload(true), max_payload(false));
  const rdmap::Segment& h = g.h;
  if (g.read_request) {
    TxSeg* s = new_seg(qpn, q);
    s->ddp.resize(rdmap::kUntaggedBytes + rdmap::kReadRequestBytes);
    rdmap::encode(h, s->ddp.data());
    rdmap::encode(g.rr, s->ddp.data() + rdmap::kUntaggedBytes);
    s->ar = true;
    if (g.first) e.msn = h.msn;
    send_.read_issued(qpn, {e.index, g.rr.sink_stag, g.rr.sink_to, g.rr.size, h.msn});
    ++e.reads_left;
    mark(Probe::kSegIssue, qpn, issued);
    mark(Probe::kSegFetch, qpn, start);
    eq_.at(start + cycles_ps(kHeaderCycles), [this, s] {
      mark(Probe::kSegReady, s->qpn, now_ps());
      s->ready = true;
      tx_emit();
    });
    if (g.wqe_done) {
      e.sent = true;
      send_.advance(qpn);
    }
    return true;
  }
  const uint32_t len = g.len;
  const bool last = g.wqe_done;
  if (!h.tagged) e.msn = h.msn;
  TxSeg* s = new_seg(qpn, q);
  s->ddp.resize(h.header_bytes() + len);
  rdmap::encode(h, s->ddp.data());
  s->payload = len;
  s->ar = last;
  tx_buffered_ += len;
  if (last) {
    const uint32_t index = e.index;
    const eth::Mac peer = q.peer_mac;
    s->on_sent = [this, qpn, index, peer](uint32_t seq) {
      unacked_[peer].push_back({qpn, index, seq});
    };
  }
  std::vector<XlatChunk> chunks;
  uint64_t cycles = 0;
  mark(Probe::kSegIssue, qpn, issued);
  mark(Probe::kSegFetch, qpn, start);
  const XlatStatus st = translate_sges(w, g.off, len, 0, q.pd, &chunks, &cycles);
  if (st != XlatStatus::kOk)
    log::error("{}: QP {} WR {} no longer translates ({})", name(), qpn, w.wr_id, to_string(st));
  gather_chunks(s, std::move(chunks), start + cycles_ps(cycles));
  if (last) {
    e.sent = true;
    send_.advance(qpn);
  }
  return true;
}

bool RnicCore::issue_response(uint32_t qpn, Qp& q) {
  if (!responses_.pending(qpn)) return false;
  const ReadResponseLogic::Segment r = responses_.next(qpn, max_payload(true));
  const uint32_t len = r.len;
  const bool last = r.last;
  rdmap::Segment h;
  h.tagged = true;
  h.last = last;
  h.opcode = uint8_t(Opcode::kReadResponse);
  h.stag = r.rr.sink_stag;
  h.to = r.rr.sink_to + r.off;
  TxSeg* s = new_seg(qpn, q);
  s->ddp.resize(rdmap::kTaggedBytes + len);
  rdmap::encode(h, s->ddp.data());
  s->payload = len;
  s->ar = last;
  tx_buffered_ += len;
  const uint64_t start = std::max(edge(0), tx_next_ps_);
  mark(Probe::kSegIssue, qpn, start);
  mark(Probe::kSegFetch, qpn, start);
  std::vector<XlatChunk> chunks;
  uint64_t cycles = 0;
  if (len > 0) {
    const XlatResult x =
        xlat_.translate({r.rr.src_stag, r.rr.src_to + r.off, len, access::kRemoteRead, q.pd});
    if (x.status != XlatStatus::kOk)
      log::error("{}: QP {} read response source STag {:#x} no longer translates ({})", name(), qpn,
                 r.rr.src_stag, to_string(x.status));
    chunks = x.chunks;
    cycles = x.cycles;
  }
  gather_chunks(s, std::move(chunks), start + cycles_ps(cycles));
  return true;
}

XlatStatus RnicCore::translate_sges(const Wqe& w, uint64_t off, uint32_t len, uint8_t access,
                                    uint32_t pd, std::vector<XlatChunk>* chunks,
                                    uint64_t* cycles) const {
  uint64_t pos = 0;
  for (int i = 0; i < w.num_sge && len > 0; ++i) {
    const Sge& g = w.sge[i];
    const uint64_t end = pos + g.length;
    if (off < end && off + len > pos) {
      const uint64_t a = std::max(off, pos), b = std::min<uint64_t>(off + len, end);
      const XlatResult x =
          xlat_.translate({g.lkey, g.addr + (a - pos), uint32_t(b - a), access, pd});
      if (x.status != XlatStatus::kOk) return x.status;
      chunks->insert(chunks->end(), x.chunks.begin(), x.chunks.end());
      *cycles += x.cycles;
    }
    pos = end;
  }
  return XlatStatus::kOk;
}

void RnicCore::gather_chunks(TxSeg* s, std::vector<XlatChunk> chunks, uint64_t start_ps) {
  const size_t hdr = s->ddp.size() - s->payload;
  if (chunks.empty()) {
    eq_.at(start_ps + cycles_ps(kHeaderCycles), [this, s] {
      mark(Probe::kSegReady, s->qpn, now_ps());
      s->ready = true;
      tx_emit();
    });
    return;
  }
  s->reads_left = uint32_t(chunks.size());
  eq_.at(start_ps, [this, s, hdr, chunks = std::move(chunks)] {
    mark(Probe::kSegDma, s->qpn, now_ps());
    size_t at = hdr;
    for (const XlatChunk& c : chunks) {
      dmac_.read(c.pa, c.len, [this, s, at](DmacStatus st, std::vector<uint8_t>&& d) {
        if (st != DmacStatus::kOk)
          log::error("{}: gather DMA read failed ({})", name(), to_string(st));
        else
          std::memcpy(s->ddp.data() + at, d.data(), d.size());
        if (--s->reads_left == 0) {
          mark(Probe::kSegData, s->qpn, now_ps());
          eq_.at(edge(kHeaderCycles), [this, s] {
            mark(Probe::kSegReady, s->qpn, now_ps());
            s->ready = true;
            tx_emit();
          });
        }
      });
      at += c.len;
    }
  });
}

void RnicCore::tx_emit() {
  bool freed = false;
  while (!tx_q_.empty()) {
    TxSeg& s = *tx_q_.front();
    if (!s.ready) break;
    const Qp& q = qps_[s.qpn];
    if (!s.terminate && (!q.valid || q.state != abi::kQpRts)) {
      tx_buffered_ -= s.payload;
      tx_q_.pop_front();
      freed = true;
      continue;
    }
    if (!efe_.can_send()) break;
    mark(Probe::kSegSent, s.qpn, now_ps());
    const uint32_t seq = efe_.send(s.dst, s.dst_qpn, std::move(s.ddp), s.ar);
    ++tx_segments_;
    tx_payload_bytes_ += s.payload;
    tx_buffered_ -= s.payload;
    auto done = std::move(s.on_sent);
    tx_q_.pop_front();
    freed = true;
    if (done) done(seq);
  }
  if (freed) tx_kick();
}

void RnicCore::queue_terminate(uint32_t qpn, const rdmap::TermCause& why, const rdmap::Segment& bad,
                               const uint8_t* bad_ddp, size_t bad_len,
                               std::function<void()> after) {
  Qp& q = qps_[qpn];
  rdmap::Terminate t;
  t.cause = why;
  t.m = true;
  t.d = true;
  t.ddp_seg_len = uint16_t(bad_len);
  const size_t hb = std::min(bad.header_bytes(), bad_len);
  t.ddp_header.assign(bad_ddp, bad_ddp + hb);
  if (!bad.tagged && bad.opcode == uint8_t(Opcode::kReadRequest) &&
      bad_len >= rdmap::kUntaggedBytes + rdmap::kReadRequestBytes) {
    t.r = true;
    t.rdmap_header.assign(bad_ddp + rdmap::kUntaggedBytes,
                          bad_ddp + rdmap::kUntaggedBytes + rdmap::kReadRequestBytes);
  }
  rdmap::Segment h;
  h.tagged = false;
  h.opcode = uint8_t(Opcode::kTerminate);
  h.qn = rdmap::kQnTerminate;
  h.msn = q.term_msn++;
  const std::vector<uint8_t> body = rdmap::encode(t);
  auto s = std::make_unique<TxSeg>();
  s->qpn = qpn;
  s->dst = q.peer_mac;
  s->dst_qpn = q.peer_qpn;
  s->ddp.resize(rdmap::kUntaggedBytes + body.size());
  rdmap::encode(h, s->ddp.data());
  std::memcpy(s->ddp.data() + rdmap::kUntaggedBytes, body.data(), body.size());
  s->ar = true;
  s->terminate = true;
  TxSeg* p = s.get();
  tx_q_.push_front(std::move(s));
  ++tx_terminates_;
  eq_.at(edge(kHeaderCycles), [this, p, after = std::move(after)]() mutable {
    p->ready = true;
    p->on_sent = [after = std::move(after)](uint32_t) { after(); };
    tx_emit();
  });
}

}  // namespace rnic
