#include "sim/exec/mgmt_net.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>

#include "models/common/scheduler.h"
#include "models/common/sim_time.h"
#include "models/host/host_wait.h"
#include "sim/ranks.h"

namespace rnic::exec {

MgmtNet::MgmtNet(const MgmtParams& p)
    : p_(p), hosts_([this](ranks::Unpacker& u) { handle(unpack(u)); }) {
  timer_client_ = Scheduler::get().add("mgmt_net.timers", [this] { run_timers(); });
}

MgmtNet::~MgmtNet() { Scheduler::get().drop(timer_client_); }

void MgmtNet::span_ranks(std::function<int(uint32_t ip)> rank_of) {
  hosts_.span_ranks(std::move(rank_of));
}

MgmtNet::Msg MgmtNet::unpack(ranks::Unpacker& u) {
  Msg m;
  m.kind = Msg::Kind(u.get<uint8_t>());
  m.to = u.get<int64_t>();
  m.from = u.get<int64_t>();
  m.ip = u.get<uint32_t>();
  m.port = u.get<uint16_t>();
  m.from_ip = u.get<uint32_t>();
  m.from_port = u.get<uint16_t>();
  m.sent_ps = u.get<uint64_t>();
  m.at_ps = u.get<uint64_t>();
  m.bytes = u.get_sized<std::vector<uint8_t>>();
  return m;
}

void MgmtNet::post(uint32_t ip, Msg m) {
  if (hosts_.local(ip)) return handle(std::move(m));
  // Nothing it sets off at the far end comes before this.
  uint64_t effect = m.at_ps;
  if (m.kind == Msg::kSyn) effect = m.sent_ps + latency_ps();
  if (m.kind == Msg::kSynAck) effect = m.sent_ps + 2 * latency_ps();
  ranks::Packer k;
  k.put(uint8_t(m.kind)).put(m.to).put(m.from).put(m.ip).put(m.port).put(m.from_ip);
  k.put(m.from_port).put(m.sent_ps).put(m.at_ps).put_sized(m.bytes);
  hosts_.send(ip, k, effect);
}

MgmtNet::Sock* MgmtNet::get(int64_t s) {
  auto it = socks_.find(s);
  if (it == socks_.end() || it->second.closed) return nullptr;
  return &it->second;
}

MgmtNet::Msg MgmtNet::addressed(Msg::Kind kind, int64_t s, const Sock& k, uint32_t ip,
                                uint16_t port) const {
  Msg m;
  m.kind = kind;
  m.from = s;
  m.ip = ip;
  m.port = port;
  m.from_ip = k.ip;
  m.from_port = k.port;
  m.sent_ps = now_ps();
  return m;
}

MgmtNet::Msg MgmtNet::to_peer(Msg::Kind kind, int64_t s, const Sock& k, uint64_t at_ps) const {
  Msg m;
  m.kind = kind;
  m.to = k.peer;
  m.from = s;
  m.from_ip = k.ip;
  m.sent_ps = now_ps();
  m.at_ps = at_ps;
  return m;
}

uint64_t MgmtNet::arrival(Sock& k, size_t len) {
  // Serialised at the sender's rate behind what it sent before, then the latency.
  const uint64_t start = std::max(now_ps(), k.tx_free_ps);
  k.tx_free_ps = start + uint64_t(double(len) * 8.0 / p_.gbps * 1000.0);
  return k.tx_free_ps + latency_ps();
}

int64_t MgmtNet::new_socket(uint32_t ip) {
  // Numbered by host, so that a socket's id is the same whichever process makes it.
  const int64_t id = int64_t((uint64_t(ip) << 24) | made_[ip]++);
  Sock& k = socks_[id];
  k.ip = ip;
  k.ev = std::make_unique<sc_core::sc_event>();
  return id;
}

int64_t MgmtNet::socket(uint32_t host_ip, bool dgram) {
  const int64_t s = new_socket(host_ip);
  socks_.at(s).dgram = dgram;
  return s;
}

int64_t MgmtNet::send_to(int64_t s, uint32_t ip, uint16_t port, const uint8_t* data, size_t len) {
  Sock* k = get(s);
  if (!k || !k->dgram) return -EBADF;
  if (ip == 0) {
    if (!k->connected) return -EDESTADDRREQ;
    ip = k->peer_ip;
    port = k->peer_port;
  }
  if (ip == 0xFFFFFFFFu) return -EACCES;  // the broadcast address (no SO_BROADCAST)
  if (len > 65507) return -EMSGSIZE;
  if (!k->bound) bind(s, 0, 0);
  Msg m = addressed(Msg::kDgram, s, *k, ip, port);
  m.at_ps = arrival(*k, len);
  m.bytes.assign(data, data + len);
  post(ip, std::move(m));
  return int64_t(len);
}

int64_t MgmtNet::recv_from(int64_t s, uint8_t* out, size_t len, bool nonblock, bool peek,
                           uint32_t* ip, uint16_t* port, size_t* full, uint64_t limit_ps) {
  Sock* k = get(s);
  if (!k || !k->dgram) return -EBADF;
  const host::BlockedIn blocked("recv on a UDP socket at port " + std::to_string(k->port));
  for (;;) {
    k = get(s);
    if (!k) return -EBADF;
    if (!k->rx.empty() && k->rx.front().at_ps <= now_ps()) break;
    if (nonblock) return -EAGAIN;
    if (!wait_for(*k->ev, k->rx.empty() ? UINT64_MAX : k->rx.front().at_ps, limit_ps))
      return -EINTR;
  }
  Chunk& c = k->rx.front();
  const size_t n = std::min(len, c.bytes.size());
  std::memcpy(out, c.bytes.data(), n);
  *ip = c.from_ip;
  *port = c.from_port;
  *full = c.bytes.size();
  if (!peek) {
    k->rx_bytes -= c.bytes.size();
    k->rx.pop_front();
  }
  return int64_t(n);
}

int64_t MgmtNet::bind(int64_t s, uint32_t ip, uint16_t port) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (k->bound || k->connected) return -EINVAL;
  if (ip != 0 && ip != k->ip) return -EADDRNOTAVAIL;  // not this host's address
  if (port == 0) port = next_port_.try_emplace(k->ip, uint16_t(40000)).first->second++;
  for (const auto& [id, o] : socks_)
    if (&o != k && !o.closed && o.bound && o.ip == k->ip && o.port == port && o.dgram == k->dgram &&
        (k->dgram || !o.connected))
      return -EADDRINUSE;
  k->port = port;
  k->bound = true;
  k->any = ip == 0;
  return 0;
}

