// An Ethernet switch (DESIGN.md §3.4): N ports, output-queued, static forwarding.
//
// Ingress: a frame reaching port i is looked up by its destination MAC in the forwarding table
//   (set_route, computed from the topology by the system that builds the switch); where several
//   ports lead there, the frame's (source MAC, destination MAC) pair picks one by hash, so one
//   EFE channel's frames never overtake each other. Store and forward (switch.mode): the frame is
//   checked once whole (a bad FCS is dropped and counted) and reaches its output queue
//   switch.latency_ns after its last bit; cut through: switch.latency_ns after its 14-byte header,
//   bad FCS or not (the next MAC drops it), or after its last bit when the output port is faster
//   than the input. A frame for an unknown MAC is dropped and counted.
// Output queue: per port switch.port_buffer_bytes of frames; one that does not fit is dropped
//   (tail drop) and counted. With switch.ecn_bytes > 0, an EFE DATA frame that joins a queue
//   holding at least that many bytes gets CE set in its EFE header (its FCS recomputed, a bad one
//   kept bad). A frame leaves the queue as its first bit goes on the wire: back to back, preamble
//   + frame + FCS + inter-frame gap at the link's rate, shown to the link's wire tap.
// Statistics per port (group <switch>.p<i>): frames in and out, FCS drops, tail drops, CE marks,
//   the largest queue, and the queue in bytes over time.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/crc32.h"
#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/eth/eth_link.h"
#include "models/eth/eth_params.h"
#include "models/eth/ethernet.h"

namespace rnic::eth {

class EthSwitch : public sc_core::sc_module {
 public:
  EthSwitch(sc_core::sc_module_name n, int ports, const SwitchConfig& cfg, StatRegistry& stats);

  int ports() const { return int(ports_.size()); }
  LinkEnd& port(int i) { return *ports_[size_t(i)]; }
  // Frames for `dst` leave by one of `out` (chosen per source/destination pair).
  void set_route(const Mac& dst, std::vector<int> out) { routes_[dst] = std::move(out); }
  // The port a frame from src to dst leaves by (-1: no route).
  int route(const Mac& src, const Mac& dst) const;
  uint64_t queued_bytes(int port) const { return ports_[size_t(port)]->queued; }

 private:
  struct Port : LinkEnd {
    EthSwitch* sw = nullptr;
    int index = 0;
    EthLink* link = nullptr;
    int end = 0;
    uint64_t byte_ps = 800;
    std::deque<std::pair<FramePtr, std::array<uint8_t, 4>>> q;
    uint64_t queued = 0;        // bytes in q
    bool starting = false;      // the head's first bit is scheduled
    uint64_t line_free_ps = 0;  // end of the previous frame's inter-frame gap
    Counter *rx_frames, *tx_frames, *fcs_drops, *tail_drops, *ce_marked, *no_route, *queue_max;
    void attach(EthLink* l, int e, uint64_t b) override {
      link = l;
      end = e;
      byte_ps = b;
    }
    void arrive(FramePtr frame, std::array<uint8_t, 4> fcs, uint64_t first_bit_ps,
                uint64_t last_bit_ps) override;
  };
  void enqueue(int out, LinkEnd::FramePtr frame, std::array<uint8_t, 4> fcs);
  void start_next(Port& p);

  SwitchConfig cfg_;
  bool cut_through_;
  Crc32 crc_;
  EventQueue eq_{"eq"};
  std::vector<std::unique_ptr<Port>> ports_;
  std::map<Mac, std::vector<int>> routes_;
};

}  // namespace rnic::eth
