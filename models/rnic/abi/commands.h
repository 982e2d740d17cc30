// The command queue's commands (docs/firmware.md): one struct per command with named fields,
// and its encoding into a queue slot's argument words (words 1-15; word 0 holds kOp). The
// driver fills a struct and writes the slot; the card's firmware decodes the same struct from
// it. Nothing else knows an argument's index.
#pragma once

#include <array>
#include <cstdint>

#include "models/common/bytes.h"
#include "models/rnic/abi/codes.h"

namespace rnic::abi {

// Command opcodes (word 0 of a queue slot, bits 7:0).
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
  kCmdRegMr = 10,
  kCmdAllocFastMr = 11,
  kCmdOdpMap = 12,
  kCmdOdpUnmap = 13,
};

namespace detail {
inline uint32_t lo(uint64_t v) { return uint32_t(v); }
inline uint32_t hi(uint64_t v) { return uint32_t(v >> 32); }
inline uint64_t u64(const uint32_t* a, int i) { return a[i] | uint64_t(a[i + 1]) << 32; }
}  // namespace detail

// CREATE_CQ: a CQ ring of `entries` CQEs at `ring` (host physical).
struct CreateCq {
  static constexpr Command kOp = kCmdCreateCq;
  static constexpr int kArgs = 4;
  uint32_t cqn = 0;
  uint64_t ring = 0;
  uint32_t entries = 0;
  std::array<uint32_t, kArgs> encode() const {
    return {cqn, detail::lo(ring), detail::hi(ring), entries};
  }
  static CreateCq decode(const uint32_t* a) { return {a[0], detail::u64(a, 1), a[3]}; }
};

struct DestroyCq {
  static constexpr Command kOp = kCmdDestroyCq;
  static constexpr int kArgs = 1;
  uint32_t cqn = 0;
  std::array<uint32_t, kArgs> encode() const { return {cqn}; }
  static DestroyCq decode(const uint32_t* a) { return {a[0]}; }
};

// CREATE_QP: with kQpHostRings its WQEs live in host-memory rings the card fetches by DMA.
// With kQpSrq the context is a shared receive queue: only its RQ (sq_depth 0, no CQs, never
// connected), whose WQEs the QPs created with kQpUsesSrq and `srq` naming it take in turn (their
// own rq_depth is 0).
struct CreateQp {
  static constexpr Command kOp = kCmdCreateQp;
  static constexpr int kArgs = 12;
  static constexpr uint32_t kQpHostRings = 1 << 0;  // flags
  static constexpr uint32_t kQpSrq = 1 << 1;
  static constexpr uint32_t kQpUsesSrq = 1 << 2;
  uint32_t qpn = 0, pd = 0, send_cqn = 0, recv_cqn = 0;
  uint32_t sq_depth = 0, rq_depth = 0;  // WQEs, each at most the card's max_qp_wr
  uint32_t flags = 0;
  uint64_t sq_ring = 0, rq_ring = 0;  // host physical (kQpHostRings only)
  uint32_t srq = 0;                   // the SRQ's number (kQpUsesSrq only)
  std::array<uint32_t, kArgs> encode() const {
    return {qpn,
            pd,
            send_cqn,
            recv_cqn,
            sq_depth,
            rq_depth,
            flags,
            detail::lo(sq_ring),
            detail::hi(sq_ring),
            detail::lo(rq_ring),
            detail::hi(rq_ring),
            srq};
  }
  static CreateQp decode(const uint32_t* a) {
    return {a[0], a[1], a[2], a[3], a[4], a[5], a[6], detail::u64(a, 7), detail::u64(a, 9), a[11]};
  }
};

// A QP's side of its connection, where the transport makes one per QP (MPA over TCP): the
// active side opens it and sends MPA's request, the passive side answers. The connection
// manager sets it (rdma_connect: active, rdma_accept: passive); a QP connected by
// ibv_modify_qp alone keeps kRoleByRule (the lower MAC and QPN is active: docs/transport.md).
enum ConnRole : uint8_t { kRoleByRule = 0, kRoleActive = 1, kRolePassive = 2 };

