// The RNIC's register file behind BAR0 (kernel only) and BAR2 (one 4 KiB page per QP, mappable
// to a user process). The map is docs/registers.md. Registers are 32 bits (doorbells 64); any
// access of 1, 2, 4 or 8 bytes inside one register reads or writes those bytes of it; an offset
// with no register is an Unsupported Request.
// Latency: reads answer after core.reg_read_cycles, writes apply after core.reg_write_cycles
// (counted by the PCIe I/F around this block).
#pragma once

#include <cstdint>
#include <vector>

#include "models/pcie/pcie_if.h"
#include "sim/config.h"

namespace rnic {

namespace reg {
// BAR0
constexpr uint64_t kId = 0x0000;        // RO 0x524E4943 "RNIC"
constexpr uint64_t kVersion = 0x0004;   // RO major.minor.patch as 0x00MMmmpp
constexpr uint64_t kCapQp = 0x0008;     // RO number of QPs
constexpr uint64_t kCapCq = 0x000C;     // RO number of CQs
constexpr uint64_t kCapStag = 0x0010;   // RO number of SMT entries
constexpr uint64_t kCapPbl = 0x0014;    // RO number of PBLMT entries
constexpr uint64_t kControl = 0x0020;   // RW bit 0 enable
constexpr uint64_t kStatus = 0x0024;    // RO bit 0 ready (follows enable)
constexpr uint64_t kIntCause = 0x0028;  // RW1C interrupt causes
constexpr uint64_t kIntMask = 0x002C;   // RW interrupt mask (1 = enabled)
constexpr uint64_t kScratch = 0x0030;   // RW scratch
constexpr uint32_t kIdValue = 0x524E4943;
constexpr uint32_t kVersionValue = 0x00000100;
// BAR2, per-QP page
constexpr uint64_t kQpPage = 4096;
constexpr uint64_t kSqDoorbell = 0x000;  // WO 64: SQ producer index
constexpr uint64_t kRqDoorbell = 0x008;  // WO 64: RQ producer index
constexpr uint64_t kCqDoorbell = 0x010;  // RW 32: CQ consumer index (bit 31: arm)
constexpr uint64_t kQpStatus = 0x018;    // RO 32: QP number in bits 23:0
}  // namespace reg

class RnicRegs : public pcie::RegisterTarget {
 public:
  explicit RnicRegs(const CoreConfig& c);
  bool reg_read(int bar, uint64_t offset, uint32_t len, uint8_t* out) override;
  bool reg_write(int bar, uint64_t offset, const uint8_t* data, uint32_t len) override;

  uint64_t sq_doorbell(uint32_t qp) const { return qp_[qp].sq_db; }
  uint64_t rq_doorbell(uint32_t qp) const { return qp_[qp].rq_db; }

 private:
  struct QpRegs {
    uint64_t sq_db = 0, rq_db = 0;
    uint32_t cq_db = 0;
  };
  // Locates the register holding [offset, offset+len): its address, width and whether it can
  // be read / written. Returns nullptr for no register.
  struct Reg {
    uint64_t base;
    uint32_t width;
    bool readable, writable;
    uint64_t value;
  };
  bool find(int bar, uint64_t offset, uint32_t len, Reg* r) const;
  void store(int bar, const Reg& r, uint64_t v);

  CoreConfig cfg_;
  uint32_t control_ = 0, int_cause_ = 0, int_mask_ = 0, scratch_ = 0;
  std::vector<QpRegs> qp_;
};

}  // namespace rnic