int64_t MgmtNet::name(int64_t s, uint32_t* ip, uint16_t* port) {
  const Sock* k = get(s);
  if (!k) return -EBADF;
  *ip = k->bound && !(k->any && !k->connected) ? k->ip : 0;
  *port = k->bound ? k->port : 0;
  return 0;
}

int64_t MgmtNet::listen(int64_t s) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (!k->bound) bind(s, 0, 0);
  if (!k->listening) listened_[{k->ip, k->port}].push_back({now_ps(), UINT64_MAX, s});
  k->listening = true;
  settle_pending();
  return 0;
}

uint64_t MgmtNet::first_listener_from(uint32_t ip, uint16_t port, uint64_t t,
                                      int64_t* listener) const {
  auto it = listened_.find({ip, port});
  if (it == listened_.end()) return UINT64_MAX;
  for (const Listened& l : it->second)
    if (l.until_ps > t && l.until_ps > l.from_ps) {
      *listener = l.sock;
      return std::max(t, l.from_ps);
    }
  return UINT64_MAX;
}

void MgmtNet::at(uint64_t t_ps, std::function<void()> fn) {
  timers_.emplace(t_ps, std::move(fn));
  Scheduler::get().set(timer_client_, timers_.begin()->first);
}

void MgmtNet::run_timers() {
  const uint64_t now = now_ps();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    std::function<void()> fn = std::move(timers_.begin()->second);
    timers_.erase(timers_.begin());
    fn();
  }
  Scheduler::get().set(timer_client_, timers_.empty() ? UINT64_MAX : timers_.begin()->first);
}

void MgmtNet::answer(const Msg& syn, uint64_t t, int64_t listener) {
  // The listener's new socket, ready for accept once the SYN arrives.
  const int64_t n = new_socket(syn.ip);
  Sock& srv = socks_.at(n);
  srv.port = syn.port;
  srv.bound = srv.connected = true;
  srv.peer = syn.from;
  srv.peer_ip = syn.from_ip;
  srv.peer_port = syn.from_port;
  Sock& lis = socks_.at(listener);
  const uint64_t ready = t + latency_ps();
  // In the order they arrive, those arriving together by their senders' address and socket.
  auto key = [this](const std::pair<uint64_t, int64_t>& b) {
    const Sock& x = socks_.at(b.second);
    return std::make_tuple(b.first, x.peer_ip, x.peer);
  };
  const std::pair<uint64_t, int64_t> entry{ready, n};
  auto pos = std::upper_bound(lis.backlog.begin(), lis.backlog.end(), entry,
                              [&](const auto& a, const auto& b) { return key(a) < key(b); });
  lis.backlog.insert(pos, entry);
  notify_at(*lis.ev, ready);
  Msg a;
  a.kind = Msg::kSynAck;
  a.to = syn.from;
  a.from = n;
  a.from_ip = syn.ip;
  a.from_port = syn.port;
  a.sent_ps = t;
  post(syn.from_ip, std::move(a));
}