// MODIFY_QP: the fields whose bit is set in `set` are applied (state last).
struct ModifyQp {
  static constexpr Command kOp = kCmdModifyQp;
  static constexpr int kArgs = 12;
  enum Set : uint32_t {
    kState = 1 << 0,
    kPeerMac = 1 << 1,
    kPeerQpn = 1 << 2,
    kIrd = 1 << 3,          // inbound Reads (clamped to 1..the card's ird)
    kOrd = 1 << 4,          // outbound Reads (clamped to 1..the card's ord)
    kAccess = 1 << 5,       // access:: rights remote peers get
    kMtu = 1 << 6,          // the largest payload of the QP's segments, bytes (0: no cap)
    kReadTimeout = 1 << 7,  // the requester's Read Response timer, ns (0: none)
    kRole = 1 << 8,         // the QP's side of its connection (ConnRole; MPA/TCP cards)
    kPorts = 1 << 9,        // its connection's TCP ports (MPA/TCP cards; 0: the card's rule)
  };
  uint32_t qpn = 0;
  uint32_t set = 0;
  QpState state = kQpReset;
  MacAddr peer_mac{};
  uint32_t peer_qpn = 0;
  uint32_t ird = 0, ord = 0;
  uint8_t access = 0;
  uint32_t mtu = 0;
  uint64_t read_timeout_ns = 0;
  ConnRole role = kRoleByRule;
  // The connection manager's ports (rdma_cm's source and destination port of the connection:
  // MPA/TCP's TCP ports); in the upper halves of the state and peer-MAC words.
  uint16_t local_port = 0, remote_port = 0;
  std::array<uint32_t, kArgs> encode() const {
    uint32_t mac_lo = 0, mac_hi = 0;
    for (int i = 0; i < 4; ++i) mac_lo |= uint32_t(peer_mac[i]) << (8 * i);
    for (int i = 0; i < 2; ++i) mac_hi |= uint32_t(peer_mac[4 + i]) << (8 * i);
    return {qpn,
            set,
            uint32_t(state) | uint32_t(local_port) << 16,
            mac_lo,
            mac_hi | uint32_t(remote_port) << 16,
            peer_qpn,
            ird,
            ord,
            uint32_t(access) | uint32_t(role) << 8,
            mtu,
            detail::lo(read_timeout_ns),
            detail::hi(read_timeout_ns)};
  }
  static ModifyQp decode(const uint32_t* a) {
    ModifyQp m;
    m.qpn = a[0];
    m.set = a[1];
    m.state = QpState(a[2] & 0xF);
    m.local_port = uint16_t(a[2] >> 16);
    m.remote_port = uint16_t(a[4] >> 16);
    for (int i = 0; i < 4; ++i) m.peer_mac[i] = uint8_t(a[3] >> (8 * i));
    for (int i = 0; i < 2; ++i) m.peer_mac[4 + i] = uint8_t(a[4] >> (8 * i));
    m.peer_qpn = a[5] & 0xFFFFFF;
    m.ird = a[6];
    m.ord = a[7];
    m.access = uint8_t(a[8]);
    m.role = ConnRole((a[8] >> 8) & 3);
    m.mtu = a[9];
    m.read_timeout_ns = detail::u64(a, 10);
    return m;
  }
};

struct DestroyQp {
  static constexpr Command kOp = kCmdDestroyQp;
  static constexpr int kArgs = 1;
  uint32_t qpn = 0;
  std::array<uint32_t, kArgs> encode() const { return {qpn}; }
  static DestroyQp decode(const uint32_t* a) { return {a[0]}; }
};

// The kinds of region an SMT entry describes (WRITE_STAG's type).
enum StagType : uint8_t {
  kStagMemoryRegion = 0,  // a page list
  kStagSgHandle = 1,      // an extent list
  kStagPhysical = 2,      // one contiguous physical range
  kStagOnDemand = 3,      // a page list whose pages may be absent
};

// WRITE_STAG: SMT entry `index` becomes valid with this key and description.
struct WriteStag {
  static constexpr Command kOp = kCmdWriteStag;
  static constexpr int kArgs = 13;
  uint32_t index = 0;
  uint8_t key = 0;
  StagType type = kStagMemoryRegion;
  uint8_t access = 0;  // access::
  uint32_t pd = 0;
  uint64_t base_to = 0, length = 0;
  uint32_t pbl_first = 0, pbl_count = 0;
  uint8_t page_shift = 12;
  uint32_t first_page_offset = 0;
  uint64_t phys_base = 0;
  std::array<uint32_t, kArgs> encode() const {
    return {index,
            uint32_t(key) | uint32_t(type) << 8 | uint32_t(access) << 16,
            pd,
            detail::lo(base_to),
            detail::hi(base_to),
            detail::lo(length),
            detail::hi(length),
            pbl_first,
            pbl_count,
            page_shift,
            first_page_offset,
            detail::lo(phys_base),
            detail::hi(phys_base)};
  }
  static WriteStag decode(const uint32_t* a) {
    WriteStag w;
    w.index = a[0];
    w.key = uint8_t(a[1]);
    w.type = StagType((a[1] >> 8) & 0xFF);
    w.access = uint8_t(a[1] >> 16);
    w.pd = a[2];
    w.base_to = detail::u64(a, 3);
    w.length = detail::u64(a, 5);
    w.pbl_first = a[7];
    w.pbl_count = a[8];
    w.page_shift = uint8_t(a[9]);
    w.first_page_offset = a[10];
    w.phys_base = detail::u64(a, 11);
    return w;
  }
};

struct InvalidateStag {
  static constexpr Command kOp = kCmdInvalidateStag;
  static constexpr int kArgs = 1;
  uint32_t stag = 0;
  std::array<uint32_t, kArgs> encode() const { return {stag}; }
  static InvalidateStag decode(const uint32_t* a) { return {a[0]}; }
};

