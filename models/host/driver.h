// The RNIC driver model (kernel level, DESIGN.md §3.1): resource allocation (PDs, QPs, CQs,
// STags, PBLMT space), the page walk to a PBL, programming the card through the firmware's
// command queue in BAR0 (docs/firmware.md), QP state changes, interrupts and async events.
//
// Costs: every call is an ioctl (syscall entry + cost.ioctl_dispatch_ns + its work + syscall
// exit) spent on the calling thread. A command is one 64-byte MMIO write of its queue slot and
// one MMIO write of the producer count; then (host.cmd_wait poll) 8-byte MMIO reads of its
// completion word until it is there, or (interrupt) the command's MSI-X (cost.interrupt_entry_ns
// on the interrupt thread, an MMIO read of the consumer count) and one read of the word. While
// a command runs other threads' ioctls may post theirs. Memory registration also pins and
// walks the pages (Os::mlock, Os::get_pbl) and copies the page list into a kernel DMA buffer
// (cost.copy_line_ns per 64 B line). Interrupts: an MSI-X costs cost.interrupt_entry_ns on the
// driver's interrupt thread, which reads EVENT until it is empty. On-demand paging: a page-fault
// MSI-X costs interrupt_entry_ns and copy_line_ns per record read from the fault ring and one
// MMIO write (FAULT_CONSUMER); the ODP worker thread it wakes pays wakeup_ns, then per fault
// Os::fault_pages, copy_line_ns per 64 B of page list and one ODP_MAP command.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/bytes.h"
#include "models/common/ordered_mutex.h"
#include "models/common/stats.h"
#include "models/host/host_params.h"
#include "models/host/os.h"
#include "models/host/verbs/verbs_enums.h"
#include "models/rnic/abi/caps.h"
#include "models/rnic/abi/commands.h"

namespace rnic::host {

class Driver {
 public:
  struct AsyncEvent {
    ibv_event_type type;
    uint32_t num;  // QP or CQ number
  };
  struct CqInfo {
    uint32_t cqn = 0;
    uint64_t ring_pa = 0;
    uint32_t entries = 0;
  };
  // A QP; in host-ring mode (host.wqe_mode = ring) also its WQE rings: depth x 128 B each,
  // physically contiguous, mapped into the process like the CQ rings.
  struct QpInfo {
    uint32_t qpn = 0;
    uint64_t sq_ring = 0, rq_ring = 0;
  };
  struct MrInfo {
    uint32_t lkey = 0;
    uint32_t pbl_first = 0, pbl_count = 0;
  };

  Driver(std::string name, PhysMem& mem, RootComplex& rc, Os& os, uint64_t bar0, uint64_t bar2,
         MacAddr mac, const abi::CardCaps& caps, const HostConfig& host, const CostConfig& cost,
         StatRegistry& stats);

  const std::string& name() const { return name_; }
  const MacAddr& mac() const { return mac_; }
  PhysMem& mem() { return mem_; }
  RootComplex& rc() { return rc_; }
  Os& os() { return os_; }
  const abi::CardCaps& caps() const { return caps_; }
  const CostConfig& cost() const { return cost_; }
  const HostConfig& host_config() const { return host_; }
  // Host CPU time the interrupt handler has spent (entry, its MMIO reads and writes), ps.
  uint64_t irq_cpu_ps() const { return irq_cpu_ps_; }
  uint64_t bar0() const { return bar0_; }
  uint64_t bar2() const { return bar2_; }
  uint64_t qp_page(uint32_t qpn) const { return bar2_ + uint64_t(qpn) * 4096; }

