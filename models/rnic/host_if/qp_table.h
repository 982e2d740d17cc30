// The host interface's QP contexts and their state machine (DESIGN.md §3.3), with no SystemC:
// creation checked against the card's limits and the CQs in use, attribute changes, state
// changes and what each means for the engines (QpUpdate: reset, the queues start over; flush,
// the QP entered ERROR and its work completes flushed), destruction, and which doorbells are
// taken. The host interface (host_if.h) holds it, applies the firmware's writes (QpContextPort)
// and the doorbells through it, and tells the engines each change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "models/rnic/abi/commands.h"
#include "models/rnic/engine_msgs.h"

namespace rnic {

// The QP contexts' write port, as the firmware controller reaches it: each answers at once
// whether the write was taken (false: a QP number out of range or not in use, a CQ not in use,
// a depth above the card's).
class QpContextPort {
 public:
  virtual ~QpContextPort() = default;
  virtual bool create_qp(const abi::CreateQp& c) = 0;
  virtual bool modify_qp(const abi::ModifyQp& m) = 0;
  virtual bool destroy_qp(uint32_t qpn) = 0;
};

class QpTable {
 public:
  struct Qp {
    QpCtx ctx;
    uint32_t sq_depth = 0, rq_depth = 0;
    uint64_t db[2] = {0, 0};  // doorbell producer counts: 0 SQ, 1 RQ
    // Host-memory WQE rings (CREATE_QP flag kQpHostRings): ring physical bases (WQE i in slot
    // i % depth).
    bool host_rings = false;
    uint64_t ring_pa[2] = {0, 0};
    uint32_t depth(bool rq) const { return rq ? rq_depth : sq_depth; }
  };
  static constexpr uint32_t kNoCq = ~0u;  // an SRQ's CQs
  struct Change {
    bool reset = false, flush = false;
  };

  // qps contexts; queues of at most max_wr WQEs; IRD and ORD at most ird, ord.
  QpTable(size_t qps, uint32_t max_wr, uint32_t ird, uint32_t ord)
      : q_(qps), max_wr_(max_wr), ird_(ird), ord_(ord) {}

  // False, changing nothing, when the QP number is out of range or in use, a CQ is not in use
  // (cq_ok), or a queue depth is 0 or above max_wr. A new QP is in RESET with IRD and ORD at
  // the card's most. An SRQ (kQpSrq) has an RQ only; a QP that uses one (kQpUsesSrq) names a
  // valid SRQ of its PD and has no RQ of its own.
  bool create(const abi::CreateQp& c, const std::function<bool(uint32_t cqn)>& cq_ok);
  // The attributes `m.set` names (IRD and ORD clamped to [1, the card's most]) and then its
  // state; false for a QP not in use.
  // False for an SRQ: it has no state to change.
  bool modify(const abi::ModifyQp& m, Change* change);
  // False for a QP not in use, or an SRQ that a QP still uses.
  bool destroy(uint32_t qpn);
  // Moves the QP to s. RESET keeps its PD, CQs, queue depths, IRD/ORD and rings and starts
  // the rest over (a new epoch); ERROR from another state flushes.
  Change set_state(uint32_t qpn, abi::QpState s);
  // A doorbell with the producer count `producer`: true with the first new WQE's count, and the
  // doorbell count moved on; false (ignored) when it is not newer or more than the queue can
  // hold were posted (the BAR2 window's slots, or the ring's depth).
  // An SRQ's SQ doorbell is ignored.
  bool doorbell(uint32_t qpn, bool rq, uint64_t producer, uint64_t* first);

  bool valid(uint32_t qpn) const { return qpn < q_.size() && q_[qpn].ctx.valid; }
  const Qp& at(uint32_t qpn) const { return q_[qpn]; }
  size_t size() const { return q_.size(); }

 private:
  std::vector<Qp> q_;
  uint32_t max_wr_, ird_, ord_;
  uint64_t epoch_ = 0;
};

}  // namespace rnic
