// The RNIC Core (DESIGN.md §3.3): the host interface's command processor and doorbells, the
// QP contexts, the SQ engine, the RX engine, the read-response engine and the completion
// engine, over the SMT/PBLMT (smt.h), rnic_xlat and the DMAC (PCIe I/F). Frames go out and
// come in through the EFE (efe_passthrough.h).
//
// Timing, in core_clk cycles (C = core.*; all actions start on a rising edge):
//   Command processor  a mailbox command completes C.cmd_cycles after the CMD write (LOAD_PBL:
//                      after its DMA read of the list as well); CMD_STATUS reads busy until then.
//   Doorbells          SQ/RQ: each new WQE is copied from the window into the on-chip queue in
//                      ceil(128 / datapath) cycles; the SQ engine sees an SQ WQE after that.
//                      Host-ring mode (CREATE_QP flag kQpHostRings): kRingFetchCycles after the
//                      doorbell the new WQEs are read from the ring by DMA (whole 128-byte
//                      slots; two reads where they wrap); when a fetch's data is in (and every
//                      earlier fetch of the queue has been taken) its WQEs enter the on-chip
//                      queue ceil(128 / datapath) cycles apart, as in MMIO mode. A failed read
//                      moves the QP to ERROR with abi::kEvQpFatal.
//   SQ engine          issues one segment per C.sched_cycles, round robin over QPs with work
//                      (a QP's read responses and its SQ take turns), while the segments fetched
//                      and not yet sent hold fewer than C.tx_buffer_bytes payload bytes.
//                      A WQE's first segment first checks every SGE (xlat: smt_cycles each; an
//                      error completes the WR with a local error and sends nothing). A segment
//                      with payload translates its range (xlat: pbl_cycles + 1 per chunk) and
//                      reads it by DMA; it is ready kHeaderCycles after its last byte arrives
//                      (one without payload kHeaderCycles after its issue). Segments leave in
//                      issue order, each as soon as it is ready and the EFE has room.
//                      Segments: at most mac.mtu - 20 (EFE) - 14/18 (DDP header) payload bytes.
//   RX engine          one segment at a time, through ddp_rx_parse (ddp_rx_parse.h): header
//                      checks done max(C.rx_parse_cycles, beats holding the header and a Read
//                      Request's 28 bytes) cycles after it starts; tagged and Send segments are
//                      translated (xlat cycles) and their DMA writes issued right after; the
//                      engine takes the next segment max(that, ceil(bytes / datapath)) cycles
//                      after starting one.
//                      The EFE is told the segment is validated when its writes are issued (or,
//                      for a bad segment, when its Terminate has gone to the EFE: the engine
//                      stalls until then).
//   Read responses     a Read Request that passes its checks joins the QP's response queue
//                      (read_response.h; IRD entries) at the end of its RX processing; the SQ
//                      engine sends its segments.
//   Completion engine  (completion_engine.h, its own module and CQ table) one CQE per
//                      C.cqe_cycles, in order; its 32-byte DMA write follows the
//                      writes of the data it completes (posted writes stay in order). An armed
//                      CQ raises MSI-X after the CQE's write is issued.
// Queues: on-chip SQ and RQ of C.max_qp_wr WQEs per QP; the RX FIFO is not bounded (the EFE
// pass-through has no flow control; its largest depth is a statistic); response queue IRD.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <systemc>
#include <vector>

#include "models/common/event_queue.h"
#include "models/efe/efe_passthrough.h"
#include "models/eth/eth_params.h"
#include "models/rnic/abi/codes.h"
#include "models/rnic/abi/commands.h"
#include "models/rnic/abi/wqe.h"
#include "models/rnic/completion_engine.h"
#include "models/rnic/ddp_rdmap.h"
#include "models/rnic/ddp_rx_parse_channel.h"
#include "models/rnic/dmac.h"
#include "models/rnic/read_response.h"
#include "models/rnic/recv_queue.h"
#include "models/rnic/rnic_regs.h"
#include "models/rnic/rnic_xlat.h"
#include "models/rnic/send_queue.h"
#include "models/rnic/smt.h"
#include "models/rnic/sq_segmenter.h"

namespace rnic {

// fail_qp without an asynchronous event (the error is reported in a CQE only).
constexpr abi::AsyncEvent kNoAsyncEvent = abi::AsyncEvent(0xFF);

class RnicCore : public sc_core::sc_module, public RegListener {
 public:
  static constexpr uint64_t kHeaderCycles = 1;
  // MSI-X message data of the async events (a CQ's completion event is the completion
  // engine's: CompletionEngine::kFirstCqVector + CQ number).
  static constexpr uint32_t kAsyncVector = 0;

