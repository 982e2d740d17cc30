// The completion engine (DESIGN.md §3.3): the Completion Management Table (one context per CQ:
// host ring base, size, producer and consumer indices, armed state, overflow) and the writing of
// CQEs into the host CQ rings, with the owner (phase) bit, and MSI-X for armed CQs. The other
// engines reach it through one request channel (in: a CQE for a CQ), the command processor
// through the table's write port (create, destroy) and the CQ doorbell (consumer index, arm).
// CompletionLogic holds the table and its decisions with no SystemC in it; CompletionEngine moves
// its CQEs in time.
//
// Timing (core_clk cycles): a CQE's 32-byte DMA write is issued cqe_cycles after its request,
// and at least cqe_cycles after the previous CQE's (one CQE per cqe_cycles, in request order);
// an armed CQ raises MSI-X (vector 1 + CQ number) right after the CQE's write is issued. A CQE
// for a full ring is not written: the CQ overflows (on_overflow), and takes no CQE after.
// Queue depths: requests wait in order (the request channel holds at most two per WQE slot of
// every QP: a WR's or receive's CQE, and its flush).
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

#include "models/common/channel.h"
#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/rnic/abi/codes.h"
#include "models/rnic/abi/wqe.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/host_if/rnic_regs.h"
#include "models/rnic/rnic_params.h"

namespace rnic {

struct CqContext {
  bool valid = false;
  uint64_t base = 0;  // host physical address of slot 0
  uint32_t entries = 0;
  uint64_t pi = 0, ci = 0;  // producer and consumer counts
  bool armed = false, solicited_only = false, error = false;
};

class CompletionLogic {
 public:
  explicit CompletionLogic(size_t cqs, uint32_t max_cqe) : cqs_(cqs), max_cqe_(max_cqe) {}

  // The table's write port. create() refuses a CQ number out of range or in use and a size of
  // 0 or above max_cqe; destroy() a CQ that is not in use.
  bool create(uint32_t cqn, uint64_t base, uint32_t entries);
  bool destroy(uint32_t cqn);
  bool valid(uint32_t cqn) const { return cqn < cqs_.size() && cqs_[cqn].valid; }
  // The CQ doorbell: the consumer count (modulo 2^32, widened next to the producer count) and,
  // when arm, the armed state (solicited_only: only solicited or error CQEs raise the event).
  void doorbell(uint32_t cqn, uint32_t ci, bool arm, bool solicited_only);

  enum class Post { kWrite, kDropped, kOverflow };
  // Takes the next slot of CQ cqn for a CQE: kWrite with its address and owner bit (1 on the
  // ring's first pass, 0 on the second, ...); kDropped for a CQ not in use or already in error;
  // kOverflow when the ring is full (the CQ is in error from then on).
  Post post(uint32_t cqn, uint64_t* addr, uint8_t* owner);
  // After a CQE's write: whether it raises the CQ's event (the CQ disarms when it does).
  bool notify(uint32_t cqn, bool solicited, bool error);
  const CqContext& cq(uint32_t cqn) const { return cqs_[cqn]; }
  size_t size() const { return cqs_.size(); }

 private:
  std::vector<CqContext> cqs_;
  uint32_t max_cqe_;
};

class CompletionEngine : public sc_core::sc_module {
 public:
  // MSI-X message data of CQ n's completion event (vector 0 is the async events').
  static constexpr uint32_t kFirstCqVector = 1;

  CompletionEngine(sc_core::sc_module_name n, const CoreConfig& cfg, RnicDmac& dmac, RnicRegs& regs,
                   StatRegistry& stats, const std::string& stat_group);

  CompletionLogic& table() { return logic_; }
  const CompletionLogic& table() const { return logic_; }
  // The request channel: a CQE for CQ cqn (its owner bit is the engine's to set), taken in
  // the engine's own event queue on the edge it is sent.
  struct Request {
    uint32_t cqn = 0;
    Cqe cqe;
  };
  Channel<Request> in;

  std::function<void(uint32_t cqn)> on_overflow;  // the CQ's QPs must fail
  // Probe: a CQE's write is issued now, to host address addr.
  std::function<void(uint32_t cqn, const Cqe& c, uint64_t addr)> on_cqe;

 private:
  void post(uint32_t cqn, Cqe c);

  CoreConfig cfg_;
  ClockDomain clk_;
  RnicDmac& dmac_;
  RnicRegs& regs_;
  EventQueue eq_{"eq"};
  CompletionLogic logic_;
  uint64_t next_ps_ = 0;  // earliest issue of the next CQE
  Counter &cqes_, &overflows_;
};

}  // namespace rnic
