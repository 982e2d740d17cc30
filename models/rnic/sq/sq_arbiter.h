// The SQ engine's arbitration (DESIGN.md §3.3), with no SystemC: a round robin over the QPs
// with work (a QP joins at the back when work arrives and is not already in it; after its turn
// it goes to the back while it has more, else it leaves), and per QP the alternation between
// its Read Responses and its SQ (the two take turns, so neither starves the other).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace rnic {

class SqArbiter {
 public:
  explicit SqArbiter(size_t qps) : q_(qps) {}

  // Work arrived for the QP: it joins the round robin unless it is in it.
  void activate(uint32_t qpn) {
    if (q_[qpn].in) return;
    q_[qpn].in = true;
    order_.push_back(qpn);
  }
  bool empty() const { return order_.empty(); }
  size_t size() const { return order_.size(); }
  // The QP whose turn it is; it leaves the round robin until requeue().
  uint32_t next() {
    const uint32_t qpn = order_.front();
    order_.pop_front();
    return qpn;
  }
  // After its turn: back at the end when it has more work, else out (until activate()).
  void requeue(uint32_t qpn, bool more) {
    if (more)
      order_.push_back(qpn);
    else
      q_[qpn].in = false;
  }
  // Which of the QP's two sources goes first on this turn: true for its Read Responses. Each
  // call flips it.
  bool responses_first(uint32_t qpn) {
    q_[qpn].responses_first = !q_[qpn].responses_first;
    return q_[qpn].responses_first;
  }
  // Whether the QP's Read Responses went first on its current turn (the last flip).
  bool responses_turn(uint32_t qpn) const { return q_[qpn].responses_first; }
  // The QP is reset: its alternation starts over (its place in the round robin stays).
  void reset(uint32_t qpn) { q_[qpn].responses_first = false; }

 private:
  struct Qp {
    bool in = false;
    bool responses_first = false;
  };
  std::vector<Qp> q_;
  std::deque<uint32_t> order_;
};

}  // namespace rnic
