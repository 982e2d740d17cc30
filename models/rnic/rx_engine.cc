#include "models/rnic/rx_engine.h"

#include "models/common/log.h"
#include "models/rnic/errors.h"

namespace rnic {

using rdmap::Layer;
using rdmap::Opcode;
using rdmap::TermCause;

namespace {
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
                   XlatChannel& xlat, efe::EfePassThrough& efe, CompletionEngine& completion,
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
      efe_(efe),
      completion_(completion),
      mark_(probe),
      rx_parse_(
          rx_parse("rx_parse", uint64_t(cfg.rx_parse_cycles), uint64_t(cfg.datapath_bytes), clk_)),
      recv_(size_t(cfg.qps)),
      ord_(size_t(cfg.qps)),
      ctx_(size_t(cfg.qps)),
      ird_used_(size_t(cfg.qps)),
      rx_segments_(stats.group(g).counter("rx_segments", "segments", "DDP segments received")),
      rx_payload_bytes_(stats.group(g).counter("rx_payload_bytes", "B", "payload bytes placed")),
      rx_dropped_(stats.group(g).counter("rx_dropped", "segments",
                                         "segments for no QP, a QP in ERROR, or too short")),
      rx_terminates_(stats.group(g).counter("rx_terminates", "frames", "Terminates received")),
      rx_errors_(
          stats.group(g).counter("rx_errors", "segments", "segments answered with a Terminate")),
      rx_fifo_max_(
          stats.group(g).counter("rx_fifo_max", "segments", "largest RX FIFO depth seen")) {
  efe_.on_segment = [this](RxSegment&& s) {
    RxItem it;
    it.seg = std::move(s);
    push(std::move(it));
  };
  efe_.on_ack = [this](const MacAddr& peer, uint32_t ack) {
    RxItem it;
    it.is_ack = true;
    it.peer = peer;
    it.ack = ack;
    push(std::move(it));
  };
  in.wqe.bind(eq_, [this](WqeMsg&& m) {
    if (!ctx_[m.qpn].valid) return;
    recv_.post(m.qpn, m.wqe, m.index);
    if (ctx_[m.qpn].state == abi::kQpError) flush_rq(m.qpn);
  });
  in.update.bind(eq_, [this](QpUpdate&& u) {
    ctx_[u.qpn] = u.ctx;
    if (u.reset) recv_.reset(u.qpn);
    if (u.flush) flush_rq(u.qpn);
    if (u.reset || u.flush) {
      ord_.clear(u.qpn);
      ird_used_[u.qpn] = 0;
    }
  });
  in.read_issued.bind(eq_, [this](ReadIssuedMsg&& m) {
    ord_.issued(m.qpn, {m.sq_index, m.sink_stag, m.sink_to, m.len, m.msn});
  });
  in.term_sent.bind(eq_, [this](TermSentMsg&& m) {
    auto it = stalled_on_.find(m.token);
    if (it == stalled_on_.end()) return;
    validated(it->second);
    stalled_on_.erase(it);
    rx_stalled_ = false;
    drain();
    if (!rx_stalled_ && !rx_busy_ && !rx_q_.empty()) {
      rx_busy_ = true;
      eq_.at(edge(0), [this] { step(); });
    }
  });
  in.ird_free.bind(eq_, [this](IrdFreeMsg&& m) {
    if (ird_used_[m.qpn] > 0) --ird_used_[m.qpn];
  });
}

void RxEngine::push(RxItem&& it) {
  rx_q_.push_back(std::move(it));
  if (rx_q_.size() > rx_fifo_max_.value) rx_fifo_max_.value = rx_q_.size();
  if (!rx_busy_ && !rx_stalled_) {
    rx_busy_ = true;
    eq_.at(edge(0), [this] { step(); });
  }
}

void RxEngine::step() {
  rx_busy_ = false;
  while (!rx_q_.empty() && !rx_stalled_) {
    RxItem it = std::move(rx_q_.front());
    rx_q_.pop_front();
    if (it.is_ack) {
      mark_(CoreProbe::kAck, 0, now_ps());
      out.ack->send({it.peer, it.ack});
      continue;
    }
    mark_(CoreProbe::kRxStart, it.seg.dst_qpn, now_ps());
    // ddp_rx_parse through its channel: the segment is decided when its header result arrives;
    // the next segment starts when the block's input has taken this one.
    rx_busy_ = true;
    auto seg = std::make_shared<RxSegment>(std::move(it.seg));
    // The channel shares the segment's bytes (no copy): an aliasing pointer into `seg`.
    RxParseChannel::Segment bytes(seg, &seg->ddp);
    rx_parse_->request(
        bytes, [this, seg](const RxParseResult& pr) { decide(seg, pr); }, [this] { step(); });
    return;
  }
}

RxEngine::Verdict* RxEngine::pending() {
  verdicts_.push_back(std::make_unique<Verdict>());
  return verdicts_.back().get();
}

void RxEngine::resolve(Verdict* v, std::function<void()> act) {
  v->act = std::move(act);
  v->ready = true;
  drain();
}

void RxEngine::drain() {
  while (!verdicts_.empty() && verdicts_.front()->ready && !rx_stalled_) {
    std::unique_ptr<Verdict> v = std::move(verdicts_.front());
    verdicts_.pop_front();
    v->act();
  }
}

void RxEngine::drop(const Seg& s) {
  ++rx_dropped_;
  log::debug("{}: segment for QP {} dropped", name(), s->dst_qpn);
  validated(s);
}

void RxEngine::place(uint32_t qpn, const std::vector<XlatChunk>& chunks, const uint8_t* data) {
  mark_(CoreProbe::kRxPlace, qpn, now_ps());
  for (const XlatChunk& c : chunks) {
    dmac_.write(c.pa, std::vector<uint8_t>(data, data + c.len));
    data += c.len;
  }
}

void RxEngine::post_recv(uint32_t qpn, const RecvLogic::Entry& e, uint8_t status, uint64_t bytes) {
  Cqe c;
  c.wr_id = e.wqe.wr_id;
  c.qp_num = qpn;
  c.wqe_index = e.index;
  c.status = status;
  c.opcode = abi::kCqeRecv;
  c.byte_len = uint32_t(bytes);
  completion_.post(ctx_[qpn].rcq, c);
}

void RxEngine::flush_rq(uint32_t qpn) {
  for (const RecvLogic::Entry& r : recv_.flush(qpn)) post_recv(qpn, r, abi::kCqeFlushed, 0);
}

// The QP goes to ERROR: at once for this engine (later verdicts for it drop their segments),
// through the host interface for the others.
void RxEngine::fail_ctx(uint32_t qpn, abi::AsyncEvent ev) {
  ctx_[qpn].state = abi::kQpError;
  out.error->send({qpn, ev});
}

void RxEngine::fail_at_verdict(uint32_t qpn, const TermCause& why, const rdmap::Segment& h,
                               const Seg& s, abi::AsyncEvent ev, int recv_status) {
  std::shared_ptr<Taken> taken;
  if (recv_status >= 0 && !recv_.empty(qpn)) {
    taken = std::make_shared<Taken>();
    taken->e = recv_.take(qpn, &taken->placed, false);
  }
  const uint64_t epoch = ctx_[qpn].epoch;
  now_verdict([=] {
    if (!still(qpn, epoch)) {
      if (taken) post_recv(qpn, taken->e, abi::kCqeFlushed, 0);
      return drop(s);
    }
    fail(qpn, why, h, s, ev, recv_status, taken.get());
  });
}

void RxEngine::fail(uint32_t qpn, const TermCause& why, const rdmap::Segment& h, const Seg& s,
                    abi::AsyncEvent ev, int recv_status, const Taken* taken) {
  ++rx_errors_;
  log::info("{}: QP {} terminates: layer {} type {} code {:#04x}", name(), qpn, int(why.layer),
            why.etype, why.code);
  if (recv_status >= 0 && taken) post_recv(qpn, taken->e, uint8_t(recv_status), taken->placed);
  rx_stalled_ = true;
  const uint64_t token = ++next_token_;
  stalled_on_[token] = s;
  out.term_req->send({qpn, why, h, s->ddp, token});
  fail_ctx(qpn, ev);
}

void RxEngine::decide(const Seg& sp, const RxParseResult& pr) {
  ++rx_segments_;
  const RxSegment& s = *sp;
  const uint32_t qpn = s.dst_qpn;
  mark_(CoreProbe::kRxChecked, qpn, now_ps());
  const rdmap::Segment& h = pr.h;
  if (qpn >= ctx_.size() || !ctx_[qpn].receives() || ctx_[qpn].peer_mac != s.src || pr.dropped)
    return now_verdict([this, sp] { drop(sp); });
  const QpCtx& q = ctx_[qpn];
  const uint64_t epoch = q.epoch;
  const uint32_t pd = q.pd;
  if (!pr.ok) return fail_at_verdict(qpn, pr.why, h, sp, abi::kEvQpFatal, -1);
  const uint8_t* payload = s.ddp.data() + pr.payload_off;
  const uint32_t len = pr.payload_len;
  const Opcode op = Opcode(h.opcode);

  if (op == Opcode::kWrite || op == Opcode::kReadResponse) {
    const bool resp = op == Opcode::kReadResponse;
    if (resp && !ord_.fits(qpn, h.stag, h.to, len))
      return fail_at_verdict(qpn, {Layer::kRdmap, 2, 0x06}, h, sp, abi::kEvQpFatal, -1);
    const int64_t answered = resp ? ord_.take(qpn, len, h.last) : -1;
    // Placed (writes issued), validated, and a Read's request answered.
    auto done = [this, qpn, sp, len, payload, answered](const std::vector<XlatChunk>& chunks) {
      if (len > 0) {
        place(qpn, chunks, payload);
        rx_payload_bytes_ += len;
      }
      validated(sp);
      if (answered >= 0) out.read_done->send({qpn, uint32_t(answered)});
    };
    if (len == 0) return now_verdict([=] { still(qpn, epoch) ? done({}) : drop(sp); });
    Verdict* v = pending();
    xlat_.request({h.stag, h.to, len, resp ? access::kLocalWrite : access::kRemoteWrite, pd}, eq_,
                  [=](XlatResult&& x) {
                    resolve(v, [=, x = std::move(x)] {
                      if (!still(qpn, epoch)) return drop(sp);
                      if (x.status != XlatStatus::kOk)
                        return fail(qpn, term_for_tagged(x.status), h, sp,
                                    resp ? abi::kEvQpFatal : abi::kEvQpAccessError, -1, nullptr);
                      done(x.chunks);
                    });
                  });
    return;
  }

  if (op == Opcode::kReadRequest) {
    if (!pr.rr_ok)
      return fail_at_verdict(qpn, {Layer::kRdmap, 2, 0xFF}, h, sp, abi::kEvQpFatal, -1);
    const rdmap::ReadRequest rr = pr.rr;
    if (h.msn != recv_.read_msn(qpn))
      return fail_at_verdict(qpn, {Layer::kDdp, 2, 0x03}, h, sp, abi::kEvQpFatal, -1);
    if (h.mo != 0) return fail_at_verdict(qpn, {Layer::kDdp, 2, 0x04}, h, sp, abi::kEvQpFatal, -1);
    if (ird_used_[qpn] >= q.ird)
      return fail_at_verdict(qpn, {Layer::kRdmap, 2, 0x07}, h, sp, abi::kEvQpFatal, -1);
    recv_.read_accepted(qpn);
    ++ird_used_[qpn];
    auto accept = [this, qpn, epoch, sp, rr] {
      validated(sp);
      out.read_req->send({qpn, epoch, rr});
    };
    if (rr.size == 0) return now_verdict([=] { still(qpn, epoch) ? accept() : drop(sp); });
    Verdict* v = pending();
    XlatRequest r{rr.src_stag, rr.src_to, rr.size, access::kRemoteRead, pd};
    r.check_only = true;
    xlat_.request(r, eq_, [=](XlatResult&& x) {
      const XlatStatus st = x.status;
      resolve(v, [=] {
        if (!still(qpn, epoch)) return drop(sp);
        if (st != XlatStatus::kOk)
          return fail(qpn, term_for_read_source(st), h, sp, abi::kEvQpAccessError, -1, nullptr);
        accept();
      });
    });
    return;
  }

  if (op == Opcode::kTerminate) {
    return now_verdict([=] {
      if (!still(qpn, epoch)) return drop(sp);
      ++rx_terminates_;
      terminate_received(qpn, payload, len);
      validated(sp);
    });
  }

  // Send, Send with Invalidate, Send with SE (and Invalidate)
  if (h.msn != recv_.send_msn(qpn))
    return fail_at_verdict(qpn, {Layer::kDdp, 2, 0x03}, h, sp, abi::kEvQpFatal, -1);
  if (recv_.empty(qpn))
    return fail_at_verdict(qpn, {Layer::kDdp, 2, 0x02}, h, sp, abi::kEvQpFatal, -1);
  if (h.mo != recv_.placed(qpn))
    return fail_at_verdict(qpn, {Layer::kDdp, 2, 0x04}, h, sp, abi::kEvQpFatal, -1);
  const RecvLogic::Entry r = recv_.front(qpn);
  if (uint64_t(h.mo) + len > r.wqe.total_length())
    return fail_at_verdict(qpn, {Layer::kDdp, 2, 0x05}, h, sp, kNoAsyncEvent, abi::kCqeLocLenError);
  // The receive state moves on now (the next segment is checked against it); the WQE a last
  // segment completes is taken now and completed at the verdict.
  recv_.place(qpn, len);
  std::shared_ptr<Taken> taken;
  if (h.last) {
    taken = std::make_shared<Taken>();
    taken->e = recv_.take(qpn, &taken->placed, true);
  }
  const uint32_t index = r.index;
  Verdict* v = pending();
  translate_sge_list(xlat_, eq_, r.wqe, h.mo, len, access::kLocalWrite, pd,
                     [=](XlatStatus st, std::vector<XlatChunk>&& chunks) {
                       resolve(v, [=, chunks = std::move(chunks)] {
                         if (!still(qpn, epoch)) {
                           if (taken) post_recv(qpn, taken->e, abi::kCqeFlushed, 0);
                           return drop(sp);
                         }
                         if (st != XlatStatus::kOk) {
                           // The WQE this segment writes into completes with the error (taken by
                           // now, or still at the head of the RQ).
                           std::shared_ptr<Taken> t = taken;
                           if (!t && !recv_.empty(qpn) && recv_.front(qpn).index == index) {
                             t = std::make_shared<Taken>();
                             t->e = recv_.take(qpn, &t->placed, false);
                           }
                           return fail(qpn, {Layer::kRdmap, 0, 0x00}, h, sp, abi::kEvQpFatal,
                                       abi::kCqeLocProtError, t.get());
                         }
                         if (len > 0) {
                           place(qpn, chunks, payload);
                           rx_payload_bytes_ += len;
                         }
                         if (h.last) {
                           const bool inv =
                               op == Opcode::kSendInvalidate || op == Opcode::kSendSeInvalidate;
                           if (inv && !xlat_.invalidate(h.inv_stag, &pd))
                             return fail(qpn, {Layer::kRdmap, 2, 0x09}, h, sp, abi::kEvQpFatal,
                                         abi::kCqeRemOpError, taken.get());
                           Cqe c;
                           c.wr_id = taken->e.wqe.wr_id;
                           c.qp_num = qpn;
                           c.wqe_index = taken->e.index;
                           c.byte_len = uint32_t(taken->placed);
                           c.opcode = abi::kCqeRecv;
                           c.status = abi::kCqeSuccess;
                           if (inv) {
                             c.wc_flags = abi::kCqeWithInv;
                             c.invalidated_rkey = h.inv_stag;
                           }
                           c.solicited = op == Opcode::kSendSe || op == Opcode::kSendSeInvalidate;
                           completion_.post(ctx_[qpn].rcq, c);
                         }
                         validated(sp);
                       });
                     });
}

void RxEngine::terminate_received(uint32_t qpn, const uint8_t* p, size_t n) {
  rdmap::Terminate t;
  if (!rdmap::decode(p, n, &t)) {
    log::warn("{}: QP {}: malformed Terminate", name(), qpn);
    return fail_ctx(qpn, kNoAsyncEvent);
  }
  log::info("{}: QP {} received Terminate: layer {} type {} code {:#04x}", name(), qpn,
            int(t.cause.layer), t.cause.etype, t.cause.code);
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
    if (!ctx_[i].valid || (recv_.empty(n) && ord_.size(n) == 0)) continue;
    s += fmt::format("    QP {}: RQ {}, reads awaiting responses {}, inbound reads {}\n", i,
                     recv_.depth(n), ord_.size(n), ird_used_[i]);
  }
  return s;
}

}  // namespace rnic
