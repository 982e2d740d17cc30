// Host parameters: memory and its map (host.*) and the CPU/OS costs host software spends (cost.*).
#pragma once

#include <cstdint>
#include <string>

#include "models/common/params.h"

namespace rnic {

struct HostConfig {
  int64_t mem_mib = 16384;            // MiB of physical memory
  std::string hole_behaviour = "ur";  // "ur" | "timeout": DMA reads of a hole
  std::string wqe_mode = "mmio";      // "mmio": WQEs written into the card's windows;
                                      // "ring": host-memory rings fetched by DMA
  int64_t reg_cache_entries = 0;      // the verbs library's registration cache: idle
                                      // registrations it keeps (0: off)
  std::string cmd_wait = "poll";      // "poll": the driver reads a command's completion word
                                      // until it is there; "interrupt": it sleeps until the
                                      // command's completion interrupt
  int64_t llc_kib = 32768;            // the host CPU's last-level cache
  int64_t l1d_kib = 32;               // its level-1 data cache (cost.l1_miss_ns)
  int64_t free_mib = 0;               // memory free for pages faulted in (0: never short);
                                      // beyond it each page faulted in reclaims another
  int64_t odp_prefetch_kib = 4096;    // on-demand paging: after a fault the driver maps this
                                      // far past the faulting address, in the background
  int64_t hole_base_mib = 3072;       // MiB, device-reserved window start (below 4 GiB)
  int64_t hole_mib = 1024;            // MiB, its size (0 = none)
  double malloc_scatter = 0.5;        // probability that the next page of a buffer is not
                                      // physically adjacent to the previous one
  int64_t malloc_max_gap = 64;        // pages, largest jump between two scattered pages
  // The management network between hosts (sim/exec/mgmt_net.h): executables' TCP sockets.
  int64_t mgmt_latency_ns = 15000;         // one way, program to program (kernels included)
  double mgmt_gbps = 1;                    // its rate
  int64_t mgmt_connect_wait_us = 1000000;  // a connect waits this long for a listener
  int64_t cpu_mhz = 3000;  // the host CPU's clock: an executable's cycle counter counts at it

  // Lists every field under "host." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("mem_mib", mem_mib, "MiB", 64, 1 << 22, "physical memory size");
    p.s("hole_behaviour", hole_behaviour, {"ur", "timeout"},
        "DMA read of a hole: Unsupported Request, or no completion");
    p.s("wqe_mode", wqe_mode, {"mmio", "ring"},
        "WQEs written into the card by MMIO, or host-memory rings the card fetches by DMA");
    p.i("reg_cache_entries", reg_cache_entries, "MRs", 0, 1 << 20,
        "registration (pin-down) cache of the verbs library: deregistered MRs it keeps for a "
        "registration of the same range (0: off, deregistration is immediate)");
    p.s("cmd_wait", cmd_wait, {"poll", "interrupt"},
        "the driver waits for a firmware command by polling its completion word, or sleeps "
        "until its completion interrupt");
    p.i("llc_kib", llc_kib, "KiB", 64, 1 << 22,
        "the host CPU's last-level cache: a page walk, pinning or page-list copy whose working "
        "set exceeds it pays cost.llc_miss_ns for the lines that miss");
    p.i("l1d_kib", l1d_kib, "KiB", 1, 1 << 20,
        "the host CPU's level-1 data cache: a PBL acquisition whose working set exceeds it pays "
        "cost.l1_miss_ns for the lines that miss it");
    p.i("free_mib", free_mib, "MiB", 0, 1 << 22,
        "free memory for pages faulted in (first touch, swap-in; 0: never short). Once it is "
        "used up, each page faulted in first reclaims the oldest page faulted in that is not "
        "pinned (cost.reclaim_ns + its page-out)");
    p.i("odp_prefetch_kib", odp_prefetch_kib, "KiB", 0, 1 << 22,
        "on-demand paging: once a fault's range is mapped, the driver's worker maps the region "
        "on to this far past the faulting address, 64 pages at a time, behind any new fault");
    p.i("hole_base_mib", hole_base_mib, "MiB", 0, 1 << 22, "device-reserved window start");
    p.i("hole_mib", hole_mib, "MiB", 0, 1 << 22, "device-reserved window size (0 = none)");
    p.r("malloc_scatter", malloc_scatter, "", 0, 1,
        "probability that a buffer's next page is not physically adjacent");
    p.i("malloc_max_gap", malloc_max_gap, "pages", 1, 1 << 20,
        "largest jump between scattered pages");
    p.i("mgmt_latency_ns", mgmt_latency_ns, "ns", 0, 1000000000,
        "management network (executables' TCP sockets between hosts): one-way latency, program "
        "to program");
    p.r("mgmt_gbps", mgmt_gbps, "Gb/s", 0.001, 1000, "management network: rate");
    p.i("cpu_mhz", cpu_mhz, "MHz", 1, 100000,
        "the host CPU's clock: an executable's cycle counter (rdtsc) counts simulated time at it, "
        "and its /proc/cpuinfo says so");
    p.i("mgmt_connect_wait_us", mgmt_connect_wait_us, "us", 0, 1000000000,
        "management network: how long a connect waits for a listener to appear before "
        "ECONNREFUSED");
  }
};

