#include "models/host/page_table.h"

namespace rnic::host {

namespace {
inline uint64_t index(uint64_t va, int level) { return (va >> (12 + 9 * level)) & 0x1FF; }
}  // namespace

PageTable::PageTable(PhysMem& mem, uint64_t frame_hint) : mem_(mem), hint_(frame_hint) {
  cr3_ = new_table();
}

uint64_t PageTable::new_table() {
  const uint64_t pa = mem_.alloc_frame(hint_);
  hint_ = pa / kPageSize + 1;
  static const uint8_t zero[kPageSize] = {};
  mem_.write(pa, zero, kPageSize);
  ++table_pages_;
  return pa;
}

void PageTable::map(uint64_t va, uint64_t pa) {
  uint64_t table = cr3_;
  for (int level = 3; level >= 1; --level) {
    const uint64_t ea = table + 8 * index(va, level);
    uint64_t e = mem_.read64(ea);
    if (!(e & kPtePresent)) {
      e = new_table() | kPtePresent | kPteWrite | kPteUser;
      mem_.write64(ea, e);
    }
    table = e & kPteAddrMask;
  }
  mem_.write64(table + 8 * index(va, 0), (pa & kPteAddrMask) | kPtePresent | kPteWrite | kPteUser);
}

bool PageTable::unmap(uint64_t va) {
  uint64_t table = cr3_;
  for (int level = 3; level >= 1; --level) {
    const uint64_t e = mem_.read64(table + 8 * index(va, level));
    if (!(e & kPtePresent)) return false;
    table = e & kPteAddrMask;
  }
  const uint64_t ea = table + 8 * index(va, 0);
  if (!(mem_.read64(ea) & kPtePresent)) return false;
  mem_.write64(ea, 0);
  return true;
}

bool PageTable::translate(uint64_t va, uint64_t* pa, uint64_t* reads) const {
  uint64_t table = cr3_;
  for (int level = 3; level >= 0; --level) {
    const uint64_t e = mem_.read64(table + 8 * index(va, level));
    ++*reads;
    if (!(e & kPtePresent)) return false;
    table = e & kPteAddrMask;
  }
  *pa = table | (va & (kPageSize - 1));
  return true;
}

bool PageTable::walk_range(uint64_t va, uint64_t len, uint64_t* reads,
                           const std::function<void(uint64_t, uint64_t)>& fn) const {
  if (len == 0) return true;
  const uint64_t first = va & ~(kPageSize - 1);
  const uint64_t last = (va + len - 1) & ~(kPageSize - 1);
  // Cached table address per level, valid while the upper index bits stay the same.
  uint64_t table[4] = {cr3_, 0, 0, 0};
  uint64_t key[4] = {~0ull, ~0ull, ~0ull, ~0ull};
  for (uint64_t p = first; p <= last; p += kPageSize) {
    for (int level = 3; level >= 0; --level) {
      const uint64_t k = p >> (12 + 9 * level);  // which entry of this level covers p
      const int slot = 3 - level;
      if (level > 0 && key[slot] == k) continue;  // upper entry already read for this range
      const uint64_t e = mem_.read64(table[slot] + 8 * index(p, level));
      ++*reads;
      if (!(e & kPtePresent)) return false;
      if (level > 0) {
        key[slot] = k;
        table[slot + 1] = e & kPteAddrMask;
        for (int below = slot + 1; below < 3; ++below) key[below] = ~0ull;
      } else {
        fn(p, e & kPteAddrMask);
      }
    }
  }
  return true;
}

}  // namespace rnic::host
