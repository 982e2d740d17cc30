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
//   kept bad). Ties: frames that reach a port's queue at the same time join it in input-port
//   order, after any frame that leaves a queue at that time. A frame leaves the queue as its
//   first bit goes on the wire: back to back, preamble + frame + FCS + inter-frame gap at the
//   link's rate, shown to the link's wire tap.
// Utilisation stamps (switch.int_window_ns > 0, as HPCC's in-band telemetry): an EFE DATA frame
//   that joins an output queue carries in its EFE header (UT, byte 15) the highest utilisation
//   of the ports it went through: (the port's queued bytes + the bytes it sent in the last
//   window, preamble to gap) / the bytes it sends in a window, in 1/64ths up to 255 (its FCS
//   follows, as for CE). The bytes sent are a running estimate: each frame sent adds its bytes,
//   and the estimate decays linearly, to nothing over a window without frames. A stamp, as a
//   CE mark, takes no time: latency and queue bound are those above.
// PAUSE (switch.pause): the frames each input port brought in are counted while they wait in any
//   output queue; above switch.pause_xoff_bytes that port is sent a PAUSE of
//   switch.pause_quanta (ahead of the frames in its output queue and behind the PAUSE frames
//   still there; it goes even while that port is paused itself; below the longest it is sent
//   again every half of its time while the port stays paused), again if its frames still grow
//   by half that (the PAUSE was lost), and once they fall to switch.pause_xon_bytes a PAUSE of
//   0 (resume). Lossless if every
//   port's xoff plus what is in flight after the PAUSE (a frame on the wire, the two the EFE keeps
//   in its MAC) fits the buffers. A PAUSE received on a port holds that port's output from its last
//   bit for its time; each PAUSE restarts that time, so a resume (0 quanta) ends it at once.
//   With switch.shared_buffer_bytes the thresholds come from a shared pool instead: an input's
//   frames take the pool until its share passes pause_alpha x the pool's free bytes (a dynamic
//   threshold: the fewer inputs are busy, the more each may take), which pauses it; what it
//   sends after its PAUSE takes its own headroom (switch.pause_headroom_bytes), and a frame
//   that fits neither is dropped (ingress_drops). It is resumed once its headroom is empty and
//   its share is pause_xon_bytes below the threshold.
// A frame received is counted (rx_frames, and why it was dropped) at its last bit, or when it
//   joins its output queue; nothing the switch does depends on when the link handed it over.
// Statistics per port (group <switch>.p<i>): frames in and out, FCS drops, tail drops, CE marks,
//   the largest queue, and the queue in bytes over time.
#pragma once