// CPU/OS costs (host software is not cycle-accurate: it spends these).
struct CostConfig {
  int64_t syscall_entry_ns = 120;
  int64_t syscall_exit_ns = 100;
  int64_t ioctl_dispatch_ns = 400;    // driver ioctl: fd lookup, argument copy-in, command decode
  int64_t walk_step_ns = 25;          // one page-table entry read by the kernel walker
  int64_t copy_line_ns = 35;          // copy_to_user / copy_from_user per 64 B line
  int64_t mlock_page_ns = 32;         // pin one page (refcount, LRU isolation)
  int64_t page_fault_ns = 600;        // a page's first touch: the fault, a frame, its PTE
  int64_t zero_page_ns = 400;         // zeroing the new 4 KiB frame
  int64_t interrupt_entry_ns = 900;   // MSI-X to the handler's first instruction
  int64_t mmio_issue_ns = 45;         // core -> uncore -> root complex for an MMIO access
  int64_t mmio_return_ns = 25;        // CplD at the root complex -> the load retires
  int64_t wqe_build_ns = 10;          // the verbs library forms one WQE
  int64_t cq_poll_ns = 10;            // the verbs library reads one CQE slot (cache line)
  int64_t reg_cache_lookup_ns = 50;   // the verbs library looks a range up in its cache
  int64_t page_out_ns = 1500;         // reclaim one page: unmap it, queue its write to swap
  int64_t swap_in_ns = 20000;         // a paged-out page's fault: its 4 KiB read back from swap
  int64_t reclaim_ns = 1000;          // direct reclaim: finding a victim page (LRU scan)
  int64_t llc_miss_ns = 6;            // a 64 B line streamed from memory, not the LLC
  int64_t l1_miss_ns = 0;             // a line the walker finds in the LLC, not the L1 (0: in
                                      // the in-cache costs)
  int64_t kernel_reg_call_ns = 6460;  // a kernel consumer's registration call: the kernel
                                      // verbs layer's work beyond the firmware command
  int64_t kernel_region_ns = 20;      // a kernel region's address translated, its extent
                                      // written
  int64_t wakeup_ns = 1500;           // a sleeping thread woken by an interrupt: the scheduler
                                      // and context switch until it runs
  int64_t clock_read_ns = 20;         // a program reads the clock (the vDSO's clock_gettime)

  // Lists every field under "cost." (units, ranges, descriptions).
  void describe(ParamList& p) {
    p.i("syscall_entry_ns", syscall_entry_ns, "ns", 0, 1000000, "system call entry");
    p.i("syscall_exit_ns", syscall_exit_ns, "ns", 0, 1000000, "system call exit");
    p.i("ioctl_dispatch_ns", ioctl_dispatch_ns, "ns", 0, 1000000,
        "driver ioctl dispatch: fd lookup, argument copy-in, decode");
    p.i("walk_step_ns", walk_step_ns, "ns", 0, 1000000, "one page-table entry read");
    p.i("copy_line_ns", copy_line_ns, "ns", 0, 1000000, "copy to/from user, per 64 B line");
    p.i("mlock_page_ns", mlock_page_ns, "ns", 0, 1000000, "pin one page");
    p.i("page_fault_ns", page_fault_ns, "ns", 0, 1000000,
        "first touch of a page: the fault, a frame, its page-table entry");
    p.i("zero_page_ns", zero_page_ns, "ns", 0, 1000000, "zeroing a new 4 KiB frame");
    p.i("page_out_ns", page_out_ns, "ns", 0, 1000000,
        "paging one page out: unmapping it and queueing its write to swap (not waited for)");
    p.i("llc_miss_ns", llc_miss_ns, "ns", 0, 100000,
        "a 64 B line of a page walk, pinning or page-list copy streamed from memory because its "
        "working set exceeds host.llc_kib (on top of walk_step_ns, mlock_page_ns, copy_line_ns)");
    p.i("l1_miss_ns", l1_miss_ns, "ns", 0, 100000,
        "a 64 B line a PBL acquisition finds in the LLC but not the L1 because its working set "
        "exceeds host.l1d_kib (0: such misses are in walk_step_ns and copy_line_ns)");
    p.i("kernel_reg_call_ns", kernel_reg_call_ns, "ns", 0, 100000000,
        "a kernel consumer's registration call (one buffer, or a scatter list locked as one "
        "handle): the kernel verbs layer's own work, beyond its one firmware command");
    p.i("kernel_region_ns", kernel_region_ns, "ns", 0, 1000000,
        "a kernel consumer's registration: per region, its direct-map address translated and "
        "its extent or page entry written");
    p.i("reclaim_ns", reclaim_ns, "ns", 0, 1000000,
        "direct reclaim when free memory is short: finding a victim page, per page (its "
        "page-out costs page_out_ns on top)");
    p.i("swap_in_ns", swap_in_ns, "ns", 0, 100000000,
        "a fault on a paged-out page: reading its 4 KiB back from swap, waited for");
    p.i("interrupt_entry_ns", interrupt_entry_ns, "ns", 0, 1000000, "MSI-X to handler");
    p.i("mmio_issue_ns", mmio_issue_ns, "ns", 0, 1000000, "core to root complex, per MMIO access");
    p.i("wqe_build_ns", wqe_build_ns, "ns", 0, 1000000, "the verbs library forms a WQE");
    p.i("cq_poll_ns", cq_poll_ns, "ns", 0, 1000000, "the verbs library reads one CQE slot");
    p.i("clock_read_ns", clock_read_ns, "ns", 0, 1000000,
        "an executable reads the clock (gettimeofday, clock_gettime, time): each read advances "
        "its clock by this much");
    p.i("wakeup_ns", wakeup_ns, "ns", 0, 1000000,
        "a thread sleeping on a completion channel, from its interrupt's handler to running");
    p.i("reg_cache_lookup_ns", reg_cache_lookup_ns, "ns", 0, 1000000,
        "the verbs library looks a range up in its registration cache");
    p.i("mmio_return_ns", mmio_return_ns, "ns", 0, 1000000,
        "completion at the root complex to the load retiring");
  }
};

}  // namespace rnic
