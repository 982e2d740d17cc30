#include "models/rnic/host_if/host_if.h"

#include "models/common/log.h"
#include "models/rnic/latency_mutation.h"

namespace rnic {

HostInterface::HostInterface(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac,
                             RnicRegs& regs, CompletionEngine& completion, const ProbeFn& probe,
                             StatRegistry& stats, const std::string& g)
    : sc_core::sc_module(n),
      in{{std::string(name()) + ".error", 4 * size_t(cfg.qps)},
         {std::string(name()) + ".cq_overflow", size_t(cfg.cqs)}},
      cfg_(cfg),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      dmac_(dmac),
      regs_(regs),
      completion_(completion),
      mark_(probe),
      qps_(size_t(cfg.qps), uint32_t(cfg.max_qp_wr), uint32_t(cfg.ird), uint32_t(cfg.ord)),
      copy_(size_t(cfg.qps)),
      events_raised_(stats.group(g).counter("async_events", "events", "async events")),
      wqe_fetches_(stats.group(g).counter("wqe_fetches", "reads",
                                          "DMA reads of WQEs from host-memory rings")),
      wqe_fetch_errors_(stats.group(g).counter("wqe_fetch_errors", "fetches",
                                               "WQE fetches that failed (the QP goes to ERROR)")) {
  regs_.set_listener(this);
  in.error.bind(eq_, [this](QpErrorMsg&& m) {
    if (!qps_.valid(m.qpn)) return;
    if (qps_.at(m.qpn).ctx.state != abi::kQpError) {
      if (!m.peer_told) close_if_connected(m.qpn);
      set_qp_state(m.qpn, abi::kQpError);
    }
    if (m.event != kNoAsyncEvent) push_event(m.event, m.qpn);
  });
  in.cq_overflow.bind(eq_, [this](uint32_t&& cqn) { cq_error(cqn); });
}

uint32_t HostInterface::qp_state(uint32_t qp) const {
  return qps_.valid(qp) ? uint32_t(qps_.at(qp).ctx.state) : uint32_t(abi::kQpReset);
}

uint32_t HostInterface::pop_event() {
  if (events_.empty()) return 0;
  const uint32_t e = events_.front();
  events_.pop_front();
  return e;
}

void HostInterface::push_event(abi::AsyncEvent t, uint32_t num) {
  ++events_raised_;
  events_.push_back(1u << 31 | uint32_t(t) << 24 | (num & 0xFFFFFF));
  if (regs_.raise(reg::kIntAsyncEvent) && regs_.msi_addr())
    dmac_.msi(regs_.msi_addr(), kAsyncVector);
}

bool HostInterface::create_qp(const abi::CreateQp& c) {
  if (!qps_.create(c, [this](uint32_t n) { return completion_.table().valid(n); })) return false;
  broadcast(c.qpn, {true, false});
  return true;
}

bool HostInterface::modify_qp(const abi::ModifyQp& m) {
  if ((m.set & abi::ModifyQp::kState) && m.state == abi::kQpError) close_if_connected(m.qpn);
  QpTable::Change change;
  if (!qps_.modify(m, &change)) return false;
  broadcast(m.qpn, change);
  return true;
}

bool HostInterface::destroy_qp(uint32_t qpn) {
  close_if_connected(qpn);
  if (!qps_.destroy(qpn)) return false;
  broadcast(qpn, {true, false});
  return true;
}

void HostInterface::set_qp_state(uint32_t qpn, abi::QpState st) {
  const QpTable::Change change = qps_.set_state(qpn, st);
  broadcast(qpn, change);
}

// Tells the engines the QP's context changed; a reset also ends the WQE fetches and copy-ins
// under way.
void HostInterface::broadcast(uint32_t qpn, QpTable::Change change) {
  if (change.reset) copy_[qpn] = Copy{};
  for (Channel<QpUpdate>* c : out.update)
    c->send({qpn, qps_.at(qpn).ctx, change.reset, change.flush});
}

void HostInterface::sq_doorbell(uint32_t qpn, uint64_t producer) {
  fetch_wqes(qpn, false, producer);
}
void HostInterface::rq_doorbell(uint32_t qpn, uint64_t producer) {
  fetch_wqes(qpn, true, producer);
}

void HostInterface::fetch_wqes(uint32_t qpn, bool rq, uint64_t producer) {
  if (!qps_.valid(qpn)) return;
  const uint64_t rq_bit = rq ? ProbeEvent::kRq : 0;
  mark_(CoreProbe::kDoorbell, qpn, now_ps(), producer | rq_bit);
  uint64_t first = 0;
  if (!qps_.doorbell(qpn, rq, producer, &first)) {
    log::warn("{}: QP {} {} doorbell {} after {}: ignored", name(), qpn, rq ? "RQ" : "SQ", producer,
              qps_.at(qpn).db[rq]);
    return;
  }
  if (qps_.at(qpn).host_rings) return fetch_ring(qpn, rq, first, producer);
  const uint64_t per_wqe = wqe_copy_cycles() + mutation::extra(mutation::kHostIf);
  for (uint64_t i = first; i < producer; ++i) {
    const Wqe w = decode_wqe(regs_.window_slot(qpn, rq, uint32_t(i)));
    eq_.at(edge(per_wqe * (i - first + 1)), [this, qpn, rq, w, i] { queue_wqe(qpn, rq, w, i); });
  }
}

void HostInterface::queue_wqe(uint32_t qpn, bool rq, const Wqe& w, uint64_t index) {
  if (!qps_.valid(qpn)) return;
  mark_(CoreProbe::kWqeQueued, qpn, now_ps(), index | (rq ? ProbeEvent::kRq : 0));
  (rq ? out.rq_wqe : out.sq_wqe)->send({qpn, w, uint32_t(index)});
}

// Host-ring mode: the WQEs [db, producer) are read from the ring by DMA (one read, or two where
// they wrap), kRingFetchCycles after the doorbell.
void HostInterface::fetch_ring(uint32_t qpn, bool rq, uint64_t db, uint64_t producer) {
  const QpTable::Qp& q = qps_.at(qpn);
  const uint32_t depth = q.depth(rq);
  const uint32_t count = uint32_t(producer - db);
  const uint32_t slot = uint32_t(db % depth);
  const uint32_t head = std::min(count, depth - slot);  // slots before the ring wraps
  Fetch f;
  f.first = db;
  f.count = count;
  f.data.resize(uint64_t(count) * kWqeBytes);
  f.pending = head < count ? 2 : 1;
  copy_[qpn].fetches[rq].push_back(std::move(f));
  const uint64_t epoch = q.ctx.epoch;
  const uint64_t base = q.ring_pa[rq];
  eq_.at(edge(kRingFetchCycles), [this, qpn, rq, epoch, base, db, slot, head, count] {
    mark_(CoreProbe::kWqeFetch, qpn, now_ps(), db | (rq ? ProbeEvent::kRq : 0));
    auto read = [&](uint64_t pa, uint32_t n, uint64_t off) {
      ++wqe_fetches_;
      dmac_.read(pa, n * kWqeBytes,
                 [this, qpn, rq, epoch, db, off](DmacStatus st, std::vector<uint8_t>&& d) {
                   if (!qps_.valid(qpn) || qps_.at(qpn).ctx.epoch != epoch)
                     return;  // reset or destroyed meanwhile
                   for (Fetch& f : copy_[qpn].fetches[rq]) {
                     if (f.first != db) continue;
                     if (st == DmacStatus::kOk)
                       std::copy(d.begin(), d.end(), f.data.begin() + int64_t(off));
                     else
                       f.failed = true;
                     --f.pending;
                     break;
                   }
                   deliver_fetches(qpn, rq);
                 });
    };
    read(base + uint64_t(slot) * kWqeBytes, head, 0);
    if (head < count) read(base, count - head, uint64_t(head) * kWqeBytes);
  });
}

// Fetches complete in any order; their WQEs enter the on-chip queue in doorbell order, each
// ⌈128 / datapath⌉ cycles after the one before (the MMIO mode's copy-in cost).
void HostInterface::deliver_fetches(uint32_t qpn, bool rq) {
  Copy& q = copy_[qpn];
  const QpCtx& ctx = qps_.at(qpn).ctx;
  const uint64_t per_wqe = wqe_copy_cycles() + mutation::extra(mutation::kHostIf);
  while (!q.fetches[rq].empty() && q.fetches[rq].front().pending == 0) {
    Fetch f = std::move(q.fetches[rq].front());
    q.fetches[rq].pop_front();
    mark_(CoreProbe::kWqeFetched, qpn, now_ps(), f.first | (rq ? ProbeEvent::kRq : 0));
    if (f.failed) {
      ++wqe_fetch_errors_;
      log::warn("{}: QP {} {} WQE fetch of {} WQEs from {} failed: QP to ERROR", name(), qpn,
                rq ? "RQ" : "SQ", f.count, f.first);
      q.fetches[rq].clear();
      if (ctx.state != abi::kQpError) {
        close_if_connected(qpn);
        const bool srq = ctx.is_srq;
        set_qp_state(qpn, abi::kQpError);
        push_event(srq ? abi::kEvSrqError : abi::kEvQpFatal, qpn);
      }
      return;
    }
    uint64_t t = std::max(edge(0), q.copy_free_ps[rq]);
    for (uint32_t j = 0; j < f.count; ++j) {
      t += per_wqe * clk_.period_ps;
      const Wqe w = decode_wqe(f.data.data() + uint64_t(j) * kWqeBytes);
      const uint64_t epoch = ctx.epoch, index = f.first + j;
      eq_.at(t, [this, qpn, rq, w, index, epoch] {
        if (qps_.at(qpn).ctx.epoch == epoch) queue_wqe(qpn, rq, w, index);
      });
    }
    q.copy_free_ps[rq] = t;
  }
}

void HostInterface::cq_doorbell(uint32_t qpn, uint64_t v) {
  if (!qps_.valid(qpn)) return;
  const uint32_t cqn = uint32_t(v >> 32) & 0xFFFFFF;
  const QpTable::Qp& q = qps_.at(qpn);
  if (cqn != q.ctx.scq && cqn != q.ctx.rcq) {
    log::warn("{}: CQ doorbell for CQ {} through QP {}, which does not use it: ignored", name(),
              cqn, qpn);
    return;
  }
  completion_.table().doorbell(cqn, uint32_t(v), (v & reg::kCqArm) != 0,
                               (v & reg::kCqSolicitedOnly) != 0);
}

// The completion engine found CQ cqn full (completion_engine.h): it is in error from now on,
// and so are the QPs that use it.
void HostInterface::cq_error(uint32_t cqn) {
  log::warn("{}: CQ {} overflowed ({} entries)", name(), cqn, completion_.table().cq(cqn).entries);
  push_event(abi::kEvCqError, cqn);
  for (uint32_t i = 0; i < qps_.size(); ++i) {
    const QpCtx& q = qps_.at(i).ctx;
    if (!q.valid || q.state == abi::kQpError || (q.scq != cqn && q.rcq != cqn)) continue;
    close_if_connected(i);
    set_qp_state(i, abi::kQpError);
    push_event(abi::kEvQpFatal, i);
  }
}

void HostInterface::close_if_connected(uint32_t qpn) {
  if (!qps_.valid(qpn)) return;
  const QpCtx& q = qps_.at(qpn).ctx;
  if (q.state == abi::kQpRtr || q.state == abi::kQpRts)
    out.close->send({qpn, q.peer_mac, q.peer_qpn});
}

std::string HostInterface::dump_state() const {
  return fmt::format("  {}: events pending {}\n", name(), events_.size());
}

}  // namespace rnic
