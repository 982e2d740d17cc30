// The SQ engine's queue state (DESIGN.md §3.3): per QP, the on-chip SQ (WQEs posted and not yet
// completed, in order, with the segmentation cursor), where segmentation is in the current WQE
// (sq_segmenter.h), and the outbound RDMA Read Requests awaiting their responses (ORD). No
// SystemC: the SQ engine (sq_engine.h) issues from it and applies what the RX engine tells it
// (acknowledgements, Reads answered, Terminates); it decides in-order completion (the CQEs owed,
// RFC 5040: WRs complete in the order they were posted), which WR a Terminate names, and
// flushes.
// Queue depths: the QP's SQ depth (core.max_qp_wr at most; the library keeps within it) and
// its ORD outstanding Read Requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "models/common/lazy_deque.h"
#include "models/rnic/abi/codes.h"
#include "models/rnic/abi/wqe.h"
#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/rnic/sq/ord_table.h"
#include "models/rnic/sq/sq_segmenter.h"

namespace rnic {

struct SqEntry {
  Wqe wqe;
  uint32_t index = 0;  // producer count of this WQE
  bool checked = false;
  bool local_pending = false;  // a local operation (fast registration, local invalidate) at the
                               // firmware: the WQEs behind it wait
  bool sent = false;           // every segment / request handed to the EFE
  bool done = false;
  uint8_t status = abi::kCqeSuccess;
  uint32_t reads_left = 0;  // RDMA Read: requests not yet answered in full
  uint32_t msn = 0;         // Send: its MSN; Read: the first request's MSN
};

class SendQueueLogic {
 public:
  explicit SendQueueLogic(size_t qps) : q_(qps) {}

  void post(uint32_t qpn, const Wqe& w, uint32_t index);
  // The WQE the engine segments next (nullptr when every posted WQE is issued), and moving on.
  SqEntry* current(uint32_t qpn);
  void advance(uint32_t qpn) { ++q_[qpn].cursor; }
  // Whether the engine has something to issue: a WQE, and for a checked RDMA Read or atomic a
  // free ORD slot.
  bool ready(uint32_t qpn, uint32_t ord) const;
  SqProgress& progress(uint32_t qpn) { return q_[qpn].progress; }
  // The entry of WQE `index`, or nullptr when it has completed already.
  SqEntry* find(uint32_t qpn, uint32_t index);

  // Outbound Read Requests (ORD). read_issued: a request of WR r.sq_index left (it counts
  // against ORD until read_slot_free); read_slot_free: the oldest request's last response
  // passed its checks; read_placed: a request of WR `index` has its data placed. Returns true
  // when that WR is thereby done (every request issued and placed).
  size_t reads_out(uint32_t qpn) const { return q_[qpn].reads.size(); }
  void read_issued(uint32_t qpn, const ReadOut& r);
  void read_slot_free(uint32_t qpn) {
    if (!q_[qpn].reads.empty()) q_[qpn].reads.pop_front();
  }
  bool read_placed(uint32_t qpn, uint32_t index);

  // In order: the WRs at the head that are done leave the SQ; the CQEs owed for them
  // (signalled, or completed with an error).
  std::vector<Cqe> complete(uint32_t qpn);
  // The QP went to ERROR: every WR not yet completed is flushed (a failed one keeps its status),
  // segmentation and ORD are abandoned.
  void flush(uint32_t qpn);
  // The WR a received Terminate names: a Read Request by its sink STag and TO (rr), an RDMA
  // Write by its STag and a TO inside it, a Send by its MSN (bad: the header the Terminate
  // carries); otherwise the oldest WR not yet done. nullptr when none is left.
  SqEntry* named_by_terminate(uint32_t qpn, const rdmap::ReadRequest* rr,
                              const rdmap::Segment* bad);
  // The QP is created, destroyed or reset.
  void reset(uint32_t qpn) { q_[qpn] = State{}; }

  size_t depth(uint32_t qpn) const { return q_[qpn].sq.size(); }
  size_t cursor(uint32_t qpn) const { return q_[qpn].cursor; }

 private:
  struct State {
    LazyDeque<SqEntry> sq;  // posted, not yet completed, in order
    size_t cursor = 0;      // the entry being segmented (index into sq)
    SqProgress progress;
    LazyDeque<ReadOut> reads;
  };
  std::vector<State> q_;
};

}  // namespace rnic
