// The read-response engine's state (DESIGN.md §3.3): per QP, the inbound Read Requests that
// passed their checks, answered in order (RFC 5040: responses in the order of the requests),
// each as Read Response segments of at most the path's payload, and the Atomic Requests among
// them (RFC 7306: they share queue 1 and IRD), each answered by one Atomic Response in its turn.
// No SystemC: the read-response
// engine (read_response_engine.h) accepts into it the requests the RX engine passes and cuts
// the segments it offers to the SQ engine's arbiter.
// Queue depth: the QP's IRD (core.ird at most) requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "models/common/lazy_deque.h"
#include "models/rnic/ddp/ddp_rdmap.h"

namespace rnic {

class ReadResponseLogic {
 public:
  explicit ReadResponseLogic(size_t qps) : q_(qps) {}

  // Whether the QP holds `ird` requests already (a new one is an IRD violation).
  bool full(uint32_t qpn, uint32_t ird) const { return q_[qpn].size() >= ird; }
  // A request and the MSN it came with (quoted by a Terminate if its response fails).
  void accept(uint32_t qpn, const rdmap::ReadRequest& rr, uint32_t msn = 0) {
    q_[qpn].push_back({rr, 0, msn, false, {}});
  }
  void accept_atomic(uint32_t qpn, const rdmap::AtomicRequest& a, uint32_t msn) {
    q_[qpn].push_back({{}, 0, msn, true, a});
  }
  bool pending(uint32_t qpn) const { return !q_[qpn].empty(); }
  size_t depth(uint32_t qpn) const { return q_[qpn].size(); }

  struct Segment {
    rdmap::ReadRequest rr;  // the request it answers
    uint64_t off = 0;       // its first byte within the request
    uint32_t len = 0;
    bool last = false;    // the request's last segment (it leaves the queue)
    uint32_t msn = 0;     // the request's MSN
    bool atomic = false;  // the Atomic Response to `ar` (no payload of the request's)
    rdmap::AtomicRequest ar;
  };
  // The next segment of the QP's oldest request (at most max_payload bytes); advances past it.
  // Only while pending().
  Segment next(uint32_t qpn, uint32_t max_payload) {
    Entry& e = q_[qpn].front();
    Segment s;
    s.msn = e.msn;
    if (e.atomic) {
      s.atomic = true;
      s.ar = e.ar;
      s.last = true;
      q_[qpn].pop_front();
      return s;
    }
    s.rr = e.rr;
    s.off = e.off;
    s.len = uint32_t(std::min<uint64_t>(e.rr.size - e.off, max_payload));
    s.last = e.off + s.len == e.rr.size;
    e.off += s.len;
    if (s.last) q_[qpn].pop_front();
    return s;
  }
  // The QP's requests are dropped (flush to ERROR, reset, create, destroy).
  void clear(uint32_t qpn) { q_[qpn].clear(); }

 private:
  struct Entry {
    rdmap::ReadRequest rr;
    uint64_t off = 0;
    uint32_t msn = 0;
    bool atomic = false;
    rdmap::AtomicRequest ar;
  };
  std::vector<LazyDeque<Entry>> q_;
};

}  // namespace rnic
