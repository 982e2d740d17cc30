// The connection manager between simulated hosts: what serves librdmacm (rdma_cm) to executables
// run as simulated processes, as the kernel's iWARP connection manager serves a real card. Ids
// on event channels; a listener on an address and port; a connection request carried to it
// with its parameters (private data, inbound and outbound Read depths, the QP number); its
// accept or reject carried back; disconnects. The exchanges take the management network's
// one-way latency (host.mgmt_latency_ns) each way, as MPA's request and reply do on a TCP
// stream: a request reaches the listener one latency after rdma_connect, the initiator learns
// of the accept one latency after rdma_accept; the acceptor's connection is established at
// its accept. An address resolves after one round trip (ARP), a route at once.
//
// What one end does to the other (a request, its accept or reject, a disconnect) is a message
// that takes effect at the far end one latency after it was sent, against the far end's state
// then, so the two ends may be simulated by different processes of one run (sim/ranks.h;
// span_ranks). A request that arrives where a listener has been listening since before it is
// delivered then; one that finds none waits there for a listener (its CONNECT_REQUEST one
// latency after the listener came up) up to host.mgmt_connect_wait_us from the connect, and is
// then rejected back (status -ECONNREFUSED one latency after the wait).
//
// Every call is made from a simulated thread; only get_event blocks (in simulated time).
// The QPs on the ids are the caller's business (sim/exec/exec_process.cc moves them).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <systemc>
#include <tuple>
#include <vector>

#include "models/common/bytes.h"
#include "sim/exec/host_channel.h"
#include "sim/exec/mgmt_net.h"

namespace rnic::exec {

// What rdma_conn_param carries across: the sender's private data, Read depths and QP number.
struct CmParam {
  std::vector<uint8_t> private_data;  // at most 196 bytes (iWARP MPA's limit for rdma_cm)
  uint8_t responder_resources = 0, initiator_depth = 0;
  uint32_t qpn = 0;
};

struct CmEvent {
  int64_t id = -1;         // the id it is for (a connection request: the new id)
  int64_t listen_id = -1;  // a connection request: the listener
  int type = 0;            // enum rdma_cm_event_type
  int status = 0;
  CmParam param;       // connection request and established: the peer's
  uint64_t at_ps = 0;  // when it is delivered
};

class CmNet {
 public:
  explicit CmNet(const MgmtParams& p);
  ~CmNet();
  CmNet(const CmNet&) = delete;
  CmNet& operator=(const CmNet&) = delete;
  static constexpr size_t kMaxPrivateData = 196;
  // Over several processes (sim/ranks.h): the rank that simulates the host with address ip.
  // Every rank makes its CmNet in the same order and calls this before the run.
  void span_ranks(std::function<int(uint32_t ip)> rank_of);

  int64_t create_channel();
  void destroy_channel(int64_t ch);
  // A new id on channel ch of the host whose address is host_ip (and card MAC is mac).
  int64_t create_id(int64_t ch, uint32_t host_ip, const MacAddr& mac);
  int destroy_id(int64_t id);
  // Each returns 0 or an errno.
  int bind(int64_t id, uint32_t ip, uint16_t port);  // ip 0: the host's; port 0: any
  int listen(int64_t id);
  // dst_mac: the destination host's card (found: false answers ADDR_ERROR).
  int resolve_addr(int64_t id, uint32_t ip, uint16_t port, bool found, const MacAddr& dst_mac);
  int resolve_route(int64_t id);
  int connect(int64_t id, const CmParam& p);
  int accept(int64_t id, const CmParam& p);
  int reject(int64_t id, const std::vector<uint8_t>& private_data);
  int disconnect(int64_t id);
  // Waits for the channel's next event (ENOENT: no such channel; nonblock: EAGAIN when none
  // is there).
  int get_event(int64_t ch, CmEvent* out, bool nonblock = false);
  // poll(2)'s look at a channel at time t (MgmtNet::poll_one's contract): POLLIN when an event
  // is there to get.
  short poll_one(int64_t ch, short events, uint64_t t, uint64_t* next,
                 sc_core::sc_event_or_list& evs);

  // An id's addresses and peer.
  struct Addr {
    uint32_t ip = 0;
    uint16_t port = 0;
  };
  Addr src(int64_t id) const;
  Addr dst(int64_t id) const;
  MacAddr peer_mac(int64_t id) const;
  uint32_t request_qpn(int64_t id) const;  // a request's id: its initiator's QP number
  bool valid(int64_t id) const { return get(id) != nullptr; }

 private:
  struct Id {
    int64_t ch = -1;
    uint32_t host_ip = 0;
    MacAddr mac{};
    Addr src, dst;
    MacAddr dst_mac{};
    bool bound = false, listening = false, resolved = false;
    bool connecting = false, connected = false, disconnected = false;
    int64_t peer = -1;     // the id at the other end (a request's initiator, or its acceptor)
    uint32_t peer_ip = 0;  // and its host's address
    CmParam request;       // a request's id: what its initiator sent
    bool destroyed = false;
    uint64_t listen_ps = 0;  // a listener: since when
  };
  struct Channel {
    std::deque<CmEvent> q;  // in delivery order
    std::unique_ptr<sc_core::sc_event> ev;
    bool destroyed = false;
  };
  // What one end tells the other: it takes effect at the far end at at_ps (one latency after
  // it was sent), the same in one process and over several.
  struct Msg {
    enum Kind : uint8_t { kRequest, kAccept, kReject, kDisconnect, kCancel } kind = kRequest;
    int64_t to = -1, from = -1;
    uint32_t from_ip = 0;
    Addr src, dst;  // kRequest: the initiator's address and the one it connects to
    MacAddr mac{};  // kRequest: the initiator's card
    CmParam param;
    uint64_t sent_ps = 0, at_ps = 0;
  };
  struct Pending {  // a connection request waiting at its host for a listener
    Msg req;
    uint64_t deadline_ps;
  };
  Id* get(int64_t id);
  const Id* get(int64_t id) const;
  int64_t new_id(uint32_t ip);
  void deliver(int64_t id, CmEvent e, uint64_t at_ps);
  // The request reaches `listener`, its CONNECT_REQUEST seen at at_ps.
  void request(const Msg& req, int64_t listener, uint64_t at_ps);
  uint64_t latency_ps() const { return uint64_t(p_.latency_ns * 1000); }
  static Msg unpack(ranks::Unpacker& u);
  void post(uint32_t ip, Msg m);
  void handle(Msg m);
  void run_due();
  void wake();

  MgmtParams p_;
  std::map<int64_t, Id> ids_;  // numbered by host: the same whichever process makes them
  std::map<uint32_t, uint64_t> made_;
  std::deque<Channel> chans_;
  std::map<std::pair<uint32_t, uint16_t>, int64_t> listeners_;
  std::deque<Pending> pending_;
  std::map<uint32_t, uint16_t> next_port_;
  // Messages to take effect here, by (time, sender's address, sender, arrival).
  std::map<std::tuple<uint64_t, uint32_t, int64_t, uint64_t>, Msg> due_;
  uint64_t arrivals_ = 0;
  size_t client_ = 0;
  HostChannel hosts_;
};

}  // namespace rnic::exec
