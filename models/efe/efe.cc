#include "models/efe/efe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/common/byte_pool.h"
#include "models/common/bytes.h"
#include "models/common/log.h"
#include "models/common/sim_time.h"

namespace rnic::efe {

std::string Efe::peer_group(const eth::Mac& m) const {
  std::string s = std::string(name()) + ".peer_";
  for (uint8_t b : m) s += fmt::format("{:02x}", b);
  return s;
}

void Efe::trace(TraceSink& t, const std::vector<eth::Mac>& peers) const {
  for (const eth::Mac& m : peers) {
    const std::string scope = peer_group(m);
    auto with = [this, m](auto f) {
      return [this, m, f]() -> uint64_t {
        auto it = peers_.find(m);
        return it == peers_.end() ? 0 : uint64_t(f(*it->second));
      };
    };
    t.add_value(scope, "tx_next_seq", 32, with([](const Peer& p) { return p.tx.next_seq(); }));
    t.add_value(scope, "tx_base", 32, with([](const Peer& p) { return p.tx.base(); }));
    t.add_value(scope, "tx_window", 32,
                with([](const Peer& p) { return p.tx.highest_sent() - p.tx.base(); }));
    t.add_value(scope, "tx_buffered_bytes", 32,
                with([](const Peer& p) { return p.tx.buffered_bytes(); }));
    t.add_value(scope, "rate_mbps", 32, with([](const Peer& p) { return p.rate_bps / 1e6; }));
    t.add_value(scope, "srtt_ns", 32, with([](const Peer& p) { return p.srtt_ps / 1000; }));
    t.add_value(scope, "rto_ns", 32, with([](const Peer& p) { return p.tx.rto() / 1000; }));
    t.add_value(scope, "rx_expected", 32, with([](const Peer& p) { return p.rx.expected(); }));
    t.add_value(scope, "retransmissions", 32,
                with([](const Peer& p) { return p.tx.retransmissions(); }));
  }
}

Efe::Efe(sc_core::sc_module_name n, eth::EthMac& port, eth::Mac mac, int64_t clk_mhz,
         const EfeConfig& cfg, StatRegistry& stats)
    : sc_core::sc_module(n),
      port_(port),
      mac_(mac),
      cfg_(cfg),
      ch_cfg_(cfg.channel()),
      send_qd_(cfg.cc_delay == "one_way"),
      clk_(ClockDomain::mhz(clk_mhz)),
      stats_(stats),
      // Resends, their timers and what answers them are no progress for the watchdog: a
      // channel resending into a link that is down for good (retry_budget_ns 0) is a hung run.
      tx_data_(no_progress(
          stats.group(name()).counter("tx_data", "frames", "DATA frames sent (resends too)"))),
      tx_acks_(no_progress(
          stats.group(name()).counter("tx_acks", "frames", "standalone ACK frames sent"))),
      tx_nacks_(no_progress(stats.group(name()).counter("tx_nacks", "frames", "NACK frames sent"))),
      tx_rnrs_(stats.group(name()).counter("tx_rnrs", "frames", "RNR frames sent")),
      rx_data_(stats.group(name()).counter("rx_data", "frames",
                                           "DATA frames received in order and given to the core")),
      rx_acks_(
          no_progress(stats.group(name()).counter("rx_acks", "frames", "ACK frames received"))),
      rx_dropped_(stats.group(name()).counter(
          "rx_dropped", "frames", "frames not for this MAC, not EFE, or with a malformed header")),
      rx_out_of_seq_(no_progress(stats.group(name()).counter("rx_out_of_seq", "frames",
                                                             "DATA frames after a gap (dropped)"))),
      rx_duplicates_(no_progress(stats.group(name()).counter(
          "rx_duplicates", "frames", "DATA frames received again (dropped)"))),
      retransmissions_(no_progress(
          stats.group(name()).counter("retransmissions", "frames", "DATA frames resent"))),
      failures_(stats.group(name()).counter(
          "channel_failures", "", "channels failed: retry budget spent without progress")),
      looped_(stats.group(name()).counter("looped", "frames",
                                          "frames to this card's own MAC, looped back by the MAC")),
      keepalive_ps_(uint64_t(cfg.keepalive_ns) * 1000) {
  step_id_ = StepEnd::get().add([this] { send_next(); });
  if (keepalive_ps_) {
    // Probes and their answers are no progress for the watchdog: a workload that waits for a
    // peer that answers them and nothing else is a hung run.
    keepalives_ = &no_progress(stats.group(name()).counter(
        "keepalives", "frames",
        "keepalive probes sent (efe.keepalive_ns; their resends count as retransmissions)"));
    rx_keepalives_ = &no_progress(stats.group(name()).counter(
        "rx_keepalives", "frames", "keepalive probes received in order (acknowledged)"));
    // The probes go off as timers that do not keep the run going: a run whose workload is done
    // ends at its last other event (StatRegistry::on_idle_timer).
    stats.on_idle_timer(
        this, [this] { return keepalive_due(); },
        [this](uint64_t t) {
          keepalive_check_ = true;
          eq_.at(t, [this] {
            keepalive_check_ = false;
            keepalive_check();
          });
        });
  }
  if (cfg_.decoy_timer) {
    decoy_ev_ = std::make_unique<sc_core::sc_event>("decoy_timer_ev");
    spawn_method_on(*decoy_ev_, "decoy_timer", [this] {
      throw std::logic_error(std::string(name()) + ": the decoy timer fired");
    });
  }
  port_.set_receiver([this](const eth::EthMac::FramePtr& f) { receive(f); });
  port_.set_space_callback([this] {
    if (in_mac_ > 0) --in_mac_;
    pump();
  });
}

Efe::~Efe() { stats_.drop_settle(this); }

void Efe::open(const TransportStream& s, uint32_t, uint8_t, TransportPorts) {
  connected_.insert(s.peer);
  if (!keepalive_ps_) return;
  Peer& p = peer(s.peer);
  p.keepalive = true;
  p.heard_ps = std::max(p.heard_ps, now_ps());
  if (keepalive_idle(p)) stats_.idle_timer_moved(p.heard_ps + keepalive_ps_);
}

uint64_t Efe::keepalive_due() const {
  if (keepalive_check_) return UINT64_MAX;
  uint64_t t = UINT64_MAX;
  for (const auto& [m, p] : peers_)
    if (keepalive_idle(*p)) t = std::min(t, p->heard_ps + keepalive_ps_);
  return t;
}

// Each channel due sends a probe: a DATA frame to kAnnounceQpn with AR and no QPN (the peer
// acknowledges it and fails nothing). It is resent as any DATA frame, and the retry budget fails
// the channel (and so its QPs) when the peer is gone.
void Efe::keepalive_check() {
  const uint64_t now = now_ps();
  for (auto& [m, pp] : peers_) {
    Peer& p = *pp;
    if (!keepalive_idle(p) || p.heard_ps + keepalive_ps_ > now) continue;
    EfeTx::Meta meta;
    meta.dst_qpn = kAnnounceQpn;
    meta.ar = true;
    p.tx.send(take_bytes(0), meta);
    ++*keepalives_;
    list(p);
  }
  pump();
}

Efe::Peer& Efe::peer(const eth::Mac& m) {
  // A frame's work asks for its peer several times over: the last one found comes first.
  if (last_peer_ && same_mac(last_peer_->mac, m)) return *last_peer_;
  auto it = peer_index_.find(mac_value(m));
  if (it != peer_index_.end()) {
    last_peer_ = it->second;
    return *last_peer_;
  }
  auto p = std::make_unique<Peer>(ch_cfg_, m, cc_config());
  StatGroup& g = stats_.group(peer_group(m));
  p->tx_frames =
      &no_progress(g.counter("tx_frames", "frames", "DATA frames sent to the peer (resends too)"));
  p->tx_bytes =
      &no_progress(g.counter("tx_bytes", "B", "DATA payload bytes sent to the peer (resends too)"));
  p->rx_frames =
      &no_progress(g.counter("rx_frames", "frames", "DATA frames received from the peer"));
  p->rx_bytes =
      &no_progress(g.counter("rx_bytes", "B", "DATA payload bytes received from the peer"));
  p->retransmissions = &no_progress(g.counter("retransmissions", "frames", "DATA frames resent"));
  p->timeouts = &no_progress(g.counter("timeouts", "", "retransmit timer expiries"));
  p->nacks_rx = &no_progress(g.counter("nacks_rx", "frames", "NACKs received (a go-back each)"));
  p->nacks_tx = &no_progress(g.counter("nacks_tx", "frames", "NACKs sent (one per gap)"));
  p->rnrs_rx = &g.counter("rnrs_rx", "frames", "RNRs received (a back-off each)");
  p->rnrs_tx = &g.counter("rnrs_tx", "frames", "RNRs sent");
  p->duplicates =
      &no_progress(g.counter("duplicates", "frames", "DATA frames received again (dropped)"));
  p->out_of_order =
      &g.counter("out_of_order", "frames", "DATA frames received after a gap (dropped)");
  p->rx_refused = &g.counter("rx_buffer_refused", "frames",
                             "DATA frames refused for want of receive buffer (RNR)");
  p->failures = &g.counter("failures", "", "times the channel failed (retry budget)");
  p->resyncs = &g.counter("resyncs", "", "times the peer's channel started afresh (SY)");
  p->ece_rx = &g.counter("ece_rx", "frames", "ACKs echoing congestion (ECE) received");
  p->ce_rx = &g.counter("ce_rx", "frames", "DATA frames received marked CE");
  p->rtt = &g.histogram("rtt", "ns", "round trip: a DATA frame's TS to the ACK echoing it",
                        Histogram::log2_edges(250, 16));
  const Peer* raw = p.get();
  g.series("unacked_bytes", "B", "payload in the retransmit buffer (the window in use)",
           [raw] { return double(raw->tx.buffered_bytes()); });
  g.series("rate_gbps", "Gb/s", "the channel's sending rate (congestion control)",
           [raw] { return raw->rate_bps / 1e9; });
  last_peer_ = p.get();
  peer_index_.emplace(mac_value(m), last_peer_);
  peers_.emplace(m, std::move(p));
  return *last_peer_;
}

bool Efe::can_send(const eth::Mac& dst, size_t bytes) {
  Peer& p = peer(dst);
  if (p.fenced) return true;  // dropped (send)
  return p.pipeline + p.tx.unsent() < kTxQueueFrames && p.tx.can_send(p.pipeline_bytes + bytes);
}

uint32_t Efe::send(const eth::Mac& dst, uint32_t dst_qpn, std::vector<uint8_t> ddp, bool ar,
                   bool rq) {
  Peer& p = peer(dst);
  // Frames leave the pipeline in order, so this one's SEQ is known now.
  const uint32_t seq = p.tx.next_seq() + p.pipeline;
  if (p.fenced) {
    // The channel failed and the core has not failed its QPs yet: the segment is of a WR that
    // fails (a Terminate of a QP that does), and is dropped. The core forgets its SEQ.
    // (Made with the first such segment: a counter of a rare event, not in every run's stats.)
    ++stats_.group(name()).counter(
        "tx_after_failure", "segments",
        "segments handed over after their channel failed, before the core took the failure: "
        "dropped (their WRs fail)");
    return seq;
  }
  if (tx_fault) tx_fault(ddp);
  ++p.pipeline;
  p.pipeline_bytes += ddp.size();
  EfeTx::Meta meta;
  meta.dst_qpn = dst_qpn & 0xFFFFFF;
  meta.ar = ar;
  meta.rq = rq;
  eq_.at(edge(kTxCycles),
         [this, pp = &p, gen = p.tx_gen, seq, meta, ddp = std::move(ddp)]() mutable {
           if (gen != pp->tx_gen) return;  // the channel failed meanwhile: its WR failed with it
           --pp->pipeline;
           pp->pipeline_bytes -= ddp.size();
           const uint32_t got = pp->tx.send(std::move(ddp), meta);
           sc_assert(got == seq);
           (void)got;
           list(*pp);
           pump();
         });
  return seq;
}

void Efe::validated(const eth::Mac& from, uint32_t seq, bool ar) {
  Peer& p = peer(from);
  while (!p.delivered.empty() && !seq_before(seq, p.delivered.front().first)) {
    rx_buffered_ -= p.delivered.front().second;
    p.delivered.pop_front();
    ++p.unacked_valid;
  }
  if (ar || p.unacked_valid >= uint64_t(cfg_.ack_every_frames)) {
    p.ack_owed = true;
    // AR asks for an ACK frame: its TS echo is the sender's RTT sample (DATA frames going the
    // other way carry the ACK value, not the echo).
    if (ar) p.echo_owed = true;
    owe_control(p);
    pump();
  } else if (p.ack_due == UINT64_MAX && p.unacked_valid) {
    p.ack_due = now_ps() + uint64_t(cfg_.ack_delay_ns) * 1000;
    update_timer(p);
  }
}

uint32_t Efe::refuse(const eth::Mac& from, uint32_t seq) {
  Peer& p = peer(from);
  while (!p.delivered.empty() && !seq_before(p.delivered.back().first, seq)) {
    rx_buffered_ -= p.delivered.back().second;
    p.delivered_bytes -= p.delivered.back().second;
    p.delivered.pop_back();
  }
  p.rx.rewind(seq);
  drop_stored(p);
  ++*p.rx_refused;
  p.rnr_owed = true;
  p.rnr_seq = seq;
  owe_control(p);
  pump();
  return ++p.rx_gen;
}

void Efe::list(Peer& p) {
  if (p.listed) return;
  p.listed = true;
  ready_.push_back(&p);
}

void Efe::owe_control(Peer& p) {
  if (p.ctl_listed) return;
  p.ctl_listed = true;
  // Control frames owed at one time go in their peers' MAC order, whichever input SystemC ran
  // first (a validation from the core, the ACK timer, a frame received).
  const uint64_t now = now_ps();
  auto at = ctl_q_.end();
  while (at != ctl_q_.begin() && (*std::prev(at))->ctl_at == now && p.mac < (*std::prev(at))->mac)
    --at;
  p.ctl_at = now;
  ctl_q_.insert(at, &p);
}

void Efe::send_next() {
  bool freed = false;
  const uint64_t now = now_ps();
  while (port_.can_send() && in_mac_ < kMacFrames) {
    bool sent = false;
    while (!sent && !ctl_q_.empty()) {
      Peer& p = *ctl_q_.front();
      ctl_q_.pop_front();
      p.ctl_listed = false;
      sent = send_control(p);
    }
    if (sent) continue;
    Peer* p = nullptr;
    EfeTx::Frame* f = nullptr;
    while (!ready_.empty() && !f) {
      p = ready_.front();
      ready_.pop_front();
      f = p->tx.next(now);
      if (f && p->next_ok_ps > now) {
        // Paced: its turn comes back when the rate allows.
        f = nullptr;
        if (!p->wake) schedule_wake(p);
      }
      if (f && window_holds(*p, *f)) {
        // The window is full: an ACK, a NACK or the timer lists it again. A frame a NACK named
        // (or the timer marked) is not held back: the window may count frames lost beyond the
        // last gap the receiver saw, and the ACK that would open it waits for this frame.
        f = nullptr;
        p->window_full = true;
      }
      if (!f) p->listed = false;
    }
    if (!f) break;
    ready_.push_back(p);  // its turn again after the others
    Header h;
    h.type = Type::kData;
    h.ar = f->meta.ar;
    // Below line rate a channel asks for an ACK at once, once per round trip: slow start
    // doubles on it, and it brings RTT samples when DATA frames carry the peer's ACKs. So does a
    // channel with half its window out whose peer sends it no DATA frames (none for a round
    // trip), whose ACK values would ride on them: the peer's ACK coalescing (ack_every_frames,
    // ack_delay_ns) would hold the ACK past the window's end.
    const bool ack_rides = p->ts_rx_ps && now <= p->ts_rx_ps + uint64_t(round_trip(*p));
    if (!p->probe_out &&
        (p->cc.probing() ||
         (!ack_rides && 2 * (p->tx.flight_bytes() + f->payload.size()) >= p->cc.window()))) {
      h.ar = true;
      p->probe_out = true;
    }
    h.rq = f->meta.rq;
    h.dst_qpn = f->meta.dst_qpn;
    h.seq = f->seq;
    h.rtx = f->retransmission;
    h.sy = f->sy;
    h.ts = ts_now();
    if (!f->retransmission) {
      // A new frame tells the peer of every validation so far.
      f->meta.ack = p->ack_value();
      p->unacked_valid = 0;
      // An ECE, or the TS echo an AR asked for, still needs its ACK frame.
      if (!p->ce_seen && !p->echo_owed) p->ack_owed = false;
      if (p->echo_owed) {
        p->echo_ready = true;
        owe_control(*p);
      }
      p->ack_due = UINT64_MAX;
      freed = true;
    } else {
      ++retransmissions_;
      ++*p->retransmissions;
    }
    h.ack = f->meta.ack;
    std::vector<uint8_t> frame =
        build_frame({p->mac, mac_, eth::kEtherTypeEfe}, h, f->payload.data(), f->payload.size());
    const size_t wire = std::max(frame.size(), eth::kMinFrameBytes) + eth::kPreambleBytes +
                        eth::kFcsBytes + eth::kIfgBytes;
    if (transmit(std::move(frame), p->mac)) ++in_mac_;
    ++tx_data_;
    ++*p->tx_frames;
    *p->tx_bytes += f->payload.size();
    p->tx.sent(now);
    p->last_tx_ps = now;
    p->last_wire = wire;
    p->cc.on_sent(now, f->payload.size());
    p->rate_bps = p->cc.rate(now);
    if (p->rate_bps < line_bps())
      p->next_ok_ps = std::max(p->next_ok_ps, now) + uint64_t(double(wire) * 8e12 / p->rate_bps);
    update_timer(*p);
  }
  if (freed && on_space) on_space();
}

bool Efe::send_control(Peer& p) {
  Header h;
  std::vector<uint8_t> ranges;  // a selective NACK's payload
  h.seq = p.tx.highest_sent();
  // The echo: the last DATA frame's TS plus the time it has waited here since.
  h.ts = p.ts_echo + uint32_t((now_ps() - p.ts_rx_ps) / 1000);
  if (send_qd_) {
    h.qd = true;  // the echoed frame's forward queueing
    h.dst_qpn = std::min<uint32_t>(p.fwd_q_ns, 0xFFFFFF);
  }
  h.ut = p.util_seen;  // and its path's utilisation
  h.util = p.util;
  if (p.rnr_owed) {
    h.type = Type::kRnr;
    h.ack = p.rnr_seq;
    p.rnr_owed = false;
    ++tx_rnrs_;
    ++*p.rnrs_tx;
  } else if (p.nack_owed) {
    h.type = Type::kNack;
    h.ack = p.rx.expected();
    p.nack_owed = false;
    p.nack_ps = now_ps();
    if (ch_cfg_.selective && p.timer_nacks < kTimerNacks) {
      // Asked again ack_delay_ns on if the gap is still open by then, whether or not another
      // frame arrives: a window that holds the sender back sends none. (A peer that sends
      // nothing at all draws no more than kTimerNacks such NACKs: its own timer resends.)
      p.nack_due = p.nack_ps + uint64_t(cfg_.ack_delay_ns) * 1000;
      update_timer(p);
    }
    if (ch_cfg_.selective) {
      // Every gap up to the highest SEQ seen (what the store holds lies between them).
      uint32_t at = p.rx.expected();
      auto range = [&](uint32_t first, uint32_t end) {
        if (!seq_before(first, end) || ranges.size() >= 8 * kNackRanges) return;
        ranges.resize(ranges.size() + 8);
        put_be32(ranges.data() + ranges.size() - 8, first);
        put_be32(ranges.data() + ranges.size() - 4, end);
      };
      for (const auto& [k, st] : p.stored) {
        range(at, st.h.seq);
        at = st.h.seq + 1;
      }
      range(at, p.seen_end);
    }
    ++tx_nacks_;
    ++*p.nacks_tx;
  } else if (p.ack_owed && (p.ce_seen || p.echo_ready || !data_due(p, now_ps()))) {
    // An echo AR asked for goes right behind the DATA frame that carried the ACK value, so
    // the value never passes a Terminate on its way.
    h.type = Type::kAck;
    h.ack = p.ack_value();
    h.ece = p.ce_seen;
    p.ce_seen = false;
    p.echo_owed = false;
    p.echo_ready = false;
    p.ack_owed = false;
    p.unacked_valid = 0;
    p.ack_due = UINT64_MAX;
    update_timer(p);
    ++tx_acks_;
  } else {
    return false;
  }
  if (transmit(build_frame({p.mac, mac_, eth::kEtherTypeEfe}, h, ranges.data(), ranges.size()),
               p.mac))
    ++in_mac_;
  if (p.rnr_owed || p.nack_owed || p.ack_owed) owe_control(p);
  return true;
}

// A frame for this card's own MAC (two of its QPs connected to each other) never reaches the
// wire: the MAC loops it back, taking the time it would take on the wire at line rate, one frame
// after another, and it counts against the MAC's FIFO meanwhile as a frame on its way out does.
bool Efe::transmit(std::vector<uint8_t> frame, const eth::Mac& dst) {
  if (dst != mac_) return port_.send(std::move(frame));
  const size_t wire = std::max(frame.size(), eth::kMinFrameBytes) + eth::kPreambleBytes +
                      eth::kFcsBytes + eth::kIfgBytes;
  loop_free_ps_ = std::max(loop_free_ps_, now_ps()) + uint64_t(wire) * port_.byte_ps();
  ++looped_;
  eq_.at(loop_free_ps_, [this, f = share_bytes(std::move(frame))] {
    if (in_mac_ > 0) --in_mac_;
    receive(f);
    pump();
  });
  return true;
}

void Efe::receive(const eth::EthMac::FramePtr& f) {
  eth::Header eh;
  Header h;
  if (!eth::parse_header(f->data(), f->size(), &eh) || eh.dst != mac_) {
    ++rx_dropped_;
    return;
  }
  if (eh.ethertype == eth::kEtherTypeIpv4) {
    // A card of the other transport (MPA/TCP) that a QP here is connected to: nothing will ever
    // be answered, so the channel fails now rather than at the end of its retry budget, and the
    // QPs to that card end in ERROR (docs/transport.md, "Mixed cards").
    if (!connected_.count(eh.src)) {
      ++rx_dropped_;
      return;
    }
    ++stats_.group(name()).counter(
        "rx_other_transport", "frames",
        "IPv4 frames from a peer card this card has a channel to: it carries MPA/TCP, the "
        "channel fails at once");
    eq_.at(edge(kRxCycles), [this, m = eh.src] {
      connected_.erase(m);  // (until a QP connects to it again)
      fail(peer(m), "it sent IPv4: a card of MPA/TCP, not the EFE");
    });
    return;
  }
  if (eh.ethertype != eth::kEtherTypeEfe ||
      decode(f->data() + eth::kHeaderBytes, f->size() - eth::kHeaderBytes, &h) != ParseError::kOk) {
    ++rx_dropped_;
    return;
  }
  eq_.at(edge(kRxCycles), [this, eh, h, f] { handle(eh, h, f); });
}

void Efe::handle(const eth::Header& eh, const Header& h, const eth::EthMac::FramePtr& f) {
  Peer& p = peer(eh.src);
  const uint64_t now = now_ps();
  p.heard_ps = now;
  switch (h.type) {
    case Type::kData: {
      ++*p.rx_frames;
      *p.rx_bytes += h.length;
      p.ts_echo = h.ts;
      p.util_seen = h.ut;
      p.util = h.util;
      if (send_qd_) {
        // The forward queueing the ACKs carry (one_way): the one-way delay above its lowest.
        const uint32_t owd = ts_now() - h.ts;
        if (!p.owd_seen || int32_t(owd - p.owd_min) < 0) p.owd_min = owd;
        p.owd_seen = true;
        p.fwd_q_ns = owd - p.owd_min;
      }
      p.ts_rx_ps = now;
      p.timer_nacks = 0;
      if (h.ce) {
        ++*p.ce_rx;
        if (!p.ce_seen) {
          p.ce_seen = true;  // echoed at once
          p.ack_owed = true;
          owe_control(p);
        }
      }
      if (!p.seen_any || seq_before(p.seen_end, h.seq + 1)) p.seen_end = h.seq + 1;
      p.seen_any = true;
      const bool takes = h.seq == p.rx.expected() || (h.sy && !seq_before(h.seq, p.rx.expected()));
      if (takes) {
        // In sequence: to the core, and after it what waited for it (selective).
        if (take(p, h, f)) drain(p);
      } else if (p.rx.on_data(h.seq, h.sy) == EfeRx::Verdict::kDuplicate ||
                 (ch_cfg_.selective && p.stored.count(h.seq - p.stored_base))) {
        // The sender did not hear our ACK: tell it again (a NACK, while a gap stays open).
        ++rx_duplicates_;
        ++*p.duplicates;
        if (!renack(p)) p.ack_owed = true;
        owe_control(p);
      } else {
        ++rx_out_of_seq_;
        ++*p.out_of_order;
        if (ch_cfg_.selective) {
          if (!p.rx.holding()) store(p, h, f);
        } else if (p.rx.nack_owed()) {
          p.rx.nack_sent();
          p.nack_owed = true;
          owe_control(p);
        }
      }
      tx_acked(p, h.ack);
      core_ack(p, h.ack, h.seq + 1);
      break;
    }
    case Type::kAck:
      ++rx_acks_;
      cc_rtt(p, h);
      p.cc.on_echo(now, h.ece, p.srtt_ps);
      if (h.ece) cc_ece(p);
      tx_acked(p, h.ack);
      core_ack(p, h.ack, h.seq);
      break;
    case Type::kNack: {
      ++*p.nacks_rx;
      // Its echo is a sample too.
      cc_rtt(p, h);
      if (h.ece) cc_ece(p);
      // Selective: the missing ranges, 8 bytes each (first SEQ, end SEQ).
      std::vector<EfeTx::Range> ranges;
      const uint8_t* b = f->data() + eth::kHeaderBytes + kHeaderBytes;
      for (size_t i = 0; i + 8 <= h.length; i += 8)
        ranges.push_back({get_be32(b + i), get_be32(b + i + 4)});
      p.tx.on_nack(h.ack, now, ranges, h.ts);
      {
        const double old = p.cc.rate(now);
        p.cc.on_loss(now, round_trip(p));
        cc_rerate(p, old);
      }
      if (p.tx.failed()) {
        fail(p);
      } else {
        list(p);
        update_timer(p);
        if (on_space) on_space();
      }
      break;
    }
    case Type::kRnr:
      ++*p.rnrs_rx;
      p.tx.on_rnr(h.ack, now);
      list(p);
      update_timer(p);
      eq_.at(clk_.edge_after(now + ch_cfg_.rnr_delay_ps, 0), [this, pp = &p] {
        list(*pp);  // its back-off is over
        pump();
      });
      if (on_space) on_space();
      break;
  }
  pump();
}

// A DATA frame in sequence (h.seq is expected, or it carries SY): to the core, or refused with
// an RNR when the receive buffer or the core cannot take it (false).
bool Efe::take(Peer& p, const Header& h, const eth::EthMac::FramePtr& f) {
  if (rx_buffered_ + h.length > uint64_t(cfg_.rx_buffer_bytes) ||
      (can_take && h.dst_qpn != kAnnounceQpn && !can_take(p.mac, h.dst_qpn))) {
    // No room: the sender backs off and resends from here (no retry spent); what waited
    // behind it comes again too.
    ++*p.rx_refused;
    p.rnr_owed = true;
    p.rnr_seq = h.seq;
    p.rx.hold();
    drop_stored(p);
    owe_control(p);
    return false;
  }
  p.rx.on_data(h.seq, h.sy);
  if (p.rx.resyncs() != p.resyncs_seen) {
    p.resyncs_seen = p.rx.resyncs();
    ++*p.resyncs;
    p.held = false;  // it waited for frames of the channel that ended
    drop_stored(p);  // ... and so did these
    log::info("{}: channel from {} starts afresh at SEQ {}", name(), eth::to_string(p.mac), h.seq);
  }
  const uint8_t* payload = f->data() + eth::kHeaderBytes + kHeaderBytes;
  if (h.dst_qpn == kAnnounceQpn && h.length == 0) {
    // A keepalive probe (efe.keepalive_ns at the peer): acknowledged at once, nothing else.
    if (rx_keepalives_) ++*rx_keepalives_;
    ++p.unacked_valid;
    p.ack_owed = true;
    if (h.ar) p.echo_owed = true;
    owe_control(p);
    return true;
  }
  ++rx_data_;
  if (h.dst_qpn == kAnnounceQpn) {
    // The peer's QPs that failed with its channel to this card: the core fails the ones
    // connected to them. Nothing else goes to the core; taken and acknowledged at once, as if
    // validated.
    std::vector<uint32_t> qpns;
    for (size_t i = 0; i + 4 <= h.length; i += 4) qpns.push_back(get_be32(payload + i));
    if (on_reset) on_reset(p.mac, qpns);
    ++p.unacked_valid;
    p.ack_owed = true;
    if (h.ar) p.echo_owed = true;
    owe_control(p);
    return true;
  }
  p.delivered.emplace_back(h.seq, h.length);
  p.delivered_bytes += h.length;
  rx_buffered_ += h.length;
  RxSegment s{p.mac, 0, h.seq, h.dst_qpn, h.ar, h.rq, take_bytes(h.length), p.rx_gen};
  s.ddp.assign(payload, payload + h.length);
  if (on_segment) on_segment(std::move(s));
  if (p.held && !seq_before(p.rx.expected(), p.held_needs)) {
    p.held = false;
    if (on_ack) on_ack(p.mac, p.held_ack);
  }
  return true;
}

// Selective: a DATA frame after a gap waits here (up to efe.rx_buffer_bytes in all) for the
// ones before it; a frame that opens a new gap asks for a NACK naming every gap.
void Efe::store(Peer& p, const Header& h, const eth::EthMac::FramePtr& f) {
  if (p.stored.empty()) p.stored_base = p.rx.expected();
  const uint32_t key = h.seq - p.stored_base;
  const bool new_gap = p.stored.empty() || key > p.stored.rbegin()->first + 1;
  if (stored_bytes_ + h.length <= uint64_t(cfg_.rx_buffer_bytes)) {
    p.stored.emplace(key, Stored{h, f});
    stored_bytes_ += h.length;
  }
  if (new_gap) {
    p.nack_owed = true;
    owe_control(p);
  } else {
    renack(p);
  }
}

// Selective: a gap still open ack_delay_ns after its last NACK is NACKed again when a frame
// arrives (the NACK, or the resend it asked for, may have been lost too; the sender leaves a
// frame it resent after the echoed TS alone).
bool Efe::renack(Peer& p) {
  if (!ch_cfg_.selective || p.rx.holding() || !seq_before(p.rx.expected(), p.seen_end) ||
      now_ps() < p.nack_ps + uint64_t(cfg_.ack_delay_ns) * 1000)
    return false;
  p.nack_owed = true;
  owe_control(p);
  return true;
}

// What waited for the frames now taken: in sequence again, to the core.
void Efe::drain(Peer& p) {
  while (!p.stored.empty() && p.stored.begin()->second.h.seq == p.rx.expected()) {
    const Stored st = std::move(p.stored.begin()->second);
    p.stored.erase(p.stored.begin());
    stored_bytes_ -= st.h.length;
    if (!take(p, st.h, st.f)) break;  // (a refusal or a resync empties the store)
  }
}

void Efe::drop_stored(Peer& p) {
  for (const auto& [k, st] : p.stored) stored_bytes_ -= st.h.length;
  p.stored.clear();
}

void Efe::tx_acked(Peer& p, uint32_t ack) {
  if (p.tx.on_ack(ack, now_ps()) == 0) return;
  if (p.window_full) {
    p.window_full = false;
    list(p);  // the window has room again
  }
  update_timer(p);
  // The channel's keepalive may now be due before run_control expects one.
  if (keepalive_ps_ && keepalive_idle(p)) stats_.idle_timer_moved(p.heard_ps + keepalive_ps_);
  if (on_space) on_space();
}

void Efe::core_ack(Peer& p, uint32_t ack, uint32_t needs) {
  if (!seq_before(p.rx.expected(), needs)) {
    if (on_ack) on_ack(p.mac, ack);
    return;
  }
  // Frames the peer sent before this value are missing: it waits for them (they are resent).
  if (!p.held || seq_before(p.held_ack, ack)) {
    p.held = true;
    p.held_ack = ack;
    p.held_needs = needs;
  }
}

void Efe::cc_rtt(Peer& p, const Header& h) {
  const uint64_t rtt_ps = uint64_t(uint32_t(ts_now() - h.ts)) * 1000;
  const int64_t fwd_q_ps = h.qd ? int64_t(h.dst_qpn) * 1000 : -1;
  const double util = h.ut ? double(h.util) / kUtilScale : -1;
  p.rtt->sample(double(rtt_ps) / 1000);
  p.probe_out = false;
  // RFC 6298's SRTT and RTTVAR from each sample (the RTO's, and ECE's once per round trip).
  const double sample = double(rtt_ps);
  if (p.srtt_ps == 0) {
    p.srtt_ps = sample;
    p.rttvar_ps = sample / 2;
  } else {
    p.rttvar_ps = 0.75 * p.rttvar_ps + 0.25 * std::abs(p.srtt_ps - sample);
    p.srtt_ps = 0.875 * p.srtt_ps + 0.125 * sample;
  }
  if (cfg_.rto_adaptive) {
    // The peer may hold an ACK ack_delay_ns.
    const uint64_t old = p.tx.rto();
    p.tx.set_rto(uint64_t(p.srtt_ps + 4 * p.rttvar_ps) + uint64_t(cfg_.ack_delay_ns) * 1000);
    if (p.tx.rto() != old) update_timer(p);
  }
  if (util >= 0) {
    p.util_echoed = util;
    if (!p.util_series) {
      p.util_series = true;
      const Peer* raw = &p;
      stats_.group(peer_group(p.mac))
          .series("util", "", "the utilisation stamp the peer's last ACK or NACK echoed",
                  [raw] { return raw->util_echoed; });
    }
  }
  const double old = p.cc.rate(now_ps());
  p.cc.on_rtt(now_ps(), rtt_ps, fwd_q_ps, p.tx.echoed_bytes(h.ts), util);
  cc_rerate(p, old);
}

void Efe::cc_rerate(Peer& p, double old_rate) {
  const double r = p.cc.rate(now_ps());
  if (r > old_rate && p.next_ok_ps > now_ps()) {
    // A higher rate shortens the gap after the last DATA frame.
    const uint64_t ok = std::max(now_ps(), p.last_tx_ps + uint64_t(double(p.last_wire) * 8e12 / r));
    if (ok < p.next_ok_ps) {
      p.next_ok_ps = ok;
      if (p.wake) schedule_wake(&p);
    }
  }
  p.rate_bps = r;
}

void Efe::schedule_wake(Peer* p) {
  p->wake = true;
  const uint32_t gen = ++p->wake_gen;
  eq_.at(clk_.edge_after(p->next_ok_ps, 0), [this, p, gen] {
    if (gen != p->wake_gen) return;
    p->wake = false;
    list(*p);
    pump();
  });
}

void Efe::cc_ece(Peer& p) {
  ++*p.ece_rx;
  const double old = p.cc.rate(now_ps());
  p.cc.on_ece(now_ps(), round_trip(p));
  cc_rerate(p, old);
}

CcConfig Efe::cc_config() const {
  CcConfig c;
  parse_cc_algo(cfg_.cc, &c.algo);
  c.line_bps = line_bps();
  c.frame_bytes = max_ddp_bytes();
  c.low_ps = uint64_t(cfg_.cc_low_ns) * 1000;
  c.high_ps = uint64_t(cfg_.cc_high_ns) * 1000;
  c.window_ps = uint64_t(cfg_.cc_window_ns) * 1000;
  c.ai_period_ps = uint64_t(cfg_.cc_ai_period_ns) * 1000;
  c.one_way = send_qd_;
  c.ecn_dctcp = cfg_.cc_ecn == "dctcp";
  c.ai_fraction = cfg_.cc_ai_fraction;
  c.beta = cfg_.cc_beta;
  c.ecn_beta = cfg_.cc_ecn_beta;
  c.loss_beta = cfg_.cc_loss_beta;
  c.int_eta = cfg_.cc_int_eta;
  c.hpcc_ai_fraction = cfg_.hpcc_ai_fraction;
  c.hpcc_max_stage = uint32_t(cfg_.hpcc_max_stage);
  c.min_fraction = cfg_.cc_min_fraction;
  c.start_fraction = cfg_.cc_start_fraction;
  c.g = cfg_.dcqcn_g;
  c.alpha_interval_ps = uint64_t(cfg_.dcqcn_alpha_interval_ns) * 1000;
  c.timer_ps = uint64_t(cfg_.dcqcn_timer_ns) * 1000;
  c.cnp_interval_ps = uint64_t(cfg_.dcqcn_cnp_interval_ns) * 1000;
  c.byte_counter = uint64_t(cfg_.dcqcn_byte_counter);
  c.fast_recovery = uint32_t(cfg_.dcqcn_fast_recovery);
  c.rai_fraction = cfg_.dcqcn_rai_fraction;
  c.rhai_fraction = cfg_.dcqcn_rhai_fraction;
  return c;
}

void Efe::fail(Peer& p, const char* why) {
  ++failures_;
  ++*p.failures;
  p.keepalive = false;  // its QPs fail with it; a QP connected again (open) arms it again
  // This channel announced an earlier failure, and the announcement never got through.
  const bool announcing = p.tx.announcing();
  if (why)
    log::warn("{}: channel to {} failed: {}", name(), eth::to_string(p.mac), why);
  else
    log::warn("{}: channel to {} failed: no progress {} us after its first retry", name(),
              eth::to_string(p.mac),
              (announcing ? ch_cfg_.resync_budget_ps : ch_cfg_.retry_budget_ps) / 1'000'000);
  // The new channel starts where the old one stopped; its first frame carries SY. Segments
  // still in the pipeline belong to WRs that fail with the channel: they never reach it, and
  // nothing more is taken for this peer until the core has failed its QPs (failure_taken).
  ++p.tx_gen;
  p.pipeline = 0;
  p.pipeline_bytes = 0;
  p.tx = EfeTx(ch_cfg_, p.tx.next_seq(), true);
  p.fenced = true;
  p.announce = !why;  // (a card of the other transport would not understand)
  update_timer(p);
  if (on_failed) on_failed(p.mac);
}

void Efe::failure_taken(const TransportStream& s, const std::vector<uint32_t>& qpns) {
  Peer& p = peer(s.peer);
  if (!p.fenced) return;
  p.fenced = false;
  if (p.announce && !qpns.empty()) {
    // The peer is told at once which QPs failed (docs/efe.md, "Teardown after a failure"):
    // DATA frames to kAnnounceQpn, AR set, the first of them the new channel's first (SY).
    const size_t per_frame = max_ddp_bytes() / 4;
    for (size_t i = 0; i < qpns.size(); i += per_frame) {
      std::vector<uint8_t> list = take_bytes(0);
      for (size_t k = i; k < std::min(qpns.size(), i + per_frame); ++k)
        for (int b = 3; b >= 0; --b) list.push_back(uint8_t(qpns[k] >> (8 * b)));
      EfeTx::Meta m;
      m.dst_qpn = kAnnounceQpn;
      m.ar = true;
      p.tx.send(std::move(list), m);
    }
    list(p);
    pump();
  }
  if (on_space) on_space();
}

void Efe::update_timer(Peer& p) {
  const uint64_t d = std::min({p.tx.deadline(), p.ack_due, p.nack_due});
  if ((p.due == UINT64_MAX) != (d == UINT64_MAX)) {
    if (d == UINT64_MAX)
      --armed_;
    else
      ++armed_;
  }
  p.due = d;
  if (armed_ == 0) {
    if (timer_at_ != UINT64_MAX) stop_timer();
    timer_at_ = UINT64_MAX;
    return;
  }
  const uint64_t now = now_ps();
  const uint64_t at = clk_.edge_after(std::max(d, now), 0);  // the timer acts on an edge
  if (at < timer_at_) {
    timer_at_ = at;
    set_timer(at);
  }
}

void Efe::set_timer(uint64_t at) {
  eq_.set_alarm(at, [this] { timer_fire(); });
  if (decoy_ev_) {
    decoy_ev_->cancel();
    notify_at(*decoy_ev_, std::max(at, now_ps()) + 1);  // a picosecond after the alarm
  }
}

void Efe::stop_timer() {
  eq_.cancel_alarm();
  if (decoy_ev_) decoy_ev_->cancel();
}

void Efe::timer_fire() {
  const uint64_t now = now_ps();
  timer_at_ = UINT64_MAX;
  if (decoy_ev_) decoy_ev_->cancel();  // a picosecond behind: set again below, or not at all
  for (auto& [m, pp] : peers_) {
    Peer& p = *pp;
    if (p.due > now) continue;
    if (p.tx.deadline() <= now) {
      p.tx.on_timeout(now);
      if (!p.tx.failed()) {
        ++*p.timeouts;
        p.cc.on_timeout(now);
        p.rate_bps = p.cc.rate(now);
      }
      if (p.tx.failed())
        fail(p);
      else
        list(p);
    }
    if (p.ack_due <= now) {
      p.ack_due = UINT64_MAX;
      p.ack_owed = true;
      owe_control(p);
    }
    if (p.nack_due <= now) {
      p.nack_due = UINT64_MAX;
      if (renack(p)) ++p.timer_nacks;
    }
  }
  // Every peer's deadline again (the loop above may have moved any of them).
  uint64_t next = UINT64_MAX;
  armed_ = 0;
  for (auto& [m, pp] : peers_) {
    Peer& p = *pp;
    p.due = std::min({p.tx.deadline(), p.ack_due, p.nack_due});
    if (p.due == UINT64_MAX) continue;
    ++armed_;
    next = std::min(next, p.due);
  }
  if (next != UINT64_MAX) {
    timer_at_ = clk_.edge_after(std::max(next, now), 0);
    set_timer(timer_at_);
  }
  pump();
}

void Efe::set_resend(bool selective) {
  ch_cfg_.selective = selective;
  for (auto& [m, p] : peers_) {
    p->tx.set_selective(selective);
    drop_stored(*p);
  }
}

void Efe::set_cc(const std::string& algo) {
  cfg_.cc = algo;
  for (auto& [m, p] : peers_) {
    p->cc.reset(cc_config());
    p->rate_bps = 0;
    p->probe_out = false;
    p->next_ok_ps = 0;
  }
}

std::string Efe::dump_state() const {
  std::string s;
  for (const auto& [m, pp] : peers_) {
    const Peer& p = *pp;
    s += fmt::format(
        "{} peer {}: tx next SEQ {} unacked {} frames ({} B) unsent {} pipeline {}{}; rx expected "
        "{} delivered-unvalidated {}{}\n",
        name(), eth::to_string(m), p.tx.next_seq(), p.tx.unacked(), p.tx.buffered_bytes(),
        p.tx.unsent(), p.pipeline, p.tx.failed() ? " FAILED" : "", p.rx.expected(),
        p.delivered.size(),
        p.held ? fmt::format(" (ACK {} held for SEQ {})", p.held_ack, p.held_needs) : "");
  }
  return s;
}

}  // namespace rnic::efe
