// rnicsim's verbs library (DESIGN.md §5): rdma-core's <infiniband/verbs.h> names, structs and
// enum values for what it covers, so a verbs program ports by changing its include and running
// its body as a simulated process (rnic::Cluster::run). Calls block in simulated time.
//
// User-level costs: ibv_post_send / ibv_post_recv spend cost.wqe_build_ns per WR and write each
// WQE into the QP's window by MMIO (64-byte lines), then the doorbell (8 bytes), every
// reg::kWindowSlots WQEs at most; no system call. ibv_poll_cq reads the CQ ring in host memory
// (cost.cq_poll_ns per slot looked at) and, when it consumed CQEs, writes the consumer index
// doorbell. ibv_query_qp reads the QP's status register (one MMIO read). The rest are driver
// calls (models/host/driver.h).
//
// Extensions (rnic_*): a simulated process's memory and time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/host/verbs/verbs_enums.h"

namespace rnic::host {
class Driver;
class Process;
}  // namespace rnic::host

union ibv_gid {
  uint8_t raw[16];
  struct {
    uint64_t subnet_prefix;
    uint64_t interface_id;
  } global;
};

struct ibv_device {
  char name[64];
  char dev_name[64];
  ibv_node_type node_type;
  ibv_transport_type transport_type;
  rnic::host::Driver* drv;  // rnicsim
};

struct ibv_context {
  ibv_device* device;
  int num_comp_vectors;
  rnic::host::Process* proc;  // rnicsim: the process that opened it
  rnic::host::Driver* drv;
};

struct ibv_device_attr {
  char fw_ver[64];
  uint64_t node_guid;
  uint64_t sys_image_guid;
  uint64_t max_mr_size;
  uint64_t page_size_cap;
  uint32_t vendor_id;
  uint32_t vendor_part_id;
  uint32_t hw_ver;
  int max_qp;
  int max_qp_wr;
  unsigned int device_cap_flags;
  int max_sge;
  int max_sge_rd;
  int max_cq;
  int max_cqe;
  int max_mr;
  int max_pd;
  int max_qp_rd_atom;
  int max_ee_rd_atom;
  int max_res_rd_atom;
  int max_qp_init_rd_atom;
  int max_ee_init_rd_atom;
  int atomic_cap;
  int max_ee;
  int max_rdd;
  int max_mw;
  int max_raw_ipv6_qp;
  int max_raw_ethy_qp;
  int max_mcast_grp;
  int max_mcast_qp_attach;
  int max_total_mcast_qp_attach;
  int max_ah;
  int max_fmr;
  int max_map_per_fmr;
  int max_srq;
  int max_srq_wr;
  int max_srq_sge;
  uint16_t max_pkeys;
  uint8_t local_ca_ack_delay;
  uint8_t phys_port_cnt;
};

struct ibv_port_attr {
  ibv_port_state state;
  ibv_mtu max_mtu;
  ibv_mtu active_mtu;
  int gid_tbl_len;
  uint32_t port_cap_flags;
  uint32_t max_msg_sz;
  uint32_t bad_pkey_cntr;
  uint32_t qkey_viol_cntr;
  uint16_t pkey_tbl_len;
  uint16_t lid;
  uint16_t sm_lid;
  uint8_t lmc;
  uint8_t max_vl_num;
  uint8_t sm_sl;
  uint8_t subnet_timeout;
  uint8_t init_type_reply;
  uint8_t active_width;
  uint8_t active_speed;
  uint8_t phys_state;
  uint8_t link_layer;
};

struct ibv_pd {
  ibv_context* context;
  uint32_t handle;
  uint32_t users;  // rnicsim: its MRs and QPs (while any lives, ibv_dealloc_pd returns EBUSY)
};

struct ibv_mr {
  ibv_context* context;
  ibv_pd* pd;
  void* addr;
  size_t length;
  uint32_t handle;
  uint32_t lkey;
  uint32_t rkey;
  uint32_t pbl_first, pbl_count;  // rnicsim: the driver's PBLMT range
  // rnicsim, fast-registration MRs (rnic_alloc_fast_mr): the kernel page-list buffer the card
  // reads, its capacity in pages, and the pages rnic_map_fast_mr put in it.
  uint64_t fast_list;
  uint32_t fast_max_pages, fast_pages;
  void* reg_cache_entry;  // rnicsim: the registration cache's entry it shares (or null)
};

// A completion channel: the CQs created with it queue an event each time their armed CQ
// raises its interrupt (ibv_req_notify_cq); ibv_get_cq_event blocks in simulated time.
struct ibv_comp_channel {
  ibv_context* context;
  int fd;  // rdma-core's; -1 here (no file descriptors in a simulated process)
  int refcnt;
  struct Impl;
  Impl* impl;
};

