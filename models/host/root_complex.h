// The root complex: the host's end of the PCIe link (DESIGN.md §3.2). It serves the card's DMA
// against host physical memory and carries the CPU's MMIO to the card.
//
// Timing:
//   - card MRd: the first CplD is queued rc_read_latency_ns after the MRd arrived; completions
//     are at most MPS bytes and end on read-completion-boundary (RCB) multiples; the request's
//     non-posted credit is released when it is serviced.
//   - card MWr: the data is in memory rc_write_latency_ns after the MWr arrived, and its posted
//     credits are released then. An MWr to the MSI-X window raises an interrupt instead.
//   - holes: an MRd there is answered with Cpl UR, or not at all (host.hole_behaviour); an MWr
//     there, or past the end of memory, is dropped and counted.
//   - CPU MMIO read: mmio_issue_ns, MRd on the link, the CplD, mmio_return_ns; the calling thread
//     stalls for all of it. MMIO write: mmio_issue_ns, then posted.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <systemc>
#include <unordered_map>
#include <vector>

#include "models/host/host_params.h"
#include "models/host/phys_mem.h"
#include "models/pcie/link.h"

namespace rnic::host {

constexpr uint64_t kMsiBase = 0xFEE00000;  // x86 MSI address window
constexpr uint64_t kMsiSize = 0x100000;

class RootComplex : public sc_core::sc_module {
 public:
  RootComplex(sc_core::sc_module_name n, PhysMem& mem, pcie::PcieLink& link, const PcieConfig& pcie,
              const CostConfig& cost, StatRegistry& stats);

  // From a host SC_THREAD. Returns the data, or an empty vector with *status set on UR/CA.
  std::vector<uint8_t> mmio_read(uint64_t addr, uint32_t len, pcie::CplStatus* status = nullptr);
  void mmio_write(uint64_t addr, std::vector<uint8_t> data);
  // A register access as the CPU makes it: a little-endian load of 4 bytes (0 on UR/CA), a
  // little-endian store of the low `bytes` bytes of v.
  uint32_t mmio_read32(uint64_t addr);
  void mmio_write_le(uint64_t addr, uint64_t v, uint32_t bytes);

  std::function<void(uint64_t addr, uint32_t data)> on_msi;
  // Every card write that reached memory (CPU-side watchers: a CQ ring being polled).
  std::function<void(uint64_t addr, uint32_t len)> on_write;
  // Between the points of a sweep: no card TLP waits for its action.
  void configure(const PcieConfig& pcie, const CostConfig& cost);
  // Waveform: CPU MMIO reads waiting for their completion.
  void trace(TraceSink& t) const {
    t.add_value(name(), "mmio_reads_pending", 8, [this] { return pending_.size(); });
  }

  // Observed by benchmarks: when the last card write reached memory, and how many bytes.
  uint64_t last_write_ps() const { return last_write_ps_; }

 private:
  void receive(pcie::Tlp&& t);
  void write(pcie::Tlp t);
  void serve_read(pcie::Tlp t);
  // How long after its arrival the root complex takes a card TLP, by type.
  pcie::PcieLink::Hold holds() const;

  PhysMem& mem_;
  pcie::PcieLink& link_;
  PcieConfig pcie_;
  CostConfig cost_;
  struct Pending {
    sc_core::sc_event done;
    std::vector<uint8_t> data;
    pcie::CplStatus status = pcie::CplStatus::kSc;
  };
  std::unordered_map<uint16_t, Pending*> pending_;
  uint16_t next_tag_ = 0;
  uint64_t last_write_ps_ = 0;
  Counter& reads_served_;
  Counter& read_bytes_;
  Counter& writes_;
  Counter& write_bytes_;
  Counter& dropped_writes_;
  Counter& ur_reads_;
  Counter& unanswered_reads_;
  Counter& msis_;
  Counter& mmio_reads_;
  Counter& mmio_writes_;
  Histogram& mmio_read_ns_;
};

}  // namespace rnic::host
