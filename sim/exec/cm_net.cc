#include "sim/exec/cm_net.h"

#include <poll.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>

#include "models/common/scheduler.h"
#include "models/common/sim_time.h"
#include "models/host/host_wait.h"
#include "sim/ranks.h"

namespace rnic::exec {

CmNet::CmNet(const MgmtParams& p)
    : p_(p), hosts_([this](ranks::Unpacker& u) { handle(unpack(u)); }) {
  client_ = Scheduler::get().add("cm_net.messages", [this] { run_due(); });
}

CmNet::~CmNet() { Scheduler::get().drop(client_); }

void CmNet::span_ranks(std::function<int(uint32_t ip)> rank_of) {
  hosts_.span_ranks(std::move(rank_of));
}

CmNet::Msg CmNet::unpack(ranks::Unpacker& u) {
  Msg m;
  m.kind = Msg::Kind(u.get<uint8_t>());
  m.to = u.get<int64_t>();
  m.from = u.get<int64_t>();
  m.from_ip = u.get<uint32_t>();
  m.src = u.get<Addr>();
  m.dst = u.get<Addr>();
  m.mac = u.get<MacAddr>();
  m.param.responder_resources = u.get<uint8_t>();
  m.param.initiator_depth = u.get<uint8_t>();
  m.param.qpn = u.get<uint32_t>();
  m.param.private_data = u.get_sized<std::vector<uint8_t>>();
  m.sent_ps = u.get<uint64_t>();
  m.at_ps = u.get<uint64_t>();
  return m;
}

void CmNet::post(uint32_t ip, Msg m) {
  if (hosts_.local(ip)) return handle(std::move(m));
  ranks::Packer k;
  k.put(uint8_t(m.kind)).put(m.to).put(m.from).put(m.from_ip).put(m.src).put(m.dst).put(m.mac);
  k.put(m.param.responder_resources).put(m.param.initiator_depth).put(m.param.qpn);
  k.put_sized(m.param.private_data).put(m.sent_ps).put(m.at_ps);
  hosts_.send(ip, k, m.at_ps);
}

// Held until its time (whichever process sent it), then acted on in (time, sender) order.
void CmNet::handle(Msg m) {
  due_.emplace(std::make_tuple(m.at_ps, m.from_ip, m.from, arrivals_++), std::move(m));
  wake();
}

void CmNet::wake() {
  uint64_t t = due_.empty() ? UINT64_MAX : std::get<0>(due_.begin()->first);
  for (const Pending& p : pending_) t = std::min(t, p.deadline_ps);
  Scheduler::get().set(client_, t);
}

void CmNet::run_due() {
  const uint64_t now = now_ps();
  while (!due_.empty() && std::get<0>(due_.begin()->first) <= now) {
    Msg m = std::move(due_.begin()->second);
    due_.erase(due_.begin());
    switch (m.kind) {
      case Msg::kRequest: {
        auto l = listeners_.find({m.dst.ip, m.dst.port});
        if (l != listeners_.end() && get(l->second)) {
          // A listener that came up at this very time takes it as one that came later would.
          const uint64_t since = ids_.at(l->second).listen_ps;
          request(m, l->second, since < now ? now : now + latency_ps());
        } else {
          const uint64_t deadline = m.sent_ps + uint64_t(p_.connect_wait_us * 1e6);
          pending_.push_back({std::move(m), deadline});
        }
        break;
      }
      case Msg::kCancel:
        pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                      [&](const Pending& p) {
                                        return p.req.from == m.from && p.req.from_ip == m.from_ip;
                                      }),
                       pending_.end());
        break;
      case Msg::kAccept: {
        Id* i = get(m.to);
        if (!i || !i->connecting) break;
        i->connecting = false;
        i->connected = true;
        i->peer = m.from;
        i->peer_ip = m.from_ip;
        CmEvent r;
        r.id = m.to;
        r.type = RDMA_CM_EVENT_ESTABLISHED;
        r.param = std::move(m.param);
        deliver(m.to, std::move(r), now);
        break;
      }
      case Msg::kReject: {
        Id* i = get(m.to);
        if (!i || !i->connecting) break;
        i->connecting = false;
        CmEvent r;
        r.id = m.to;
        r.type = RDMA_CM_EVENT_REJECTED;
        r.status = -ECONNREFUSED;
        r.param.private_data = std::move(m.param.private_data);
        deliver(m.to, std::move(r), now);
        break;
      }
      case Msg::kDisconnect: {
        Id* i = get(m.to);
        if (!i || !i->connected || i->disconnected) break;
        i->disconnected = true;
        CmEvent r;
        r.id = m.to;
        r.type = RDMA_CM_EVENT_DISCONNECTED;
        deliver(m.to, std::move(r), now);
        break;
      }
    }
  }
  // Requests no listener took within the wait: rejected back to their initiators.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->deadline_ps > now) {
      ++it;
      continue;
    }
    Msg r;
    r.kind = Msg::kReject;
    r.to = it->req.from;
    r.from_ip = it->req.dst.ip;
    r.sent_ps = it->deadline_ps;
    r.at_ps = it->deadline_ps + latency_ps();
    const uint32_t to_ip = it->req.from_ip;
    it = pending_.erase(it);
    post(to_ip, std::move(r));
  }
  wake();
}

