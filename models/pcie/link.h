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
// `updatefc_timer_ns`). A receiver may ask to take a TLP a fixed time after its arrival (its
// own latency, per TLP type: set_receiver's `hold`); the link then hands it over at that time
// rather than at its arrival, so one wake-up serves the arrival and the receiver's action. A
// receiver may also say which TLPs it takes later (set_later: the DMAC's completions that only
// fill a read's buffer): the link does not wake for those, the receiver takes them from its own
// process before it needs them (take_arrived), or they come with the next TLP that wakes it,
// each with its arrival time (taken_at). An ACK DLLP does nothing where it arrives (the replay
// buffer is not modelled), so its arrival wakes nothing. Completion credits are infinite on both
// sides (as for endpoints and root ports), so completions send no UpdateFC. The replay buffer is
// not a limit in this model.
//
// What a side does between the deliveries of its TLPs to the peer (its picks, its ACK and
// UpdateFC timers, the credits the peer's UpdateFCs bring it, the ACK bookkeeping of its TLPs'
// arrivals) is seen by no one else, so it is computed when needed rather than woken for: at the
// next delivery, or when an upper layer
// sends, releases or asks (run_actions, both sides together in time order). A side whose TLPs
// wait for credits is woken by the first UpdateFC that can bring them. What is left when the
// kernel has nothing else to run is worked out then (StatRegistry::on_lazy), so a run ends at
// the link's last action, as it did when each was woken for. The `same_cycles` runs gave the
// same results and captures as with a link that woke for each.
//
// TLPs sent by one side in the same delta (by different processes at the same time) queue in
// the order of their senders' names, each sender's own in the order it sent them, whatever order
// the kernel ran the senders in (a pick never sees part of a delta's TLPs: run_actions).
//
// Queue depths: the transmit queue is unbounded (the upper layers bound themselves by tags and
// credits); the receive buffers are the advertised credits.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/ring.h"
#include "models/common/scheduler.h"
#include "models/common/sim_time.h"
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
  ~PcieLink() override;

  // What a receiver waits after a TLP's arrival before it takes it, by TlpType (ps).
  using Hold = std::array<uint64_t, 4>;

  // Upper-layer interface of side s (kRc or kCard).
  void send(int s, Tlp tlp);
  // Side s's upper layer takes each TLP `hold` after its arrival (in the first delta of that
  // time, in arrival order among TLPs taken at the same time).
  void set_receiver(int s, std::function<void(Tlp&&)> deliver, const Hold& hold = {}) {
    side_[s].deliver = std::move(deliver);
    set_hold(s, hold);
  }
  // Only while the link is idle.
  void set_hold(int s, const Hold& hold);
  // TLPs for which `later` holds do not wake side s's upper layer (with no hold): it takes them
  // itself, in its own wake-up, before it needs them (take_arrived), or gets them with the
  // next TLP that wakes it. Empty: every TLP wakes it.
  void set_later(int s, std::function<bool(const Tlp&)> later) {
    sc_assert(side_[s].flat_hold && side_[s].hold[0] == 0);
    side_[s].later = std::move(later);
  }
  // Hands side s's upper layer the TLPs that reached it by `upto_ps` (at most now), in order.
  void take_arrived(int s, uint64_t upto_ps);
  // While a TLP is handed over: when it reached the upper layer (its arrival plus the hold).
  uint64_t taken_at() const { return taken_at_; }
  // Side s is done with a TLP it received: its buffer space goes back to the peer.
  void release(int s, FcClass c, uint32_t data_credits);

  // Re-applies rate, latency and credit settings; only while the link is idle (between the
  // points of a sweep).
  void configure(const PcieConfig& cfg);
  bool idle() const;
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
  uint64_t count_tlps(int s) const { return (catch_up_all(), side_[s].st.tlps->value); }
  uint64_t count_acks(int s) const { return (catch_up_all(), side_[s].st.acks->value); }
  uint64_t count_updatefcs(int s) const { return (catch_up_all(), side_[s].st.updatefcs->value); }
  const LinkRate& rate() const { return side_[0].clock.rate(); }
  int gen() const { return int(cfg_.gen); }

 private:
  static constexpr uint64_t kNoTimer = UINT64_MAX;
  enum class Kind : uint8_t { kTlp, kAck, kUpdateFc };
  struct Dllp {
    Kind kind = Kind::kAck;
    FcClass fc = FcClass::kPosted;
    int64_t hdr = 0, data = 0;  // UpdateFC: credits returned
    uint64_t arrive_ps = 0;
  };
  struct Queued {
    Tlp tlp;
    uint32_t wire = 0;  // its wire bytes
    bool wakes = true;  // whether it wakes the peer's upper layer (its `later` false)
  };
  struct Held {
    uint64_t at = 0;  // when the upper layer takes it
    bool wakes = true;
    Tlp tlp;
  };
  struct Side {
    GrowRing<Queued> tlps;
    int queued[4] = {0, 0, 0, 0};  // tlps by type
    // The TLPs at the queue's tail that were sent in the current delta, and their senders.
    uint64_t tail_ps = kNoTimer, tail_delta = 0;
    std::vector<const char*> tail_from;  // senders' names (Scheduler::actor)
    GrowRing<Dllp> dllps;
    // The arrival times of the TLPs this side sent that have yet to reach the peer (the TLPs wait
    // in the peer's `held`), and the UpdateFCs on their way (their credits are the peer's from
    // their arrival). An ACK does nothing where it arrives (the replay buffer is not modelled):
    // it takes its time on the wire, and no more.
    GrowRing<uint64_t> in_flight;
    GrowRing<Dllp> fc_in_flight;
    // TLPs the peer sent, on their way or waiting out this side's hold, in the order this side
    // takes them (by the end of their holds, then as they were sent).
    GrowRing<Held> held;
    Hold hold{};
    bool flat_hold = true;  // one hold for every type
    std::function<bool(const Tlp&)> later;
    GrowRing<uint64_t> wake_times;  // held: the times of those that wake (with `later`)
    int queued_wakes = 0;           // tlps that will wake the peer (its `later` false)
    Credits granted;                // what the peer lets this side send
    ByteClock clock;
    uint64_t busy_until_ps = 0;
    // The transmitter's next pick: at pick_ps, in the delta pick_delta of that time (0 for the
    // end of a packet, the one after a wake-up for an idle transmitter); none while idle.
    bool pick_due = false;
    uint64_t pick_ps = 0, pick_delta = 0;
    // The packet on the wire left nothing queued: its end has no pick of its own (it would find
    // nothing unless something is queued by the first delta of busy_until_ps, whose kick puts
    // the pick back there).
    bool ends_idle = false;
    uint64_t busy_ps = 0;       // total time spent sending, for the utilisation series
    Kind sending = Kind::kTlp;  // the packet on the wire while busy (for the waveform)
    TlpType sending_type = TlpType::kMWr;
    uint32_t sending_bytes = 0;
    int ack_owed = 0;
    int64_t owed_hdr[2] = {0, 0}, owed_data[2] = {0, 0};
    int owed_count = 0;
    uint64_t ack_due_ps = kNoTimer;       // the ACK timer's time (kNoTimer: not armed)
    uint64_t fc_timer_due_ps = kNoTimer;  // the UpdateFC timer's time
    uint64_t wake_ps = kNoTimer;          // what the side's scheduler wake is for
    std::function<void(Tlp&&)> deliver;
    size_t wake_id = 0;  // the side's client of the scheduler
    SideStats st{};
  };

  // The link's actions in time order, computed rather than each woken: a TLP's arrival (the
  // ACK it owes), a transmitter's picks, the ACK and UpdateFC timers, an UpdateFC's credits at
  // its arrival. They run when something looks at or changes the link (catch_up_all), at a
  // side's wake-up, which comes by the delivery of its first TLP in flight (or waiting out the
  // peer's hold), or of the first one it would send from what it holds (and, while its TLPs
  // wait for credits, by the first UpdateFC that can bring them), since until then no one but
  // the link sees what it does, and when the kernel has nothing else to run
  // (StatRegistry::on_lazy). A TLP's arrival, a pick at the end of a packet, the timers and an
  // UpdateFC's arrival belong to the first delta of their time, an idle transmitter's pick to
  // the delta after what woke it (a packet, a DLLP, a credit); an action runs once its delta is
  // over, so it sees everything that delta brought (what any process sent or released in it,
  // whatever order the kernel ran them in). Actions of one delta go arrivals, credits, picks,
  // ACK timers, UpdateFC timers; a side's picks need the credits the other's UpdateFCs brought
  // by then, so both sides' actions run together in time order. Deliveries to an upper layer
  // happen only in the link's own wake-ups, after the actions before them.
  void catch_up_all() const;
  // The earliest the next UpdateFC from side `from` can arrive (none: kNoTimer): the first in
  // flight, or queued, or the UpdateFC timer of what it owes.
  uint64_t next_updatefc_arrival(const Side& from) const;
  // The earliest of side s's actions but its pick: they act in the first delta of their time.
  uint64_t next_timed_ps(int s) const {
    const Side& sd = side_[s];
    const Side& peer = side_[1 - s];
    return std::min({sd.ack_due_ps, sd.fc_timer_due_ps,
                     peer.fc_in_flight.empty() ? kNoTimer : peer.fc_in_flight.front().arrive_ps,
                     sd.in_flight.empty() ? kNoTimer : sd.in_flight.front()});
  }
  uint64_t next_action_ps(int s) const {
    return std::min(side_[s].pick_due ? side_[s].pick_ps : kNoTimer, next_timed_ps(s));
  }
  // When the first of side s's TLPs sent reaches the peer's upper layer (none: kNoTimer).
  uint64_t next_delivery(int s) const {
    const Side& peer = side_[1 - s];
    if (peer.later) return peer.wake_times.empty() ? kNoTimer : peer.wake_times.front();
    return peer.held.empty() ? kNoTimer : peer.held.front().at;
  }
  bool wakes(const Side& receiver, const Tlp& t) const {
    return !receiver.later || !receiver.later(t);
  }
  // A bound on the arrival of the first TLP side s would send from what it holds now that wakes
  // the peer (every TLP does unless the peer takes some later; none: kNoTimer): the DLLPs queued
  // before it and the TLPs it passes go first, back to back.
  uint64_t next_waking_arrival(int s) const;
  // The least hold of the peer's over the types side s has queued.
  uint64_t least_queued_hold(int s) const;
  // Runs both sides' actions before `delta` of time `now` (and all of earlier times). A pick may
  // act in a later delta of its time; the rest act in the first. (A pick kicked in this delta is
  // due in the next: nothing to run for it now.)
  void run_actions(uint64_t now, uint64_t delta) {
    for (const Side& sd : side_)
      if (sd.pick_due && (sd.pick_ps < now || (sd.pick_ps == now && sd.pick_delta < delta)))
        return run_due(now, delta);
    const uint64_t t = std::min(next_timed_ps(0), next_timed_ps(1));
    if (t < now || (t == now && delta > 0)) run_due(now, delta);
  }
  void run_due(uint64_t now, uint64_t delta);
  // Side s takes the credits of the peer's first UpdateFC in flight, at its arrival.
  void grant(int s);
  void on_event();
  // The transmitter of side s picks its next packet at its pick time (none: it idles).
  void pick_now(int s);
  // Wakes an idle transmitter at `at`, in the delta after `delta` of that time.
  void kick(Side& sd, uint64_t at, uint64_t delta);
  // Side s's first TLP in flight arrives at the peer: the ACK it owes.
  void arrival(int s);
  // The peer's upper layer takes side s's TLPs whose hold ends by now.
  void deliver_due(int s, uint64_t now);
  void deliver_front(Side& receiver);
  // Notifies side s's wake-up (see catch_up_all).
  void arm(int s, uint64_t now);
  void ack_timer(int s, uint64_t at);
  // The UpdateFC timer runs out at `at` (in delta `delta` of that time): what is owed goes.
  void fc_timer_due(int s, uint64_t at, uint64_t delta);
  void queue_ack(int s, uint64_t at, uint64_t delta);
  void flush_fc(int s, uint64_t at, uint64_t delta);
  // What the transmitter sends next: kPickNone, kPickDllp (the first DLLP) or the index of the
  // TLP, whose credits it takes.
  static constexpr int kPickNone = -1, kPickDllp = -2;
  int pick(Side& sd);
  uint32_t wire_bytes(const Tlp& t) const;  // framing included
  // Whether the peer's credits let side sd send t now.
  static bool credited(const Side& sd, const Tlp& t);

  // A waveform: a process of its own wakes at every pick and timer, so each gets a time step of
  // the file. At the end of that time step (every input of the time in: models/common/step_end.h)
  // the sides are brought up to date, as the file's signals bring them when it is written, and
  // the next wake is armed from what they then know: a packet's end, the pick after it.
  mutable bool traced_ = false;
  size_t trace_end_ = 0;  // its StepEnd call
  uint64_t trace_wake_ps_ = kNoTimer;
  sc_core::sc_event trace_ev_;
  void on_trace();
  void arm_trace(uint64_t now);
  Scheduler& sched_ = Scheduler::get();
  PcieConfig cfg_;
  StatRegistry& stats_;
  uint64_t taken_at_ = 0;  // what taken_at() says
  Side side_[2];
};

}  // namespace rnic::pcie
