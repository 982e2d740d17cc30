// A simulated user process: its own 4-level page tables (cr3) and a virtual address space that
// malloc fills with physical pages scattered over memory (host.malloc_scatter: the chance that
// a page is not physically adjacent to the previous one; jumps of 1..malloc_max_gap pages).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_set>

#include "models/host/page_table.h"

namespace rnic::host {

class Process {
 public:
  Process(PhysMem& mem, const HostConfig& cfg, uint64_t seed, int pid);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  // The program unmapped [addr, addr + len) (its munmap, which the simulator defines): the
  // pages of its own memory there leave every simulated process's page table (their frames keep
  // a copy: PhysMem::unmapping), so a later registration of them fails as the kernel's would.
  static void unmapping(uintptr_t addr, uint64_t len);
  // Called for the program's free of a chunk and munmap of a range (before either takes
  // effect): the verbs library's registration cache forgets the registrations it overlaps.
  static void (*on_release)(uintptr_t addr, uint64_t len);
  // The kernel's MMU notifiers for this process (Os::notify), run by unmapping() for a range
  // of its pages before they leave its page table, when the munmap comes from a simulated
  // thread (they take simulated time); unset: none.
  std::function<void(uint64_t va, uint64_t len)> unmap_notifier;
  int pid() const { return pid_; }
  PageTable& page_table() { return pt_; }
  PhysMem& mem() { return mem_; }

  // Page-aligned virtual buffer of `bytes`, backed page by page; a guard page follows it. Its
  // addresses are the model's own (from kSimVaBase), not the program's: the program reaches it
  // through rnic_mem_read / rnic_mem_write.
  uint64_t malloc(uint64_t bytes);
  // The program's own memory [va, va + len) (heap, stack, statics: its real addresses) as the
  // simulated process's: each page not mapped yet gets a frame (scattered as malloc's) whose
  // bytes are the program's page (PhysMem::back). Returns 0, or EFAULT when part of the range
  // is not the program's memory, or cannot be written and `write` is asked for (as the kernel
  // refuses to pin it), or falls in the model's own address range.
  int map_plain(uint64_t va, uint64_t len, bool write);
  // Memory of a process outside rnicsim's own (an executable run as a simulated process: its
  // registered pages shared with rnicsim, sim/exec/): [va, va + len), page aligned, as the
  // simulated process's pages, page p's bytes at host + (p - va). Pages already mapped keep
  // their frames, their bytes now at host. Returns 0, or EFAULT for a range that is not page
  // aligned or overlaps the model's own.
  int map_external(uint64_t va, uint64_t len, uint8_t* host);
  static constexpr uint64_t kSimVaBase = 0x0000400000000000ull;  // 64 TiB: unused by Linux
  // Whether va is in the model's own address range (malloc's), not the program's memory.
  bool model_va(uint64_t va) const { return va >= kSimVaBase && va < next_va_; }
  // Copies between the process's virtual memory and a host buffer (page by page translation;
  // the CPU costs are the caller's). Returns false on an unmapped page.
  bool write_virt(uint64_t va, const void* data, uint64_t len);
  bool read_virt(uint64_t va, void* out, uint64_t len);

  // Page states: a page of malloc is resident; one of malloc_untouched is not yet touched (its
  // frame is reserved, but the first touch faults and zeroes it); pinned pages (mlock) cannot
  // be paged out; a paged-out page is read back from swap at its next touch.
  uint64_t malloc_untouched(uint64_t bytes);
  // A buffer of malloc / malloc_untouched given back: its pages leave the page table and their
  // frames go back to physical memory (the address range is not reused).
  void free(uint64_t va, uint64_t bytes);
  bool untouched(uint64_t va) const { return untouched_.count(va & ~(kPageSize - 1)) != 0; }
  // What making the page resident takes: nothing, a zeroed frame (not yet touched) or a read
  // from swap (paged out); the page is resident after.
  enum class Fault { kNone, kZero, kSwapIn };
  Fault fault_in(uint64_t va) {
    const uint64_t pg = va & ~(kPageSize - 1);
    if (!paged_out_.empty() && paged_out_.erase(pg)) return Fault::kSwapIn;
    return untouched_.erase(pg) ? Fault::kZero : Fault::kNone;
  }
  // Paged out (Os::page_out): a resident page that is not pinned goes to swap (its frame keeps
  // its bytes: it comes back to the same frame, a model simplification). False: it was not
  // resident or is pinned.
  bool page_out(uint64_t va) {
    const uint64_t pg = va & ~(kPageSize - 1);
    if (pinned_.count(pg) || untouched_.count(pg)) return false;
    return paged_out_.insert(pg).second;
  }
  bool paged_out(uint64_t va) const { return paged_out_.count(va & ~(kPageSize - 1)) != 0; }
  // munlock + madvise(MADV_DONTNEED): the range's pages are unpinned and dropped; the next
  // touch of each faults in a zeroed page again.
  void drop(uint64_t va, uint64_t len) {
    for (uint64_t pg = va & ~(kPageSize - 1); pg < va + len; pg += kPageSize) {
      pinned_.erase(pg);
      untouched_.insert(pg);
    }
  }
  void pin(uint64_t page_va) { pinned_.insert(page_va); }
  void unpin(uint64_t page_va) { pinned_.erase(page_va); }
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
  uint64_t next_frame_for(bool first);
  uint64_t next_va_ = kSimVaBase;
  uint64_t plain_pages_ = 0;  // pages of the program's own memory mapped here
  bool external_ = false;     // its pages are another OS process's (map_external)
  uint64_t last_frame_ = 0;
  std::unordered_set<uint64_t> pinned_;
  std::unordered_set<uint64_t> untouched_;
  std::unordered_set<uint64_t> paged_out_;
};

}  // namespace rnic::host
