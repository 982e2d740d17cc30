// The management network between simulated hosts: what carries the TCP sockets of executables
// run as simulated processes (their exchange of QP numbers before any RDMA), apart from the
// RDMA fabric. A stream per connection with a one-way latency and a bandwidth
// (host.mgmt_latency_ns, host.mgmt_gbps): bytes written at t are readable by the peer at
// t + latency + bytes x 8 / bandwidth, in order, after the ones before them. connect takes one
// round trip (2 x latency) from the time a listener is there; a connect to an address where
// nothing listens yet waits for a listener up to host.mgmt_connect_wait_us of simulated time (so
// the order in which processes start cannot decide a run), then fails with ECONNREFUSED one
// latency later (the reset's way back). Bytes sent to a peer that has closed are accepted and
// dropped, and its reset comes back a round trip after they were sent: sends from then fail
// with EPIPE, as TCP's do. A listener that stops resets the connections no accept took: their
// peers' next call fails with ECONNRESET (then reads end, sends fail with EPIPE), as Linux's. Each
// host has one IPv4 address, 10.0.0.0 + its index + 1 (node0 is 10.0.0.1), and its own ephemeral
// ports from 40000.
//
// Everything one end does to the other travels as a message that takes effect at the far end no
// sooner than one latency after it was sent (a connection request, its answer, bytes, the end
// of stream, a reset), so the two ends may be simulated by different processes of one run
// (sim/ranks.h; span_ranks): the far end answers for the time the message was sent, from what
// it knows of its own past, whichever process it is on.
//
// Every call is made from a simulated thread and blocks in simulated time; each returns 0 or
// a byte count, or -errno.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "sim/exec/host_channel.h"

namespace rnic::exec {

struct MgmtParams {
  double latency_ns = 15000;
  double gbps = 1;
  double connect_wait_us = 1000000;
};

class MgmtNet {
 public:
  explicit MgmtNet(const MgmtParams& p);
  ~MgmtNet();
  MgmtNet(const MgmtNet&) = delete;
  MgmtNet& operator=(const MgmtNet&) = delete;

  // Over several processes: the rank that simulates the host with address ip. Every rank makes
  // its MgmtNet in the same order and calls this before the run.
  void span_ranks(std::function<int(uint32_t ip)> rank_of);

