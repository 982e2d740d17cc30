// The Ether Forwarding Engine (DESIGN.md §3.4, WIRE.md, docs/efe.md): between the RNIC Core
// and the MAC, one reliable channel per peer MAC that makes a lossy Ethernet lossless. The core
// hands it DDP segments (send) and hears segments and acknowledgements (on_segment, on_ack) and a
// channel's failure (on_failed); it knows nothing else of what happens here.
//
// Transmit: a segment handed over by the core enters the kTxCycles pipeline, gets the channel's
//   next SEQ and a copy in the peer's retransmit buffer (efe.retx_buffer_bytes of payload; the
//   channel logic is EfeTx, efe_channel.h), and goes to the MAC as a DATA frame: Ethernet header,
//   EFE header (SEQ; ACK = the next SEQ from that peer the core has not validated; TS = now in
//   ns), the segment. Peers with frames due take turns, one frame each; control frames (ACK,
//   NACK, RNR) go ahead of DATA. The choice is made at the end of the time step (StepEnd), once
//   every input of that time (validations, the pipeline, the MAC's room) has arrived. A resend is
//   the frame as first sent (its ACK field too) with RTX set and a new TS. At most kMacFrames
//   frames wait in the MAC's FIFO (so a frame's TS is at most that many frame times before its
//   first bit: the RTT measures the network, not this queue).
// Congestion control (efe.cc, efe_cc.h): each channel has a rate and a window; below line rate
//   its DATA frames are paced (a frame of W wire bytes holds the next back W x 8 / rate), and a
//   DATA frame (new or resent) waits while the bytes on the wire and it would pass the window
//   (one frame always may go). Signals: each ACK's TS echo gives an RTT sample (the receiver
//   adds the time it held the echo); a DATA frame marked CE makes the receiver's next ACK carry
//   ECE (sent at once); a NACK; the retransmit timer.
// Back-pressure: can_send(dst, bytes) is false while kTxQueueFrames new frames to that peer wait
//   for the wire or its retransmit buffer cannot take `bytes` more; on_space fires when either
//   frees. Other peers are not held up.
// Retransmission: with efe.resend selective (the default) the receiver keeps frames after a gap
//   (up to efe.rx_buffer_bytes in all) and a NACK names every gap, whose frames alone are resent;
//   with go_back_n a gap's frames are dropped and a NACK goes back to the first missing. The timer
//   (the RTO after the oldest unacknowledged frame was sent or the window last moved: efe.rto_ns,
//   or with efe.rto_adaptive the RTT estimate's when that is longer) resends what the receiver
//   is not known to hold (go-back-N: goes back to the oldest) and doubles (back-off, capped at
//   efe.rto_max_ns; progress or an RNR ends it); each counts a retry, and efe.retry_budget_ns after
//   the first retry without progress the channel fails: its frames are dropped, on_failed(peer)
//   tells the core (every QP to that peer errors, docs/errors.md), and a new channel starts at the
//   next SEQ, its first frame carrying SY. An RNR goes back after efe.rnr_delay_ns and costs no
//   retry.
// Receive: a frame from the MAC is handled kRxCycles cycles after it arrives. A DATA frame in
//   sequence, when the receive buffer (efe.rx_buffer_bytes, segments given to the core and not
//   yet validated) has room and the core can take it (can_take), gives the core its segment
//   (on_segment); otherwise it is answered with an RNR. A duplicate asks for an ACK at once; a gap
//   is dropped, with one NACK per gap. Frames not for this MAC, not EFE, or malformed are dropped
//   and counted. The core may refuse a segment it was given and not yet validated (refuse():
//   answered with an RNR as if it had not been taken, and the ones after it with it).
// Acknowledgement: the core calls validated() for each segment, in order, once its checks are
//   done. An ACK is owed at once for an AR segment or every efe.ack_every_frames validated
//   frames, else efe.ack_delay_ns after the first validated frame not yet acknowledged. A DATA
//   frame to that peer carries it; a standalone ACK frame goes only when no new DATA frame to
//   that peer is in the pipeline or due.
// Order the core relies on: a received ACK value reaches the core (on_ack) only once every DATA
//   frame the peer sent before it has been received (an ACK frame's SEQ field, a DATA frame's
//   own SEQ), after the segment that carried it: a Terminate is always seen before the
//   acknowledgement of the segment it rejects, lost frames or not.
// Keepalive (efe.keepalive_ns, 0: off): a channel a QP was connected over (open) with nothing
//   unacknowledged that has heard nothing from its peer that long sends a probe, a DATA frame
//   to kAnnounceQpn with AR and no payload, resent as DATA is; the retry budget fails the channel
//   when the peer is gone. The probes go off as timers that do not keep the run going
//   (StatRegistry::on_idle_timer): once the workload is done none does.
// Fault injection (tests): Transport::tx_fault rewrites a DATA frame's DDP bytes as the core
//   hands them over.
// Depths: kTxQueueFrames new DATA frames per peer wait for the wire, kMacFrames frames in the
//   MAC's FIFO; the receive buffer (segments given to the core, not validated) and, with
//   selective resend, the frames kept after a gap each hold up to efe.rx_buffer_bytes over all
//   peers; a NACK names at most kNackRanges gaps.
// Statistics: the engine's counters, and per peer (group <name>.peer_<mac>) frames and bytes
//   each way, retransmissions, timeouts, NACKs, RNRs, duplicates, out-of-order arrivals,
//   receive-buffer refusals, failures, the RTT histogram and the unacknowledged bytes over time.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/common/step_end.h"
#include "models/common/trace_sink.h"
#include "models/common/transport.h"
#include "models/efe/efe_cc.h"
#include "models/efe/efe_channel.h"
#include "models/efe/efe_header.h"
#include "models/efe/efe_params.h"
#include "models/eth/eth_mac.h"

