#include "models/host/os.h"

#include "models/host/host_wait.h"

namespace rnic::host {

Os::Os(PhysMem& mem, RootComplex& rc, const CostConfig& cost, StatRegistry& stats,
       const std::string& group)
    : mem_(mem),
      rc_(rc),
      cost_(cost),
      syscalls_(stats.group(group).counter("syscalls", "calls", "system calls and ioctls")),
      walk_reads_(stats.group(group).counter("walk_reads", "reads",
                                             "page-table entries read by the kernel")),
      pages_pinned_(stats.group(group).counter("pages_pinned", "pages", "pages pinned by mlock")),
      faults_(stats.group(group).counter("page_faults", "pages",
                                         "pages faulted in (first touch: zeroed)")),
      swap_ins_(
          stats.group(group).counter("swap_ins", "pages", "paged-out pages read back from swap")),
      pages_out_(stats.group(group).counter("pages_out", "pages", "pages paged out")),
      reclaimed_(stats.group(group).counter(
          "reclaimed", "pages", "pages paged out to make room for a page faulted in")) {}

uint64_t Os::take_free(Process& p, const std::vector<uint64_t>& pages) {
  if (!limited_) return 0;
  uint64_t ns = 0;
  for (uint64_t va : pages) faulted_.emplace_back(&p, va);
  const uint64_t from_free = std::min<uint64_t>(free_pages_, pages.size());
  free_pages_ -= from_free;
  uint64_t need = pages.size() - from_free;
  // Victims: the oldest pages faulted in, still resident, not pinned, not of this range.
  const size_t ours = pages.size();
  while (need > 0 && faulted_.size() > ours) {
    const auto [vp, va] = faulted_.front();
    faulted_.pop_front();
    if (vp->pinned(va) || vp->untouched(va) || vp->paged_out(va)) continue;
    for (const Notifier& n : notifiers_) n(*vp, va, kPageSize);
    if (vp->page_out(va)) {
      ++reclaimed_;
      ++pages_out_;
      ns += uint64_t(cost_.reclaim_ns + cost_.page_out_ns);
      --need;
    }
  }
  return ns;  // what could not be reclaimed is taken beyond free memory
}

uint64_t Os::fault_cost_ns(Process::Fault f) {
  switch (f) {
    case Process::Fault::kZero:
      ++faults_;
      return uint64_t(cost_.page_fault_ns + cost_.zero_page_ns);
    case Process::Fault::kSwapIn:
      ++swap_ins_;
      return uint64_t(cost_.page_fault_ns + cost_.swap_in_ns);
    case Process::Fault::kNone:
      break;
  }
  return 0;
}

void Os::spend(uint64_t ns) { rnic::host::host_spend(ns * 1000); }

uint64_t Os::mlock(Process& p, uint64_t va, uint64_t len, uint64_t* walk_reads) {
  ++syscalls_;
  const CostConfig& c = cost_;
  uint64_t reads = 0, pages = 0;
  std::vector<uint8_t> faults;  // per page: what faulting it in takes (Process::Fault)
  std::vector<uint64_t> in;     // the pages faulted in
  p.page_table().walk_range(va, len, &reads, [&](uint64_t page_va, uint64_t) {
    // A page not yet touched is faulted in and zeroed first; a paged-out one read back.
    faults.push_back(uint8_t(p.fault_in(page_va)));
    if (faults.back() != uint8_t(Process::Fault::kNone)) in.push_back(page_va);
    p.pin(page_va);
    ++pages;
  });
  const uint64_t reclaim_ns = take_free(p, in);
  walk_reads_ += reads;
  if (walk_reads) *walk_reads = reads;
  // Past the LLC: the walk's PTE lines and each page's struct page (64 B) stream from memory.
  const uint64_t llc_ns = miss_ns(pages * (8 + 64), (pages + 7) / 8 + pages);
  spend(uint64_t(c.syscall_entry_ns) + reads * uint64_t(c.walk_step_ns) + reclaim_ns + llc_ns);
  // Faulting in and pinning, in slices of 4096 pages (each counted as it ends: a long mlock is
  // progress, not a hang, to the run's watchdog).
  for (uint64_t done = 0; done < pages;) {
    const uint64_t n = std::min<uint64_t>(4096, pages - done);
    uint64_t ns = n * uint64_t(c.mlock_page_ns);
    for (uint64_t i = done; i < done + n; ++i) ns += fault_cost_ns(Process::Fault(faults[i]));
    spend(ns);
    pages_pinned_ += n;
    done += n;
  }
  spend(uint64_t(c.syscall_exit_ns));
  return pages;
}

Os::PblResult Os::get_pbl(Process& p, uint64_t va, uint64_t len) {
  ++syscalls_;
  const CostConfig& c = cost_;
  PblResult r;
  r.ok = p.page_table().walk_range(va, len, &r.walk_reads,
                                   [&](uint64_t, uint64_t pa) { r.pages.push_back(pa); });
  walk_reads_ += r.walk_reads;
  const uint64_t n = r.pages.size(), lines = (n * 8 + 63) / 64;
  // The walker (get_user_pages) takes and drops a reference on each page, touching its 64 B
  // struct page as well as the PTE line walked and the list line copied. Right after an mlock
  // of the range (the usual order) its lines are where mlock left them: in the L1 while the
  // working set fits it (a 1 MiB buffer's 20 KiB), in the LLC while it fits that.
  const uint64_t llc_ns = cache_ns(n * (8 + 8 + 64), 2 * lines + n);
  spend(uint64_t(c.syscall_entry_ns) + uint64_t(c.ioctl_dispatch_ns) +
        r.walk_reads * uint64_t(c.walk_step_ns) + lines * uint64_t(c.copy_line_ns) + llc_ns +
        uint64_t(c.syscall_exit_ns));
  return r;
}

Os::PblResult Os::fault_pages(Process& p, uint64_t va, uint64_t len) {
  PblResult r;
  std::vector<uint8_t> faults;
  std::vector<uint64_t> in;  // the pages faulted in
  r.ok = p.page_table().walk_range(va, len, &r.walk_reads, [&](uint64_t page_va, uint64_t pa) {
    faults.push_back(uint8_t(p.fault_in(page_va)));
    if (faults.back() != uint8_t(Process::Fault::kNone)) in.push_back(page_va);
    r.pages.push_back(pa);
  });
  walk_reads_ += r.walk_reads;
  // The range's pages are held while reclaim runs (as the kernel's fault path holds them).
  std::vector<uint64_t> held;
  for (uint64_t pg = va & ~(kPageSize - 1); pg < va + len; pg += kPageSize)
    if (!p.pinned(pg)) {
      p.pin(pg);
      held.push_back(pg);
    }
  const uint64_t reclaim_ns = take_free(p, in);
  for (uint64_t pg : held) p.unpin(pg);
  const uint64_t n = r.pages.size();
  spend(r.walk_reads * uint64_t(cost_.walk_step_ns) + reclaim_ns +
        miss_ns(n * (8 + 64), (n + 7) / 8 + n));
  for (size_t done = 0; done < faults.size();) {  // slices, as mlock's
    const size_t n = std::min<size_t>(4096, faults.size() - done);
    uint64_t ns = 0;
    for (size_t i = done; i < done + n; ++i) ns += fault_cost_ns(Process::Fault(faults[i]));
    spend(ns);
    done += n;
  }
  return r;
}

uint64_t Os::page_out(Process& p, uint64_t va, uint64_t len) {
  ++syscalls_;
  spend(uint64_t(cost_.syscall_entry_ns));
  for (const Notifier& n : notifiers_) n(p, va, len);
  uint64_t reads = 0, pages = 0;
  p.page_table().walk_range(va, len, &reads,
                            [&](uint64_t page_va, uint64_t) { pages += p.page_out(page_va); });
  walk_reads_ += reads;
  pages_out_ += pages;
  if (limited_) free_pages_ += pages;
  spend(reads * uint64_t(cost_.walk_step_ns) + pages * uint64_t(cost_.page_out_ns) +
        uint64_t(cost_.syscall_exit_ns));
  return pages;
}

std::vector<uint8_t> Os::read_reg(uint64_t bar0_base, uint64_t offset, uint32_t len) {
  ++syscalls_;
  const CostConfig& c = cost_;
  spend(uint64_t(c.syscall_entry_ns) + uint64_t(c.ioctl_dispatch_ns));
  auto v = rc_.mmio_read(bar0_base + offset, len);
  spend(uint64_t(c.copy_line_ns) + uint64_t(c.syscall_exit_ns));
  return v;
}

}  // namespace rnic::host
