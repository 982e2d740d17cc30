// A full-duplex Ethernet link with a MAC at each end (DESIGN.md §3.4, WIRE.md).
//
// Transmit (side s): the upper layer hands over a frame without FCS at a core_clk edge (at most
// mac.tx_fifo_frames wait; send() refuses more, and space() tells when a slot frees). The frame
// streams through its FCS generator (a crc32 block, reached through its request/response
// channel) at core.datapath_bytes per cycle, one frame after another; its first bit goes on the
// wire mac.tx_cycles after its last beat, but not before the FCS is back, or when the line is
// free. On the wire it costs
// preamble+SFD 8 B + the frame padded to 60 B + FCS 4 B, then 12 B of inter-frame gap, at the
// line rate (mac.rate_gbps: a byte is 8000 / rate ps, exact for 1, 10, 25, 40, 100 Gb/s).
// A frame longer than mac.mtu + 14 B is refused and counted.
//
// Receive (the other side): the last bit arrives link.prop_ns after it left; the receiving
// MAC's FCS checker (a crc32 block) takes the frame's beats as their bytes arrive, its last
// beat at the first core edge at or after the last bit (an earlier beat that would share a
// cycle with the next moves one cycle earlier), and the frame reaches the upper layer
// mac.rx_cycles after the checker's result (Crc32Model::kLatency = 1 cycle for the model). A frame
// whose FCS does not match is dropped and counted (rx_fcs_errors).
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
#include "models/common/crc32_channel.h"
#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/common/trace_sink.h"
#include "models/eth/eth_params.h"

namespace rnic::eth {

class EthLink : public sc_core::sc_module {
 public:
  using Frame = std::vector<uint8_t>;

  // crc32: the implementation of the four crc32 blocks (each side's FCS generator and checker).
  EthLink(sc_core::sc_module_name n, const EthLinkParams& p, StatRegistry& stats,
          const Crc32Factory& crc32 = crc32_model_factory());

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
    uint64_t fcs_gen_free = 0;  // first cycle the FCS generator can take a new beat
    std::unique_ptr<Crc32Channel> fcs_gen, fcs_check;
    Counter *tx_frames, *tx_bytes, *tx_oversize, *rx_frames, *rx_fcs_errors;
  };
  using FramePtr = std::shared_ptr<const Frame>;
  // The frame's FCS is back: it goes on the wire at `ready` or when the line is free.
  void transmit(int s, FramePtr frame, uint32_t fcs, uint64_t ready, int64_t corrupt_bit);

  EthLinkParams cfg_;
  ClockDomain clk_;
  uint64_t byte_ps_;
  EventQueue eq_{"eq"};
  Side side_[2];
  std::function<void(uint64_t, const Frame&, const uint8_t*)> tap_;
};

}  // namespace rnic::eth