namespace rnic::efe {

class Efe : public sc_core::sc_module, public Transport {
 public:
  static constexpr uint64_t kTxCycles = 1, kRxCycles = 1;
  static constexpr uint32_t kTxQueueFrames = 2;  // new DATA frames per peer waiting for the wire
  static constexpr int kMacFrames = 2;           // frames the EFE keeps in the MAC's transmit FIFO
  static constexpr size_t kNackRanges = 64;      // gaps a selective NACK names at most

  using RxSegment = TransportSegment;

  Efe(sc_core::sc_module_name n, eth::EthMac& port, eth::Mac mac, int64_t clk_mhz,
      const EfeConfig& cfg, StatRegistry& stats);
  ~Efe() override;

  const eth::Mac& mac() const { return mac_; }
  // The Transport face (models/common/transport.h); the EFE names a peer by its MAC. A refused
  // segment (refuse) is answered RNR naming it: the peer resends from there after its RNR
  // delay. A DATA frame in sequence that can_take says no to is answered RNR, as for a full
  // receive buffer.
  uint32_t max_ddp_bytes() const override { return port_.mtu() - uint32_t(kHeaderBytes); }
  // One stream per peer card.
  TransportStream stream(const eth::Mac& peer, uint32_t) const override { return {peer, 0}; }
  bool can_send(const TransportStream& s, size_t bytes) override { return can_send(s.peer, bytes); }
  uint32_t send(const TransportStream& s, uint32_t dst_qpn, std::vector<uint8_t> ddp, bool ar,
                bool rq) override {
    return send(s.peer, dst_qpn, std::move(ddp), ar, rq);
  }
  void validated(const TransportStream& s, uint32_t seq, bool ar) override {
    validated(s.peer, seq, ar);
  }
  uint32_t refuse(const TransportStream& s, uint32_t seq) override { return refuse(s.peer, seq); }
  void failure_taken(const TransportStream& s, const std::vector<uint32_t>& qpns) override;
  // A QP connected to s.peer entered RTS: that card's IPv4 frames (it is of MPA/TCP) fail the
  // channel to it.
  void open(const TransportStream& s, uint32_t, uint8_t, TransportPorts) override;
  bool can_send(const eth::Mac& dst, size_t bytes);
  // Returns the SEQ the frame carries. rq: dst_qpn is reflected (efe_header.h).
  uint32_t send(const eth::Mac& dst, uint32_t dst_qpn, std::vector<uint8_t> ddp, bool ar,
                bool rq = false);
  void validated(const eth::Mac& peer, uint32_t seq, bool ar);
  uint32_t refuse(const eth::Mac& peer, uint32_t seq);
  std::string peer_name(const eth::Mac& peer) const override { return eth::to_string(peer); }

