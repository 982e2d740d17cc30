// One MPA/TCP connection as the TCP engine will run it, with no SystemC: the three-way
// handshake with option negotiation (MSS, window scale, SACK-permitted, timestamps; RFC 9293,
// RFC 7323, RFC 2018), MPA's start-up (RFC 5044 with RFC 6581's IRD/ORD: the active side sends
// the request, the passive side the reply), then one FPDU per segment both ways through
// TcpSender and TcpReceiver (tcp_logic.h), and the close (FIN both ways). The caller moves the
// segments between two ends and calls it at the times things happen; what it returns from
// poll() goes on the wire in that order.
//
// Timestamps: TSval is the sender's clock in microseconds; an ACK's TSecr gives the round trip
// of the segment it echoes (RFC 7323), which feeds the retransmission timer.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "models/tcp/ip_tcp.h"
#include "models/tcp/mpa.h"
#include "models/tcp/tcp_logic.h"

namespace rnic::tcp {

struct TcpConnConfig {
  TcpLogicConfig logic;
  uint16_t mss = 1460;     // what this end announces (the MTU less 40)
  uint8_t wscale = 7;      // this end's window scale
  bool timestamps = true;  // offered (used when both ends offer)
  bool sack = true;        // offered (used when both ends offer)
  uint16_t ird = 16, ord = 16;
};

class TcpConnection {
 public:
  enum class State {
    kClosed,
    kListen,
    kSynSent,
    kSynRcvd,
    kEstablished,
    kFinWait,
    kCloseWait,
    kClosing,
    kDone,
    kFailed
  };
  enum class Mpa { kStartup, kRdma, kRejected };

  // active: this end sends the SYN and the MPA request.
  TcpConnection(const TcpConnConfig& cfg, uint32_t iss, bool active);

  struct Out {
    TcpHeader h;
    std::vector<uint8_t> payload;
  };
  // Opens (active: a SYN; passive: waits for one).
  void open(uint64_t now);
  // A segment from the peer (checksums already checked).
  void on_segment(const TcpHeader& h, const uint8_t* payload, size_t len, bool ce, uint64_t now);
  // Whatever is due at `now`: the handshake's segments, FPDUs the windows allow, ACKs.
  // At most max_data segments with data (a pure ACK still goes when one is due); *more: the
  // windows allow more data segments than were taken.
  std::vector<Out> poll(uint64_t now, size_t max_data = SIZE_MAX, bool* more = nullptr);
  // The next time poll() or on_timer() has something to do (UINT64_MAX: nothing).
  uint64_t next_timer() const;
  void on_timer(uint64_t now);

  // Queues one ULPDU (a DDP segment) as one FPDU; false before RDMA mode or beyond the MSS.
  // push: the segment goes with PSH, and the peer acknowledges it at once (a message's last
  // segment: the seam's `ar`).
  bool send(const std::vector<uint8_t>& ulpdu, bool push = true);
  // The ULPDUs delivered in order since the last call (each FPDU's CRC checked).
  std::vector<std::vector<uint8_t>> take_received();
  // The engines validated the oldest n FPDUs handed up: the acknowledgement may cover them.
  void validated(size_t n);
  // The engines refused the FPDU k places after the oldest not validated (on-demand paging): it
  // and every later one are taken back, as if they had not arrived (never acknowledged, so the
  // peer sends them again).
  void refuse(size_t k);
  // The largest ULPDU one segment carries.
  uint32_t max_ulpdu() const;
  void close(uint64_t now);
  // Ends the connection at once, sending nothing (the peer cannot take part in it).
  void abort() { state_ = State::kFailed; }

