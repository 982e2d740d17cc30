// The card's own codes, as they appear in its registers, WQEs, CQEs and firmware commands
// (docs/registers.md). Where rdma-core has the same notion the card uses the same number, so a
// register or ring dump reads familiarly; the verbs library still maps each code by name
// (models/host/verbs/verbs.cc), never by cast, so the card's codes could change alone.
#pragma once

#include <cstdint>

namespace rnic::abi {

// QP state: QP_STATUS bits 27:24 and MODIFY_QP's state.
enum QpState : uint8_t {
  kQpReset = 0,
  kQpInit = 1,
  kQpRtr = 2,
  kQpRts = 3,
  kQpSqd = 4,
  kQpSqe = 5,
  kQpError = 6,
};

// Asynchronous event: EVENT bits 30:24 (23:0 the QP or CQ it concerns).
enum AsyncEvent : uint8_t {
  kEvCqError = 0,        // a CQ overflowed (23:0: CQ number)
  kEvQpFatal = 1,        // a QP failed (protocol error, local failure)
  kEvQpReqError = 2,     // a QP received an invalid request
  kEvQpAccessError = 3,  // a QP received a request that violates its protection
  kEvSrqError = 4,       // a shared receive queue failed (its WQE fetch; 23:0: its number)
};

// WQE opcode (WQE byte 0).
enum WqeOpcode : uint8_t {
  kOpRdmaWrite = 0,
  kOpRdmaWriteWithImm = 1,  // the Write, then RFC 7306 Immediate Data (WQE byte 28: imm_data)
  kOpSend = 2,
  kOpSendWithImm = 3,  // Immediate Data, then the Send
  kOpRdmaRead = 4,
  kOpAtomicCmpSwp = 5,    // RFC 7306 CmpSwap of the 8 bytes at remote address (wqe.h: operands)
  kOpAtomicFetchAdd = 6,  // RFC 7306 FetchAdd
  kOpLocalInv = 7,        // invalidate_rkey's STag becomes invalid (the QP's PD only)
  kOpSendWithInv = 9,
  kOpFastRegMr = 0x20,  // a fast registration (wqe.h: its fields)
};

inline bool is_atomic(uint8_t wqe_opcode) {
  return wqe_opcode == kOpAtomicCmpSwp || wqe_opcode == kOpAtomicFetchAdd;
}

// WQE send flags (WQE byte 1).
enum WqeFlags : uint8_t {
  kWqeSignaled = 1 << 1,   // write a CQE on success too
  kWqeSolicited = 1 << 2,  // the Send's last segment carries SE
};

// CQE status (CQE byte 24).
enum CqeStatus : uint8_t {
  kCqeSuccess = 0,
  kCqeLocLenError = 1,
  kCqeLocQpOpError = 2,
  kCqeLocProtError = 4,
  kCqeFlushed = 5,
  kCqeRemInvReqError = 9,
  kCqeRemAccessError = 10,
  kCqeRemOpError = 11,
  kCqeRetryExceeded = 12,
};

// CQE opcode (CQE byte 25).
enum CqeOpcode : uint8_t {
  kCqeSend = 0,
  kCqeRdmaWrite = 1,
  kCqeRdmaRead = 2,
  kCqeCompSwap = 3,
  kCqeFetchAdd = 4,
  kCqeLocalInv = 6,
  kCqeFastRegMr = 8,
  kCqeRecv = 128,
  kCqeRecvRdmaWithImm = 129,  // an RDMA Write with Immediate's Immediate Data
};

// CQE flags (CQE byte 26).
enum CqeFlags : uint8_t {
  kCqeWithImm = 1 << 1,  // bytes 16-19 hold the immediate data, not an invalidated rkey
  kCqeWithInv = 1 << 3,  // a Send with Invalidate invalidated the CQE's rkey
};

// Access rights of an STag and of a QP (SMT entry, WRITE_STAG, MODIFY_QP): local read is always
// allowed.
namespace access {
constexpr uint8_t kLocalWrite = 1, kRemoteWrite = 2, kRemoteRead = 4, kRemoteAtomic = 8;
}

}  // namespace rnic::abi