  // dgram: a UDP socket. A datagram sent at t reaches the socket bound to its address and port
  // at t + latency + bytes x 8 / rate (behind what its sender sent before), if one is bound then
  // (and connected to its source, if connected) and holds fewer than kDgramQueueBytes; else it
  // is dropped, as no ICMP answer is modelled. connect sets the default peer at once.
  int64_t socket(uint32_t host_ip, bool dgram = false);
  static constexpr size_t kDgramQueueBytes = 212992;  // Linux's default SO_RCVBUF
  bool is_dgram(int64_t s) {
    const Sock* k = get(s);
    return k && k->dgram;
  }
  // A datagram to ip:port (ip 0: the connected peer; -EDESTADDRREQ without one); a socket not
  // bound yet takes an ephemeral port. -EMSGSIZE past 65507 bytes, -EACCES to 255.255.255.255
  // (broadcasts are not modelled).
  int64_t send_to(int64_t s, uint32_t ip, uint16_t port, const uint8_t* data, size_t len);
  // Waits for a datagram and takes it (peek: leaves it), up to len of its bytes (the rest is
  // lost, as UDP's): its length in *full, its source in *ip, *port.
  int64_t recv_from(int64_t s, uint8_t* out, size_t len, bool nonblock, bool peek, uint32_t* ip,
                    uint16_t* port, size_t* full, uint64_t limit_ps = UINT64_MAX);
  int64_t bind(int64_t s, uint32_t ip, uint16_t port);
  int64_t listen(int64_t s);
  // Waits for a connection; the new socket's id, and the peer's address. A blocking call's wait
  // ends with -EINTR at limit_ps (a signal of the caller's), as do recv's and connect's.
  int64_t accept(int64_t s, uint32_t* peer_ip, uint16_t* peer_port, bool nonblock,
                 uint64_t limit_ps = UINT64_MAX);
  // Waits for the answer; a non-blocking one returns -EINPROGRESS at once: the socket is
  // writable (poll) once connected, or reports POLLERR and POLLHUP, its error taken by error().
  // Called again meanwhile: -EALREADY; once connected: -EISCONN; once refused: that error, if
  // error() has not taken it, else a new attempt.
  int64_t connect(int64_t s, uint32_t ip, uint16_t port, bool nonblock = false,
                  uint64_t limit_ps = UINT64_MAX);
  // getsockopt's SO_ERROR: the socket's pending error (a non-blocking connect's), cleared.
  int64_t error(int64_t s);
  // getpeername(2): the peer's address and port (-ENOTCONN before the connect is done).
  int64_t peer(int64_t s, uint32_t* ip, uint16_t* port);
  int64_t send(int64_t s, const uint8_t* data, size_t len);
  // Waits until bytes are readable, at least `want` of them (or the peer closed: 0), and takes
  // up to len; with peek they stay (MSG_PEEK; MSG_WAITALL's want is len).
  int64_t recv(int64_t s, uint8_t* out, size_t len, bool nonblock, bool peek = false,
               size_t want = 1, uint64_t limit_ps = UINT64_MAX);
  int64_t close(int64_t s);
  // shutdown(2) of a connected socket (SHUT_RD, SHUT_WR, SHUT_RDWR): its write side sends the
  // end of stream as close does (sends then fail with EPIPE); its read side returns what is
  // there, then 0 at once (the peer's later bytes are still taken, as Linux's are). Of a
  // listener, as Linux's: SHUT_WR does nothing, a read side stops it listening as close does
  // (an accept, a blocked one too, answers -EINVAL; poll says POLLHUP).
  int64_t shutdown(int64_t s, int how);
  // getsockname(2): the socket's own address and port (0 and 0 before it is bound; a listener
  // bound to any address says 0, a connection the host's address).
  int64_t name(int64_t s, uint32_t* ip, uint16_t* port);
  // poll(2)'s look at one socket at time t: its revents as asked (POLLIN: bytes, the end of
  // stream, or a connection to accept; POLLOUT: connected and not reset; POLLNVAL: no such
  // socket; POLLHUP: not connected, or reset). When it is not ready, *next is lowered to when
  // it may become so on its own, and its event (notified on anything else that changes it) is
  // added to evs. The caller waits on them (sim/exec/exec_process.cc, with other descriptors).
  short poll_one(int64_t s, short events, uint64_t t, uint64_t* next,
                 sc_core::sc_event_or_list& evs);

