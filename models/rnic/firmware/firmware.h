// The firmware controller (DESIGN.md §3.3): an embedded processor on the card that runs the
// command queue's commands (docs/firmware.md). The driver writes commands into the queue's
// slots in BAR0 and the producer count; the firmware takes each new command, runs its handler
// and writes the card's tables only through their write ports: the SMT and PBLMT through
// xlat's (XlatChannel), the CQ table through the completion engine's (CompletionLogic), the QP
// contexts through the host interface's (QpContextPort). It then writes the command's
// completion word, advances the consumer count and, when the command asks, raises kIntCommand
// (MSI-X data reg::cmd_vector(core.cqs)).
//
// State (its own): the commands taken and not yet completed, in queue order; whether the
// processor is busy.
//
// Timing, in firmware.clk_mhz cycles (F = firmware.*; all actions on a rising edge):
//   A command is taken at the producer write. The processor runs one piece of work at a time:
//     handler    F.dispatch_cycles + the command's handler cycles (F.cq_cycles, F.qp_cycles,
//                F.mr_cycles); REG_MR and LOAD_PBL then DMA-read their list
//     entries    after the list's data is in: count x F.pbl_entry_cycles (page addresses) or
//                count x F.extent_entry_cycles (extents)
//   A command completes (its table writes, completion word, consumer count, interrupt) on the
//   edge its last piece ends, and never before the command ahead of it.
//   One at a time (F.pipelined false): the next command's handler starts when the one ahead has
//   completed. Pipelined: the processor takes the next command's handler while one waits for
//   its DMA read; a command whose list has arrived goes ahead of a new handler.
//   Extent switches (F.extent_switch "firmware"): F.extent_switch_cycles per extent boundary of
//     a translation, run by the processor ahead of any command's next piece (waiting for the
//     piece it is running).
//   Local operations (LocalOpPort) cost what REG_MR does (a fast registration: dispatch +
//   mr_cycles, its page list's DMA read, pbl_entry_cycles per page; a local invalidation:
//   dispatch + mr_cycles); they run one at a time in the order given and take the processor
//   ahead of the queue's commands; the status goes back on the edge the last piece ends.
//   Page faults (on-demand paging, PageFaultPort): a fault on a PBLMT entry no other waiting
//   operation has reported yet is written into the host's fault ring (reg::kFaultSlots records)
//   F.fault_cycles after it, with its interrupt (kIntPageFault, MSI-X data reg::fault_vector);
//   this logic runs beside the processor. ODP_MAP (handler + its list's DMA read + entries)
//   resumes, on the edge it completes, every operation waiting on an entry it wrote; ODP_UNMAP
//   costs the handler + count x F.pbl_entry_cycles.
// Depths: kCmdSlots commands posted and not completed; the fault ring's reg::kFaultSlots
// records (more wait in the firmware until the driver takes some). A producer write that goes
// backwards or posts more than that is ignored, logged and counted (firmware.bad_doorbells).
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/rnic/abi/regs.h"
#include "models/rnic/completion/completion_engine.h"
#include "models/rnic/dmac/dmac.h"
#include "models/rnic/engine_msgs.h"
#include "models/rnic/firmware/extent_switch.h"
#include "models/rnic/firmware/firmware_params.h"
#include "models/rnic/host_if/qp_table.h"
#include "models/rnic/host_if/rnic_regs.h"
#include "models/rnic/xlat/xlat_channel.h"