  // Each from a host thread; each returns 0 or an errno.
  int open();  // enables the card, programs MSI-X, unmasks interrupts
  int alloc_pd(uint32_t* pd);
  int dealloc_pd(uint32_t pd);
  int create_cq(uint32_t entries, CqInfo* out);
  int destroy_cq(uint32_t cqn);
  // With srq (a number create_srq gave) the QP takes its receive WQEs from that SRQ, and
  // rq_depth must be 0.
  static constexpr uint32_t kNoSrq = ~0u;
  int create_qp(uint32_t pd, uint32_t scq, uint32_t rcq, uint32_t sq_depth, uint32_t rq_depth,
                QpInfo* out, uint32_t srq = kNoSrq);
  // A shared receive queue of `depth` WQEs: it takes a QP number (and page) of its own; its
  // WQEs are posted through its page's RQ doorbell and window (or RQ ring) as a QP's are.
  int create_srq(uint32_t pd, uint32_t depth, QpInfo* out);
  // attr fields as ibv_modify_qp's, already checked by the caller; mtu: path_mtu in bytes;
  // read_timeout_ns: the Read Response timer timeout and retry_cnt give (0: none).
  struct QpAttrs {
    MacAddr peer{};
    uint32_t peer_qpn = 0, ird = 0, ord = 0, access = 0, mtu = 0;
    uint64_t read_timeout_ns = 0;
    uint8_t role = 0;  // abi::ConnRole; set (with kRole) when not kRoleByRule
    uint16_t local_port = 0, remote_port = 0;  // the connection manager's (set when not 0)
  };
  int modify_qp(uint32_t qpn, uint32_t mask, ibv_qp_state state, const QpAttrs& a);
  int destroy_qp(uint32_t qpn);  // a QP or an SRQ
  // One firmware command (models/rnic/abi/commands.h), posted and waited for, inside an ioctl.
  // Returns its result (0 or an errno) and, when asked, its result value.
  template <class Cmd>
  int command(const Cmd& c, uint32_t* value = nullptr) {
    const auto a = c.encode();
    return command(Cmd::kOp, a.data(), a.size(), value);
  }
  int reg_mr(Process& p, uint32_t pd, uint64_t va, uint64_t len, uint32_t access, MrInfo* out);
  // A scatter-gather handle: `regions` (virtual address, length) as one STag whose tagged
  // offsets run from 0 over their concatenation, in the order given. Refused with EINVAL: no
  // region, more than kMaxSgRegions, a 0-byte region, two that overlap.
  static constexpr size_t kMaxSgRegions = 256;
  int reg_sg_mr(Process& p, uint32_t pd, const std::vector<std::pair<uint64_t, uint64_t>>& regions,
                uint32_t access, MrInfo* out);
  // A physical region (kernel callers only): [pa, pa + len) of host physical memory as one STag
  // (type kStagPhysical) whose tagged offsets are the physical addresses. Refused with EINVAL:
  // a length of 0, a range past the top of physical memory.
  int reg_phys_mr(uint32_t pd, uint64_t pa, uint64_t len, uint32_t access, MrInfo* out);
  // Fast registration: an STag of `pd` allocated not yet valid (ALLOC_FAST_MR) with max_pages
  // PBLMT entries and a kernel page-list buffer the card reads; map_fast_mr pins and walks
  // [va, va + len) and writes its page list there (EINVAL: more pages than max_pages).
  struct FastMrInfo {
    uint32_t stag = 0, pbl_first = 0, max_pages = 0;
    uint64_t list_pa = 0;
  };
  int alloc_fast_mr(uint32_t pd, uint32_t max_pages, FastMrInfo* out);
  int map_fast_mr(Process& p, const FastMrInfo& f, uint64_t va, uint64_t len, uint32_t* pages);
  int dereg_mr(const MrInfo& mr);

