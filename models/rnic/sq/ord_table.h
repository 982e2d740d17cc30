// The outbound RDMA Read Requests of each QP awaiting their responses (ORD), in request order,
// with how much of each has been answered. No SystemC. The SQ engine keeps one (to bound ORD
// and to name the WR a Terminate quotes); the RX engine keeps its own copy, fed by the SQ
// engine's ReadIssuedMsg, to match each Read Response segment (RFC 5040 §5.4: responses come in
// request order, each in order). Depth: the QP's ORD (core.ord at most).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "models/common/lazy_deque.h"

namespace rnic {

// An outbound Read Request, or an Atomic Request (atomic: its response's 8 bytes go to the sink,
// its request identifier is its MSN).
struct ReadOut {
  uint32_t sq_index = 0;  // the WR it belongs to
  uint32_t sink_stag = 0;
  uint64_t sink_to = 0;
  uint32_t len = 0;
  uint32_t msn = 0;
  uint32_t received = 0;
  bool atomic = false;
};

class OrdTable {
 public:
  explicit OrdTable(size_t qps) : q_(qps) {}

  void issued(uint32_t qpn, const ReadOut& r) { q_[qpn].push_back(r); }
  size_t size(uint32_t qpn) const { return q_[qpn].size(); }
  // The oldest outstanding request (nullptr: none).
  const ReadOut* oldest(uint32_t qpn) const { return q_[qpn].empty() ? nullptr : &q_[qpn].front(); }
  // Whether a Read Response segment (sink STag, TO, length; last: it ends the response) is
  // the next the oldest request expects, and if not, how it differs (as Linux siw tells them
  // apart: siw_rresp_check_ntoh).
  enum class Fit { kOk, kNoRead, kStag, kTo, kLength };
  Fit check(uint32_t qpn, uint32_t stag, uint64_t to, uint32_t len, bool last) const {
    if (q_[qpn].empty()) return Fit::kNoRead;
    const ReadOut& r = q_[qpn].front();
    if (r.atomic) return Fit::kNoRead;  // an Atomic Response is owed first
    if (r.sink_stag != stag) return Fit::kStag;
    if (to != r.sink_to + r.received) return Fit::kTo;
    if (r.received + len > r.len || (last && r.received + len != r.len)) return Fit::kLength;
    return Fit::kOk;
  }
  bool fits(uint32_t qpn, uint32_t stag, uint64_t to, uint32_t len, bool last = false) const {
    return check(qpn, stag, to, len, last) == Fit::kOk;
  }
  // Takes a fitting segment; with `last` the oldest request is answered and leaves: its WR's
  // SQ index, else -1.
  int64_t take(uint32_t qpn, uint32_t len, bool last) {
    ReadOut& r = q_[qpn].front();
    r.received += len;
    if (!last) return -1;
    const uint32_t index = r.sq_index;
    q_[qpn].pop_front();
    return index;
  }
  void clear(uint32_t qpn) { q_[qpn].clear(); }
  // Takes back take()s (RxLogic::undo): the oldest request as it was, put back if it left.
  void restore_oldest(uint32_t qpn, const ReadOut& r, bool left) {
    if (left)
      q_[qpn].push_front(r);
    else if (!q_[qpn].empty())
      q_[qpn].front().received = r.received;
  }

 private:
  std::vector<LazyDeque<ReadOut>> q_;
};

}  // namespace rnic
