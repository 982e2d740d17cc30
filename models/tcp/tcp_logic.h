// The TCP engine's decisions, with no SystemC and no bytes (the engine that will hold the bytes
// and the time moves them): one connection's sender and receiver over sequence numbers.
//
// MPA puts one FPDU in one TCP segment, so the sender works in whole segments: each queued
// segment keeps its boundaries through every retransmission.
//
// Sender (TcpSender): slow start and congestion avoidance counting bytes acknowledged (RFC 5681,
// RFC 3465 with L = 2 segments), the initial window of RFC 6928 (10 segments), fast retransmit
// after three duplicate ACKs and NewReno recovery (RFC 6582: partial ACKs retransmit the next
// hole and stay in recovery), SACK (RFC 2018, RFC 6675's idea in its simplest form: in
// recovery, holes below the highest SACKed segment are retransmitted before new data, a SACKed
// segment never again), the retransmission timer of RFC 6298 (SRTT, RTTVAR, RTO = SRTT +
// max(G, 4 RTTVAR) bounded by a datacenter minimum and a maximum; Karn's rule without
// timestamps, every ACK's echo with them; exponential back-off per expiry; cwnd to one segment
// and everything outstanding resent), a retry budget in time, ECN (RFC 3168: an ECE halves the
// window at most once a round trip, the next segment carries CWR) or DCTCP (RFC 8257: alpha
// from the fraction of bytes acknowledged with ECE per window of data, the window cut by
// alpha / 2 once a window), and the peer's window.
//
// Receiver (TcpReceiver): in-order delivery, out-of-order segments kept (their ranges; the
// engine keeps the bytes) inside the receive buffer past rcv_nxt, SACK blocks (the most recent
// first, at most three), an ACK at once for an out-of-order or duplicate segment, for a segment
// that fills a hole, for the second full segment since the last ACK (RFC 9293's delayed ACK), and
// for a change of the CE state (DCTCP's rule); otherwise one after the delayed-ACK time. ECE echoes
// CE: classic ECN holds it until a CWR, DCTCP sets it exactly on the ACKs of CE-marked segments.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace rnic::tcp {

// Sequence-number comparisons modulo 2^32 (RFC 9293 §3.4).
inline bool seq_lt(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }
inline bool seq_le(uint32_t a, uint32_t b) { return int32_t(a - b) <= 0; }

struct TcpLogicConfig {
  uint32_t mss = 1448;                // B of payload a segment carries at most (MSS less options)
  uint32_t init_segments = 10;        // initial congestion window (RFC 6928)
  uint64_t rto_min_ps = 200'000'000;  // 200 us: a datacenter floor (RFC 6298 asks 1 s)
  uint64_t rto_initial_ps = 1'000'000'000;     // 1 ms before the first RTT sample
  uint64_t rto_max_ps = 100'000'000'000;       // 100 ms
  uint64_t clock_ps = 1'000'000;               // G: the timer's granularity (1 us)
  uint64_t retry_budget_ps = 500'000'000'000;  // 500 ms of expiries without progress: failed
  uint32_t dupack_threshold = 3;
  bool sack = true;
  bool dctcp = false;         // ECN's reaction: DCTCP (RFC 8257) instead of halving (RFC 3168)
  double dctcp_g = 1.0 / 16;  // DCTCP's gain for alpha
  uint64_t delack_ps = 40'000'000;  // 40 us: a receiver's delayed-ACK time
  uint32_t rcv_buffer = 4 << 20;    // B a receiver keeps out of order
};

struct SackBlock {
  uint32_t left = 0, right = 0;  // [left, right)
  bool operator==(const SackBlock& o) const { return left == o.left && right == o.right; }
};

class TcpSender {
 public:
  TcpSender(const TcpLogicConfig& cfg, uint32_t iss);

  // Queues one segment of len bytes (an FPDU) after those queued before.
  void queue(uint32_t len);

  struct Tx {
    uint32_t seq = 0, len = 0;
    bool retransmit = false;
    bool cwr = false;  // the segment carries CWR (the window was cut for an ECE)
  };
  // The next segment to send now, if the windows allow one: a retransmission first.
  std::optional<Tx> next();
  // It went out at `now` (the RTO runs from the first segment outstanding).
  void sent(const Tx& t, uint64_t now);

  struct Ack {
    uint32_t ack = 0;
    uint32_t window = 0;  // B, already scaled
    std::vector<SackBlock> sack;
    bool ece = false;
    // The round trip the timestamp echo measures (0: none; then Karn's rule applies).
    uint64_t rtt_ps = 0;
  };
  // An acknowledgement at `now`. Returns the bytes newly acknowledged (cumulatively).
  uint32_t on_ack(const Ack& a, uint64_t now);

