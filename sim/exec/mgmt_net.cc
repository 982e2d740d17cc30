#include "sim/exec/mgmt_net.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "models/common/sim_time.h"
#include "models/host/host_wait.h"

namespace rnic::exec {

MgmtNet::Sock* MgmtNet::get(int64_t s) {
  if (s < 0 || size_t(s) >= socks_.size() || socks_[size_t(s)].closed) return nullptr;
  return &socks_[size_t(s)];
}

int64_t MgmtNet::socket(uint32_t host_ip) {
  Sock k;
  k.ip = host_ip;
  k.ev = std::make_unique<sc_core::sc_event>();
  socks_.push_back(std::move(k));
  return int64_t(socks_.size() - 1);
}

int64_t MgmtNet::bind(int64_t s, uint32_t ip, uint16_t port) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (k->bound || k->connected) return -EINVAL;
  if (ip != 0 && ip != k->ip) return -EADDRNOTAVAIL;  // not this host's address
  if (port == 0) port = next_port_++;
  for (const Sock& o : socks_)
    if (&o != k && !o.closed && o.bound && o.ip == k->ip && o.port == port && !o.connected)
      return -EADDRINUSE;
  k->port = port;
  k->bound = true;
  return 0;
}

int64_t MgmtNet::listen(int64_t s) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (!k->bound) bind(s, 0, 0);
  k->listening = true;
  listeners_[{k->ip, k->port}] = s;
  notify_now(listen_ev_);
  return 0;
}

int64_t MgmtNet::accept(int64_t s, uint32_t* peer_ip, uint16_t* peer_port, bool nonblock) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (!k->listening) return -EINVAL;
  const host::BlockedIn blocked("accept on port " + std::to_string(k->port));
  for (;;) {
    k = get(s);
    if (!k) return -EBADF;
    if (!k->backlog.empty()) {
      const uint64_t ready = k->backlog.front().first;
      if (ready <= now_ps()) break;
      if (nonblock) return -EAGAIN;
      host::host_wait(ps_time(ready - now_ps()));
      continue;
    }
    if (nonblock) return -EAGAIN;
    host::host_wait(*k->ev);
  }
  const int64_t n = k->backlog.front().second;
  k->backlog.pop_front();
  const Sock& peer = socks_[size_t(socks_[size_t(n)].peer)];
  *peer_ip = peer.ip;
  *peer_port = peer.port;
  return n;
}

int64_t MgmtNet::connect(int64_t s, uint32_t ip, uint16_t port) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (k->connected || k->listening) return -EISCONN;
  if (!k->bound) bind(s, 0, 0);
  // A listener there, or one coming up within the wait.
  const uint64_t limit = now_ps() + uint64_t(p_.connect_wait_us * 1e6);
  auto find = [&] { return listeners_.find({ip, port}); };
  {
    const host::BlockedIn blocked("connect to port " + std::to_string(port) + " (no listener yet)");
    while (find() == listeners_.end() || !get(find()->second)) {
      if (now_ps() >= limit) return -ECONNREFUSED;
      host::host_wait(ps_time(limit - now_ps()), listen_ev_);
    }
  }
  const int64_t l = find()->second;
  // The listener's new socket, ready for accept once the SYN arrives.
  const int64_t n = socket(ip);
  Sock& srv = socks_[size_t(n)];
  srv.port = port;
  srv.bound = srv.connected = true;
  srv.peer = s;
  k = get(s);
  k->connected = true;
  k->peer = n;
  Sock& lis = socks_[size_t(l)];
  lis.backlog.push_back({now_ps() + latency_ps(), n});
  notify_at(*lis.ev, now_ps() + latency_ps());
  host::host_wait(ps_time(2 * latency_ps()));  // SYN, SYN-ACK
  return 0;
}

int64_t MgmtNet::send(int64_t s, const uint8_t* data, size_t len) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (!k->connected) return -ENOTCONN;
  Sock* p = k->peer >= 0 ? &socks_[size_t(k->peer)] : nullptr;
  if (!p || now_ps() >= k->rst_at_ps) return -EPIPE;
  if (len == 0) return 0;
  if (p->closed) {  // dropped; the peer's reset is on its way
    k->rst_at_ps = std::min(k->rst_at_ps, now_ps() + 2 * latency_ps());
    return int64_t(len);
  }
  // Serialised at the sender's rate behind what it sent before, then the latency.
  const uint64_t start = std::max(now_ps(), k->tx_free_ps);
  const uint64_t wire = uint64_t(double(len) * 8.0 / p_.gbps * 1000.0);
  k->tx_free_ps = start + wire;
  const uint64_t at = start + wire + latency_ps();
  p->rx.push_back({at, std::vector<uint8_t>(data, data + len)});
  notify_at(*p->ev, at);
  return int64_t(len);
}