#include <algorithm>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <systemc>
#include <unordered_map>
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
  void set_route(const Mac& dst, std::vector<int> out) { routes_[mac_value(dst)] = std::move(out); }
  // The port a frame from src to dst leaves by (-1: no route).
  int route(const Mac& src, const Mac& dst) const;
  uint64_t queued_bytes(int port) const { return ports_[size_t(port)]->queued; }
  // PAUSE on or off from now on (an experiment's sweep compares modes on one system). Turning it
  // on where the switch promised to send none (promise_no_pause) throws std::logic_error.
  void set_pause(bool on);
  // A run over several processes counts on this switch never sending a PAUSE of its own: the
  // switch at the far end of a link to another process holds its frames for its latency
  // (sim/partition.h, far_hold_ps).
  void promise_no_pause() { no_pause_ = true; }
  // Utilisation stamps from now on over this window (0: none), and the window now.
  void set_int_window(int64_t ns);
  int64_t int_window_ns() const { return cfg_.int_window_ns; }
  // Each port follows when the frames on their way to it will join its queue, so that its
  // next_start (eth::LinkEnd) is its own rather than bounded by the switch's next action of any
  // kind. Runs over several processes ask it of switches with a link to another process.
  void track_next_starts() { track_ = true; }
  // Frames from some input may be handed to it up to `ps` after their last bit, though never
  // after they join a queue (a run over several processes hands a frame from another process
  // over at a window's end, which may then come after its last bit): a port's next_start counts
  // on no frame's last bit before E - ps.
  void take_inputs_late(uint64_t ps) { late_ps_ = std::max(late_ps_, ps); }

 private:
  struct Port : LinkEnd {
    EthSwitch* sw = nullptr;
    int index = 0;
    EthLink* link = nullptr;
    int end = 0;
    uint64_t byte_ps = 800;
    struct Entry {
      FramePtr frame;
      std::array<uint8_t, 4> fcs;
      int from = -1;          // the input port (-1: a PAUSE of the switch's own)
      bool headroom = false;  // shared buffer: charged to the input's headroom, not the pool
    };
    std::deque<Entry> q;
    uint64_t in_bytes = 0;           // bytes this port brought in, waiting in output queues
    uint64_t in_shared = 0;          // ... of them in the shared pool (shared buffer)
    uint64_t in_headroom = 0;        // ... and in its headroom
    bool xoff = false;               // this port was sent a PAUSE
    uint64_t pause_level = 0;        // ... when its frames held this many bytes
    uint64_t xoff_gen = 0;           // ... counted per pause: a refresh of an ended one is dropped
    uint64_t paused_until = 0;       // a PAUSE received holds this output until then
    uint64_t queued = 0;             // bytes in q
    bool starting = false;           // the head's first bit is scheduled
    uint32_t start_gen = 0;          // ... by the newest start_next (a resume makes it again)
    uint64_t line_free_ps = 0;       // end of the previous frame's inter-frame gap
    std::multiset<uint64_t> coming;  // track_next_starts: when frames on their way join q
    double sent_est = 0;             // utilisation stamps: bytes sent in about the last window
    uint64_t sent_est_ps = 0;        // ... as of this time
    Counter *rx_frames, *tx_frames, *fcs_drops, *tail_drops, *ce_marked, *no_route, *queue_max,
        *pause_tx, *pause_rx;
    Counter* ingress_drops = nullptr;  // shared buffer only
    Counter* int_stamped = nullptr;    // utilisation stamps only
    void attach(EthLink* l, int e, uint64_t b) override {
      link = l;
      end = e;
      byte_ps = b;
    }
    void arrive(FramePtr frame, std::array<uint8_t, 4> fcs, uint64_t first_bit_ps,
                uint64_t last_bit_ps) override;
    NextStart next_start() const override { return sw->next_start(*this); }
  };
  LinkEnd::NextStart next_start(const Port& p) const;
  bool track_ = false;     // track_next_starts
  bool no_pause_ = false;  // promise_no_pause
  uint64_t late_ps_ = 0;   // take_inputs_late
  void enqueue(int out, int from, LinkEnd::FramePtr frame, std::array<uint8_t, 4> fcs);
  void send_pause(Port& p, uint16_t quanta);
  void pause_input(Port& in);
  void refresh_pause(Port& in, uint64_t gen);
  void start_next(Port& p);
  // Utilisation stamps: the port's estimate of the bytes it sent in the last window, at now.
  double sent_in_window(const Port& p, uint64_t now) const;
  // Shared buffer: the input's dynamic threshold now (pause_alpha x the pool's free bytes).
  uint64_t threshold() const {
    return uint64_t(cfg_.pause_alpha * double(uint64_t(cfg_.shared_buffer_bytes) - shared_used_));
  }
  uint64_t shared_used_ = 0;  // bytes in the shared pool
  StatRegistry* stats_;
  void add_int_counter(Port& p);

  SwitchConfig cfg_;
  bool cut_through_;
  Crc32 crc_;
  Mac mac_{0x02, 0xFE, 0, 0, 0, 0};  // the source of its PAUSE frames
  EventQueue eq_{"eq"};
  std::vector<std::unique_ptr<Port>> ports_;
  // By destination MAC as a 48-bit number (mac_value): a hash lookup per frame, whatever the
  // host count.
  std::unordered_map<uint64_t, std::vector<int>> routes_;
};

}  // namespace rnic::eth
