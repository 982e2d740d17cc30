// The RX engine (DESIGN.md §3.3): takes the EFE's segments and acknowledgements in arrival
// order; parses and checks each segment through ddp_rx_parse (ddp_rx_parse_channel.h);
// translates tagged and Send targets through xlat (xlat_channel.h); places data by DMA; consumes
// receive WQEs for untagged data; matches Read Responses to the outbound Read Requests; passes
// inbound Read Requests to the read-response engine; answers a bad segment with a Terminate
// and a segment for a QPN not connected to its sender with a reset (through the SQ engine)
// before its acknowledgement; gives a reset it receives to the QP connected to the QPN it
// reflects; tells the EFE each segment is validated, in order.
//
// State (its own): the decision logic and receive state (RxLogic, rx_logic.h: per QP the RQ,
// the receive offset and expected MSNs, a copy of the outbound Read Requests, the inbound Read
// Requests held against IRD); a copy of each QP's context; the RX FIFO and the verdicts pending.
// Channels (engine_msgs.h): takes WqeMsg (RQ) and QpUpdate (host interface), ReadIssuedMsg and
// TermSentMsg (SQ engine), IrdFreeMsg (read-response engine); gives QpErrorMsg (host
// interface), AckMsg, ReadDoneMsg, PeerTermMsg and TermReqMsg (SQ engine), ReadReqMsg
// (read-response engine); requests to ddp_rx_parse, xlat and the DMAC, CQEs to the completion
// engine, validations to the EFE.
//
// Timing, in core_clk cycles (C = core.*; all actions on a rising edge):
//   Intake     one segment at a time: header checks done max(C.rx_parse_cycles, beats holding
//              the header and a Read Request's 28 bytes) cycles after it starts; the next one
//              starts max(that, ceil(bytes / datapath)) cycles after it. An acknowledgement is
//              passed to the SQ engine on the edge it is taken.
//   Decide     with its header result a segment's checks against the QP are made and its xlat
//              requests sent: a tagged segment's target (xlat: smt + pbl cycles + 1 per chunk),
//              a Send's receive SGEs (one SGE after another), a Read Request's source (a check:
//              smt_cycles).
//   Verdict    in segment order, each when its xlat results are in (at once without xlat): its
//              placement writes issued, its CQE (the last segment of a Send) posted, the EFE told
//              it is validated; or, for a bad segment (header, QP checks, or xlat), a Terminate
//              asked of the SQ engine and the QP failed: the engine stalls (no intake, no
//              verdict) until the Terminate has gone to the EFE, then validates the segment.
//              A segment for a QPN not connected to its sender: a reset asked of the SQ engine,
//              the same stall.
//              A segment decided while an earlier one's verdict failed its QP is dropped at its
//              own verdict (nothing placed).
//   Page fault (on-demand regions, PageFaultPort) a segment whose translation meets an absent
//              page is refused at its verdict: the EFE takes it and every later segment from
//              that peer back and answers RNR (the peer resends after its RNR delay, no retry
//              spent); their decisions are taken back; the QP waits on the fault (the EFE
//              answers its segments RNR) until the firmware resumes it. Segments from that peer
//              given before the refusal are dropped unseen when they reach the engine.
//   Failure    a transport stream failed (the EFE's channel to a peer at the end of its retry
//   budget): on
//              the edge it is taken, every QP on it goes to ERROR with a QP fatal event, its oldest
//              outstanding WR completing IBV_WC_RETRY_EXC_ERR and the rest flushed.
//   Peer reset the peer's end of a stream failed, and QPs of the peer with it (the EFE's
//              announcement): each QP here connected to one of them goes to ERROR with a QP
//              fatal event, every WR flushed (as for a close, an LLP Terminate).
// Depths: the RX FIFO holds what the EFE gave and the engine has not taken; the EFE bounds it
//   (efe.rx_buffer_bytes of segments not yet validated, beyond it RNR; its largest depth is a
//   statistic, rx_fifo_max); verdicts pending: the segments in the xlat pipeline.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <systemc>
#include <vector>