int64_t MgmtNet::recv(int64_t s, uint8_t* out, size_t len, bool nonblock) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (!k->connected) return -ENOTCONN;
  const host::BlockedIn blocked("recv on a socket to port " + std::to_string(k->port));
  for (;;) {
    k = get(s);
    if (!k) return -EBADF;
    const uint64_t t = now_ps();
    if (!k->rx.empty() && k->rx.front().at_ps <= t) break;
    if (k->rx.empty() && k->eof_at_ps <= t) return 0;
    if (nonblock) return -EAGAIN;
    const uint64_t next = !k->rx.empty() ? k->rx.front().at_ps : k->eof_at_ps;
    if (next != UINT64_MAX)
      host::host_wait(ps_time(next - t), *k->ev);
    else
      host::host_wait(*k->ev);
  }
  size_t n = 0;
  while (n < len && !k->rx.empty() && k->rx.front().at_ps <= now_ps()) {
    Chunk& c = k->rx.front();
    const size_t m = std::min(len - n, c.bytes.size() - c.taken);
    std::memcpy(out + n, c.bytes.data() + c.taken, m);
    c.taken += m;
    n += m;
    if (c.taken == c.bytes.size()) k->rx.pop_front();
  }
  return int64_t(n);
}

int64_t MgmtNet::close(int64_t s) {
  Sock* k = get(s);
  if (!k) return -EBADF;
  if (k->listening) listeners_.erase({k->ip, k->port});
  if (k->connected && k->peer >= 0) {
    Sock& p = socks_[size_t(k->peer)];
    // The end of stream arrives behind the last bytes sent.
    const uint64_t at = std::max(now_ps(), k->tx_free_ps) + latency_ps();
    p.eof_at_ps = std::min(p.eof_at_ps, at);
    notify_at(*p.ev, at);
  }
  k->closed = true;
  return 0;
}

int64_t MgmtNet::poll(std::vector<PollItem>& items, uint64_t timeout_ns) {
  const uint64_t limit = timeout_ns == UINT64_MAX ? UINT64_MAX : now_ps() + timeout_ns * 1000;
  const host::BlockedIn blocked("poll on sockets");
  for (;;) {
    const uint64_t t = now_ps();
    uint64_t next = limit;
    int64_t ready = 0;
    sc_core::sc_event_or_list evs;
    bool any_ev = false;
    for (PollItem& it : items) {
      it.revents = 0;
      const Sock* k = get(it.sock);
      if (!k) {
        it.revents = POLLNVAL;
      } else if (k->listening) {
        if (!k->backlog.empty()) {
          if (k->backlog.front().first <= t)
            it.revents |= short(it.events & POLLIN);
          else
            next = std::min(next, k->backlog.front().first);
        }
      } else if (!k->connected || t >= k->rst_at_ps) {
        it.revents = POLLHUP | (k->connected ? POLLERR : 0);
      } else {
        const bool bytes = !k->rx.empty() && k->rx.front().at_ps <= t;
        const bool eof = k->rx.empty() && k->eof_at_ps <= t;
        if (bytes || eof) it.revents |= short(it.events & POLLIN);
        if (eof) it.revents |= POLLHUP;
        if (!k->rx.empty() && !bytes) next = std::min(next, k->rx.front().at_ps);
        if (k->rx.empty() && !eof && k->eof_at_ps != UINT64_MAX)
          next = std::min(next, k->eof_at_ps);
        if (k->rst_at_ps != UINT64_MAX) next = std::min(next, k->rst_at_ps);
        it.revents |= short(it.events & POLLOUT);
      }
      if (it.revents) ++ready;
      if (k) {
        evs |= *k->ev;
        any_ev = true;
      }
    }
    if (ready || t >= limit) return ready;
    if (!any_ev) {
      host::host_wait(sc_core::sc_time::from_value(limit - t));
    } else if (next == UINT64_MAX) {
      host::host_wait(evs);
    } else {
      host::host_wait(sc_core::sc_time::from_value(next - t), evs);
    }
  }
}

}  // namespace rnic::exec