  // Kernel consumers (docs/memory.md, "Kernel consumers"): code running in the simulated kernel
  // (an SRP-style initiator or target) calls these directly: no system call, no copy from user
  // space. Its memory is kernel memory, addressed through the kernel's direct map
  // (kernel_va(pa)): resident, its physical addresses known, nothing to pin or walk. Each call
  // spends cost.kernel_reg_call_ns (the kernel verbs layer's own work per registration call) and
  // one firmware command; each region costs cost.kernel_region_ns (its address translated, its
  // extent written).
  static constexpr uint64_t kDirectMap = 0xffff888000000000ull;
  static uint64_t kernel_va(uint64_t pa) { return kDirectMap + pa; }
  // Physically contiguous kernel memory of at least `bytes`: its kernel address.
  uint64_t kmalloc(uint64_t bytes);
  // One buffer as one MR (a page list; its tagged offsets are its kernel addresses).
  int kernel_reg_mem(uint32_t pd, uint64_t kva, uint64_t len, uint32_t access, MrInfo* out);
  // The scatter-gather pair: `regions` (kernel address, length) locked into one handle with one
  // firmware command (tagged offsets from 0 over their concatenation, as reg_sg_mr), and the
  // handle unlocked. Refused as reg_sg_mr refuses, and EFAULT for an address outside the
  // direct map of this host's memory.
  int kernel_lock_sg(uint32_t pd, const std::vector<std::pair<uint64_t, uint64_t>>& regions,
                     uint32_t access, MrInfo* out);
  int kernel_dereg(const MrInfo& mr);
  // On-demand paging (docs/memory.md): [va, va + len) of p as an MR without pinning (type
  // kStagOnDemand), every page absent on the card. A page the card touches faults: the card
  // writes a record into the fault ring and interrupts; the driver's ODP worker faults the
  // range in (Os::fault_pages) and sends ODP_MAP. EINVAL: a length of 0.
  int reg_odp_mr(Process& p, uint32_t pd, uint64_t va, uint64_t len, uint32_t access, MrInfo* out);
  // Prefetch (ibv_advise_mr): the pages of [va, va + len) of the on-demand MR `lkey` in and on
  // the card, on the calling thread (wait) or by the ODP worker (returns at once). EINVAL: not
  // an on-demand MR of `pd`, or a range outside it; EFAULT (wait): the range is not mapped.
  int advise_mr(uint32_t pd, uint32_t lkey, uint64_t va, uint64_t len, bool wait);

  // Async events, in order (ibv_get_async_event blocks on async_event()).
  std::deque<AsyncEvent>& async_queue() { return async_; }
  sc_core::sc_event& async_event() { return async_ev_; }
  // Completion events of CQ n (an armed CQ's MSI-X).
  std::function<void(uint32_t cqn)> on_cq_event;
  // The verbs library's timing probe (the request timeline, latency breakdowns), called at the
  // simulated time of each point: a post_send's entry (kPost: tag the SQ index its first WQE
  // takes) and return (kPosted: tag the SQ's producer index after it), a CQE taken by poll_cq
  // (kPolled: tag its WQE index, aux 1 for a receive's) and a busy wait on memory seeing its
  // value (kMemSeen: tag the byte's host address).
  enum class Probe { kPost, kPosted, kPolled, kMemSeen };
  std::function<void(Probe, uint32_t qpn, uint64_t tag, uint64_t aux)> probe;
  // Card writes into host memory (the verbs library watches its CQ rings).
  void watch(uint64_t base, uint64_t len, sc_core::sc_event* ev);
  void unwatch(sc_core::sc_event* ev);
  // The first write into ev's range since clear_first_write(ev): its time and its delta cycle
  // of that time (delta_now()); false if none came.
  bool first_write(const sc_core::sc_event* ev, uint64_t* ps, uint64_t* delta) const;
  void clear_first_write(const sc_core::sc_event* ev);

