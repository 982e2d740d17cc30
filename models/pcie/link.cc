#include "models/pcie/link.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "models/common/event_queue.h"

namespace rnic::pcie {

PcieLink::PcieLink(sc_core::sc_module_name n, const PcieConfig& cfg, StatRegistry& stats)
    : sc_core::sc_module(n), cfg_(cfg), stats_(stats) {
  stats.on_settle(this, [this] { catch_up_all(); });
  // With no event left in the run, what the link has yet to do: its timers, the UpdateFCs'
  // arrivals and the picks of packets it holds (a pick of nothing, at the end of the last
  // packet, is no one's business).
  stats.on_lazy(
      this,
      [this] {
        uint64_t t = kNoTimer;
        for (int s = 0; s < 2; ++s) {
          const Side& sd = side_[s];
          const Side& peer = side_[1 - s];
          if (sd.pick_due && !(sd.tlps.empty() && sd.dllps.empty())) t = std::min(t, sd.pick_ps);
          t = std::min({t, sd.ack_due_ps, sd.fc_timer_due_ps});
          if (!peer.fc_in_flight.empty()) t = std::min(t, peer.fc_in_flight.front().arrive_ps);
          // TLPs the upper layer takes itself (set_later), when nothing else is left to wake it.
          if (sd.later && !sd.held.empty()) t = std::min(t, sd.held.front().at);
        }
        return t;
      },
      [this] {
        const uint64_t now = now_ps();
        run_actions(now, UINT64_MAX);
        for (int s = 0; s < 2; ++s) deliver_due(s, now);
        for (int s = 0; s < 2; ++s) arm(s, now);
      });
  static const char* const kSide[2] = {"rc_tx", "card_tx"};
  for (int s = 0; s < 2; ++s) {
    Side& sd = side_[s];
    StatGroup& g = stats.group(fmt::format("{}.{}", name(), kSide[s]));
    sd.st.tlps = &g.counter("tlps", "TLPs", "TLPs sent");
    sd.st.tlp_wire_bytes =
        &g.counter("tlp_wire_bytes", "B", "TLP bytes on the wire, framing included");
    sd.st.payload_bytes = &g.counter("payload_bytes", "B", "TLP payload bytes");
    sd.st.acks = &g.counter("ack_dllps", "DLLPs", "ACK DLLPs sent");
    sd.st.updatefcs = &g.counter("updatefc_dllps", "DLLPs", "UpdateFC DLLPs sent");
    sd.st.credit_stalls = &g.counter("credit_stalls", "events", "head TLP waiting for credits");
    // Share of the interval since the previous sample the transmitter was busy.
    g.series(
        "utilisation", "fraction", "transmitter busy time over the sample interval",
        [this, s, last_ps = uint64_t(0), last_busy = uint64_t(0)]() mutable {
          const uint64_t now = now_ps();  // up to date: sampling settles the link first
          const Side& sd = side_[s];
          const uint64_t busy = sd.busy_ps - (sd.busy_until_ps > now ? sd.busy_until_ps - now : 0);
          const double u = now > last_ps ? double(busy - last_busy) / double(now - last_ps) : 0.0;
          last_ps = now;
          last_busy = busy;
          return u;
        });
  }
  for (int s = 0; s < 2; ++s)
    side_[s].wake_id = sched_.add(std::string(name()) + ".events", [this, s] {
      side_[s].wake_ps = kNoTimer;
      on_event();
    });
  configure(cfg);
}

PcieLink::~PcieLink() {
  // The statistics outlive the link: what it has yet to count, it counts now.
  catch_up_all();
  stats_.drop_settle(this);
  for (const Side& sd : side_) sched_.drop(sd.wake_id);
}

void PcieLink::trace(TraceSink& t) const {
  static const char* const kSide[2] = {"rc_tx", "card_tx"};
  if (!traced_) {
    traced_ = true;
    PcieLink* self = const_cast<PcieLink*>(this);
    std::string n = std::string(name()) + "_trace_steps";  // spawned outside the module
    std::replace(n.begin(), n.end(), '.', '_');
    spawn_method_on(self->trace_ev_, n.c_str(), [self] { self->on_trace(); });
    self->trace_end_ = StepEnd::get().add([self] {
      self->catch_up_all();
      // A pick due at this time acts a delta after the TLPs it chooses from came (run_due): the
      // file's step then waits for it.
      const uint64_t now = now_ps();
      for (const Side& sd : self->side_)
        if (sd.pick_due && sd.pick_ps == now) {
          self->trace_ev_.notify(sc_core::SC_ZERO_TIME);
          return;
        }
      self->arm_trace(now);
    });
  }
  for (int s = 0; s < 2; ++s) {
    const Side& sd = side_[s];
    const std::string scope = std::string(name()) + "." + kSide[s];
    // 0 idle, 1 TLP, 2 ACK, 3 UpdateFC (read first: it brings the side up to date)
    t.add_value(scope, "packet", 2, [this, s, &sd] {
      catch_up_all();
      return now_ps() < sd.busy_until_ps ? 1 + uint64_t(sd.sending) : 0;
    });
    // 0 MWr, 1 MRd, 2 CplD, 3 Cpl (valid while packet = 1)
    t.add_value(scope, "tlp_type", 2, [&sd] { return uint64_t(sd.sending_type); });
    t.add_value(scope, "wire_bytes", 16,
                [&sd] { return now_ps() < sd.busy_until_ps ? sd.sending_bytes : 0; });
    t.add_value(scope, "tlp_queue", 16, [&sd] { return sd.tlps.size(); });
    t.add_value(scope, "credits_ph", 12, [&sd] { return uint64_t(sd.granted.ph); });
    t.add_value(scope, "credits_pd", 16, [&sd] { return uint64_t(sd.granted.pd); });
    t.add_value(scope, "credits_nph", 12, [&sd] { return uint64_t(sd.granted.nph); });
  }
}

std::string PcieLink::describe() const {
  static const char* const kSide[2] = {"rc_tx", "card_tx"};
  catch_up_all();
  std::string s;
  for (int i = 0; i < 2; ++i) {
    const Side& sd = side_[i];
    s += fmt::format(
        "  {}.{}: {} TLPs and {} DLLPs queued, {} in flight, {} received and held, credits ph {} "
        "pd {} nph {}\n",
        name(), kSide[i], sd.tlps.size(), sd.dllps.size(),
        sd.in_flight.size() + sd.fc_in_flight.size(), sd.held.size(), sd.granted.ph, sd.granted.pd,
        sd.granted.nph);
  }
  return s;
}

void PcieLink::configure(const PcieConfig& cfg) {
  sc_assert(idle());
  cfg_ = cfg;
  const LinkRate r = LinkRate::of(int(cfg.gen), int(cfg.lanes));
  side_[kRc].clock.set_rate(r);
  side_[kCard].clock.set_rate(r);
  // The root complex sends into the card's buffers and the card into the root complex's.
  side_[kRc].granted = {cfg.card_ph, cfg.card_pd, cfg.card_nph};
  side_[kCard].granted = {cfg.rc_ph, cfg.rc_pd, cfg.rc_nph};
}

void PcieLink::set_hold(int s, const Hold& hold) {
  sc_assert(side_[s].held.empty());
  sc_assert(!side_[s].later ||
            std::all_of(hold.begin(), hold.end(), [](uint64_t h) { return h == 0; }));
  Side& sd = side_[s];
  sd.hold = hold;
  sd.flat_hold = std::all_of(hold.begin(), hold.end(), [&](uint64_t h) { return h == hold[0]; });
}

bool PcieLink::idle() const {
  catch_up_all();
  for (const Side& sd : side_)
    if (!sd.tlps.empty() || !sd.dllps.empty() || !sd.in_flight.empty() || !sd.held.empty() ||
        !sd.fc_in_flight.empty() || sd.ack_owed || sd.owed_count)
      return false;
  return true;
}

void PcieLink::catch_up_all() const {
  // Outside the kernel the time reached is still to come (the kernel stops before its events);
  // the run's end has no actions left at it (StatRegistry::on_lazy ran them).
  const bool running = sc_core::sc_get_status() == sc_core::SC_RUNNING;
  const_cast<PcieLink*>(this)->run_actions(now_ps(), running ? delta_now() : 0);
}

void PcieLink::run_due(uint64_t now, uint64_t delta) {
  for (;;) {
    // The earliest action of either side by (time, delta, arrival before credits before pick
    // before ACK timer before UpdateFC timer); all but an idle transmitter's pick act in the
    // first delta of their time.
    // One side's actions at a time change nothing the other's read then.
    uint64_t t = kNoTimer, d = 0;
    int what = -1, who = 0;
    for (int s = 0; s < 2; ++s) {
      const Side& sd = side_[s];
      const Side& peer = side_[1 - s];
      auto consider = [&](uint64_t at, uint64_t dl, int w) {
        if (at < t || (at == t && (dl < d || (dl == d && w < what)))) {
          t = at;
          d = dl;
          what = w;
          who = s;
        }
      };
      if (!sd.in_flight.empty()) consider(sd.in_flight.front(), 0, 0);
      if (!peer.fc_in_flight.empty()) consider(peer.fc_in_flight.front().arrive_ps, 0, 1);
      if (sd.pick_due) consider(sd.pick_ps, sd.pick_delta, 2);
      if (sd.ack_due_ps != kNoTimer) consider(sd.ack_due_ps, 0, 3);
      if (sd.fc_timer_due_ps != kNoTimer) consider(sd.fc_timer_due_ps, 0, 4);
    }
    if (what < 0 || t > now || (t == now && d >= delta)) return;
    if (what == 0)
      arrival(who);
    else if (what == 1)
      grant(who);
    else if (what == 2)
      pick_now(who);
    else if (what == 3)
      ack_timer(who, t);
    else
      fc_timer_due(who, t, 0);
  }
}

void PcieLink::grant(int s) {
  Side& sd = side_[s];
  const Dllp p = side_[1 - s].fc_in_flight.take_front();
  if (p.fc == FcClass::kPosted) {
    sd.granted.ph += p.hdr;
    sd.granted.pd += p.data;
  } else {
    sd.granted.nph += p.hdr;
  }
  kick(sd, p.arrive_ps, 0);
}

void PcieLink::send(int s, Tlp tlp) {
  const uint64_t now = now_ps(), delta = delta_now();
  run_actions(now, delta);
  Side& sd = side_[s];
  const char* from = sched_.actor();
  if (sd.tail_ps != now || sd.tail_delta != delta) {
    sd.tail_ps = now;
    sd.tail_delta = delta;
    sd.tail_from.clear();
  }
  // Behind the tail's TLPs from senders whose names do not come after this one's.
  size_t k = sd.tail_from.size();
  if (k && from != sd.tail_from.back()) {
    while (k > 0 && sd.tail_from[k - 1] != from && std::strcmp(sd.tail_from[k - 1], from) > 0) --k;
  }
  ++sd.queued[int(tlp.type)];
  const uint32_t wire = wire_bytes(tlp);
  const bool w = wakes(side_[1 - s], tlp);
  sd.queued_wakes += w;
  if (k == sd.tail_from.size()) {
    sd.tail_from.push_back(from);
    Queued& q = sd.tlps.emplace_back();
    q.tlp = std::move(tlp);
    q.wire = wire;
    q.wakes = w;
  } else {
    const size_t behind = sd.tail_from.size() - k;
    sd.tail_from.insert(sd.tail_from.begin() + int64_t(k), from);
    sd.tlps.insert(sd.tlps.size() - behind, Queued{std::move(tlp), wire, w});
  }
  kick(sd, now, delta);
  arm(s, now);
}

void PcieLink::kick(Side& sd, uint64_t at, uint64_t delta) {
  if (sd.pick_due) return;  // it picks at the end of the packet it sends
  sd.pick_due = true;
  if (sd.ends_idle && (at < sd.busy_until_ps || (at == sd.busy_until_ps && delta == 0))) {
    // By the first delta at the end of the packet on the wire: the pick of that end.
    sd.pick_ps = sd.busy_until_ps;
    sd.pick_delta = 0;
  } else {
    sd.pick_ps = std::max(at, sd.busy_until_ps);
    sd.pick_delta = delta + 1;
  }
  sd.ends_idle = false;
}

uint32_t PcieLink::wire_bytes(const Tlp& t) const {
  return tlp_wire_bytes(t.payload_wire_bytes(), t.header_bytes(), int(cfg_.gen));
}

bool PcieLink::credited(const Side& sd, const Tlp& t) {
  switch (t.fc_class()) {
    case FcClass::kPosted:
      return sd.granted.ph >= 1 && sd.granted.pd >= t.data_credits();
    case FcClass::kNonPosted:
      return sd.granted.nph >= 1;
    default:
      return true;  // completions: infinite credits
  }
}

int PcieLink::pick(Side& sd) {
  if (!sd.dllps.empty()) return kPickDllp;
  for (size_t i = 0; i < sd.tlps.size(); ++i) {
    const Tlp& t = sd.tlps[i].tlp;
    const FcClass c = t.fc_class();
    if (credited(sd, t)) {
      if (c == FcClass::kPosted) {
        sd.granted.ph -= 1;
        sd.granted.pd -= t.data_credits();
      } else if (c == FcClass::kNonPosted) {
        sd.granted.nph -= 1;
      }
      return int(i);
    }
    if (i == 0) ++*sd.st.credit_stalls;
    if (c != FcClass::kNonPosted) return kPickNone;  // only blocked non-posted TLPs may be passed
  }
  return kPickNone;
}

void PcieLink::pick_now(int s) {
  Side& sd = side_[s];
  const uint64_t at = sd.pick_ps;
  const int i = pick(sd);
  if (i == kPickNone) {
    sd.pick_due = false;  // idle until a packet, a DLLP or a credit comes
    return;
  }
  const uint64_t lat = uint64_t(cfg_.link_latency_ns) * 1000;
  uint64_t dur;
  if (i == kPickDllp) {
    Dllp d = sd.dllps.take_front();
    ++*(d.kind == Kind::kAck ? sd.st.acks : sd.st.updatefcs);
    dur = sd.clock.ps_for(kDllpWireBytes);
    sd.sending = d.kind;
    sd.sending_type = TlpType::kMWr;  // (read only while a TLP is sent)
    sd.sending_bytes = kDllpWireBytes;
    if (d.kind == Kind::kUpdateFc) {
      d.arrive_ps = at + dur + lat;
      sd.fc_in_flight.push_back(std::move(d));
    }
  } else {
    Queued& q = sd.tlps[size_t(i)];
    const TlpType type = q.tlp.type;
    --sd.queued[int(type)];
    sd.queued_wakes -= q.wakes;
    ++*sd.st.tlps;
    *sd.st.tlp_wire_bytes += q.wire;
    *sd.st.payload_bytes += q.tlp.payload_wire_bytes();
    dur = sd.clock.ps_for(q.wire);
    sd.sending = Kind::kTlp;
    sd.sending_type = type;
    sd.sending_bytes = q.wire;
    const uint64_t arrive = at + dur + lat;
    sd.in_flight.push_back(uint64_t(arrive));
    // In the order the peer takes them: by the end of their holds, then as they were sent.
    Side& peer = side_[1 - s];
    const uint64_t taken = arrive + peer.hold[int(type)];
    if (peer.later && q.wakes) peer.wake_times.push_back(uint64_t(taken));  // no hold: in order
    size_t k = peer.held.size();
    while (k > 0 && peer.held[k - 1].at > taken) --k;
    if (k == peer.held.size()) {
      Held& h = peer.held.emplace_back();
      h.at = taken;
      h.wakes = q.wakes;
      h.tlp = std::move(q.tlp);
    } else {
      peer.held.insert(k, Held{taken, q.wakes, std::move(q.tlp)});
    }
    if (i == 0)
      sd.tlps.drop_front();
    else
      sd.tlps.drop(size_t(i));
  }
  sd.busy_until_ps = at + dur;
  sd.busy_ps += dur;
  // The next pick, at the end of this packet; none if nothing waits (a kick before then puts
  // it back: ends_idle).
  sd.pick_ps = sd.busy_until_ps;
  sd.pick_delta = 0;
  if (sd.tlps.empty() && sd.dllps.empty()) {
    sd.pick_due = false;
    sd.ends_idle = true;
  }
}

uint64_t PcieLink::least_queued_hold(int s) const {
  const Side& sd = side_[s];
  const Side& peer = side_[1 - s];
  if (peer.flat_hold) return peer.hold[0];
  uint64_t h = kNoTimer;
  for (int k = 0; k < 4; ++k)
    if (sd.queued[k]) h = std::min(h, peer.hold[k]);
  return h;
}

void PcieLink::arrival(int s) {
  Side& sd = side_[s];
  Side& peer = side_[1 - s];
  const uint64_t at = sd.in_flight.take_front();
  if (++peer.ack_owed >= cfg_.ack_factor) {
    queue_ack(1 - s, at, 0);
  } else if (peer.ack_due_ps == kNoTimer) {
    peer.ack_due_ps = at + uint64_t(cfg_.ack_timer_ns) * 1000;
  }
}

void PcieLink::deliver_due(int s, uint64_t now) {
  Side& peer = side_[1 - s];
  while (!peer.held.empty() && peer.held.front().at <= now) deliver_front(peer);
}

void PcieLink::deliver_front(Side& r) {
  Held h = r.held.take_front();
  if (r.later && h.wakes) r.wake_times.pop_front();
  taken_at_ = h.at;
  if (r.deliver) r.deliver(std::move(h.tlp));
}

void PcieLink::take_arrived(int s, uint64_t upto_ps) {
  Side& r = side_[s];
  if (r.held.empty() || r.held.front().at > upto_ps) {
    // Those sent and not yet held: picks the link has yet to work out.
    if (side_[1 - s].tlps.empty() || next_action_ps(1 - s) > upto_ps) return;
  }
  catch_up_all();
  while (!r.held.empty() && r.held.front().at <= upto_ps) deliver_front(r);
}

uint64_t PcieLink::next_waking_arrival(int s) const {
  const Side& sd = side_[s];
  if (!sd.pick_due) return kNoTimer;
  uint64_t rem = sd.clock.rem();
  uint64_t t = sd.pick_ps;
  for (size_t i = 0; i < sd.dllps.size(); ++i) t += sd.clock.peek_ps_for(kDllpWireBytes, rem);
  for (size_t i = 0; i < sd.tlps.size(); ++i) {
    const Queued& q = sd.tlps[i];
    if (!credited(sd, q.tlp)) {
      if (q.tlp.fc_class() != FcClass::kNonPosted) break;  // as pick() passes a blocked TLP
      continue;
    }
    const uint64_t d = sd.clock.peek_ps_for(q.wire, rem);
    if (q.wakes) return t + d + uint64_t(cfg_.link_latency_ns) * 1000;
    t += d;
  }
  return kNoTimer;
}

uint64_t PcieLink::next_updatefc_arrival(const Side& from) const {
  if (!from.fc_in_flight.empty()) return from.fc_in_flight.front().arrive_ps;
  if (from.pick_due) {  // DLLPs go before TLPs, in their order
    uint64_t rem = from.clock.rem();
    uint64_t t = from.pick_ps;
    for (size_t i = 0; i < from.dllps.size(); ++i) {
      t += from.clock.peek_ps_for(kDllpWireBytes, rem);
      if (from.dllps[i].kind == Kind::kUpdateFc) return t + uint64_t(cfg_.link_latency_ns) * 1000;
    }
  }
  return from.owed_count > 0 ? from.fc_timer_due_ps : kNoTimer;
}

void PcieLink::arm(int s, uint64_t now) {
  Side& sd = side_[s];
  if (sd.wake_ps < now) sd.wake_ps = kNoTimer;
  // Everything this side does before the peer's upper layer takes its next TLP is seen by no one
  // but itself until then: it is worked out then. That TLP is the first in flight or held, or
  // the first it would send from what it holds (a DLLP, an UpdateFC's or its timer's, may go
  // first and delay it: it is worked out then; one sent later may be taken sooner only if the
  // peer holds its type for less). TLPs waiting for credits: the pick itself, and the first
  // UpdateFC that can bring them. An ACK or an UpdateFC alone wakes no one (a run that has
  // nothing else left works them out: StatRegistry::on_lazy).
  uint64_t w = next_delivery(s);
  const Side& peer = side_[1 - s];
  if (!sd.tlps.empty() && (!peer.later || sd.queued_wakes > 0)) {
    // None of them arrives before the wire is free and the latency is over.
    const uint64_t hold = least_queued_hold(s);
    if (w == kNoTimer ||
        w > std::max(now, sd.busy_until_ps) + uint64_t(cfg_.link_latency_ns) * 1000 + hold) {
      const uint64_t a = next_waking_arrival(s);
      if (a != kNoTimer)
        w = std::min(w, a + hold);
      else if (w == kNoTimer)
        w = std::min(sd.pick_due ? sd.pick_ps : kNoTimer, next_updatefc_arrival(side_[1 - s]));
    }
  }
  if (traced_) arm_trace(now);
  if (w == kNoTimer || w >= sd.wake_ps) return;
  sd.wake_ps = w;
  sched_.wake(sd.wake_id, std::max(w, now));
}

// Only a time step: what happens at it is read at its end, when the file is written (a reader
// in the middle of a time step could see a pick done that a process later in it would not).
void PcieLink::on_trace() {
  trace_wake_ps_ = kNoTimer;
  StepEnd::get().request(trace_end_);
}

void PcieLink::arm_trace(uint64_t now) {
  if (trace_wake_ps_ <= now) trace_wake_ps_ = kNoTimer;
  for (const Side& sd : side_)
    if (sd.pick_due && sd.pick_ps <= now) StepEnd::get().request(trace_end_);  // a pick now
  uint64_t w = kNoTimer;
  for (const Side& sd : side_)
    for (uint64_t t :
         {sd.pick_due ? sd.pick_ps : kNoTimer, sd.busy_until_ps, sd.ack_due_ps, sd.fc_timer_due_ps,
          sd.fc_in_flight.empty() ? kNoTimer : sd.fc_in_flight.front().arrive_ps,
          sd.in_flight.empty() ? kNoTimer : sd.in_flight.front()})
      if (t > now) w = std::min(w, t);
  if (w == kNoTimer || w >= trace_wake_ps_) return;
  trace_wake_ps_ = w;
  notify_at(trace_ev_, w);
}

void PcieLink::on_event() {
  const uint64_t now = now_ps(), delta = delta_now();
  // What came before this delta, then the arrivals at this time, then the deliveries due. This
  // delta's picks and timers come after everything else of the delta, whatever order the kernel
  // runs its processes in.
  run_actions(now, delta);
  for (int s = 0; s < 2; ++s)
    while (!side_[s].in_flight.empty() && side_[s].in_flight.front() <= now) arrival(s);
  for (int s = 0; s < 2; ++s) deliver_due(s, now);
  for (int s = 0; s < 2; ++s) arm(s, now);
}

void PcieLink::queue_ack(int s, uint64_t at, uint64_t delta) {
  Side& sd = side_[s];
  sd.ack_owed = 0;
  Dllp p;
  p.kind = Kind::kAck;
  sd.dllps.push_back(std::move(p));
  kick(sd, at, delta);
}

void PcieLink::ack_timer(int s, uint64_t at) {
  side_[s].ack_due_ps = kNoTimer;
  if (side_[s].ack_owed > 0) queue_ack(s, at, 0);
}

void PcieLink::release(int s, FcClass c, uint32_t data_credits) {
  if (c == FcClass::kCompletion) return;  // infinite completion credits
  const uint64_t now = now_ps(), delta = delta_now();
  run_actions(now, delta);
  Side& sd = side_[s];
  // A release at the time the UpdateFC timer is due comes after it, whichever of the two the
  // kernel runs first (the upper layer's release is another process): the timer's UpdateFC
  // returns what was owed before, this credit starts the next timer.
  if (sd.fc_timer_due_ps == now) fc_timer_due(s, now, delta);
  sd.owed_hdr[int(c)] += 1;
  sd.owed_data[int(c)] += data_credits;
  if (++sd.owed_count >= cfg_.updatefc_factor) {
    flush_fc(s, now, delta);
  } else if (sd.fc_timer_due_ps == kNoTimer) {
    sd.fc_timer_due_ps = now + uint64_t(cfg_.updatefc_timer_ns) * 1000;
  }
  arm(s, now);
  if (!side_[1 - s].tlps.empty()) arm(1 - s, now);  // they may wait for these credits
}

void PcieLink::flush_fc(int s, uint64_t at, uint64_t delta) {
  Side& sd = side_[s];
  for (int c = 0; c < 2; ++c) {
    if (sd.owed_hdr[c] == 0) continue;
    Dllp p;
    p.kind = Kind::kUpdateFc;
    p.fc = FcClass(c);
    p.hdr = sd.owed_hdr[c];
    p.data = sd.owed_data[c];
    sd.owed_hdr[c] = sd.owed_data[c] = 0;
    sd.dllps.push_back(std::move(p));
  }
  sd.owed_count = 0;
  kick(sd, at, delta);
}

void PcieLink::fc_timer_due(int s, uint64_t at, uint64_t delta) {
  side_[s].fc_timer_due_ps = kNoTimer;
  if (side_[s].owed_count > 0) flush_fc(s, at, delta);
}

}  // namespace rnic::pcie
