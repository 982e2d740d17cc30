// The TCP offload engine: MPA over TCP as a Transport (models/common/transport.h), one TCP
// connection per QP (TcpConnection, tcp_connection.h) over the card's Ethernet port. A stream is
// (peer MAC, remote QPN); its connection runs between the ports the connection manager gave the
// QP (rdma_cm's source and destination port), else between ports 0x8000 + each side's QPN, and
// the end whose (MAC, QPN) is the lower opens it (the role rule for QPs connected without the
// connection manager). Peers' IPv4 addresses come from the topology (add_peer; ARP is not
// modelled).
//
// Sequence numbers of the seam: send() returns a count per stream; on_ack(stream, n) once TCP
// has acknowledged every segment before the n-th. Segments are handed up as their FPDUs arrive
// in order; TCP acknowledges an FPDU only once the engines have validated it (`validated`), so a
// Terminate for a rejected one reaches the sender ahead of its acknowledgement, as on the EFE
// (an ACK due meanwhile waits for the validation, and then goes every second FPDU validated or
// when all are).
//
// Timing (core_clk; docs/transport.md says where the defaults come from): a segment made (data,
// handshake or ACK) is ready for the MAC tx_cycles after the edge at or after the cycle it was
// made in; a frame from the MAC is taken by its connection rx_cycles after the edge at or after
// its arrival. Both are pipelines: a segment's latency, not a cost that holds the next one.
// Timers act when they fall due. Queues: the engine makes data segments only while fewer than
// tx_ahead() of its frames are in its pipeline or wait for the MAC (enough to keep the line
// busy through the pipeline; a retransmission is never stuck behind a window of new data), the
// connections that have more waiting their turn in order; ACKs and handshake segments are made
// at once. Per stream at most tx_buffer_bytes of FPDUs queued and not acknowledged (can_send
// says no beyond it). toe_test pins both latencies, tx_ahead and the buffer.
#pragma once

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/common/transport.h"
#include "models/eth/eth_mac.h"
#include "models/tcp/tcp_connection.h"
#include "models/tcp/tcp_params.h"

namespace rnic::tcp {

class Toe : public sc_core::sc_module, public Transport {
 public:
  static constexpr uint16_t kPortBase = 0x8000;

  Toe(sc_core::sc_module_name n, eth::EthMac& port, eth::Mac mac, uint32_t ip, const ToeParams& p,
      StatRegistry& stats);

  // A peer card's address.
  void add_peer(const eth::Mac& mac, uint32_t ip);
  // Local QP local_qpn is connected to stream s: role 1 (the connection manager's initiator)
  // opens the connection, role 2 waits for it; role 0: the lower (MAC, QPN) end opens it. Sends
  // on s wait (can_send) until MPA's start-up is done.
  void open(const TransportStream& s, uint32_t local_qpn, uint8_t role = 0,
            TransportPorts ports = {}) override;
  // The connection of stream s (nullptr: none yet).
  const TcpConnection* connection(const TransportStream& s) const;
  // The statistics group of what this card exchanged with the card at mac (its connections'
  // bytes and retransmissions), made with the first connection to it.
  std::string peer_group(const eth::Mac& mac) const;
  // ECN's reaction of connections made from now on: DCTCP (RFC 8257) or halving (RFC 3168).
  void set_dctcp(bool on) { cfg_.logic.dctcp = on; }
  // How many frames the engine keeps ahead of the line: 2 + the 1538-byte frames the line
  // sends in tx_cycles.
  size_t tx_ahead() const { return tx_ahead_; }
  // Frames made and not yet taken by the MAC (in the pipeline or waiting for it).
  size_t tx_queued() const { return txq_.size(); }

  // Transport.
  uint32_t max_ddp_bytes() const override;
  TransportStream stream(const TransportPeer& peer, uint32_t remote_qpn) const override {
    return {peer, remote_qpn};
  }
  bool can_send(const TransportStream& s, size_t bytes) override;
  uint32_t send(const TransportStream& s, uint32_t dst_qpn, std::vector<uint8_t> ddp, bool ar,
                bool rq = false) override;
  // The engines validated segment seq of s (and every one before it): its connection may
  // acknowledge it now (TCP acknowledges only validated FPDUs, so a Terminate for a rejected one
  // reaches the sender before the acknowledgement of it).
  void validated(const TransportStream& s, uint32_t seq, bool ar) override;
  // On-demand paging's refusal, the TCP way: FPDU seq of s and every later one handed up are
  // taken back unacknowledged (the receiver's rcv_nxt goes back to where seq began), and while
  // the QP waits for its page (can_take) the data that arrives for it is dropped unacknowledged
  // too; the peer's TCP sends it again. Returns the stream's new receive generation.
  uint32_t refuse(const TransportStream& s, uint32_t seq) override;
  void close(const TransportStream& s) override;
  std::string peer_name(const TransportPeer& peer) const override;