struct ibv_cq {
  ibv_context* context;
  ibv_comp_channel* channel;
  void* cq_context;
  uint32_t handle;
  int cqe;
  struct Impl;
  Impl* impl;  // rnicsim: ring, consumer index, the QPs using it
};

struct ibv_srq;

struct ibv_qp_cap {
  uint32_t max_send_wr;
  uint32_t max_recv_wr;
  uint32_t max_send_sge;
  uint32_t max_recv_sge;
  uint32_t max_inline_data;
};

struct ibv_qp_init_attr {
  void* qp_context;
  ibv_cq* send_cq;
  ibv_cq* recv_cq;
  ibv_srq* srq;
  ibv_qp_cap cap;
  ibv_qp_type qp_type;
  int sq_sig_all;
};

struct ibv_global_route {
  ibv_gid dgid;
  uint32_t flow_label;
  uint8_t sgid_index;
  uint8_t hop_limit;
  uint8_t traffic_class;
};

struct ibv_ah_attr {
  ibv_global_route grh;
  uint16_t dlid;
  uint8_t sl;
  uint8_t src_path_bits;
  uint8_t static_rate;
  uint8_t is_global;
  uint8_t port_num;
};

struct ibv_qp_attr {
  ibv_qp_state qp_state;
  ibv_qp_state cur_qp_state;
  ibv_mtu path_mtu;
  int path_mig_state;
  uint32_t qkey;
  uint32_t rq_psn;
  uint32_t sq_psn;
  uint32_t dest_qp_num;
  unsigned int qp_access_flags;
  ibv_qp_cap cap;
  ibv_ah_attr ah_attr;
  ibv_ah_attr alt_ah_attr;
  uint16_t pkey_index;
  uint16_t alt_pkey_index;
  uint8_t en_sqd_async_notify;
  uint8_t sq_draining;
  uint8_t max_rd_atomic;
  uint8_t max_dest_rd_atomic;
  uint8_t min_rnr_timer;
  uint8_t port_num;
  uint8_t timeout;
  uint8_t retry_cnt;
  uint8_t rnr_retry;
  uint8_t alt_port_num;
  uint8_t alt_timeout;
  uint32_t rate_limit;
};

struct ibv_qp {
  ibv_context* context;
  void* qp_context;
  ibv_pd* pd;
  ibv_cq* send_cq;
  ibv_cq* recv_cq;
  ibv_srq* srq;
  uint32_t handle;
  uint32_t qp_num;
  ibv_qp_state state;
  ibv_qp_type qp_type;
  struct Impl;
  Impl* impl;  // rnicsim: queue counters, attributes
};

struct ibv_sge {
  uint64_t addr;
  uint32_t length;
  uint32_t lkey;
};

struct ibv_send_wr {
  uint64_t wr_id;
  ibv_send_wr* next;
  ibv_sge* sg_list;
  int num_sge;
  ibv_wr_opcode opcode;
  unsigned int send_flags;
  union {
    uint32_t imm_data;
    uint32_t invalidate_rkey;
  };
  union {
    struct {
      uint64_t remote_addr;
      uint32_t rkey;
    } rdma;
    struct {
      uint64_t remote_addr;
      uint64_t compare_add;
      uint64_t swap;
      uint32_t rkey;
    } atomic;
    // rnicsim, RNIC_WR_FAST_REG_MR: the fast-registration MR (its pages as rnic_map_fast_mr
    // last mapped them), the STag's new 8-bit key and the access rights it gets.
    struct {
      ibv_mr* mr;
      uint8_t key;
      int access;
    } fast_reg;
  } wr;
};

struct ibv_recv_wr {
  uint64_t wr_id;
  ibv_recv_wr* next;
  ibv_sge* sg_list;
  int num_sge;
};

struct ibv_wc {
  uint64_t wr_id;
  ibv_wc_status status;
  ibv_wc_opcode opcode;
  uint32_t vendor_err;
  uint32_t byte_len;
  union {
    uint32_t imm_data;
    uint32_t invalidated_rkey;
  };
  uint32_t qp_num;
  uint32_t src_qp;
  unsigned int wc_flags;
  uint16_t pkey_index;
  uint16_t slid;
  uint8_t sl;
  uint8_t dlid_path_bits;
};

struct ibv_async_event {
  union {
    ibv_cq* cq;
    ibv_qp* qp;
    ibv_srq* srq;
    int port_num;
  } element;
  ibv_event_type event_type;
};