  std::string dump_state() const;
  // DATA payload from peer m given to the core in order so far (an experiment's measure).
  uint64_t delivered_bytes(const eth::Mac& m) const {
    auto it = peers_.find(m);
    return it == peers_.end() ? 0 : it->second->delivered_bytes;
  }
  // The statistics group of the channel to peer m: "<this EFE>.peer_<mac in hex>".
  std::string peer_group(const eth::Mac& m) const;
  // Waveform: the channel to each of `peers` under peer_group(): tx_next_seq (the next new
  // frame's SEQ), tx_base (the oldest unacknowledged), tx_window (frames sent and not
  // acknowledged), tx_buffered_bytes, rate_mbps (congestion control's rate), srtt_ns, rto_ns,
  // rx_expected (the next in-order SEQ), retransmissions. Zero until the channel exists.
  void trace(TraceSink& t, const std::vector<eth::Mac>& peers) const;
  // The congestion control algorithm (efe.cc: efe, dcqcn or off) from now on; every channel
  // starts it afresh (an experiment's sweep compares them on one system).
  void set_cc(const std::string& algo);
  // Selective resend or go-back-N from now on, for every channel (an experiment's sweep, between
  // points, when the channels are idle).
  void set_resend(bool selective);

 private:
  struct Stored {
    Header h;
    eth::EthMac::FramePtr f;
  };
  struct Peer {
    Peer(const EfeChannelConfig& c, const eth::Mac& m, const CcConfig& cc_cfg)
        : mac(m), tx(c), cc(cc_cfg) {}
    eth::Mac mac;
    EfeTx tx;
    EfeRx rx;
    uint32_t pipeline = 0;        // DATA frames inside the kTxCycles pipeline
    uint64_t pipeline_bytes = 0;  // ... and their payload
    bool listed = false;          // in ready_ (may have a DATA frame due)
    bool ctl_listed = false;      // in ctl_q_ (owes a control frame)
    uint64_t ctl_at = 0;          // ... since this time
    // Receive side.
    std::deque<std::pair<uint32_t, uint32_t>> delivered;  // (SEQ, bytes) not yet validated
    uint32_t unacked_valid = 0;     // validated frames the peer has not been told of
    bool ack_owed = false;          // a standalone ACK is owed now
    uint64_t ack_due = UINT64_MAX;  // ... or at this time
    bool nack_owed = false, rnr_owed = false;
    uint64_t nack_ps = 0;  // the last NACK went then
    // Selective: a gap still open then is NACKed again, without a frame arriving; at most
    // kTimerNacks times in a row with none arriving from the peer.
    uint64_t nack_due = UINT64_MAX;
    uint32_t timer_nacks = 0;
    uint32_t rnr_seq = 0;
    uint32_t rx_gen = 0;    // refusals so far (RxSegment::gen)
    uint32_t ts_echo = 0;   // TS of the last DATA frame received (echoed in ACK/NACK/RNR)
    uint64_t ts_rx_ps = 0;  // ... and when it arrived (the echo adds the time held since)
    // The one-way delay (arrival - TS, ns mod 2^32) of DATA frames: the lowest seen, and the
    // last frame's above it (its forward queueing, echoed in ACK, NACK and RNR).
    uint32_t owd_min = 0, fwd_q_ns = 0;
    bool owd_seen = false;
    bool util_seen = false;  // the last DATA frame carried a utilisation stamp (UT) ...
    uint8_t util = 0;        // ... this one (echoed in ACK, NACK and RNR)
    // The stamp the peer's last ACK or NACK echoed, and whether its series (`util`, made at
    // the first such echo) exists.
    double util_echoed = 0;
    bool util_series = false;
    bool ce_seen = false;     // a DATA frame marked CE arrived: the next ACK carries ECE
    bool echo_owed = false;   // a DATA frame with AR arrived: an ACK frame (the echo) is owed
    bool echo_ready = false;  // ... and a DATA frame carried the ACK value: the echo may go
    // Congestion control (docs/efe.md): the algorithm's rate and window, and the pacing.
    CongestionControl cc;
    double rate_bps = 0;                // cc's rate when the last DATA frame went (statistics)
    double srtt_ps = 0, rttvar_ps = 0;  // the RTT estimator (RTO, ECE once per round trip)
    bool probe_out = false;             // below line rate: a DATA frame with AR awaits its ACK
    bool window_full = false;           // a DATA frame waited for the window
    uint64_t delivered_bytes = 0;       // DATA payload given to the core in order
    uint64_t last_tx_ps = 0;            // the last DATA frame's departure ...
    uint64_t last_wire = 0;   // ... and its bytes on the wire (pacing is re-timed on a rise)
    uint32_t wake_gen = 0;    // only the newest wake-up at next_ok_ps counts
    uint64_t next_ok_ps = 0;  // paced: the next DATA frame not before this
    bool wake = false;        // a wake-up at next_ok_ps is pending
    bool held = false;        // an ACK value waits for the DATA frames sent before it
    uint32_t held_ack = 0, held_needs = 0;
    uint64_t due = UINT64_MAX;  // earliest of the retransmit timer and ack_due
    uint64_t resyncs_seen = 0;  // the receiver's resyncs already acted on
    // Keepalive (efe.keepalive_ns): a QP was connected over the channel and it has not failed
    // since; the last frame from the peer (or the connection, if later) came then.
    bool keepalive = false;
    uint64_t heard_ps = 0;
    uint32_t tx_gen = 0;    // failures so far: a segment in the pipeline from before is dropped
    bool fenced = false;    // failed, the core has not taken it yet (failure_taken): send() drops
    bool announce = false;  // ... and the peer is to be told which QPs failed
    // Selective resend, receive side: frames after a gap, by SEQ - stored_base (the expected
    // SEQ when the first was stored), and one past the highest SEQ seen.
    std::map<uint32_t, Stored> stored;
    uint32_t stored_base = 0;
    uint32_t seen_end = 0;
    bool seen_any = false;
    Counter *tx_frames, *tx_bytes, *rx_frames, *rx_bytes, *retransmissions, *timeouts, *nacks_rx,
        *nacks_tx, *rnrs_rx, *rnrs_tx, *duplicates, *out_of_order, *rx_refused, *failures, *resyncs,
        *ece_rx, *ce_rx;
    Histogram* rtt;
    // The ACK field: the first SEQ given to the core and not validated, or the next expected.
    uint32_t ack_value() const {
      return delivered.empty() ? rx.expected() : delivered.front().first;
    }
  };

