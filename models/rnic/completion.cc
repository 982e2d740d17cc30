// RnicCore: in-order SQ completion and flushes, handed to the completion engine
// (completion_engine.h) as CQEs; what a CQ overflow does to its QPs.
#include "models/common/log.h"
#include "models/rnic/rnic_core.h"

namespace rnic {

void RnicCore::try_complete(uint32_t qpn) {
  for (const Cqe& c : send_.complete(qpn)) post_cqe(qps_[qpn].scq, c);
}

void RnicCore::flush_qp(uint32_t qpn) {
  Qp& q = qps_[qpn];
  send_.flush(qpn);
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
