// Ethernet parameters: the MAC (mac.*) and the link (link.*).
#pragma once

#include <cstdint>
#include <string>

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

  // Lists every field under "link." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("prop_ns", prop_ns, "ns", 0, 100000000, "propagation delay of an Ethernet link");
  }
};

// What a MAC port is built from: the MAC's parameters and the clock and datapath width of its
// upper side (the card's core clock).
struct EthMacParams {
  MacConfig mac;
  int64_t clk_mhz = 250;
  int64_t datapath_bytes = 16;
};

// What a point-to-point link is built from: its rate (both ports run at it) and propagation.
struct LinkParams {
  int64_t rate_gbps = 10;
  int64_t prop_ns = 5;
};

}  // namespace rnic
