// One reliable EFE channel (to one peer MAC) as plain logic, no SystemC (DESIGN.md §3.4,
// WIRE.md): selective resend or go-back-N over the DATA frames' SEQ, with the sender's retransmit
// buffer and timer
// (EfeTx) and the receiver's sequence check (EfeRx). The EFE engine (efe.h) owns one of each
// per peer and moves frames and time; these classes decide.
//
// Sender (EfeTx):
//   - send(): the frame gets the next SEQ and a copy stays in the retransmit buffer
//     (retx_buffer_bytes of payload: can_send() says whether another fits) until a cumulative
//     ACK covers it.
//   - next(): what goes on the wire next: a frame marked lost (selective), first; else, in SEQ
//     order, a frame not sent yet or, after a go-back, the frames again from the go-back point
//     (each then counted a retransmission).
//   - The timer runs while frames are unacknowledged: the RTO after the oldest unacknowledged
//     frame was (re)sent or the last ACK moved the window. On it, the sender goes back to the
//     oldest, counts a retry and doubles the RTO (exponential back-off, capped at rto_max_ps or
//     the base RTO if that is longer); an ACK that moves the window ends the back-off. The base
//     RTO is rto_ps, or what set_rto() raised it to.
//   - The retry budget is a time: retry_budget_ps after the first retry without progress (0: no
//     budget) the channel fails, at that instant (the timer runs to it).
//   - NACK(seq): go back to seq now (a retry, as the timer's; no back-off: the peer is heard).
//     Selective (the default): the NACK's ranges are marked lost and resent, first, in SEQ
//     order (a frame resent after the NACK's TS echo is on its way and is left), and the frames
//     between them marked held; the timer marks lost every frame sent and not held; nothing else
//     goes again (docs/efe.md, "Selective resend"). RNR(seq): go back to seq after rnr_delay_ps;
//     the peer is heard, so the retries, the back-off and the budget start again.
//   - A channel re-established after a failure (resync) starts at first_seq, and the frame with
//     that SEQ carries SY: the receiver starts afresh there (docs/efe.md). When that frame
//     announces the failure (to kAnnounceQpn), the budget until it is acknowledged is
//     resync_budget_ps (the peer is told when the link comes back, if it does within that).
// Receiver (EfeRx): a DATA frame in sequence is delivered; an earlier SEQ is a duplicate (dropped,
// the ACK sent again); a later one is a gap (go-back-N: dropped, one NACK per gap, for the first
// missing; selective: the engine keeps it and NACKs the ranges, efe.h), unless it carries SY (the
// sender's channel starts afresh at it: it is delivered). hold(): the expected frame could not be
// taken (an RNR answered it), so the gap behind it asks no NACK. SEQ arithmetic wraps at 2^32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace rnic::efe {

inline bool seq_before(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }

// The destination QPN of the EFE's own DATA frames: after a failure, the QPNs that failed with
// the channel (4 bytes each, big-endian), so the peer fails the QPs connected to them.
constexpr uint32_t kAnnounceQpn = 0xFFFFFF;

struct EfeChannelConfig {
  uint64_t retx_buffer_bytes = 256 << 10;    // B of payload kept for retransmission
  uint64_t rto_ps = 20'000'000;              // retransmit timeout (the base, before back-off)
  uint64_t rto_max_ps = 1'000'000'000;       // the backed-off timeout's cap
  uint64_t retry_budget_ps = 1'000'000'000;  // from the first retry without progress (0: none)
  // The budget while a re-established channel's first frame (SY) is unacknowledged (0: none).
  uint64_t resync_budget_ps = 10'000'000'000;
  // Selective resend: a NACK's ranges are resent and nothing else, a timeout resends what the
  // receiver has not reported holding. false: go-back-N.
  bool selective = true;
  uint64_t rnr_delay_ps = 5'000'000;  // back-off after an RNR
};