namespace rnic {

class Firmware : public sc_core::sc_module,
                 public CommandQueueListener,
                 public LocalOpPort,
                 public PageFaultPort {
 public:
  // The tables' write ports.
  struct Ports {
    XlatChannel& xlat;
    CompletionLogic& cqs;
    QpContextPort& qps;
  };

  Firmware(sc_core::sc_module_name n, const FirmwareConfig& cfg, uint32_t cq_count, RnicDmac& dmac,
           RnicRegs& regs, Ports ports, const ProbeFn& probe, StatRegistry& stats,
           const std::string& stat_group);

  // The translation port the engines use: xlat's, or with firmware.extent_switch "firmware" the
  // firmware's in front of it (extent_switch.h).
  XlatChannel& engine_xlat() { return switch_ ? *switch_ : ports_.xlat; }
  // MSI-X message data of a command's completion interrupt.
  uint32_t vector() const { return vector_; }

  // CommandQueueListener
  void command_doorbell(uint32_t producer) override;
  // LocalOpPort: the SQ engine's fast registrations and local invalidations, in the order
  // given, one at a time, ahead of the queue's commands when the processor is free.
  void local_op(uint32_t qpn, uint32_t pd, const Wqe& w, EventQueue& to,
                std::function<void(uint8_t status)> done) override;
  // PageFaultPort: the operation waits on the fault's PBLMT entry; the first fault on an entry
  // not yet reported goes to the driver as a record in the fault ring.
  void page_fault(uint32_t qpn, const XlatFault& f, bool write, EventQueue& to,
                  std::function<void(bool ok)> resume) override;
  void fault_consumer(uint32_t consumer) override;

  std::string dump_state() const;

 private:
  enum class Stage { kNew, kDma, kData, kReady };
  struct Cmd {
    uint32_t seq = 0;  // producer count that posted it (index + 1)
    uint32_t op = 0, flags = 0;
    std::array<uint32_t, reg::kCmdArgCount> a{};
    Stage stage = Stage::kNew;
    uint32_t result = 0, value = 0;
    std::vector<uint8_t> data;  // REG_MR / LOAD_PBL / fast registration: the list
    // A local operation (LocalOpPort): its WQE, its QP's PD and where its status goes.
    bool local = false;
    uint32_t pd = 0;
    Wqe w;
    EventQueue* to = nullptr;
    std::function<void(uint8_t)> reply;
  };
  // A fast-registration STag (ALLOC_FAST_MR): its PD and PBLMT range.
  struct FastMr {
    uint32_t pd = 0, pbl_first = 0, max_pages = 0;
  };
  // An on-demand region (REG_MR of kStagOnDemand): where its pages' entries are.
  struct OdpMr {
    uint64_t base_to = 0;
    uint32_t first_page_offset = 0, pbl_first = 0, pbl_count = 0;
  };
  // An operation waiting on a fault: the PBLMT entry of its absent page.
  struct Waiter {
    uint32_t entry = 0;
    EventQueue* to = nullptr;
    std::function<void(bool)> resume;
  };
  struct FaultRecord {
    uint32_t qpn = 0, stag = 0, flags = 0;
    uint64_t to = 0, end = 0;
    uint64_t due = 0;  // when its record may be written (F.fault_cycles after the fault)
  };
  void write_faults();
  // Extent switches (firmware.extent_switch "firmware"): `cycles` of the processor's time,
  // ahead of any command's next piece; `done` on the edge they end.
  void occupy(uint64_t cycles, std::function<void()> done);
  void resume(uint32_t first, uint32_t count, bool ok);

  void kick();
  void handler_done(uint32_t seq);
  void entries_done(uint32_t seq);
  void retire();
  uint32_t apply(const Cmd& c);
  uint8_t apply_local(const Cmd& c);
  // The list a command (REG_MR, LOAD_PBL) or a fast registration reads: its first PBLMT
  // entry, entries, host address, extents or pages. False: the command reads none.
  struct List {
    uint32_t first = 0, count = 0;
    uint64_t addr = 0;
    bool extents = false;
  };
  bool list_of(const Cmd& c, List* l) const;
  uint64_t handler_cycles(const Cmd& c) const;
  uint64_t entry_cycles(const Cmd& c) const;
  Cmd* find(uint32_t seq);
  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }

  FirmwareConfig cfg_;
  ClockDomain clk_;
  uint32_t vector_, fault_vector_;
  RnicDmac& dmac_;
  RnicRegs& regs_;
  Ports ports_;
  ProbeTap mark_;
  EventQueue eq_{"eq"};
  std::deque<Cmd> cmds_;  // taken, not completed, in queue order
  std::deque<Cmd> ops_;   // local operations, in the order given
  std::deque<std::pair<uint64_t, std::function<void()>>> switch_q_;  // extent switches waiting
  uint32_t op_seq_ = 0x80000000u;
  std::unordered_map<uint32_t, FastMr> fast_;  // by SMT index
  std::unordered_map<uint32_t, OdpMr> odp_;    // by SMT index
  std::vector<Waiter> waiting_;                // operations parked on a fault
  std::deque<FaultRecord> faults_;             // records not yet written (the ring is full)
  uint32_t taken_ = 0;                         // producer count taken
  uint32_t done_ = 0;                          // commands completed
  bool busy_ = false;

  Counter &commands_, &errors_, &bad_doorbells_, &busy_cycles_, &local_ops_, &extent_switches_,
      &page_faults_, &fault_records_, &fault_resumes_;
  std::unique_ptr<ExtentSwitchXlat> switch_;
};

}  // namespace rnic
