// What the RNIC Core's engines tell each other (DESIGN.md §3.3, docs/architecture.md): the
// messages of the channels (models/common/channel.h) the core wires between the host
// interface, the SQ engine, the RX engine and the read-response engine, the QP context columns
// each engine keeps a copy of, and the timing probe they all report to.
//
// Every channel between two engines crosses in 0 cycles (the receiver acts on the same core
// edge, in its own event queue), so the latencies of rnic_core.h are each engine's own.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/common/bytes.h"
#include "models/common/transport.h"
#include "models/rnic/abi/codes.h"
#include "models/rnic/abi/wqe.h"
#include "models/rnic/ddp/ddp_rdmap.h"
#include "models/rnic/read_response/read_response.h"
#include "models/rnic/sq/ord_table.h"
#include "models/rnic/xlat/rnic_xlat.h"

namespace rnic {

// fail a QP without an asynchronous event (the error is reported in a CQE only).
constexpr abi::AsyncEvent kNoAsyncEvent = abi::AsyncEvent(0xFF);

// The QP context the host interface owns (state machine and attributes); each engine keeps a
// copy of it, updated by QpUpdate.
class EventQueue;

// The firmware's local-operation port (fast registration, local invalidation): the SQ engine
// hands it a WQE of one of its QPs (with the QP's PD); `done` runs in `to` with the WR's CQE
// status once the operation is over.
class LocalOpPort {
 public:
  virtual ~LocalOpPort() = default;
  virtual void local_op(uint32_t qpn, uint32_t pd, const Wqe& w, EventQueue& to,
                        std::function<void(uint8_t status)> done) = 0;
};

// The firmware's page-fault port (on-demand paging, docs/firmware.md): an engine whose
// translation of an on-demand region found an absent page reports it for QP qpn (write: the
// card would write the range); `resume` runs in `to` once the firmware has loaded the driver's
// page addresses (true), or the driver could not page the range in (false). The operation waits
// meanwhile; it is not an error.
class PageFaultPort {
 public:
  virtual ~PageFaultPort() = default;
  virtual void page_fault(uint32_t qpn, const XlatFault& f, bool write, EventQueue& to,
                          std::function<void(bool ok)> resume) = 0;
};

struct QpCtx {
  static constexpr uint32_t kNoSrq = ~0u;
  bool valid = false;
  abi::QpState state = abi::kQpReset;
  uint32_t pd = 0, scq = 0, rcq = 0;
  MacAddr peer_mac{};
  uint32_t peer_qpn = 0;
  uint32_t ird = 0, ord = 0;
  uint8_t access = 0;
  uint32_t mtu = 0;              // largest segment payload (0: the link's)
  uint64_t read_timeout_ps = 0;  // requester's Read Response timer (0: none)
  uint64_t epoch = 0;            // changes when the QP is created or reset
  bool is_srq = false;           // a shared receive queue (CREATE_QP kQpSrq), not a QP
  uint32_t srq = kNoSrq;         // the SRQ whose receive WQEs the QP takes (kNoSrq: its own RQ)
  abi::ConnRole role = abi::kRoleByRule;     // its side of a connection per QP
  uint16_t local_port = 0, remote_port = 0;  // that connection's TCP ports (0: the TOE's rule)
  bool receives() const { return valid && (state == abi::kQpRtr || state == abi::kQpRts); }
  bool sends() const { return valid && state == abi::kQpRts; }
};

// Host interface -> every engine: the QP's context changed. reset: its queues start over
// (created, destroyed, reset); flush: it entered ERROR (its work completes flushed).
struct QpUpdate {
  uint32_t qpn = 0;
  QpCtx ctx;
  bool reset = false, flush = false;
};

// Host interface -> SQ engine (SQ WQEs), -> RX engine (RQ WQEs): a WQE copied on chip.
struct WqeMsg {
  uint32_t qpn = 0;
  Wqe wqe;
  uint32_t index = 0;  // producer count
};

// Any engine -> host interface: the QP must go to ERROR (and raise `event`, unless
// kNoAsyncEvent). peer_told: a Terminate went to the peer or came from it already; otherwise
// the host interface closes the stream (CloseMsg).
struct QpErrorMsg {
  uint32_t qpn = 0;
  abi::AsyncEvent event = kNoAsyncEvent;
  bool peer_told = false;
};

// RX engine -> SQ engine: the transport acknowledged every segment sent on `stream` before
// `ack` (the EFE: its channel to a peer card, ack an EFE SEQ); or (failed) the stream failed:
// nothing sent on it will be acknowledged.
struct AckMsg {
  TransportStream stream;  // everything sent on it before `ack` is acknowledged
  uint32_t ack = 0;
  bool failed = false;
};

// SQ engine -> RX engine: a Read Request left (the RX engine matches its responses).
struct ReadIssuedMsg {
  uint32_t qpn = 0;
  ReadOut read;
};

// RX engine -> SQ engine: the last Read Response segment of the oldest outbound Read Request
// passed its checks and its data is placed (its writes issued): the request leaves ORD.
struct ReadDoneMsg {
  uint32_t qpn = 0;
  uint32_t sq_index = 0;  // the WR it belongs to
};

// RX engine -> SQ engine: a Terminate from the peer; the WR it names completes with `status`.
// closed: the peer closed the stream (layer LLP: its QP is gone or in ERROR): every WR not yet
// done flushes at once, so no acknowledgement behind the Terminate completes one.
struct PeerTermMsg {
  uint32_t qpn = 0;
  bool closed = false;
  uint8_t status = 0;
  bool have_rr = false, have_hdr = false;
  rdmap::ReadRequest rr;
  rdmap::Segment bad;
};

// RX engine -> SQ engine: send a Terminate for a segment the RX engine rejected, ahead of
// everything queued; SQ engine -> RX engine: it has gone to the EFE (TermSentMsg, same token).
struct TermReqMsg {
  uint32_t qpn = 0;
  rdmap::TermCause why;
  rdmap::Segment bad;
  std::vector<uint8_t> bad_ddp;  // the rejected segment's bytes (its headers are quoted)
  uint64_t token = 0;
};
struct TermSentMsg {
  uint64_t token = 0;
};

// RX engine -> SQ engine: a segment from `to` addressed QPN `qpn`, which is not connected to
// it here (no such QP, destroyed, not yet connected, or connected to another peer): answer
// with a reset, a Terminate (layer LLP) whose EFE header reflects `qpn` (RQ), ahead of
// everything queued; TermSentMsg with the same token once it has gone to the EFE.
struct ResetMsg {
  MacAddr to{};
  uint32_t qpn = 0;
  uint64_t token = 0;
};

// Host interface -> SQ engine: the host destroyed the QP or moved it to ERROR while it was
// connected: tell its peer the stream is closed (a Terminate, layer LLP: docs/errors.md).
struct CloseMsg {
  uint32_t qpn = 0;
  MacAddr peer_mac{};
  uint32_t peer_qpn = 0;
};

// RX engine -> read-response engine: a Read Request (or, atomic, an Atomic Request) passed its
// checks.
struct ReadReqMsg {
  uint32_t qpn = 0;
  uint64_t epoch = 0;
  rdmap::ReadRequest rr;
  uint32_t msn = 0;
  bool atomic = false;
  rdmap::AtomicRequest ar;
};

// Read-response engine -> SQ engine: the QP's next Read Response segment (one offered per QP
// at a time); `more`: further segments follow it.
struct RespOfferMsg {
  uint32_t qpn = 0;
  uint64_t epoch = 0;
  ReadResponseLogic::Segment seg;
  bool more = false;
};
// SQ engine -> read-response engine: the offered segment is issued.
struct RespTakenMsg {
  uint32_t qpn = 0;
};
// Read-response engine -> RX engine: a request's last segment is issued (it leaves IRD).
struct IrdFreeMsg {
  uint32_t qpn = 0;
};

// The core's timing probe (latency tests, breakdowns, the request timeline): called at each
// point with the QP (CQ for kCqe, 0 for commands and ACKs), the simulated time of the point in
// ps, and what identifies the point's request (ProbeEvent).
enum class CoreProbe {
  kCommand,      // the firmware takes a command (the producer write that posted it)
  kCommandDone,  // the command completes (its completion word written)
  kDoorbell,     // an SQ or RQ doorbell reaches the core
  kWqeQueued,    // a WQE is in the on-chip SQ/RQ
  kSegIssue,     // the SQ engine issues a segment (or a Read Request) of a QP
  kSegFetch,     // its translation starts (after the WQE's SGE checks, for a first segment)
  kSegDma,       // its DMA reads are requested
  kSegData,      // its last DMA read data has arrived
  kSegReady,     // it is ready to leave
  kSegSent,      // it is handed to the EFE
  kRxStart,      // the RX engine starts a segment
  kRxChecked,    // its header checks are done
  kRxPlace,      // its placement DMA writes are issued
  kAck,          // the RX engine takes an acknowledgement from the EFE
  kCqe,          // a CQE's DMA write is issued
  kWqeFetch,     // host-ring mode: a doorbell's DMA read of WQEs is requested
  kWqeFetched,   // host-ring mode: its data has arrived at the core
  kPageFault,    // an engine hands the firmware a page fault (id: the QP)
  kFaultRecord,  // the firmware writes a fault's record into the host's ring (id: the QP)
  kFaultResume,  // ODP_MAP resumes an operation waiting on a fault
};

struct ProbeEvent {
  static constexpr uint64_t kRq = 1ull << 63;        // tag of a doorbell or WQE: the RQ's
  static constexpr uint64_t kResponse = 1ull << 63;  // kSegIssue's wr: a Read Response segment
  CoreProbe point{};
  uint32_t id = 0;
  uint64_t t_ps = 0;
  // kDoorbell: the producer index it announces (| kRq); kWqeQueued, kWqeFetch, kWqeFetched: the
  // (first) WQE's index (| kRq); kSeg*: the core's number of the segment; kRxStart, kRxChecked,
  // kRxPlace: the frame's EFE SEQ | the low 32 bits of its source MAC << 32; kCqe: the CQE's
  // WQE index | its QP << 32.
  uint64_t tag = 0;
  // kSegIssue: the index of the WQE the segment belongs to; for a Read Response segment
  // kResponse | the Read Request's MSN. kSegSent: the EFE SEQ the segment's frame carries.
  // kCqe: 1 for a receive's CQE.
  uint64_t aux = 0;
  // kRxPlace: the host address of the placement's last byte; kCqe: the CQE's host address.
  uint64_t addr = 0;

  // The tag of the RX points: the frame's SEQ and the low 32 bits of its source MAC.
  static uint64_t rx_tag(const MacAddr& src, uint32_t seq) {
    return uint64_t(seq) | uint64_t(src[2]) << 56 | uint64_t(src[3]) << 48 |
           uint64_t(src[4]) << 40 | uint64_t(src[5]) << 32;
  }
};
using ProbeFn = std::function<void(const ProbeEvent&)>;

// An engine's view of the probe the core exposes (the core's `probe` member, may be unset).
class ProbeTap {
 public:
  explicit ProbeTap(const ProbeFn& fn) : fn_(fn) {}
  void operator()(CoreProbe p, uint32_t id, uint64_t t_ps, uint64_t tag = 0, uint64_t aux = 0,
                  uint64_t addr = 0) const {
    if (fn_) fn_(ProbeEvent{p, id, t_ps, tag, aux, addr});
  }

 private:
  const ProbeFn& fn_;
};

}  // namespace rnic
