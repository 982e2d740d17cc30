// rnic_dmac's burst face: the card's bus-master DMA as the engines use it (DESIGN.md §3.3, §4).
// An engine asks for a read (address, length, and what to do with the data) or a write, and
// reacts when the read's data arrives; DmacLogic (rnic_dmac.h) splits, tags and reassembles, and
// this module moves its TLPs through the PCIe I/F, which only carries them.
//
// Timing (core_clk cycles, edges aligned; if_cycles is pcie.if_cycles, the I/F crossing):
//   - a read joins the tag queue if_cycles after it is made; its MRds enter the link as tags
//     free up (at once when free); a piece holds its tag until its last completion;
//   - a read's callback runs if_cycles after its last completion (or its failure);
//   - a write's MWrs (MPS and 4 KiB splits) enter the link if_cycles after it is made; an
//     MSI-X is a 4-byte write and keeps its place behind earlier writes;
//   - a piece without completion for pcie.cpl_timeout_us fails its read with kTimeout.
// Queue depths: reads waiting for a tag are not bounded here (the engines bound what they ask).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <systemc>
#include <vector>

#include "models/common/event_queue.h"
#include "models/common/stats.h"
#include "models/common/trace_sink.h"
#include "models/pcie/pcie_if.h"
#include "models/rnic/rnic_dmac.h"
#include "models/rnic/rnic_params.h"

namespace rnic {

class RnicDmac : public sc_core::sc_module {
 public:
  using ReadDone = std::function<void(DmacStatus, std::vector<uint8_t>&&)>;

  RnicDmac(sc_core::sc_module_name n, pcie::PcieIf& pcie, const DmacParams& p, StatRegistry& stats);
  // Applies changed PCIe parameters between the points of a sweep (nothing outstanding).
  void configure(const DmacParams& p);

  void read(uint64_t addr, uint32_t len, ReadDone done);
  void write(uint64_t addr, std::vector<uint8_t> data);
  // MSI-X: a posted write of `data` to `addr`.
  void msi(uint64_t addr, uint32_t data);

  int tags_in_use() const { return logic_.tags_in_use(); }
  size_t reads_waiting() const { return logic_.waiting(); }
  // Waveform: tags in use and DMA read pieces waiting for a tag.
  void trace(TraceSink& t) const {
    t.add_value(name(), "tags_in_use", 16, [this] { return uint64_t(logic_.tags_in_use()); });
    t.add_value(name(), "reads_waiting", 32, [this] { return uint64_t(logic_.waiting()); });
  }

 private:
  struct Pending {
    ReadDone done;
    uint64_t start_ps;
  };
  void completion(pcie::Tlp&& t);
  void issue_pieces();
  void finish_reads();
  void check_timeouts();
  void arm_timeout();
  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }
  uint64_t timeout_ps() const { return uint64_t(cfg_.pcie.cpl_timeout_us) * 1000000; }

  pcie::PcieIf& pcie_;
  DmacParams cfg_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
  DmacLogic logic_;
  std::map<uint64_t, Pending> pending_;  // reads by DmacLogic id
  // The timeout check is armed at the oldest piece's deadline or kTimeoutStepPs ahead, whichever
  // is sooner, and cancelled when nothing is outstanding. SystemC keeps a cancelled notification
  // in its timed queue until its time comes; arming a whole cpl_timeout ahead would leave one
  // there per idle gap (tens of thousands at line rate) and slow every timed event of the run.
  static constexpr uint64_t kTimeoutStepPs = 10'000'000;  // 10 us
  bool timeout_armed_ = false;
  sc_core::sc_event timeout_ev_;
  Counter& read_bytes_;
  Counter& errors_;
  Counter& cpl_timeouts_;
  Histogram& read_ns_;
};

}  // namespace rnic