 private:
  struct PeerStats {
    Counter* tx_bytes;
    Counter* rx_bytes;
    Counter* retransmissions;
  };
  struct Conn {
    TransportStream stream;
    uint32_t local_qpn = 0;
    uint32_t peer_ip = 0;
    uint16_t sport = 0, dport = 0;  // its TCP ports, this side's and the peer's
    std::unique_ptr<TcpConnection> c;
    uint32_t sent = 0, acked = 0, handed_up = 0, validated = 0;
    uint32_t gen = 0;                                   // the receive generation (refuse())
    std::deque<std::pair<uint32_t, uint32_t>> unacked;  // (TCP seq after the segment, its count)
    bool was_rdma = false, reported_failed = false, reported_closed = false;
    uint64_t retransmits = 0;     // the sender's count when last looked at
    uint64_t timer = UINT64_MAX;  // its key in timers_
    bool dirty = false;           // in dirty_
    bool waiting = false;         // in tx_waiting_
    PeerStats* peer = nullptr;
  };
  Conn& make(const TransportStream& s, uint32_t local_qpn, uint32_t peer_ip, bool active,
             TransportPorts ports);
  void receive(const eth::EthMac::FramePtr& f);  // rx_cycles after its arrival
  // The connections something happened to: their output, deliveries and acknowledgements; then
  // the timer.
  void service();
  void service(Conn& c);
  void touch(Conn& c);  // c is serviced at the next service()
  void refuse_syn(const eth::Mac& from, const Ipv4Header& in, const TcpHeader& syn);
  // RFC 9293's answer to a segment (not a RST) for no connection: a RST, tx_cycles later.
  void reset_stray(const eth::Mac& from, const Ipv4Header& in, const TcpHeader& th, size_t len);
  // A RST (flags: kRst, or kRst | kAck) from the port `in` was sent to.
  void send_rst(const eth::Mac& to, const Ipv4Header& in, const TcpHeader& in_th, uint32_t seq,
                uint32_t ack, uint8_t flags);
  void pump();  // frames to the MAC while it takes them
  void kick();  // service() later in this cycle

  eth::EthMac& port_;
  eth::Mac mac_;
  uint32_t ip_;
  TcpConnConfig cfg_;
  uint32_t tx_buffer_bytes_;
  ClockDomain clk_;
  uint32_t tx_cycles_, rx_cycles_;
  std::map<eth::Mac, uint32_t> ips_;
  std::map<TransportStream, Conn> conns_;
  std::vector<Conn*> dirty_;
  std::deque<TransportStream> tx_waiting_;  // connections with data the line had no room for
  size_t tx_ahead_;
  // (when poll or on_timer has work, its stream): in time, then stream order
  std::set<std::pair<uint64_t, TransportStream>> timers_;
  std::map<eth::Mac, PeerStats> peers_;
  StatRegistry& stats_;
  std::map<std::tuple<uint32_t, uint16_t, uint16_t>, TransportStream> by_ports_;
  // Passive QPs with the connection manager's ports, waiting for their SYN: (peer IP, its port,
  // ours) -> the stream and the local QPN.
  std::map<std::tuple<uint32_t, uint16_t, uint16_t>, std::pair<TransportStream, uint32_t>> awaited_;
  std::deque<std::pair<uint64_t, eth::EthMac::Frame>> txq_;  // (ready at, frame)
  uint64_t pump_at_ = UINT64_MAX;                            // a pump() scheduled then
  EventQueue eq_{"eq"};
  bool kicked_ = false;
  uint32_t iss_next_ = 0x1000;
  Counter& tx_segments_;
  Counter& rx_segments_;
  Counter& rx_bad_frames_;
  Counter& rx_refused_;
  Counter& syn_refused_;
  Counter& stray_reset_;
  // TcpConnection::Refusals' counters, in kRefusals' order.
  struct RefusalCounter {
    uint64_t TcpConnection::Refusals::*field;
    const char* name;
    const char* desc;
  };
  static const std::array<RefusalCounter, 5> kRefusals;
  std::array<Counter*, 5> refused_{};
  std::set<TransportStream> opened_;  // streams open() was called for, not failed since
  void other_transport(const eth::Mac& from);
  Counter& closes_;
  Counter& rx_parked_;
  Counter& connections_;
  Counter& retransmissions_;
  Counter& failures_;
};

}  // namespace rnic::tcp