  RnicCore(sc_core::sc_module_name n, const CoreConfig& cfg, const MacConfig& mac, RnicDmac& dmac,
           RnicRegs& regs, efe::EfePassThrough& efe, StatRegistry& stats,
           const RxParseFactory& rx_parse = rx_parse_model_factory());

  // RegListener
  void sq_doorbell(uint32_t qp, uint64_t producer) override;
  void rq_doorbell(uint32_t qp, uint64_t producer) override;
  void cq_doorbell(uint32_t qp, uint64_t value) override;
  void command(uint32_t op, const uint32_t* args) override;
  uint32_t qp_state(uint32_t qp) const override;
  uint32_t pop_event() override;

  // Timing probe (latency tests and breakdowns): when set, called at each point below with the
  // QP (CQ for kCqe, 0 for commands and ACKs) and the simulated time of the point in ps.
  enum class Probe {
    kCommand,      // a CMD write reaches the command processor
    kCommandDone,  // the command completes (CMD_STATUS no longer busy)
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
  };
  std::function<void(Probe, uint32_t id, uint64_t t_ps)> probe;

  static constexpr uint64_t kRingFetchCycles = 1;  // doorbell -> WQE fetch read requested

  // For tests and state dumps.
  const Smt& smt() const { return xlat_.smt(); }
  std::string dump_state() const;

 private:
  // --- contexts ---
  struct Fetch {
    uint64_t first = 0;  // producer count of its first WQE
    uint32_t count = 0;
    uint32_t pending = 0;  // DMA reads still out (a fetch that wraps the ring is two)
    bool failed = false;
    std::vector<uint8_t> data;  // count x 128 B
  };
  struct Qp {
    bool valid = false;
    abi::QpState state = abi::kQpReset;
    uint32_t pd = 0, scq = 0, rcq = 0;
    uint32_t sq_depth = 0, rq_depth = 0;
    MacAddr peer_mac{};
    uint32_t peer_qpn = 0;
    uint32_t ird = 0, ord = 0;
    uint8_t access = 0;
    uint64_t sq_db = 0, rq_db = 0;
    // Host-memory WQE rings (CREATE_QP flag kQpHostRings): ring physical bases (WQE i in slot
    // i % depth) and, per queue (0 SQ, 1 RQ), the fetches in doorbell order; a fetch's WQEs
    // enter the queue only after every earlier fetch's.
    bool host_rings = false;
    uint64_t ring_pa[2] = {0, 0};
    std::deque<Fetch> fetches[2];
    uint64_t copy_free_ps[2] = {0, 0};  // the queue's WQE copy-in is busy until then
    uint64_t epoch = 0;                 // changes on create and reset: stale fetches are dropped
    uint32_t term_msn = 1;              // next MSN of the Terminate queue (2)
    bool in_active = false;
    bool turn_responses = false;
  };
  struct TxSeg {
    uint32_t qpn = 0;
    eth::Mac dst{};
    uint32_t dst_qpn = 0;
    std::vector<uint8_t> ddp;
    uint32_t payload = 0;
    uint32_t reads_left = 0;
    bool ready = false, ar = false, terminate = false;
    std::function<void(uint32_t seq)> on_sent;
  };
  struct RxItem {
    bool is_ack = false;
    efe::EfePassThrough::RxSegment seg;
    eth::Mac peer{};
    uint32_t ack = 0;
  };
  struct Unacked {
    uint32_t qpn, index, seq;
  };

  // --- host interface (host_if.cc) ---
  void run_command(uint32_t op, std::vector<uint32_t> a);
  void finish_command(uint32_t result, uint32_t value = 0);
  void push_event(abi::AsyncEvent t, uint32_t num);
  void set_qp_state(uint32_t qpn, abi::QpState s);
  void fetch_wqes(uint32_t qpn, bool rq, uint64_t producer);
  void fetch_ring(uint32_t qpn, bool rq, uint64_t producer);
  void deliver_fetches(uint32_t qpn, bool rq);
  void queue_wqe(uint32_t qpn, bool rq, const Wqe& w, uint64_t index);

