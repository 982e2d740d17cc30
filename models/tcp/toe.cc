#include "models/tcp/toe.h"

#include <fmt/format.h>

#include "models/common/log.h"
#include "models/common/sim_time.h"

namespace rnic::tcp {

// Each of TcpConnection::Refusals, counted per card.
const std::array<Toe::RefusalCounter, 5> Toe::kRefusals = {{
    {&TcpConnection::Refusals::rst_challenged, "rst_challenged",
     "RSTs in a connection's receive window but not at its next sequence number, answered with "
     "an ACK (RFC 5961)"},
    {&TcpConnection::Refusals::rst_dropped, "rst_dropped",
     "RSTs dropped: outside the receive window, not acknowledging the SYN in SYN-SENT, or to a "
     "connection that takes none"},
    {&TcpConnection::Refusals::syn_challenged, "syn_challenged",
     "SYNs to a live connection answered with an ACK (RFC 5961): a peer that started over "
     "answers it with a RST"},
    {&TcpConnection::Refusals::ack_challenged, "ack_challenged",
     "segments dropped for acknowledging data not sent, or older than the peer's largest "
     "window, answered with an ACK (RFC 9293, RFC 5961)"},
    {&TcpConnection::Refusals::ack_reset, "ack_reset",
     "ACKs to a connection in SYN-SENT of nothing it sent, answered with a RST (RFC 9293)"},
}};

Toe::Toe(sc_core::sc_module_name n, eth::EthMac& port, eth::Mac mac, uint32_t ip,
         const ToeParams& p, StatRegistry& stats)
    : sc_core::sc_module(n),
      port_(port),
      mac_(mac),
      ip_(ip),
      cfg_(p.conn),
      tx_buffer_bytes_(p.tx_buffer_bytes),
      clk_(ClockDomain::mhz(p.clk_mhz)),
      tx_cycles_(p.tx_cycles),
      rx_cycles_(p.rx_cycles),
      tx_ahead_(2 + size_t((uint64_t(p.tx_cycles) * ClockDomain::mhz(p.clk_mhz).period_ps +
                            1538 * 8000 / uint64_t(p.line_gbps) - 1) /
                           (1538 * 8000 / uint64_t(p.line_gbps)))),
      stats_(stats),
      tx_segments_(no_progress(stats.group(name()).counter(
          "tx_segments", "segments", "TCP segments sent (handshake, data, ACKs, resends)"))),
      rx_segments_(no_progress(stats.group(name()).counter("rx_segments", "segments",
                                                           "TCP segments taken for a connection"))),
      rx_bad_frames_(stats.group(name()).counter(
          "rx_bad_frames", "frames",
          "frames dropped: not IPv4/TCP to this card, a bad checksum, or no connection")),
      rx_refused_(stats.group(name()).counter(
          "rx_refused", "FPDUs",
          "FPDUs taken back unacknowledged for a page fault (on-demand paging), with those "
          "handed up after them")),
      syn_refused_(stats.group(name()).counter(
          "syn_refused", "segments",
          "SYNs answered with a RST: to a QP that does not exist or is connected to another")),
      stray_reset_(stats.group(name()).counter(
          "stray_reset", "segments",
          "segments for no connection (not a SYN to a QP's port, not a RST) answered with a RST "
          "(RFC 9293)")),
      closes_(stats.group(name()).counter(
          "closes", "connections",
          "connections closed by FIN both ways (a QP's Terminate, then its connection's close)")),
      rx_parked_(stats.group(name()).counter(
          "rx_parked_drops", "segments",
          "data segments dropped unacknowledged while their QP waited for a page")),
      connections_(stats.group(name()).counter("connections", "connections",
                                               "TCP connections made (one per connected QP)")),
      retransmissions_(no_progress(stats.group(name()).counter(
          "retransmissions", "segments", "data segments sent again (fast retransmit or timer)"))),
      failures_(stats.group(name()).counter(
          "failures", "connections",
          "connections failed (retry budget spent, a bad CRC, an MPA reject, a peer of the EFE): "
          "their QPs end in ERROR")) {
  for (size_t k = 0; k < kRefusals.size(); ++k)
    refused_[k] = &stats.group(name()).counter(kRefusals[k].name, "segments", kRefusals[k].desc);
  port_.set_receiver([this](const eth::EthMac::FramePtr& f) {
    eq_.at(clk_.edge_after(now_ps(), rx_cycles_), [this, f] { receive(f); });
  });
  port_.set_space_callback([this] { pump(); });
}

void Toe::add_peer(const eth::Mac& mac, uint32_t ip) { ips_[mac] = ip; }

uint32_t Toe::max_ddp_bytes() const {
  return uint32_t(mpa::max_ulpdu(cfg_.mss - (cfg_.timestamps ? 12 : 0)));
}

std::string Toe::peer_name(const TransportPeer& peer) const { return eth::to_string(peer); }

std::string Toe::peer_group(const eth::Mac& m) const {
  std::string s = std::string(name()) + ".peer_";
  for (uint8_t b : m) s += fmt::format("{:02x}", b);
  return s;
}

const TcpConnection* Toe::connection(const TransportStream& s) const {
  const auto it = conns_.find(s);
  return it == conns_.end() ? nullptr : it->second.c.get();
}

Toe::Conn& Toe::make(const TransportStream& s, uint32_t local_qpn, uint32_t peer_ip, bool active,
                     TransportPorts ports) {
  Conn& c = conns_[s];
  if (c.c) {
    // The stream's connection before (closed or failed) gives way to a new one; the numbering
    // of the stream's segments goes on (what was never acknowledged, the engines flushed).
    if (c.timer != UINT64_MAX) timers_.erase({c.timer, s});
    by_ports_.erase({c.peer_ip, c.dport, c.sport});
    c.timer = UINT64_MAX;
    c.unacked.clear();
    c.acked = c.sent;
    c.validated = c.handed_up;
    c.was_rdma = c.reported_failed = c.reported_closed = false;
    c.retransmits = 0;
  }
  c.stream = s;
  c.local_qpn = local_qpn;
  c.peer_ip = peer_ip;
  c.sport = ports.local ? ports.local : uint16_t(kPortBase + local_qpn);
  c.dport = ports.remote ? ports.remote : uint16_t(kPortBase + s.qpn);
  c.c = std::make_unique<TcpConnection>(cfg_, iss_next_, active);
  iss_next_ += 0x01000000;
  c.c->open(now_ps());
  ++connections_;
  auto [pit, fresh] = peers_.try_emplace(s.peer);
  if (fresh) {
    StatGroup& g = stats_.group(peer_group(s.peer));
    pit->second.tx_bytes = &g.counter("tx_bytes", "B", "DDP segment bytes sent to the peer");
    pit->second.rx_bytes =
        &g.counter("rx_bytes", "B", "DDP segment bytes received in order from the peer");
    pit->second.retransmissions =
        &no_progress(g.counter("retransmissions", "segments", "data segments resent to the peer"));
  }
  c.peer = &pit->second;
  touch(c);
  by_ports_[{peer_ip, c.dport, c.sport}] = s;
  return c;
}

void Toe::open(const TransportStream& s, uint32_t local_qpn, uint8_t role, TransportPorts ports) {
  opened_.insert(s);
  const auto old = conns_.find(s);
  if (old != conns_.end() && !old->second.c->ending()) return;  // its connection goes on
  const auto ip = ips_.find(s.peer);
  if (ip == ips_.end()) return;  // no address for that card: nothing to connect to
  const bool active = role == 0 ? std::tie(mac_, local_qpn) < std::tie(s.peer, s.qpn) : role == 1;
  if (active) make(s, local_qpn, ip->second, true, ports);
  // The passive end's connection is made by the SYN (receive()): to the connection manager's
  // ports when it gave them, else to 0x8000 + the QPN.
  else if (ports.local && ports.remote)
    awaited_[{ip->second, ports.remote, ports.local}] = {s, local_qpn};
  kick();
}

// The engines call open() and send() from their own processing: what those cause (frames,
// callbacks into the engines) runs after it, in the same cycle.
void Toe::kick() {
  if (kicked_) return;
  kicked_ = true;
  eq_.at(now_ps(), [this] {
    kicked_ = false;
    service();
  });
}

bool Toe::can_send(const TransportStream& s, size_t bytes) {
  const auto it = conns_.find(s);
  if (it == conns_.end() || bytes > max_ddp_bytes()) return false;
  // A failed connection takes everything and sends nothing (send()): what the engines still
  // queue for it (a Terminate closing its QP) does not wait for it for ever.
  if (it->second.c->state() == TcpConnection::State::kFailed) return true;
  if (!it->second.c->rdma_mode()) return false;
  const TcpSender* snd = it->second.c->sender();
  return snd->end() - snd->una() + mpa::fpdu_bytes(bytes) <= tx_buffer_bytes_;
}

uint32_t Toe::send(const TransportStream& s, uint32_t, std::vector<uint8_t> ddp, bool ar, bool) {
  const auto it = conns_.find(s);
  if (it == conns_.end()) return 0;  // no connection (can_send said no): nothing will ack it
  Conn& c = it->second;
  if (c.c->state() == TcpConnection::State::kFailed) return c.sent;  // discarded: never acked
  if (tx_fault) tx_fault(ddp);
  if (!c.c->send(ddp, ar)) return c.sent;  // not taken (can_send said no): nothing will ack it
  c.unacked.push_back({c.c->sender()->end(), c.sent});
  *c.peer->tx_bytes += ddp.size();
  const uint32_t n = c.sent++;
  touch(c);
  kick();
  return n;
}

void Toe::validated(const TransportStream& s, uint32_t seq, bool) {
  const auto it = conns_.find(s);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  const uint32_t n = seq + 1 - c.validated;  // in order: everything up to seq
  if (int32_t(n) <= 0) return;
  c.validated = seq + 1;
  c.c->validated(n);
  touch(c);
  kick();
}

void Toe::close(const TransportStream& s) {
  const auto it = conns_.find(s);
  if (it == conns_.end()) return;
  it->second.c->close(now_ps());
  touch(it->second);
  kick();
}

uint32_t Toe::refuse(const TransportStream& s, uint32_t seq) {
  const auto it = conns_.find(s);
  if (it == conns_.end()) return 0;
  Conn& c = it->second;
  const uint32_t back = c.handed_up - seq;  // seq and those after it
  if (int32_t(seq - c.validated) < 0 || int32_t(back) <= 0) return c.gen;
  c.c->refuse(seq - c.validated);
  rx_refused_ += back;
  c.handed_up = seq;
  touch(c);
  kick();
  return ++c.gen;
}

void Toe::receive(const eth::EthMac::FramePtr& f) {
  const std::vector<uint8_t>& b = *f;
  eth::Header eh;
  Ipv4Header ip;
  TcpHeader th;
  size_t off = 0;
  if (eth::parse_header(b.data(), b.size(), &eh) && eh.dst == mac_ &&
      eh.ethertype == eth::kEtherTypeEfe && ips_.count(eh.src))
    return other_transport(eh.src);
  if (!eth::parse_header(b.data(), b.size(), &eh) || eh.ethertype != kEtherTypeIpv4 ||
      decode_ipv4(b.data() + eth::kHeaderBytes, b.size() - eth::kHeaderBytes, &ip) !=
          Ipv4Error::kOk ||
      ip.protocol != kProtoTcp || ip.dst != ip_ ||
      decode_tcp(b.data() + eth::kHeaderBytes + kIpv4HeaderBytes,
                 ip.total_length - kIpv4HeaderBytes, ip.src, ip.dst, &th, &off) != TcpError::kOk) {
    ++rx_bad_frames_;
    return;
  }
  const uint8_t* tcp = b.data() + eth::kHeaderBytes + kIpv4HeaderBytes;
  const size_t len = ip.total_length - kIpv4HeaderBytes - off;
  auto key = by_ports_.find({ip.src, th.sport, th.dport});
  const bool syn = (th.flags & (kSyn | kAck)) == kSyn;
  if (key == by_ports_.end() || (syn && conns_.at(key->second).c->new_syn())) {
    // A SYN to a QP's port: the passive end of that QP's connection. Its QP is the one waiting
    // on these ports (the connection manager's), else the one at 0x8000 + the QPN.
    if (!syn) {
      ++rx_bad_frames_;
      if (!(th.flags & kRst)) reset_stray(eh.src, ip, th, len);
      return;
    }
    const auto w = awaited_.find({ip.src, th.sport, th.dport});
    TransportStream s{eh.src, uint32_t(th.sport - kPortBase)};
    uint32_t local_qpn = uint32_t(th.dport - kPortBase);
    TransportPorts ports;
    if (w != awaited_.end() && w->second.first.peer == eh.src) {
      std::tie(s, local_qpn) = w->second;
      ports = {th.dport, th.sport};
    } else if (th.dport < kPortBase || th.sport < kPortBase) {
      ++rx_bad_frames_;
      return;
    }
    if (accepts && !accepts(eh.src, s.qpn, local_qpn)) return refuse_syn(eh.src, ip, th);
    make(s, local_qpn, ip.src, false, ports);
    key = by_ports_.find({ip.src, th.sport, th.dport});
  }
  ++rx_segments_;
  Conn& c = conns_.at(key->second);
  size_t take = len;
  if (len > 0 && c.c->rdma_mode() && can_take && !can_take(c.stream.peer, c.local_qpn)) {
    // Its QP waits for a page (on-demand paging): the data is not taken, so not acknowledged,
    // and comes again; the acknowledgement and window the segment carries are.
    ++rx_parked_;
    take = 0;
    th.flags &= uint8_t(~kFin);
  }
  const TcpConnection::Refusals before = c.c->refusals();
  c.c->on_segment(th, tcp + off, take, ip.ecn == kCe, now_ps());
  const TcpConnection::Refusals& after = c.c->refusals();
  for (size_t k = 0; k < kRefusals.size(); ++k)
    *refused_[k] += after.*kRefusals[k].field - before.*kRefusals[k].field;
  touch(c);
  service();
}

// RFC 9293's answer to a SYN for no connection that may be made: a RST acknowledging it, from
// the port it was sent to, tx_cycles later like any segment.
void Toe::refuse_syn(const eth::Mac& from, const Ipv4Header& in, const TcpHeader& syn) {
  ++syn_refused_;
  send_rst(from, in, syn, 0, syn.seq + 1, kRst | kAck);
}

// RFC 9293, a segment in the CLOSED state: one with an ACK is answered <SEQ=SEG.ACK><CTL=RST>,
// one without <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK> (a FIN counting one).
void Toe::reset_stray(const eth::Mac& from, const Ipv4Header& in, const TcpHeader& th, size_t len) {
  ++stray_reset_;
  if (th.flags & kAck)
    send_rst(from, in, th, th.ack, 0, kRst);
  else
    send_rst(from, in, th, 0, th.seq + uint32_t(len) + ((th.flags & kFin) ? 1 : 0), kRst | kAck);
}

void Toe::send_rst(const eth::Mac& to, const Ipv4Header& in, const TcpHeader& in_th, uint32_t seq,
                   uint32_t ack, uint8_t flags) {
  TcpHeader h;
  h.sport = in_th.dport;
  h.dport = in_th.sport;
  h.seq = seq;
  h.ack = ack;
  h.flags = flags;
  Ipv4Header ip;
  ip.src = ip_;
  ip.dst = in.src;
  ip.ecn = kNotEct;
  const uint64_t now = now_ps();
  txq_.emplace_back(clk_.edge_after(now, tx_cycles_),
                    build_frame({to, mac_, kEtherTypeIpv4}, ip, h, nullptr, 0));
  ++tx_segments_;
  pump();
}

// An EFE frame from a card this one knows: that card is of the other transport, and no connection
// to it will ever be made. The QPs connected to it end in ERROR now (on_failed, as after a
// connection's failure) rather than at the end of a handshake's retry budget; the peer's EFE
// fails its channel in turn at this card's first IPv4 frame (docs/transport.md, "Mixed cards").
void Toe::other_transport(const eth::Mac& from) {
  ++stats_.group(name()).counter(
      "rx_other_transport", "frames",
      "EFE frames from a card this card knows: it carries the EFE, the QPs connected to it "
      "fail at once");
  std::vector<TransportStream> gone;
  for (const TransportStream& s : opened_)
    if (s.peer == from) gone.push_back(s);
  if (gone.empty()) return;
  log::warn("{}: {} sent an EFE frame: it is a card of the EFE, not MPA/TCP", name(),
            eth::to_string(from));
  for (const TransportStream& s : gone) {
    opened_.erase(s);
    const auto it = conns_.find(s);
    if (it != conns_.end()) {
      it->second.c->abort();  // reported by service()
      touch(it->second);
    } else {
      ++failures_;
      if (on_failed) on_failed(s);
    }
  }
  service();
}

void Toe::touch(Conn& c) {
  if (c.dirty) return;
  c.dirty = true;
  dirty_.push_back(&c);
}

void Toe::service() {
  // A connection's callbacks may touch others (an on_segment that sends): take them in turn.
  for (size_t i = 0; i < dirty_.size(); ++i) {
    Conn& c = *dirty_[i];
    c.dirty = false;
    service(c);
  }
  dirty_.clear();
  pump();
  if (timers_.empty()) return eq_.cancel_alarm();
  const uint64_t next = timers_.begin()->first;
  if (next == eq_.alarm_at()) return;
  eq_.set_alarm(next, [this] {
    const uint64_t t = now_ps();
    while (!timers_.empty() && timers_.begin()->first <= t) {
      Conn& c = conns_.at(timers_.begin()->second);
      timers_.erase(timers_.begin());
      c.timer = UINT64_MAX;
      if (c.c->next_timer() <= t) c.c->on_timer(t);
      touch(c);
    }
    service();
  });
}

void Toe::service(Conn& c) {
  const uint64_t now = now_ps();
  const TransportStream s = c.stream;
  // The peer closed (its QP sent a Terminate): this side closes too, its FIN after what is queued.
  if (c.c->state() == TcpConnection::State::kCloseWait) c.c->close(now);
  bool more = false;
  const size_t room = txq_.size() < tx_ahead_ ? tx_ahead_ - txq_.size() : 0;
  for (TcpConnection::Out& o : c.c->poll(now, room, &more)) {
    o.h.sport = c.sport;
    o.h.dport = c.dport;
    Ipv4Header ip;
    ip.src = ip_;
    ip.dst = c.peer_ip;
    ip.ecn = o.payload.empty() ? kNotEct : kEct0;
    txq_.emplace_back(
        clk_.edge_after(now, tx_cycles_),
        build_frame({s.peer, mac_, kEtherTypeIpv4}, ip, o.h, o.payload.data(), o.payload.size()));
    ++tx_segments_;
  }
  const TcpSender* snd = c.c->sender();
  if (snd && snd->retransmits() != c.retransmits) {
    retransmissions_ += snd->retransmits() - c.retransmits;
    *c.peer->retransmissions += snd->retransmits() - c.retransmits;
    c.retransmits = snd->retransmits();
  }
  const uint32_t before = c.acked;
  while (snd && !c.unacked.empty() && seq_le(c.unacked.front().first, snd->una())) {
    c.acked = c.unacked.front().second + 1;
    c.unacked.pop_front();
  }
  if (more && !c.waiting) {
    c.waiting = true;
    tx_waiting_.push_back(s);
  }
  if (c.acked != before) {
    if (on_ack) on_ack(s, c.acked);
    if (on_space) on_space();  // room in the stream's transmit buffer
  }
  // The acknowledgement a segment carries is taken before its data (RFC 9293's order): a
  // Terminate that rides on the ACK of this side's last Send completes that Send first.
  for (std::vector<uint8_t>& u : c.c->take_received()) {
    *c.peer->rx_bytes += u.size();
    TransportSegment seg;
    seg.src = s.peer;
    seg.src_qpn = s.qpn;
    seg.seq = c.handed_up++;
    seg.gen = c.gen;
    seg.dst_qpn = c.local_qpn;
    seg.ddp = std::move(u);
    if (on_segment) on_segment(std::move(seg));
  }
  if (c.c->rdma_mode() && !c.was_rdma) {
    c.was_rdma = true;
    if (on_space) on_space();
  }
  if (c.c->state() == TcpConnection::State::kDone && !c.reported_closed) {
    c.reported_closed = true;
    ++closes_;
  }
  if (c.c->state() == TcpConnection::State::kFailed && !c.reported_failed) {
    c.reported_failed = true;
    ++failures_;
    if (on_failed) on_failed(s);
  }
  const uint64_t next = c.c->next_timer();
  if (next != c.timer) {
    if (c.timer != UINT64_MAX) timers_.erase({c.timer, s});
    c.timer = next;
    if (next != UINT64_MAX) timers_.insert({next, s});
  }
}

void Toe::pump() {
  const uint64_t now = now_ps();
  bool sent = false;
  while (!txq_.empty() && txq_.front().first <= now && port_.can_send()) {
    port_.send(std::move(txq_.front().second));
    txq_.pop_front();
    sent = true;
  }
  // The next frame is not ready yet: look again when it is (the MAC's space callback covers a
  // full MAC).
  if (!txq_.empty() && txq_.front().first > now && txq_.front().first < pump_at_) {
    pump_at_ = txq_.front().first;
    eq_.at(pump_at_, [this] {
      pump_at_ = UINT64_MAX;
      pump();
    });
  }
  if (sent && on_space) on_space();
  // Room ahead of the line: the connections waiting for it, in turn.
  if (sent && !tx_waiting_.empty()) {
    for (const TransportStream& w : tx_waiting_) {
      Conn& c = conns_.at(w);
      c.waiting = false;
      touch(c);
    }
    tx_waiting_.clear();
    kick();
  }
}

}  // namespace rnic::tcp
