// An Ethernet MAC: one port of a card (or, later, of a switch) (DESIGN.md §3.4, WIRE.md). Its
// line side joins an EthLink; its upper side takes frames without FCS and hands up frames whose
// FCS checked.
//
// Transmit: the upper layer hands over a frame at a core_clk edge (at most mac.tx_fifo_frames
// wait; send() refuses more, and the space callback tells when a slot frees). The frame streams
// through the port's FCS generator (a crc32 block, reached through its request/response
// channel) at core.datapath_bytes per cycle, one frame after another; its first bit goes on the
// wire mac.tx_cycles after its last beat, but not before the FCS is back, or when the line is
// free. On the wire it costs preamble+SFD 8 B + the frame padded to 60 B + FCS 4 B, then 12 B of
// inter-frame gap, at the link's rate (a byte is 8000 / rate ps, exact for 1, 10, 25, 40, 100
// Gb/s). A frame longer than mac.mtu + 14 B is refused and counted.
//
// Receive: the port's FCS checker (a crc32 block) takes the frame's beats as their bytes arrive,
// its last beat at the first core edge at or after the last bit (an earlier beat that would share
// a cycle with the next moves one cycle earlier); the frame reaches the upper layer mac.rx_cycles
// after the checker's result (Crc32Model::kLatency = 1 cycle for the model). A frame whose FCS
// does not match is dropped and counted (rx_fcs_errors).
//
// Latency, first bit of an L-byte frame handed over at core edge t to the peer's upper layer:
//   t + (ceil(L / datapath) - 1 + tx_cycles) cycles [+ wait for the line]
//     + (8 + max(L, 60) + 4) byte times + prop + [edge alignment] + (1 + rx_cycles) cycles.
// PAUSE (IEEE 802.3x): a PAUSE frame received (after its FCS check, never handed up) stops
// transmission for its quanta x 512 bit times from its last bit (0: resume now); a frame whose
// FCS is back while the port is paused waits, in order, until the pause ends. A frame already
// going on the wire finishes.
// Queues: the transmit FIFO (mac.tx_fifo_frames frames); the receive side has no queue (the
// upper layer takes every frame).
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <systemc>
#include <utility>
#include <vector>

#include "models/common/crc32.h"
#include "models/common/crc32_channel.h"
#include "models/common/event_queue.h"
#include "models/common/ring.h"
#include "models/common/stats.h"
#include "models/common/trace_sink.h"
#include "models/eth/eth_link.h"
#include "models/eth/eth_params.h"

namespace rnic::eth {

class EthMac : public sc_core::sc_module, public LinkEnd {
 public:
  using Frame = std::vector<uint8_t>;
  using FramePtr = std::shared_ptr<const Frame>;

  // crc32: the implementation of the port's FCS generator and checker.
  EthMac(sc_core::sc_module_name n, const EthMacParams& p, StatRegistry& stats,
         const Crc32Factory& crc32 = crc32_model_factory());

  // Upper side. send() returns false (and counts it) for an oversize frame; it must not be
  // called while the FIFO is full (can_send), nor before a link joins the port.
  bool can_send() const;
  bool send(Frame frame);
  // The upper layer shares the frame (the wire tap and the link may hold it too).
  void set_receiver(std::function<void(const FramePtr&)> deliver) { deliver_ = std::move(deliver); }
  void set_space_callback(std::function<void()> cb) { space_ = std::move(cb); }
  // Flips bit `bit` of the next frame sent, after its FCS is computed (a wire error).
  void corrupt_next(size_t bit) { corrupt_bit_ = int64_t(bit); }

  // Line side (EthLink): the link the port is joined to, which end it is, the byte time.
  void attach(EthLink* link, int end, uint64_t byte_ps) override;
  // A frame whose first bit reaches this port at first_bit_ps and last bit at last_bit_ps.
  void arrive(FramePtr frame, std::array<uint8_t, 4> fcs, uint64_t first_bit_ps,
              uint64_t last_bit_ps) override;

  uint64_t byte_ps() const { return byte_ps_; }
  uint32_t mtu() const { return uint32_t(cfg_.mac.mtu); }  // B of payload a frame may carry
  void trace(TraceSink& t) const;

  uint64_t tx_frames() const { return tx_frames_.value; }

 private:
  // The frame's FCS is back: it goes on the wire at `ready` or when the line is free.
  void transmit(FramePtr frame, uint32_t fcs, uint64_t ready, int64_t corrupt_bit);
  void resume();

  EthMacParams cfg_;
  ClockDomain clk_;
  uint64_t byte_ps_ = 800;
  EthLink* link_ = nullptr;
  int end_ = 0;
  EventQueue eq_{"eq"};
  uint64_t line_free_ps_ = 0;  // end of the previous frame's inter-frame gap
  // In a waveform: the frames handed to the link and not yet past their last bit, each (first
  // bit, end of last bit); their ends have time steps of their own (on_wire falls then, whether
  // or not anything else happens at that time, and rises again after the inter-frame gap).
  mutable bool traced_ = false;
  mutable std::deque<std::pair<uint64_t, uint64_t>> on_wire_;
  int fifo_ = 0;  // frames handed over, not yet on the wire
  int64_t corrupt_bit_ = -1;
  uint64_t fcs_gen_free_ = 0;  // first cycle the FCS generator can take a new beat
  std::unique_ptr<Crc32Channel> fcs_gen_, fcs_check_;
  std::function<void(const FramePtr&)> deliver_;
  std::function<void()> space_;
  struct Held {
    FramePtr frame;
    uint32_t fcs;
    uint64_t ready;
    int64_t corrupt_bit;
  };
  uint64_t paused_until_ps_ = 0;
  std::deque<Held> held_;  // frames waiting out a PAUSE, in order
  // Frames at the FCS generator and checker, in order (each answers in the order asked), so
  // their callbacks carry no more than the MAC.
  struct TxPending {
    FramePtr frame;
    uint64_t ready;
    int64_t corrupt_bit;
  };
  struct RxPending {
    FramePtr frame;
    std::array<uint8_t, 4> fcs;
  };
  GrowRing<TxPending> tx_pending_;
  GrowRing<RxPending> rx_pending_;
  std::vector<uint64_t> cycles_;  // a request's beat cycles (read during the request only)
  Counter &tx_frames_, &tx_bytes_, &tx_oversize_, &rx_frames_, &rx_fcs_errors_, &rx_pause_;
};

}  // namespace rnic::eth
