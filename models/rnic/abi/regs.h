// The card's register map (docs/registers.md): BAR0 (kernel only: identification, control,
// interrupts, events, MSI-X, the command queue) and BAR2 (one 4 KiB page per QP, mappable to a
// user process: doorbells, QP status, WQE windows). Registers are 32 bits (doorbells 64).
#pragma once

#include <cstdint>

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
constexpr uint64_t kEvent = 0x0040;      // RO, read pops: bit 31 valid, 30:24 abi::AsyncEvent,
                                         // 23:0 QP or CQ number
constexpr uint64_t kMsiAddrLo = 0x0050;  // RW MSI-X message address, low 32 bits
constexpr uint64_t kMsiAddrHi = 0x0054;  // RW MSI-X message address, high 32 bits
// The page-fault ring (on-demand paging, docs/firmware.md): kFaultSlots records of
// kFaultRecordBytes in host memory that the firmware writes and the driver reads.
constexpr uint64_t kFaultRingLo = 0x0060;  // RW host physical address of the ring, low 32 bits
constexpr uint64_t kFaultRingHi = 0x0064;  // RW ... high 32 bits (0: no ring, faults fail)
// The command queue (docs/firmware.md): the driver writes commands into slots, then the
// producer count; the firmware completes them in order and writes each one's completion word.
constexpr uint64_t kCmdProducer = 0x1000;    // RW 32: commands posted (free-running count)
constexpr uint64_t kCmdConsumer = 0x1004;    // RO 32: commands completed (free-running count)
constexpr uint64_t kFaultProducer = 0x1008;  // RO 32: fault records written (free-running count)
constexpr uint64_t kFaultConsumer = 0x100C;  // RW 32: fault records the driver has taken
constexpr uint64_t kCmdQueue = 0x2000;       // WO kCmdSlots x 64 B: command n in slot n % kCmdSlots
constexpr uint32_t kCmdSlots = 16;
constexpr uint32_t kCmdSlotBytes = 64;
constexpr uint64_t kCmdDone = 0x2400;  // RO kCmdSlots x 64 bit completion words (cmd_done_*)
// Interrupt causes (INT_CAUSE / INT_MASK bits)
constexpr uint32_t kIntAsyncEvent = 1 << 0, kIntCompletion = 1 << 1, kIntCommand = 1 << 2,
                   kIntPageFault = 1 << 3;
constexpr uint32_t kIdValue = 0x524E4943;
constexpr uint32_t kVersionValue = 0x00000100;
// BAR2, per-QP page
constexpr uint64_t kQpPage = 4096;
constexpr uint64_t kSqDoorbell = 0x000;  // WO 64: SQ producer index
constexpr uint64_t kRqDoorbell = 0x008;  // WO 64: RQ producer index
constexpr uint64_t kCqDoorbell = 0x010;  // WO 64: 31:0 CQ consumer index, 55:32 CQ number,
                                         // 62 solicited only, 63 arm
constexpr uint64_t kQpStatus = 0x018;    // RO 32: 23:0 QP number, 27:24 abi::QpState
constexpr uint64_t kSqWindow = 0x400;    // WO 8 WQE slots of 128 B (slot = index % 8)
constexpr uint64_t kRqWindow = 0x800;    // WO 8 WQE slots of 128 B
constexpr uint32_t kWindowSlots = 8;
constexpr uint64_t kCqArm = 1ull << 63, kCqSolicitedOnly = 1ull << 62;
// MSI-X message data: 0 async events, 1 + CQ number an armed CQ's completion event, 1 + CAP_CQ a
// command's completion (a command posted with kCmdFlagInterrupt).
constexpr uint32_t kAsyncVector = 0;
inline uint32_t cmd_vector(uint32_t cqs) { return 1 + cqs; }
// ... and 2 + CAP_CQ a page-fault record written (kIntPageFault).
inline uint32_t fault_vector(uint32_t cqs) { return 2 + cqs; }
// A page-fault record (little-endian): the card could not translate `to` of `stag` because its
// page is absent (an on-demand region); the operation that asked runs to `end` and waits.
//   0  u32 seq    the record's number (fault producer count after it, so 1, 2, ...; the driver
//                 knows a new record by it)
//   4  u32 qpn    the QP whose operation waits
//   8  u32 stag
//  12  u32 flags  bit 0: the card writes the range (placing data), else reads it
//  16  u64 to     the first absent byte (tagged offset)
//  24  u64 end    one past the last byte the operation needs
constexpr uint32_t kFaultSlots = 64;
constexpr uint32_t kFaultRecordBytes = 32;
constexpr uint32_t kFaultWrite = 1;
// A command slot's word 0: opcode and flags; words 1-15 its arguments.
constexpr uint32_t kCmdArgCount = 15;
constexpr uint32_t kCmdFlagInterrupt = 1u << 8;  // raise kIntCommand when it completes
// A completion word: 15:0 the command's sequence number (its producer count, that is its
// index + 1, low 16 bits), 23:16 result (0 or an errno), 31:24 opcode, 63:32 result value.
inline uint16_t cmd_done_seq(uint64_t w) { return uint16_t(w); }
inline uint32_t cmd_done_result(uint64_t w) { return uint32_t(w >> 16) & 0xFF; }
inline uint32_t cmd_done_value(uint64_t w) { return uint32_t(w >> 32); }
inline uint64_t cmd_done_word(uint32_t seq, uint32_t op, uint32_t result, uint32_t value) {
  return (seq & 0xFFFFu) | uint64_t(result & 0xFF) << 16 | uint64_t(op & 0xFF) << 24 |
         uint64_t(value) << 32;
}
}  // namespace reg

}  // namespace rnic
