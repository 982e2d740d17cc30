#include "models/rnic/rx/rx_engine.h"

#include <algorithm>

#include "models/common/byte_pool.h"
#include "models/common/log.h"
#include "models/rnic/latency_mutation.h"

namespace rnic {

using rdmap::Layer;
using rdmap::Opcode;
using rdmap::TermCause;

namespace {
// Cycles from a segment's last translation result (or its decision, without one) to its
// verdict.
constexpr uint64_t kVerdictCycles = 0 + mutation::extra(mutation::kRx);

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

RxEngine::RxEngine(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac,
                   XlatChannel& xlat, Transport& transport, CompletionEngine& completion,
                   const RxParseFactory& rx_parse, const ProbeFn& probe, StatRegistry& stats,
                   const std::string& g)
    : sc_core::sc_module(n),
      in{{std::string(name()) + ".wqe", size_t(cfg.qps) * size_t(cfg.max_qp_wr)},
         {std::string(name()) + ".update", 4 * size_t(cfg.qps)},
         {std::string(name()) + ".read_issued", size_t(cfg.qps) * size_t(cfg.ord)},
         {std::string(name()) + ".term_sent", size_t(cfg.qps)},
         {std::string(name()) + ".ird_free", size_t(cfg.qps) * size_t(cfg.ird)}},
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      dmac_(dmac),
      xlat_(xlat),
      transport_(transport),
      completion_(completion),
      mark_(probe),
      rx_parse_(
          rx_parse({"rx_parse", clk_, int(cfg.datapath_bytes)}, {uint64_t(cfg.rx_parse_cycles)})),
      logic_(size_t(cfg.qps)),
      ctx_(size_t(cfg.qps)),
      read_progress_ps_(size_t(cfg.qps)),
      parked_(size_t(cfg.qps)),
      fault_failed_(size_t(cfg.qps)),
      rx_refused_(stats.group(g).counter(
          "rx_refused", "segments",
          "segments refused for a page fault (RNR), with those after them from their peer")),
      rx_segments_(stats.group(g).counter("rx_segments", "segments", "DDP segments received")),
      rx_payload_bytes_(stats.group(g).counter("rx_payload_bytes", "B", "payload bytes placed")),
      rx_dropped_(stats.group(g).counter(
          "rx_dropped", "segments",
          "segments for a QP in ERROR, too short, or Terminates and resets for no QP")),
      rx_resets_(stats.group(g).counter("rx_resets", "segments",
                                        "segments for a QPN not connected to their sender: reset")),
      read_timeouts_(stats.group(g).counter(
          "read_timeouts", "WRs", "Reads completed IBV_WC_RETRY_EXC_ERR by the response timer")),
      rx_reads_dropped_(
          stats.group(g).counter("rx_reads_dropped", "requests",
                                 "inbound Read Requests dropped by core.fault_drop_read_requests")),
      rx_terminates_(stats.group(g).counter("rx_terminates", "frames", "Terminates received")),
      rx_errors_(
          stats.group(g).counter("rx_errors", "segments", "segments answered with a Terminate")),
      rx_fifo_max_(
          stats.group(g).counter("rx_fifo_max", "segments", "largest RX FIFO depth seen")) {
  transport_.on_segment = [this](RxSegment&& s) {
    RxItem it;
    it.seg = std::move(s);
    push(std::move(it));
  };
  transport_.on_ack = [this](const TransportStream& stream, uint32_t ack) {
    RxItem it;
    it.is_ack = true;
    it.stream = stream;
    it.ack = ack;
    push(std::move(it));
  };
  transport_.on_failed = [this](const TransportStream& stream) {
    RxItem it;
    it.failed = true;
    it.stream = stream;
    push(std::move(it));
  };
  transport_.on_reset = [this](const TransportStream& stream,
                               const std::vector<uint32_t>& peer_qpns) {
    RxItem it;
    it.reset = true;
    it.stream = stream;
    it.peer_qpns = peer_qpns;
    push(std::move(it));
  };
  in.wqe.bind(eq_, [this](WqeMsg&& m) {
    if (!ctx_[m.qpn].valid) return;
    logic_.post(m.qpn, m.wqe, m.index);
    if (ctx_[m.qpn].state == abi::kQpError) flush_rq(m.qpn);
  });
  in.update.bind(eq_, [this](QpUpdate&& u) {
    ctx_[u.qpn] = u.ctx;
    if (u.reset || u.flush) disarm_read_timer(u.qpn);
    if (u.reset) {
      logic_.reset(u.qpn, u.ctx.srq);
      parked_[u.qpn] = fault_failed_[u.qpn] = false;  // a fault of the QP before is not its own
    }
    if (u.flush) flush_rq(u.qpn);
  });
  in.read_issued.bind(eq_, [this](ReadIssuedMsg&& m) {
    if (logic_.ord().size(m.qpn) == 0) read_progress_ps_[m.qpn] = now_ps();
    logic_.read_issued(m.qpn, m.read);
    arm_read_timer(m.qpn);
  });
  in.term_sent.bind(eq_, [this](TermSentMsg&& m) {
    if (!rx_stalled_ || m.token != stall_token_) return;
    validated(stalled_on_);
    stalled_on_.reset();
    rx_stalled_ = false;
    drain();
    if (!rx_stalled_ && !rx_busy_ && !rx_q_.empty()) {
      rx_busy_ = true;
      eq_.at(edge(0), [this] { step(); });
    }
  });
  in.ird_free.bind(eq_, [this](IrdFreeMsg&& m) { logic_.ird_free(m.qpn); });
}

void RxEngine::push(RxItem&& it) {
  rx_q_.push_back(std::move(it));
  if (rx_q_.size() > rx_fifo_max_.value) rx_fifo_max_.value = rx_q_.size();
  if (!rx_busy_ && !rx_stalled_) {
    rx_busy_ = true;
    eq_.at(edge(0), [this] { step(); });
  }
}

namespace {
// A received segment as the engine shares it: its bytes go back for reuse with it.
struct PooledSegment : TransportSegment {
  explicit PooledSegment(TransportSegment&& s) : TransportSegment(std::move(s)) {}
  PooledSegment(const PooledSegment&) = delete;
  PooledSegment& operator=(const PooledSegment&) = delete;
  ~PooledSegment() { give_bytes(std::move(ddp)); }
};
}  // namespace

void RxEngine::step() {
  rx_busy_ = false;
  while (!rx_q_.empty() && !rx_stalled_) {
    RxItem it = std::move(rx_q_.front());
    rx_q_.pop_front();
    if (it.is_ack) {
      mark_(CoreProbe::kAck, 0, now_ps());
      out.ack->send({it.stream, it.ack});
      continue;
    }
    if (it.failed) {
      channel_failed(it.stream);
      continue;
    }
    if (it.reset) {
      peer_reset(it.stream, it.peer_qpns);
      continue;
    }
    mark_(CoreProbe::kRxStart, it.seg.dst_qpn, now_ps(),
          ProbeEvent::rx_tag(it.seg.src, it.seg.seq));
    // ddp_rx_parse through its channel: the segment is decided when its header result arrives;
    // the next segment starts when the block's input has taken this one.
    rx_busy_ = true;
    Seg seg = std::make_shared<PooledSegment>(std::move(it.seg));
    parsing_.push_back(Seg(seg));
    // The channel shares the segment's bytes (no copy): an aliasing pointer into `seg`.
    RxParseChannel::Segment bytes(seg, &seg->ddp);
    rx_parse_->request(
        std::move(bytes), [this](const RxParseResult& pr) { decide(parsing_.take_front(), pr); },
        [this] { step(); });
    return;
  }
}

RxEngine::Verdict* RxEngine::pending() {
  verdicts_.emplace_back();  // a deque: the others keep their place
  return &verdicts_.back();
}

void RxEngine::translated(Verdict* v, std::vector<XlatChunk>&& chunks) {
  v->chunks = std::move(chunks);
  if (kVerdictCycles == 0) return resolve(v);
  eq_.at(now_ps() + kVerdictCycles * clk_.period_ps, [this, v] { resolve(v); });
}

void RxEngine::resolve(Verdict* v) {
  v->ready = true;
  drain();
}

void RxEngine::drain() {
  while (!verdicts_.empty() && verdicts_.front().ready && !rx_stalled_) {
    Verdict& f = verdicts_.front();
    if (f.refused) {
      verdicts_.pop_front();
      continue;
    }
    // Out of the queue before it acts (what it does may drain again).
    const uint32_t qpn = f.qpn;
    const uint64_t epoch = f.epoch;
    const Seg seg = std::move(f.seg);
    const RxParseResult pr = f.pr;
    RxDecision d = std::move(f.d);
    const std::vector<XlatChunk> chunks = std::move(f.chunks);
    verdicts_.pop_front();
    verdict(qpn, epoch, seg, pr, d, chunks);
  }
}

bool RxEngine::faulted(Verdict* v, XlatStatus st, const XlatFault& f) {
  const uint32_t qpn = v->qpn;
  if (st != XlatStatus::kPageFault || !faults || qpn >= ctx_.size()) return false;
  if (fault_failed_[qpn]) {
    fault_failed_[qpn] = false;
    return false;
  }
  v->d.faulted = true;
  v->d.fault = f;
  return true;
}

bool RxEngine::stale(const RxSegment& s) const {
  if (rx_gen_.empty()) return false;
  const auto it = rx_gen_.find(s.stream());
  return it != rx_gen_.end() && it->second != s.gen;
}

void RxEngine::refuse(uint32_t qpn, const Seg& s, RxDecision& d) {
  rx_gen_[s->stream()] = transport_.refuse(s->stream(), s->seq);
  ++rx_refused_;
  // Newest first: the later segments from the peer, then this one.
  for (auto it = verdicts_.rbegin(); it != verdicts_.rend(); ++it) {
    if (it->refused || !it->seg || it->seg->stream() != s->stream()) continue;
    it->refused = true;
    ++rx_refused_;
    if (it->qpn < ctx_.size() && still(it->qpn, it->epoch)) logic_.undo(it->qpn, it->d);
  }
  logic_.undo(qpn, d);
  parked_[qpn] = true;
  const uint64_t epoch = ctx_[qpn].epoch;
  const bool write = d.kind != RxDecision::Kind::kReadRequest;
  faults->page_fault(qpn, d.fault, write, eq_, [this, qpn, epoch](bool ok) {
    parked_[qpn] = false;
    if (ctx_[qpn].epoch == epoch) fault_failed_[qpn] = !ok;
  });
}

void RxEngine::drop(const Seg& s) {
  ++rx_dropped_;
  log::debug("{}: segment for QP {} dropped", name(), s->dst_qpn);
  validated(s);
}

void RxEngine::place(uint32_t qpn, const Seg& sp, const std::vector<XlatChunk>& chunks,
                     const uint8_t* data) {
  const uint64_t last = chunks.empty() ? 0 : chunks.back().pa + chunks.back().len - 1;
  mark_(CoreProbe::kRxPlace, qpn, now_ps(), ProbeEvent::rx_tag(sp->src, sp->seq), 0, last);
  for (const XlatChunk& c : chunks) {
    Bytes d = take_bytes(c.len);
    d.assign(data, data + c.len);
    dmac_.write(c.pa, std::move(d));
    data += c.len;
  }
}

Cqe RxEngine::recv_cqe(uint32_t qpn, const RecvLogic::Entry& e, uint8_t status, uint64_t bytes) {
  Cqe c;
  c.wr_id = e.wqe.wr_id;
  c.qp_num = qpn;
  c.wqe_index = e.index;
  c.status = status;
  c.opcode = abi::kCqeRecv;
  c.byte_len = uint32_t(bytes);
  return c;
}

void RxEngine::post_recv(uint32_t qpn, const RecvLogic::Entry& e, uint8_t status, uint64_t bytes) {
  completion_.in.send({ctx_[qpn].rcq, recv_cqe(qpn, e, status, bytes)});
}

// A QP's WQEs complete flushed; a failed SRQ's are dropped (it has no CQ: the SRQ error event
// told the driver).
void RxEngine::flush_rq(uint32_t qpn) {
  std::vector<RecvLogic::Entry> wqes = logic_.flush(qpn);
  if (ctx_[qpn].is_srq) return;
  for (const RecvLogic::Entry& r : wqes) post_recv(qpn, r, abi::kCqeFlushed, 0);
}

// The QP goes to ERROR: at once for this engine (later verdicts for it drop their segments),
// through the host interface for the others.
void RxEngine::fail_ctx(uint32_t qpn, abi::AsyncEvent ev) {
  ctx_[qpn].state = abi::kQpError;
  out.error->send({qpn, ev, true});  // every RX engine failure is a Terminate sent or received
}

void RxEngine::fail(uint32_t qpn, const TermCause& why, const rdmap::Segment& h, const Seg& s,
                    abi::AsyncEvent ev, const RxDecision& d) {
  ++rx_errors_;
  log::info("{}: QP {} terminates: layer {} type {} code {:#04x}", name(), qpn, int(why.layer),
            why.etype, why.code);
  if (d.recv_status >= 0 && d.has_wqe) post_recv(qpn, d.wqe, uint8_t(d.recv_status), d.placed);
  rx_stalled_ = true;
  stalled_on_ = s;
  out.term_req->send({qpn, why, h, s->ddp, ++stall_token_});
  fail_ctx(qpn, ev);
}

uint32_t RxEngine::connected_to(const MacAddr& peer, uint32_t peer_qpn) const {
  for (size_t i = 0; i < ctx_.size(); ++i)
    if (ctx_[i].receives() && ctx_[i].peer_mac == peer && ctx_[i].peer_qpn == peer_qpn)
      return uint32_t(i);
  return uint32_t(ctx_.size());
}

void RxEngine::decide(const Seg& sp, const RxParseResult& pr) {
  if (stale(*sp)) return;  // refused with an earlier segment: it comes again
  ++rx_segments_;
  uint32_t qpn = sp->dst_qpn;
  mark_(CoreProbe::kRxChecked, qpn, now_ps(), ProbeEvent::rx_tag(sp->src, sp->seq));
  static const QpCtx kNoQp;
  Verdict* v = pending();
  v->seg = sp;
  v->pr = pr;
  RxDecision& d = v->d;
  if (sp->rq) {
    // A reset (its QPN reflected): for the QP connected to that QPN at the sender. Only a
    // Terminate comes this way; anything else, or a reset matching no QP, is dropped.
    qpn = connected_to(sp->src, sp->dst_qpn);
    const bool term = pr.ok && rdmap::Opcode(pr.h.opcode) == rdmap::Opcode::kTerminate;
    if (qpn < ctx_.size() && term) d = logic_.decide(qpn, ctx_[qpn], sp->src, pr);
  } else {
    d = logic_.decide(qpn, qpn < ctx_.size() ? ctx_[qpn] : kNoQp, sp->src, pr,
                      sp->ddp.data() + pr.payload_off);
  }
  v->qpn = qpn;
  v->epoch = (qpn < ctx_.size() ? ctx_[qpn] : kNoQp).epoch;
  switch (d.kind) {
    case RxDecision::Kind::kPlace:
    case RxDecision::Kind::kReadRequest:
    case RxDecision::Kind::kAtomicRequest:
      if (d.target.len == 0) return translated(v, {});
      xlat_.request(d.target, eq_, [this, v](XlatResult&& x) {
        const XlatRequest& t = v->d.target;
        const XlatFault f{t.stag, x.fault_to, t.to + t.len};
        if (x.status != XlatStatus::kOk && !faulted(v, x.status, f))
          logic_.xlat_failed(v->qpn, v->d, x.status);
        translated(v, std::move(x.chunks));
      });
      return;
    case RxDecision::Kind::kSend:
      translate_sge_list(
          xlat_, eq_, d.wqe.wqe, d.mo, d.len, access::kLocalWrite, d.target.pd,
          [this, v](XlatStatus st, std::vector<XlatChunk>&& chunks, const XlatFault& f) {
            if (st != XlatStatus::kOk && !faulted(v, st, f)) logic_.xlat_failed(v->qpn, v->d, st);
            translated(v, std::move(chunks));
          });
      return;
    default:
      return translated(v, {});
  }
}

// A segment's verdict, in segment order: what its decision (and its translation) says.
void RxEngine::verdict(uint32_t qpn, uint64_t epoch, const Seg& sp, const RxParseResult& pr,
                       RxDecision& d, const std::vector<XlatChunk>& chunks) {
  using Kind = RxDecision::Kind;
  if (d.kind == Kind::kDrop) return drop(sp);
  if (d.kind == Kind::kReset) return reset(sp);
  if (!still(qpn, epoch)) {
    // An earlier segment failed the QP (or it was reset): nothing of this one is placed; a
    // receive WQE it took completes flushed.
    if (d.has_wqe) post_recv(qpn, d.wqe, abi::kCqeFlushed, 0);
    return drop(sp);
  }
  if (d.faulted) return refuse(qpn, sp, d);
  const uint8_t* payload = sp->ddp.data() + pr.payload_off;
  const uint32_t len = pr.payload_len;
  switch (d.kind) {
    case Kind::kFail:
      return fail(qpn, d.why, pr.h, sp, d.event, d);
    case Kind::kPlace:
      if (d.atomic) {
        place(qpn, sp, chunks, d.value);  // the original value, not the response's bytes
        rx_payload_bytes_ += sizeof d.value;
      } else if (len > 0) {
        place(qpn, sp, chunks, payload);
        rx_payload_bytes_ += len;
      }
      if (d.response) {
        read_progress_ps_[qpn] = now_ps();
        if (d.answered >= 0 && logic_.ord().size(qpn) == 0) disarm_read_timer(qpn);
      }
      validated(sp);
      if (d.answered >= 0) out.read_done->send({qpn, uint32_t(d.answered)});
      return;
    case Kind::kReadRequest: {
      validated(sp);
      if (cfg_.fault_drop_read_requests) {
        ++rx_reads_dropped_;  // fault injection: never answered
        return;
      }
      ReadReqMsg m;
      m.qpn = qpn;
      m.epoch = epoch;
      m.rr = d.rr;
      m.msn = pr.h.msn;
      out.read_req->send(std::move(m));
      return;
    }
    case Kind::kAtomicRequest: {
      validated(sp);
      ReadReqMsg m;
      m.qpn = qpn;
      m.epoch = epoch;
      m.msn = pr.h.msn;
      m.atomic = true;
      m.ar = d.ar;
      out.read_req->send(std::move(m));
      return;
    }
    case Kind::kTerminate:
      ++rx_terminates_;
      terminate_received(qpn, payload, len);
      validated(sp);
      return;
    case Kind::kSend:
      if (len > 0) {
        place(qpn, sp, chunks, payload);
        rx_payload_bytes_ += len;
      }
      if (d.last) {
        if (d.invalidate && !xlat_.invalidate(d.inv_stag, &d.target.pd)) {
          RxLogic::invalidate_failed(d);
          return fail(qpn, d.why, pr.h, sp, d.event, d);
        }
        Cqe c = recv_cqe(qpn, d.wqe, abi::kCqeSuccess, d.placed);
        if (d.invalidate) {
          c.wc_flags = abi::kCqeWithInv;
          c.invalidated_rkey = d.inv_stag;
        }
        if (d.with_imm) {
          c.wc_flags |= abi::kCqeWithImm;
          c.invalidated_rkey = d.imm;
        }
        c.solicited = d.solicited;
        completion_.in.send({ctx_[qpn].rcq, c});
      }
      validated(sp);
      return;
    case Kind::kImmediate:
      if (d.has_wqe) {
        Cqe c = recv_cqe(qpn, d.wqe, abi::kCqeSuccess, d.imm_len);
        c.opcode = abi::kCqeRecvRdmaWithImm;
        c.wc_flags = abi::kCqeWithImm;
        c.invalidated_rkey = d.imm;
        c.solicited = d.solicited;
        completion_.in.send({ctx_[qpn].rcq, c});
      }
      validated(sp);
      return;
    case Kind::kDrop:
    case Kind::kReset:
      return;
  }
}

// The requester's Read Response timer (QP attribute `timeout` x (`retry_cnt` + 1)): while the
// QP has Read Requests outstanding, a Read Response segment must arrive within it (the clock
// starts when the first request of an idle QP is issued). One cancellable event for the engine,
// at the earliest deadline of the QPs timed: a segment only moves its QP's last progress, and a
// QP whose reads are all answered leaves the set (with none left the event is cancelled, so a
// timer never keeps a finished run going).
void RxEngine::arm_read_timer(uint32_t qpn) {
  if (ctx_[qpn].read_timeout_ps == 0 || !read_timed_.insert(qpn).second) return;
  // A QP already timed only moves its deadline later: the pending event stays right.
  const uint64_t t = read_progress_ps_[qpn] + ctx_[qpn].read_timeout_ps;
  if (t < read_timer_at_) notify_read_timer(t);
}

void RxEngine::disarm_read_timer(uint32_t qpn) {
  if (read_timed_.erase(qpn) && read_timed_.empty()) {
    eq_.cancel_alarm();
    read_timer_at_ = UINT64_MAX;
  }
}

// The timer is the engine queue's alarm: it runs after the actions due at the same time, so a
// Read Response and the deadline it meets are ordered the same way in every run, whatever else
// the simulation holds at that time.
void RxEngine::notify_read_timer(uint64_t t) {
  read_timer_at_ = t;
  eq_.set_alarm(t, [this] { read_timer_fire(); });
}

void RxEngine::schedule_read_timer() {
  uint64_t next = UINT64_MAX;
  for (uint32_t q : read_timed_)
    next = std::min(next, read_progress_ps_[q] + ctx_[q].read_timeout_ps);
  read_timer_at_ = UINT64_MAX;
  eq_.cancel_alarm();
  if (next != UINT64_MAX) notify_read_timer(next);
}

void RxEngine::read_timer_fire() {
  std::vector<uint32_t> expired;
  for (auto it = read_timed_.begin(); it != read_timed_.end();) {
    const uint32_t q = *it;
    if (!ctx_[q].receives() || logic_.ord().size(q) == 0) {
      it = read_timed_.erase(it);
      continue;
    }
    if (now_ps() >= read_progress_ps_[q] + ctx_[q].read_timeout_ps) {
      expired.push_back(q);
      it = read_timed_.erase(it);
      continue;
    }
    ++it;
  }
  for (uint32_t q : expired) read_timed_out(q);
  schedule_read_timer();
}

// No Read Response within the timer: the oldest outstanding Read completes
// IBV_WC_RETRY_EXC_ERR, the QP goes to ERROR (the rest flush) and the peer is told (the host
// interface closes the stream). Nothing is re-issued: the EFE, not RDMAP, retransmits.
void RxEngine::read_timed_out(uint32_t qpn) {
  ++read_timeouts_;
  const ReadOut* r = logic_.ord().oldest(qpn);
  log::info("{}: QP {}: no Read Response for {:.3f} us: retry exceeded", name(), qpn,
            double(ctx_[qpn].read_timeout_ps) / 1e6);
  PeerTermMsg m;
  m.qpn = qpn;
  m.status = abi::kCqeRetryExceeded;
  m.have_rr = true;
  m.rr.sink_stag = r->sink_stag;
  m.rr.sink_to = r->sink_to;
  out.peer_term->send(std::move(m));
  ctx_[qpn].state = abi::kQpError;
  out.error->send({qpn, kNoAsyncEvent, false});
}

// The transport gave up on a stream (the EFE: its channel to a peer card; docs/errors.md): the
// SQ engine forgets what it awaited acknowledgement of on it, and each QP on it goes to ERROR with
// a QP fatal event, its oldest outstanding WR completing IBV_WC_RETRY_EXC_ERR (the rest flush). The
// host interface closes each stream: the peer hears when the channel is back.
void RxEngine::channel_failed(const TransportStream& stream) {
  AckMsg a;
  a.stream = stream;
  a.failed = true;
  out.ack->send(a);
  for (uint32_t q = 0; q < ctx_.size(); ++q) {
    if (!ctx_[q].receives() || !stream.carries(ctx_[q].peer_mac, ctx_[q].peer_qpn)) continue;
    log::info("{}: QP {}: the channel to {} failed: retry exceeded", name(), q,
              transport_.peer_name(stream.peer));
    PeerTermMsg m;
    m.qpn = q;
    m.status = abi::kCqeRetryExceeded;
    out.peer_term->send(std::move(m));
    ctx_[q].state = abi::kQpError;
    out.error->send({q, abi::kEvQpFatal, false});
  }
}

void RxEngine::peer_reset(const TransportStream& stream, const std::vector<uint32_t>& peer_qpns) {
  for (uint32_t q = 0; q < ctx_.size(); ++q) {
    const QpCtx& c = ctx_[q];
    if (!c.receives() || !stream.carries(c.peer_mac, c.peer_qpn) ||
        std::find(peer_qpns.begin(), peer_qpns.end(), c.peer_qpn) == peer_qpns.end())
      continue;
    log::info("{}: QP {}: its peer QP {} at {} failed with that card's channel to this one", name(),
              q, c.peer_qpn, transport_.peer_name(stream.peer));
    PeerTermMsg m;
    m.qpn = q;
    m.closed = true;
    out.peer_term->send(std::move(m));
    fail_ctx(q, abi::kEvQpFatal);
  }
}

// A segment for a QPN not connected to its sender: a reset goes back (through the SQ engine)
// before the segment is validated, so the sender sees it ahead of the acknowledgement.
void RxEngine::reset(const Seg& s) {
  ++rx_resets_;
  log::info("{}: segment from {} for QPN {}, not connected to it: reset", name(),
            transport_.peer_name(s->src), s->dst_qpn);
  rx_stalled_ = true;
  stalled_on_ = s;
  out.reset->send({s->src, s->dst_qpn, ++stall_token_});
}

void RxEngine::terminate_received(uint32_t qpn, const uint8_t* p, size_t n) {
  rdmap::Terminate t;
  if (!rdmap::decode(p, n, &t)) {
    log::warn("{}: QP {}: malformed Terminate", name(), qpn);
    return fail_ctx(qpn, kNoAsyncEvent);
  }
  log::info("{}: QP {} received Terminate: layer {} type {} code {:#04x}", name(), qpn,
            int(t.cause.layer), t.cause.etype, t.cause.code);
  // The peer closed the stream (its QP destroyed or moved to ERROR, or a reset): every WR
  // flushes, at once in the SQ engine.
  if (t.cause.layer == Layer::kLlp) {
    PeerTermMsg m;
    m.qpn = qpn;
    m.closed = true;
    out.peer_term->send(std::move(m));
    return fail_ctx(qpn, kNoAsyncEvent);
  }
  // The SQ engine completes the WR it names (a Read Request by its sink STag and TO, a Send by
  // its MSN, an RDMA Write by its STag and TO; otherwise the oldest not yet complete).
  PeerTermMsg m;
  m.qpn = qpn;
  m.status = wc_status_for(t.cause);
  m.have_hdr = t.d && rdmap::decode(t.ddp_header.data(), t.ddp_header.size(), &m.bad);
  m.have_rr = t.r && rdmap::decode(t.rdmap_header.data(), t.rdmap_header.size(), &m.rr);
  out.peer_term->send(std::move(m));
  fail_ctx(qpn, kNoAsyncEvent);
}

std::string RxEngine::dump_state() const {
  std::string s = fmt::format("  {}: rx queue {}{}, verdicts pending {}\n", name(), rx_q_.size(),
                              rx_stalled_ ? " (stalled on a Terminate)" : "", verdicts_.size());
  for (size_t i = 0; i < ctx_.size(); ++i) {
    const uint32_t n = uint32_t(i);
    if (!ctx_[i].valid || (logic_.recv().empty(n) && logic_.ord().size(n) == 0)) continue;
    s += fmt::format("    QP {}: RQ {}, reads awaiting responses {}, inbound reads {}\n", i,
                     logic_.recv().depth(n), logic_.ord().size(n), logic_.ird_used(n));
  }
  return s;
}

void RxEngine::trace(TraceSink& t) const {
  const std::string scope = std::string(name()) + ".intake";
  t.add_value(scope, "segments_queued", 16, [this] { return rx_q_.size(); });
  t.add_value(scope, "busy", 1, [this] { return rx_busy_ ? 1 : 0; });
  t.add_value(scope, "stalled", 1, [this] { return rx_stalled_ ? 1 : 0; });
  t.add_value(scope, "verdicts_pending", 16, [this] { return verdicts_.size(); });
  rx_parse_->trace(t);
}

}  // namespace rnic