  State state() const { return state_; }
  // Closed, failed or closing: a new open() or SYN of its stream makes a new connection.
  bool ending() const {
    return state_ == State::kDone || state_ == State::kFailed || state_ == State::kFinWait ||
           state_ == State::kClosing || state_ == State::kCloseWait;
  }
  // Whether a SYN starts a new connection on these ports: this one is ending. One to a live
  // connection is answered with an ACK (RFC 5961 section 4): a peer that started over answers
  // that with a RST (below), which ends this one, and its SYN comes again.
  bool new_syn() const { return ending(); }
  Mpa mpa() const { return mpa_; }
  bool rdma_mode() const { return mpa_ == Mpa::kRdma && state_ == State::kEstablished; }
  // What the peer asked for (its IRD/ORD in the MPA request or reply).
  uint16_t peer_ird() const { return peer_ird_; }
  uint16_t peer_ord() const { return peer_ord_; }
  uint64_t crc_errors() const { return crc_errors_; }
  // Segments that were not the peer's, and what this end did with them (RFC 9293, RFC 5961):
  // RSTs answered with a challenge ACK (in the window, not at rcv_nxt) or dropped (outside it,
  // or where none is taken); SYNs to this live connection, and segments acknowledging data not
  // sent or older than the peer's largest window, answered with an ACK (the latter dropped);
  // ACKs in SYN-SENT of nothing sent, answered with a RST at their acknowledgement number.
  struct Refusals {
    uint64_t rst_challenged = 0, rst_dropped = 0, syn_challenged = 0, ack_challenged = 0,
             ack_reset = 0;
  };
  const Refusals& refusals() const { return refusals_; }
  const TcpSender* sender() const { return snd_ ? &*snd_ : nullptr; }

 private:
  TcpHeader header(uint8_t flags, uint64_t now) const;
  // The acknowledgement this end sends: rcv_nxt (and the peer's FIN), or short of it, at the
  // first FPDU the engines have not validated.
  uint32_t ack_value() const {
    return unvalidated_.empty() ? rcv_->rcv_nxt() + (peer_fin_ ? 1 : 0)
                                : unvalidated_.front().first;
  }
  void established(uint64_t now);
  void deliver(uint32_t seq, const uint8_t* p, size_t len);
  void ack_when_validated();
  void on_rst(const TcpHeader& h);
  uint32_t ts(uint64_t now) const { return uint32_t(now / 1'000'000); }

  TcpConnConfig cfg_;
  bool active_;
  State state_ = State::kClosed;
  Mpa mpa_ = Mpa::kStartup;
  uint32_t iss_, irs_ = 0;
  // Negotiated.
  bool use_ts_ = false, use_sack_ = false, use_ws_ = false;
  uint8_t snd_scale_ = 0, rcv_scale_ = 0;  // the peer's scale (for its windows), ours
  uint16_t peer_mss_ = 536;
  uint32_t ts_recent_ = 0;
  std::optional<TcpSender> snd_;
  std::optional<TcpReceiver> rcv_;
  std::map<uint32_t, std::vector<uint8_t>> tx_bytes_;  // queued segments' payloads, by seq
  std::set<uint32_t> push_;                            // the queued segments sent with PSH
  std::map<uint32_t, std::vector<uint8_t>> rx_held_;   // out-of-order payloads, by seq
  std::vector<uint8_t> startup_;                       // MPA start-up bytes received so far
  std::vector<std::vector<uint8_t>> received_;
  // The FPDUs handed up (take_received) the engines have not validated yet, as (first, after)
  // TCP sequence numbers: the acknowledgement stops at the first of them, and an ACK due
  // meanwhile waits for the next validation (ack_deferred_).
  std::deque<std::pair<uint32_t, uint32_t>> unvalidated_;
  bool ack_deferred_ = false;
  size_t validated_since_defer_ = 0;
  bool syn_due_ = false, ack_due_ = false;
  // The close: our FIN takes one sequence number after the data, queued in the sender (so it is
  // sent again like data when lost); the peer's FIN is acknowledged with rcv_nxt + 1.
  bool fin_queued_ = false, peer_fin_ = false;
  uint32_t fin_seq_ = 0;
  bool fin_acked() const { return fin_queued_ && snd_ && snd_->una() == snd_->end(); }
  uint64_t syn_at_ = UINT64_MAX;  // the SYN (or SYN-ACK) goes again then
  uint64_t syn_rto_ = 0;
  uint64_t syn_first_expiry_ = UINT64_MAX;  // the handshake's first expiry (its retry budget)
  uint16_t peer_ird_ = 0, peer_ord_ = 0;
  uint64_t crc_errors_ = 0;
  Refusals refusals_;
  uint32_t max_snd_wnd_ = 0;         // the largest window the peer gave (RFC 5961's MAX.SND.WND)
  std::optional<uint32_t> rst_due_;  // a RST to send, at this sequence number
};

}  // namespace rnic::tcp
