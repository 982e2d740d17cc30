#include "models/rnic/sq/send_queue.h"

namespace rnic {

namespace {
uint8_t cqe_opcode(uint8_t wqe_opcode) {
  switch (wqe_opcode) {
    case abi::kOpRdmaWrite:
    case abi::kOpRdmaWriteWithImm:
      return abi::kCqeRdmaWrite;
    case abi::kOpRdmaRead:
      return abi::kCqeRdmaRead;
    case abi::kOpAtomicCmpSwp:
      return abi::kCqeCompSwap;
    case abi::kOpAtomicFetchAdd:
      return abi::kCqeFetchAdd;
    case abi::kOpLocalInv:
      return abi::kCqeLocalInv;
    case abi::kOpFastRegMr:
      return abi::kCqeFastRegMr;
    default:
      return abi::kCqeSend;
  }
}
}  // namespace

void SendQueueLogic::post(uint32_t qpn, const Wqe& w, uint32_t index) {
  SqEntry e;
  e.wqe = w;
  e.index = index;
  q_[qpn].sq.push_back(e);
}

SqEntry* SendQueueLogic::current(uint32_t qpn) {
  State& s = q_[qpn];
  return s.cursor < s.sq.size() ? &s.sq[s.cursor] : nullptr;
}

bool SendQueueLogic::ready(uint32_t qpn, uint32_t ord) const {
  const State& s = q_[qpn];
  if (s.cursor >= s.sq.size()) return false;
  const SqEntry& e = s.sq[s.cursor];
  if (e.local_pending) return false;
  const bool ord_bound = e.wqe.opcode == abi::kOpRdmaRead || abi::is_atomic(e.wqe.opcode);
  return !(ord_bound && e.checked && s.reads.size() >= ord);
}

SqEntry* SendQueueLogic::find(uint32_t qpn, uint32_t index) {
  State& s = q_[qpn];
  if (s.sq.empty() || int32_t(index - s.sq.front().index) < 0) return nullptr;
  const size_t i = index - s.sq.front().index;
  return i < s.sq.size() ? &s.sq[i] : nullptr;
}

void SendQueueLogic::read_issued(uint32_t qpn, const ReadOut& r) {
  q_[qpn].reads.push_back(r);
  if (SqEntry* e = find(qpn, r.sq_index)) ++e->reads_left;
}

bool SendQueueLogic::read_placed(uint32_t qpn, uint32_t index) {
  SqEntry* e = find(qpn, index);
  return e && e->reads_left > 0 && --e->reads_left == 0 && e->sent;
}

std::vector<Cqe> SendQueueLogic::complete(uint32_t qpn) {
  State& s = q_[qpn];
  std::vector<Cqe> out;
  while (!s.sq.empty() && s.sq.front().done && s.cursor > 0) {
    const SqEntry& e = s.sq.front();
    if ((e.wqe.flags & abi::kWqeSignaled) || e.status != abi::kCqeSuccess) {
      Cqe c;
      c.wr_id = e.wqe.wr_id;
      c.qp_num = qpn;
      c.wqe_index = e.index;
      c.status = e.status;
      c.opcode = cqe_opcode(e.wqe.opcode);
      c.byte_len = uint32_t(e.wqe.total_length());
      out.push_back(c);
    }
    s.sq.pop_front();
    --s.cursor;
  }
  return out;
}

void SendQueueLogic::flush(uint32_t qpn) {
  State& s = q_[qpn];
  // Every WR not yet completed flushes, whether or not its operation was carried out: one
  // done behind an unfinished one waits for it (in-order completion) and is still outstanding
  // (as in verbs: the WRs after an error complete IBV_WC_WR_FLUSH_ERR). A WR that failed keeps
  // its own status.
  for (SqEntry& e : s.sq) {
    if (!e.done || e.status == abi::kCqeSuccess) e.status = abi::kCqeFlushed;
    e.done = true;
  }
  s.cursor = s.sq.size();
  s.progress.restart();
  s.reads.clear();
}

SqEntry* SendQueueLogic::named_by_terminate(uint32_t qpn, const rdmap::ReadRequest* rr,
                                            const rdmap::Segment* bad) {
  State& s = q_[qpn];
  SqEntry* hit = nullptr;
  if (rr) {
    for (const ReadOut& o : s.reads)
      if (o.sink_stag == rr->sink_stag && o.sink_to == rr->sink_to)
        for (SqEntry& e : s.sq)
          if (e.index == o.sq_index) hit = &e;
  } else if (bad && bad->tagged && bad->opcode == uint8_t(rdmap::Opcode::kWrite)) {
    for (SqEntry& e : s.sq)
      if (!e.done &&
          (e.wqe.opcode == abi::kOpRdmaWrite || e.wqe.opcode == abi::kOpRdmaWriteWithImm) &&
          e.wqe.rkey == bad->stag && bad->to >= e.wqe.remote_addr &&
          bad->to <= e.wqe.remote_addr + e.wqe.total_length()) {
        hit = &e;
        break;
      }
  } else if (bad && !bad->tagged && bad->qn == rdmap::kQnReadRequest) {
    for (const ReadOut& o : s.reads)  // a Read Request by its MSN
      if (o.msn == bad->msn)
        for (SqEntry& e : s.sq)
          if (e.index == o.sq_index) hit = &e;
  } else if (bad && !bad->tagged && bad->qn == rdmap::kQnSend) {
    for (SqEntry& e : s.sq)
      if (!e.done && e.wqe.opcode != abi::kOpRdmaRead && e.wqe.opcode != abi::kOpRdmaWrite &&
          !abi::is_atomic(e.wqe.opcode) && e.msn == bad->msn) {
        hit = &e;
        break;
      }
  }
  if (!hit)
    for (SqEntry& e : s.sq)
      if (!e.done) {
        hit = &e;
        break;
      }
  return hit;
}

}  // namespace rnic
