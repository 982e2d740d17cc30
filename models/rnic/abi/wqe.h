// The formats the verbs library and the card share (little-endian, docs/registers.md):
//
// WQE, 128 bytes (SQ and RQ alike; an RQ WQE uses only wr_id and the SGEs):
//   0   u8   opcode (abi::WqeOpcode)       1  u8  send flags (abi::WqeFlags)
//   2   u8   number of SGEs (0..kMaxSge)   3  u8  reserved
//   4   u32  rkey to invalidate (kOpSendWithInv)
//   8   u64  wr_id
//   16  u64  remote address (RDMA Write / Read)
//   24  u32  rkey (RDMA Write / Read)      28 u32 imm_data (with Immediate)
//   32  SGE[i] at 32 + 16 i: u64 address, u32 length, u32 lkey
//   Fast registration (kOpFastRegMr): 4 the new STag (a fast-registration STag of the QP's PD,
//   its new key), 16 the base tagged offset, 24 its access rights (abi::access), SGE 0 the
//   page list (address: host physical, 8 B per page; length: the region's bytes; lkey: pages).
//   Local invalidate (kOpLocalInv): 4 the STag.
//   Atomic (kOpAtomicCmpSwp, kOpAtomicFetchAdd): 16 the remote address (8-byte aligned), 24 its
//   rkey, SGE 0 the 8 bytes that take the target's original value (one SGE), 48 u64 compare
//   (CmpSwap) or add (FetchAdd), 56 u64 swap (CmpSwap): the place of SGE 1.
//
// CQE, 32 bytes, in the host CQ ring:
//   0   u64  wr_id
//   8   u32  byte_len                      12 u32 qp_num
//   16  u32  invalidated rkey, or the      20 u32 WQE index (SQ or RQ producer count, for the
//            immediate data (kCqeWithImm)
//                                                  library to free queue slots)
//   24  u8   status (abi::CqeStatus)       25 u8  opcode (abi::CqeOpcode)
//   26  u8   flags (abi::CqeFlags)         27 u8  bit 0 solicited
//   28..30 reserved                        31 u8  owner: bit 0 is the phase, 1 on the ring's
//                                                 first pass, 0 on the second, and so on
#pragma once

#include <cstdint>
#include <cstring>

#include "models/rnic/abi/codes.h"

namespace rnic {

constexpr int kMaxSge = 6;
constexpr uint32_t kWqeBytes = 128, kCqeBytes = 32;

struct Sge {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

struct Wqe {
  uint8_t opcode = 0;
  uint8_t flags = 0;
  uint8_t num_sge = 0;
  uint32_t invalidate_rkey = 0;
  uint64_t wr_id = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint32_t imm = 0;                    // with Immediate: verbs' imm_data
  uint64_t compare_add = 0, swap = 0;  // atomics
  Sge sge[kMaxSge];
  uint64_t total_length() const {
    uint64_t n = 0;
    for (int i = 0; i < num_sge; ++i) n += sge[i].length;
    return n;
  }
  // Bytes the library writes: the header and the SGEs in use, rounded up to 64-byte lines.
  uint32_t used_bytes() const { return (32 + 16 * num_sge + 63) / 64 * 64; }
};

struct Cqe {
  uint64_t wr_id = 0;
  uint32_t byte_len = 0;
  uint32_t qp_num = 0;
  uint32_t invalidated_rkey = 0;
  uint32_t wqe_index = 0;
  uint8_t status = 0;
  uint8_t opcode = 0;
  uint8_t wc_flags = 0;
  bool solicited = false;
  uint8_t owner = 0;
};

namespace detail {
template <class T>
inline void put(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}
template <class T>
inline T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace detail

inline void encode(const Wqe& w, uint8_t* p) {
  using detail::put;
  std::memset(p, 0, kWqeBytes);
  p[0] = w.opcode;
  p[1] = w.flags;
  p[2] = w.num_sge;
  put<uint32_t>(p + 4, w.invalidate_rkey);
  put<uint64_t>(p + 8, w.wr_id);
  put<uint64_t>(p + 16, w.remote_addr);
  put<uint32_t>(p + 24, w.rkey);
  put<uint32_t>(p + 28, w.imm);
  for (int i = 0; i < w.num_sge && i < kMaxSge; ++i) {
    put<uint64_t>(p + 32 + 16 * i, w.sge[i].addr);
    put<uint32_t>(p + 40 + 16 * i, w.sge[i].length);
    put<uint32_t>(p + 44 + 16 * i, w.sge[i].lkey);
  }
  if (abi::is_atomic(w.opcode)) {
    put<uint64_t>(p + 48, w.compare_add);
    put<uint64_t>(p + 56, w.swap);
  }
}

// A WQE with more than kMaxSge SGEs is decoded with num_sge as written (the card checks it).
inline Wqe decode_wqe(const uint8_t* p) {
  using detail::get;
  Wqe w;
  w.opcode = p[0];
  w.flags = p[1];
  w.num_sge = p[2];
  w.invalidate_rkey = get<uint32_t>(p + 4);
  w.wr_id = get<uint64_t>(p + 8);
  w.remote_addr = get<uint64_t>(p + 16);
  w.rkey = get<uint32_t>(p + 24);
  w.imm = get<uint32_t>(p + 28);
  for (int i = 0; i < w.num_sge && i < kMaxSge; ++i) {
    w.sge[i].addr = get<uint64_t>(p + 32 + 16 * i);
    w.sge[i].length = get<uint32_t>(p + 40 + 16 * i);
    w.sge[i].lkey = get<uint32_t>(p + 44 + 16 * i);
  }
  if (abi::is_atomic(w.opcode)) {
    w.compare_add = get<uint64_t>(p + 48);
    w.swap = get<uint64_t>(p + 56);
  }
  return w;
}

inline void encode(const Cqe& c, uint8_t* p) {
  using detail::put;
  std::memset(p, 0, kCqeBytes);
  put<uint64_t>(p, c.wr_id);
  put<uint32_t>(p + 8, c.byte_len);
  put<uint32_t>(p + 12, c.qp_num);
  put<uint32_t>(p + 16, c.invalidated_rkey);
  put<uint32_t>(p + 20, c.wqe_index);
  p[24] = c.status;
  p[25] = c.opcode;
  p[26] = c.wc_flags;
  p[27] = c.solicited ? 1 : 0;
  p[31] = c.owner;
}

inline Cqe decode_cqe(const uint8_t* p) {
  using detail::get;
  Cqe c;
  c.wr_id = get<uint64_t>(p);
  c.byte_len = get<uint32_t>(p + 8);
  c.qp_num = get<uint32_t>(p + 12);
  c.invalidated_rkey = get<uint32_t>(p + 16);
  c.wqe_index = get<uint32_t>(p + 20);
  c.status = p[24];
  c.opcode = p[25];
  c.wc_flags = p[26];
  c.solicited = p[27] & 1;
  c.owner = p[31];
  return c;
}

}  // namespace rnic