void MgmtNet::settle_pending() {
  const uint64_t now = now_ps();
  // Those sent together by their senders' address and socket, whichever process handled them.
  std::sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.syn.sent_ps, a.syn.from_ip, a.syn.from) <
           std::tie(b.syn.sent_ps, b.syn.from_ip, b.syn.from);
  });
  for (size_t i = 0; i < pending_.size();) {
    const Pending& p = pending_[i];
    if (p.syn.sent_ps > now) {  // its time has not come
      ++i;
      continue;
    }
    int64_t l = -1;
    const uint64_t t = first_listener_from(p.syn.ip, p.syn.port, p.syn.sent_ps, &l);
    if (t <= p.limit_ps) {
      const Msg syn = p.syn;
      pending_.erase(pending_.begin() + std::ptrdiff_t(i));
      answer(syn, t, l);
      continue;
    }
    if (p.limit_ps <= now) {  // nothing listened within the wait: its reset goes back
      Msg r;
      r.kind = Msg::kRefused;
      r.to = p.syn.from;
      r.at_ps = p.limit_ps + latency_ps();
      const uint32_t to_ip = p.syn.from_ip;
      pending_.erase(pending_.begin() + std::ptrdiff_t(i));
      post(to_ip, std::move(r));
      continue;
    }
    ++i;
  }
  if (pending_.empty() && !timers_.empty()) {  // nothing left to wait for
    timers_.clear();
    Scheduler::get().set(timer_client_, UINT64_MAX);
  }
}

void MgmtNet::handle(Msg m) {
  switch (m.kind) {
    case Msg::kSyn: {
      // Answered now if it can be; else when its time comes (a request from another process,
      // ahead of this one's clock), a listener comes up, or its wait ends.
      const uint64_t limit = m.sent_ps + uint64_t(p_.connect_wait_us * 1e6);
      const uint64_t sent = m.sent_ps;
      const int64_t from = m.from;
      pending_.push_back({std::move(m), limit});
      settle_pending();
      const uint64_t now = now_ps();
      for (const Pending& p : pending_)
        if (p.syn.from == from) {
          if (sent > now) at(sent, [this] { settle_pending(); });
          at(limit, [this] { settle_pending(); });
        }
      return;
    }
    case Msg::kSynAck: {
      Sock& k = socks_.at(m.to);
      k.connected = true;
      k.peer = m.from;
      k.peer_ip = m.from_ip;
      k.peer_port = m.from_port;
      k.connect_rc = 0;
      k.connect_done_ps = m.sent_ps + 2 * latency_ps();  // SYN, SYN-ACK
      notify_now(*k.ev);
      return;
    }
    case Msg::kRefused: {
      Sock& k = socks_.at(m.to);
      k.connect_rc = -ECONNREFUSED;
      k.so_error = ECONNREFUSED;  // (a blocking connect returns it and clears it)
      k.connect_done_ps = m.at_ps;
      notify_now(*k.ev);
      return;
    }
    case Msg::kData: {
      Sock& k = socks_.at(m.to);
      if (k.closed_ps <= m.sent_ps) {  // closed when they were sent: dropped, and a reset back
        Msg r;
        r.kind = Msg::kRst;
        r.to = m.from;
        r.at_ps = m.sent_ps + 2 * latency_ps();
        post(m.from_ip, std::move(r));
        return;
      }
      k.rx.push_back({m.at_ps, m.sent_ps, m.from, std::move(m.bytes)});
      notify_at(*k.ev, m.at_ps);
      return;
    }
    case Msg::kFin: {
      Sock& k = socks_.at(m.to);
      k.eof_at_ps = std::min(k.eof_at_ps, m.at_ps);
      notify_at(*k.ev, m.at_ps);
      return;
    }
    case Msg::kRst: {
      Sock& k = socks_.at(m.to);
      k.rst_at_ps = std::min(k.rst_at_ps, m.at_ps);
      notify_at(*k.ev, m.at_ps);
      return;
    }
    case Msg::kDgram: {
      // Taken by the socket bound to its address and port when it arrives (one may be bound
      // between its sending and its arrival), in the order of arrival, then of source.
      const uint64_t arrival = m.at_ps;
      at(arrival, [this, m = std::move(m)]() mutable {
        for (auto& [id, k] : socks_) {
          if (k.closed || !k.dgram || !k.bound || k.port != m.port || k.ip != m.ip) continue;
          if (k.connected && (k.peer_ip != m.from_ip || k.peer_port != m.from_port)) return;
          if (k.rx_bytes + m.bytes.size() > kDgramQueueBytes) return;  // its queue is full
          Chunk c{m.at_ps, m.sent_ps, m.from, std::move(m.bytes)};
          c.from_ip = m.from_ip;
          c.from_port = m.from_port;
          auto pos = k.rx.end();
          while (pos != k.rx.begin()) {
            const Chunk& b = *std::prev(pos);
            if (std::tie(b.at_ps, b.from_ip, b.from_port, b.sent_ps) <=
                std::tie(c.at_ps, c.from_ip, c.from_port, c.sent_ps))
              break;
            --pos;
          }
          k.rx_bytes += c.bytes.size();
          k.rx.insert(pos, std::move(c));
          notify_now(*k.ev);
          return;
        }
      });
      return;
    }
  }
}

