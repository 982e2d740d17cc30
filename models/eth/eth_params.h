// Ethernet parameters: the MAC (mac.*) and the link (link.*).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/common/params.h"

namespace rnic {

struct MacConfig {
  int64_t rate_gbps = 10;      // Gb/s: 1, 10, 25, 40, 100
  int64_t mtu = 1500;          // B
  int64_t tx_cycles = 2;       // core cycles from a frame's last beat into the MAC to its first bit
  int64_t rx_cycles = 2;       // core cycles from the FCS check to the frame at the upper layer
  int64_t tx_fifo_frames = 8;  // frames the MAC's transmit FIFO holds (full: back-pressure)

  // Lists every field under "mac." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("rate_gbps", rate_gbps, "Gb/s", 1, 100, "Ethernet line rate", {1, 10, 25, 40, 100});
    p.i("mtu", mtu, "B", 576, 9000, "MTU");
    p.i("tx_cycles", tx_cycles, "cycles", 0, 1000,
        "core cycles from a frame's last beat to its first bit on the wire");
    p.i("rx_cycles", rx_cycles, "cycles", 0, 1000,
        "core cycles from the FCS check to the upper layer");
    p.i("tx_fifo_frames", tx_fifo_frames, "frames", 1, 4096, "MAC transmit FIFO depth");
  }
};

struct LinkConfig {
  int64_t prop_ns = 5;  // ns, propagation (about 1 m of cable or fibre)
  double loss = 0;      // fraction of frames lost on the wire, each direction
  double ber = 0;       // bit error rate: a frame with a flipped bit fails the receiver's FCS

  // Lists every field under "link." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("prop_ns", prop_ns, "ns", 0, 100000000, "propagation delay of an Ethernet link");
    p.r("loss", loss, "", 0, 1, "fraction of frames every link loses, each direction (random)");
    p.r("ber", ber, "", 0, 1e-3,
        "bit error rate of every link: a frame with an error fails the receiving MAC's FCS check");
  }
};

struct SwitchConfig {
  int64_t port_buffer_bytes = 256 << 10;  // B of frames an output port queues (beyond: tail drop)
  int64_t latency_ns = 300;               // ns from the frame (or its header) in to its queue
  std::string mode = "store_and_forward";
  int64_t ecn_bytes = 0;  // B of queue above which EFE DATA and ECT IPv4 frames get CE (0: never)
  bool pause = false;     // IEEE 802.3x PAUSE towards an input port holding too much
  int64_t pause_xoff_bytes = 8192;
  int64_t pause_xon_bytes = 4096;
  int64_t pause_quanta = 65535;  // a PAUSE's time, 512 bit times each (below 65535: refreshed)
  // A shared buffer (0: off, each input's fixed xoff/xon above): its pool, each input's
  // dynamic xoff threshold as a multiple of what is free in it, and each input's headroom.
  int64_t shared_buffer_bytes = 0;
  double pause_alpha = 1;
  int64_t pause_headroom_bytes = 16384;
  // A window over which an output port's utilisation is stamped into EFE DATA frames (0: no
  // stamps).
  int64_t int_window_ns = 0;

  // Lists every field under "switch." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("port_buffer_bytes", port_buffer_bytes, "B", 9000, 1 << 30,
        "frames an output port queues, in bytes (a frame that does not fit is dropped)");
    p.i("latency_ns", latency_ns, "ns", 0, 1000000,
        "forwarding latency: from the last bit in (store and forward) or the header in (cut "
        "through) to the output queue");
    p.s("mode", mode, {"store_and_forward", "cut_through"},
        "store_and_forward: a frame is checked (FCS) and forwarded once whole; cut_through: "
        "forwarded once its header is in, bad FCS and all");
    p.i("ecn_bytes", ecn_bytes, "B", 0, 1 << 30,
        "output queue above which EFE DATA frames and ECN-capable IPv4 frames are marked CE (0: "
        "no marking)");
    p.b("pause", pause,
        "802.3x PAUSE: an input port whose frames hold more than pause_xoff_bytes of the "
        "switch's queues is paused until they fall to pause_xon_bytes");
    p.i("pause_xoff_bytes", pause_xoff_bytes, "B", 64, 1 << 30,
        "bytes of an input port's frames queued that send it a PAUSE");
    p.i("pause_xon_bytes", pause_xon_bytes, "B", 0, 1 << 30,
        "bytes of an input port's frames queued below which it is resumed (with a shared "
        "buffer: this far below its threshold, its headroom empty)");
    p.i("pause_quanta", pause_quanta, "quanta", 1, 65535,
        "the time a PAUSE asks for, in quanta of 512 bit times (65535: 3.36 ms at 10 Gb/s). "
        "Below 65535 the switch sends it again every half of that while the input stays "
        "paused, so that a resume lost on the way costs at most this time");
    p.i("shared_buffer_bytes", shared_buffer_bytes, "B", 0, 1 << 30,
        "with pause: the switch's shared buffer pool (0: none; each input is paused at "
        "pause_xoff_bytes). An input's frames take the pool until its share passes "
        "pause_alpha x the pool's free bytes, which pauses it; what it sends after that takes "
        "its headroom (pause_headroom_bytes); a frame that fits neither is dropped");
    p.r("pause_alpha", pause_alpha, "", 0.01, 64,
        "with a shared buffer: an input is paused when its share of the pool passes this "
        "multiple of the pool's free bytes (a dynamic threshold)");
    p.i("pause_headroom_bytes", pause_headroom_bytes, "B", 0, 1 << 30,
        "with a shared buffer: each input's bytes outside the pool, for what arrives after its "
        "PAUSE");
    p.i("int_window_ns", int_window_ns, "ns", 0, 1000000000,
        "utilisation stamps (as HPCC's INT): an EFE DATA frame joining an output queue carries "
        "the highest of the ports' (queued bytes + bytes sent in the last this many ns) / what "
        "the port sends in that time, in its EFE header (UT, byte 15); its receiver echoes it "
        "to the sender's congestion control (0: no stamps)");
  }
};

// What a MAC port is built from: the MAC's parameters and the clock and datapath width of its
// upper side (the card's core clock).
struct EthMacParams {
  MacConfig mac;
  int64_t clk_mhz = 250;
  int64_t datapath_bytes = 16;
};

// What a point-to-point link is built from: its rate (both ports run at it) and propagation,
// and its faults: random frame loss, bit errors, and intervals in which it is down (a frame whose
// bits are on the wire at any time inside one is lost), drawn from `seed`.
struct LinkParams {
  int64_t rate_gbps = 10;
  int64_t prop_ns = 5;
  double loss = 0;
  double ber = 0;
  std::vector<std::pair<uint64_t, uint64_t>> down_ps;  // [from, to) in ps
  uint64_t seed = 1;
};

}  // namespace rnic
