// A full-duplex Ethernet link with a MAC at each end (DESIGN.md §3.4, WIRE.md).
//
// Transmit (side s): the upper layer hands over a frame without FCS at a core_clk edge (at most
// mac.tx_fifo_frames wait; send() refuses more, and space() tells when a slot frees). The frame
// streams through the crc32 block at core.datapath_bytes per cycle; its first bit goes on the
// wire mac.tx_cycles after its last beat, or when the line is free. On the wire it costs
// preamble+SFD 8 B + the frame padded to 60 B + FCS 4 B, then 12 B of inter-frame gap, at the
// line rate (mac.rate_gbps: a byte is 8000 / rate ps, exact for 1, 10, 25, 40, 100 Gb/s).
// A frame longer than mac.mtu + 14 B is refused and counted.
//
// Receive (the other side): the last bit arrives link.prop_ns after it left; the receiving
// MAC's crc32 check completes Crc32Model::kLatency cycles (at the next core edge) after that,
// and the frame reaches the upper layer mac.rx_cycles later. A frame whose FCS does not match
// is dropped and counted (rx_fcs_errors).
//
// Latency, first bit of an L-byte frame handed over at core edge t to the peer's upper layer:
//   t + (ceil(L / datapath) - 1 + tx_cycles) cycles [+ wait for the line]
//     + (8 + max(L, 60) + 4) byte times + prop + [edge alignment] + (1 + rx_cycles) cycles.
// Queues: the transmit FIFO (mac.tx_fifo_frames frames); the receive side has no queue (the
// upper layer takes every frame).
#pragma once

#include <array>
#include <functional>
#include <systemc>
#include <vector>

#include "models/common/crc32.h"
#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/common/trace_sink.h"
#include "models/eth/eth_params.h"

namespace rnic::eth {

class EthLink : public sc_core::sc_module {
 public:
  using Frame = std::vector<uint8_t>;

  EthLink(sc_core::sc_module_name n, const EthLinkParams& p, StatRegistry& stats);

  // Side s's upper layer. send() returns false (and counts it) for an oversize frame; it must
  // not be called while the FIFO is full (can_send).
  bool can_send(int s) const;
  bool send(int s, Frame frame);
  void set_receiver(int s, std::function<void(Frame&&)> deliver) {
    side_[s].deliver = std::move(deliver);
  }
  void set_space_callback(int s, std::function<void()> cb) { side_[s].space = std::move(cb); }
  // Every frame as it goes on the wire (time of its first bit, the frame, its FCS): captures.
  void set_wire_tap(std::function<void(uint64_t, const Frame&, const uint8_t*)> tap) {
    tap_ = std::move(tap);
  }
  // Flips bit `bit` of the next frame side s sends, after its FCS is computed (a wire error).
  void corrupt_next(int s, size_t bit) { side_[s].corrupt_bit = int64_t(bit); }

  uint64_t byte_ps() const { return byte_ps_; }
  void trace(TraceSink& t) const;

 private:
  struct Side {
    uint64_t line_free_ps = 0;  // end of the previous frame's inter-frame gap
    uint64_t on_wire_until_ps = 0;
    int fifo = 0;  // frames handed over, not yet on the wire
    int64_t corrupt_bit = -1;
    std::function<void(Frame&&)> deliver;
    std::function<void()> space;
    Counter *tx_frames, *tx_bytes, *tx_oversize, *rx_frames, *rx_fcs_errors;
  };

  EthLinkParams cfg_;
  ClockDomain clk_;
  uint64_t byte_ps_;
  Crc32Model crc_;
  EventQueue eq_{"eq"};
  Side side_[2];
  std::function<void(uint64_t, const Frame&, const uint8_t*)> tap_;
};

}  // namespace rnic::eth
