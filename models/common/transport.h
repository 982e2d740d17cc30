// The seam between the RNIC Core's engines and whatever carries their DDP segments to a peer
// card and back (docs/architecture.md, "The card as one object"): the EFE over Ethernet
// (models/efe/efe.h) is one implementation. The engines see only this: send and can-send,
// delivered segments and acknowledgements, refusal for on-demand paging, an opaque peer, the
// largest segment a frame carries. The card (models/rnic/card.h) makes the transport and hands
// it to the core; no engine includes a transport's own headers (testbench/checks/layering.py).
//
// Every callback runs in the transport's own time: on_segment at the cycle a segment is handed
// up, on_ack when the peer has acknowledged a segment, on_space when a send refused for lack of
// room may be tried again, on_failed when the channel to a peer has failed for good.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/common/bytes.h"

namespace rnic {

// A peer as the transport names it. The engines carry it and compare it, never read it: the
// EFE names a peer card by its MAC address.
using TransportPeer = MacAddr;

// A DDP segment handed up to the engines, with what the transport carried beside it.
struct TransportSegment {
  TransportPeer src{};
  uint32_t seq = 0;      // the transport's sequence number of the segment (validated, refuse)
  uint32_t dst_qpn = 0;  // the QP it is for
  bool ar = false;       // the sender asks for an acknowledgement when it is validated
  bool rq = false;       // dst_qpn is the QPN this card addressed at src (a reset)
  std::vector<uint8_t> ddp;
  uint32_t gen = 0;  // the peer's receive generation when it was handed up (refuse())
};

class Transport {
 public:
  virtual ~Transport() = default;

  // The largest DDP segment (DDP and RDMAP headers and payload) one frame carries.
  virtual uint32_t max_ddp_bytes() const = 0;
  // Whether a segment of `bytes` to dst would be taken now; when not, on_space says when to ask
  // again.
  virtual bool can_send(const TransportPeer& dst, size_t bytes) = 0;
  // Sends one segment; returns its sequence number, which on_ack names. ar: the peer
  // acknowledges it once validated. rq: dst_qpn is reflected (a reset).
  virtual uint32_t send(const TransportPeer& dst, uint32_t dst_qpn, std::vector<uint8_t> ddp,
                        bool ar, bool rq = false) = 0;
  // The engines validated segment seq from peer (it passed its checks): the transport may
  // acknowledge it (ar: the sender asked for that).
  virtual void validated(const TransportPeer& peer, uint32_t seq, bool ar) = 0;
  // The card cannot place segment seq from peer yet (on-demand paging: its page is being
  // brought in). It and every later segment from that peer are taken back as if never received
  // (the engines drop those they still hold: their gen is older than the one returned) and the
  // peer sends them again later, no retry spent.
  virtual uint32_t refuse(const TransportPeer& peer, uint32_t seq) = 0;
  // The peer as logs name it (the EFE: its MAC, 02:00:00:00:00:01).
  virtual std::string peer_name(const TransportPeer& peer) const = 0;

  std::function<void(TransportSegment&&)> on_segment;
  std::function<void(const TransportPeer& peer, uint32_t ack)> on_ack;
  std::function<void(const TransportPeer& peer)> on_failed;
  std::function<void()> on_space;
  // Whether the card can place a segment for dst_qpn now (unset: always). A segment in sequence
  // it cannot is refused as for a full receive buffer (the firmware's on-demand paging parks a
  // QP this way while a page comes in).
  std::function<bool(const TransportPeer& peer, uint32_t dst_qpn)> can_take;
};

}  // namespace rnic