class EfeTx {
 public:
  // What the frame's header carries besides SEQ (the engine's business).
  struct Meta {
    uint32_t dst_qpn = 0;
    bool ar = false, rq = false;
    uint32_t ack = 0;  // the ACK field as first sent (a resend repeats it)
  };
  struct Frame {
    uint32_t seq = 0;
    std::vector<uint8_t> payload;
    Meta meta;
    bool retransmission = false;  // the wire copy is a resend (the header's RTX)
    bool sy = false;              // the first frame of a re-established channel
    bool lost = false;            // selective: to be resent (a NACK's range, or the timer)
    bool held = false;            // selective: the receiver holds it (between a NACK's ranges)
    uint32_t sent_ts = 0;         // when its last copy went, in ns mod 2^32 (the header's TS)
  };
  // A range of missing SEQs [first, end) a selective NACK names.
  struct Range {
    uint32_t first = 0, end = 0;
  };

  // first_seq: the channel's first SEQ. resync: the channel replaces one that failed, and its
  // first frame carries SY.
  explicit EfeTx(const EfeChannelConfig& c, uint32_t first_seq = 0, bool resync = false)
      : cfg_(c),
        rto_ps_(c.rto_ps),
        first_(first_seq),
        resync_(resync),
        base_(first_seq),
        next_seq_(first_seq),
        send_seq_(first_seq),
        highest_sent_(first_seq) {}

  bool can_send(size_t bytes) const { return buffered_ + bytes <= cfg_.retx_buffer_bytes; }
  // Queues a frame (can_send must hold); returns its SEQ.
  uint32_t send(std::vector<uint8_t> payload, const Meta& meta);
  uint32_t send(std::vector<uint8_t> payload);

  // The next frame due on the wire at `now` (nullptr: none), and that it went.
  Frame* next(uint64_t now);
  void sent(uint64_t now);

  // The peer's cumulative ACK (the next SEQ it expects); returns the frames it freed.
  size_t on_ack(uint32_t ack, uint64_t now);
  // ranges (selective): what the receiver lacks; empty: only `seq`. Go-back-N ignores them.
  // echo_ts: the NACK's TS echo (the TS of the last DATA frame the receiver had, plus the time
  // it held it); a frame whose last copy went after it is on its way and is not resent again.
  void on_nack(uint32_t seq, uint64_t now, const std::vector<Range>& ranges = {},
               std::optional<uint32_t> echo_ts = std::nullopt);
  void on_rnr(uint32_t seq, uint64_t now);
  // The timer's deadline (UINT64_MAX: not running); at or after it, on_timeout() goes back, or
  // fails the channel when the retry budget is spent.
  uint64_t deadline() const;
  // The base timeout from now on: `ps`, but never below the configured rto_ps (the engine's
  // estimate from the measured RTT, docs/efe.md).
  void set_rto(uint64_t ps) { rto_ps_ = ps > cfg_.rto_ps ? ps : cfg_.rto_ps; }
  // Selective or go-back-N from now on (an experiment's sweep; meant for an idle channel).
  void set_selective(bool on) {
    cfg_.selective = on;
    for (Frame& f : frames_) f.lost = f.held = false;
    lost_ = 0;
    flight_ = flight_bytes_recounted();
  }
  // The base timeout, and the one in use (backed off).
  uint64_t rto() const { return rto_ps_; }
  uint64_t rto_now() const;
  uint32_t backoff() const { return backoff_; }  // doublings in force
  void on_timeout(uint64_t now);

  bool failed() const { return failed_; }
  // A re-established channel whose first frame (SY) announces the failure (to kAnnounceQpn) and
  // is not yet acknowledged.
  bool announcing() const {
    return resync_ && base_ == first_ && !frames_.empty() &&
           frames_.front().meta.dst_qpn == kAnnounceQpn;
  }
  uint32_t next_seq() const { return next_seq_; }
  uint32_t base() const { return base_; }  // the oldest unacknowledged SEQ
  // One past the highest SEQ ever sent (every frame sent so far is below it).
  uint32_t highest_sent() const { return highest_sent_; }
  // Frames queued that have never been on the wire.
  uint32_t unsent() const { return next_seq_ - highest_sent_; }
  size_t unacked() const { return frames_.size(); }
  uint64_t buffered_bytes() const { return buffered_; }
  // Payload on the wire: sent, not acknowledged, not marked lost, not held by the receiver (what
  // congestion control's window bounds). flight_bytes_recounted(): the same by a scan (tests).
  uint64_t flight_bytes() const { return flight_; }
  // The payload of the frame an echo (its TS plus the time the peer held it) most likely
  // answers: from the newest, the first sent frame sent at or before it; 0 when none is.
  size_t echoed_bytes(uint32_t echo) const {
    for (size_t i = size_t(highest_sent_ - base_); i-- > 0;)
      if (int32_t(frames_[i].sent_ts - echo) <= 0) return frames_[i].payload.size();
    return 0;
  }
  uint64_t flight_bytes_recounted() const;
  uint64_t retransmissions() const { return retransmissions_; }
  uint64_t timeouts() const { return timeouts_; }
  uint64_t nacks() const { return nacks_; }
  uint64_t rnrs() const { return rnrs_; }

