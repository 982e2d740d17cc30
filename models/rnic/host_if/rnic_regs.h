// The RNIC's register file behind BAR0 (kernel only) and BAR2 (one 4 KiB page per QP, mappable
// to a user process). The map is docs/registers.md. Registers are 32 bits (doorbells 64); any
// access of 1, 2, 4 or 8 bytes inside one register reads or writes those bytes of it; an offset
// with no register is an Unsupported Request.
// Latency: reads answer after core.reg_read_cycles, writes apply after core.reg_write_cycles
// (counted by the PCIe I/F around this block).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "models/pcie/pcie_if.h"
#include "models/rnic/abi/regs.h"
#include "models/rnic/rnic_params.h"

namespace rnic {

// What the register file starts in the core: doorbells; and what it reads from it.
class RegListener {
 public:
  virtual ~RegListener() = default;
  virtual void sq_doorbell(uint32_t qp, uint64_t producer) = 0;
  virtual void rq_doorbell(uint32_t qp, uint64_t producer) = 0;
  virtual void cq_doorbell(uint32_t qp, uint64_t value) = 0;
  virtual uint32_t qp_state(uint32_t qp) const = 0;
  // The next async event (reg::kEvent format), or 0 when there is none.
  virtual uint32_t pop_event() = 0;
};

// Who takes the command queue's producer writes (the firmware controller).
class CommandQueueListener {
 public:
  virtual ~CommandQueueListener() = default;
  virtual void command_doorbell(uint32_t producer) = 0;
  // The driver has taken fault records up to `consumer` (FAULT_CONSUMER written).
  virtual void fault_consumer(uint32_t consumer) { (void)consumer; }
};

class RnicRegs : public pcie::RegisterTarget {
 public:
  explicit RnicRegs(const CoreConfig& c);
  bool reg_read(int bar, uint64_t offset, uint32_t len, uint8_t* out) override;
  bool reg_write(int bar, uint64_t offset, const uint8_t* data, uint32_t len) override;

  uint64_t sq_doorbell(uint32_t qp) const { return qp_[qp].sq_db; }
  uint64_t rq_doorbell(uint32_t qp) const { return qp_[qp].rq_db; }
  void set_listener(RegListener* l) { listener_ = l; }
  void set_command_listener(CommandQueueListener* l) { cmd_listener_ = l; }
  // A WQE slot of a QP's SQ or RQ window as the host last wrote it (kWqeBytes bytes).
  const uint8_t* window_slot(uint32_t qp, bool rq, uint32_t slot);
  // The command queue, as the firmware sees it: a slot's 64 bytes as the host last wrote them,
  // and a command's completion (its completion word written, the consumer count advanced).
  const uint8_t* cmd_slot(uint32_t slot) const {
    return cmd_slots_.data() + (slot % reg::kCmdSlots) * reg::kCmdSlotBytes;
  }
  void complete_command(uint32_t slot, uint64_t word) {
    cmd_done_[slot % reg::kCmdSlots] = word;
    ++cmd_consumer_;
  }
  uint32_t cmd_producer() const { return cmd_producer_; }
  uint64_t msi_addr() const { return msi_addr_; }
  // The page-fault ring: its host address (0: none), records written and taken.
  uint64_t fault_ring() const { return fault_ring_; }
  uint32_t fault_producer() const { return fault_producer_; }
  uint32_t fault_consumer() const { return fault_consumer_; }
  void fault_written() { ++fault_producer_; }
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
  std::array<uint8_t, reg::kCmdSlots * reg::kCmdSlotBytes> cmd_slots_{};
  std::array<uint64_t, reg::kCmdSlots> cmd_done_{};
  uint32_t cmd_producer_ = 0, cmd_consumer_ = 0;
  uint64_t msi_addr_ = 0;
  uint64_t fault_ring_ = 0;
  uint32_t fault_producer_ = 0, fault_consumer_ = 0;
  std::vector<QpRegs> qp_;
  std::unordered_map<uint32_t, std::vector<uint8_t>> windows_;  // per QP: SQ then RQ slots
  RegListener* listener_ = nullptr;
  CommandQueueListener* cmd_listener_ = nullptr;
};

}  // namespace rnic
