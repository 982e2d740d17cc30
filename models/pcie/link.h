// A PCIe link between the root complex (side 0, upstream) and the card (side 1), TLP level and
// cycle-timed (DESIGN.md §3.2).
//
// Each side has a transmitter and a receiver. A transmitter sends one packet at a time; a packet
// occupies the direction for its wire bytes at the link's byte time and reaches the peer
// `link_latency_ns` after its last byte (the receiver checks the LCRC of a whole TLP before it
// passes it on). Between packets the transmitter picks, in this order:
//   1. a DLLP it owes the peer (ACK, UpdateFC);
//   2. the oldest TLP whose flow-control credits the peer has granted; a non-posted TLP blocked
//      for credits may be passed by posted and completion TLPs behind it, nothing else passes.
// Receiver side: every `ack_factor` TLPs received, or `ack_timer_ns` after the first un-ACKed
// one, it sends an ACK DLLP. When its upper layer releases a received TLP, the credits go back
// to the peer in UpdateFC DLLPs, one per `updatefc_factor` released TLPs of a class (or after
// `updatefc_timer_ns`). An ACK DLLP does nothing where it arrives (the replay buffer is not
// modelled), so its arrival wakes nothing. Completion credits are infinite on both sides (as for
// endpoints and root ports), so completions send no UpdateFC. The replay buffer is not a limit
// in this model.
//
// Queue depths: the transmit queue is unbounded (the upper layers bound themselves by tags and
// credits); the receive buffers are the advertised credits.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <systemc>

#include "models/common/stats.h"
#include "models/common/trace_sink.h"
#include "models/pcie/pcie_params.h"
#include "models/pcie/tlp.h"

namespace rnic::pcie {

struct Credits {
  int64_t ph = 0, pd = 0, nph = 0;
};

class PcieLink : public sc_core::sc_module {
 public:
  static constexpr int kRc = 0;
  static constexpr int kCard = 1;

  PcieLink(sc_core::sc_module_name n, const PcieConfig& cfg, StatRegistry& stats);

  // Upper-layer interface of side s (kRc or kCard).
  void send(int s, Tlp tlp);
  void set_receiver(int s, std::function<void(Tlp&&)> deliver) {
    side_[s].deliver = std::move(deliver);
  }
  // Side s is done with a TLP it received: its buffer space goes back to the peer.
  void release(int s, FcClass c, uint32_t data_credits);

  // Re-applies rate, latency and credit settings; only while the link is idle (between the
  // points of a sweep).
  void configure(const PcieConfig& cfg);
  bool idle() const;
  // A bound on when a TLP can still reach side `to`: the first one on its way there, or
  // link_latency_ns after the peer's wire is free for one it has yet to send.
  uint64_t earliest_tlp_arrival_ps(int to) const;
  // Waveform: per side, what the transmitter sends, its queue and the credits it holds.
  void trace(TraceSink& t) const;
  // Queues and credits of both sides, one line each.
  std::string describe() const;

  struct SideStats {
    Counter* tlps;
    Counter* tlp_wire_bytes;
    Counter* payload_bytes;
    Counter* acks;
    Counter* updatefcs;
    Counter* credit_stalls;
  };
  uint64_t count_tlps(int s) const { return side_[s].st.tlps->value; }
  uint64_t count_acks(int s) const { return side_[s].st.acks->value; }
  uint64_t count_updatefcs(int s) const { return side_[s].st.updatefcs->value; }
  const LinkRate& rate() const { return side_[0].clock.rate(); }
  int gen() const { return int(cfg_.gen); }

 private:
  enum class Kind : uint8_t { kTlp, kAck, kUpdateFc };
  struct Packet {
    Kind kind = Kind::kTlp;
    Tlp tlp;
    FcClass fc = FcClass::kPosted;
    int64_t hdr = 0, data = 0;  // UpdateFC: credits returned
    uint64_t arrive_ps = 0;
  };
  struct Side {
    std::deque<Tlp> tlps;
    std::deque<Packet> dllps;
    // Sent by this side, not yet at the peer. An ACK does nothing where it arrives (the replay
    // buffer is not modelled): none wakes the link; they leave the queue with the next arrival.
    std::deque<Packet> in_flight;
    int live_in_flight = 0;  // its TLPs and UpdateFCs
    Credits granted;         // what the peer lets this side send
    ByteClock clock;
    uint64_t busy_until_ps = 0;
    bool wake_at_end = false;   // the transmitter's wake-up at busy_until_ps is pending
    uint64_t busy_ps = 0;       // total time spent sending, for the utilisation series
    Kind sending = Kind::kTlp;  // the packet on the wire while busy (for the waveform)
    TlpType sending_type = TlpType::kMWr;
    uint32_t sending_bytes = 0;
    int ack_owed = 0;
    int64_t owed_hdr[2] = {0, 0}, owed_data[2] = {0, 0};
    int owed_count = 0;
    bool ack_timer_armed = false;
    uint64_t fc_timer_due_ps = kNoTimer;  // the UpdateFC timer's time (kNoTimer: not armed)
    std::function<void(Tlp&&)> deliver;
    sc_core::sc_event tx_ev, arrive_ev, ack_timer_ev, fc_timer_ev;
    SideStats st{};
  };

  // One method runs the link's timed actions: woken by any of its events, it runs those
  // triggered in this delta in a fixed order (arrivals, transmitters, ACK timers, UpdateFC
  // timers; side 0 before side 1). Separate methods would run equal-time actions in the order of
  // the kernel's timed-event heap, which other hosts' events move.
  void on_event();

  void tx(int s);
  // Wakes the transmitter unless it is sending: then its end-of-packet notification is already
  // pending, and a delta notification would only cancel it and leave a dead entry in the
  // kernel's timed queue.
  void kick(Side& sd);
  void arrive(int s);
  // Wakes side s's arrivals for its first TLP or UpdateFC in flight (none: no wake).
  void arm_arrival(Side& sd, uint64_t now);
  void ack_timer(int s);
  void fc_timer(int s);
  void fc_timer_due(int s);
  static constexpr uint64_t kNoTimer = UINT64_MAX;
  void queue_ack(int s);
  void flush_fc(int s);
  bool pick(Side& sd, Packet* out);
  static uint64_t now_ps();

  PcieConfig cfg_;
  Side side_[2];
};

}  // namespace rnic::pcie