CmNet::Id* CmNet::get(int64_t id) {
  auto it = ids_.find(id);
  return it == ids_.end() || it->second.destroyed ? nullptr : &it->second;
}
const CmNet::Id* CmNet::get(int64_t id) const {
  auto it = ids_.find(id);
  return it == ids_.end() || it->second.destroyed ? nullptr : &it->second;
}

int64_t CmNet::new_id(uint32_t ip) {
  const int64_t id = int64_t((uint64_t(ip) << 24) | made_[ip]++);
  ids_[id];
  return id;
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
  const int64_t id = new_id(host_ip);
  Id& i = ids_.at(id);
  i.ch = ch;
  i.host_ip = host_ip;
  i.mac = mac;
  return id;
}

int CmNet::destroy_id(int64_t id) {
  Id* i = get(id);
  if (!i) return EINVAL;
  if (i->connected && !i->disconnected) disconnect(id);
  if (i->listening) listeners_.erase({i->src.ip, i->src.port});
  if (i->connecting) {  // its request, if it waits for a listener, goes
    Msg c;
    c.kind = Msg::kCancel;
    c.from = id;
    c.from_ip = i->host_ip;
    c.sent_ps = now_ps();
    c.at_ps = c.sent_ps + latency_ps();
    post(i->dst.ip, std::move(c));
  }
  i->destroyed = true;
  return 0;
}

int CmNet::bind(int64_t id, uint32_t ip, uint16_t port) {
  Id* i = get(id);
  if (!i) return EINVAL;
  if (i->bound) return EINVAL;
  if (ip != 0 && ip != i->host_ip) return EADDRNOTAVAIL;
  if (port == 0) port = next_port_.try_emplace(i->host_ip, uint16_t(50000)).first->second++;
  for (const auto& [oid, o] : ids_)
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
  i->listen_ps = now_ps();
  listeners_[{i->src.ip, i->src.port}] = id;
  // Requests that waited here for this listener reach it one latency from now.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->req.dst.ip == i->src.ip && it->req.dst.port == i->src.port) {
      request(it->req, id, now_ps() + latency_ps());
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  wake();
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
  i->connecting = true;
  i->request = p;
  Msg m;
  m.kind = Msg::kRequest;
  m.from = id;
  m.from_ip = i->host_ip;
  m.src = i->src;
  m.dst = i->dst;
  m.mac = i->mac;
  m.param = p;
  m.sent_ps = now_ps();
  m.at_ps = m.sent_ps + latency_ps();
  post(i->dst.ip, std::move(m));
  return 0;
}

// A new id for the connection on the listener's channel, and its CONNECT_REQUEST at at_ps.
void CmNet::request(const Msg& req, int64_t listener, uint64_t at_ps) {
  const Id l = ids_.at(listener);
  const int64_t id = new_id(l.host_ip);
  Id& c = ids_.at(id);
  c.ch = l.ch;
  c.host_ip = l.host_ip;
  c.mac = l.mac;
  c.src = l.src;
  c.dst = req.src;
  c.dst_mac = req.mac;
  c.bound = c.resolved = true;
  c.peer = req.from;
  c.peer_ip = req.from_ip;
  c.request = req.param;
  CmEvent e;
  e.id = id;
  e.listen_id = listener;
  e.type = RDMA_CM_EVENT_CONNECT_REQUEST;
  e.param = c.request;
  deliver(id, e, at_ps);
}

