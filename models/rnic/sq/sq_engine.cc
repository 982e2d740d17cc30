#include "models/rnic/sq/sq_engine.h"

#include <algorithm>
#include <cstring>

#include "models/common/byte_pool.h"
#include "models/common/log.h"
#include "models/rnic/ddp/errors.h"
#include "models/rnic/latency_mutation.h"

namespace rnic {

using rdmap::Opcode;

namespace {
bool seq_before(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }

}  // namespace

SqEngine::SqEngine(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac,
                   XlatChannel& xlat, Transport& transport, CompletionEngine& completion,
                   const ProbeFn& probe, StatRegistry& stats, const std::string& g)
    : sc_core::sc_module(n),
      in{{std::string(name()) + ".wqe", size_t(cfg.qps) * size_t(cfg.max_qp_wr)},
         {std::string(name()) + ".update", 4 * size_t(cfg.qps)},
         {std::string(name()) + ".ack", 1024},
         {std::string(name()) + ".read_done", 2 * size_t(cfg.qps) * size_t(cfg.ord)},
         {std::string(name()) + ".peer_term", size_t(cfg.qps)},
         {std::string(name()) + ".term_req", size_t(cfg.qps)},
         {std::string(name()) + ".offer", size_t(cfg.qps)},
         {std::string(name()) + ".close", size_t(cfg.qps)},
         {std::string(name()) + ".reset", size_t(cfg.qps)}},
      cfg_(cfg),
      max_ddp_(transport.max_ddp_bytes()),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      dmac_(dmac),
      xlat_(xlat),
      transport_(transport),
      completion_(completion),
      mark_(probe),
      send_(size_t(cfg.qps)),
      ctx_(size_t(cfg.qps)),
      qs_(size_t(cfg.qps)),
      arbiter_(size_t(cfg.qps)),
      tx_segments_(stats.group(g).counter("tx_segments", "segments", "DDP segments sent")),
      tx_payload_bytes_(stats.group(g).counter("tx_payload_bytes", "B", "payload bytes sent")),
      tx_terminates_(stats.group(g).counter("tx_terminates", "frames", "Terminates sent")),
      local_errors_(
          stats.group(g).counter("local_errors", "WRs", "WRs completed with a local error")),
      fetch_errors_(stats.group(g).counter(
          "fetch_errors", "segments",
          "segments not sent: their payload's translation or DMA read failed")),
      responses_unsent_(stats.group(g).counter(
          "responses_unsent", "segments",
          "Read Response segments dropped unsent: their DMA read failed (read_dma_error silent)")) {
  transport_.on_space = [this] { tx_emit(); };
  in.wqe.bind(eq_, [this](WqeMsg&& m) {
    if (!ctx_[m.qpn].valid) return;
    send_.post(m.qpn, m.wqe, m.index);
    if (ctx_[m.qpn].state == abi::kQpError)
      flush(m.qpn);
    else
      activate(m.qpn);
  });
  in.update.bind(eq_, [this](QpUpdate&& u) { on_update(std::move(u)); });
  in.ack.bind(eq_, [this](AckMsg&& m) {
    auto it = unacked_.find(m.stream);
    if (m.failed) {
      // Its QPs error and flush (the RX engine tells each): none of their segments goes on
      // the stream that replaces it, which takes segments again from now.
      if (it != unacked_.end()) it->second.clear();
      std::vector<uint32_t> failed;
      for (uint32_t q = 0; q < ctx_.size(); ++q) {
        QpCtx& c = ctx_[q];
        if (!c.receives() || !m.stream.carries(c.peer_mac, c.peer_qpn)) continue;
        c.state = abi::kQpError;
        failed.push_back(q);
      }
      transport_.failure_taken(m.stream, failed);
      return;
    }
    if (it == unacked_.end()) return;
    std::deque<Unacked>& d = it->second;
    while (!d.empty() && seq_before(d.front().seq, m.ack)) {
      const Unacked u = d.front();
      d.pop_front();
      SqEntry* e = send_.find(u.qpn, u.index);
      if (!e) continue;
      e->done = true;
      try_complete(u.qpn);
    }
  });
  in.read_done.bind(eq_, [this](ReadDoneMsg&& m) {
    send_.read_slot_free(m.qpn);
    if (send_.read_placed(m.qpn, m.sq_index)) {
      send_.find(m.qpn, m.sq_index)->done = true;
      try_complete(m.qpn);
    }
    activate(m.qpn);  // a slot of ORD is free
  });
  in.peer_term.bind(eq_, [this](PeerTermMsg&& m) {
    if (m.closed) return flush(m.qpn);
    SqEntry* hit =
        send_.named_by_terminate(m.qpn, m.have_rr ? &m.rr : nullptr, m.have_hdr ? &m.bad : nullptr);
    if (hit) {
      hit->status = m.status;
      hit->done = true;
    }
  });
  in.term_req.bind(
      eq_, [this](TermReqMsg&& m) { send_terminate(m.qpn, m.why, &m.bad, m.bad_ddp, m.token); });
  in.close.bind(eq_, [this](CloseMsg&& m) {
    send_terminate(m.qpn, {rdmap::Layer::kLlp, 0, 0x00}, nullptr, {}, 0, &m);
  });
  in.reset.bind(eq_, [this](ResetMsg&& m) { send_reset(m); });
  in.offer.bind(eq_, [this](RespOfferMsg&& m) {
    const QpCtx& c = ctx_[m.qpn];
    if (m.epoch != c.epoch || !c.valid || c.state == abi::kQpError) return;
    QpSq& q = qs_[m.qpn];
    q.offered = true;
    q.offer = m.seg;
    q.more = m.more;
    activate(m.qpn);
  });
}

uint32_t SqEngine::max_payload(bool tagged) const {
  return max_ddp_ - uint32_t(tagged ? rdmap::kTaggedBytes : rdmap::kUntaggedBytes);
}

void SqEngine::on_update(QpUpdate&& u) {
  const uint32_t qpn = u.qpn;
  const abi::QpState old = ctx_[qpn].state;
  ctx_[qpn] = u.ctx;
  if (u.reset) {
    send_.reset(qpn);
    qs_[qpn] = QpSq{};
    arbiter_.reset(qpn);
  }
  if (u.flush) flush(qpn);
  if (u.ctx.sends() && old != abi::kQpRts) {
    transport_.open(transport_.stream(u.ctx.peer_mac, u.ctx.peer_qpn), qpn, u.ctx.role,
                    {u.ctx.local_port, u.ctx.remote_port});
    activate(qpn);
  }
}

void SqEngine::flush(uint32_t qpn) {
  send_.flush(qpn);
  qs_[qpn].offered = qs_[qpn].more = qs_[qpn].resp_open = false;
  try_complete(qpn);
}

void SqEngine::try_complete(uint32_t qpn) {
  for (const Cqe& c : send_.complete(qpn)) completion_.in.send({ctx_[qpn].scq, c});
}

void SqEngine::activate(uint32_t qpn) {
  arbiter_.activate(qpn);
  tx_kick();
}

void SqEngine::tx_kick() {
  if (tx_scheduled_ || checking_ || arbiter_.empty()) return;
  tx_scheduled_ = true;
  eq_.at(std::max(edge(0), tx_next_ps_), [this] {
    tx_scheduled_ = false;
    tx_step();
  });
}

void SqEngine::tx_step() {
  for (size_t tries = arbiter_.size(); tries > 0 && !arbiter_.empty() && !checking_; --tries) {
    if (tx_buffered_ >= uint64_t(cfg_.tx_buffer_bytes)) return;  // tx_emit resumes
    const uint32_t qpn = arbiter_.next();
    const Issue r = ctx_[qpn].receives() && !qs_[qpn].halted ? issue_one(qpn) : Issue::kNone;
    if (r == Issue::kChecking) return;  // checks_done goes on
    requeue(qpn);
    if (r == Issue::kIssued) return slot_used();
  }
}

// After a QP's turn: back into the round robin while it has work.
void SqEngine::requeue(uint32_t qpn) {
  arbiter_.requeue(
      qpn, ctx_[qpn].receives() && !qs_[qpn].halted &&
               ((ctx_[qpn].sends() && send_.ready(qpn, ctx_[qpn].ord) && !qs_[qpn].parked) ||
                responses_pending(qpn)));
}

void SqEngine::slot_used() {
  tx_next_ps_ = std::max(tx_next_ps_, now_ps()) +
                cycles_ps(uint64_t(cfg_.sched_cycles) + mutation::extra(mutation::kSq));
  tx_kick();
}

SqEngine::Issue SqEngine::issue_one(uint32_t qpn) {
  // Tagged messages of one QP do not interleave: a partly issued Write holds the responses
  // back, a partly issued Read Response the next Write.
  const SqEntry* cur = send_.current(qpn);
  const bool write_next =
      cur && (cur->wqe.opcode == abi::kOpRdmaWrite || cur->wqe.opcode == abi::kOpRdmaWriteWithImm);
  const bool write_open = write_next && send_.progress(qpn).off > 0;
  auto responses = [&] { return !write_open && issue_response(qpn); };
  // A responder in RTR answers Read Requests (as an InfiniBand responder does); its own WQEs
  // wait for RTS.
  auto sq = [&] {
    return !ctx_[qpn].sends() || (qs_[qpn].resp_open && write_next) ? Issue::kNone : issue_sq(qpn);
  };
  if (arbiter_.responses_first(qpn)) return responses() ? Issue::kIssued : sq();
  const Issue r = sq();
  if (r != Issue::kNone) return r;
  return responses() ? Issue::kIssued : Issue::kNone;
}

SqEngine::TxSeg* SqEngine::new_seg(uint32_t qpn) {
  auto s = std::make_unique<TxSeg>();
  s->number = ++segs_made_;
  s->qpn = qpn;
  s->dst = transport_.stream(ctx_[qpn].peer_mac, ctx_[qpn].peer_qpn);
  s->dst_qpn = ctx_[qpn].peer_qpn;
  TxSeg* p = s.get();
  count_peer(p->dst, 1);
  tx_q_.push_back(std::move(s));
  return p;
}

void SqEngine::count_peer(const TransportStream& m, int d) {
  for (auto& [mac, n] : tx_peers_)
    if (mac == m) {
      n = uint32_t(int64_t(n) + d);
      return;
    }
  tx_peers_.push_back({m, uint32_t(d)});
}

uint32_t SqEngine::queued_for(const TransportStream& m) const {
  for (const auto& [mac, n] : tx_peers_)
    if (mac == m) return n;
  return 0;
}

namespace {
constexpr uint8_t kParkStatus = 0xFF;  // the checks met an absent page: not a CQE status
}  // namespace

SqEngine::Issue SqEngine::issue_sq(uint32_t qpn) {
  SqEntry* e = send_.current(qpn);
  if (!e || qs_[qpn].parked) return Issue::kNone;
  const Wqe& w = e->wqe;
  const uint64_t issued = std::max(edge(0), tx_next_ps_);
  if (w.opcode == abi::kOpLocalInv || w.opcode == abi::kOpFastRegMr) {
    // A local operation: the firmware does it; the WQEs behind it wait for its status.
    if (e->local_pending) return Issue::kNone;
    e->local_pending = true;
    const uint32_t index = e->index;
    const uint64_t epoch = ctx_[qpn].epoch;
    auto done = [this, qpn, index, epoch](uint8_t st) { local_done(qpn, index, epoch, st); };
    if (!local_ops)
      eq_.at(now_ps(), [done] { done(abi::kCqeLocQpOpError); });
    else
      local_ops->local_op(qpn, ctx_[qpn].pd, w, eq_, done);
    return Issue::kIssued;
  }
  if (!e->checked) {
    // The SGE checks occupy the engine: smt_cycles per SGE before this WQE's first segment.
    uint8_t st = abi::kCqeSuccess;
    const bool atomic = abi::is_atomic(w.opcode);
    if (w.opcode != abi::kOpRdmaWrite && w.opcode != abi::kOpSend &&
        w.opcode != abi::kOpSendWithInv && w.opcode != abi::kOpRdmaRead && !atomic &&
        w.opcode != abi::kOpRdmaWriteWithImm && w.opcode != abi::kOpSendWithImm)
      st = abi::kCqeLocQpOpError;
    else if (w.num_sge > kMaxSge || (atomic && w.num_sge != 1))
      st = abi::kCqeLocQpOpError;
    else if (w.total_length() > (1ull << 31) || (atomic && w.total_length() != 8))
      st = abi::kCqeLocLenError;
    const uint64_t start =
        issued + cycles_ps(xlat_.timing().smt_cycles * uint64_t(std::max<int>(w.num_sge, 1)));
    checking_ = true;
    tx_next_ps_ = start;
    const uint32_t index = e->index;
    const uint64_t epoch = ctx_[qpn].epoch;
    auto finish = [this, qpn, index, epoch, issued, start](uint8_t status) {
      eq_.at(start, [=] { checks_done(qpn, index, epoch, issued, status); });
    };
    if (st != abi::kCqeSuccess) {
      finish(st);
      return Issue::kChecking;
    }
    // One check request per SGE with bytes, one after another; the first failure ends them.
    translate_sge_list(
        xlat_, eq_, w, 0, uint32_t(w.total_length()),
        w.opcode == abi::kOpRdmaRead || abi::is_atomic(w.opcode) ? access::kLocalWrite : 0,
        ctx_[qpn].pd,
        [this, qpn, finish](XlatStatus x, std::vector<XlatChunk>&&, const XlatFault& f) {
          QpSq& q = qs_[qpn];
          if (x == XlatStatus::kPageFault && faults && !q.fault_failed) {
            q.fault = f;
            return finish(kParkStatus);
          }
          q.fault_failed = false;
          finish(x == XlatStatus::kOk ? abi::kCqeSuccess : abi::kCqeLocProtError);
        },
        /*check_only=*/true);
    return Issue::kChecking;
  }
  if (ord_bound(w) && send_.reads_out(qpn) >= ctx_[qpn].ord) return Issue::kNone;
  issue_segment(qpn, *e, issued);
  return Issue::kIssued;
}

void SqEngine::local_done(uint32_t qpn, uint32_t index, uint64_t epoch, uint8_t status) {
  SqEntry* e = send_.current(qpn);
  if (ctx_[qpn].epoch != epoch || !ctx_[qpn].sends() || !e || e->index != index) return;
  e->local_pending = false;
  e->checked = true;
  e->status = status;
  e->done = e->sent = true;
  send_.advance(qpn);
  try_complete(qpn);
  if (status != abi::kCqeSuccess) {
    ++local_errors_;
    ctx_[qpn].state = abi::kQpError;
    out.error->send({qpn, kNoAsyncEvent, false});
    return;
  }
  activate(qpn);
}

void SqEngine::checks_done(uint32_t qpn, uint32_t index, uint64_t epoch, uint64_t issued,
                           uint8_t status) {
  checking_ = false;
  SqEntry* e = send_.current(qpn);
  if (ctx_[qpn].epoch != epoch || !ctx_[qpn].sends() || !e || e->index != index) {
    requeue(qpn);  // the QP changed meanwhile: its turn is over
    return slot_used();
  }
  if (status == kParkStatus) {
    // The SQ waits for the page; the engine goes on with the other QPs.
    QpSq& q = qs_[qpn];
    q.parked = true;
    faults->page_fault(qpn, q.fault, ord_bound(e->wqe), eq_, [this, qpn, epoch](bool ok) {
      if (ctx_[qpn].epoch != epoch) return;
      qs_[qpn].parked = false;
      qs_[qpn].fault_failed = !ok;
      activate(qpn);
    });
    requeue(qpn);
    return tx_step();
  }
  e->checked = true;
  if (status != abi::kCqeSuccess) {
    e->status = status;
    e->done = e->sent = true;
    ++local_errors_;
    send_.advance(qpn);
    // The QP goes to ERROR (the host interface flushes the rest; this one completes with its
    // error first). It issues nothing more meanwhile.
    ctx_[qpn].state = abi::kQpError;
    out.error->send({qpn, kNoAsyncEvent, false});
    requeue(qpn);
    return slot_used();
  }
  bool issued_one = true;
  if (ord_bound(e->wqe) && send_.reads_out(qpn) >= ctx_[qpn].ord)
    issued_one = !arbiter_.responses_turn(qpn) && issue_response(qpn);
  else
    issue_segment(qpn, *e, issued);
  requeue(qpn);
  if (issued_one) return slot_used();
  tx_step();
}

void SqEngine::issue_segment(uint32_t qpn, SqEntry& e, uint64_t issued) {
  const Wqe& w = e.wqe;
  // The QP's path MTU caps the payload below what the link allows.
  const uint32_t mtu = ctx_[qpn].mtu;
  const auto cap = [mtu](uint32_t link) { return mtu ? std::min(mtu, link) : link; };
  const SqSegment g =
      next_sq_segment(w, send_.progress(qpn), cap(max_payload(true)), cap(max_payload(false)));
  const rdmap::Segment& h = g.h;
  const uint64_t start = now_ps();
  if (g.atomic_request) {
    TxSeg* s = new_seg(qpn);
    s->ddp.resize(rdmap::kUntaggedBytes + rdmap::kAtomicRequestBytes);
    rdmap::encode(h, s->ddp.data());
    rdmap::encode(g.ar, s->ddp.data() + rdmap::kUntaggedBytes);
    s->ar = true;
    e.msn = h.msn;
    ReadOut r{e.index, w.sge[0].lkey, w.sge[0].addr, 8, h.msn};
    r.atomic = true;
    send_.read_issued(qpn, r);
    out.read_issued->send({qpn, r});
    header_only(s, e, issued, start, true);
    return;
  }
  if (g.read_request) {
    TxSeg* s = new_seg(qpn);
    s->ddp.resize(rdmap::kUntaggedBytes + rdmap::kReadRequestBytes);
    rdmap::encode(h, s->ddp.data());
    rdmap::encode(g.rr, s->ddp.data() + rdmap::kUntaggedBytes);
    s->ar = true;
    if (g.first) e.msn = h.msn;
    const ReadOut r{e.index, g.rr.sink_stag, g.rr.sink_to, g.rr.size, h.msn};
    send_.read_issued(qpn, r);
    out.read_issued->send({qpn, r});
    header_only(s, e, issued, start, g.wqe_done);
    return;
  }
  if (g.immediate) {
    // Its 8 bytes come with the WQE: nothing to fetch.
    TxSeg* s = new_seg(qpn);
    s->ddp.resize(rdmap::kUntaggedBytes + rdmap::kImmediateBytes);
    rdmap::encode(h, s->ddp.data());
    rdmap::encode(g.imm, s->ddp.data() + rdmap::kUntaggedBytes);
    s->ar = g.wqe_done;
    e.msn = h.msn;
    if (g.wqe_done) complete_on_ack(s, e);
    header_only(s, e, issued, start, g.wqe_done);
    return;
  }
  const uint32_t len = g.len;
  const bool last = g.wqe_done;
  if (!h.tagged) e.msn = h.msn;
  TxSeg* s = new_seg(qpn);
  s->ddp = take_bytes(h.header_bytes() + len);
  s->ddp.resize(h.header_bytes() + len);
  rdmap::encode(h, s->ddp.data());
  s->payload = len;
  s->ar = last;
  s->kind = TxSeg::Kind::kWrData;
  s->wr_index = e.index;
  s->first = g.off == 0;
  tx_buffered_ += len;
  if (last) complete_on_ack(s, e);
  mark_(CoreProbe::kSegIssue, qpn, issued, s->number, e.index);
  mark_(CoreProbe::kSegFetch, qpn, start, s->number);
  fetch_wr(s, w, g.off, len, ctx_[qpn].epoch);
  if (last) {
    e.sent = true;
    send_.advance(qpn);
  }
}

// A segment with nothing to fetch (a Read or Atomic Request, Immediate Data): ready
// kHeaderCycles after `start`; `done`: the WQE is fully issued with it.
void SqEngine::header_only(TxSeg* s, SqEntry& e, uint64_t issued, uint64_t start, bool done) {
  const uint32_t qpn = s->qpn;
  mark_(CoreProbe::kSegIssue, qpn, issued, s->number, e.index);
  mark_(CoreProbe::kSegFetch, qpn, start, s->number);
  eq_.at(start + cycles_ps(kHeaderCycles), [this, s] { seg_ready(s); });
  if (done) {
    e.sent = true;
    send_.advance(qpn);
  }
}

// The WR's last segment: once it has gone, the WR completes when the transport acknowledges it.
void SqEngine::complete_on_ack(TxSeg* s, const SqEntry& e) {
  const uint32_t qpn = s->qpn, index = e.index;
  const TransportStream stream = s->dst;
  s->on_sent = [this, qpn, index, stream](uint32_t seq) {
    unacked_[stream].push_back({qpn, index, seq});
  };
}

bool SqEngine::issue_response(uint32_t qpn) {
  QpSq& q = qs_[qpn];
  if (!q.offered) return false;
  q.offered = false;
  const ReadResponseLogic::Segment r = q.offer;
  q.resp_open = !r.last;
  out.taken->send({qpn});
  if (r.atomic) {
    // The Atomic Response: its 12 bytes are known once the atomic unit has done the operation.
    rdmap::Segment h;
    h.tagged = false;
    h.last = true;
    h.opcode = uint8_t(Opcode::kAtomicResponse);
    h.qn = rdmap::kQnAtomicResponse;
    h.msn = q.atomic_msn++;
    TxSeg* s = new_seg(qpn);
    s->ddp.assign(rdmap::kUntaggedBytes + rdmap::kAtomicResponseBytes, 0);
    rdmap::encode(h, s->ddp.data());
    s->ar = true;
    s->kind = TxSeg::Kind::kAtomic;
    s->resp = r;
    s->epoch = ctx_[qpn].epoch;
    const uint64_t start = now_ps();
    mark_(CoreProbe::kSegIssue, qpn, start, s->number, ProbeEvent::kResponse | r.msn);
    mark_(CoreProbe::kSegFetch, qpn, start, s->number);
    atomics_.push_back(s);
    atomic_next();
    return true;
  }
  const uint32_t len = r.len;
  rdmap::Segment h;
  h.tagged = true;
  h.last = r.last;
  h.opcode = uint8_t(Opcode::kReadResponse);
  h.stag = r.rr.sink_stag;
  h.to = r.rr.sink_to + r.off;
  TxSeg* s = new_seg(qpn);
  s->ddp = take_bytes(rdmap::kTaggedBytes + len);
  s->ddp.resize(rdmap::kTaggedBytes + len);
  rdmap::encode(h, s->ddp.data());
  s->payload = len;
  s->ar = r.last;
  s->kind = TxSeg::Kind::kResponse;
  s->resp = r;
  tx_buffered_ += len;
  const uint64_t start = now_ps();
  mark_(CoreProbe::kSegIssue, qpn, start, s->number, ProbeEvent::kResponse | r.msn);
  mark_(CoreProbe::kSegFetch, qpn, start, s->number);
  if (len == 0) {
    gather(s, {});
    return true;
  }
  fetch_response(s, ctx_[qpn].epoch);
  return true;
}

void SqEngine::fetch_wr(TxSeg* s, const Wqe& w, uint64_t off, uint32_t len, uint64_t epoch) {
  const uint32_t qpn = s->qpn;
  s->wr_id = w.wr_id;
  s->fetch_off = off;
  s->fetch_len = len;
  s->epoch = epoch;
  translate_sge_list(
      xlat_, eq_, w, off, len, 0, ctx_[qpn].pd,
      [this, s](XlatStatus st, std::vector<XlatChunk>&& chunks, const XlatFault& f) {
        const uint32_t qpn = s->qpn;
        const uint64_t wr_id = s->wr_id, off = s->fetch_off, epoch = s->epoch;
        const uint32_t len = s->fetch_len;
        if (st == XlatStatus::kOk) return gather(s, std::move(chunks));
        if (st == XlatStatus::kPageFault && faults && ctx_[qpn].epoch == epoch) {
          // Waits in the transmit buffer for the page, then translates again (its WQE is still
          // in the SQ: the WR is not complete before its segments are).
          return faults->page_fault(qpn, f, false, eq_, [this, s, off, len, epoch](bool ok) {
            const SqEntry* e = send_.find(s->qpn, s->wr_index);
            if (ok && e && ctx_[s->qpn].epoch == epoch) return fetch_wr(s, e->wqe, off, len, epoch);
            fail_seg(s, abi::kCqeLocProtError, {});
          });
        }
        if (!qs_[qpn].halted)
          log::warn("{}: QP {} WR {} no longer translates ({})", name(), qpn, wr_id, to_string(st));
        fail_seg(s, abi::kCqeLocProtError, {});
      });
}

void SqEngine::fetch_response(TxSeg* s, uint64_t epoch) {
  const uint32_t qpn = s->qpn;
  const ReadResponseLogic::Segment& r = s->resp;
  xlat_.request({r.rr.src_stag, r.rr.src_to + r.off, r.len, access::kRemoteRead, ctx_[qpn].pd}, eq_,
                [this, s, epoch](XlatResult&& x) {
                  const uint32_t qpn = s->qpn;
                  const ReadResponseLogic::Segment& r = s->resp;
                  if (x.status == XlatStatus::kOk) return gather(s, std::move(x.chunks));
                  if (x.status == XlatStatus::kPageFault && faults && ctx_[qpn].epoch == epoch) {
                    const XlatFault f{r.rr.src_stag, x.fault_to, r.rr.src_to + r.off + r.len};
                    return faults->page_fault(qpn, f, false, eq_, [this, s, epoch](bool ok) {
                      if (ok && ctx_[s->qpn].epoch == epoch) return fetch_response(s, epoch);
                      fail_seg(s, 0, term_for_read_source(XlatStatus::kBounds));
                    });
                  }
                  if (!qs_[qpn].halted)
                    log::warn("{}: QP {} read response source STag {:#x} no longer translates ({})",
                              name(), qpn, r.rr.src_stag, to_string(x.status));
                  fail_seg(s, 0, term_for_read_source(x.status));
                });
}

void SqEngine::atomic_next() {
  while (!atomic_busy_ && !atomics_.empty()) {
    TxSeg* s = atomics_.front();
    atomics_.pop_front();
    if (ctx_[s->qpn].epoch != s->epoch || !ctx_[s->qpn].receives()) {
      // Its QP failed or was reset meanwhile: the operation is not done (the segment is
      // dropped at its turn).
      eq_.at(now_ps(), [this, s] { seg_ready(s); });
      continue;
    }
    atomic_busy_ = true;
    atomic_translate(s);
  }
}

void SqEngine::atomic_translate(TxSeg* s) {
  const rdmap::AtomicRequest& a = s->resp.ar;
  xlat_.request({a.stag, a.to, 8, access::kRemoteAtomic, ctx_[s->qpn].pd}, eq_,
                [this, s](XlatResult&& x) {
                  const uint32_t qpn = s->qpn;
                  const rdmap::AtomicRequest& a = s->resp.ar;
                  if (x.status == XlatStatus::kOk) return atomic_read(s, std::move(x.chunks));
                  if (x.status == XlatStatus::kPageFault && faults && ctx_[qpn].epoch == s->epoch) {
                    // The unit waits for the page (the card's other atomics behind it).
                    const XlatFault f{a.stag, x.fault_to, a.to + 8};
                    return faults->page_fault(qpn, f, true, eq_, [this, s](bool ok) {
                      if (ok && ctx_[s->qpn].epoch == s->epoch) return atomic_translate(s);
                      atomic_fail(s, term_for_read_source(XlatStatus::kBounds));
                    });
                  }
                  log::warn("{}: QP {} atomic target STag {:#x} no longer translates ({})", name(),
                            qpn, a.stag, to_string(x.status));
                  atomic_fail(s, term_for_read_source(x.status));
                });
}

void SqEngine::atomic_read(TxSeg* s, std::vector<XlatChunk>&& chunks) {
  mark_(CoreProbe::kSegDma, s->qpn, now_ps(), s->number);
  s->target = std::move(chunks);
  s->reads_left = uint32_t(s->target.size());
  size_t at = 0;
  for (const XlatChunk& c : s->target) {
    dmac_.read(c.pa, c.len, [this, s, at](DmacStatus st, std::vector<uint8_t>&& d) {
      if (st != DmacStatus::kOk)
        s->read_failed = true;
      else
        std::memcpy(s->old + at, d.data(), std::min<size_t>(d.size(), 8 - at));
      if (--s->reads_left == 0) atomic_done(s);
    });
    at += c.len;
  }
}

// The target's bytes are in: the result is written (only if it differs), the response filled,
// and the unit takes the next operation.
void SqEngine::atomic_done(TxSeg* s) {
  mark_(CoreProbe::kSegData, s->qpn, now_ps(), s->number);
  if (s->read_failed) {
    log::warn("{}: QP {} atomic target DMA read failed", name(), s->qpn);
    s->dma_failed = true;
    return atomic_fail(s, {rdmap::Layer::kRdmap, 2, 0x07});
  }
  const uint64_t old = get_le64(s->old);
  const uint64_t now = rdmap::apply(s->resp.ar, old);
  if (now != old) {
    uint8_t b[8];
    put_le64(b, now);
    size_t at = 0;
    for (const XlatChunk& c : s->target) {
      dmac_.write(c.pa, std::vector<uint8_t>(b + at, b + at + c.len));
      at += c.len;
    }
  }
  rdmap::encode(rdmap::AtomicResponse{s->resp.ar.req_id, old},
                s->ddp.data() + rdmap::kUntaggedBytes);
  atomic_busy_ = false;
  eq_.at(edge(kHeaderCycles), [this, s] { seg_ready(s); });
  atomic_next();
}

void SqEngine::atomic_fail(TxSeg* s, const rdmap::TermCause& why) {
  atomic_busy_ = false;
  fail_seg(s, 0, why);
  atomic_next();
}

// Reads the segment's payload by DMA (its chunks, now); it is ready kHeaderCycles after the
// last byte arrives.
void SqEngine::gather(TxSeg* s, std::vector<XlatChunk> chunks) {
  if (chunks.empty()) {
    eq_.at(now_ps() + cycles_ps(kHeaderCycles), [this, s] { seg_ready(s); });
    return;
  }
  const size_t hdr = s->ddp.size() - s->payload;
  s->reads_left = uint32_t(chunks.size());
  mark_(CoreProbe::kSegDma, s->qpn, now_ps(), s->number);
  if (chunks.size() == 1) {  // (its bytes go in after the header: the callback holds no more)
    dmac_.read(chunks[0].pa, chunks[0].len, [this, s](DmacStatus st, std::vector<uint8_t>&& d) {
      gathered(s, s->ddp.size() - s->payload, st, d);
    });
    return;
  }
  size_t at = hdr;
  for (const XlatChunk& c : chunks) {
    dmac_.read(c.pa, c.len,
               [this, s, at](DmacStatus st, std::vector<uint8_t>&& d) { gathered(s, at, st, d); });
    at += c.len;
  }
}

void SqEngine::gathered(TxSeg* s, size_t at, DmacStatus st, const std::vector<uint8_t>& d) {
  if (st != DmacStatus::kOk) {
    if (!s->failed && !qs_[s->qpn].halted)
      log::warn("{}: QP {} gather DMA read failed ({})", name(), s->qpn, to_string(st));
    qs_[s->qpn].halted = true;
    s->failed = true;
    s->dma_failed = true;
    s->status = abi::kCqeLocQpOpError;
    s->why = {rdmap::Layer::kRdmap, 0, 0x00};  // local catastrophic
  } else {
    std::memcpy(s->ddp.data() + at, d.data(), d.size());
  }
  if (--s->reads_left == 0) {
    mark_(CoreProbe::kSegData, s->qpn, now_ps(), s->number);
    eq_.at(edge(kHeaderCycles), [this, s] { seg_ready(s); });
  }
}

// The segment's payload cannot be fetched: it is ready to be dropped at its turn (seg_failed).
void SqEngine::fail_seg(TxSeg* s, uint8_t status, const rdmap::TermCause& why) {
  qs_[s->qpn].halted = true;  // nothing more of the QP is issued
  s->failed = true;
  s->status = status;
  s->why = why;
  eq_.at(now_ps() + cycles_ps(kHeaderCycles), [this, s] { seg_ready(s); });
}

// A failed segment at its turn to leave: it is not sent; its WR completes with its status (or
// its Read Request is answered with a Terminate), the QP goes to ERROR (nothing of it queued
// behind leaves), and a message already partly sent is ended with a Terminate.
void SqEngine::seg_failed(const TxSeg& s) {
  const uint32_t qpn = s.qpn;
  ++fetch_errors_;
  abi::AsyncEvent ev = abi::kEvQpReqError;
  bool told = true;
  if (s.kind == TxSeg::Kind::kWrData) {
    ++local_errors_;
    if (SqEntry* e = send_.find(qpn, s.wr_index)) {
      e->status = s.status;
      e->done = e->sent = true;
    }
    if (!s.first) send_terminate(qpn, {rdmap::Layer::kRdmap, 0, 0x00}, nullptr, {}, 0);
    told = !s.first;
    ev = s.status == abi::kCqeLocQpOpError ? abi::kEvQpFatal : kNoAsyncEvent;
  } else if (s.kind == TxSeg::Kind::kResponse && s.dma_failed && cfg_.read_dma_error == "silent") {
    // Nothing goes out for it, and the QP (halted) issues nothing more: its later responses
    // wait behind this one until the requester's Read Response timer gives up on the Read.
    ++responses_unsent_;
    qs_[qpn].stuck = true;  // segments of the QP issued before the failure do not leave either
    log::warn("{}: QP {} Read Response not sent: its DMA read failed", name(), qpn);
    return;
  } else if (s.kind == TxSeg::Kind::kResponse || s.kind == TxSeg::Kind::kAtomic) {
    const rdmap::TermCause why =
        s.dma_failed ? rdmap::TermCause{rdmap::Layer::kRdmap, 2, 0x07} : s.why;
    // The Terminate quotes the Read or Atomic Request it cannot answer (its DDP and RDMAP
    // headers).
    const bool atomic = s.kind == TxSeg::Kind::kAtomic;
    rdmap::Segment rq;
    rq.tagged = false;
    rq.last = true;
    rq.opcode = uint8_t(atomic ? Opcode::kAtomicRequest : Opcode::kReadRequest);
    rq.qn = rdmap::kQnReadRequest;
    rq.msn = s.resp.msn;
    std::vector<uint8_t> bytes(rdmap::kUntaggedBytes +
                               (atomic ? rdmap::kAtomicRequestBytes : rdmap::kReadRequestBytes));
    rdmap::encode(rq, bytes.data());
    if (atomic)
      rdmap::encode(s.resp.ar, bytes.data() + rdmap::kUntaggedBytes);
    else
      rdmap::encode(s.resp.rr, bytes.data() + rdmap::kUntaggedBytes);
    send_terminate(qpn, why, &rq, bytes, 0);
  }
  ctx_[qpn].state = abi::kQpError;
  out.error->send({qpn, ev, told});
}

void SqEngine::seg_ready(TxSeg* s) {
  mark_(CoreProbe::kSegReady, s->qpn, now_ps(), s->number);
  s->ready = true;
  tx_emit();
}

bool SqEngine::held_as_before() const {
  // (Where the held streams' first segments are all there is before the stop, a walk from the
  // start costs what this look does.)
  if (!walked_ok_ || walked_stop_ <= held_.size()) return false;
  for (const auto& h : held_) {
    const TxSeg& s = *h.second;
    if (dropped(s) || transport_.can_send(s.dst, s.ddp.size())) return false;
  }
  return true;
}

void SqEngine::tx_emit() {
  bool freed = false;
  // Segments leave in issue order per transport stream (the EFE: per peer card); a stream with
  // no room holds back its own segments only.
  size_t i = 0;
  size_t blocked = 0;  // segments at i or after whose peer is held
  if (held_as_before()) {
    // (Every segment before the last stop is a held stream's; those after it are the rest.)
    i = walked_stop_;
    for (const auto& h : held_) blocked += queued_for(h.first);
    blocked -= i;
  } else {
    held_.clear();
  }
  walked_ok_ = false;  // (until this walk is done)
  while (i < tx_q_.size() && blocked < tx_q_.size() - i) {
    TxSeg& s = *tx_q_[i];
    if (!s.ready) break;
    const bool held = !held_.empty() &&
                      std::find_if(held_.begin(), held_.end(),
                                   [&s](const auto& h) { return h.first == s.dst; }) != held_.end();
    if (!held && dropped(s)) {
      std::unique_ptr<TxSeg> gone = std::move(tx_q_[i]);
      tx_q_.erase(tx_q_.begin() + int64_t(i));
      count_peer(gone->dst, -1);
      tx_buffered_ -= gone->payload;
      freed = true;
      if (gone->failed && ctx_[gone->qpn].receives()) {
        seg_failed(*gone);  // may queue a Terminate ahead of everything: start over
        held_.clear();
        blocked = 0;
        i = 0;
      }
      continue;
    }
    if (held) {
      --blocked;
      ++i;
      continue;
    }
    if (!transport_.can_send(s.dst, s.ddp.size())) {
      // Every segment of this peer is here or after (the earlier ones left).
      held_.emplace_back(s.dst, &s);
      blocked += queued_for(s.dst) - 1;
      ++i;
      continue;
    }
    const uint32_t seq = transport_.send(s.dst, s.dst_qpn, std::move(s.ddp), s.ar, s.rq);
    if (s.terminate && !s.rq) transport_.close(s.dst);  // the QP's last segment
    mark_(CoreProbe::kSegSent, s.qpn, now_ps(), s.number, seq);
    ++tx_segments_;
    tx_payload_bytes_ += s.payload;
    tx_buffered_ -= s.payload;
    auto done = std::move(s.on_sent);
    count_peer(s.dst, -1);
    tx_q_.erase(tx_q_.begin() + int64_t(i));
    freed = true;
    if (done) done(seq);
  }
  walked_stop_ = i;
  walked_ok_ = true;
  if (freed) tx_kick();
}

// A Terminate to the QP's peer (a segment the RX engine rejected, or a local failure): ahead of
// every queued segment, ready kHeaderCycles after the request.
void SqEngine::send_terminate(uint32_t qpn, const rdmap::TermCause& why, const rdmap::Segment* bad,
                              const std::vector<uint8_t>& bad_ddp, uint64_t token,
                              const CloseMsg* to) {
  QpSq& q = qs_[qpn];
  rdmap::Terminate t;
  t.cause = why;
  // Which headers it quotes, as Linux siw (siw_send_terminate): none for an RDMAP catastrophic
  // error, nor where the segment's layout is unknown (a bad RDMAP or DDP version, a bad
  // opcode); otherwise the DDP header (M, D), and for a remote protection error on a Read
  // Request its RDMAP header too (R). A close (layer LLP) quotes nothing.
  using rdmap::Layer;
  const bool layout_unknown =
      why.layer == Layer::kLlp || (why.layer == Layer::kRdmap && why.etype == 0) ||
      (why.layer == Layer::kRdmap && why.etype == 2 && (why.code == 0x05 || why.code == 0x06)) ||
      (why.layer == Layer::kDdp &&
       ((why.etype == 1 && why.code == 0x04) || (why.etype == 2 && why.code == 0x06)));
  if (bad && !layout_unknown) {
    t.m = true;
    t.d = true;
    t.ddp_seg_len = rdmap::terminated_length(*bad, bad_ddp.size());
    const size_t hb = std::min(bad->header_bytes(), bad_ddp.size());
    t.ddp_header.assign(bad_ddp.begin(), bad_ddp.begin() + int64_t(hb));
    if (why.layer == Layer::kRdmap && why.etype == 1 && !bad->tagged &&
        bad->opcode == uint8_t(Opcode::kReadRequest) &&
        bad_ddp.size() >= rdmap::kUntaggedBytes + rdmap::kReadRequestBytes) {
      t.r = true;
      t.rdmap_header.assign(bad_ddp.begin() + rdmap::kUntaggedBytes,
                            bad_ddp.begin() + rdmap::kUntaggedBytes + rdmap::kReadRequestBytes);
    }
  }
  auto s = std::make_unique<TxSeg>();
  s->qpn = qpn;
  s->dst_qpn = to ? to->peer_qpn : ctx_[qpn].peer_qpn;
  s->dst = transport_.stream(to ? to->peer_mac : ctx_[qpn].peer_mac, s->dst_qpn);
  s->ddp = rdmap::terminate_segment(t, q.term_msn++);
  queue_terminate(std::move(s), token);
}

// A reset: the Terminate a closed stream sends (layer LLP, nothing quoted, MSN 1), to a peer
// whose segment addressed a QPN not connected to it here; its EFE header reflects that QPN.
void SqEngine::send_reset(const ResetMsg& m) {
  rdmap::Terminate t;
  t.cause = {rdmap::Layer::kLlp, 0, 0x00};
  auto s = std::make_unique<TxSeg>();
  s->dst = transport_.stream(m.to, m.qpn);
  s->qpn = m.qpn;  // for probes: the QPN it answers (the sender's numbering)
  s->dst_qpn = m.qpn;
  s->rq = true;
  s->ddp = rdmap::terminate_segment(t, 1);
  queue_terminate(std::move(s), m.token);
}

// A Terminate goes ahead of every queued segment, ready kHeaderCycles after its request.
void SqEngine::queue_terminate(std::unique_ptr<TxSeg> s, uint64_t token) {
  s->ar = true;
  s->terminate = true;
  TxSeg* p = s.get();
  count_peer(p->dst, 1);
  tx_q_.push_front(std::move(s));
  walked_ok_ = false;  // (ahead of where the last walk stopped)
  ++tx_terminates_;
  eq_.at(edge(kHeaderCycles), [this, p, token] {
    p->ready = true;
    if (token) p->on_sent = [this, token](uint32_t) { out.term_sent->send({token}); };
    tx_emit();
  });
}

std::string SqEngine::dump_state() const {
  std::string s =
      fmt::format("  {}: tx queue {} ({} B buffered), active QPs {}{}\n", name(), tx_q_.size(),
                  tx_buffered_, arbiter_.size(), checking_ ? " (checking SGEs)" : "");
  for (size_t i = 0; i < ctx_.size(); ++i) {
    const uint32_t n = uint32_t(i);
    if (!ctx_[i].valid || (send_.depth(n) == 0 && send_.reads_out(n) == 0)) continue;
    s += fmt::format("    QP {}: state {}, SQ {} (cursor {}), reads out {}{}\n", i,
                     int(ctx_[i].state), send_.depth(n), send_.cursor(n), send_.reads_out(n),
                     qs_[i].offered ? ", a read response offered" : "");
  }
  return s;
}

}  // namespace rnic
