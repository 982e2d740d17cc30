// RnicCore: the host interface's command processor, doorbells and async events.
#include <cerrno>
#include <cstring>

#include "models/common/log.h"
#include "models/rnic/rnic_core.h"

namespace rnic {

RnicCore::RnicCore(sc_core::sc_module_name n, const CoreConfig& cfg, const MacConfig& mac,
                   RnicDmac& dmac, RnicRegs& regs, efe::EfePassThrough& efe, StatRegistry& stats,
                   const RxParseFactory& rx_parse)
    : sc_core::sc_module(n),
      cfg_(cfg),
      mac_(mac),
      clk_(ClockDomain::mhz(cfg.clk_mhz)),
      dmac_(dmac),
      regs_(regs),
      efe_(efe),
      xlat_(size_t(cfg.stags), size_t(cfg.pbl_entries)),
      responses_(size_t(cfg.qps)),
      recv_(size_t(cfg.qps)),
      send_(size_t(cfg.qps)),
      rx_parse_(rx_parse("rx_parse", uint64_t(cfg.rx_parse_cycles), uint64_t(cfg.datapath_bytes),
                         ClockDomain::mhz(cfg.clk_mhz))),
      completion_("completion", cfg, dmac, regs, stats, name()),
      qps_(size_t(cfg.qps)),
      tx_segments_(stats.group(name()).counter("tx_segments", "segments", "DDP segments sent")),
      tx_payload_bytes_(stats.group(name()).counter("tx_payload_bytes", "B", "payload bytes sent")),
      tx_terminates_(stats.group(name()).counter("tx_terminates", "frames", "Terminates sent")),
      rx_segments_(stats.group(name()).counter("rx_segments", "segments", "DDP segments received")),
      rx_payload_bytes_(
          stats.group(name()).counter("rx_payload_bytes", "B", "payload bytes placed")),
      rx_dropped_(stats.group(name()).counter("rx_dropped", "segments",
                                              "segments for no QP, a QP in ERROR, or too short")),
      rx_terminates_(stats.group(name()).counter("rx_terminates", "frames", "Terminates received")),
      rx_errors_(stats.group(name()).counter("rx_errors", "segments",
                                             "segments answered with a Terminate")),
      commands_(stats.group(name()).counter("commands", "commands", "mailbox commands run")),
      events_raised_(stats.group(name()).counter("async_events", "events", "async events")),
      local_errors_(
          stats.group(name()).counter("local_errors", "WRs", "WRs completed with a local error")),
      rx_fifo_max_(
          stats.group(name()).counter("rx_fifo_max", "segments", "largest RX FIFO depth seen")),
      wqe_fetches_(stats.group(name()).counter("wqe_fetches", "reads",
                                               "DMA reads of WQEs from host-memory rings")),
      wqe_fetch_errors_(stats.group(name()).counter(
          "wqe_fetch_errors", "fetches", "WQE fetches that failed (the QP goes to ERROR)")) {
  regs_.set_listener(this);
  completion_.on_overflow = [this](uint32_t cqn) { cq_error(cqn); };
  completion_.on_cqe = [this](uint32_t cqn, uint64_t t) { mark(Probe::kCqe, cqn, t); };
  efe_.on_segment = [this](efe::EfePassThrough::RxSegment&& s) {
    RxItem it;
    it.seg = std::move(s);
    rx_push(std::move(it));
  };
  efe_.on_ack = [this](const eth::Mac& peer, uint32_t ack) {
    RxItem it;
    it.is_ack = true;
    it.peer = peer;
    it.ack = ack;
    rx_push(std::move(it));
  };
  efe_.on_space = [this] { tx_emit(); };
}

uint32_t RnicCore::qp_state(uint32_t qp) const {
  return qp < qps_.size() && qps_[qp].valid ? uint32_t(qps_[qp].state) : uint32_t(abi::kQpReset);
}

uint32_t RnicCore::pop_event() {
  if (events_.empty()) return 0;
  const uint32_t e = events_.front();
  events_.pop_front();
  return e;
}

void RnicCore::push_event(abi::AsyncEvent t, uint32_t num) {
  ++events_raised_;
  events_.push_back(1u << 31 | uint32_t(t) << 24 | (num & 0xFFFFFF));
  if (regs_.raise(reg::kIntAsyncEvent) && regs_.msi_addr())
    dmac_.msi(regs_.msi_addr(), kAsyncVector);
}

void RnicCore::command(uint32_t op, const uint32_t* args) {
  if (cmd_busy_) {
    log::warn("{}: command {} written while busy: ignored", name(), op);
    return;
  }
  cmd_busy_ = true;
  mark(Probe::kCommand, 0, now_ps());
  regs_.set_cmd_status(true, 0);
  std::vector<uint32_t> a(args, args + reg::kCmdArgCount);
  eq_.at(edge(uint64_t(cfg_.cmd_cycles)), [this, op, a] { run_command(op, a); });
}

void RnicCore::finish_command(uint32_t result, uint32_t value) {
  ++commands_;
  cmd_busy_ = false;
  mark(Probe::kCommandDone, 0, now_ps());
  regs_.set_cmd_status(false, result, value);
}

void RnicCore::run_command(uint32_t op, std::vector<uint32_t> args) {
  args.resize(reg::kCmdArgCount);
  const uint32_t* a = args.data();
  switch (op) {
    case abi::kCmdCreateCq: {
      const auto c = abi::CreateCq::decode(a);
      return finish_command(completion_.table().create(c.cqn, c.ring, c.entries) ? 0 : EINVAL);
    }
    case abi::kCmdDestroyCq: {
      const auto c = abi::DestroyCq::decode(a);
      return finish_command(completion_.table().destroy(c.cqn) ? 0 : EINVAL);
    }
    case abi::kCmdCreateQp: {
      const auto c = abi::CreateQp::decode(a);
      auto cq_ok = [this](uint32_t n) { return completion_.table().valid(n); };
      if (c.qpn >= qps_.size() || qps_[c.qpn].valid || !cq_ok(c.send_cqn) || !cq_ok(c.recv_cqn) ||
          c.sq_depth == 0 || c.rq_depth == 0 || c.sq_depth > uint64_t(cfg_.max_qp_wr) ||
          c.rq_depth > uint64_t(cfg_.max_qp_wr))
        return finish_command(EINVAL);
      Qp& q = qps_[c.qpn];
      q = Qp{};
      responses_.clear(c.qpn);
      recv_.reset(c.qpn);
      send_.reset(c.qpn);
      send_.reset(c.qpn);
      q.valid = true;
      q.pd = c.pd;
      q.scq = c.send_cqn;
      q.rcq = c.recv_cqn;
      q.sq_depth = c.sq_depth;
      q.rq_depth = c.rq_depth;
      q.ird = uint32_t(cfg_.ird);
      q.ord = uint32_t(cfg_.ord);
      q.host_rings = (c.flags & abi::CreateQp::kQpHostRings) != 0;
      q.ring_pa[0] = q.host_rings ? c.sq_ring : 0;
      q.ring_pa[1] = q.host_rings ? c.rq_ring : 0;
      q.epoch = ++epoch_seq_;
      return finish_command(0);
    }
    case abi::kCmdModifyQp: {
      const auto m = abi::ModifyQp::decode(a);
      if (m.qpn >= qps_.size() || !qps_[m.qpn].valid) return finish_command(EINVAL);
      Qp& q = qps_[m.qpn];
      using M = abi::ModifyQp;
      if (m.set & M::kPeerMac) q.peer_mac = m.peer_mac;
      if (m.set & M::kPeerQpn) q.peer_qpn = m.peer_qpn;
      if (m.set & M::kIrd)
        q.ird = std::min<uint32_t>(std::max<uint32_t>(m.ird, 1), uint32_t(cfg_.ird));
      if (m.set & M::kOrd)
        q.ord = std::min<uint32_t>(std::max<uint32_t>(m.ord, 1), uint32_t(cfg_.ord));
      if (m.set & M::kAccess) q.access = m.access;
      if (m.set & M::kState) set_qp_state(m.qpn, m.state);
      return finish_command(0);
    }
    case abi::kCmdDestroyQp: {
      const auto c = abi::DestroyQp::decode(a);
      if (c.qpn >= qps_.size() || !qps_[c.qpn].valid) return finish_command(EINVAL);
      qps_[c.qpn] = Qp{};
      responses_.clear(c.qpn);
      recv_.reset(c.qpn);
      return finish_command(0);
    }
    case abi::kCmdWriteStag: {
      const auto w = abi::WriteStag::decode(a);
      SmtEntry e;
      e.state = SmtEntry::State::kValid;
      e.key = w.key;
      e.type = SmtEntry::Type(w.type);
      e.access = w.access;
      e.pd = w.pd;
      e.base_to = w.base_to;
      e.length = w.length;
      e.pbl_first = w.pbl_first;
      e.pbl_count = w.pbl_count;
      e.page_shift = w.page_shift;
      e.first_page_offset = w.first_page_offset;
      e.phys_base = w.phys_base;
      return finish_command(xlat_.write_smt(w.index, e) ? 0 : EINVAL);
    }
    case abi::kCmdInvalidateStag: {
      const uint32_t stag = abi::InvalidateStag::decode(a).stag;
      return finish_command(xlat_.invalidate(stag) ? 0 : EINVAL);
    }
    case abi::kCmdFreeStag: {
      const auto f = abi::FreeStag::decode(a);
      return finish_command(xlat_.free(f.index) ? 0 : EINVAL);
    }
    case abi::kCmdLoadPbl: {
      const auto l = abi::LoadPbl::decode(a);
      const uint32_t first = l.first, count = l.count;
      const bool extents = l.extents;
      if (count == 0 || uint64_t(first) + count > xlat_.pblmt().size())
        return finish_command(EINVAL);
      const uint32_t stride = extents ? 16 : 8;
      dmac_.read(l.list, count * stride,
                 [this, first, count, extents, stride](DmacStatus st, std::vector<uint8_t>&& d) {
                   if (st != DmacStatus::kOk) return finish_command(EIO);
                   std::vector<PblEntry> entries(count);
                   for (uint32_t i = 0; i < count; ++i) {
                     std::memcpy(&entries[i].addr, d.data() + i * stride, 8);
                     if (extents) std::memcpy(&entries[i].len, d.data() + i * stride + 8, 8);
                   }
                   finish_command(xlat_.write_pbl(first, entries) ? 0 : EINVAL);
                 });
      return;
    }
    default:
      return finish_command(EINVAL);
  }
}

void RnicCore::set_qp_state(uint32_t qpn, abi::QpState s) {
  Qp& q = qps_[qpn];
  const abi::QpState old = q.state;
  q.state = s;
  if (s == abi::kQpReset) {
    const Qp keep = q;
    q = Qp{};
    responses_.clear(qpn);
    recv_.reset(qpn);
    send_.reset(qpn);
    q.valid = true;
    q.pd = keep.pd;
    q.scq = keep.scq;
    q.rcq = keep.rcq;
    q.sq_depth = keep.sq_depth;
    q.rq_depth = keep.rq_depth;
    q.ird = keep.ird;
    q.ord = keep.ord;
    q.in_active = keep.in_active;
    q.host_rings = keep.host_rings;
    q.ring_pa[0] = keep.ring_pa[0];
    q.ring_pa[1] = keep.ring_pa[1];
    q.epoch = ++epoch_seq_;
    return;
  }
  if (s == abi::kQpError && old != abi::kQpError) flush_qp(qpn);
  if (s == abi::kQpRts) activate(qpn);
}

void RnicCore::sq_doorbell(uint32_t qpn, uint64_t producer) { fetch_wqes(qpn, false, producer); }
void RnicCore::rq_doorbell(uint32_t qpn, uint64_t producer) { fetch_wqes(qpn, true, producer); }

void RnicCore::fetch_wqes(uint32_t qpn, bool rq, uint64_t producer) {
  if (qpn >= qps_.size() || !qps_[qpn].valid) return;
  Qp& q = qps_[qpn];
  mark(Probe::kDoorbell, qpn, now_ps());
  uint64_t& db = rq ? q.rq_db : q.sq_db;
  const uint64_t window = q.host_rings ? (rq ? q.rq_depth : q.sq_depth) : reg::kWindowSlots;
  if (producer <= db || producer - db > window) {
    log::warn("{}: QP {} {} doorbell {} after {}: ignored", name(), qpn, rq ? "RQ" : "SQ", producer,
              db);
    return;
  }
  if (q.host_rings) {
    fetch_ring(qpn, rq, producer);
    db = producer;
    return;
  }
  const uint64_t per_wqe = wqe_copy_cycles();
  for (uint64_t i = db; i < producer; ++i) {
    const Wqe w = decode_wqe(regs_.window_slot(qpn, rq, uint32_t(i)));
    eq_.at(edge(per_wqe * (i - db + 1)), [this, qpn, rq, w, i] { queue_wqe(qpn, rq, w, i); });
  }
  db = producer;
}

void RnicCore::queue_wqe(uint32_t qpn, bool rq, const Wqe& w, uint64_t index) {
  Qp& q = qps_[qpn];
  if (!q.valid) return;
  mark(Probe::kWqeQueued, qpn, now_ps());
  if (rq) {
    recv_.post(qpn, w, uint32_t(index));
    if (q.state == abi::kQpError) flush_qp(qpn);
    return;
  }
  send_.post(qpn, w, uint32_t(index));
  if (q.state == abi::kQpError)
    flush_qp(qpn);
  else
    activate(qpn);
}

// Host-ring mode: the WQEs [db, producer) are read from the ring by DMA (one read, or two where
// they wrap), kRingFetchCycles after the doorbell.
void RnicCore::fetch_ring(uint32_t qpn, bool rq, uint64_t producer) {
  Qp& q = qps_[qpn];
  const uint64_t db = rq ? q.rq_db : q.sq_db;
  const uint32_t depth = rq ? q.rq_depth : q.sq_depth;
  const uint32_t count = uint32_t(producer - db);
  const uint32_t slot = uint32_t(db % depth);
  const uint32_t head = std::min(count, depth - slot);  // slots before the ring wraps
  Fetch f;
  f.first = db;
  f.count = count;
  f.data.resize(uint64_t(count) * kWqeBytes);
  f.pending = head < count ? 2 : 1;
  q.fetches[rq].push_back(std::move(f));
  const uint64_t epoch = q.epoch;
  const uint64_t base = q.ring_pa[rq];
  eq_.at(edge(kRingFetchCycles), [this, qpn, rq, epoch, base, db, slot, head, count] {
    mark(Probe::kWqeFetch, qpn, now_ps());
    auto read = [&](uint64_t pa, uint32_t n, uint64_t off) {
      ++wqe_fetches_;
      dmac_.read(pa, n * kWqeBytes,
                 [this, qpn, rq, epoch, db, off](DmacStatus st, std::vector<uint8_t>&& d) {
                   Qp& q = qps_[qpn];
                   if (!q.valid || q.epoch != epoch) return;  // reset or destroyed meanwhile
                   for (Fetch& f : q.fetches[rq]) {
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
void RnicCore::deliver_fetches(uint32_t qpn, bool rq) {
  Qp& q = qps_[qpn];
  const uint64_t per_wqe = wqe_copy_cycles();
  while (!q.fetches[rq].empty() && q.fetches[rq].front().pending == 0) {
    Fetch f = std::move(q.fetches[rq].front());
    q.fetches[rq].pop_front();
    mark(Probe::kWqeFetched, qpn, now_ps());
    if (f.failed) {
      ++wqe_fetch_errors_;
      log::warn("{}: QP {} {} WQE fetch of {} WQEs from {} failed: QP to ERROR", name(), qpn,
                rq ? "RQ" : "SQ", f.count, f.first);
      q.fetches[rq].clear();
      if (q.state != abi::kQpError) {
        set_qp_state(qpn, abi::kQpError);
        push_event(abi::kEvQpFatal, qpn);
      }
      return;
    }
    uint64_t t = std::max(edge(0), q.copy_free_ps[rq]);
    for (uint32_t j = 0; j < f.count; ++j) {
      t += per_wqe * clk_.period_ps;
      const Wqe w = decode_wqe(f.data.data() + uint64_t(j) * kWqeBytes);
      const uint64_t epoch = q.epoch, index = f.first + j;
      eq_.at(t, [this, qpn, rq, w, index, epoch] {
        if (qps_[qpn].epoch == epoch) queue_wqe(qpn, rq, w, index);
      });
    }
    q.copy_free_ps[rq] = t;
  }
}

void RnicCore::cq_doorbell(uint32_t qpn, uint64_t v) {
  if (qpn >= qps_.size() || !qps_[qpn].valid) return;
  const uint32_t cqn = uint32_t(v >> 32) & 0xFFFFFF;
  const Qp& q = qps_[qpn];
  if (cqn != q.scq && cqn != q.rcq) {
    log::warn("{}: CQ doorbell for CQ {} through QP {}, which does not use it: ignored", name(),
              cqn, qpn);
    return;
  }
  completion_.table().doorbell(cqn, uint32_t(v), (v & reg::kCqArm) != 0,
                               (v & reg::kCqSolicitedOnly) != 0);
}

std::string RnicCore::dump_state() const {
  std::string s = fmt::format("  {}: tx queue {} ({} B buffered), rx queue {}{}, active QPs {}\n",
                              name(), tx_q_.size(), tx_buffered_, rx_q_.size(),
                              rx_stalled_ ? " (stalled)" : "", active_.size());
  for (size_t i = 0; i < qps_.size(); ++i) {
    const Qp& q = qps_[i];
    const uint32_t n = uint32_t(i);
    if (!q.valid || (send_.depth(n) == 0 && recv_.empty(n) && send_.reads_out(n) == 0)) continue;
    s += fmt::format("    QP {}: state {}, SQ {} (cursor {}), RQ {}, reads out {}, responses {}\n",
                     i, int(q.state), send_.depth(n), send_.cursor(n), recv_.depth(n),
                     send_.reads_out(n), responses_.depth(n));
  }
  return s;
}

}  // namespace rnic
