// x86-64 4-level page tables (PML4, PDPT, PD, PT; 4 KiB pages) stored in simulated physical
// memory and rooted at a process's cr3. Entries are 8 bytes: bit 0 present, bit 1 writable,
// bit 2 user, bits 51:12 the next table's or the page's physical address. Every access the
// walker makes is a real read of PhysMem, and is counted.
#pragma once

#include <cstdint>
#include <functional>

#include "models/host/phys_mem.h"

namespace rnic::host {

constexpr uint64_t kPtePresent = 1, kPteWrite = 2, kPteUser = 4;
constexpr uint64_t kPteAddrMask = 0x000FFFFFFFFFF000ull;

class PageTable {
 public:
  PageTable(PhysMem& mem, uint64_t frame_hint);
  uint64_t cr3() const { return cr3_; }

  // Maps the 4 KiB page at va to the frame at pa (creating tables as needed).
  void map(uint64_t va, uint64_t pa);

  // Removes the 4 KiB page at va (its frame stays allocated); false if it was not mapped.
  bool unmap(uint64_t va);

  // Translates va; returns false if not mapped. Each level read is one counted read.
  bool translate(uint64_t va, uint64_t* pa, uint64_t* reads) const;

  // Walks the pages of [va, va+len) in order the way a kernel walker does: an upper-level entry
  // is read once for all the pages below it. Calls fn(page_va, page_pa) for each present page
  // (stops and returns false at a missing one). *reads counts the entries read.
  bool walk_range(uint64_t va, uint64_t len, uint64_t* reads,
                  const std::function<void(uint64_t, uint64_t)>& fn) const;

  uint64_t table_pages() const { return table_pages_; }

 private:
  uint64_t new_table();
  PhysMem& mem_;
  uint64_t cr3_;
  uint64_t hint_;
  uint64_t table_pages_ = 0;
};

}  // namespace rnic::host
