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

// What one run of sequence numbers and acknowledgements goes over: the EFE's channel to a peer
// card (qpn 0), or a connection per QP (MPA over TCP: qpn is the remote QP's; QP 0 is never a
// connected QP). A peer alone converts to its stream of qpn 0.
struct TransportStream {
  TransportPeer peer{};
  uint32_t qpn = 0;
  TransportStream() = default;
  TransportStream(const TransportPeer& p, uint32_t q = 0) : peer(p), qpn(q) {}  // NOLINT
  bool operator==(const TransportStream& o) const { return same_mac(peer, o.peer) && qpn == o.qpn; }
  bool operator!=(const TransportStream& o) const { return !(*this == o); }
  bool operator<(const TransportStream& o) const {
    return peer < o.peer || (same_mac(peer, o.peer) && qpn < o.qpn);
  }
  // Whether a QP connected to (peer, its remote QPN) runs on this stream.
  bool carries(const TransportPeer& p, uint32_t remote_qpn) const {
    return same_mac(peer, p) && (qpn == 0 || qpn == remote_qpn);
  }
};

// A DDP segment handed up to the engines, with what the transport carried beside it.
struct TransportSegment {
  TransportPeer src{};
  uint32_t src_qpn = 0;  // the stream's remote QPN (0: a stream per peer)
  uint32_t seq = 0;      // the transport's sequence number of the segment (validated, refuse)
  uint32_t dst_qpn = 0;  // the QP it is for
  bool ar = false;       // the sender asks for an acknowledgement when it is validated
  bool rq = false;       // dst_qpn is the QPN this card addressed at src (a reset)
  std::vector<uint8_t> ddp;
  uint32_t gen = 0;  // the stream's receive generation when it was handed up (refuse())
  TransportStream stream() const { return {src, src_qpn}; }
};

// A connection's ports, local and remote (MPA/TCP's TCP ports); 0: the transport's own rule.
struct TransportPorts {
  uint16_t local = 0, remote = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // The largest DDP segment (DDP and RDMAP headers and payload) one frame carries.
  virtual uint32_t max_ddp_bytes() const = 0;
  // The stream a QP connected to (peer, remote_qpn) sends on.
  virtual TransportStream stream(const TransportPeer& peer, uint32_t remote_qpn) const = 0;
  // Whether a segment of `bytes` on stream s would be taken now; when not, on_space says when to
  // ask again.
  virtual bool can_send(const TransportStream& s, size_t bytes) = 0;
  // Sends one segment on s; returns its sequence number on s, which on_ack names. ar: the peer
  // acknowledges it once validated. rq: dst_qpn is reflected (a reset).
  virtual uint32_t send(const TransportStream& s, uint32_t dst_qpn, std::vector<uint8_t> ddp,
                        bool ar, bool rq = false) = 0;
  // The engines validated segment seq of stream s (it passed its checks): the transport may
  // acknowledge it (ar: the sender asked for that).
  virtual void validated(const TransportStream& s, uint32_t seq, bool ar) = 0;
  // The card cannot place segment seq of stream s yet (on-demand paging: its page is being
  // brought in). It and every later segment of s are taken back as if never received (the
  // engines drop those they still hold: their gen is older than the one returned) and the peer
  // sends them again later, no retry spent.
  virtual uint32_t refuse(const TransportStream& s, uint32_t seq) = 0;
  // The peer as logs name it (the EFE: its MAC, 02:00:00:00:00:01).
  virtual std::string peer_name(const TransportPeer& peer) const = 0;
  // Local QP local_qpn is connected to stream s and may send (it entered RTS): a transport with
  // a connection per QP makes it now (MPA/TCP; the EFE's channels are per peer card and need
  // nothing). Sends on s wait (can_send) until it is up. role: 1 this side opens the connection,
  // 2 it waits for the peer's, 0 a rule of the transport's decides (the card ABI's ConnRole).
  // ports: the connection's own ports where the connection manager gave them (0: the
  // transport's rule).
  virtual void open(const TransportStream& s, uint32_t local_qpn, uint8_t role,
                    TransportPorts ports) {
    (void)s;
    (void)local_qpn;
    (void)role;
    (void)ports;
  }
  // The QP on stream s sent its Terminate (it ends in ERROR): nothing more of it follows. MPA/TCP
  // closes the QP's connection (FIN after what is queued); a later open() of s makes a new one.
  virtual void close(const TransportStream& s) { (void)s; }
  // The core has taken stream s's failure (on_failed): every QP on it is in ERROR in each engine;
  // qpns are the ones that failed with it. The EFE drops what it is given for s between the
  // failure and this call, so no segment of a WR that failed goes on the channel that replaces
  // the failed one; and it tells the peer which QPs failed (on_reset there).
  virtual void failure_taken(const TransportStream& s, const std::vector<uint32_t>& qpns) {
    (void)s;
    (void)qpns;
  }

  std::function<void(TransportSegment&&)> on_segment;
  // Everything sent on s before sequence number `ack` is acknowledged.
  std::function<void(const TransportStream& s, uint32_t ack)> on_ack;
  // Stream s failed for good.
  std::function<void(const TransportStream& s)> on_failed;
  // The peer's QPs `peer_qpns` on stream s failed with its end of the stream (the EFE's
  // announcement after a failure): the QPs here connected to them are gone.
  std::function<void(const TransportStream& s, const std::vector<uint32_t>& peer_qpns)> on_reset;
  std::function<void()> on_space;
  // Whether the card can place a segment for dst_qpn now (unset: always). A segment in sequence
  // it cannot is refused as for a full receive buffer (the firmware's on-demand paging parks a
  // QP this way while a page comes in).
  std::function<bool(const TransportPeer& peer, uint32_t dst_qpn)> can_take;
  // Whether a connection from (peer, remote_qpn) to local_qpn may be made (unset: always): the
  // QP exists and is not connected to another. MPA/TCP answers a SYN it may not with a RST.
  std::function<bool(const TransportPeer& peer, uint32_t remote_qpn, uint32_t local_qpn)> accepts;
  // Fault injection (tests): when set, may rewrite each segment's DDP bytes as the engines hand
  // it to send() (a corrupt but correctly framed segment from a faulty peer).
  std::function<void(std::vector<uint8_t>& ddp)> tx_fault;
};

}  // namespace rnic
