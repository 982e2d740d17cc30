// rnic_dmac's DMA service: the card's bus-master DMA as the engines use it (DESIGN.md §3.3, §4).
// An engine asks for a read (address, length, and what to do with the data) or a write, and
// reacts when the read's data arrives. This module drives the block's cycle contract
// (dmac_core.h) — the model or the RTL, as the run chose — edge by edge, between the engines and
// the PCIe I/F, which only carries TLPs.
//
// Timing (core_clk cycles, edges aligned; if_cycles is pcie.if_cycles, the I/F crossing):
//   - a read is presented to the block if_cycles after it is made, a write (and its data, one
//     beat per cycle behind the writes before it) too; one read and one write per cycle;
//   - a TLP goes to the I/F at the edge that takes its last beat (the block sends one beat per
//     cycle, an MWr's payload from MPS / datapath beats);
//   - a completion's beats enter the block from the first edge after it arrives, one per cycle;
//   - a read's callback runs if_cycles after the edge that takes its done;
//   - an MSI-X is a 4-byte write and keeps its place behind earlier writes.
// The block is clocked only at edges where it has work (busy, an input it can take, its oldest
// piece's timeout); when it wakes it is told how many cycles passed. With the C++ model, a
// completion that cannot end a piece (it only fills a read's buffer) does not wake the wrapper:
// the wrapper takes the completions that have arrived from the link (PcieIf::take_completions)
// before it clocks any edge, so each still enters at the first edge after its arrival. With the C++
// model, the wrapper wakes only by the first edge at which something can leave the block (a TLP's
// last beat on tx, a read's done on rd: DmacModel::quiet_edges, the completions queued here that
// can end a piece (a failed one, or a piece's last: the others only fill a read's buffer), the
// requests not yet taken) and clocks the edges with work before it on the way, in order, with the
// inputs they would have had: a request made from now on is due if_cycles (>= 2) edges after now
// and a completion arriving now enters at the next edge, so every input of an edge up to now is
// known. An input that could make an output leave sooner wakes it by then. So the edges of an
// MWr's beats or a completion's are clocked in one wake, not one wake each; what the rest of
// the card sees happens at its own edge. (A wake used to clock the next edge too when nothing
// could reach or leave it; once completions that fill a read's buffer stopped waking the block,
// that edge cost more as a single step than it saved, and it waits for the next wake's run.)
// Within a wake, a run of edges at which only beats move
// (an MWr's, a completion's, the write data's: DmacModel::beat_edges) is clocked at once, its
// bytes copied in one piece (BeatRunsMatchTheirEdges compares it with every edge clocked). The RTL,
// a recorded run (its record is in the order edges happen) and a traced block keep one wake per
// edge with work; the rtl_* checks compare the two, and same_cycles the runs of both ways.
// (Clocking ahead of simulated time where nothing else could act first saved about 10% of a run's
// wall time, but moved the order in which same-time events of other blocks met the DMA's: a traced
// run, which could not clock ahead, then differed from the untraced one.) Queue depths: the block's
// (dmac_core.h); requests it cannot take yet wait here in order.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/block.h"
#include "models/common/event_queue.h"
#include "models/common/ring.h"
#include "models/common/scheduler.h"
#include "models/common/stats.h"
#include "models/common/trace_sink.h"
#include "models/pcie/pcie_if.h"
#include "models/rnic/dmac/dmac_core.h"
#include "models/rnic/rnic_params.h"

namespace rnic {

// Makes the block's implementation for the DMA service (BlockArgs: its name, core.dma_bytes and
// the core clock).
using DmacCoreFactory = BlockFactory<DmacCore>;
DmacCoreFactory dmac_model_factory();

// The block for the run record (block.h): what rnic_dmac does that its users see, at the edge
// it does it: each TLP's last beat on tx (it goes to the PCIe I/F when taken), and each read's
// done with a digest of the bytes its completions put on rw and when.
class DmacCore::Recorded : public DmacCore {
 public:
  Recorded(std::unique_ptr<DmacCore> in, AnswerLog& log, const BlockArgs& a);
  void edge(const DmacIn& in) override;
  const DmacOut& out() const override { return in_->out(); }
  int bytes() const override { return in_->bytes(); }
  int max_tags() const override { return in_->max_tags(); }
  const char* impl() const override { return in_->impl(); }
  void trace(TraceSink& t) const override { in_->trace(t); }

 private:
  std::unique_ptr<DmacCore> in_;
  AnswerLog& log_;
  uint32_t tx_, rd_;
  std::array<uint64_t, 256> rw_digest_{};  // by read id
};

class RnicDmac : public sc_core::sc_module {
 public:
  using ReadDone = std::function<void(DmacStatus, std::vector<uint8_t>&&)>;

