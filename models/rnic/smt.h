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

// The STag table, zero-filled by calloc as the PBL table below: 65,536 entries (4 MiB) take host
// memory only where written. An entry never written reads as all zeros: free (its other fields,
// page_shift 0 among them, mean nothing until a registration writes the whole entry).
class Smt {
 public:
  explicit Smt(size_t entries)
      : e_(static_cast<SmtEntry*>(std::calloc(entries ? entries : 1, sizeof(SmtEntry)))),
        n_(entries) {
    static_assert(std::is_trivially_copyable_v<SmtEntry>, "calloc's zeros make a free entry");
    static_assert(uint8_t(SmtEntry::State::kFree) == 0, "calloc's zeros make a free entry");
    if (!e_) throw std::bad_alloc();
  }
  size_t size() const { return n_; }
  SmtEntry& at(uint32_t index) { return e_.get()[index]; }
  const SmtEntry* find(uint32_t index) const { return index < n_ ? &e_.get()[index] : nullptr; }

 private:
  struct Free {
    void operator()(SmtEntry* p) const { std::free(p); }
  };
  std::unique_ptr<SmtEntry, Free> e_;
  size_t n_;
};

// The PBL table, zero-filled by calloc: the pages of a large table (2^20 entries, 16 MiB by
// default) take host memory only once an entry on them is written, so a host costs what its
// registrations use (docs/performance.md, "Growth with the host count").
class Pblmt {
 public:
  explicit Pblmt(size_t entries)
      : e_(static_cast<PblEntry*>(std::calloc(entries ? entries : 1, sizeof(PblEntry)))),
        n_(entries) {
    static_assert(std::is_trivially_copyable_v<PblEntry>, "calloc's zeros are its default");
    if (!e_) throw std::bad_alloc();
  }
  size_t size() const { return n_; }
  PblEntry& at(uint32_t i) { return e_.get()[i]; }
  const PblEntry& at(uint32_t i) const { return e_.get()[i]; }

 private:
  struct Free {
    void operator()(PblEntry* p) const { std::free(p); }
  };
  std::unique_ptr<PblEntry, Free> e_;
  size_t n_;
};

}  // namespace rnic
