// A simulated user process: its own 4-level page tables (cr3) and a virtual address space that
// malloc fills with physical pages scattered over memory (host.malloc_scatter: the chance that
// a page is not physically adjacent to the previous one; jumps of 1..malloc_max_gap pages).
#pragma once

#include <cstdint>
#include <unordered_set>

#include "models/host/page_table.h"

namespace rnic::host {

class Process {
 public:
  Process(PhysMem& mem, const HostConfig& cfg, uint64_t seed, int pid);
  int pid() const { return pid_; }
  PageTable& page_table() { return pt_; }
  PhysMem& mem() { return mem_; }

  // Page-aligned virtual buffer of `bytes`, backed page by page; a guard page follows it.
  uint64_t malloc(uint64_t bytes);
  // Copies between the process's virtual memory and a host buffer (page by page translation;
  // the CPU costs are the caller's). Returns false on an unmapped page.
  bool write_virt(uint64_t va, const void* data, uint64_t len);
  bool read_virt(uint64_t va, void* out, uint64_t len);

  // Pinned pages (mlock) cannot be paged out.
  void pin(uint64_t page_va) { pinned_.insert(page_va); }
  bool pinned(uint64_t va) const { return pinned_.count(va & ~(kPageSize - 1)) != 0; }

 private:
  uint64_t rand();
  // fn(physical address, offset in the range, bytes) for each page-bounded piece.
  template <class Fn>
  bool for_each_chunk(uint64_t va, uint64_t len, Fn fn);
  PhysMem& mem_;
  HostConfig cfg_;
  int pid_;
  uint64_t rng_;
  PageTable pt_;
  uint64_t next_va_ = 0x00007F0000000000ull;
  uint64_t last_frame_ = 0;
  std::unordered_set<uint64_t> pinned_;
};

}  // namespace rnic::host