  // core: makes the implementation.
  RnicDmac(sc_core::sc_module_name n, pcie::PcieIf& pcie, const DmacParams& p, StatRegistry& stats,
           const DmacCoreFactory& core = dmac_model_factory());
  ~RnicDmac() override;
  // Applies changed PCIe parameters between the points of a sweep (nothing outstanding): the
  // block is reset with them.
  void configure(const DmacParams& p);

  void read(uint64_t addr, uint32_t len, ReadDone done);
  void write(uint64_t addr, std::vector<uint8_t> data);
  // MSI-X: a posted write of `data` to `addr`.
  void msi(uint64_t addr, uint32_t data);

  // As of the block's last clocked edge.
  int tags_in_use() const { return int(core_->out().tags_used); }
  // Reads made and not yet handed back (waiting to enter the block, or in it).
  size_t reads_in_flight() const { return reads_in_flight_; }
  const char* impl() const { return core_->impl(); }
  // Waveform: tags in use and DMA reads in flight, and the block's pins (<name>.pins: the
  // inputs of its last clocked edge and its outputs after it; a gated block holds both).
  void trace(TraceSink& t) const;

 private:
  struct Req {
    uint64_t due;  // edge
    uint64_t addr;
    uint32_t len;
    ReadDone done;
    uint64_t start_ps;
  };
  struct Wr {
    uint64_t due;
    uint64_t addr;
    uint32_t len;
    std::vector<uint8_t> data;  // moved to the wd stream when first presented
    bool streamed = false;
  };
  struct Slot {
    ReadDone done;
    uint64_t start_ps = 0;
    std::vector<uint8_t> data;
    uint64_t got = 0;  // bytes its completions brought (read_bytes, counted when it is done)
  };
  struct Cpl {
    uint64_t first;  // edge
    pcie::Tlp tlp;
  };
  void reset_core();
  void completion(pcie::Tlp&& t, uint64_t at);
  uint64_t due_edge() const;  // the edge a request made now reaches the block
  void wake_at(uint64_t edge, uint64_t out);
  void arm();
  void run();
  void step(uint64_t e);
  bool beats(uint64_t e, uint64_t now);
  void tx_header(const DmacOut& o);
  void took_cpl_beats(uint32_t n, bool last);
  void took_wd_beats(uint32_t n);
  uint64_t next_edge(uint64_t e) const;
  uint64_t first_output_edge() const;
  uint64_t edge_index(uint64_t t_ps, uint64_t cycles) const {
    return clk_.edge_after(t_ps, cycles) / clk_.period_ps;
  }
  DmacIn cfg_pins() const;

  pcie::PcieIf& pcie_;
  DmacParams cfg_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
  std::unique_ptr<DmacCore> core_;
  // The core is the C++ model itself: no RTL, and no recorder around it (the run record is kept
  // in the order edges happen).
  const bool own_model_;
  int B_;
  DmacIn in_;
  bool have_edge_ = false;  // an edge since the last reset
  // Whether run() may clock edges before or after its wake's (own_model_, if_cycles >= 2, not
  // traced: the RTL, a recorded run and a waveform keep one wake per edge with work).
  mutable bool batch_edges_ = false;  // trace() turns it off
  mutable bool traced_ = false;
  uint64_t last_edge_ = 0;
  uint64_t next_edge_ = UINT64_MAX;  // the next edge to clock
  uint64_t due_wake_ = UINT64_MAX;   // the edge run() must come by (<= the first output's)
  DmacModel* model_ = nullptr;       // own_model_'s core, for its quiet and beat edges
  const DmacOut* out_ = nullptr;     // core_->out(), asked at every edge
  Scheduler& sched_ = Scheduler::get();
  size_t wake_id_ = 0;                // the block's client of the scheduler
  uint64_t armed_edge_ = UINT64_MAX;  // the edge it wakes at (kNever: none)
  std::deque<Req> rq_;
  std::deque<Wr> wq_;
  std::deque<std::vector<uint8_t>> wd_;  // write data to stream, in write order
  size_t wd_pos_ = 0;                    // bytes of wd_.front() already sent
  GrowRing<Cpl> cp_;
  uint32_t cp_k_ = 0;  // beats of cp_.front() already sent
  std::vector<Slot> slots_;
  std::deque<uint8_t> free_ids_;
  size_t reads_in_flight_ = 0;
  pcie::Tlp tx_;  // the TLP whose beats are being taken
  Counter& read_bytes_;
  Counter& errors_;
  Counter& cpl_timeouts_;
  Histogram& read_ns_;
};

}  // namespace rnic
