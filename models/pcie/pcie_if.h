// The card's PCIe interface (DESIGN.md §3.2): BAR decode for the host's MMIO, and the TLP port
// of the card's requester (the DMAC, models/rnic/dmac/dmac.h): it carries the requester's MRd and
// MWr TLPs onto the link and hands the completions that come back to it. Splitting, tags,
// reassembly and completion timeouts are the DMAC's, not this block's.
//
// Timing (core_clk cycles, edges aligned):
//   - MMIO read: the CplD (or Cpl UR for an address no BAR decodes, or a register that does not
//     exist) is queued if_cycles + reg_read_cycles + if_cycles after the MRd arrives.
//   - MMIO write: applied if_cycles + reg_write_cycles after the MWr arrives; posted credits are
//     released then.
//   - Requester TLPs enter the link when sent, completions go to the requester when they arrive
//     (the DMAC's face counts the I/F crossing, if_cycles, on its side).
// Queue depths: none of its own (the link's credits and queues hold TLPs).
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

class PcieIf : public sc_core::sc_module {
 public:
  PcieIf(sc_core::sc_module_name n, PcieLink& link, const PcieIfParams& p, StatRegistry& stats);

  void set_bar(int bar, Bar b) { bars_[bar] = b; }
  void set_target(RegisterTarget* t) { target_ = t; }
  void configure(const PcieIfParams& p);

  // The requester's TLP (MRd or MWr) onto the link now.
  void send(Tlp t);
  // Where completions for the requester go (CplD and Cpl, as they arrive), with their arrival
  // time.
  void set_completion_sink(std::function<void(Tlp&&, uint64_t at)> sink) {
    completions_ = std::move(sink);
  }
  // Completions for which `later` holds do not wake the requester: it takes them itself
  // (take_completions) before it needs them, or with the next completion that wakes it. It
  // must not hold for the host's MMIO requests.
  void set_completions_later(std::function<bool(const Tlp&)> later) {
    link_.set_later(PcieLink::kCard, std::move(later));
  }
  // Hands the requester the completions that arrived by `upto_ps` (at most now), in order.
  void take_completions(uint64_t upto_ps) { link_.take_arrived(PcieLink::kCard, upto_ps); }

 private:
  void receive(Tlp&& t);
  uint64_t edge(uint64_t cycles) const { return clk_.edge_after(now_ps(), cycles); }

  PcieLink& link_;
  PcieIfParams cfg_;
  ClockDomain clk_;
  EventQueue eq_{"eq"};
  Bar bars_[6];
  RegisterTarget* target_ = nullptr;
  std::function<void(Tlp&&, uint64_t)> completions_;
  Counter& mmio_reads_;
  Counter& mmio_writes_;
  Counter& mmio_ur_;
  Counter& dma_reads_;
  Counter& dma_writes_;
  Counter& dma_write_bytes_;
};

}  // namespace rnic::pcie