 private:
  // CREATE_QP of a QP or an SRQ (flags: abi::CreateQp's) on the first free QP number.
  int create_queue(uint32_t pd, uint32_t scq, uint32_t rcq, uint32_t sq_depth, uint32_t rq_depth,
                   uint32_t flags, uint32_t srq, QpInfo* out);
  int install_mr(const void* list, uint32_t n, abi::WriteStag w, MrInfo* out);
  static abi::WriteStag page_list_stag(abi::StagType type, uint32_t access, uint32_t pd,
                                       uint64_t va, uint64_t len);
  // On-demand paging: the fault ring's records taken by the interrupt handler; the worker
  // that resolves them (and asynchronous prefetches); making a range present (ODP_MAP) and
  // absent (ODP_UNMAP, the MMU notifier's part).
  struct OdpMr {
    Process* proc = nullptr;
    uint64_t va = 0, len = 0;
    uint32_t stag = 0, pbl_first = 0, pd = 0;
    std::vector<bool> present;  // per page: mapped on the card (ODP_MAP, not ODP_UNMAP since)
  };
  struct OdpJob {
    uint32_t stag = 0;
    uint64_t to = 0, end = 0;
    uint64_t t0 = 0;  // when its interrupt reached the driver (0: a prefetch)
  };
  void odp_thread();
  int odp_map(const OdpJob& j);
  int odp_load(const OdpJob& j, const abi::OdpMap& m, uint64_t list);
  uint64_t take_list(uint64_t bytes);
  void odp_invalidate(Process& p, uint64_t va, uint64_t len);
  int command(uint32_t op, const uint32_t* args, size_t n, uint32_t* value);
  void ioctl_enter();
  void ioctl_exit();
  uint64_t alloc_dma(uint64_t bytes);  // physically contiguous kernel memory
  uint64_t kernel_pa(uint64_t kva, uint64_t len) const;
  int alloc_range(std::map<uint32_t, uint32_t>& free, uint32_t n, uint32_t* first);
  uint32_t free_stag() const;  // the lowest SMT index not in use (0: none; 0 is reserved)
  void free_range(std::map<uint32_t, uint32_t>& free, uint32_t first, uint32_t n);
  void irq_thread();

  std::string name_;
  PhysMem& mem_;
  RootComplex& rc_;
  Os& os_;
  uint64_t bar0_, bar2_;
  MacAddr mac_;
  abi::CardCaps caps_;
  HostConfig host_;
  CostConfig cost_;
  bool opened_ = false;
  uint32_t next_pd_ = 1;
  std::vector<bool> qp_used_, cq_used_, stag_used_;
  // Host-ring mode: each QP number's rings (physical base, slots), kept for the next QP that
  // takes the number (kernel DMA memory is not returned).
  struct Ring {
    uint64_t pa = 0;
    uint32_t slots = 0;
  };
  std::vector<Ring> sq_rings_, rq_rings_;
  std::vector<uint8_t> stag_key_;
  std::map<uint32_t, uint32_t> pbl_free_;  // first -> count
  // Held from an ioctl's entry to its exit, except while its command runs: resource allocation
  // consistent between the threads of processes that share the card. A resource is taken
  // before its command is posted and given back if the command fails. Threads that ask at one
  // time get it in a stated order (OrderedMutex), not SystemC's.
  OrderedMutex ioctl_lock_;
  uint32_t cmd_posted_ = 0, cmd_completed_ = 0;  // the command queue's producer; completions seen
  sc_core::sc_event cmd_ev_;
  sc_core::sc_event irq_ev_, async_ev_;
  std::deque<uint32_t> irq_pending_;
  uint64_t irq_cpu_ps_ = 0;
  std::deque<AsyncEvent> async_;
  std::map<uint32_t, OdpMr> odp_;  // by SMT index
  std::deque<OdpJob> odp_jobs_;    // faults and asynchronous prefetches, in order
  std::deque<OdpJob> odp_ahead_;   // background mapping past faults: after every job above
  static constexpr uint64_t kOdpAheadPages = 64;  // pages per background ODP_MAP
  sc_core::sc_event odp_ev_;
  uint64_t fault_ring_ = 0;                               // the fault ring's host address
  uint32_t fault_taken_ = 0;                              // records taken (FAULT_CONSUMER)
  std::vector<std::pair<uint64_t, uint64_t>> odp_lists_;  // free page-list buffers (pa, bytes)
  uint64_t odp_invalidations_ = 0;  // ODP_UNMAPs sent (odp_map retries when it moved)
  Counter &odp_faults_, &odp_pages_mapped_, &odp_pages_unmapped_, &odp_failed_;
  Histogram& odp_fault_ns_;
  struct Watch {
    uint64_t base, end;
    sc_core::sc_event* ev;
    bool written = false;  // first_write
    uint64_t first_ps = 0, first_delta = 0;
  };
  std::vector<Watch> watches_;
};

}  // namespace rnic::host