  // When the retransmission timer expires (UINT64_MAX: nothing outstanding).
  uint64_t rto_deadline() const { return outstanding() ? rto_at_ : UINT64_MAX; }
  // It expired at `now`: back-off, cwnd to one segment, everything outstanding to resend.
  // Returns false once the retry budget is spent (the connection has failed).
  bool on_rto(uint64_t now);

  uint32_t una() const { return una_; }
  uint32_t nxt() const { return nxt_; }
  uint32_t end() const { return end_; }  // after the last queued byte
  uint32_t in_flight() const;            // bytes sent, not acknowledged and not SACKed
  bool outstanding() const { return una_ != nxt_; }
  uint64_t cwnd() const { return cwnd_; }
  uint64_t ssthresh() const { return ssthresh_; }
  uint64_t rto() const { return rto_; }
  uint64_t srtt() const { return srtt_; }
  bool in_recovery() const { return recovery_; }
  double alpha() const { return alpha_; }
  uint64_t retransmits() const { return retransmits_; }

 private:
  struct Seg {
    uint32_t seq, len;
    bool sacked = false;
    bool lost = false;     // to be retransmitted
    uint64_t sent_ps = 0;  // first transmission (Karn: no sample from a retransmitted one)
    bool timed = false;    // sent_ps holds its first transmission
    bool retransmitted = false;
  };
  Seg* find(uint32_t seq);
  void rtt_sample(uint64_t r);
  void arm(uint64_t now) { rto_at_ = now + rto_; }
  void enter_recovery();
  void react_to_ece(uint32_t acked, bool ece);

  TcpLogicConfig cfg_;
  std::deque<Seg> segs_;  // from una_, in order
  uint32_t una_, nxt_, end_;
  uint64_t cwnd_, ssthresh_ = UINT64_MAX;
  uint32_t rwnd_;
  uint32_t dupacks_ = 0;
  bool recovery_ = false;
  uint32_t recover_ = 0;  // nxt when recovery began (RFC 6582)
  // The retransmission that starts recovery or answers a partial ACK goes whatever the window
  // (RFC 5681's fast retransmit, RFC 6582's partial ACK).
  bool rtx_now_ = false;
  uint64_t bytes_acked_ = 0;  // RFC 3465's count in congestion avoidance
  uint64_t srtt_ = 0, rttvar_ = 0, rto_;
  uint64_t rto_at_ = UINT64_MAX;
  uint64_t first_expiry_ps_ = UINT64_MAX;  // the first expiry without progress since
  uint64_t retransmits_ = 0;
  // ECN
  bool cwr_pending_ = false;
  uint32_t ecn_until_ = 0;  // no new cut for an ECE before this is acknowledged
  // DCTCP: bytes acknowledged, and of those with ECE, in the current window of data
  double alpha_ = 1.0;
  uint64_t win_acked_ = 0, win_marked_ = 0;
  uint32_t win_end_ = 0;
};

class TcpReceiver {
 public:
  TcpReceiver(const TcpLogicConfig& cfg, uint32_t irs);

  struct Rx {
    bool accepted = false;  // in the window and not all a duplicate
    // The ranges now in order for the engine to deliver (the segment itself, and any kept
    // out-of-order segments it joined).
    std::vector<std::pair<uint32_t, uint32_t>> deliver;  // (seq, len)
    bool ack_now = false;
  };
  // A data segment [seq, seq + len), CE-marked or not, at `now`.
  Rx on_data(uint32_t seq, uint32_t len, bool ce, uint64_t now);

  uint32_t rcv_nxt() const { return nxt_; }
  // Data from seq on, taken in order and never acknowledged, is taken back (the engines refused
  // it): rcv_nxt goes back to seq. What is kept out of order stays.
  void rewind(uint32_t seq) {
    if (seq_lt(seq, nxt_)) nxt_ = seq;
  }
  std::vector<SackBlock> sack_blocks() const;
  // B the receiver takes beyond rcv_nxt: the receive buffer, which holds only what arrived out
  // of order (the engine places in-order data at once), so the right edge never moves left.
  uint32_t window() const { return cfg_.rcv_buffer; }
  bool ece() const { return ece_; }
  // When a delayed ACK is due (UINT64_MAX: none pending).
  uint64_t delack_deadline() const { return delack_at_; }
  // An ACK went out (with ece()): the pending count starts over. cwr: a CWR arrived (classic
  // ECN stops echoing).
  void acked();
  void on_cwr() {
    if (!cfg_.dctcp) ece_ = false;
  }

 private:
  TcpLogicConfig cfg_;
  uint32_t nxt_;
  std::map<uint32_t, uint32_t> ooo_;  // seq -> len, kept out of order
  std::deque<SackBlock> recent_;      // most recent first
  uint32_t unacked_full_ = 0;
  uint64_t delack_at_ = UINT64_MAX;
  bool ece_ = false;
  bool ce_state_ = false;  // DCTCP: the CE state of the last segment
};

}  // namespace rnic::tcp