 private:
  // What one end tells the other (Msg::kind), with the time it was sent.
  struct Msg {
    enum Kind : uint8_t { kSyn, kSynAck, kRefused, kData, kFin, kRst, kDgram } kind = kSyn;
    int64_t to = -1;    // the socket it is for (kSyn: none yet; the listener's address below)
    int64_t from = -1;  // the sending socket
    uint32_t ip = 0;    // kSyn: the address connected to; the sender's own
    uint16_t port = 0;  //   (and the sender's address and port, below)
    uint32_t from_ip = 0;
    uint16_t from_port = 0;
    uint64_t sent_ps = 0;  // when it was sent (kSynAck: when the listener took the request)
    uint64_t at_ps = 0;    // kData, kFin: when it arrives; kRefused, kRst: when they take effect
    std::vector<uint8_t> bytes;
  };
  struct Chunk {
    uint64_t at_ps;
    uint64_t sent_ps;
    int64_t from;
    std::vector<uint8_t> bytes;
    size_t taken = 0;
    uint32_t from_ip = 0;  // a datagram's source
    uint16_t from_port = 0;
  };
  struct Sock {
    uint32_t ip = 0;
    uint16_t port = 0;
    bool bound = false, listening = false, connected = false, closed = false;
    bool any = false;                       // bound to any address (INADDR_ANY)
    bool dgram = false;                     // UDP: datagrams (rx), connect sets the peer only
    size_t rx_bytes = 0;                    // UDP: the datagrams' bytes queued
    bool rd_shut = false, wr_shut = false;  // shutdown's sides
    uint64_t closed_ps = UINT64_MAX;
    int64_t peer = -1;
    uint32_t peer_ip = 0;
    uint16_t peer_port = 0;
    std::deque<Chunk> rx;
    uint64_t eof_at_ps = UINT64_MAX;  // the peer closed: end of stream from then
    uint64_t tx_free_ps = 0;          // when this end's last byte has left (bandwidth)
    // The peer's reset arrives then (bytes sent to it after it closed, or it was a listener's
    // connection no accept took); its error is the next send's, recv's or SO_ERROR's, once.
    uint64_t rst_at_ps = UINT64_MAX;
    bool rst_taken = false;
    std::deque<std::pair<uint64_t, int64_t>> backlog;  // (ready at, new socket)
    int connect_rc = 1;                                // a connect's answer (1: none yet)
    bool connecting = false;                           // a connect was made (its answer above)
    int so_error = 0;                                  // a non-blocking connect's error
    uint64_t connect_done_ps = 0;                      // and when the connect returns
    std::unique_ptr<sc_core::sc_event> ev;
  };
  // A connection request at the listener's host, not answered yet.
  struct Pending {
    Msg syn;
    uint64_t limit_ps;
  };
  Sock* get(int64_t s);
  // Whether k's connect has not returned its answer by t (a non-blocking one's is pending).
  static bool in_progress(const Sock& k, uint64_t t) {
    return k.connecting && (k.connect_rc == 1 || t < k.connect_done_ps);
  }
  // Waits (a blocking call on a socket whose non-blocking connect is pending) until it is not.
  void wait_connected(int64_t s);
  // Waits for ev or until at_ps (UINT64_MAX: no time), not past limit_ps: false once it is
  // reached (the caller answers -EINTR).
  bool wait_for(sc_core::sc_event& ev, uint64_t at_ps, uint64_t limit_ps);
  // The end of stream to k's peer, once (close, shutdown's write side).
  void send_fin(int64_t s, Sock* k);
  // Listener s stops listening (close, shutdown's read side): connection requests from now on
  // find no one, those it took and no accept has are reset (abort_connection), and a waiting
  // accept is woken.
  void stop_listening(int64_t s, Sock* k);
  // Connection s ends with a reset from this end: no end of stream; its peer's calls fail.
  void abort_connection(int64_t s);
  // The error k's peer's reset leaves by t, taken (0: none): ECONNRESET, or EPIPE if the peer's
  // end of stream came first (TCP's CLOSE_WAIT).
  static int take_reset(Sock& k, uint64_t t);
  static bool reset_pending(const Sock& k, uint64_t t) { return t >= k.rst_at_ps && !k.rst_taken; }
  uint64_t latency_ps() const { return uint64_t(p_.latency_ns * 1000); }
  // A message from socket s (k) to ip:port, sent now.
  Msg addressed(Msg::Kind kind, int64_t s, const Sock& k, uint32_t ip, uint16_t port) const;
  // A message from connected socket s (k) to its peer, sent now, taking effect at at_ps.
  Msg to_peer(Msg::Kind kind, int64_t s, const Sock& k, uint64_t at_ps) const;
  // When len bytes sent by k now reach the far end (k's line is busy until they have left).
  uint64_t arrival(Sock& k, size_t len);
  int64_t new_socket(uint32_t ip);
  static Msg unpack(ranks::Unpacker& u);
  // To the host with address ip: handled at once here, or sent to its rank.
  void post(uint32_t ip, Msg m);
  void handle(Msg m);
  // The connection request answered for the listener there at time t (its id), if any.
  void answer(const Msg& syn, uint64_t t, int64_t listener);
  // Answers what it can of the pending requests (a listener came up, a request's time came,
  // or its wait ended).
  void settle_pending();
  // The first time from t on at which a listener was there, up to now (UINT64_MAX: none).
  uint64_t first_listener_from(uint32_t ip, uint16_t port, uint64_t t, int64_t* listener) const;
  void at(uint64_t t_ps, std::function<void()> fn);
  void run_timers();

  MgmtParams p_;
  std::map<int64_t, Sock> socks_;      // a map: a socket stays where it is while others are made
  std::map<uint32_t, uint64_t> made_;  // sockets made by each host (their ids)
  std::map<uint32_t, uint16_t> next_port_;
  // Each listening address's listeners: (from, until, socket), in time order.
  struct Listened {
    uint64_t from_ps, until_ps;
    int64_t sock;
  };
  std::map<std::pair<uint32_t, uint16_t>, std::vector<Listened>> listened_;
  std::vector<Pending> pending_;
  std::multimap<uint64_t, std::function<void()>> timers_;  // the scheduler's client runs them
  size_t timer_client_ = 0;
  HostChannel hosts_;
};

}  // namespace rnic::exec
