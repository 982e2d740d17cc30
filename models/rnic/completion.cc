// RnicCore: in-order SQ completion and flushes, handed to the completion engine
// (completion_engine.h) as CQEs; what a CQ overflow does to its QPs.
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
  q.progress.restart();
  q.reads_out.clear();
  responses_.clear(qpn);
  try_complete(qpn);
  for (const RecvLogic::Entry& r : recv_.flush(qpn)) {
    Cqe c;
    c.wr_id = r.wqe.wr_id;
    c.qp_num = qpn;
    c.wqe_index = r.index;
    c.status = abi::kCqeFlushed;
    c.opcode = abi::kCqeRecv;
    post_cqe(q.rcq, c);
  }
}

void RnicCore::post_cqe(uint32_t cqn, Cqe c) { completion_.post(cqn, c); }

// The completion engine found CQ cqn full (completion_engine.h): it is in error from now on.
void RnicCore::cq_error(uint32_t cqn) {
  log::warn("{}: CQ {} overflowed ({} entries)", name(), cqn, completion_.table().cq(cqn).entries);
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