bool MgmtNet::wait_for(sc_core::sc_event& ev, uint64_t at_ps, uint64_t limit_ps) {
  const uint64_t now = now_ps();
  if (now >= limit_ps) return false;
  const uint64_t until = std::min(at_ps, limit_ps);
  if (until == UINT64_MAX)
    host::host_wait(ev);
  else
    host::host_wait(ps_time(until - now), ev);
  return true;
}

int64_t MgmtNet::accept(int64_t s, uint32_t* peer_ip, uint16_t* peer_port, bool nonblock,
                        uint64_t limit_ps) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (!k->listening) return -EINVAL;
  const host::BlockedIn blocked("accept on port " + std::to_string(k->port));
  for (;;) {
    k = get(s);
    if (!k) return -EBADF;
    if (!k->listening) return -EINVAL;  // shut down meanwhile (Linux's accept says so)
    if (!k->backlog.empty()) {
      const uint64_t ready = k->backlog.front().first;
      if (ready <= now_ps()) break;
      if (nonblock) return -EAGAIN;
      if (!wait_for(*k->ev, ready, limit_ps)) return -EINTR;
      continue;
    }
    if (nonblock) return -EAGAIN;
    if (!wait_for(*k->ev, UINT64_MAX, limit_ps)) return -EINTR;
  }
  const int64_t n = k->backlog.front().second;
  k->backlog.pop_front();
  const Sock& srv = socks_.at(n);
  *peer_ip = srv.peer_ip;
  *peer_port = srv.peer_port;
  return n;
}

int64_t MgmtNet::connect(int64_t s, uint32_t ip, uint16_t port, bool nonblock, uint64_t limit_ps) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (k->dgram) {  // the default peer, at once (again: a new one)
    if (!k->bound) bind(s, 0, 0);
    k->connected = true;
    k->peer_ip = ip;
    k->peer_port = port;
    return 0;
  }
  if (in_progress(*k, now_ps())) return -EALREADY;
  if (k->connected || k->listening) return -EISCONN;
  if (k->so_error) {  // a non-blocking connect's error, not taken yet
    const int e = k->so_error;
    k->so_error = 0;
    return -e;
  }
  if (!k->bound) bind(s, 0, 0);
  k->connect_rc = 1;
  k->connecting = true;
  post(ip, addressed(Msg::kSyn, s, *k, ip, port));
  if (nonblock) return -EINPROGRESS;
  {
    const host::BlockedIn blocked("connect to port " + std::to_string(port) + " (no listener yet)");
    // (A signal ends the wait, not the connect: it goes on as a non-blocking one's.)
    while (socks_.at(s).connect_rc == 1)
      if (!wait_for(*socks_.at(s).ev, UINT64_MAX, limit_ps)) return -EINTR;
  }
  Sock& c = socks_.at(s);
  while (c.connect_done_ps > now_ps())
    if (!wait_for(*c.ev, c.connect_done_ps, limit_ps)) return -EINTR;
  c.so_error = 0;  // (the answer is the call's)
  c.connecting = false;
  return c.connect_rc;
}

