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
                                         "pages faulted in (first touch: zeroed) by mlock")) {}

void Os::spend(uint64_t ns) { rnic::host::host_spend(ns * 1000); }

uint64_t Os::mlock(Process& p, uint64_t va, uint64_t len, uint64_t* walk_reads) {
  ++syscalls_;
  const CostConfig& c = cost_;
  uint64_t reads = 0, pages = 0;
  uint64_t faults = 0;
  p.page_table().walk_range(va, len, &reads, [&](uint64_t page_va, uint64_t) {
    faults += p.touch(page_va);  // a page not yet touched is faulted in and zeroed first
    p.pin(page_va);
    ++pages;
  });
  walk_reads_ += reads;
  if (walk_reads) *walk_reads = reads;
  spend(uint64_t(c.syscall_entry_ns) + reads * uint64_t(c.walk_step_ns));
  // Faulting in and pinning, in slices of 4096 pages (each counted as it ends: a long mlock is
  // progress, not a hang, to the run's watchdog).
  const uint64_t per_fault = uint64_t(c.page_fault_ns + c.zero_page_ns);
  for (uint64_t done = 0, f = faults; done < pages;) {
    const uint64_t n = std::min<uint64_t>(4096, pages - done);
    const uint64_t nf = std::min(n, f);
    spend(nf * per_fault + n * uint64_t(c.mlock_page_ns));
    pages_pinned_ += n;
    faults_ += nf;
    done += n;
    f -= nf;
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
  const uint64_t lines = (r.pages.size() * 8 + 63) / 64;
  spend(uint64_t(c.syscall_entry_ns) + uint64_t(c.ioctl_dispatch_ns) +
        r.walk_reads * uint64_t(c.walk_step_ns) + lines * uint64_t(c.copy_line_ns) +
        uint64_t(c.syscall_exit_ns));
  return r;
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
