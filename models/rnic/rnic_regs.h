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
#include "models/rnic/rnic_params.h"

namespace rnic {

namespace reg {
// BAR0
constexpr uint64_t kId = 0x0000;         // RO 0x524E4943 "RNIC"
constexpr uint64_t kVersion = 0x0004;    // RO major.minor.patch as 0x00MMmmpp
constexpr uint64_t kCapQp = 0x0008;      // RO number of QPs
constexpr uint64_t kCapCq = 0x000C;      // RO number of CQs
constexpr uint64_t kCapStag = 0x0010;    // RO number of SMT entries
constexpr uint64_t kCapPbl = 0x0014;     // RO number of PBLMT entries
constexpr uint64_t kControl = 0x0020;    // RW bit 0 enable
constexpr uint64_t kStatus = 0x0024;     // RO bit 0 ready (follows enable)
constexpr uint64_t kIntCause = 0x0028;   // RW1C interrupt causes
constexpr uint64_t kIntMask = 0x002C;    // RW interrupt mask (1 = enabled)
constexpr uint64_t kScratch = 0x0030;    // RW scratch
constexpr uint64_t kEvent = 0x0040;      // RO, read pops: bit 31 valid, 30:24 ibv_event_type,
                                         // 23:0 QP or CQ number
constexpr uint64_t kMsiAddrLo = 0x0050;  // RW MSI-X message address, low 32 bits
constexpr uint64_t kMsiAddrHi = 0x0054;  // RW MSI-X message address, high 32 bits
constexpr uint64_t kCmdArgs = 0x1000;    // RW 16 x 32-bit command arguments
constexpr uint32_t kCmdArgCount = 16;
constexpr uint64_t kCmd = 0x1040;        // WO command opcode: writing starts the command
constexpr uint64_t kCmdStatus = 0x1044;  // RO bit 31 busy, 7:0 result (0 or an errno)
constexpr uint64_t kCmdResult = 0x1048;  // RO the command's result value
// Interrupt causes (INT_CAUSE / INT_MASK bits)
constexpr uint32_t kIntAsyncEvent = 1 << 0, kIntCompletion = 1 << 1;
constexpr uint32_t kIdValue = 0x524E4943;
constexpr uint32_t kVersionValue = 0x00000100;
// BAR2, per-QP page
constexpr uint64_t kQpPage = 4096;
constexpr uint64_t kSqDoorbell = 0x000;  // WO 64: SQ producer index
constexpr uint64_t kRqDoorbell = 0x008;  // WO 64: RQ producer index
constexpr uint64_t kCqDoorbell = 0x010;  // WO 64: 31:0 CQ consumer index, 55:32 CQ number,
                                         // 62 solicited only, 63 arm
constexpr uint64_t kQpStatus = 0x018;    // RO 32: 23:0 QP number, 27:24 ibv_qp_state
constexpr uint64_t kSqWindow = 0x400;    // WO 8 WQE slots of 128 B (slot = index % 8)
constexpr uint64_t kRqWindow = 0x800;    // WO 8 WQE slots of 128 B
constexpr uint32_t kWindowSlots = 8;
constexpr uint64_t kCqArm = 1ull << 63, kCqSolicitedOnly = 1ull << 62;
// CREATE_QP argument 6 (flags)
constexpr uint32_t kQpHostRings = 1 << 0;  // WQEs in host-memory rings, fetched by DMA

// Mailbox commands (CMD), their arguments (CMD_ARG n) in docs/registers.md.
enum Command : uint32_t {
  kCmdCreateCq = 1,
  kCmdDestroyCq = 2,
  kCmdCreateQp = 3,
  kCmdModifyQp = 4,
  kCmdDestroyQp = 5,
  kCmdWriteStag = 6,
  kCmdInvalidateStag = 7,
  kCmdLoadPbl = 8,
  kCmdFreeStag = 9,
};
}  // namespace reg

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
