#include "sim/exec/cm_net.h"

#include <fmt/format.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>

#include "models/common/sim_time.h"
#include "models/host/host_wait.h"

namespace rnic::exec {

CmNet::Id* CmNet::get(int64_t id) {
  if (id < 0 || size_t(id) >= ids_.size() || ids_[size_t(id)].destroyed) return nullptr;
  return &ids_[size_t(id)];
}
const CmNet::Id* CmNet::get(int64_t id) const {
  if (id < 0 || size_t(id) >= ids_.size() || ids_[size_t(id)].destroyed) return nullptr;
  return &ids_[size_t(id)];
}

int64_t CmNet::create_channel() {
  Channel c;
  c.ev = std::make_unique<sc_core::sc_event>();
  chans_.push_back(std::move(c));
  return int64_t(chans_.size() - 1);
}

void CmNet::destroy_channel(int64_t ch) {
  if (ch < 0 || size_t(ch) >= chans_.size()) return;
  chans_[size_t(ch)].destroyed = true;
  chans_[size_t(ch)].q.clear();
}

int64_t CmNet::create_id(int64_t ch, uint32_t host_ip, const MacAddr& mac) {
  if (ch < 0 || size_t(ch) >= chans_.size() || chans_[size_t(ch)].destroyed) return -1;
  Id i;
  i.ch = ch;
  i.host_ip = host_ip;
  i.mac = mac;
  ids_.push_back(i);
  return int64_t(ids_.size() - 1);
}

int CmNet::destroy_id(int64_t id) {
  Id* i = get(id);
  if (!i) return EINVAL;
  if (i->connected && !i->disconnected) disconnect(id);
  if (i->listening) listeners_.erase({i->src.ip, i->src.port});
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [id](const Pending& p) { return p.from == id; }),
                 pending_.end());
  i->destroyed = true;
  return 0;
}

int CmNet::bind(int64_t id, uint32_t ip, uint16_t port) {
  Id* i = get(id);
  if (!i) return EINVAL;
  if (i->bound) return EINVAL;
  if (ip != 0 && ip != i->host_ip) return EADDRNOTAVAIL;
  if (port == 0) port = next_port_++;
  for (const Id& o : ids_)
    if (&o != i && !o.destroyed && o.bound && o.listening && o.src.ip == i->host_ip &&
        o.src.port == port)
      return EADDRINUSE;
  i->src = {i->host_ip, port};
  i->bound = true;
  return 0;
}