  static constexpr uint32_t kTimerNacks = 3;
  Peer& peer(const eth::Mac& m);
  void enqueue(Peer& p, uint32_t seq, std::vector<uint8_t> ddp, const EfeTx::Meta& meta);
  void receive(const eth::EthMac::FramePtr& f);
  void handle(const eth::Header& eh, const Header& h, const eth::EthMac::FramePtr& f);
  void core_ack(Peer& p, uint32_t ack, uint32_t needs);
  bool take(Peer& p, const Header& h, const eth::EthMac::FramePtr& f);
  void store(Peer& p, const Header& h, const eth::EthMac::FramePtr& f);
  bool renack(Peer& p);
  void drain(Peer& p);
  void drop_stored(Peer& p);
  void tx_acked(Peer& p, uint32_t ack);
  void owe_control(Peer& p);
  void list(Peer& p);
  // What goes to the MAC next, chosen once every input of the time step has arrived
  // (StepEnd): pump() asks for it, send_next() chooses.
  void pump() { StepEnd::get().request(step_id_); }
  void send_next();
  bool send_control(Peer& p);
  bool transmit(std::vector<uint8_t> frame, const eth::Mac& dst);  // to the MAC, or looped back
  // A DATA frame will go now (it carries the ACK value): one in the pipeline, or one due that
  // neither the pacing nor the window holds back (held back, the ACK goes on its own).
  bool data_due(Peer& p, uint64_t now) {
    if (p.pipeline) return true;
    const EfeTx::Frame* f = p.tx.next(now);
    return f && p.next_ok_ps <= now && !window_holds(p, *f);
  }
  bool window_holds(Peer& p, const EfeTx::Frame& f) {
    return !f.lost && p.tx.flight_bytes() && p.tx.flight_bytes() + f.payload.size() > p.cc.window();
  }
  // why: the log's reason (default: the retry budget spent).
  void fail(Peer& p, const char* why = nullptr);
  double line_bps() const { return 8e12 / double(port_.byte_ps()); }
  CcConfig cc_config() const;
  // The round trip congestion control paces its cuts by: the smoothed RTT, or before the first
  // sample the RTO.
  double round_trip(const Peer& p) const { return p.srtt_ps ? p.srtt_ps : double(p.tx.rto()); }
  // The sample an ACK or NACK h brings: its RTT (from its TS echo, by which the frame it answers
  // is looked up), the forward queueing it carries (QD) and the utilisation stamp it echoes (UT).
  void cc_rtt(Peer& p, const Header& h);
  void cc_ece(Peer& p);
  // After a congestion control signal: a higher rate shortens the gap after the last DATA frame.
  void cc_rerate(Peer& p, double old_rate);
  void schedule_wake(Peer* p);
  // Keepalive: a channel may probe (connected, nothing unacknowledged or on its way); the
  // earliest time one is due (UINT64_MAX: none, or a check is already set); the check that
  // sends the probes due.
  bool keepalive_idle(const Peer& p) const {
    return p.keepalive && !p.fenced && p.pipeline == 0 && p.tx.unacked() == 0;
  }
  uint64_t keepalive_due() const;
  void keepalive_check();
  void update_timer(Peer& p);
  void timer_fire();
  uint32_t ts_now() const { return uint32_t(now_ps() / 1000); }
  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }

  eth::EthMac& port_;
  eth::Mac mac_;
  EfeConfig cfg_;
  EfeChannelConfig ch_cfg_;
  bool send_qd_;  // efe.cc_delay one_way: ACKs carry the forward queueing delay (QD)
  ClockDomain clk_;
  StatRegistry& stats_;
  std::set<eth::Mac> connected_;  // cards a QP here was connected to (open())
  EventQueue eq_{"eq"};
  size_t step_id_;
  std::map<eth::Mac, std::unique_ptr<Peer>> peers_;
  // peers_ by the MAC's 48-bit value (mac_value): peer()'s lookup, where the map's walk compared
  // MACs byte by byte at each level.
  std::unordered_map<uint64_t, Peer*> peer_index_;
  Peer* last_peer_ = nullptr;  // peer()'s last answer (peers are never removed)
  std::deque<Peer*> ready_;    // peers that may have a DATA frame due, in turn
  std::deque<Peer*> ctl_q_;    // peers owing a control frame, in order (one time's by MAC)
  uint64_t loop_free_ps_ = 0;  // the MAC's loopback is busy until then
  int in_mac_ = 0;             // frames handed to the MAC whose first bit has not gone
  uint64_t rx_buffered_ = 0;
  uint64_t stored_bytes_ = 0;  // selective: frames after a gap, every peer's
  // The timer: the event queue's alarm, for every peer's retransmit timer and ACK delay.
  uint64_t timer_at_ = UINT64_MAX;
  size_t armed_ = 0;  // peers with a deadline
  // The timer set to `at`, or stopped; with efe.decoy_timer, the decoy moved with it.
  void set_timer(uint64_t at);
  void stop_timer();
  std::unique_ptr<sc_core::sc_event> decoy_ev_;  // efe.decoy_timer: armed, never fired
  Counter &tx_data_, &tx_acks_, &tx_nacks_, &tx_rnrs_, &rx_data_, &rx_acks_, &rx_dropped_,
      &rx_out_of_seq_, &rx_duplicates_, &retransmissions_, &failures_, &looped_;
  uint64_t keepalive_ps_;         // efe.keepalive_ns (0: off)
  bool keepalive_check_ = false;  // a keepalive check is set in eq_
  Counter *keepalives_ = nullptr, *rx_keepalives_ = nullptr;
};

}  // namespace rnic::efe