void MgmtNet::wait_connected(int64_t s) {
  const host::BlockedIn blocked("a connect in progress");
  for (Sock* k = get(s); k && in_progress(*k, now_ps()); k = get(s)) {
    if (k->connect_rc == 1)
      host::host_wait(*k->ev);
    else
      host::host_wait(ps_time(k->connect_done_ps - now_ps()));
  }
}

int64_t MgmtNet::error(int64_t s) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (in_progress(*k, now_ps())) return 0;
  const int e = k->so_error;
  k->so_error = 0;
  return e ? e : take_reset(*k, now_ps());
}

int64_t MgmtNet::peer(int64_t s, uint32_t* ip, uint16_t* port) {
  const Sock* k = get(s);
  if (!k) return -EBADF;
  if (!k->connected || in_progress(*k, now_ps())) return -ENOTCONN;
  *ip = k->peer_ip;
  *port = k->peer_port;
  return 0;
}

int64_t MgmtNet::send(int64_t s, const uint8_t* data, size_t len) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (in_progress(*k, now_ps())) return -EAGAIN;  // (only a non-blocking connect leaves one)
  if (!k->connected) return -ENOTCONN;
  if (const int e = take_reset(*k, now_ps())) return -e;
  if (k->peer < 0 || k->wr_shut || now_ps() >= k->rst_at_ps) return -EPIPE;
  if (len == 0) return 0;
  Msg m = to_peer(Msg::kData, s, *k, arrival(*k, len));
  m.bytes.assign(data, data + len);
  post(k->peer_ip, std::move(m));
  return int64_t(len);
}

int64_t MgmtNet::recv(int64_t s, uint8_t* out, size_t len, bool nonblock, bool peek, size_t want,
                      uint64_t limit_ps) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (in_progress(*k, now_ps())) {
    if (nonblock) return -EAGAIN;
    wait_connected(s);
    k = get(s);
  }
  if (!k->connected) return -ENOTCONN;
  want = std::max<size_t>(1, std::min(want, len));
  const host::BlockedIn blocked("recv on a socket to port " + std::to_string(k->port));
  for (;;) {
    k = get(s);
    if (!k) return -EBADF;
    const uint64_t t = now_ps();
    size_t arrived = 0;  // (up to want)
    for (auto c = k->rx.begin(); c != k->rx.end() && c->at_ps <= t && arrived < want; ++c)
      arrived += c->bytes.size() - c->taken;
    const bool ended = k->eof_at_ps <= t || k->rd_shut;
    const bool reset = t >= k->rst_at_ps;
    if (arrived >= want || (arrived && (ended || reset || nonblock))) break;
    if (!arrived && ended) return 0;
    if (!arrived && reset) return -take_reset(*k, t);  // (once; then the end of stream)
    if (nonblock) return -EAGAIN;
    // The first chunk not arrived yet, the end of stream or the reset.
    uint64_t next = std::min(k->eof_at_ps, k->rst_at_ps);
    for (const Chunk& c : k->rx)
      if (c.at_ps > t) {
        next = std::min(next, c.at_ps);
        break;
      }
    if (!wait_for(*k->ev, next, limit_ps)) return -EINTR;
  }
  size_t n = 0;
  for (auto c = k->rx.begin(); n < len && c != k->rx.end() && c->at_ps <= now_ps();) {
    const size_t m = std::min(len - n, c->bytes.size() - c->taken);
    std::memcpy(out + n, c->bytes.data() + c->taken, m);
    n += m;
    if (peek) {
      ++c;
      continue;
    }
    c->taken += m;
    if (c->taken < c->bytes.size()) break;
    c = k->rx.erase(c);
  }
  return int64_t(n);
}

void MgmtNet::send_fin(int64_t s, Sock* k) {
  if (!k->connected || k->peer < 0 || k->wr_shut) return;
  k->wr_shut = true;
  // The end of stream arrives behind the last bytes sent.
  post(k->peer_ip, to_peer(Msg::kFin, s, *k, std::max(now_ps(), k->tx_free_ps) + latency_ps()));
}

void MgmtNet::stop_listening(int64_t s, Sock* k) {
  const uint64_t now = now_ps();
  for (Listened& l : listened_[{k->ip, k->port}])
    if (l.sock == s && l.until_ps == UINT64_MAX) l.until_ps = now;
  k->listening = false;
  std::deque<std::pair<uint64_t, int64_t>> backlog;
  backlog.swap(k->backlog);
  for (const auto& b : backlog) abort_connection(b.second);
  notify_now(*k->ev);  // (an accept or poll of another thread sees it)
}