int CmNet::listen(int64_t id) {
  Id* i = get(id);
  if (!i || !i->bound || i->connecting || i->connected) return EINVAL;
  i->listening = true;
  listeners_[{i->src.ip, i->src.port}] = id;
  // Requests that waited for this listener reach it now (or one latency after they were made).
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Id* from = get(it->from);
    if (from && from->dst.ip == i->src.ip && from->dst.port == i->src.port) {
      request(it->from, id, now_ps());
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  return 0;
}

int CmNet::resolve_addr(int64_t id, uint32_t ip, uint16_t port, bool found,
                        const MacAddr& dst_mac) {
  Id* i = get(id);
  if (!i || i->connecting || i->connected || i->listening) return EINVAL;
  if (!i->bound) bind(id, 0, 0);
  CmEvent e;
  e.id = id;
  if (!found) {
    e.type = RDMA_CM_EVENT_ADDR_ERROR;
    e.status = -EHOSTUNREACH;
    deliver(id, e, now_ps());
    return 0;
  }
  i->dst = {ip, port};
  i->dst_mac = dst_mac;
  i->resolved = true;
  e.type = RDMA_CM_EVENT_ADDR_RESOLVED;
  deliver(id, e, now_ps() + 2 * latency_ps());  // ARP: a round trip
  return 0;
}

int CmNet::resolve_route(int64_t id) {
  Id* i = get(id);
  if (!i || !i->resolved) return EINVAL;
  CmEvent e;
  e.id = id;
  e.type = RDMA_CM_EVENT_ROUTE_RESOLVED;
  deliver(id, e, now_ps());
  return 0;
}

int CmNet::connect(int64_t id, const CmParam& p) {
  Id* i = get(id);
  if (!i || !i->resolved || i->connecting || i->connected) return EINVAL;
  if (p.private_data.size() > kMaxPrivateData) return EINVAL;
  if (remote_ && remote_(i->dst.ip)) {
    fmt::print(
        stderr,
        "rnicsim: an rdma_cm connection to {}.{}.{}.{}, a host another process simulates, is "
        "not carried between the processes of a run: rejected (run it without mpirun, or "
        "keep both its hosts on one rank: --partition)\n",
        i->dst.ip >> 24, (i->dst.ip >> 16) & 255, (i->dst.ip >> 8) & 255, i->dst.ip & 255);
    CmEvent r;
    r.id = id;
    r.type = RDMA_CM_EVENT_REJECTED;
    r.status = -ECONNREFUSED;
    deliver(id, r, now_ps());
    return 0;
  }
  i->connecting = true;
  i->request = p;
  auto l = listeners_.find({i->dst.ip, i->dst.port});
  if (l != listeners_.end() && get(l->second))
    request(id, l->second, now_ps());
  else
    pending_.push_back({id, now_ps() + uint64_t(p_.connect_wait_us * 1e6)});
  return 0;
}

// The request of `from` reaches `listener` one latency after `at`: a new id for the connection
// on the listener's channel, and its CONNECT_REQUEST.
void CmNet::request(int64_t from, int64_t listener, uint64_t at_ps) {
  const Id& f = ids_[size_t(from)];
  const Id& l = ids_[size_t(listener)];
  Id c;
  c.ch = l.ch;
  c.host_ip = l.host_ip;
  c.mac = l.mac;
  c.src = l.src;
  c.dst = f.src;
  c.dst_mac = f.mac;
  c.bound = c.resolved = true;
  c.peer = from;
  c.request = f.request;
  ids_.push_back(c);
  CmEvent e;
  e.id = int64_t(ids_.size() - 1);
  e.listen_id = listener;
  e.type = RDMA_CM_EVENT_CONNECT_REQUEST;
  e.param = c.request;
  deliver(e.id, e, at_ps + latency_ps());
}

int CmNet::accept(int64_t id, const CmParam& p) {
  Id* i = get(id);
  if (!i || i->peer < 0 || i->connected) return EINVAL;
  if (p.private_data.size() > kMaxPrivateData) return EINVAL;
  Id* from = get(i->peer);
  i->connected = true;
  CmEvent e;
  e.id = id;
  e.type = RDMA_CM_EVENT_ESTABLISHED;
  e.param = i->request;
  deliver(id, e, now_ps());
  if (from && from->connecting) {
    from->connecting = false;
    from->connected = true;
    from->peer = id;
    CmEvent r;
    r.id = i->peer;
    r.type = RDMA_CM_EVENT_ESTABLISHED;
    r.param = p;
    deliver(i->peer, r, now_ps() + latency_ps());
  }
  return 0;
}

int CmNet::reject(int64_t id, const std::vector<uint8_t>& private_data) {
  Id* i = get(id);
  if (!i || i->peer < 0 || i->connected) return EINVAL;
  if (Id* from = get(i->peer); from && from->connecting) {
    from->connecting = false;
    CmEvent r;
    r.id = i->peer;
    r.type = RDMA_CM_EVENT_REJECTED;
    r.status = -ECONNREFUSED;
    r.param.private_data = private_data;
    deliver(i->peer, r, now_ps() + latency_ps());
  }
  i->peer = -1;
  return 0;
}

int CmNet::disconnect(int64_t id) {
  Id* i = get(id);
  if (!i || !i->connected) return EINVAL;
  if (i->disconnected) return 0;
  i->disconnected = true;
  CmEvent e;
  e.id = id;
  e.type = RDMA_CM_EVENT_DISCONNECTED;
  deliver(id, e, now_ps());
  if (Id* p = get(i->peer); p && !p->disconnected) {
    p->disconnected = true;
    CmEvent r;
    r.id = i->peer;
    r.type = RDMA_CM_EVENT_DISCONNECTED;
    deliver(i->peer, r, now_ps() + latency_ps());
  }
  return 0;
}

void CmNet::deliver(int64_t id, CmEvent e, uint64_t at_ps) {
  Channel& c = chans_[size_t(ids_[size_t(id)].ch)];
  if (c.destroyed) return;
  e.at_ps = at_ps;
  // In delivery order; events due at the same time in the order they were made.
  auto it = std::upper_bound(c.q.begin(), c.q.end(), at_ps,
                             [](uint64_t t, const CmEvent& x) { return t < x.at_ps; });
  c.q.insert(it, std::move(e));
  notify_at(*c.ev, std::max(at_ps, now_ps()));
}

int CmNet::get_event(int64_t ch, CmEvent* out) {
  if (ch < 0 || size_t(ch) >= chans_.size() || chans_[size_t(ch)].destroyed) return ENOENT;
  const host::BlockedIn blocked("rdma_get_cm_event");
  for (;;) {
    Channel& c = chans_[size_t(ch)];
    const uint64_t now = now_ps();
    // Requests of this channel's ids that no listener took in time are rejected.
    uint64_t next = UINT64_MAX;
    for (auto it = pending_.begin(); it != pending_.end();) {
      Id* f = get(it->from);
      if (!f || f->ch != ch) {
        ++it;
        continue;
      }
      if (it->deadline_ps <= now) {
        f->connecting = false;
        CmEvent r;
        r.id = it->from;
        r.type = RDMA_CM_EVENT_REJECTED;
        r.status = -ECONNREFUSED;
        deliver(it->from, r, now);
        it = pending_.erase(it);
      } else {
        next = std::min(next, it->deadline_ps);
        ++it;
      }
    }
    while (!c.q.empty() && c.q.front().at_ps <= now) {
      CmEvent e = std::move(c.q.front());
      c.q.pop_front();
      const Id* i = get(e.id);
      if (!i && e.type != RDMA_CM_EVENT_CONNECT_REQUEST) continue;  // its id is gone
      *out = std::move(e);
      return 0;
    }
    if (!c.q.empty()) next = std::min(next, c.q.front().at_ps);
    if (next == UINT64_MAX)
      host::host_wait(*c.ev);
    else
      host::host_wait(ps_time(next - now), *c.ev);
  }
}

CmNet::Addr CmNet::src(int64_t id) const {
  const Id* i = get(id);
  return i ? i->src : Addr{};
}
CmNet::Addr CmNet::dst(int64_t id) const {
  const Id* i = get(id);
  return i ? i->dst : Addr{};
}
MacAddr CmNet::peer_mac(int64_t id) const {
  const Id* i = get(id);
  return i ? i->dst_mac : MacAddr{};
}

uint32_t CmNet::request_qpn(int64_t id) const {
  const Id* i = get(id);
  return i ? i->request.qpn : 0;
}

}  // namespace rnic::exec
