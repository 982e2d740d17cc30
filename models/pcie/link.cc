#include "models/pcie/link.h"

#include <fmt/format.h>

#include "models/common/event_queue.h"

namespace rnic::pcie {

using sc_core::sc_time;

uint64_t PcieLink::now_ps() { return sc_core::sc_time_stamp().value(); }

static sc_time ps(uint64_t v) { return sc_time::from_value(v); }

PcieLink::PcieLink(sc_core::sc_module_name n, const PcieConfig& cfg, StatRegistry& stats)
    : sc_core::sc_module(n), cfg_(cfg) {
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
          const uint64_t now = now_ps();
          const Side& sd = side_[s];
          const uint64_t busy = sd.busy_ps - (sd.busy_until_ps > now ? sd.busy_until_ps - now : 0);
          const double u = now > last_ps ? double(busy - last_busy) / double(now - last_ps) : 0.0;
          last_ps = now;
          last_busy = busy;
          return u;
        });
  }
  sc_core::sc_spawn_options o;
  o.spawn_method();
  for (Side& sd : side_) {
    o.set_sensitivity(&sd.arrive_ev);
    o.set_sensitivity(&sd.tx_ev);
    o.set_sensitivity(&sd.ack_timer_ev);
    o.set_sensitivity(&sd.fc_timer_ev);
  }
  o.dont_initialize();
  sc_core::sc_spawn([this] { on_event(); }, "events", &o);
  configure(cfg);
}