void MgmtNet::abort_connection(int64_t s) {
  Sock* k = get(s);
  if (!k || k->closed) return;
  const uint64_t now = now_ps();
  if (k->connected && k->peer >= 0) post(k->peer_ip, to_peer(Msg::kRst, s, *k, now + latency_ps()));
  k->wr_shut = true;  // (no end of stream after it)
  k->closed = true;
  k->closed_ps = now;
}

int MgmtNet::take_reset(Sock& k, uint64_t t) {
  if (!reset_pending(k, t)) return 0;
  k.rst_taken = true;
  return k.eof_at_ps <= k.rst_at_ps ? EPIPE : ECONNRESET;
}

int64_t MgmtNet::shutdown(int64_t s, int how) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) return -EINVAL;
  if (k->listening) {
    // Linux's: a listener's write side is nothing to shut; its read side stops it listening.
    if (how != SHUT_WR) stop_listening(s, k);
    return 0;
  }
  if (!k->connected) return -ENOTCONN;
  if (how != SHUT_WR && !k->rd_shut) {
    k->rd_shut = true;
    notify_now(*k->ev);  // (a recv or poll of another thread sees it)
  }
  if (how != SHUT_RD) send_fin(s, k);
  return 0;
}

int64_t MgmtNet::close(int64_t s) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  const uint64_t now = now_ps();
  if (k->listening) stop_listening(s, k);
  send_fin(s, k);
  k->closed = true;
  k->closed_ps = now;
  // Bytes from another process that were here before their time: those sent from now on met a
  // closed socket (dropped, and the reset goes back).
  uint64_t first = UINT64_MAX;
  for (auto it = k->rx.begin(); it != k->rx.end();)
    if (it->sent_ps >= now) {
      first = std::min(first, it->sent_ps);
      it = k->rx.erase(it);
    } else {
      ++it;
    }
  if (first != UINT64_MAX) {
    Msg r;
    r.kind = Msg::kRst;
    r.to = k->peer;
    r.at_ps = first + 2 * latency_ps();
    post(k->peer_ip, std::move(r));
  }
  return 0;
}

short MgmtNet::poll_one(int64_t s, short events, uint64_t t, uint64_t* next,
                        sc_core::sc_event_or_list& evs) {
  const Sock* k = get(s);
  if (!k) return POLLNVAL;
  short revents = 0;
  if (k->dgram) {
    if (!k->rx.empty() && k->rx.front().at_ps <= t)
      revents |= short(events & POLLIN);
    else if (!k->rx.empty())
      *next = std::min(*next, k->rx.front().at_ps);
    revents |= short(events & POLLOUT);
  } else if (k->listening) {
    if (!k->backlog.empty()) {
      if (k->backlog.front().first <= t)
        revents |= short(events & POLLIN);
      else
        *next = std::min(*next, k->backlog.front().first);
    }
  } else if (in_progress(*k, t)) {
    if (k->connect_rc != 1) *next = std::min(*next, k->connect_done_ps);  // (else: its event)
  } else if (k->connecting && k->connect_rc < 0) {  // refused: as Linux reports it
    revents = short(POLLERR | POLLHUP | (events & (POLLIN | POLLOUT)));
  } else if (!k->connected) {
    revents = POLLHUP;
  } else if (t >= k->rst_at_ps) {  // reset: as Linux's (POLLERR until its error is taken)
    revents = short(POLLHUP | (events & (POLLIN | POLLOUT)) | (reset_pending(*k, t) ? POLLERR : 0));
  } else {
    const bool bytes = !k->rx.empty() && k->rx.front().at_ps <= t;
    const bool eof = k->rx.empty() && k->eof_at_ps <= t;
    if (bytes || eof || k->rd_shut) revents |= short(events & POLLIN);
    if (eof) revents |= POLLHUP;
    if (!k->rx.empty() && !bytes) *next = std::min(*next, k->rx.front().at_ps);
    if (k->rx.empty() && !eof && k->eof_at_ps != UINT64_MAX) *next = std::min(*next, k->eof_at_ps);
    if (k->rst_at_ps != UINT64_MAX) *next = std::min(*next, k->rst_at_ps);
    revents |= short(events & POLLOUT);
  }
  evs |= *k->ev;
  return revents;
}

}  // namespace rnic::exec
