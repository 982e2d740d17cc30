// The RX engine's receive state (DESIGN.md §3.3): per QP, the on-chip RQ (receive WQEs the
// host interface queues in doorbell order), the bytes the Send in progress has placed into the
// oldest one, and the MSNs the next untagged segments must carry (RFC 5041: queue 0, Sends; queue
// 1, Read Requests). No SystemC: the RX engine's decisions (rx_logic.h) check against it and
// move it on; the WQEs the host interface copies on chip are posted into it; a flush takes its
// WQEs, a reset of the QP starts it over. Queue depth: the QP's RQ depth, or an SRQ's depth
// (core.max_qp_wr at most; the library keeps within it); a QP bound to an SRQ holds one WQE at
// most (the one its message in progress claimed).
//
// A shared receive queue (SRQ) is a queue here like a QP's RQ, under its own number. A QP bound
// to one (bind) has no WQEs posted to it: when a Send's first segment finds the QP without a
// WQE, claim moves the SRQ's oldest into the QP's own queue, where it stays until the message
// takes it or the QP is flushed (so Sends arriving on several QPs at once never share a WQE).
// Completions of SRQ WQEs carry the SRQ's producer count as their index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "models/common/lazy_deque.h"
#include "models/rnic/abi/wqe.h"

namespace rnic {

class RecvLogic {
 public:
  struct Entry {
    Wqe wqe;
    uint32_t index = 0;  // producer count of this WQE
  };

  static constexpr uint32_t kNoSrq = ~0u;

  explicit RecvLogic(size_t qps) : q_(qps) {}

  // From now until its next reset, QP qpn takes its WQEs from SRQ srq (kNoSrq: its own).
  void bind(uint32_t qpn, uint32_t srq) { q_[qpn].srq = srq < q_.size() ? srq : kNoSrq; }
  uint32_t srq(uint32_t qpn) const { return q_[qpn].srq; }
  // A QP bound to an SRQ, holding no WQE and with no message in progress, takes the SRQ's
  // oldest WQE (if any) as its own.
  void claim(uint32_t qpn) {
    State& s = q_[qpn];
    if (s.srq == kNoSrq || !s.rq.empty() || s.off != 0) return;
    LazyDeque<Entry>& shared = q_[s.srq].rq;
    if (shared.empty()) return;
    s.rq.push_back(shared.front());
    shared.pop_front();
  }

  void post(uint32_t qpn, const Wqe& w, uint32_t index) { q_[qpn].rq.push_back({w, index}); }
  bool empty(uint32_t qpn) const { return q_[qpn].rq.empty(); }
  size_t depth(uint32_t qpn) const { return q_[qpn].rq.size(); }
  // The oldest receive WQE (only while !empty) and the bytes placed into it so far.
  const Entry& front(uint32_t qpn) const { return q_[qpn].rq.front(); }
  uint64_t placed(uint32_t qpn) const { return q_[qpn].off; }
  void place(uint32_t qpn, uint64_t bytes) { q_[qpn].off += bytes; }
  // The oldest WQE leaves with the bytes placed into it; `ends_message`: the Send's last
  // segment arrived (the next Send must carry the next MSN).
  Entry take(uint32_t qpn, uint64_t* bytes, bool ends_message) {
    State& s = q_[qpn];
    Entry e = s.rq.front();
    s.rq.pop_front();
    *bytes = s.off;
    s.off = 0;
    if (ends_message) ++s.send_msn;
    return e;
  }
  // MSNs expected: Sends (queue 0) and Read Requests (queue 1); a Read Request accepted
  // advances its queue.
  uint32_t send_msn(uint32_t qpn) const { return q_[qpn].send_msn; }
  uint32_t read_msn(uint32_t qpn) const { return q_[qpn].read_msn; }
  void read_accepted(uint32_t qpn) { ++q_[qpn].read_msn; }
  // A message of queue 0 that takes no receive WQE (a Send with Immediate's Immediate Data).
  void skip_msn(uint32_t qpn) { ++q_[qpn].send_msn; }
  // The requester's side of queue 3: the MSN the next Atomic Response must carry.
  uint32_t atomic_msn(uint32_t qpn) const { return q_[qpn].atomic_msn; }
  void atomic_answered(uint32_t qpn) { ++q_[qpn].atomic_msn; }
  // Flush: every queued WQE leaves (to complete with a flush status), the message in progress
  // is dropped; the MSNs stay.
  std::vector<Entry> flush(uint32_t qpn) {
    State& s = q_[qpn];
    std::vector<Entry> out(s.rq.begin(), s.rq.end());
    s.rq.clear();
    s.off = 0;
    return out;
  }
  // Takes back a segment's decision (RxLogic::undo): the WQE it took goes back to the head,
  // and the offset and MSNs are what they were.
  void push_front(uint32_t qpn, const Entry& e) { q_[qpn].rq.push_front(e); }
  void restore(uint32_t qpn, uint64_t off, uint32_t send_msn, uint32_t read_msn,
               uint32_t atomic_msn) {
    State& s = q_[qpn];
    s.off = off;
    s.send_msn = send_msn;
    s.read_msn = read_msn;
    s.atomic_msn = atomic_msn;
  }
  // The QP is created, destroyed or reset: all of it starts over (its SRQ binding too).
  void reset(uint32_t qpn) { q_[qpn] = State{}; }

 private:
  struct State {
    LazyDeque<Entry> rq;
    uint64_t off = 0;
    uint32_t send_msn = 1, read_msn = 1, atomic_msn = 1;
    uint32_t srq = kNoSrq;
  };
  std::vector<State> q_;
};

}  // namespace rnic
