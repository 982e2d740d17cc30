// The SQ engine (DESIGN.md §3.3): arbitration among the QPs with work, segmentation of SQ WQEs
// into DDP segments and Read Requests, the gather of their payload by DMA, the Read Response
// segments the read-response engine offers, the transmit buffer and in-order emission to the
// EFE, the segments awaiting the EFE's acknowledgement, in-order SQ completion.
//
// State (its own): per QP the SQ (SendQueueLogic, send_queue.h), the offered Read Response
// segment, the Terminate MSN; the round robin of QPs with work and each QP's turn (SqArbiter,
// sq_arbiter.h); the transmit buffer and the unacknowledged last segments per peer.
// Channels (engine_msgs.h): takes WqeMsg and QpUpdate (host interface), AckMsg, ReadDoneMsg,
// PeerTermMsg and TermReqMsg (RX engine), RespOfferMsg (read-response engine); gives
// QpErrorMsg (host interface), ReadIssuedMsg and TermSentMsg (RX engine), RespTakenMsg
// (read-response engine); requests to xlat (xlat_channel.h) and the DMAC, CQEs to the
// completion engine, segments to the EFE.
//
// Timing, in core_clk cycles (C = core.*; all actions on a rising edge):
//   Issue        one segment per C.sched_cycles, round robin over QPs with work (a QP's read
//                responses and its SQ take turns), while the segments fetched and not yet sent
//                hold fewer than C.tx_buffer_bytes payload bytes. A QP's tagged messages never
//                interleave (as Linux siw requires): while an RDMA Write is partly issued its
//                Read Responses wait, and while a Read Response is, its next Write waits (Sends
//                and Read Requests, untagged, go between).
//   SGE checks   a WQE's first segment first checks every SGE through xlat (check requests,
//                one after another) and issues smt_cycles x max(SGEs, 1) after it was picked
//                (an error completes the WR with a local error and sends nothing); the engine
//                issues nothing else meanwhile.
//   Gather       a segment with payload translates its range (xlat: pbl_cycles + 1 per chunk
//                per SGE, one SGE after another) and reads it by DMA; it is ready kHeaderCycles
//                after its last byte arrives (one without payload kHeaderCycles after its issue).
//   Atomics      an offered Atomic Response goes to the card's atomic unit, which does one
//                operation at a time in offer order: its target's translation (xlat,
//                kRemoteAtomic), the 8-byte DMA read, then (the edge the data arrives) the result's
//                DMA write, issued only if the value changes, and the response ready kHeaderCycles
//                later; the next operation starts on that edge (its read reaches the host behind
//                the earlier posted write, docs/pcie.md, and sees the result: Atomics.* check it).
//                A failed translation or read answers the request with a Terminate quoting it, as
//                for a Read Response.
//   Emission     segments leave in issue order, each as soon as it is ready and the EFE's
//                channel to its peer has room (a full one holds back that peer's segments
//                only: the others pass them); a Terminate (a reset too) goes ahead of every queued
//                segment, kHeaderCycles after its request. Segments: at most mac.mtu - 20 (EFE) -
//                14/18 (DDP header) payload bytes.
//   Page faults  (on-demand regions, PageFaultPort) a WQE whose SGE checks find an absent page
//                does not issue: its QP's SQ is parked (its responses go on), the engine free,
//                until the firmware resumes it, then the WQE is checked again. A segment whose
//                gather finds one (the page went out after the checks) waits in the transmit
//                buffer, holding back the segments behind it, and translates again when
//                resumed. If the driver cannot page the range in, the fault is an error as
//                below.
//   Failures     a segment whose payload cannot be fetched (its translation or a DMA read fails)
//                is never sent, nor anything of its QP after it: at its turn to leave, its WR
//                completes with IBV_WC_LOC_PROT_ERR (translation) or IBV_WC_LOC_QP_OP_ERR (DMA,
//                with a QP fatal event) and the QP goes to ERROR; if segments of the message
//                left before it, the peer gets a Terminate (RDMAP local catastrophic). A Read
//                Response whose translation fails answers its Read Request with a Terminate
//                quoting it (docs/errors.md); one whose DMA read fails is, with
//                C.read_dma_error "silent", dropped at its turn (core.responses_unsent): the QP
//                stays in its state and sends nothing more, so its later responses wait behind
//                it; with "terminate" it is answered with RDMAP / 2 / 0x07 quoting the request.
// Depths: the transmit buffer C.tx_buffer_bytes payload bytes (segments wait in issue order);
// per QP the SQ (C.max_qp_wr WQEs), ORD Read Requests, one offered Read Response segment; the
// reset requests (one at a time: the RX engine stalls until each has gone).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <systemc>
#include <vector>

#include "models/common/channel.h"
#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/common/transport.h"
#include "models/rnic/completion/completion_engine.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/engine_msgs.h"
#include "models/rnic/sq/send_queue.h"
#include "models/rnic/sq/sq_arbiter.h"
#include "models/rnic/xlat/xlat_channel.h"