 private:
  void go_back(uint32_t seq, uint64_t resume_ps, bool retry);
  void count_retry(uint64_t now) {
    if (retries_++ == 0) first_retry_ps_ = now;
  }
  void mark_lost(Frame& f) {
    if (!f.lost && !f.held) flight_ -= f.payload.size();
    if (!f.lost) ++lost_;
    f.lost = true;
    f.held = false;
  }
  Frame* first_lost();
  uint64_t budget() const { return announcing() ? cfg_.resync_budget_ps : cfg_.retry_budget_ps; }
  EfeChannelConfig cfg_;
  uint64_t rto_ps_;  // the timeout in use (set_rto)
  uint32_t first_ = 0;
  bool resync_ = false;
  std::deque<Frame> frames_;   // unacknowledged, in SEQ order; frames_[0].seq == base_
  uint32_t base_ = 0;          // oldest unacknowledged SEQ
  uint32_t next_seq_ = 0;      // the next new frame's SEQ
  uint32_t send_seq_ = 0;      // the next SEQ to put on the wire
  uint32_t highest_sent_ = 0;  // one past the highest SEQ ever sent
  uint64_t buffered_ = 0;
  uint64_t flight_ = 0;          // flight_bytes()
  uint64_t timer_from_ = 0;      // when the oldest was (re)sent or the window last moved
  uint64_t resume_ps_ = 0;       // nothing goes before this (an RNR's back-off)
  uint32_t retries_ = 0;         // retries since the last progress
  uint64_t first_retry_ps_ = 0;  // ... the first of them (the budget runs from it)
  uint32_t backoff_ = 0;         // the timer's doublings since the last progress
  uint32_t lost_ = 0;            // selective: frames marked to be resent
  bool failed_ = false;
  uint64_t retransmissions_ = 0, timeouts_ = 0, nacks_ = 0, rnrs_ = 0;
};

class EfeRx {
 public:
  explicit EfeRx(uint32_t first_seq = 0) : expected_(first_seq) {}
  enum class Verdict { kDeliver, kDuplicate, kGap };
  // A DATA frame's SEQ (and its SY): delivered in order (expected() moves on), a duplicate, or
  // a gap. A frame with SY not before expected() is delivered and the channel starts there.
  Verdict on_data(uint32_t seq, bool sy = false);
  // The expected frame was not taken (RNR): frames behind it are dropped without a NACK.
  void hold() { nacked_gap_ = holding_ = true; }
  // Frames from seq on, delivered already, were taken back (Efe::refuse): seq is expected
  // again, and the frames behind it are dropped without a NACK until it comes.
  void rewind(uint32_t seq) {
    expected_ = seq;
    nacked_gap_ = holding_ = true;
  }
  // Since hold() or rewind(), until expected() is delivered: frames behind it come again after
  // the RNR, so they are neither kept nor NACKed.
  bool holding() const { return holding_; }
  uint32_t expected() const { return expected_; }
  // After a gap: whether a NACK for expected() is owed (once per gap), and that it went.
  bool nack_owed() const { return nack_owed_; }
  void nack_sent() { nack_owed_ = false; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t out_of_order() const { return out_of_order_; }
  uint64_t resyncs() const { return resyncs_; }

 private:
  uint32_t expected_ = 0;
  bool nack_owed_ = false, nacked_gap_ = false, holding_ = false;
  uint64_t duplicates_ = 0, out_of_order_ = 0, resyncs_ = 0;
};

}  // namespace rnic::efe
