// RnicCore: the completion engine: in-order SQ completion, flushes, CQEs into the host CQ
// ring with the owner (phase) bit, overflow, MSI-X for armed CQs.
#include "models/common/log.h"
#include "models/rnic/rnic_core.h"

namespace rnic {

namespace {
uint8_t wc_opcode(uint8_t wr_opcode) {
  switch (wr_opcode) {
    case abi::kOpRdmaWrite:
      return abi::kCqeRdmaWrite;
    case abi::kOpRdmaRead:
      return abi::kCqeRdmaRead;
    default:
      return abi::kCqeSend;
  }
}
}  // namespace

void RnicCore::try_complete(uint32_t qpn) {
  Qp& q = qps_[qpn];
  while (!q.sq.empty() && q.sq.front().done && q.cursor > 0) {
    const SqEntry& e = q.sq.front();
    if ((e.wqe.flags & abi::kWqeSignaled) || e.status != abi::kCqeSuccess) {
      Cqe c;
      c.wr_id = e.wqe.wr_id;
      c.qp_num = qpn;
      c.wqe_index = e.index;
      c.status = e.status;
      c.opcode = wc_opcode(e.wqe.opcode);
      c.byte_len = uint32_t(e.wqe.total_length());
      post_cqe(q.scq, c);
    }
    q.sq.pop_front();
    --q.cursor;
  }
}

void RnicCore::flush_qp(uint32_t qpn) {
  Qp& q = qps_[qpn];
  for (SqEntry& e : q.sq)
    if (!e.done) {
      e.done = true;
      e.status = abi::kCqeFlushed;
    }
  q.cursor = q.sq.size();
  q.seg_off = 0;
  q.seg_sge = 0;
  q.reads_out.clear();
  q.responses.clear();
  try_complete(qpn);
  for (const RqEntry& r : q.rq) {
    Cqe c;
    c.wr_id = r.wqe.wr_id;
    c.qp_num = qpn;
    c.wqe_index = r.index;
    c.status = abi::kCqeFlushed;
    c.opcode = abi::kCqeRecv;
    post_cqe(q.rcq, c);
  }
  q.rq.clear();
  q.recv_off = 0;
}

void RnicCore::post_cqe(uint32_t cqn, Cqe c) {
  if (cqn >= cqs_.size()) return;
  Cq& cq = cqs_[cqn];
  if (!cq.valid || cq.error) return;
  if (cq.pi - cq.ci >= cq.entries) return cq_error(cqn);
  const uint64_t slot = cq.pi % cq.entries;
  c.owner = ((cq.pi / cq.entries) & 1) ? 0 : 1;
  ++cq.pi;
  const uint64_t t = std::max(edge(uint64_t(cfg_.cqe_cycles)),
                              cqe_next_ps_ + cycles_ps(uint64_t(cfg_.cqe_cycles)));
  cqe_next_ps_ = t;
  eq_.at(t, [this, cqn, slot, c] {
    Cq& cq = cqs_[cqn];
    if (!cq.valid) return;
    mark(Probe::kCqe, cqn, now_ps());
    std::vector<uint8_t> d(kCqeBytes);
    encode(c, d.data());
    dmac_.write(cq.base + slot * kCqeBytes, std::move(d));
    ++cqes_;
    if (cq.armed && (!cq.solicited_only || c.solicited || c.status != abi::kCqeSuccess)) {
      cq.armed = false;
      if (regs_.raise(reg::kIntCompletion) && regs_.msi_addr())
        dmac_.msi(regs_.msi_addr(), kAsyncVector + 1 + cqn);
    }
  });
}

void RnicCore::cq_error(uint32_t cqn) {
  Cq& cq = cqs_[cqn];
  cq.error = true;
  ++cq_overflows_;
  log::warn("{}: CQ {} overflowed ({} entries)", name(), cqn, cq.entries);
  push_event(abi::kEvCqError, cqn);
  // Its QPs go to ERROR once the engine step that overflowed it has finished (same time):
  // post_cqe is called from inside the engines' loops over their queues, which a flush empties.
  eq_.at(now_ps(), [this, cqn] {
    for (uint32_t i = 0; i < qps_.size(); ++i) {
      Qp& q = qps_[i];
      if (!q.valid || q.state == abi::kQpError || (q.scq != cqn && q.rcq != cqn)) continue;
      set_qp_state(i, abi::kQpError);
      push_event(abi::kEvQpFatal, i);
    }
  });
}

}  // namespace rnic