namespace rnic {

class SqEngine : public sc_core::sc_module {
 public:
  static constexpr uint64_t kHeaderCycles = 1;

  SqEngine(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac, XlatChannel& xlat,
           Transport& transport, CompletionEngine& completion, const ProbeFn& probe,
           StatRegistry& stats, const std::string& stat_group);

  // The firmware's local-operation port (fast registration, local invalidation); unset: such
  // WRs complete IBV_WC_LOC_QP_OP_ERR.
  LocalOpPort* local_ops = nullptr;
  // The firmware's page-fault port (on-demand paging); unset: an absent page is an error.
  PageFaultPort* faults = nullptr;

  struct In {
    Channel<WqeMsg> wqe;
    Channel<QpUpdate> update;
    Channel<AckMsg> ack;
    Channel<ReadDoneMsg> read_done;
    Channel<PeerTermMsg> peer_term;
    Channel<TermReqMsg> term_req;
    Channel<RespOfferMsg> offer;
    Channel<CloseMsg> close;
    Channel<ResetMsg> reset;
  } in;
  struct Out {
    Channel<QpErrorMsg>* error = nullptr;
    Channel<ReadIssuedMsg>* read_issued = nullptr;
    Channel<TermSentMsg>* term_sent = nullptr;
    Channel<RespTakenMsg>* taken = nullptr;
  } out;

  // Payload bytes a segment carries at most (tagged or untagged header).
  uint32_t max_payload(bool tagged) const;
  std::string dump_state() const;

 private:
  struct TxSeg {
    uint64_t number = 0;  // the core's count of segments made (the probe's tag)
    uint32_t qpn = 0;
    TransportStream dst;  // the transport's stream to the QP's peer
    uint32_t dst_qpn = 0;
    std::vector<uint8_t> ddp;
    uint32_t payload = 0;
    uint32_t reads_left = 0;
    bool ready = false, ar = false, terminate = false;
    bool rq = false;  // a reset: dst_qpn is reflected (the EFE header's RQ)
    std::function<void(uint32_t seq)> on_sent;
    // What it carries, for a failure to fetch its payload: a WR's data (its SQ index; whether
    // it is the message's first segment) or a Read Response (the request it answers).
    enum class Kind : uint8_t { kOther, kWrData, kResponse, kAtomic } kind = Kind::kOther;
    uint32_t wr_index = 0;
    bool first = false;
    // A WR's data: the bytes of the WR it carries and the QP's epoch then (fetch_wr).
    uint64_t wr_id = 0, fetch_off = 0, epoch = 0;
    uint32_t fetch_len = 0;
    ReadResponseLogic::Segment resp;  // kResponse, kAtomic: the request it answers
    // kAtomic: the target's chunks, its 8 bytes as read (little-endian), reads outstanding.
    std::vector<XlatChunk> target;
    uint8_t old[8] = {};
    bool read_failed = false;
    // Its payload could not be fetched (translation or DMA read failed): it is never sent; its
    // WR completes with `status`, or its Read Request is answered with a Terminate for `why`.
    bool failed = false;
    bool dma_failed = false;  // a DMA read of its payload failed (not its translation)
    uint8_t status = 0;
    rdmap::TermCause why{};
  };
  struct Unacked {
    uint32_t qpn, index, seq;
  };
  struct QpSq {
    uint32_t term_msn = 1;      // next MSN of the Terminate queue (2)
    uint32_t atomic_msn = 1;    // next MSN of the Atomic Response queue (3)
    bool offered = false;       // an offered Read Response segment waits
    bool more = false;          // more segments follow the last one offered
    bool halted = false;        // a segment's payload could not be fetched: nothing more is issued
    bool stuck = false;         // a Read Response was dropped unsent: nothing more of the QP leaves
    bool resp_open = false;     // a Read Response is partly issued (its last segment is not)
    bool parked = false;        // its SQ waits on a page fault of its current WQE's checks
    bool fault_failed = false;  // the driver could not page in: the next fault is an error
    XlatFault fault;            // the checks' fault
    ReadResponseLogic::Segment offer;
  };
  enum class Issue { kNone, kIssued, kChecking };

