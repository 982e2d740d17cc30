// rnicsim's verbs library (DESIGN.md §5): it implements rdma-core's <infiniband/verbs.h>
// (Debian's libibverbs-dev, rdma-core 44) as a provider does: that header's structs and enums,
// its exported functions defined here, its inline ones (ibv_post_send, ibv_poll_cq,
// ibv_req_notify_cq, ibv_query_port, ibv_advise_mr, ibv_query_device_ex, ...) reaching the card
// through the context's operations. A verbs program includes this header (or rdma-core's and
// this one for the rnic_* extensions), in C or C++, and runs as a simulated process
// (rnic::Cluster::run, or a scenario's `program:`). Calls block in simulated time. What the
// card does not do returns rdma-core's error for it and logs one line (docs/verbs.md).
//
// User-level costs: ibv_post_send / ibv_post_recv spend cost.wqe_build_ns per WR and write each
// WQE into the QP's window by MMIO (64-byte lines), then the doorbell (8 bytes), every
// reg::kWindowSlots WQEs at most; no system call. ibv_poll_cq reads the CQ ring in host memory
// (cost.cq_poll_ns per slot looked at) and, when it consumed CQEs, writes the consumer index
// doorbell. ibv_query_qp reads the QP's status register (one MMIO read). The rest are driver
// calls (models/host/driver.h).
//
// Extensions (rnic_*): a simulated process's memory and time, scatter-gather, physical and
// fast registrations, the registration cache, completion callbacks, the out-of-band board.
#ifndef RNICSIM_VERBS_H
#define RNICSIM_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include "models/host/verbs/verbs_enums.h"

