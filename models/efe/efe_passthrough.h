// The EFE's place between the RNIC Core and the MAC (DESIGN.md §3.4), filled for now by a
// lossless pass-through: one channel per peer MAC with SEQ/ACK numbering as WIRE.md frames
// them, no retransmit buffer, no congestion control. The EFE issue replaces the engine behind
// this interface; the core does not change.
//
// Transmit: a DDP segment handed over by the core (send) becomes a DATA frame: Ethernet
//   header, EFE header (SEQ = the channel's next, ACK = the next SEQ the core has validated
//   from that peer, TS = now in ns), the segment. It reaches the MAC kTxCycles core cycles
//   later. Standalone ACK frames go ahead of queued DATA frames.
// Receive: a frame from the MAC is parsed kRxCycles cycles after it arrives. A DATA frame in
//   sequence gives the core its segment (on_segment), then its ACK field (on_ack), in that
//   order, so the core sees a Terminate before the acknowledgement behind it. ACK frames give
//   on_ack. Frames not for this MAC, not EFE, malformed or out of sequence are dropped and
//   counted.
// Acknowledgement: the core calls validated() for each segment once its checks are done, in
//   order; when the segment asked for it (AR), an ACK is owed to its sender. A DATA frame to that
//   peer carries it (the ACK field is filled as the frame goes to the MAC); a standalone ACK
//   frame is sent only when no DATA frame to that peer is queued or in the kTxCycles pipeline.
//   So an acknowledgement never overtakes a DATA frame handed over before it (a Terminate stays
//   ahead of the ACK of the segment it rejects).
// Queues: kTxQueueFrames DATA frames wait here (can_send() is false when full; on_space fires
//   when a slot frees); at most one owed ACK per peer.
// Fault injection (tests): tx_fault, when set, may rewrite each DATA frame's DDP bytes as the
//   core hands them over (a corrupt but correctly framed segment from a faulty peer).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <systemc>
#include <vector>

#include "models/common/event_queue.h"
#include "models/efe/efe_header.h"
#include "models/eth/eth_mac.h"

namespace rnic::efe {

class EfePassThrough : public sc_core::sc_module {
 public:
  static constexpr uint64_t kTxCycles = 1, kRxCycles = 1;
  static constexpr size_t kTxQueueFrames = 2;

  struct RxSegment {
    eth::Mac src{};
    uint32_t seq = 0;
    uint32_t dst_qpn = 0;
    bool ar = false;
    bool rq = false;  // dst_qpn is the QPN this card addressed at src (a reset; efe_header.h)
    std::vector<uint8_t> ddp;
  };

  EfePassThrough(sc_core::sc_module_name n, eth::EthMac& port, eth::Mac mac, int64_t clk_mhz,
                 StatRegistry& stats);

  const eth::Mac& mac() const { return mac_; }
  bool can_send() const { return data_q_.size() + pending_ < kTxQueueFrames; }
  // Returns the SEQ the frame carries. rq: dst_qpn is reflected (efe_header.h).
  uint32_t send(const eth::Mac& dst, uint32_t dst_qpn, std::vector<uint8_t> ddp, bool ar,
                bool rq = false);
  void validated(const eth::Mac& peer, uint32_t seq, bool ar);

  std::function<void(RxSegment&&)> on_segment;
  std::function<void(const eth::Mac& peer, uint32_t ack)> on_ack;
  std::function<void()> on_space;
  std::function<void(std::vector<uint8_t>& ddp)> tx_fault;

 private:
  struct Channel {
    uint32_t tx_seq = 0;        // next SEQ to send
    uint32_t rx_expected = 0;   // next SEQ expected on the wire
    uint32_t rx_validated = 0;  // next SEQ not yet validated by the core (the ACK field)
    uint32_t data_waiting = 0;  // DATA frames to this peer in the pipeline or queued
    bool ack_owed = false;      // an AR segment validated, its ACK not yet sent
  };
  void receive(eth::EthMac::Frame&& f);
  void pump();
  uint32_t ts_now() const { return uint32_t(now_ps() / 1000); }
  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }

  eth::EthMac& port_;
  eth::Mac mac_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
  std::map<eth::Mac, Channel> ch_;
  struct Out {
    eth::Mac dst;
    Header h;
    std::vector<uint8_t> payload;
  };
  std::deque<Out> data_q_;
  std::deque<eth::Mac> ack_q_;  // peers owed a standalone ACK, in order
  size_t pending_ = 0;          // DATA frames inside the kTxCycles pipeline
  Counter &tx_data_, &tx_acks_, &rx_data_, &rx_acks_, &rx_dropped_, &rx_out_of_seq_;
};

}  // namespace rnic::efe