  // --- SQ engine (sq_engine.cc) ---
  void activate(uint32_t qpn);
  void tx_kick();
  void tx_step();
  bool issue_one(uint32_t qpn);
  bool issue_sq(uint32_t qpn, Qp& q);
  bool issue_response(uint32_t qpn, Qp& q);
  bool check_wqe(Qp& q, SqEntry& e);
  // Translates bytes [off, off + len) of a WQE's SGE list, SGE by SGE (chunks appended, xlat
  // cycles added); stops at the first SGE that fails and returns its status.
  XlatStatus translate_sges(const Wqe& w, uint64_t off, uint32_t len, uint8_t access, uint32_t pd,
                            std::vector<XlatChunk>* chunks, uint64_t* cycles) const;
  void gather_chunks(TxSeg* seg, std::vector<XlatChunk> chunks, uint64_t start_ps);
  void tx_emit();
  TxSeg* new_seg(uint32_t qpn, const Qp& q);
  uint32_t max_payload(bool tagged) const;
  void queue_terminate(uint32_t qpn, const rdmap::TermCause& why, const rdmap::Segment& bad,
                       const uint8_t* bad_ddp, size_t bad_len, std::function<void()> after);

  // --- RX engine (rx_engine.cc) ---
  void rx_push(RxItem&& it);
  void rx_step();
  void rx_ack(const eth::Mac& peer, uint32_t ack);
  // Returns the cycles the segment's processing took (to its writes / its verdict).
  void rx_segment(efe::EfePassThrough::RxSegment& s, const RxParseResult& pr);
  void rx_terminate(uint32_t qpn, Qp& q, const uint8_t* p, size_t n);
  void fail_qp(uint32_t qpn, const rdmap::TermCause& why, const rdmap::Segment& h,
               const efe::EfePassThrough::RxSegment& s, abi::AsyncEvent ev, int recv_status);

  // --- SQ completion and flushes (completion.cc), CQEs to the completion engine ---
  void try_complete(uint32_t qpn);
  void flush_qp(uint32_t qpn);
  void post_cqe(uint32_t cqn, Cqe c);
  void cq_error(uint32_t cqn);

  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }
  void mark(Probe p, uint32_t id, uint64_t t_ps) const {
    if (probe) probe(p, id, t_ps);
  }
  uint64_t cycles_ps(uint64_t cycles) const { return cycles * clk_.period_ps; }
  // Cycles to copy one WQE into the on-chip queue: ceil(128 / datapath).
  uint64_t wqe_copy_cycles() const {
    return (kWqeBytes + uint64_t(cfg_.datapath_bytes) - 1) / uint64_t(cfg_.datapath_bytes);
  }
  void place(uint32_t qpn, const std::vector<XlatChunk>& chunks, const uint8_t* data,
             uint64_t at_ps);

  CoreConfig cfg_;
  MacConfig mac_;
  ClockDomain clk_;
  RnicDmac& dmac_;
  RnicRegs& regs_;
  efe::EfePassThrough& efe_;
  EventQueue eq_{"eq"};
  XlatBlock xlat_;               // the SMT and PBLMT with their write port, and translation
  ReadResponseLogic responses_;  // the read-response engine's queues (read_response.h)
  RecvLogic recv_;               // the RX engine's RQs and expected MSNs (recv_queue.h)
  SendQueueLogic send_;          // the SQ engine's SQs, progress and ORD (send_queue.h)
  std::unique_ptr<RxParseChannel> rx_parse_;
  CompletionEngine completion_;
  std::vector<Qp> qps_;

  // command processor
  bool cmd_busy_ = false;
  std::deque<uint32_t> events_;

  // SQ engine
  std::deque<uint32_t> active_;  // QPs with work, round robin
  bool tx_scheduled_ = false;
  uint64_t tx_next_ps_ = 0;  // earliest edge for the next issue
  std::deque<std::unique_ptr<TxSeg>> tx_q_;
  uint64_t tx_buffered_ = 0;
  bool emit_scheduled_ = false;
  std::map<eth::Mac, std::deque<Unacked>> unacked_;  // per peer

  // RX engine
  std::deque<RxItem> rx_q_;
  bool rx_busy_ = false, rx_stalled_ = false;

  Counter &tx_segments_, &tx_payload_bytes_, &tx_terminates_, &rx_segments_, &rx_payload_bytes_,
      &rx_dropped_, &rx_terminates_, &rx_errors_, &commands_, &events_raised_, &local_errors_;
  Counter& rx_fifo_max_;
  Counter &wqe_fetches_, &wqe_fetch_errors_;
  uint64_t epoch_seq_ = 0;
};

}  // namespace rnic