#ifdef __cplusplus
extern "C" {
#endif

// Extension: a scatter-gather handle. The sges' addresses and lengths (their lkeys are not
// used), up to 256 regions, become one MR whose tagged offsets run from 0 (mr->addr is null)
// over the regions' concatenation in the order given; RDMA Read and Write at any offset cross
// from region to region. ibv_dereg_mr deregisters it. NULL with errno EINVAL for no region,
// more than 256, a 0-byte region or two that overlap.
struct ibv_mr* rnic_reg_sg_mr(struct ibv_pd* pd, const struct ibv_sge* sges, int num_sge,
                              int access);
// Extension, privileged callers only (a kernel consumer; a thread bound with `privileged`): a
// physical region. [pa, pa + length) of host physical memory, whatever it holds (memory of the
// kernel or of any process, or a hole), becomes one MR whose tagged offsets are the physical
// addresses (mr->addr is pa). NULL with errno EPERM for an unprivileged caller, EINVAL for a
// length of 0 or a range past the top of physical memory.
struct ibv_mr* rnic_reg_phys_mr(struct ibv_pd* pd, uint64_t pa, size_t length, int access);
// Extension, fast registration with pre-allocated STags (as the kernel's ib_alloc_mr /
// ib_map_mr_sg / IB_WR_REG_MR): rnic_alloc_fast_mr takes an STag of the PD, not yet valid, with
// room for max_pages pages; rnic_map_fast_mr pins [addr, addr + length) and writes its page list
// where the card will read it (EINVAL: more pages than max_pages, a length of 0); a
// RNIC_WR_FAST_REG_MR WR on a QP of the PD (rnic_wr_fast_reg) then makes the STag valid with its
// new key, in SQ order, through the card's firmware, and sets mr->lkey and mr->rkey to it; its
// CQE is RNIC_WC_FAST_REG_MR. IBV_WR_LOCAL_INV (invalidate_rkey) makes an STag of the QP's PD
// invalid again; a peer's Send with Invalidate does too. ibv_dereg_mr ends it.
struct ibv_mr* rnic_alloc_fast_mr(struct ibv_pd* pd, uint32_t max_pages);
int rnic_map_fast_mr(struct ibv_mr* mr, void* addr, size_t length);
// The fast registration's fields of a RNIC_WR_FAST_REG_MR WR, in rdma-core's bind_mw member:
// the MR (its pages as rnic_map_fast_mr last mapped them), the STag's new 8-bit key and the
// access rights it gets.
static inline void rnic_wr_fast_reg(struct ibv_send_wr* wr, struct ibv_mr* mr, uint8_t key,
                                    int access) {
  wr->opcode = RNIC_WR_FAST_REG_MR;
  wr->bind_mw.mw = NULL;
  wr->bind_mw.rkey = key;
  wr->bind_mw.bind_info.mr = mr;
  wr->bind_mw.bind_info.addr = 0;
  wr->bind_mw.bind_info.length = 0;
  wr->bind_mw.bind_info.mw_access_flags = (unsigned int)access;
}

// Extension: the registration (pin-down) cache's counts for a context (host.reg_cache_entries
// > 0; docs/memory.md). With the cache on, ibv_reg_mr of a range registered before with the same
// PD and access is a hit (no system call, the same STag); ibv_dereg_mr keeps the registration
// (its STag stays valid on the wire) until the cache evicts it or the program frees or unmaps
// memory it covers.
struct rnic_reg_cache_stats {
  uint64_t hits, misses, evictions, invalidations;
  uint64_t cached;  // registrations held, in use or idle
};
int rnic_reg_cache_query(struct ibv_context* context, struct rnic_reg_cache_stats* out);
// Sets the context's cache to hold up to `entries` idle registrations (0: off; the idle ones
// are deregistered now), as an MPI library's "leave pinned" switch. Returns 0 (ENOENT: no such
// context open).
int rnic_reg_cache_set(struct ibv_context* context, size_t entries);

// A buffer of `bytes` in the calling process's virtual memory (page aligned, scattered
// physical pages, a guard page after it). The pointer is a simulated address: pass it to verbs
// and to rnic_mem_*; never dereference it.
void* rnic_malloc(size_t bytes);
// As rnic_malloc, its pages not yet touched: the first touch of each (rnic_mem_*, the mlock of a
// registration, or the card through an on-demand MR) faults it in and zeroes it
// (cost.page_fault_ns + cost.zero_page_ns).
void* rnic_malloc_lazy(size_t bytes);
// madvise(MADV_PAGEOUT) as the kernel's reclaim would: the calling process's resident pages of
// [addr, addr + length) go out to swap (pinned ones stay); on-demand MRs' translations of them
// are made absent on the card first. The next touch reads each back (cost.swap_in_ns). Returns
// the pages paged out, or -1 with errno EINVAL (a length of 0).
long rnic_page_out(void* addr, size_t length);
// Copies between the calling process's simulated memory and the simulator's own (no simulated
// cost: set-up and checks). Return 0, or EFAULT for an unmapped page.
int rnic_mem_write(void* dst, const void* src, size_t len);
int rnic_mem_read(const void* src, void* dst, size_t len);
// Spends simulated time on the calling process.
void rnic_spend_ns(uint64_t ns);
// The calling thread's host CPU time so far, ns: what it computed (verbs, system calls,
// rnic_spend_ns) and busy-polled (rnic_wait_cq, rnic_wait_mem), not what it slept.
double rnic_cpu_ns(void);
// The host CPU time the driver's interrupt handler has spent so far on this thread's host, ns.
double rnic_irq_cpu_ns(void);

// Completion callbacks (Kernel PM2's style, docs/memory.md), on top of a completion channel: a
// callback per CQ, or per WR (its wr_id, once), runs in the thread that called
// rnic_dispatch_callbacks when that thread is woken by the CQ's completion event; what it
// spends (rnic_spend_ns) is that thread's CPU time, as are the wake-up (cost.wakeup_ns) and the
// CQ polls; the interrupt's entry is the driver's (rnic_irq_cpu_ns).
typedef void (*rnic_wc_cb)(const struct ibv_wc* wc, void* arg);
int rnic_cq_set_callback(struct ibv_cq* cq, rnic_wc_cb fn, void* arg);
int rnic_wr_set_callback(struct ibv_cq* cq, uint64_t wr_id, rnic_wc_cb fn, void* arg);
// Sleeps on `channel` until one of its CQs has an event, then polls that CQ empty, running each
// completion's callback (the WR's, else the CQ's; none: the completion is dropped), re-arms
// it and polls once more (a completion that landed before the re-arm). Returns the completions
// dispatched, or -1 with errno on failure.
int rnic_dispatch_callbacks(struct ibv_comp_channel* channel);
// Simulated time now, in ns.
double rnic_now_ns(void);
// No time limit for rnic_wait_cq / rnic_wait_mem: a wait that never ends is the run's watchdog's
// to report (sim.watchdog_us of no progress, with the state of every queue).
#define RNIC_WAIT_FOREVER UINT64_MAX

// Blocks until the CQ has a CQE to poll (or timeout_ns passes: returns 0 then, else 1). Costs
// what a busy ibv_poll_cq loop would: the CQE is seen at the first cost.cq_poll_ns step after
// it lands, counted from the call.
int rnic_wait_cq(struct ibv_cq* cq, uint64_t timeout_ns);
// The same over n CQs (of one host): blocks until one of them has a CQE; returns its index + 1,
// or 0 after timeout_ns (or for n < 1, or a CQ destroyed).
int rnic_wait_cqs(struct ibv_cq** cqs, int n, uint64_t timeout_ns);
// Goes on with a loop that polls n CQs (of one host) in turn and found nothing in its last
// round: round after round it spends poll_ns, then calls ibv_poll_cq(cqs[k], num_entries, wc)
// for k = 0..n-1 (cost.cq_poll_ns each), and does nothing else. Returns the result of the first
// of those calls that finds CQEs, just after it (*which = k), or 0 at the start of the first
// round that begins at or after until_ps (*which = -1; UINT64_MAX: no such round). The loop's
// simulated times, CQEs and CPU time, with a wait only where a call can find something (a CQE
// that lands at the time of a look is seen by it if it landed in that time's first delta
// cycle, as a look then sees it). -1 (errno EINVAL) for n < 1, no cqs or which, a CQ destroyed,
// CQs of several hosts or cost.cq_poll_ns 0.
int rnic_poll_rounds(struct ibv_cq** cqs, int n, uint64_t poll_ns, uint64_t until_ps,
                     int num_entries, struct ibv_wc* wc, int* which);

// Blocks until the byte at addr (in the calling process's memory) equals value, as a busy loop
// reading it every cost.cq_poll_ns would see it; returns 0 after timeout_ns, else 1.
int rnic_wait_mem(const void* addr, uint8_t value, uint64_t timeout_ns);

// Out-of-band exchange between programs, what rdma_cm or a TCP socket does in real life (the
// peer's GID, QPNs, buffer addresses and keys, its IRD): a key-value board shared by every host
// of the run, on the management network's latency model (host.mgmt_latency_ns and
// host.mgmt_gbps, as executables' sockets). rnic_oob_put stores `len` bytes under `key`
// (replacing them), seen one latency and its bytes' time later; rnic_oob_get waits until `key`
// is there and copies at most `len` bytes of it, returning how many it holds.
void rnic_oob_put(const char* key, const void* data, size_t len);
size_t rnic_oob_get(const char* key, void* data, size_t len);

#ifdef __cplusplus
}  // extern "C"
#endif

// A verbs program in a file of its own (docs/verbs.md, "Programs"): a shared object whose entry
// point is `RNIC_PROGRAM { ... }`, run by a scenario's `workloads: - program:` on each host it
// names with that host's arguments; its return value is its exit code. In C or C++.
#ifdef __cplusplus
#define RNIC_PROGRAM extern "C" int rnic_main(int argc, char** argv)
#else
#define RNIC_PROGRAM int rnic_main(int argc, char** argv)
#endif

#ifdef __cplusplus
namespace rnic::host {
class Driver;
class Process;
// Forgets every key of the out-of-band board (a new run starts with none).
void oob_clear();
// The calling simulated process's host (its driver) and process, set by the runner.
struct ProcessContext {
  Driver* drv = nullptr;
  Process* proc = nullptr;
  bool privileged = false;  // may register physical regions (rnic_reg_phys_mr)
};
// Binds the calling SC_THREAD to a host and a process (the runner does this before a program).
void bind_current_process(const ProcessContext& c);
void unbind_current_process();
}  // namespace rnic::host
#endif

#endif  // RNICSIM_VERBS_H