// LOAD_PBL: `count` PBLMT entries from `first` are DMA-read from `list` (host physical): 8-byte
// page addresses, or with `extents` 16-byte (address, length) pairs.
struct LoadPbl {
  static constexpr Command kOp = kCmdLoadPbl;
  static constexpr int kArgs = 5;
  uint32_t first = 0, count = 0;
  uint64_t list = 0;
  bool extents = false;
  std::array<uint32_t, kArgs> encode() const {
    return {first, count, detail::lo(list), detail::hi(list), extents ? 1u : 0u};
  }
  static LoadPbl decode(const uint32_t* a) { return {a[0], a[1], detail::u64(a, 2), a[4] != 0}; }
};

// REG_MR: LOAD_PBL and WRITE_STAG as one command. The firmware DMA-reads `stag.pbl_count`
// entries from `list` into the PBLMT from `stag.pbl_first` (16-byte extents for a
// scatter-gather handle, else 8-byte page addresses) and then writes the SMT entry. An
// on-demand region (kStagOnDemand) with `list` 0 starts with every page absent (no DMA read).
struct RegMr {
  static constexpr Command kOp = kCmdRegMr;
  static constexpr int kArgs = WriteStag::kArgs + 2;
  WriteStag stag;
  uint64_t list = 0;
  bool extents() const { return stag.type == kStagSgHandle; }
  std::array<uint32_t, kArgs> encode() const {
    std::array<uint32_t, kArgs> a{};
    const auto w = stag.encode();
    for (int i = 0; i < WriteStag::kArgs; ++i) a[size_t(i)] = w[size_t(i)];
    a[WriteStag::kArgs] = detail::lo(list);
    a[WriteStag::kArgs + 1] = detail::hi(list);
    return a;
  }
  static RegMr decode(const uint32_t* a) {
    return {WriteStag::decode(a), detail::u64(a, WriteStag::kArgs)};
  }
};

// ALLOC_FAST_MR: SMT entry `index` becomes a fast-registration STag of `pd`, not yet valid,
// whose page lists go into PBLMT entries [pbl_first, pbl_first + max_pages). A fast
// registration WR (kOpFastRegMr) makes it valid; FREE_STAG ends it.
struct AllocFastMr {
  static constexpr Command kOp = kCmdAllocFastMr;
  static constexpr int kArgs = 4;
  uint32_t index = 0, pd = 0, pbl_first = 0, max_pages = 0;
  std::array<uint32_t, kArgs> encode() const { return {index, pd, pbl_first, max_pages}; }
  static AllocFastMr decode(const uint32_t* a) { return {a[0], a[1], a[2], a[3]}; }
};

struct FreeStag {
  static constexpr Command kOp = kCmdFreeStag;
  static constexpr int kArgs = 1;
  uint32_t index = 0;
  std::array<uint32_t, kArgs> encode() const { return {index}; }
  static FreeStag decode(const uint32_t* a) { return {a[0]}; }
};

// ODP_MAP (on-demand paging): the driver has made pages of an on-demand region resident; the
// firmware DMA-reads `count` page addresses from `list` into the PBLMT from `first`, then
// resumes every operation waiting on a fault of one of those entries. With kFailed the driver
// could not page them in: nothing is read or written and those operations fail instead (their
// translation's error: out of bounds).
struct OdpMap {
  static constexpr Command kOp = kCmdOdpMap;
  static constexpr int kArgs = 6;
  static constexpr uint32_t kFailed = 1;
  uint32_t stag = 0, first = 0, count = 0;
  uint64_t list = 0;
  uint32_t flags = 0;
  std::array<uint32_t, kArgs> encode() const {
    return {stag, first, count, detail::lo(list), detail::hi(list), flags};
  }
  static OdpMap decode(const uint32_t* a) { return {a[0], a[1], a[2], detail::u64(a, 3), a[5]}; }
};

// ODP_UNMAP: PBLMT entries [first, first + count) become absent (a page of an on-demand region
// about to be paged out or unmapped); once it completes the card no longer reaches them.
struct OdpUnmap {
  static constexpr Command kOp = kCmdOdpUnmap;
  static constexpr int kArgs = 2;
  uint32_t first = 0, count = 0;
  std::array<uint32_t, kArgs> encode() const { return {first, count}; }
  static OdpUnmap decode(const uint32_t* a) { return {a[0], a[1]}; }
};

// STag = 24-bit SMT index << 8 | 8-bit key (RFC 5040 leaves the split to the RNIC).
inline uint32_t stag_index(uint32_t stag) { return stag >> 8; }
inline uint8_t stag_key(uint32_t stag) { return uint8_t(stag); }
inline uint32_t make_stag(uint32_t index, uint8_t key) { return index << 8 | key; }

}  // namespace rnic::abi
