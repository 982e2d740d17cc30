#include "models/rnic/host_if/qp_table.h"

#include <algorithm>

#include "models/rnic/abi/regs.h"

namespace rnic {

bool QpTable::create(const abi::CreateQp& c, const std::function<bool(uint32_t)>& cq_ok) {
  using C = abi::CreateQp;
  const bool is_srq = (c.flags & C::kQpSrq) != 0, uses_srq = (c.flags & C::kQpUsesSrq) != 0;
  if (c.qpn >= q_.size() || q_[c.qpn].ctx.valid || c.rq_depth > max_wr_ || (is_srq && uses_srq))
    return false;
  if (is_srq) {
    if (c.rq_depth == 0 || c.sq_depth != 0) return false;
  } else if (!cq_ok(c.send_cqn) || !cq_ok(c.recv_cqn) || c.sq_depth == 0 || c.sq_depth > max_wr_ ||
             (uses_srq ? c.rq_depth != 0 : c.rq_depth == 0)) {
    return false;
  }
  if (uses_srq &&
      (!valid(c.srq) || !q_[c.srq].ctx.is_srq || q_[c.srq].ctx.pd != c.pd || c.srq == c.qpn))
    return false;
  Qp& q = q_[c.qpn];
  q = Qp{};
  q.ctx.valid = true;
  q.ctx.pd = c.pd;
  // An SRQ completes nothing itself: no CQ doorbell names its CQs.
  q.ctx.scq = is_srq ? kNoCq : c.send_cqn;
  q.ctx.rcq = is_srq ? kNoCq : c.recv_cqn;
  q.ctx.ird = ird_;
  q.ctx.ord = ord_;
  q.ctx.epoch = ++epoch_;
  q.ctx.is_srq = is_srq;
  q.ctx.srq = uses_srq ? c.srq : QpCtx::kNoSrq;
  q.sq_depth = c.sq_depth;
  q.rq_depth = c.rq_depth;
  q.host_rings = (c.flags & abi::CreateQp::kQpHostRings) != 0;
  q.ring_pa[0] = q.host_rings ? c.sq_ring : 0;
  q.ring_pa[1] = q.host_rings ? c.rq_ring : 0;
  return true;
}

bool QpTable::modify(const abi::ModifyQp& m, Change* change) {
  if (!valid(m.qpn) || q_[m.qpn].ctx.is_srq) return false;
  QpCtx& q = q_[m.qpn].ctx;
  using M = abi::ModifyQp;
  if (m.set & M::kPeerMac) q.peer_mac = m.peer_mac;
  if (m.set & M::kPeerQpn) q.peer_qpn = m.peer_qpn;
  if (m.set & M::kIrd) q.ird = std::min<uint32_t>(std::max<uint32_t>(m.ird, 1), ird_);
  if (m.set & M::kOrd) q.ord = std::min<uint32_t>(std::max<uint32_t>(m.ord, 1), ord_);
  if (m.set & M::kAccess) q.access = m.access;
  if (m.set & M::kMtu) q.mtu = m.mtu;
  if (m.set & M::kReadTimeout) q.read_timeout_ps = m.read_timeout_ns * 1000;
  if (m.set & M::kRole) q.role = m.role;
  if (m.set & M::kPorts) {
    q.local_port = m.local_port;
    q.remote_port = m.remote_port;
  }
  *change = (m.set & M::kState) ? set_state(m.qpn, m.state) : Change{};
  return true;
}

bool QpTable::destroy(uint32_t qpn) {
  if (!valid(qpn)) return false;
  if (q_[qpn].ctx.is_srq) {
    for (const Qp& q : q_)
      if (q.ctx.valid && q.ctx.srq == qpn) return false;  // a QP still takes its WQEs
  }
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
    q.ctx.srq = keep.ctx.srq;
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
  if (!rq && q.ctx.is_srq) return false;  // an SRQ has no send queue
  if (producer <= db || producer - db > window) return false;
  *first = db;
  db = producer;
  return true;
}

}  // namespace rnic
