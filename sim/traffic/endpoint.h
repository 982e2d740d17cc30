// Verbs-level building blocks of traffic generators and system tests: an out-of-band channel
// (what rdma_cm or a TCP side channel is to a real program) and an endpoint (device, PD, CQ,
// QPs, one registered buffer) that connects its QPs as an rdma-core program does.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <systemc>
#include <vector>

#include "models/common/bytes.h"
#include "models/host/verbs/verbs.h"

namespace rnic::traffic {

// What each side tells the other before connecting.
struct PeerInfo {
  ibv_gid gid{};
  std::vector<uint32_t> qpns;
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint64_t len = 0;
  // The inbound RDMA Reads each of its QPs takes (its IRD): the requester keeps its ORD within
  // it, as MPA's connection setup exchanges them.
  uint32_t ird = 0;
};

// A blocking exchange between simulated processes (keyed by the receiver) over the management
// network, as a TCP side channel carries it: a put at t from a host reaches the receiver's queue
// at t + host.mgmt_latency_ns + its bytes at host.mgmt_gbps, behind what that host sent before
// (the board's model, rnic_oob_put). The queue is in arrival order; puts that arrive at the same
// time are in the order of their senders' MACs, then of their puts (so no process order decides
// it). Each key has an event of its own, so a put wakes only the process waiting on its key.
class Oob {
 public:
  // Over several processes (sim/ranks.h) every put goes to every rank, so a get finds it
  // whichever rank the receiver's host is on; every rank makes its Oobs in the same order.
  Oob();
  ~Oob();
  Oob(const Oob&) = delete;
  Oob& operator=(const Oob&) = delete;
  // From a program's thread (its host is the sender).
  void put(int64_t to, PeerInfo info);
  // Waits until a put to `me` has arrived and takes the first.
  PeerInfo get(int64_t me);
  // The bytes a PeerInfo takes on the wire.
  static size_t wire_bytes(const PeerInfo& i) { return sizeof(i.gid) + 4 * i.qpns.size() + 28; }

 private:
  struct Entry {
    uint64_t at_ps;
    MacAddr from;
    PeerInfo info;
  };
  struct Box {
    std::deque<Entry> q;
    sc_core::sc_event ev;
  };
  void insert(int64_t to, Entry e);
  std::map<int64_t, Box> box_;  // nodes never move: a waiter keeps its Box&
  uint32_t channel_ = UINT32_MAX;
};

struct EndpointConfig {
  size_t buf_bytes = 1 << 20;
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int qp_access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;  // what connect() grants
  int qps = 1;
  uint32_t send_depth = 128, recv_depth = 128;
  uint32_t sge = 1;
  uint32_t max_inline = 0;  // ibv_qp_cap.max_inline_data (IBV_SEND_INLINE up to it)
  uint32_t srq_depth = 0;   // > 0: the QPs take their receives from one SRQ of this depth
  int cqe = 4096;
  bool comp_channel = false;  // the CQ reports its events through a completion channel
  bool lazy = false;          // the buffer's pages not yet touched (rnic_malloc_lazy)
  // QP attributes set by connect(): path_mtu 0 leaves it unset (the link's MTU alone caps the
  // segments: the largest, jumbo frames included); timeout and retry_cnt give the Read Response
  // timer (perftest's defaults, 4.096 us x 2^14 x 8 = 537 ms; timeout 0: none).
  ibv_mtu path_mtu = ibv_mtu(0);
  uint8_t timeout = 14, retry_cnt = 7;
};

struct Endpoint {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  ibv_srq* srq = nullptr;  // cfg.srq_depth > 0
  std::vector<ibv_qp*> qps;
  void* buf = nullptr;
  ibv_mr* mr = nullptr;
  EndpointConfig cfg;

  // Opens the first device and creates everything; throws std::runtime_error on failure.
  void open(const EndpointConfig& c);
  PeerInfo info() const;
  // RESET -> INIT -> RTR -> RTS for every QP, towards the peer's QPs in order.
  void connect(const PeerInfo& peer);
  void close();
  uint64_t addr() const { return reinterpret_cast<uint64_t>(buf); }
};

// RESET -> INIT -> RTR -> RTS for one QP towards the peer's i-th QP (Endpoint::connect's step),
// or up to RTR only (a responder that never sends, as perftest's bandwidth servers leave it).
void connect_qp(ibv_qp* qp, const PeerInfo& peer, size_t i, const EndpointConfig& cfg,
                ibv_qp_state upto = IBV_QPS_RTS);

// Opens `e` with `c` as side `me` of a set-up and connects it to side `peer`'s endpoint (by
// default 1 - me), exchanging their PeerInfo through boxes me and peer of `oob`; returns the
// peer's.
PeerInfo open_connected(Endpoint& e, int me, const EndpointConfig& c, Oob& oob, int peer = -1);

// Posts one signaled RDMA Read or Write of [addr, addr + len) (lkey) to raddr (rkey) on qp;
// returns ibv_post_send's result.
int post_rdma(ibv_qp* qp, ibv_wr_opcode op, uint64_t id, uint64_t addr, uint32_t len, uint32_t lkey,
              uint64_t raddr, uint32_t rkey);

// Takes the channels between e's card and the peer's past their slow start (the EFE's, both
// ways) before an experiment times anything: kWarmUpReads RDMA Reads of `bytes` from the peer's
// buffer into e's, one at a time on e's first QP. Each Read Request asks for an ACK at once and
// each response is a round trip of data, so each doubles both channels' rates. False if one
// fails. The peer's buffer is only read.
constexpr int kWarmUpReads = 8;
bool warm_up(Endpoint& e, const PeerInfo& peer, uint32_t bytes);

}  // namespace rnic::traffic
