#include "models/rnic/qp_table.h"

#include <algorithm>

#include "models/rnic/abi/regs.h"

namespace rnic {

bool QpTable::create(const abi::CreateQp& c, const std::function<bool(uint32_t)>& cq_ok) {
  if (c.qpn >= q_.size() || q_[c.qpn].ctx.valid || !cq_ok(c.send_cqn) || !cq_ok(c.recv_cqn) ||
      c.sq_depth == 0 || c.rq_depth == 0 || c.sq_depth > max_wr_ || c.rq_depth > max_wr_)
    return false;
  Qp& q = q_[c.qpn];
  q = Qp{};
  q.ctx.valid = true;
  q.ctx.pd = c.pd;
  q.ctx.scq = c.send_cqn;
  q.ctx.rcq = c.recv_cqn;
  q.ctx.ird = ird_;
  q.ctx.ord = ord_;
  q.ctx.epoch = ++epoch_;
  q.sq_depth = c.sq_depth;
  q.rq_depth = c.rq_depth;
  q.host_rings = (c.flags & abi::CreateQp::kQpHostRings) != 0;
  q.ring_pa[0] = q.host_rings ? c.sq_ring : 0;
  q.ring_pa[1] = q.host_rings ? c.rq_ring : 0;
  return true;
}

bool QpTable::modify(const abi::ModifyQp& m, Change* change) {
  if (!valid(m.qpn)) return false;
  QpCtx& q = q_[m.qpn].ctx;
  using M = abi::ModifyQp;
  if (m.set & M::kPeerMac) q.peer_mac = m.peer_mac;
  if (m.set & M::kPeerQpn) q.peer_qpn = m.peer_qpn;
  if (m.set & M::kIrd) q.ird = std::min<uint32_t>(std::max<uint32_t>(m.ird, 1), ird_);
  if (m.set & M::kOrd) q.ord = std::min<uint32_t>(std::max<uint32_t>(m.ord, 1), ord_);
  if (m.set & M::kAccess) q.access = m.access;
  if (m.set & M::kMtu) q.mtu = m.mtu;
  if (m.set & M::kReadTimeout) q.read_timeout_ps = m.read_timeout_ns * 1000;
  *change = (m.set & M::kState) ? set_state(m.qpn, m.state) : Change{};
  return true;
}

bool QpTable::destroy(uint32_t qpn) {
  if (!valid(qpn)) return false;
  q_[qpn] = Qp{};
  return true;
}

QpTable::Change QpTable::set_state(uint32_t qpn, abi::QpState s) {
  Qp& q = q_[qpn];
  const abi::QpState old = q.ctx.state;
  q.ctx.state = s;
  if (s == abi::kQpReset) {
    const Qp keep = q;
    q = Qp{};
    q.ctx.valid = true;
    q.ctx.pd = keep.ctx.pd;
    q.ctx.scq = keep.ctx.scq;
    q.ctx.rcq = keep.ctx.rcq;
    q.ctx.ird = keep.ctx.ird;
    q.ctx.ord = keep.ctx.ord;
    q.ctx.epoch = ++epoch_;
    q.sq_depth = keep.sq_depth;
    q.rq_depth = keep.rq_depth;
    q.host_rings = keep.host_rings;
    q.ring_pa[0] = keep.ring_pa[0];
    q.ring_pa[1] = keep.ring_pa[1];
    return {true, false};
  }
  return {false, s == abi::kQpError && old != abi::kQpError};
}

bool QpTable::doorbell(uint32_t qpn, bool rq, uint64_t producer, uint64_t* first) {
  Qp& q = q_[qpn];
  uint64_t& db = q.db[rq];
  const uint64_t window = q.host_rings ? q.depth(rq) : reg::kWindowSlots;
  if (producer <= db || producer - db > window) return false;
  *first = db;
  db = producer;
  return true;
}

}  // namespace rnic