ibv_device** ibv_get_device_list(int* num_devices);
void ibv_free_device_list(ibv_device** list);
const char* ibv_get_device_name(ibv_device* device);
// The card's GUID in network byte order: the EUI-64 of its MAC (as siw derives it), the GID's
// interface half.
uint64_t ibv_get_device_guid(ibv_device* device);
// rdma-core's fork protection: nothing to protect here (a simulated process does not fork);
// returns 0.
int ibv_fork_init(void);
const char* ibv_node_type_str(ibv_node_type node_type);
const char* ibv_port_state_str(ibv_port_state port_state);
const char* ibv_event_type_str(ibv_event_type event);
ibv_context* ibv_open_device(ibv_device* device);
int ibv_close_device(ibv_context* context);
int ibv_query_device(ibv_context* context, ibv_device_attr* device_attr);
int ibv_query_port(ibv_context* context, uint8_t port_num, ibv_port_attr* port_attr);
int ibv_query_gid(ibv_context* context, uint8_t port_num, int index, ibv_gid* gid);
ibv_pd* ibv_alloc_pd(ibv_context* context);
int ibv_dealloc_pd(ibv_pd* pd);
// With IBV_ACCESS_ON_DEMAND an on-demand-paging MR (docs/memory.md): nothing is pinned, every
// page starts absent on the card, and a page the card touches is faulted in by the driver while
// the operation waits (a received segment is answered RNR meanwhile); the registration cache is
// not used for it.
ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access);
// Prefetch of on-demand MRs (rdma-core's ibv_advise_mr): each SGE's range (inside the MR its
// lkey names) faulted in and made present on the card. IBV_ADVISE_MR_FLAG_FLUSH: returns when it
// is done; else the driver's ODP worker does it and the call returns at once. Returns 0, EINVAL
// (an SGE outside an on-demand MR of the PD, no SGE), EOPNOTSUPP (PREFETCH_NO_FAULT), or EFAULT
// (a range not mapped: flush only).
int ibv_advise_mr(ibv_pd* pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge* sg_list,
                  uint32_t num_sge);
// Extension: a scatter-gather handle. The sges' addresses and lengths (their lkeys are not
// used), up to 256 regions, become one MR whose tagged offsets run from 0 (mr->addr is null)
// over the regions' concatenation in the order given; RDMA Read and Write at any offset cross
// from region to region. ibv_dereg_mr deregisters it. NULL with errno EINVAL for no region,
// more than 256, a 0-byte region or two that overlap.
ibv_mr* rnic_reg_sg_mr(ibv_pd* pd, const ibv_sge* sges, int num_sge, int access);
// Extension, privileged callers only (a kernel consumer; a thread bound with `privileged`): a
// physical region. [pa, pa + length) of host physical memory, whatever it holds (memory of the
// kernel or of any process, or a hole), becomes one MR whose tagged offsets are the physical
// addresses (mr->addr is pa). NULL with errno EPERM for an unprivileged caller, EINVAL for a
// length of 0 or a range past the top of physical memory.
ibv_mr* rnic_reg_phys_mr(ibv_pd* pd, uint64_t pa, size_t length, int access);
// Extension, fast registration with pre-allocated STags (as the kernel's ib_alloc_mr /
// ib_map_mr_sg / IB_WR_REG_MR): rnic_alloc_fast_mr takes an STag of the PD, not yet valid, with
// room for max_pages pages; rnic_map_fast_mr pins [addr, addr + length) and writes its page list
// where the card will read it (EINVAL: more pages than max_pages, a length of 0); a
// RNIC_WR_FAST_REG_MR WR on a QP of the PD (wr.fast_reg) then makes the STag valid with its new
// key, in SQ order, through the card's firmware, and sets mr->lkey and mr->rkey to it; its CQE
// is RNIC_WC_FAST_REG_MR. IBV_WR_LOCAL_INV (invalidate_rkey) makes an STag of the QP's PD
// invalid again; a peer's Send with Invalidate does too. ibv_dereg_mr ends it.
ibv_mr* rnic_alloc_fast_mr(ibv_pd* pd, uint32_t max_pages);
int rnic_map_fast_mr(ibv_mr* mr, void* addr, size_t length);
int ibv_dereg_mr(ibv_mr* mr);
// Extension: the registration (pin-down) cache's counts for a context (host.reg_cache_entries
// > 0; docs/memory.md). With the cache on, ibv_reg_mr of a range registered before with the same
// PD and access is a hit (no system call, the same STag); ibv_dereg_mr keeps the registration
// (its STag stays valid on the wire) until the cache evicts it or the program frees or unmaps
// memory it covers.
struct rnic_reg_cache_stats {
  uint64_t hits, misses, evictions, invalidations;
  uint64_t cached;  // registrations held, in use or idle
};
int rnic_reg_cache_query(ibv_context* context, rnic_reg_cache_stats* out);
// Sets the context's cache to hold up to `entries` idle registrations (0: off; the idle ones
// are deregistered now), as an MPI library's "leave pinned" switch. Returns 0.
int rnic_reg_cache_set(ibv_context* context, size_t entries);
ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                      int comp_vector);
int ibv_destroy_cq(ibv_cq* cq);
int ibv_req_notify_cq(ibv_cq* cq, int solicited_only);
ibv_comp_channel* ibv_create_comp_channel(ibv_context* context);
// EBUSY while a CQ still uses it.
int ibv_destroy_comp_channel(ibv_comp_channel* channel);
// Waits for the next event of one of the channel's CQs; returns 0 with the CQ and its context.
int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context);
void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents);
ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* qp_init_attr);
int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask);
int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask, ibv_qp_init_attr* init_attr);
int ibv_destroy_qp(ibv_qp* qp);
int ibv_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int ibv_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
int ibv_poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc);
int ibv_get_async_event(ibv_context* context, ibv_async_event* event);
void ibv_ack_async_event(ibv_async_event* event);
const char* ibv_wc_status_str(ibv_wc_status status);