void PcieLink::trace(TraceSink& t) const {
  static const char* const kSide[2] = {"rc_tx", "card_tx"};
  for (int s = 0; s < 2; ++s) {
    const Side& sd = side_[s];
    const std::string scope = std::string(name()) + "." + kSide[s];
    // 0 idle, 1 TLP, 2 ACK, 3 UpdateFC
    t.add_value(scope, "packet", 2,
                [&sd] { return now_ps() < sd.busy_until_ps ? 1 + uint64_t(sd.sending) : 0; });
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
  std::string s;
  for (int i = 0; i < 2; ++i) {
    const Side& sd = side_[i];
    s += fmt::format(
        "  {}.{}: {} TLPs and {} DLLPs queued, {} in flight, credits ph {} pd {} nph {}\n", name(),
        kSide[i], sd.tlps.size(), sd.dllps.size(), sd.live_in_flight, sd.granted.ph, sd.granted.pd,
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

bool PcieLink::idle() const {
  for (const Side& sd : side_)
    if (!sd.tlps.empty() || !sd.dllps.empty() || sd.live_in_flight || sd.ack_owed || sd.owed_count)
      return false;
  return true;
}

void PcieLink::send(int s, Tlp tlp) {
  side_[s].tlps.push_back(std::move(tlp));
  kick(side_[s]);
}

void PcieLink::kick(Side& sd) {
  const uint64_t now = now_ps();
  if (now >= sd.busy_until_ps) {
    sd.tx_ev.notify(sc_core::SC_ZERO_TIME);
  } else if (!sd.wake_at_end) {
    sd.wake_at_end = true;
    sd.tx_ev.notify(ps(sd.busy_until_ps - now));
  }
}

bool PcieLink::pick(Side& sd, Packet* out) {
  if (!sd.dllps.empty()) {
    *out = std::move(sd.dllps.front());
    sd.dllps.pop_front();
    return true;
  }
  for (auto it = sd.tlps.begin(); it != sd.tlps.end(); ++it) {
    const FcClass c = it->fc_class();
    bool ok = true;
    if (c == FcClass::kPosted) ok = sd.granted.ph >= 1 && sd.granted.pd >= it->data_credits();
    if (c == FcClass::kNonPosted) ok = sd.granted.nph >= 1;
    if (ok) {
      if (c == FcClass::kPosted) {
        sd.granted.ph -= 1;
        sd.granted.pd -= it->data_credits();
      } else if (c == FcClass::kNonPosted) {
        sd.granted.nph -= 1;
      }
      out->kind = Kind::kTlp;
      out->tlp = std::move(*it);
      sd.tlps.erase(it);
      return true;
    }
    if (it == sd.tlps.begin()) ++*sd.st.credit_stalls;
    if (c != FcClass::kNonPosted) return false;  // only blocked non-posted TLPs may be passed
  }
  return false;
}

void PcieLink::tx(int s) {
  Side& sd = side_[s];
  const uint64_t now = now_ps();
  if (now < sd.busy_until_ps) {
    // A newer (earlier) notification replaced the end-of-packet one: ask for it again.
    sd.wake_at_end = true;
    sd.tx_ev.notify(ps(sd.busy_until_ps - now));
    return;
  }
  sd.wake_at_end = false;
  Packet p;
  if (!pick(sd, &p)) return;
  uint32_t bytes = kDllpWireBytes;
  if (p.kind == Kind::kTlp) {
    bytes = tlp_wire_bytes(p.tlp.payload_wire_bytes(), p.tlp.header_bytes(), int(cfg_.gen));
    ++*sd.st.tlps;
    *sd.st.tlp_wire_bytes += bytes;
    *sd.st.payload_bytes += p.tlp.payload_wire_bytes();
  } else if (p.kind == Kind::kAck) {
    ++*sd.st.acks;
  } else {
    ++*sd.st.updatefcs;
  }
  const uint64_t dur = sd.clock.ps_for(bytes);
  sd.sending = p.kind;
  sd.sending_type = p.tlp.type;
  sd.sending_bytes = bytes;
  sd.busy_until_ps = now + dur;
  sd.busy_ps += dur;
  p.arrive_ps = now + dur + uint64_t(cfg_.link_latency_ns) * 1000;
  if (p.kind != Kind::kAck && sd.live_in_flight++ == 0) sd.arrive_ev.notify(ps(p.arrive_ps - now));
  sd.in_flight.push_back(std::move(p));
  // Wake at the end of the packet only if something waits; kick() asks for it otherwise.
  if (!sd.tlps.empty() || !sd.dllps.empty()) {
    sd.wake_at_end = true;
    sd.tx_ev.notify(ps(dur));
  }
}

uint64_t PcieLink::earliest_tlp_arrival_ps(int to) const {
  const Side& from = side_[1 - to];
  for (const Packet& p : from.in_flight)
    if (p.kind == Kind::kTlp) return p.arrive_ps;
  // A packet not yet sent starts no earlier than the wire is free, and takes its wire time (more
  // than 0) and the latency.
  return std::max(now_ps(), from.busy_until_ps) + uint64_t(cfg_.link_latency_ns) * 1000;
}

void PcieLink::arrive(int s) {
  Side& sd = side_[s];
  Side& peer = side_[1 - s];
  const uint64_t now = now_ps();
  while (!sd.in_flight.empty() && sd.in_flight.front().arrive_ps <= now) {
    Packet p = std::move(sd.in_flight.front());
    sd.in_flight.pop_front();
    if (p.kind != Kind::kAck) --sd.live_in_flight;
    if (p.kind == Kind::kTlp) {
      if (++peer.ack_owed >= cfg_.ack_factor) {
        queue_ack(1 - s);
      } else if (!peer.ack_timer_armed) {
        peer.ack_timer_armed = true;
        peer.ack_timer_ev.notify(ps(uint64_t(cfg_.ack_timer_ns) * 1000));
      }
      if (peer.deliver) peer.deliver(std::move(p.tlp));
    } else if (p.kind == Kind::kUpdateFc) {
      // Side s returns buffer space to the peer's transmitter.
      if (p.fc == FcClass::kPosted) {
        peer.granted.ph += p.hdr;
        peer.granted.pd += p.data;
      } else {
        peer.granted.nph += p.hdr;
      }
      kick(peer);
    }
  }
  arm_arrival(sd, now);
}

void PcieLink::arm_arrival(Side& sd, uint64_t now) {
  if (!sd.live_in_flight) return;
  for (const Packet& p : sd.in_flight)
    if (p.kind != Kind::kAck) return sd.arrive_ev.notify(ps(p.arrive_ps - now));
}

void PcieLink::on_event() {
  for (int s = 0; s < 2; ++s)
    if (side_[s].arrive_ev.triggered()) arrive(s);
  for (int s = 0; s < 2; ++s)
    if (side_[s].tx_ev.triggered()) tx(s);
  for (int s = 0; s < 2; ++s)
    if (side_[s].ack_timer_ev.triggered()) ack_timer(s);
  for (int s = 0; s < 2; ++s)
    if (side_[s].fc_timer_ev.triggered()) fc_timer(s);
}

void PcieLink::queue_ack(int s) {
  Side& sd = side_[s];
  sd.ack_owed = 0;
  Packet p;
  p.kind = Kind::kAck;
  sd.dllps.push_back(std::move(p));
  kick(sd);
}

void PcieLink::ack_timer(int s) {
  side_[s].ack_timer_armed = false;
  if (side_[s].ack_owed > 0) queue_ack(s);
}

void PcieLink::release(int s, FcClass c, uint32_t data_credits) {
  if (c == FcClass::kCompletion) return;  // infinite completion credits
  Side& sd = side_[s];
  // A release at the time the UpdateFC timer is due comes after it, whichever of the two the
  // kernel runs first (the upper layer's release is another process): the timer's UpdateFC
  // returns what was owed before, this credit starts the next timer.
  const uint64_t now = now_ps();
  if (sd.fc_timer_due_ps == now) fc_timer_due(s);
  sd.owed_hdr[int(c)] += 1;
  sd.owed_data[int(c)] += data_credits;
  if (++sd.owed_count >= cfg_.updatefc_factor) {
    flush_fc(s);
  } else if (sd.fc_timer_due_ps == kNoTimer) {
    sd.fc_timer_due_ps = now + uint64_t(cfg_.updatefc_timer_ns) * 1000;
    sd.fc_timer_ev.notify(ps(sd.fc_timer_due_ps - now));
  }
}

void PcieLink::flush_fc(int s) {
  Side& sd = side_[s];
  for (int c = 0; c < 2; ++c) {
    if (sd.owed_hdr[c] == 0) continue;
    Packet p;
    p.kind = Kind::kUpdateFc;
    p.fc = FcClass(c);
    p.hdr = sd.owed_hdr[c];
    p.data = sd.owed_data[c];
    sd.owed_hdr[c] = sd.owed_data[c] = 0;
    sd.dllps.push_back(std::move(p));
  }
  sd.owed_count = 0;
  kick(sd);
}

void PcieLink::fc_timer(int s) {
  Side& sd = side_[s];
  const uint64_t now = now_ps();
  if (sd.fc_timer_due_ps == now) return fc_timer_due(s);
  // Done already by a release at this time, which armed the next timer: the kernel kept this
  // earlier notification and dropped that one.
  if (sd.fc_timer_due_ps != kNoTimer) sd.fc_timer_ev.notify(ps(sd.fc_timer_due_ps - now));
}

void PcieLink::fc_timer_due(int s) {
  side_[s].fc_timer_due_ps = kNoTimer;
  if (side_[s].owed_count > 0) flush_fc(s);
}

}  // namespace rnic::pcie
