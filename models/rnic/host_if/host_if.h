// The RNIC Core's host interface (DESIGN.md §3.3): the SQ/RQ/CQ doorbells of BAR2, the async
// event FIFO, the QP context (state machine and attributes) with its write port for the
// firmware controller (QpContextPort: create, modify, destroy), the copy of WQEs from the BAR2
// windows (or their DMA fetch from host-memory rings) into the on-chip queues. The command
// queue is the firmware's (models/rnic/firmware/firmware.h).
//
// State (its own): the QP contexts and their state machine (QpTable, qp_table.h: QpCtx plus
// doorbell counts and ring bases), the WQE fetches and copy-ins under way, the event FIFO.
// Channels (engine_msgs.h): takes QpErrorMsg (every engine) and CQ overflows (completion
// engine); gives QpUpdate to the SQ, RX and read-response engines (every change of a QP's
// context, in that order), SQ WQEs to the SQ engine and RQ WQEs to the RX engine.
//
// Timing, in core_clk cycles (C = core.*; all actions on a rising edge):
//   QP writes          a firmware write of a QP context reaches the engines (QpUpdate) on the
//                      edge the firmware completes the command.
//   Doorbells          SQ/RQ: each new WQE is copied from the window into the on-chip queue in
//                      ceil(128 / datapath) cycles; the SQ engine sees an SQ WQE after that.
//                      Host-ring mode (CREATE_QP flag kQpHostRings): kRingFetchCycles after the
//                      doorbell the new WQEs are read from the ring by DMA (whole 128-byte
//                      slots; two reads where they wrap); when a fetch's data is in (and every
//                      earlier fetch of the queue has been taken) its WQEs enter the on-chip
//                      queue ceil(128 / datapath) cycles apart, as in MMIO mode. A failed read
//                      moves the QP to ERROR with abi::kEvQpFatal.
//   Errors             an engine's QpErrorMsg moves the QP to ERROR on the edge it arrives.
// Depths: the event FIFO is not bounded (one entry per event).
#pragma once

#include <deque>
#include <systemc>
#include <vector>

#include "models/common/channel.h"
#include "models/common/event_queue.h"
#include "models/common/lazy_deque.h"
#include "models/common/stats.h"
#include "models/rnic/completion/completion_engine.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/engine_msgs.h"
#include "models/rnic/host_if/qp_table.h"
#include "models/rnic/host_if/rnic_regs.h"

namespace rnic {

class HostInterface : public sc_core::sc_module, public RegListener, public QpContextPort {
 public:
  static constexpr uint64_t kRingFetchCycles = 1;  // doorbell -> WQE fetch read requested
  // MSI-X message data of the async events (a CQ's completion event is the completion
  // engine's: CompletionEngine::kFirstCqVector + CQ number).
  static constexpr uint32_t kAsyncVector = 0;

  HostInterface(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac, RnicRegs& regs,
                CompletionEngine& completion, const ProbeFn& probe, StatRegistry& stats,
                const std::string& stat_group);

  // RegListener
  void sq_doorbell(uint32_t qp, uint64_t producer) override;
  void rq_doorbell(uint32_t qp, uint64_t producer) override;
  void cq_doorbell(uint32_t qp, uint64_t value) override;
  uint32_t qp_state(uint32_t qp) const override;
  uint32_t pop_event() override;
  // QpContextPort
  bool create_qp(const abi::CreateQp& c) override;
  bool modify_qp(const abi::ModifyQp& m) override;
  bool destroy_qp(uint32_t qpn) override;

  struct In {
    Channel<QpErrorMsg> error;
    Channel<uint32_t> cq_overflow;  // CQ number
  } in;
  struct Out {
    std::vector<Channel<QpUpdate>*> update;  // SQ, RX, read-response engines
    Channel<WqeMsg>* sq_wqe = nullptr;
    Channel<WqeMsg>* rq_wqe = nullptr;
    Channel<CloseMsg>* close = nullptr;  // SQ engine
  } out;

  std::string dump_state() const;

 private:
  struct Fetch {
    uint64_t first = 0;  // producer count of its first WQE
    uint32_t count = 0;
    uint32_t pending = 0;  // DMA reads still out (a fetch that wraps the ring is two)
    bool failed = false;
    std::vector<uint8_t> data;  // count x 128 B
  };
  // Per QP and queue (0 SQ, 1 RQ): the host-ring fetches in doorbell order (a fetch's WQEs
  // enter the queue only after every earlier fetch's) and when the queue's WQE copy-in is free.
  struct Copy {
    LazyDeque<Fetch> fetches[2];
    uint64_t copy_free_ps[2] = {0, 0};
  };

  void push_event(abi::AsyncEvent t, uint32_t num);
  void set_qp_state(uint32_t qpn, abi::QpState s);
  void broadcast(uint32_t qpn, QpTable::Change change);
  void fetch_wqes(uint32_t qpn, bool rq, uint64_t producer);
  void fetch_ring(uint32_t qpn, bool rq, uint64_t first, uint64_t producer);
  void deliver_fetches(uint32_t qpn, bool rq);
  void queue_wqe(uint32_t qpn, bool rq, const Wqe& w, uint64_t index);
  void cq_error(uint32_t cqn);
  // The host ends a connected QP (destroy, or ERROR from RTR/RTS): its peer is told.
  void close_if_connected(uint32_t qpn);

  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }
  // Cycles to copy one WQE into the on-chip queue: ceil(128 / datapath).
  uint64_t wqe_copy_cycles() const {
    return (kWqeBytes + uint64_t(cfg_.datapath_bytes) - 1) / uint64_t(cfg_.datapath_bytes);
  }

  CoreConfig cfg_;
  ClockDomain clk_;
  RnicDmac& dmac_;
  RnicRegs& regs_;
  CompletionEngine& completion_;
  ProbeTap mark_;
  EventQueue eq_{"eq"};
  QpTable qps_;
  std::vector<Copy> copy_;
  std::deque<uint32_t> events_;

  Counter &events_raised_, &wqe_fetches_, &wqe_fetch_errors_;
};

}  // namespace rnic
