// The host's operating system and the RNIC driver, as far as the costs they spend go
// (DESIGN.md §3.1). Host software is not cycle-accurate: each call spends the configured
// costs (cost.*) in simulated time on the calling SC_THREAD, and does its real work on the
// model's state (page tables in simulated memory, MMIO through the root complex).
//
//   mlock(len)        syscall entry + walk (walk_step_ns per entry read) + per page not yet
//                     touched page_fault_ns + zero_page_ns (faulted in first) + mlock_page_ns
//                     per page + syscall exit; past the LLC (working set: 8 B of PTE and 64 B
//                     of struct page per page) miss_ns of its lines
//   get_pbl(len)      ioctl: syscall entry + ioctl dispatch + walk + copy-out of the 8 B page
//                     addresses (copy_line_ns per 64 B line) + syscall exit; past the L1 and
//                     the LLC (working set: 8 B of PTE, 8 B of list and the 64 B struct page
//                     the walker references, per page) cache_ns of its lines
//   read_reg(off)     ioctl: syscall entry + ioctl dispatch + MMIO read + copy-out of one line
//                     + syscall exit
//   fault_pages(len)  (kernel, no system call: on-demand paging) walk + per page not yet touched
//                     page_fault_ns + zero_page_ns, per page paged out page_fault_ns +
//                     swap_in_ns
//   reclaim           (host.free_mib > 0) a page faulted in when no free memory is left first
//                     pages out the oldest page faulted in that is not pinned (and not part of
//                     the range being faulted in): MMU notifiers + reclaim_ns + page_out_ns
//   page_out(len)     madvise(MADV_PAGEOUT): syscall entry + the MMU notifiers (the driver
//                     makes on-demand regions' pages absent on the card first) + walk +
//                     page_out_ns per page paged out (resident, not pinned) + syscall exit
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "models/host/process.h"
#include "models/host/root_complex.h"

namespace rnic::host {

class Os {
 public:
  Os(PhysMem& mem, RootComplex& rc, const CostConfig& cost, StatRegistry& stats,
     const std::string& group = "host.os");
  // Spends ns of simulated time on the calling thread.
  static void spend(uint64_t ns);

  struct PblResult {
    std::vector<uint64_t> pages;  // physical address of each page
    uint64_t walk_reads = 0;      // page-table entries read
    bool ok = false;
  };
  // Each of these must be called from an SC_THREAD; each returns after its simulated time.
  uint64_t mlock(Process& p, uint64_t va, uint64_t len, uint64_t* walk_reads = nullptr);
  PblResult get_pbl(Process& p, uint64_t va, uint64_t len);
  std::vector<uint8_t> read_reg(uint64_t bar0_base, uint64_t offset, uint32_t len);
  // The pages of [va, va + len) made resident (faulted in as each needs), and their frames;
  // ok false at a page that is not mapped.
  PblResult fault_pages(Process& p, uint64_t va, uint64_t len);
  // Pages [va, va + len) of p out; returns how many went (pinned ones and ones not resident
  // stay). MMU notifiers (add_notifier) run first, on the calling thread.
  uint64_t page_out(Process& p, uint64_t va, uint64_t len);
  using Notifier = std::function<void(Process& p, uint64_t va, uint64_t len)>;
  void add_notifier(Notifier n) { notifiers_.push_back(std::move(n)); }
  // Runs the MMU notifiers for [va, va + len) of p (a munmap: Process::unmap_notifier).
  void notify(Process& p, uint64_t va, uint64_t len) {
    for (const Notifier& n : notifiers_) n(p, va, len);
  }
  void configure(const CostConfig& cost) { cost_ = cost; }
  // The last-level cache (host.llc_kib) and the level-1 data cache (host.l1d_kib).
  void set_llc_bytes(uint64_t b) { llc_bytes_ = b; }
  void set_l1_bytes(uint64_t b) { l1_bytes_ = b; }
  // What `lines` 64 B lines of an operation whose working set is `ws` bytes cost beyond their
  // in-cache cost: the share of them that cannot stay in the LLC, cost.llc_miss_ns each.
  uint64_t miss_ns(uint64_t ws, uint64_t lines) const {
    if (ws <= llc_bytes_) return 0;
    return uint64_t(double(lines) * double(ws - llc_bytes_) / double(ws) *
                    double(cost_.llc_miss_ns));
  }
  // The same over both levels: the share of the lines that cannot stay in the L1 costs
  // cost.l1_miss_ns each, and miss_ns on top for those that cannot stay in the LLC either.
  uint64_t cache_ns(uint64_t ws, uint64_t lines) const {
    const uint64_t l1 = ws <= l1_bytes_ ? 0
                                        : uint64_t(double(lines) * double(ws - l1_bytes_) /
                                                   double(ws) * double(cost_.l1_miss_ns));
    return l1 + miss_ns(ws, lines);
  }
  // Free memory for pages faulted in (host.free_mib; 0 pages: never short).
  void set_free_pages(uint64_t pages) {
    limited_ = pages > 0;
    free_pages_ = pages;
  }

 private:
  PhysMem& mem_;
  RootComplex& rc_;
  CostConfig cost_;
  Counter& syscalls_;
  Counter& walk_reads_;
  Counter& pages_pinned_;
  Counter& faults_;
  Counter& swap_ins_;
  Counter& pages_out_;
  Counter& reclaimed_;
  std::vector<Notifier> notifiers_;
  // Free memory and the pages faulted in, oldest first (reclaim's victims).
  uint64_t llc_bytes_ = uint64_t(32) << 20;
  uint64_t l1_bytes_ = uint64_t(32) << 10;
  bool limited_ = false;
  uint64_t free_pages_ = 0;
  std::deque<std::pair<Process*, uint64_t>> faulted_;
  // `pages` of p were just faulted in: they take free memory, or reclaim as many older pages
  // (not pinned: the caller pins the range it faults in meanwhile); the CPU time that costs.
  uint64_t take_free(Process& p, const std::vector<uint64_t>& pages);
  // Faulting in, each page as it needs: the CPU time it takes (its counters moved).
  uint64_t fault_cost_ns(Process::Fault f);
};

}  // namespace rnic::host
