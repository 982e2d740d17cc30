// The RNIC's register file behind BAR0 (kernel only) and BAR2 (one 4 KiB page per QP, mappable
// to a user process). The map is docs/registers.md. Registers are 32 bits (doorbells 64); any
// access of 1, 2, 4 or 8 bytes inside one register reads or writes those bytes of it; an offset
// with no register is an Unsupported Request.
// Latency: reads answer after core.reg_read_cycles, writes apply after core.reg_write_cycles
// (counted by the PCIe I/F around this block).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "models/pcie/pcie_if.h"
#include "models/rnic/abi/regs.h"
#include "models/rnic/rnic_params.h"

namespace rnic {

// What the register file starts in the core: doorbells, commands; and what it reads from it.
class RegListener {
 public:
  virtual ~RegListener() = default;
  virtual void sq_doorbell(uint32_t qp, uint64_t producer) = 0;
  virtual void rq_doorbell(uint32_t qp, uint64_t producer) = 0;
  virtual void cq_doorbell(uint32_t qp, uint64_t value) = 0;
  virtual void command(uint32_t op, const uint32_t* args) = 0;
  virtual uint32_t qp_state(uint32_t qp) const = 0;
  // The next async event (reg::kEvent format), or 0 when there is none.
  virtual uint32_t pop_event() = 0;
};

class RnicRegs : public pcie::RegisterTarget {
 public:
  explicit RnicRegs(const CoreConfig& c);
  bool reg_read(int bar, uint64_t offset, uint32_t len, uint8_t* out) override;
  bool reg_write(int bar, uint64_t offset, const uint8_t* data, uint32_t len) override;

  uint64_t sq_doorbell(uint32_t qp) const { return qp_[qp].sq_db; }
  uint64_t rq_doorbell(uint32_t qp) const { return qp_[qp].rq_db; }
  void set_listener(RegListener* l) { listener_ = l; }
  // A WQE slot of a QP's SQ or RQ window as the host last wrote it (kWqeBytes bytes).
  const uint8_t* window_slot(uint32_t qp, bool rq, uint32_t slot);
  // The mailbox's state, set by the core.
  void set_cmd_status(bool busy, uint32_t result, uint32_t value = 0) {
    cmd_status_ = (busy ? 1u << 31 : 0) | (result & 0xFF);
    cmd_result_ = value;
  }
  uint64_t msi_addr() const { return msi_addr_; }
  // Sets interrupt causes; returns whether any of them is enabled in INT_MASK.
  bool raise(uint32_t cause) {
    int_cause_ |= cause;
    return (cause & int_mask_) != 0;
  }

 private:
  struct QpRegs {
    uint64_t sq_db = 0, rq_db = 0;
    uint64_t cq_db = 0;
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

  bool window_write(uint64_t off, const uint8_t* data, uint32_t len);

  CoreConfig cfg_;
  uint32_t control_ = 0, int_cause_ = 0, int_mask_ = 0, scratch_ = 0;
  uint32_t cmd_args_[reg::kCmdArgCount] = {};
  uint32_t cmd_status_ = 0, cmd_result_ = 0;
  uint64_t msi_addr_ = 0;
  std::vector<QpRegs> qp_;
  std::unordered_map<uint32_t, std::vector<uint8_t>> windows_;  // per QP: SQ then RQ slots
  RegListener* listener_ = nullptr;
};

}  // namespace rnic
