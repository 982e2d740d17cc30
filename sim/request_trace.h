// Every work request's way through the system, from the probes of each host (the verbs
// library's Driver::probe), each card (RnicCore::probe), each host's root complex (the card's
// writes arriving in memory) and each link (the frames on the wire): the stages of a WR from its
// post to the poll that sees it, on the sender and at the peer, and each segment's frames.
// `--timeline FILE` writes them as Chrome trace-event JSON (request_timeline.cc); latency
// workloads' `--breakdown` takes one iteration apart from them (breakdown_of). Attaching changes
// no simulated result: the probes only record. Over several processes (sim/ranks.h) each rank
// keeps what its own hosts' and links' probes saw, and gather() hands it all to rank 0.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/common/bytes.h"
#include "sim/ranks.h"

namespace rnic {

class Cluster;

class RequestTrace {
 public:
  static constexpr uint64_t kNone = UINT64_MAX;

  struct Frame {
    int link = 0, dir = 0;  // the link and the end that sent it (0: a, 1: b)
    uint64_t first = 0;     // its first bit on the wire
    uint64_t last = 0;      // its last bit at the far end
  };
  // A segment the SQ engine made: a WR's (or a Read Response's) payload and header.
  struct Seg {
    uint32_t wr = UINT32_MAX;  // its request (UINT32_MAX: none known)
    int node = 0;
    uint32_t qpn = 0;
    bool response = false;  // a Read Response segment (of the request `wr` names)
    uint64_t issue = kNone, fetch = kNone, dma = kNone, data = kNone, ready = kNone, sent = kNone;
    std::vector<Frame> frames;  // every transmission, retransmissions too
    int rx_node = -1;
    uint32_t rx_qpn = 0;
    uint64_t rx_start = kNone, rx_checked = kNone, rx_place = kNone, in_mem = kNone;
    uint64_t place_addr = 0;  // the host address of its placement's last byte
  };
  // A WR posted to an SQ.
  struct Wr {
    int node = 0;
    uint32_t qpn = 0;
    uint32_t index = 0;  // its SQ index (the CQE's WQE index)
    uint64_t post = kNone, posted = kNone, doorbell = kNone, queued = kNone;
    std::vector<uint32_t> segs;  // its segments, and for a Read the responder's
    uint64_t cqe = kNone, cqe_mem = kNone, polled = kNone;  // its own completion
    int peer = -1;  // the host whose memory or receive completion shows it
    uint64_t rcqe = kNone, rcqe_mem = kNone, rpolled = kNone;  // the peer's receive completion
    uint64_t seen = kNone;  // the peer's busy wait on memory saw its last byte
  };

  void attach(Cluster& cl);
  // Over several processes, a collective call once the run has ended (every rank makes it):
  // rank 0 takes every rank's probe records, and takes them in the order of the simulated times
  // they were made at (each rank's in its own order; a cross-rank cause is at least a link's
  // delay before its effect), as one process takes them as they come. The other ranks' traces
  // are then empty. One process: nothing to do. A second call does nothing.
  void gather();

  const std::vector<Wr>& wrs() const { return wrs_; }
  const std::vector<Seg>& segs() const { return segs_; }
  // The WRs of node's QP qpn in SQ order.
  std::vector<uint32_t> wrs_of(int node, uint32_t qpn) const;

  // A WR taken apart, each stage from one probe point to the next, from its post to the time
  // that ends a latency sample: a Write's peer seeing its last byte, a Send's peer polling its
  // receive, a Read's own poll of its CQE. The stages add up to exactly that time. Empty when
  // a point is missing (the WR had not ended, or was not of those kinds).
  struct Stage {
    const char* name;
    uint64_t ps;
  };
  std::vector<Stage> stages(uint32_t wr) const;
  uint64_t end_of(uint32_t wr) const;  // the time the stages end at (kNone: not ended)

  // Chrome trace-event JSON of [t0_ps, t1_ps] (request_timeline.cc). Returns "" or why the file
  // could not be written.
  std::string write_timeline(const std::string& path, uint64_t t0_ps, uint64_t t1_ps) const;

  // Names used by the timeline and the breakdown.
  std::vector<std::string> host_names, link_names;
  std::vector<std::array<std::string, 2>> link_ends;  // per link, the names of its ends

 private:
  struct NodeState {
    std::unordered_map<uint64_t, uint32_t> wr_at;       // qpn << 32 | SQ index -> WR
    std::unordered_map<uint64_t, uint32_t> seg_at;      // segment number -> Seg
    std::unordered_map<uint64_t, uint32_t> recv_at;     // qpn << 32 | RQ index -> WR (receives)
    std::unordered_map<uint32_t, uint64_t> post_first;  // qpn -> the SQ index of an open post
    std::unordered_map<uint32_t, uint64_t> post_t;      // qpn -> its entry time
    std::unordered_map<uint32_t, std::vector<uint32_t>> no_doorbell;  // qpn -> posted WRs
    std::unordered_map<uint32_t, uint32_t> last_checked;  // qpn -> the last segment checked
    std::map<uint64_t, uint32_t> place_pending;  // placement's last byte -> Seg (not yet in memory)
    std::map<uint64_t, std::pair<uint32_t, bool>> cqe_pending;  // CQE address -> (WR, receive)
    std::unordered_map<uint64_t, uint32_t> placed;   // last byte -> the last Seg in memory there
    std::unordered_map<uint64_t, uint32_t> read_at;  // qpn << 32 | MSN -> a Read's WR (responder)
    uint64_t mac32 = 0;                              // its MAC's part of a frame's tag
  };
  // What a frame on the wire tells: the segment it carries (its EFE SEQ | its source MAC's
  // tag), its last bit at the far end, and for a Read Request the responder and the MSN its Read
  // Response segments answer.
  struct FrameSeen {
    uint64_t tag = 0;
    uint64_t last = 0;
    uint8_t read_request = 0;
    uint64_t dst = 0;  // the destination MAC's tag
    uint32_t dst_qpn = 0, msn = 0;
  };
  static bool frame_seen(const std::vector<uint8_t>& f, uint64_t t, uint64_t byte_ps,
                         uint64_t prop_ps, FrameSeen* out);
  void on_frame_seen(int link, int end, uint64_t t, const FrameSeen& fs);
  uint32_t wr_for(int node, uint32_t qpn, uint32_t index);
  Seg* seg_by_frame(uint64_t tag);
  void on_core(int node, const struct ProbeEvent& e);
  void on_host(int node, int point, uint32_t qpn, uint64_t tag, uint64_t aux, uint64_t t);
  void on_mem(int node, uint64_t addr, uint32_t len, uint64_t t);

  std::vector<Wr> wrs_;
  std::vector<Seg> segs_;
  std::vector<NodeState> nodes_;
  std::unordered_map<uint64_t, uint32_t> frame_at_;  // EFE SEQ | source MAC's low 32 << 32
  std::unordered_map<uint64_t, int> node_of_mac_;    // a MAC's part of a tag -> host
  // Over several processes: this rank's probe records until gather(), each its simulated time,
  // its kind and the probe's arguments.
  enum class Rec : uint8_t { kCore, kHost, kMem, kFrame };
  bool recording_ = false;
  ranks::Packer log_;
};

}  // namespace rnic