#include "models/common/channel.h"
#include "models/common/event_queue.h"
#include "models/common/ring.h"
#include "models/common/stats.h"
#include "models/common/transport.h"
#include "models/rnic/completion/completion_engine.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/engine_msgs.h"
#include "models/rnic/rx/rx_logic.h"
#include "models/rnic/rx_parse/ddp_rx_parse_channel.h"
#include "models/rnic/xlat/xlat_channel.h"

namespace rnic {

class RxEngine : public sc_core::sc_module {
 public:
  using RxSegment = TransportSegment;

  RxEngine(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac, XlatChannel& xlat,
           Transport& transport, CompletionEngine& completion, const RxParseFactory& rx_parse,
           const ProbeFn& probe, StatRegistry& stats, const std::string& stat_group);

  struct In {
    Channel<WqeMsg> wqe;
    Channel<QpUpdate> update;
    Channel<ReadIssuedMsg> read_issued;
    Channel<TermSentMsg> term_sent;
    Channel<IrdFreeMsg> ird_free;
  } in;
  struct Out {
    Channel<QpErrorMsg>* error = nullptr;
    Channel<AckMsg>* ack = nullptr;
    Channel<ReadDoneMsg>* read_done = nullptr;
    Channel<PeerTermMsg>* peer_term = nullptr;
    Channel<TermReqMsg>* term_req = nullptr;
    Channel<ResetMsg>* reset = nullptr;
    Channel<ReadReqMsg>* read_req = nullptr;
  } out;

  // The firmware's page-fault port (on-demand paging); unset: an absent page is an error.
  PageFaultPort* faults = nullptr;
  // Whether a segment for QP qpn can be taken now (the EFE's can_take): not while the QP waits
  // on a page fault.
  bool can_take(uint32_t qpn) const { return qpn >= parked_.size() || !parked_[qpn]; }
  // Whether QP qpn may be connected to (peer, remote_qpn): it exists and, once connected (RTR or
  // RTS), to that one (the transport's accepts).
  bool accepts(const MacAddr& peer, uint32_t remote_qpn, uint32_t qpn) const {
    if (qpn >= ctx_.size() || !ctx_[qpn].valid) return false;
    return !ctx_[qpn].receives() ||
           (ctx_[qpn].peer_mac == peer && ctx_[qpn].peer_qpn == remote_qpn);
  }

  std::string dump_state() const;
  // Waveform: the segments from the EFE waiting for the parser (`segments_queued`), whether one
  // is being parsed (`busy`) or the engine is stalled on a Terminate (`stalled`), and the
  // verdicts waiting to go back to the EFE (`verdicts_pending`), under "<engine>.intake".
  void trace(TraceSink& t) const;

 private:
  struct RxItem {
    bool is_ack = false;
    bool failed = false;              // the transport's stream failed
    bool reset = false;               // the peer's end of the stream failed (on_reset) ...
    std::vector<uint32_t> peer_qpns;  // ... and these QPs of the peer with it
    RxSegment seg;
    TransportStream stream;
    uint32_t ack = 0;
  };
  // A segment decided, waiting for its translation and its turn (the callbacks on its way hold
  // only its place: the deque keeps it there until its verdict).
  struct Verdict {
    bool ready = false;
    // The segment and its decision (taken back if an earlier one from its peer is refused).
    std::shared_ptr<RxSegment> seg;
    uint32_t qpn = 0;
    uint64_t epoch = 0;
    RxDecision d;
    RxParseResult pr;
    std::vector<XlatChunk> chunks;
    bool refused = false;
  };
  using Seg = std::shared_ptr<RxSegment>;

