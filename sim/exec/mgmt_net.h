// The management network between simulated hosts: what carries the TCP sockets of executables
// run as simulated processes (their exchange of QP numbers before any RDMA), apart from the
// RDMA fabric. A stream per connection with a one-way latency and a bandwidth
// (host.mgmt_latency_ns, host.mgmt_gbps): bytes written at t are readable by the peer at
// t + latency + bytes x 8 / bandwidth, in order, after the ones before them. connect takes one
// round trip (2 x latency); a connect to an address where nothing listens yet waits for a
// listener up to host.mgmt_connect_wait_us of simulated time (so the order in which processes
// start cannot decide a run), then fails with ECONNREFUSED. Bytes sent to a peer that has
// closed are accepted and dropped, and its reset comes back a round trip later: sends from then
// fail with EPIPE, as TCP's do. Each host has one IPv4 address,
// 10.0.0.0 + its index + 1 (node0 is 10.0.0.1).
//
// Every call is made from a simulated thread and blocks in simulated time; each returns 0 or
// a byte count, or -errno.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

namespace rnic::exec {

struct MgmtParams {
  double latency_ns = 15000;
  double gbps = 1;
  double connect_wait_us = 1000000;
};

class MgmtNet {
 public:
  explicit MgmtNet(const MgmtParams& p) : p_(p) {}

  int64_t socket(uint32_t host_ip);
  int64_t bind(int64_t s, uint32_t ip, uint16_t port);
  int64_t listen(int64_t s);
  // Waits for a connection; the new socket's id, and the peer's address.
  int64_t accept(int64_t s, uint32_t* peer_ip, uint16_t* peer_port, bool nonblock);
  int64_t connect(int64_t s, uint32_t ip, uint16_t port);
  int64_t send(int64_t s, const uint8_t* data, size_t len);
  // Waits until bytes are readable (or the peer closed: 0).
  int64_t recv(int64_t s, uint8_t* out, size_t len, bool nonblock);
  int64_t close(int64_t s);
  // poll(2) on sockets: waits until one is ready as asked (POLLIN: bytes, the end of stream, or
  // a connection to accept; POLLOUT: connected and not reset) or timeout_ns passes (UINT64_MAX:
  // no limit). Sets each one's revents (POLLNVAL: no such socket; POLLHUP: not connected, or
  // reset); returns how many are ready.
  struct PollItem {
    int64_t sock = -1;
    short events = 0, revents = 0;
  };
  int64_t poll(std::vector<PollItem>& items, uint64_t timeout_ns);

 private:
  struct Chunk {
    uint64_t at_ps;
    std::vector<uint8_t> bytes;
    size_t taken = 0;
  };
  struct Sock {
    uint32_t ip = 0;
    uint16_t port = 0;
    bool bound = false, listening = false, connected = false, closed = false;
    int64_t peer = -1;
    std::deque<Chunk> rx;
    uint64_t eof_at_ps = UINT64_MAX;  // the peer closed: end of stream from then
    uint64_t tx_free_ps = 0;          // when this end's last byte has left (bandwidth)
    uint64_t rst_at_ps = UINT64_MAX;  // bytes sent to a closed peer: its reset arrives then
    std::deque<std::pair<uint64_t, int64_t>> backlog;  // (ready at, new socket)
    std::unique_ptr<sc_core::sc_event> ev;
  };
  Sock* get(int64_t s);
  uint64_t latency_ps() const { return uint64_t(p_.latency_ns * 1000); }

  MgmtParams p_;
  std::deque<Sock> socks_;  // a deque: a socket stays where it is while others are made
  std::map<std::pair<uint32_t, uint16_t>, int64_t> listeners_;
  uint16_t next_port_ = 40000;
  sc_core::sc_event listen_ev_;
};

}  // namespace rnic::exec