int CmNet::accept(int64_t id, const CmParam& p) {
  Id* i = get(id);
  if (!i || i->peer < 0 || i->connected) return EINVAL;
  if (p.private_data.size() > kMaxPrivateData) return EINVAL;
  i->connected = true;
  CmEvent e;
  e.id = id;
  e.type = RDMA_CM_EVENT_ESTABLISHED;
  e.param = i->request;
  deliver(id, e, now_ps());
  Msg m;
  m.kind = Msg::kAccept;
  m.to = i->peer;
  m.from = id;
  m.from_ip = i->host_ip;
  m.param = p;
  m.sent_ps = now_ps();
  m.at_ps = m.sent_ps + latency_ps();
  post(i->peer_ip, std::move(m));
  return 0;
}

int CmNet::reject(int64_t id, const std::vector<uint8_t>& private_data) {
  Id* i = get(id);
  if (!i || i->peer < 0 || i->connected) return EINVAL;
  Msg m;
  m.kind = Msg::kReject;
  m.to = i->peer;
  m.from = id;
  m.from_ip = i->host_ip;
  m.param.private_data = private_data;
  m.sent_ps = now_ps();
  m.at_ps = m.sent_ps + latency_ps();
  post(i->peer_ip, std::move(m));
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
  Msg m;
  m.kind = Msg::kDisconnect;
  m.to = i->peer;
  m.from = id;
  m.from_ip = i->host_ip;
  m.sent_ps = now_ps();
  m.at_ps = m.sent_ps + latency_ps();
  post(i->peer_ip, std::move(m));
  return 0;
}

void CmNet::deliver(int64_t id, CmEvent e, uint64_t at_ps) {
  Channel& c = chans_[size_t(ids_.at(id).ch)];
  if (c.destroyed) return;
  e.at_ps = at_ps;
  // In delivery order; events due at the same time in the order they were made.
  auto it = std::upper_bound(c.q.begin(), c.q.end(), at_ps,
                             [](uint64_t t, const CmEvent& x) { return t < x.at_ps; });
  c.q.insert(it, std::move(e));
  notify_at(*c.ev, std::max(at_ps, now_ps()));
}

int CmNet::get_event(int64_t ch, CmEvent* out, bool nonblock) {
  if (ch < 0 || size_t(ch) >= chans_.size() || chans_[size_t(ch)].destroyed) return ENOENT;
  const host::BlockedIn blocked("rdma_get_cm_event");
  for (;;) {
    Channel& c = chans_[size_t(ch)];
    const uint64_t now = now_ps();
    while (!c.q.empty() && c.q.front().at_ps <= now) {
      CmEvent e = std::move(c.q.front());
      c.q.pop_front();
      const Id* i = get(e.id);
      if (!i && e.type != RDMA_CM_EVENT_CONNECT_REQUEST) continue;  // its id is gone
      *out = std::move(e);
      return 0;
    }
    if (nonblock) return EAGAIN;
    if (c.q.empty())
      host::host_wait(*c.ev);
    else
      host::host_wait(ps_time(c.q.front().at_ps - now), *c.ev);
  }
}

short CmNet::poll_one(int64_t ch, short events, uint64_t t, uint64_t* next,
                      sc_core::sc_event_or_list& evs) {
  if (ch < 0 || size_t(ch) >= chans_.size() || chans_[size_t(ch)].destroyed) return POLLNVAL;
  const Channel& c = chans_[size_t(ch)];
  evs |= *c.ev;
  for (const CmEvent& e : c.q) {  // (as get_event takes them: one whose id is gone is skipped)
    if (e.at_ps > t) {
      *next = std::min(*next, e.at_ps);
      break;
    }
    if (get(e.id) || e.type == RDMA_CM_EVENT_CONNECT_REQUEST) return short(events & POLLIN);
  }
  return 0;
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
