// The card's PCIe interface (DESIGN.md §3.2): BAR decode for the host's MMIO, and the DMA
// service the card's blocks use to read and write host memory.
//
// Timing (core_clk cycles, edges aligned):
//   - MMIO read: the CplD (or Cpl UR for an address no BAR decodes, or a register that does not
//     exist) is queued if_cycles + reg_read_cycles + if_cycles after the MRd arrives.
//   - MMIO write: applied if_cycles + reg_write_cycles after the MWr arrives; posted credits are
//     released then.
//   - DMA: a request enters the link if_cycles after it is made; reads are split at MRRS and at
//     4 KiB boundaries, each piece holds one of `tags` tags until its last completion; writes are
//     split at MPS and at 4 KiB boundaries. A read's callback runs if_cycles after its last
//     completion; a piece without completion for cpl_timeout_us fails the read with kTimeout.
// Queue depths: DMA requests waiting for a tag are queued without bound (the DMAC bounds them).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <systemc>
#include <vector>

#include "models/common/event_queue.h"
#include "models/common/trace_sink.h"
#include "models/pcie/link.h"
#include "models/rnic/rnic_dmac.h"

namespace rnic::pcie {

// What the BARs lead to. Returns false for a register that does not exist (answered with UR).
class RegisterTarget {
 public:
  virtual ~RegisterTarget() = default;
  virtual bool reg_read(int bar, uint64_t offset, uint32_t len, uint8_t* out) = 0;
  virtual bool reg_write(int bar, uint64_t offset, const uint8_t* data, uint32_t len) = 0;
};

struct Bar {
  uint64_t base = 0, size = 0;
};

enum class DmaStatus { kOk, kUnsupported, kAbort, kTimeout };
const char* to_string(DmaStatus s);

class PcieIf : public sc_core::sc_module {
 public:
  using ReadDone = std::function<void(DmaStatus, std::vector<uint8_t>&&)>;

  PcieIf(sc_core::sc_module_name n, PcieLink& link, const PcieIfParams& p, StatRegistry& stats);

  void set_bar(int bar, Bar b) { bars_[bar] = b; }
  void set_target(RegisterTarget* t) { target_ = t; }
  void configure(const PcieIfParams& p);

  void dma_read(uint64_t addr, uint32_t len, ReadDone done);
  void dma_write(uint64_t addr, std::vector<uint8_t> data);
  // MSI-X: a posted write of `data` to `addr`.
  void msi(uint64_t addr, uint32_t data);

  int tags_in_use() const { return dmac_.tags_in_use(); }
  size_t reads_waiting() const { return dmac_.waiting(); }
  // Waveform: tags in use and DMA read pieces waiting for a tag.
  void trace(TraceSink& t) const {
    t.add_value(name(), "tags_in_use", 16, [this] { return uint64_t(dmac_.tags_in_use()); });
    t.add_value(name(), "reads_waiting", 32, [this] { return uint64_t(dmac_.waiting()); });
  }

 private:
  struct Pending {
    ReadDone done;
    uint64_t start_ps;
  };
  void receive(Tlp&& t);
  void issue_pieces();
  void finish_reads();
  void check_timeouts();
  void arm_timeout();
  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }

  PcieLink& link_;
  PcieIfParams cfg_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
  Bar bars_[6];
  RegisterTarget* target_ = nullptr;
  // rnic_dmac (models/rnic/rnic_dmac.h): splitting, tags, reassembly. This face adds the timing:
  // a request enters the link if_cycles after it is made, a read's callback runs if_cycles
  // after its last completion.
  DmacLogic dmac_;
  std::map<uint64_t, Pending> pending_;  // reads by DmacLogic id
  uint64_t timeout_ps() const { return uint64_t(cfg_.pcie.cpl_timeout_us) * 1000000; }
  // The timeout check is armed at the oldest piece's deadline or kTimeoutStepPs ahead, whichever is
  // sooner, and cancelled when nothing is outstanding. SystemC keeps a cancelled notification in
  // its timed queue until its time comes; arming a whole cpl_timeout ahead would leave one there
  // per idle gap (tens of thousands at line rate) and slow every timed event of the run.
  static constexpr uint64_t kTimeoutStepPs = 10'000'000;  // 10 us
  bool timeout_armed_ = false;
  sc_core::sc_event timeout_ev_;
  Counter& mmio_reads_;
  Counter& mmio_writes_;
  Counter& mmio_ur_;
  Counter& dma_reads_;
  Counter& dma_read_bytes_;
  Counter& dma_writes_;
  Counter& dma_write_bytes_;
  Counter& dma_errors_;
  Counter& cpl_timeouts_;
  Histogram& read_ns_;
};

}  // namespace rnic::pcie