// --- rnicsim extensions ---
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
double rnic_cpu_ns();
// The host CPU time the driver's interrupt handler has spent so far on this thread's host, ns.
double rnic_irq_cpu_ns();

// Completion callbacks (Kernel PM2's style, docs/memory.md), on top of a completion channel: a
// callback per CQ, or per WR (its wr_id, once), runs in the thread that called
// rnic_dispatch_callbacks when that thread is woken by the CQ's completion event; what it
// spends (rnic_spend_ns) is that thread's CPU time, as are the wake-up (cost.wakeup_ns) and the
// CQ polls; the interrupt's entry is the driver's (rnic_irq_cpu_ns).
typedef void (*rnic_wc_cb)(const ibv_wc* wc, void* arg);
int rnic_cq_set_callback(ibv_cq* cq, rnic_wc_cb fn, void* arg);
int rnic_wr_set_callback(ibv_cq* cq, uint64_t wr_id, rnic_wc_cb fn, void* arg);
// Sleeps on `channel` until one of its CQs has an event, then polls that CQ empty, running each
// completion's callback (the WR's, else the CQ's; none: the completion is dropped), re-arms
// it and polls once more (a completion that landed before the re-arm). Returns the completions
// dispatched, or -1 with errno on failure.
int rnic_dispatch_callbacks(ibv_comp_channel* channel);
// Simulated time now, in ns.
double rnic_now_ns();
// No time limit for rnic_wait_cq / rnic_wait_mem: a wait that never ends is the run's watchdog's
// to report (sim.watchdog_us of no progress, with the state of every queue).
constexpr uint64_t RNIC_WAIT_FOREVER = UINT64_MAX;

// Blocks until the CQ has a CQE to poll (or timeout_ns passes: returns 0 then, else 1). Costs
// what a busy ibv_poll_cq loop would: the CQE is seen at the first cost.cq_poll_ns step after
// it lands, counted from the call.
int rnic_wait_cq(ibv_cq* cq, uint64_t timeout_ns);

// Blocks until the byte at addr (in the calling process's memory) equals value, as a busy loop
// reading it every cost.cq_poll_ns would see it; returns 0 after timeout_ns, else 1.
int rnic_wait_mem(const void* addr, uint8_t value, uint64_t timeout_ns);

// Out-of-band exchange between programs, what rdma_cm or a TCP socket does in real life (the
// peer's GID, QPNs, buffer addresses and keys, its IRD): a key-value board shared by every host
// of the run, free in simulated time. rnic_oob_put stores `len` bytes under `key` (replacing
// them); rnic_oob_get waits until `key` is there and copies at most `len` bytes of it, returning
// how many it holds.
void rnic_oob_put(const char* key, const void* data, size_t len);
size_t rnic_oob_get(const char* key, void* data, size_t len);

// A verbs program in a file of its own (docs/verbs.md, "Programs"): a shared object whose entry
// point is `RNIC_PROGRAM { ... }`, run by a scenario's `workloads: - program:` on each host it
// names with that host's arguments; its return value is its exit code.
#define RNIC_PROGRAM extern "C" int rnic_main(int argc, char** argv)

namespace rnic::host {
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