  void on_update(QpUpdate&& u);
  void flush(uint32_t qpn);
  void activate(uint32_t qpn);
  void tx_kick();
  void tx_step();
  void requeue(uint32_t qpn);
  void slot_used();
  Issue issue_one(uint32_t qpn);
  Issue issue_sq(uint32_t qpn);
  bool issue_response(uint32_t qpn);
  void local_done(uint32_t qpn, uint32_t index, uint64_t epoch, uint8_t status);
  void checks_done(uint32_t qpn, uint32_t index, uint64_t epoch, uint64_t issued, uint8_t status);
  void issue_segment(uint32_t qpn, SqEntry& e, uint64_t issued);
  void complete_on_ack(TxSeg* s, const SqEntry& e);
  void header_only(TxSeg* s, SqEntry& e, uint64_t issued, uint64_t start, bool done);
  void gather(TxSeg* s, std::vector<XlatChunk> chunks);
  // A DMA read of s's payload is done: its bytes go in at `at`.
  void gathered(TxSeg* s, size_t at, DmacStatus st, const std::vector<uint8_t>& d);
  // Translate and gather a WR data segment's payload [off, off + len) of its SGE list, or a
  // Read Response segment's; an absent page parks the segment until the firmware resumes it.
  void fetch_wr(TxSeg* s, const Wqe& w, uint64_t off, uint32_t len, uint64_t epoch);
  void fetch_response(TxSeg* s, uint64_t epoch);
  // The atomic unit: the card's atomic operations one at a time, in the order their responses
  // were issued: translate the target, read its 8 bytes, write the result, fill the response.
  void atomic_next();
  void atomic_translate(TxSeg* s);
  void atomic_read(TxSeg* s, std::vector<XlatChunk>&& chunks);
  void atomic_done(TxSeg* s);
  void atomic_fail(TxSeg* s, const rdmap::TermCause& why);
  static bool ord_bound(const Wqe& w) {
    return w.opcode == abi::kOpRdmaRead || abi::is_atomic(w.opcode);
  }
  void fail_seg(TxSeg* s, uint8_t status, const rdmap::TermCause& why);
  void seg_failed(const TxSeg& s);
  void seg_ready(TxSeg* s);
  void tx_emit();
  TxSeg* new_seg(uint32_t qpn);
  uint64_t segs_made_ = 0;
  // A Terminate to the QP's peer ahead of every queued segment, quoting `bad` (a DDP segment,
  // or nothing); with a token, the RX engine hears when it has gone.
  void send_reset(const ResetMsg& m);
  void queue_terminate(std::unique_ptr<TxSeg> s, uint64_t token);
  void send_terminate(uint32_t qpn, const rdmap::TermCause& why, const rdmap::Segment* bad,
                      const std::vector<uint8_t>& bad_ddp, uint64_t token,
                      const CloseMsg* to = nullptr);
  void try_complete(uint32_t qpn);
  bool responses_pending(uint32_t qpn) const { return qs_[qpn].offered || qs_[qpn].more; }

  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }
  uint64_t cycles_ps(uint64_t cycles) const { return cycles * clk_.period_ps; }

  CoreConfig cfg_;
  uint32_t max_ddp_;  // the transport's largest DDP segment
  ClockDomain clk_;
  RnicDmac& dmac_;
  XlatChannel& xlat_;
  Transport& transport_;
  CompletionEngine& completion_;
  ProbeTap mark_;
  EventQueue eq_{"eq"};
  SendQueueLogic send_;
  std::vector<QpCtx> ctx_;
  std::vector<QpSq> qs_;

  SqArbiter arbiter_;  // QPs with work, round robin
  bool tx_scheduled_ = false;
  bool checking_ = false;    // a WQE's SGE checks occupy the engine
  uint64_t tx_next_ps_ = 0;  // earliest edge for the next issue
  std::deque<std::unique_ptr<TxSeg>> tx_q_;
  uint64_t tx_buffered_ = 0;
  // Streams with no room, each with its first segment, in one tx_emit and as the last one left
  // them.
  std::vector<std::pair<TransportStream, const TxSeg*>> held_;
  // Where the last walk of tx_emit stopped: the queue before that point holds only the held
  // streams' segments. While nothing was put in front of it (walked_ok_) and none of the held
  // streams' first segments can go or be dropped, a walk from the start would hold the same
  // streams and reach the same point with nothing done: the next one goes on from there.
  size_t walked_stop_ = 0;
  bool walked_ok_ = false;
  bool held_as_before() const;
  // A segment the walk drops rather than sends: not a Terminate, and its QP no longer sends
  // (receives, for a response), failed it, or is stuck.
  bool dropped(const TxSeg& s) const {
    const bool responds = s.kind == TxSeg::Kind::kResponse || s.kind == TxSeg::Kind::kAtomic;
    const bool live = responds ? ctx_[s.qpn].receives() : ctx_[s.qpn].sends();
    return !s.terminate && (!live || s.failed || qs_[s.qpn].stuck);
  }
  std::vector<std::pair<TransportStream, uint32_t>> tx_peers_;  // segments queued per stream
  void count_peer(const TransportStream& m, int d);
  uint32_t queued_for(const TransportStream& m) const;
  std::map<TransportStream, std::deque<Unacked>> unacked_;  // per stream
  std::deque<TxSeg*> atomics_;  // Atomic Responses waiting for the atomic unit
  bool atomic_busy_ = false;

  Counter &tx_segments_, &tx_payload_bytes_, &tx_terminates_, &local_errors_, &fetch_errors_,
      &responses_unsent_;
};

}  // namespace rnic