  void push(RxItem&& it);
  void step();
  void decide(const Seg& s, const RxParseResult& pr);
  void verdict(uint32_t qpn, uint64_t epoch, const Seg& s, const RxParseResult& pr, RxDecision& d,
               const std::vector<XlatChunk>& chunks);
  Verdict* pending();
  // v's translation is done (its chunks): its verdict comes kVerdictCycles on, in its turn.
  void translated(Verdict* v, std::vector<XlatChunk>&& chunks);
  void resolve(Verdict* v);
  void drain();
  // An absent page of an on-demand region: refused at the verdict (when a driver resolves
  // faults and the last one of this QP did not fail), else the translation's error.
  bool faulted(Verdict* v, XlatStatus st, const XlatFault& f);
  void fail(uint32_t qpn, const rdmap::TermCause& why, const rdmap::Segment& h, const Seg& s,
            abi::AsyncEvent ev, const RxDecision& d);
  void drop(const Seg& s);
  // The segment's translation met an absent page: it and the later ones from its peer are
  // refused (the EFE answers RNR), their decisions taken back; the QP waits on the fault.
  void refuse(uint32_t qpn, const Seg& s, RxDecision& d);
  bool stale(const RxSegment& s) const;
  void reset(const Seg& s);
  void arm_read_timer(uint32_t qpn);
  void disarm_read_timer(uint32_t qpn);
  void schedule_read_timer();
  void notify_read_timer(uint64_t t_ps);
  void read_timer_fire();
  void read_timed_out(uint32_t qpn);
  void channel_failed(const TransportStream& stream);
  void peer_reset(const TransportStream& stream, const std::vector<uint32_t>& peer_qpns);
  // The QP connected to QPN peer_qpn at `peer` (ctx_.size(): none).
  uint32_t connected_to(const MacAddr& peer, uint32_t peer_qpn) const;
  bool still(uint32_t qpn, uint64_t epoch) const {
    return ctx_[qpn].receives() && ctx_[qpn].epoch == epoch;
  }
  void validated(const Seg& s) { transport_.validated(s->stream(), s->seq, s->ar); }
  void place(uint32_t qpn, const Seg& sp, const std::vector<XlatChunk>& chunks,
             const uint8_t* data);
  Cqe recv_cqe(uint32_t qpn, const RecvLogic::Entry& e, uint8_t status, uint64_t bytes);
  void post_recv(uint32_t qpn, const RecvLogic::Entry& e, uint8_t status, uint64_t bytes);
  void flush_rq(uint32_t qpn);
  void terminate_received(uint32_t qpn, const uint8_t* p, size_t n);
  void fail_ctx(uint32_t qpn, abi::AsyncEvent ev);
  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }

  CoreConfig cfg_;
  ClockDomain clk_;
  RnicDmac& dmac_;
  XlatChannel& xlat_;
  Transport& transport_;
  CompletionEngine& completion_;
  ProbeTap mark_;
  EventQueue eq_{"eq"};
  std::unique_ptr<RxParseChannel> rx_parse_;
  RxLogic logic_;
  std::vector<QpCtx> ctx_;
  // The Read Response timer: per QP the last progress (a response segment placed, or the first
  // request of an idle QP issued); the QPs timed now; the event at their earliest deadline.
  std::vector<uint64_t> read_progress_ps_;
  std::set<uint32_t> read_timed_;
  uint64_t read_timer_at_ = UINT64_MAX;  // when it fires (UINT64_MAX: not pending)

  std::deque<RxItem> rx_q_;
  bool rx_busy_ = false, rx_stalled_ = false;
  GrowRing<Seg> parsing_;  // segments at ddp_rx_parse, in order (it answers in the order asked)
  std::deque<Verdict> verdicts_;
  // While stalled: the segment the Terminate asked for rejects (one at a time: nothing more is
  // decided until it has gone) and the request's token.
  Seg stalled_on_;
  uint64_t stall_token_ = 0;

  // On-demand paging: per QP whether it waits on a fault, and whether the driver failed the
  // last one (its next fault is an error); per stream the transport's receive generation after
  // the last refusal (older segments are dropped unseen).
  std::vector<bool> parked_, fault_failed_;
  std::map<TransportStream, uint32_t> rx_gen_;

  Counter &rx_refused_, &rx_segments_, &rx_payload_bytes_, &rx_dropped_, &rx_resets_,
      &read_timeouts_, &rx_reads_dropped_, &rx_terminates_, &rx_errors_;
  Counter& rx_fifo_max_;
};

}  // namespace rnic
