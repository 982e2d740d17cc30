// The STag Management Table (SMT) and the PBL Management Table (PBLMT) (DESIGN.md §3.3).
//
// STag = 24-bit index << 8 | 8-bit key. An SMT entry describes one registered region:
//   state      free, valid, or invalid (after invalidation; the key stays until re-registered)
//   type       memory region (page list), scatter-gather handle (extent list), physical region
//              (one contiguous physical range), on-demand-paged region (page list whose pages
//              may be absent: address 0)
//   pd         protection domain
//   access     abi::access bits (local write 1, remote write 2, remote read 4, remote atomic 8;
//              the values of rdma-core's IBV_ACCESS_*); local read is always allowed
//   base_to    tagged offset of the region's first byte (the VA it was registered at)
//   length     bytes
//   pbl        first PBLMT entry and entry count (page list or extent list)
//   page_shift page size of a page list (12 = 4 KiB)
//   first_page_offset  base_to's offset within the first page of a page list
//   phys_base  first physical byte of a physical region
// A PBLMT entry is a physical page address (page lists) or an extent: address and length.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "models/rnic/abi/commands.h"

namespace rnic {

namespace access = abi::access;
using abi::make_stag;
using abi::stag_index;
using abi::stag_key;

struct SmtEntry {
  enum class State : uint8_t { kFree, kValid, kInvalid };
  enum class Type : uint8_t {
    kMemoryRegion = abi::kStagMemoryRegion,
    kSgHandle = abi::kStagSgHandle,
    kPhysical = abi::kStagPhysical,
    kOnDemand = abi::kStagOnDemand,
  };
  State state = State::kFree;
  Type type = Type::kMemoryRegion;
  uint8_t key = 0;
  uint32_t pd = 0;
  uint8_t access = 0;
  uint64_t base_to = 0;
  uint64_t length = 0;
  uint32_t pbl_first = 0, pbl_count = 0;
  uint8_t page_shift = 12;
  uint64_t first_page_offset = 0;
  uint64_t phys_base = 0;
};

struct PblEntry {
  uint64_t addr = 0;
  uint64_t len = 0;  // extents; 0 for a page of a page list
};

// A table of zeros mapped from the kernel: its pages take host memory only once an entry on
// them is written, so a host costs what its registrations use (docs/performance.md, "Growth
// with the host count"). Its pages stay small (MADV_NOHUGEPAGE) whatever the machine's or the
// allocator's huge-page setting: one entry written must not bring 2 MiB. All zeros must be the
// entry's unwritten state.
template <class E>
class ZeroTable {
 public:
  explicit ZeroTable(size_t entries) : n_(entries), bytes_((entries ? entries : 1) * sizeof(E)) {
    static_assert(std::is_trivially_copyable_v<E>, "the mapping's zeros are an unwritten entry");
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, bytes_, MADV_NOHUGEPAGE);
    e_ = static_cast<E*>(p);
  }
  ~ZeroTable() { munmap(e_, bytes_); }
  ZeroTable(const ZeroTable&) = delete;
  ZeroTable& operator=(const ZeroTable&) = delete;
  size_t size() const { return n_; }
  E& at(uint32_t i) { return e_[i]; }
  const E& at(uint32_t i) const { return e_[i]; }

 private:
  E* e_ = nullptr;
  size_t n_, bytes_;
};

// The STag table (65,536 entries, 4 MiB by default). An entry never written reads as all zeros:
// free (its other fields, page_shift 0 among them, mean nothing until a registration writes the
// whole entry).
class Smt : public ZeroTable<SmtEntry> {
 public:
  explicit Smt(size_t entries) : ZeroTable(entries) {
    static_assert(uint8_t(SmtEntry::State::kFree) == 0, "the mapping's zeros make a free entry");
  }
  const SmtEntry* find(uint32_t index) const { return index < size() ? &at(index) : nullptr; }
};

// The PBL table (2^20 entries, 16 MiB by default).
using Pblmt = ZeroTable<PblEntry>;

}  // namespace rnic
