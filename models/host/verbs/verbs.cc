#include "models/host/verbs/verbs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

#include "models/common/log.h"
#include "models/common/sim_time.h"
#include "models/host/driver.h"
#include "models/host/host_wait.h"
#include "models/host/process.h"
#include "models/host/verbs/card_codes.h"
#include "models/host/verbs/extended_ops.h"
#include "models/host/verbs/qp_state.h"
#include "models/host/verbs/unsupported_ops.h"
#include "models/host/verbs/verbs_internal.h"
#include "models/rnic/abi/regs.h"
#include "models/rnic/abi/wqe.h"

using rnic::host::Driver;
using rnic::host::Process;
using rnic::host::ProcessContext;

namespace {
struct CqImpl {
  rnic_wc_cb cb = nullptr;  // completion callbacks (rnic_cq_set_callback, rnic_wr_set_callback)
  void* cb_arg = nullptr;
  std::map<uint64_t, std::pair<rnic_wc_cb, void*>> wr_cbs;
  uint64_t ring_pa = 0;
  uint32_t entries = 0;
  uint64_t ci = 0;
  std::vector<ibv_qp*> qps;  // QPs using this CQ (their pages carry its doorbell)
  bool arm_pending = false, arm_solicited = false;
  unsigned events_unacked = 0;  // ibv_get_cq_event minus ibv_ack_cq_events
  sc_core::sc_event written;
};

struct ChannelImpl {
  std::deque<ibv_cq*> events;
  sc_core::sc_event ev;
};

// A shared receive queue: one of the card's QP numbers with only an RQ (Driver::create_srq).
// Its WQEs complete on the QPs that take them, in any order across QPs: a slot is free again
// once every WQE before it completed (done holds those completed out of turn).
struct SrqImpl {
  uint32_t depth = 0, max_sge = 0, srq_limit = 0;
  uint64_t pi = 0, freed = 0;
  std::set<uint64_t> done;
  uint64_t page = 0, ring = 0;
  uint32_t users = 0;  // QPs taking its WQEs (while any lives, ibv_destroy_srq returns EBUSY)
  void completed(uint64_t idx) {
    done.insert(idx);
    while (!done.empty() && *done.begin() <= freed) {
      if (*done.begin() == freed) ++freed;
      done.erase(done.begin());
    }
  }
};

struct QpImpl {
  uint32_t sq_depth = 0, rq_depth = 0, max_send_sge = 0, max_recv_sge = 0;
  uint64_t sq_pi = 0, sq_freed = 0, rq_pi = 0, rq_freed = 0;
  bool sq_sig_all = false;
  uint64_t page = 0;
  uint64_t sq_ring = 0, rq_ring = 0;  // host-ring mode: the WQE rings' physical bases
  ibv_qp_attr attr{};
  // Inline sends: one slot of max_inline bytes per SQ entry in a buffer of the QP's own,
  // registered in its PD (inline_mr); a WR's bytes are copied into its WQE's slot at post.
  uint32_t max_inline = 0;
  uint64_t inline_buf = 0;
  ibv_mr* inline_mr = nullptr;
  ibv_srq* srq = nullptr;  // its receive WQEs come from this SRQ (it has no RQ of its own)
};

// rdma-core's objects, each inside rnicsim's own (as a provider wraps them): the public struct
// first (the context: rdma-core's verbs_context, its ibv_context last), then what the library
// keeps. A program sees only the public part.
struct Device {
  ibv_device dev;
  Driver* drv;
};
struct Context;
struct Ctx {
  verbs_context v;  // v.context is the program's ibv_context
  Driver* drv;
  Process* proc;
  Context* objects;  // its entry of contexts(), found without a search
};
struct Pd {
  ibv_pd pd;
  uint32_t users;  // its MRs and QPs (while any lives, ibv_dealloc_pd returns EBUSY)
};
struct Mr {
  ibv_mr mr;
  uint32_t pbl_first, pbl_count;  // the driver's PBLMT range
  // Fast-registration MRs (rnic_alloc_fast_mr): the kernel page-list buffer the card reads, its
  // capacity in pages, and the pages rnic_map_fast_mr put in it.
  uint64_t fast_list;
  uint32_t fast_max_pages, fast_pages;
  void* reg_cache_entry;  // the registration cache's entry it shares (or null)
};
struct Cq {
  union {  // an extended CQ's first fields are ibv_cq's (ibv_cq_ex_to_cq)
    ibv_cq_ex ex;
    ibv_cq cq;
  };
  CqImpl* impl;  // ring, consumer index, the QPs using it
};
struct Channel {
  ibv_comp_channel ch;
  ChannelImpl* impl;
};
struct Qp {
  union {  // an extended QP begins with its ibv_qp (ibv_qp_to_qp_ex)
    ibv_qp_ex ex;
    ibv_qp qp;
  };
  QpImpl* impl;  // queue counters, attributes
};
struct Srq {
  ibv_srq srq;
  SrqImpl* impl;
};

Ctx* ctx_of(const ibv_context* c) {
  return reinterpret_cast<Ctx*>(reinterpret_cast<uintptr_t>(c) - offsetof(Ctx, v.context));
}
Driver* drv_of(const ibv_context* c) { return ctx_of(c)->drv; }
Process* proc_of(const ibv_context* c) { return ctx_of(c)->proc; }
Driver* dev_drv(const ibv_device* d) { return reinterpret_cast<const Device*>(d)->drv; }
uint32_t& pd_users(ibv_pd* pd) { return reinterpret_cast<Pd*>(pd)->users; }
Mr* mrx(ibv_mr* mr) { return reinterpret_cast<Mr*>(mr); }
CqImpl*& cqi(ibv_cq* cq) { return reinterpret_cast<Cq*>(cq)->impl; }
CqImpl* cqi(const ibv_cq* cq) { return reinterpret_cast<const Cq*>(cq)->impl; }
QpImpl*& qpi(ibv_qp* qp) { return reinterpret_cast<Qp*>(qp)->impl; }
QpImpl* qpi(const ibv_qp* qp) { return reinterpret_cast<const Qp*>(qp)->impl; }
ChannelImpl* chi(ibv_comp_channel* ch) { return reinterpret_cast<Channel*>(ch)->impl; }
SrqImpl*& srqi(ibv_srq* srq) { return reinterpret_cast<Srq*>(srq)->impl; }
SrqImpl* srqi(const ibv_srq* srq) { return reinterpret_cast<const Srq*>(srq)->impl; }
}  // namespace

namespace {
// The largest inline send (IBV_SEND_INLINE, ibv_qp_cap.max_inline_data): perftest's default
// inline sizes (236 and 220 B) fit.
constexpr uint32_t kMaxInline = 256;

// Objects a program destroyed stay allocated for the life of rnicsim, marked (their impl or
// context null): a call through a dangling pointer gets EINVAL instead of reaching freed
// memory (docs/robustness.md, "Programs that misbehave"). Only the small public struct stays.
bool live(const ibv_qp* qp) { return qp && qpi(qp); }
bool live(const ibv_cq* cq) { return cq && cqi(cq); }
bool live(const ibv_pd* pd) { return pd && pd->context; }
bool live(const ibv_mr* mr) { return mr && mr->context; }
bool live(const ibv_srq* srq) { return srq && srqi(srq); }

// A verb the card does not do: rdma-core's answer for a provider without it (EOPNOTSUPP, as
// the errno of a NULL return or as the return value), and one line naming it the first time a
// run's programs call it.
struct Refuse {
  template <class R>
  static R say(const char* verb, R ret) {
    static std::set<std::string> said;
    if (said.insert(verb).second)
      rnic::log::warn("{}: not supported by rnicsim's card (EOPNOTSUPP; docs/verbs.md)", verb);
    errno = EOPNOTSUPP;
    return ret;
  }
};
}  // namespace

namespace {

// The registration (pin-down) cache of one context (host.reg_cache_entries > 0).
struct RegCache {
  struct Entry {
    uint32_t pd = 0;
    uint64_t va = 0, len = 0;
    int access = 0;
    Driver::MrInfo info;
    int refs = 0;        // ibv_mr handles using it
    bool stale = false;  // its memory was freed or unmapped: deregistered when idle
    uint64_t idle_since = 0;
  };
  size_t capacity = 0;
  std::list<Entry> entries;
  rnic_reg_cache_stats stats{};
  ~RegCache();  // leaves caches() first: its entries' frees call release_hook
};

struct Context {
  std::map<uint32_t, ibv_qp*> qps;
  std::map<uint32_t, ibv_srq*> srqs;
  std::map<uint32_t, ibv_cq*> cqs;
  std::unique_ptr<RegCache> cache;
};

std::map<const sc_core::sc_object*, ProcessContext>& processes() {
  static std::map<const sc_core::sc_object*, ProcessContext> m;
  return m;
}
std::map<const ibv_context*, Context>& contexts() {
  static std::map<const ibv_context*, Context> m;
  return m;
}
Context& objects_of(const ibv_context* c) { return *ctx_of(c)->objects; }
// The contexts open on each card's driver (a completion interrupt looks only among its own).
std::map<const Driver*, std::vector<const ibv_context*>>& driver_contexts() {
  static std::map<const Driver*, std::vector<const ibv_context*>> m;
  return m;
}

// Every registration cache, for the program's free and munmap (never destroyed: free runs
// until the process ends).
std::vector<RegCache*>& caches() {
  static auto* v = new std::vector<RegCache*>;
  return *v;
}
RegCache::~RegCache() {
  auto& v = caches();
  v.erase(std::remove(v.begin(), v.end(), this), v.end());
}
bool g_in_release = false;
// The program frees or unmaps [addr, addr + len): cached registrations overlapping it are stale
// (no more hits; deregistered once idle, at the cache's next use).
void release_hook(uintptr_t addr, uint64_t len) {
  if (g_in_release) return;
  g_in_release = true;
  for (RegCache* c : caches())
    for (RegCache::Entry& e : c->entries)
      if (!e.stale && e.va < addr + len && addr < e.va + e.len) {
        e.stale = true;
        ++c->stats.invalidations;
      }
  g_in_release = false;
}

const ProcessContext& current() {
  const sc_core::sc_object* me = sc_core::sc_get_current_process_handle().get_process_object();
  auto it = processes().find(me);
  if (it == processes().end())
    throw std::logic_error("verbs called outside a simulated process (rnic::Cluster::run)");
  return it->second;
}

void spend(uint64_t ns) { rnic::host::host_spend(ns * 1000); }

uint64_t& idle_clock() {
  static uint64_t t = 0;
  return t;
}

// Deregisters the cache's stale idle registrations, then its oldest idle ones beyond its
// capacity (evictions). Returns the first failure's errno, or 0.
int reg_cache_trim(ibv_context* c, RegCache& cache) {
  int rc = 0;
  auto drop = [&](std::list<RegCache::Entry>::iterator it) {
    if (int r = drv_of(c)->dereg_mr(it->info)) rc = rc ? rc : r;
    return cache.entries.erase(it);
  };
  size_t idle = 0;
  for (auto it = cache.entries.begin(); it != cache.entries.end();) {
    if (it->refs == 0 && it->stale) {
      it = drop(it);
      continue;
    }
    idle += it->refs == 0;
    ++it;
  }
  while (idle > cache.capacity) {
    auto oldest = cache.entries.end();
    for (auto it = cache.entries.begin(); it != cache.entries.end(); ++it)
      if (it->refs == 0 && (oldest == cache.entries.end() || it->idle_since < oldest->idle_since))
        oldest = it;
    drop(oldest);
    ++cache.stats.evictions;
    --idle;
  }
  return rc;
}

rnic::MacAddr mac_of_gid(const ibv_gid& g) {
  // fe80::xxxx:xxff:fexx:xxxx, EUI-64 with the universal/local bit flipped.
  return {uint8_t(g.raw[8] ^ 0x02), g.raw[9], g.raw[10], g.raw[13], g.raw[14], g.raw[15]};
}

void cq_doorbell(ibv_cq* cq, ibv_qp* via, bool arm, bool solicited) {
  uint64_t v = uint32_t(cqi(cq)->ci) | uint64_t(cq->handle) << 32;
  if (arm) v |= rnic::reg::kCqArm | (solicited ? rnic::reg::kCqSolicitedOnly : 0);
  drv_of(via->context)->rc().mmio_write_le(qpi(via)->page + rnic::reg::kCqDoorbell, v, 8);
}

bool cqe_ready(ibv_cq* cq) {
  CqImpl& c = *cqi(cq);
  uint8_t owner = 0;
  drv_of(cq->context)->mem().read(c.ring_pa + (c.ci % c.entries) * rnic::kCqeBytes + 31, &owner, 1);
  return (owner & 1) == (((c.ci / c.entries) & 1) ? 0 : 1);
}

}  // namespace

namespace rnic::host {
void bind_current_process(const ProcessContext& c) {
  processes()[sc_core::sc_get_current_process_handle().get_process_object()] = c;
}
ProcessContext current_process() { return current(); }
void unbind_current_process() {
  processes().erase(sc_core::sc_get_current_process_handle().get_process_object());
}
}  // namespace rnic::host

namespace {
void fill_ops(verbs_context& v);
}  // namespace

ibv_device** ibv_get_device_list(int* num_devices) {
  static std::map<Driver*, Device> devices;
  Driver* d = current().drv;
  Device& dev = devices[d];
  std::snprintf(dev.dev.name, sizeof dev.dev.name, "rnic0");
  std::snprintf(dev.dev.dev_name, sizeof dev.dev.dev_name, "uverbs0");
  std::snprintf(dev.dev.dev_path, sizeof dev.dev.dev_path, "/sys/class/infiniband_verbs/uverbs0");
  std::snprintf(dev.dev.ibdev_path, sizeof dev.dev.ibdev_path, "/sys/class/infiniband/rnic0");
  dev.dev.node_type = IBV_NODE_RNIC;
  dev.dev.transport_type = IBV_TRANSPORT_IWARP;
  dev.drv = d;
  auto** list = new ibv_device*[2];
  list[0] = &dev.dev;
  list[1] = nullptr;
  if (num_devices) *num_devices = 1;
  return list;
}

void ibv_free_device_list(ibv_device** list) { delete[] list; }
const char* ibv_get_device_name(ibv_device* device) { return device->name; }

ibv_context* ibv_open_device(ibv_device* device) {
  if (!device || dev_drv(device)->open() != 0) {
    errno = ENODEV;
    return nullptr;
  }
  auto* x = new Ctx{};
  x->drv = dev_drv(device);
  x->proc = current().proc;
  fill_ops(x->v);
  ibv_context* c = &x->v.context;
  c->device = device;
  c->cmd_fd = c->async_fd = -1;  // no file descriptors in a simulated process
  c->num_comp_vectors = 1;
  c->abi_compat = __VERBS_ABI_IS_EXTENDED;
  pthread_mutex_init(&c->mutex, nullptr);
  // The program's munmap of its own memory runs the kernel's MMU notifiers first.
  proc_of(c)->unmap_notifier = [os = &drv_of(c)->os(), p = proc_of(c)](uint64_t va, uint64_t len) {
    os->notify(*p, va, len);
  };
  x->objects = &contexts()[c];
  driver_contexts()[x->drv].push_back(c);
  if (const int64_t n = drv_of(c)->host_config().reg_cache_entries; n > 0)
    rnic_reg_cache_set(c, size_t(n));
  // The driver's completion interrupts go to the channel of the CQ they name, whichever
  // context of this device created it.
  Driver* drv = drv_of(c);
  drv->on_cq_event = [drv](uint32_t cqn) {
    for (const ibv_context* ctx : driver_contexts()[drv]) {
      const Context& cs = objects_of(ctx);
      auto it = cs.cqs.find(cqn);
      if (it == cs.cqs.end() || !it->second->channel) continue;
      ChannelImpl& ch = *chi(it->second->channel);
      ch.events.push_back(it->second);
      rnic::notify_now(ch.ev);
    }
  };
  return c;
}

int ibv_close_device(ibv_context* context) {
  std::vector<const ibv_context*>& open = driver_contexts()[drv_of(context)];
  open.erase(std::remove(open.begin(), open.end(), context), open.end());
  contexts().erase(context);
  pthread_mutex_destroy(&context->mutex);
  delete ctx_of(context);
  return 0;
}

namespace {
// The EUI-64 of a MAC (its U/L bit flipped, ff:fe in the middle), in network byte order.
uint64_t eui64(const rnic::MacAddr& m) {
  const uint8_t b[8] = {uint8_t(m[0] ^ 0x02), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
  uint64_t g;
  std::memcpy(&g, b, 8);
  return g;
}
}  // namespace

int ibv_query_device(ibv_context* context, ibv_device_attr* a) {
  const rnic::abi::CardCaps& cfg = drv_of(context)->caps();
  *a = ibv_device_attr{};
  std::snprintf(a->fw_ver, sizeof a->fw_ver, "rnicsim 0.1.0");
  a->max_mr_size = 1ull << 40;
  a->page_size_cap = 4096;
  a->vendor_id = 0x1033;  // NEC, ExpEther's vendor
  a->max_qp = int(cfg.qps) - 1;
  a->max_qp_wr = int(cfg.max_qp_wr);
  a->max_srq = int(cfg.qps) - 1;  // an SRQ takes a QP number
  a->max_srq_wr = int(cfg.max_qp_wr);
  a->max_srq_sge = rnic::kMaxSge;
  a->max_sge = rnic::kMaxSge;
  a->max_sge_rd = rnic::kMaxSge;
  a->max_cq = int(cfg.cqs);
  a->max_cqe = int(cfg.max_cqe);
  a->max_mr = int(cfg.stags) - 1;
  a->max_pd = 1 << 24;
  a->max_qp_rd_atom = int(cfg.ird);
  a->max_qp_init_rd_atom = int(cfg.ord);
  a->max_res_rd_atom = int(cfg.ird * (cfg.qps - 1));
  // RFC 7306 atomics, atomic among the card's QPs (not against the host's CPUs).
  a->atomic_cap = IBV_ATOMIC_HCA;
  a->phys_port_cnt = 1;
  a->device_cap_flags = IBV_DEVICE_MEM_MGT_EXTENSIONS;  // fast registration
  a->max_pkeys = 1;
  a->node_guid = a->sys_image_guid = eui64(drv_of(context)->mac());
  return 0;
}

namespace {
// rdma-core's query_port operation: port_attr_len bytes of the answer (an older program's
// smaller struct gets its prefix).
int query_port(ibv_context* context, uint8_t port_num, ibv_port_attr* out, size_t len) {
  if (port_num != 1) return EINVAL;
  const int64_t mtu = drv_of(context)->caps().port_mtu;
  ibv_port_attr a{};
  a.state = IBV_PORT_ACTIVE;
  a.max_mtu = mtu >= 4096 ? IBV_MTU_4096 : mtu >= 2048 ? IBV_MTU_2048 : IBV_MTU_1024;
  a.active_mtu = a.max_mtu;
  a.gid_tbl_len = 1;
  a.max_msg_sz = 1u << 31;
  a.pkey_tbl_len = 1;
  a.phys_state = 5;  // LinkUp
  a.link_layer = IBV_LINK_LAYER_ETHERNET;
  std::memcpy(out, &a, std::min(len, sizeof a));
  return 0;
}

// query_device_ex: the device's attributes and, of the extended ones, on-demand paging (the
// card faults pages in for every RC operation, docs/memory.md); the rest zero.
int query_device_ex(ibv_context* context, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* out, size_t len) {
  if (input && input->comp_mask) return EINVAL;
  if (len < sizeof(ibv_device_attr)) return EINVAL;
  ibv_device_attr_ex a{};
  ibv_query_device(context, &a.orig_attr);
  a.odp_caps.general_caps = IBV_ODP_SUPPORT;
  a.odp_caps.per_transport_caps.rc_odp_caps =
      IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;
  a.phys_port_cnt_ex = 1;
  std::memcpy(out, &a, std::min(len, sizeof a));
  return 0;
}
}  // namespace

// rdma-core's exported query_port, which its inline ibv_query_port calls only when a provider
// has no query_port operation: the attributes up to link_layer (the compat struct).
int(ibv_query_port)(ibv_context* context, uint8_t port_num, _compat_ibv_port_attr* port_attr) {
  return query_port(context, port_num, reinterpret_cast<ibv_port_attr*>(port_attr),
                    offsetof(ibv_port_attr, flags));
}

// The card's GUID in network byte order: the EUI-64 of its MAC (as siw derives it), the GID's
// interface half.
__be64 ibv_get_device_guid(ibv_device* device) {
  return device ? eui64(dev_drv(device)->mac()) : 0;
}

int ibv_fork_init(void) { return 0; }

const char* ibv_node_type_str(ibv_node_type t) {
  switch (t) {
    case IBV_NODE_CA:
      return "InfiniBand channel adapter";
    case IBV_NODE_SWITCH:
      return "InfiniBand switch";
    case IBV_NODE_ROUTER:
      return "InfiniBand router";
    case IBV_NODE_RNIC:
      return "iWARP NIC";
    case IBV_NODE_USNIC:
      return "usNIC";
    case IBV_NODE_USNIC_UDP:
      return "usNIC UDP";
    default:
      return "unknown";
  }
}

const char* ibv_port_state_str(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_NOP:
      return "no state change (NOP)";
    case IBV_PORT_DOWN:
      return "down";
    case IBV_PORT_INIT:
      return "init";
    case IBV_PORT_ARMED:
      return "armed";
    case IBV_PORT_ACTIVE:
      return "active";
    case IBV_PORT_ACTIVE_DEFER:
      return "active defer";
    default:
      return "unknown";
  }
}

const char* ibv_event_type_str(ibv_event_type e) {
  switch (e) {
    case IBV_EVENT_CQ_ERR:
      return "CQ error";
    case IBV_EVENT_QP_FATAL:
      return "local work queue catastrophic error";
    case IBV_EVENT_QP_REQ_ERR:
      return "invalid request local work queue error";
    case IBV_EVENT_QP_ACCESS_ERR:
      return "local access violation work queue error";
    case IBV_EVENT_COMM_EST:
      return "communication established";
    case IBV_EVENT_SQ_DRAINED:
      return "send queue drained";
    case IBV_EVENT_PATH_MIG:
      return "path migrated";
    case IBV_EVENT_PATH_MIG_ERR:
      return "path migration request error";
    case IBV_EVENT_DEVICE_FATAL:
      return "local catastrophic error";
    case IBV_EVENT_PORT_ACTIVE:
      return "port active";
    case IBV_EVENT_PORT_ERR:
      return "port error";
    case IBV_EVENT_LID_CHANGE:
      return "LID change";
    case IBV_EVENT_PKEY_CHANGE:
      return "P_Key change";
    case IBV_EVENT_SM_CHANGE:
      return "SM change";
    case IBV_EVENT_SRQ_ERR:
      return "SRQ catastrophic error";
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      return "SRQ limit reached";
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      return "last WQE reached";
    case IBV_EVENT_CLIENT_REREGISTER:
      return "client reregistration";
    case IBV_EVENT_GID_CHANGE:
      return "GID table change";
    default:
      return "unknown";  // rdma-core's table stops at the GID change too
  }
}

int ibv_query_gid(ibv_context* context, uint8_t port_num, int index, ibv_gid* gid) {
  if (port_num != 1 || index != 0) return EINVAL;
  const rnic::MacAddr& m = drv_of(context)->mac();
  std::memset(gid, 0, sizeof *gid);
  gid->raw[0] = 0xfe;
  gid->raw[1] = 0x80;
  gid->raw[8] = m[0] ^ 0x02;
  gid->raw[9] = m[1];
  gid->raw[10] = m[2];
  gid->raw[11] = 0xff;
  gid->raw[12] = 0xfe;
  gid->raw[13] = m[3];
  gid->raw[14] = m[4];
  gid->raw[15] = m[5];
  return 0;
}

ibv_pd* ibv_alloc_pd(ibv_context* context) {
  uint32_t pd = 0;
  if (int rc = drv_of(context)->alloc_pd(&pd)) {
    errno = rc;
    return nullptr;
  }
  auto* x = new Pd{};
  x->pd.context = context;
  x->pd.handle = pd;
  return &x->pd;
}

int ibv_dealloc_pd(ibv_pd* pd) {
  if (!live(pd)) return EINVAL;
  if (pd_users(pd)) return EBUSY;  // the kernel's answer while an MR or QP uses it
  const int rc = drv_of(pd->context)->dealloc_pd(pd->handle);
  if (rc == 0) pd->context = nullptr;  // quarantined (live())
  return rc;
}

namespace {
// The ibv_mr of a region the driver registered.
ibv_mr* new_mr(ibv_pd* pd, void* addr, size_t length, const Driver::MrInfo& info) {
  ibv_mr* mr = &(new Mr{})->mr;
  ++pd_users(pd);
  mr->context = pd->context;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = length;
  mr->handle = rnic::abi::stag_index(info.lkey);
  mr->lkey = mr->rkey = info.lkey;
  mrx(mr)->pbl_first = info.pbl_first;
  mrx(mr)->pbl_count = info.pbl_count;
  return mr;
}
}  // namespace

ibv_mr*(ibv_reg_mr)(ibv_pd* pd, void* addr, size_t length, int access) {
  if (!live(pd)) {
    errno = EINVAL;
    return nullptr;
  }
  // Remote write needs local write (rdma-core / kernel rule).
  if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE)) {
    errno = EINVAL;
    return nullptr;
  }
  Driver::MrInfo info;
  ibv_context* c = pd->context;
  if (access & IBV_ACCESS_ON_DEMAND) {
    const bool card_writes = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    const auto va = reinterpret_cast<uint64_t>(addr);
    int rc = proc_of(c)->map_plain(va, length, card_writes);
    if (!rc)
      rc = drv_of(c)->reg_odp_mr(*proc_of(c), pd->handle, va, length, uint32_t(access), &info);
    if (rc) {
      errno = rc;
      return nullptr;
    }
    return new_mr(pd, addr, length, info);
  }
  RegCache* cache = objects_of(c).cache.get();
  if (cache && cache->capacity == 0) {
    reg_cache_trim(c, *cache);
    cache = nullptr;  // off
  }
  if (cache) {
    reg_cache_trim(c, *cache);
    spend(uint64_t(drv_of(c)->cost().reg_cache_lookup_ns));
    const uint64_t va = reinterpret_cast<uint64_t>(addr);
    for (RegCache::Entry& e : cache->entries)
      if (!e.stale && e.pd == pd->handle && e.va == va && e.len == length && e.access == access) {
        ++e.refs;
        ++cache->stats.hits;
        ibv_mr* mr = new_mr(pd, addr, length, e.info);
        mrx(mr)->reg_cache_entry = &e;
        return mr;
      }
    ++cache->stats.misses;
  }
  // The program's own memory (heap, stack, statics) becomes the simulated process's pages
  // (their bytes stay the program's), as the kernel pins user pages; memory the card writes
  // must be writable.
  const bool card_writes = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (int rc = proc_of(c)->map_plain(reinterpret_cast<uint64_t>(addr), length, card_writes)) {
    errno = rc;
    return nullptr;
  }
  if (int rc = drv_of(c)->reg_mr(*proc_of(c), pd->handle, reinterpret_cast<uint64_t>(addr), length,
                                 uint32_t(access), &info)) {
    errno = rc;
    return nullptr;
  }
  ibv_mr* mr = new_mr(pd, addr, length, info);
  if (cache) {
    RegCache::Entry e;
    e.pd = pd->handle;
    e.va = reinterpret_cast<uint64_t>(addr);
    e.len = length;
    e.access = access;
    e.info = info;
    e.refs = 1;
    cache->entries.push_back(e);
    mrx(mr)->reg_cache_entry = &cache->entries.back();
  }
  return mr;
}

// The card's tagged offsets of an ibv_reg_mr region are its virtual addresses: an iova other
// than addr is refused (EOPNOTSUPP, logged); the optional-range access bits (relaxed ordering)
// are hints the card has no use for.
ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                         unsigned int access) {
  if (iova != reinterpret_cast<uint64_t>(addr)) {
    rnic::log::warn(
        "ibv_reg_mr_iova: an iova other than the address: not supported by "
        "rnicsim's card (EOPNOTSUPP)");
    errno = EOPNOTSUPP;
    return nullptr;
  }
  return (ibv_reg_mr)(pd, addr, length, int(access & ~unsigned(IBV_ACCESS_OPTIONAL_RANGE)));
}
ibv_mr*(ibv_reg_mr_iova)(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, iova, unsigned(access));
}

ibv_mr* rnic_reg_sg_mr(ibv_pd* pd, const ibv_sge* sges, int num_sge, int access) {
  if (!live(pd)) {
    errno = EINVAL;
    return nullptr;
  }
  if (!pd || !sges || num_sge < 1 || size_t(num_sge) > Driver::kMaxSgRegions ||
      ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))) {
    errno = EINVAL;
    return nullptr;
  }
  ibv_context* c = pd->context;
  const bool card_writes = access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  std::vector<std::pair<uint64_t, uint64_t>> regions;
  uint64_t total = 0;
  for (int i = 0; i < num_sge; ++i) {
    regions.push_back({sges[i].addr, sges[i].length});
    total += sges[i].length;
  }
  for (const auto& [va, len] : regions)
    if (len)
      if (int rc = proc_of(c)->map_plain(va, len, card_writes)) {
        errno = rc;
        return nullptr;
      }
  Driver::MrInfo info;
  if (int rc = drv_of(c)->reg_sg_mr(*proc_of(c), pd->handle, regions, uint32_t(access), &info)) {
    errno = rc;
    return nullptr;
  }
  return new_mr(pd, nullptr, total, info);  // tagged offsets from 0
}

ibv_mr* rnic_reg_phys_mr(ibv_pd* pd, uint64_t pa, size_t length, int access) {
  if (!live(pd)) {
    errno = EINVAL;
    return nullptr;
  }
  if (!pd || ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))) {
    errno = EINVAL;
    return nullptr;
  }
  if (!current().privileged) {
    errno = EPERM;
    return nullptr;
  }
  Driver::MrInfo info;
  if (int rc = drv_of(pd->context)->reg_phys_mr(pd->handle, pa, length, uint32_t(access), &info)) {
    errno = rc;
    return nullptr;
  }
  return new_mr(pd, reinterpret_cast<void*>(pa), length, info);
}

ibv_mr* rnic_alloc_fast_mr(ibv_pd* pd, uint32_t max_pages) {
  if (!live(pd)) {
    errno = EINVAL;
    return nullptr;
  }
  Driver::FastMrInfo f;
  if (!pd || max_pages == 0) {
    errno = EINVAL;
    return nullptr;
  }
  if (int rc = drv_of(pd->context)->alloc_fast_mr(pd->handle, max_pages, &f)) {
    errno = rc;
    return nullptr;
  }
  ibv_mr* mr = new_mr(pd, nullptr, 0, {f.stag, f.pbl_first, max_pages});
  mrx(mr)->fast_list = f.list_pa;
  mrx(mr)->fast_max_pages = max_pages;
  return mr;
}

int rnic_map_fast_mr(ibv_mr* mr, void* addr, size_t length) {
  if (!live(mr)) return EINVAL;
  if (!mr || !mrx(mr)->fast_max_pages || length == 0) return EINVAL;
  ibv_context* c = mr->context;
  if (int rc = proc_of(c)->map_plain(reinterpret_cast<uint64_t>(addr), length, true)) return rc;
  uint32_t pages = 0;
  if (int rc = drv_of(c)->map_fast_mr(
          *proc_of(c), {mr->lkey, mrx(mr)->pbl_first, mrx(mr)->fast_max_pages, mrx(mr)->fast_list},
          reinterpret_cast<uint64_t>(addr), length, &pages))
    return rc;
  mr->addr = addr;
  mr->length = length;
  mrx(mr)->fast_pages = pages;
  return 0;
}

int rnic_reg_cache_query(ibv_context* context, rnic_reg_cache_stats* out) {
  auto it = contexts().find(context);
  if (it == contexts().end() || !it->second.cache) return ENOENT;
  *out = it->second.cache->stats;
  out->cached = it->second.cache->entries.size();
  return 0;
}

int rnic_reg_cache_set(ibv_context* context, size_t entries) {
  auto it = contexts().find(context);
  if (it == contexts().end()) return ENOENT;
  Context& cs = it->second;
  if (!cs.cache) {
    cs.cache = std::make_unique<RegCache>();
    caches().push_back(cs.cache.get());
    rnic::host::Process::on_release = release_hook;
  }
  cs.cache->capacity = entries;
  return reg_cache_trim(context, *cs.cache);
}

int ibv_dereg_mr(ibv_mr* mr) {
  if (!live(mr)) return EINVAL;
  if (mrx(mr)->reg_cache_entry) {
    // Cached: the registration stays (its STag valid on the wire) until evicted or stale.
    auto* e = static_cast<RegCache::Entry*>(mrx(mr)->reg_cache_entry);
    ibv_context* c = mr->context;
    --e->refs;
    if (e->refs == 0) e->idle_since = idle_clock()++;
    --pd_users(mr->pd);
    mr->context = nullptr;  // quarantined (live())
    return reg_cache_trim(c, *objects_of(c).cache);
  }
  const int rc = drv_of(mr->context)->dereg_mr({mr->lkey, mrx(mr)->pbl_first, mrx(mr)->pbl_count});
  if (rc == 0) {
    --pd_users(mr->pd);
    mr->context = nullptr;
  }
  return rc;
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                      int /*comp_vector*/) {
  if (cqe < 1 || uint32_t(cqe) > drv_of(context)->caps().max_cqe) {
    errno = EINVAL;
    return nullptr;
  }
  Driver::CqInfo info;
  if (int rc = drv_of(context)->create_cq(uint32_t(cqe), &info)) {
    errno = rc;
    return nullptr;
  }
  ibv_cq* cq = &(new Cq{})->cq;
  cq->context = context;
  cq->channel = channel;
  if (channel) ++channel->refcnt;
  cq->cq_context = cq_context;
  cq->handle = info.cqn;
  cq->cqe = int(info.entries);
  cqi(cq) = new CqImpl;
  cqi(cq)->ring_pa = info.ring_pa;
  cqi(cq)->entries = info.entries;
  drv_of(context)->watch(info.ring_pa, uint64_t(info.entries) * rnic::kCqeBytes, &cqi(cq)->written);
  objects_of(context).cqs[cq->handle] = cq;
  return cq;
}

int ibv_destroy_cq(ibv_cq* cq) {
  if (!live(cq)) return EINVAL;
  if (!cqi(cq)->qps.empty()) return EBUSY;
  if (cqi(cq)->events_unacked) return EBUSY;  // rdma-core waits for the acks instead
  const int rc = drv_of(cq->context)->destroy_cq(cq->handle);
  if (rc) return rc;
  drv_of(cq->context)->unwatch(&cqi(cq)->written);
  objects_of(cq->context).cqs.erase(cq->handle);
  if (cq->channel) --cq->channel->refcnt;
  rnic::host::forget_cq_ex(&reinterpret_cast<Cq*>(cq)->ex);
  delete cqi(cq);
  cqi(cq) = nullptr;  // quarantined (live())
  return 0;
}

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  auto* x = new Channel{};
  x->ch.context = context;
  x->ch.fd = -1;  // no file descriptors in a simulated process
  x->impl = new ChannelImpl;
  return &x->ch;
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  if (channel->refcnt > 0) return EBUSY;
  delete chi(channel);
  delete reinterpret_cast<Channel*>(channel);
  return 0;
}

namespace rnic::host {
bool channel_has_event(ibv_comp_channel* channel) { return !chi(channel)->events.empty(); }
const sc_core::sc_event& channel_event(ibv_comp_channel* channel) { return chi(channel)->ev; }
bool async_has_event(ibv_context* context) { return !drv_of(context)->async_queue().empty(); }
const sc_core::sc_event& async_event_of(ibv_context* context) {
  return drv_of(context)->async_event();
}
}  // namespace rnic::host

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  ChannelImpl& ch = *chi(channel);
  if (ch.events.empty()) {
    const rnic::host::BlockedIn blocked("ibv_get_cq_event");
    while (ch.events.empty()) rnic::host::host_wait(ch.ev);
    // The scheduler wakes a process's thread; a kernel consumer's handler runs from the
    // interrupt.
    if (!rnic::host::in_kernel_thread())
      spend(uint64_t(drv_of(channel->context)->cost().wakeup_ns));
  }
  *cq = ch.events.front();
  ch.events.pop_front();
  *cq_context = (*cq)->cq_context;
  ++cqi(*cq)->events_unacked;
  return 0;
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  if (!live(cq)) return;
  cqi(cq)->events_unacked -= std::min(cqi(cq)->events_unacked, nevents);
}

namespace {
int req_notify_cq(ibv_cq* cq, int solicited_only) {
  if (!live(cq)) return EINVAL;
  if (cqi(cq)->qps.empty()) {
    cqi(cq)->arm_pending = true;
    cqi(cq)->arm_solicited = solicited_only != 0;
    return 0;
  }
  cq_doorbell(cq, cqi(cq)->qps.front(), true, solicited_only != 0);
  return 0;
}
}  // namespace

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* a) {
  if (!live(pd) || !a || !live(a->send_cq) || !live(a->recv_cq) || (a->srq && !live(a->srq))) {
    errno = EINVAL;
    return nullptr;
  }
  ibv_context* c = pd->context;
  const rnic::abi::CardCaps& cfg = drv_of(c)->caps();
  if (a->srq) {  // the receive queue's capabilities are the SRQ's
    a->cap.max_recv_wr = 0;
    a->cap.max_recv_sge = 0;
  }
  if (a->qp_type != IBV_QPT_RC || (a->srq && a->srq->pd != pd) || a->cap.max_send_wr < 1 ||
      (!a->srq && a->cap.max_recv_wr < 1) || a->cap.max_send_wr > uint32_t(cfg.max_qp_wr) ||
      a->cap.max_recv_wr > uint32_t(cfg.max_qp_wr) || a->cap.max_send_sge > rnic::kMaxSge ||
      a->cap.max_recv_sge > rnic::kMaxSge || a->cap.max_inline_data > kMaxInline) {
    errno = EINVAL;
    return nullptr;
  }
  rnic::host::Driver::QpInfo info;
  if (int rc = drv_of(c)->create_qp(pd->handle, a->send_cq->handle, a->recv_cq->handle,
                                    a->cap.max_send_wr, a->cap.max_recv_wr, &info,
                                    a->srq ? a->srq->handle : Driver::kNoSrq)) {
    errno = rc;
    return nullptr;
  }
  ibv_qp* qp = &(new Qp{})->qp;
  qp->context = c;
  qp->qp_context = a->qp_context;
  qp->pd = pd;
  qp->send_cq = a->send_cq;
  qp->recv_cq = a->recv_cq;
  qp->srq = a->srq;
  const uint32_t qpn = info.qpn;
  qp->handle = qpn;
  qp->qp_num = qpn;
  qp->state = IBV_QPS_RESET;
  qp->qp_type = IBV_QPT_RC;
  qpi(qp) = new QpImpl;
  QpImpl& q = *qpi(qp);
  q.sq_depth = a->cap.max_send_wr;
  q.rq_depth = a->cap.max_recv_wr;
  q.max_send_sge = a->cap.max_send_sge;
  q.max_recv_sge = a->cap.max_recv_sge;
  q.sq_sig_all = a->sq_sig_all != 0;
  q.page = drv_of(c)->qp_page(qpn);
  q.sq_ring = info.sq_ring;
  q.rq_ring = info.rq_ring;
  q.attr.cap = a->cap;
  q.srq = a->srq;
  if (q.srq) ++srqi(q.srq)->users;
  objects_of(c).qps[qpn] = qp;
  ++pd_users(pd);
  for (ibv_cq* cq : {a->send_cq, a->recv_cq}) {
    cqi(cq)->qps.push_back(qp);
    if (cqi(cq)->arm_pending) {
      cqi(cq)->arm_pending = false;
      cq_doorbell(cq, qp, true, cqi(cq)->arm_solicited);
    }
  }
  if (a->cap.max_inline_data) {
    q.max_inline = a->cap.max_inline_data;
    const uint64_t bytes = uint64_t(q.sq_depth) * q.max_inline;
    q.inline_buf = reinterpret_cast<uint64_t>(rnic_malloc(bytes));
    q.inline_mr =
        ibv_reg_mr(pd, reinterpret_cast<void*>(q.inline_buf), bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!q.inline_mr) {
      const int e = errno;
      current().proc->free(q.inline_buf, bytes);
      ibv_destroy_qp(qp);
      errno = e;
      return nullptr;
    }
    --pd_users(pd);  // the QP's own MR: the QP already counts
  }
  return qp;
}

namespace {
// The attributes mask names, applied (after the checks, or with none: the connection manager's).
int apply_qp_attr(ibv_qp* qp, ibv_qp_attr* attr, int mask, uint8_t role = 0,
                  uint16_t local_port = 0, uint16_t remote_port = 0);
}  // namespace

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  if (!live(qp) || !attr) return EINVAL;
  const ibv_qp_state cur = qp->state;
  const ibv_qp_state next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
  std::string why;
  if (int rc = rnic::qp_transition_check(cur, next, mask, &why)) {
    rnic::log::warn("ibv_modify_qp: QP {}: {} (docs/verbs.md)", qp->qp_num, why);
    return rc;
  }
  const rnic::abi::CardCaps& caps = drv_of(qp->context)->caps();
  if (int rc = rnic::qp_attr_check(*attr, mask, {int(caps.ord), int(caps.ird)}, &why)) {
    rnic::log::warn("ibv_modify_qp: QP {}: {}", qp->qp_num, why);
    return rc;
  }
  return apply_qp_attr(qp, attr, mask);
}

int rnic::host::cm_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask, uint8_t role,
                             uint16_t local_port, uint16_t remote_port) {
  if (!live(qp) || !attr) return EINVAL;
  return apply_qp_attr(qp, attr, mask, role, local_port, remote_port);
}

namespace {
int apply_qp_attr(ibv_qp* qp, ibv_qp_attr* attr, int mask, uint8_t role, uint16_t local_port,
                  uint16_t remote_port) {
  const ibv_qp_state next = (mask & IBV_QP_STATE) ? attr->qp_state : qp->state;
  QpImpl& q = *qpi(qp);
  if (mask & IBV_QP_AV) q.attr.ah_attr = attr->ah_attr;
  if (mask & IBV_QP_DEST_QPN) q.attr.dest_qp_num = attr->dest_qp_num;
  if (mask & IBV_QP_ACCESS_FLAGS) q.attr.qp_access_flags = attr->qp_access_flags;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) q.attr.max_rd_atomic = attr->max_rd_atomic;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) q.attr.max_dest_rd_atomic = attr->max_dest_rd_atomic;
  if (mask & IBV_QP_PATH_MTU) q.attr.path_mtu = attr->path_mtu;
  if (mask & IBV_QP_TIMEOUT) q.attr.timeout = attr->timeout;
  if (mask & IBV_QP_RETRY_CNT) q.attr.retry_cnt = attr->retry_cnt;
  // Accepted with no iWARP meaning (docs/verbs.md): kept for ibv_query_qp.
  if (mask & IBV_QP_RNR_RETRY) q.attr.rnr_retry = attr->rnr_retry;
  if (mask & IBV_QP_MIN_RNR_TIMER) q.attr.min_rnr_timer = attr->min_rnr_timer;
  if (mask & IBV_QP_RQ_PSN) q.attr.rq_psn = attr->rq_psn;
  if (mask & IBV_QP_SQ_PSN) q.attr.sq_psn = attr->sq_psn;
  Driver::QpAttrs a;
  a.peer = mac_of_gid(q.attr.ah_attr.grh.dgid);
  a.peer_qpn = q.attr.dest_qp_num;
  a.ird = q.attr.max_dest_rd_atomic;
  a.ord = q.attr.max_rd_atomic;
  a.access = q.attr.qp_access_flags;
  a.mtu = q.attr.path_mtu ? rnic::path_mtu_bytes(q.attr.path_mtu) : 0;
  a.read_timeout_ns = rnic::read_timeout_ns(q.attr.timeout, q.attr.retry_cnt);
  a.role = role;
  a.local_port = local_port;
  a.remote_port = remote_port;
  const int rc = drv_of(qp->context)->modify_qp(qp->qp_num, uint32_t(mask), next, a);
  if (rc) return rc;
  qp->state = next;
  if (next == IBV_QPS_RESET) {
    q.sq_pi = q.sq_freed = q.rq_pi = q.rq_freed = 0;
    // RESET clears the attributes the card clears (a QP reset starts over).
    const ibv_qp_cap cap = q.attr.cap;
    q.attr = ibv_qp_attr{};
    q.attr.cap = cap;
  }
  return 0;
}
}  // namespace

int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int /*attr_mask*/, ibv_qp_init_attr* init_attr) {
  if (!live(qp) || !attr) return EINVAL;
  const std::vector<uint8_t> d =
      drv_of(qp->context)->rc().mmio_read(qpi(qp)->page + rnic::reg::kQpStatus, 4);
  if (d.size() != 4) return EIO;
  uint32_t v;
  std::memcpy(&v, d.data(), 4);
  qp->state = rnic::host::to_ibv(rnic::abi::QpState((v >> 24) & 0xF));
  *attr = qpi(qp)->attr;
  attr->qp_state = attr->cur_qp_state = qp->state;
  if (init_attr) {
    *init_attr = ibv_qp_init_attr{};
    init_attr->qp_context = qp->qp_context;
    init_attr->send_cq = qp->send_cq;
    init_attr->recv_cq = qp->recv_cq;
    init_attr->srq = qp->srq;
    init_attr->cap = qpi(qp)->attr.cap;
    init_attr->qp_type = qp->qp_type;
    init_attr->sq_sig_all = qpi(qp)->sq_sig_all;
  }
  return 0;
}

int ibv_destroy_qp(ibv_qp* qp) {
  if (!live(qp)) return EINVAL;
  const int rc = drv_of(qp->context)->destroy_qp(qp->qp_num);
  if (rc) return rc;
  if (ibv_mr* m = qpi(qp)->inline_mr) {
    ++pd_users(qp->pd);  // the QP's own MR: not the program's
    ibv_dereg_mr(m);
    current().proc->free(qpi(qp)->inline_buf, uint64_t(qpi(qp)->sq_depth) * qpi(qp)->max_inline);
  }
  for (ibv_cq* cq : {qp->send_cq, qp->recv_cq}) {
    auto& v = cqi(cq)->qps;
    v.erase(std::remove(v.begin(), v.end(), qp), v.end());
  }
  objects_of(qp->context).qps.erase(qp->qp_num);
  --pd_users(qp->pd);
  if (qpi(qp)->srq) --srqi(qpi(qp)->srq)->users;
  rnic::host::forget_qp_ex(&reinterpret_cast<Qp*>(qp)->ex);
  delete qpi(qp);
  qpi(qp) = nullptr;  // quarantined (live())
  return 0;
}

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* a) {
  if (!live(pd) || !a) {
    errno = EINVAL;
    return nullptr;
  }
  const rnic::abi::CardCaps& cfg = drv_of(pd->context)->caps();
  if (a->attr.max_wr < 1 || a->attr.max_wr > uint32_t(cfg.max_qp_wr) ||
      a->attr.max_sge > rnic::kMaxSge) {
    errno = EINVAL;
    return nullptr;
  }
  Driver::QpInfo info;
  if (int rc = drv_of(pd->context)->create_srq(pd->handle, a->attr.max_wr, &info)) {
    errno = rc;
    return nullptr;
  }
  ibv_srq* srq = &(new Srq{})->srq;
  srq->context = pd->context;
  srq->srq_context = a->srq_context;
  srq->pd = pd;
  srq->handle = info.qpn;
  srqi(srq) = new SrqImpl;
  SrqImpl& q = *srqi(srq);
  q.depth = a->attr.max_wr;
  q.max_sge = a->attr.max_sge;
  q.page = drv_of(pd->context)->qp_page(info.qpn);
  q.ring = info.rq_ring;
  ++pd_users(pd);
  objects_of(pd->context).srqs[info.qpn] = srq;
  return srq;
}

int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  if (!live(srq) || !attr) return EINVAL;
  if (mask & IBV_SRQ_MAX_WR) return EINVAL;  // no resizing (as siw)
  if (mask & IBV_SRQ_LIMIT) return Refuse::say("ibv_modify_srq with IBV_SRQ_LIMIT", EOPNOTSUPP);
  return 0;
}

int ibv_query_srq(ibv_srq* srq, ibv_srq_attr* attr) {
  if (!live(srq) || !attr) return EINVAL;
  attr->max_wr = srqi(srq)->depth;
  attr->max_sge = srqi(srq)->max_sge;
  attr->srq_limit = 0;
  return 0;
}

int ibv_destroy_srq(ibv_srq* srq) {
  if (!live(srq)) return EINVAL;
  if (srqi(srq)->users) return EBUSY;  // a QP still takes its WQEs
  if (int rc = drv_of(srq->context)->destroy_qp(srq->handle)) return rc;
  --pd_users(srq->pd);
  objects_of(srq->context).srqs.erase(srq->handle);
  delete srqi(srq);
  srqi(srq) = nullptr;  // quarantined (live())
  return 0;
}

namespace {
// A queue the library writes WQEs into: its page on the card, its ring (host-ring mode, else 0)
// and depth, and whether it is an RQ.
struct WqeQueue {
  uint64_t page = 0, ring = 0, depth = 0;
  bool rq = false;
};
WqeQueue queue_of(ibv_qp* qp, bool rq) {
  const QpImpl& q = *qpi(qp);
  return {q.page, rq ? q.rq_ring : q.sq_ring, rq ? q.rq_depth : q.sq_depth, rq};
}

// Writes the WQEs of a queue from producer count `first` on, then the doorbell: into the
// card's window (8 slots: a doorbell at least every 8 WQEs), or, in host-ring mode, into the
// ring in host memory (plain stores) with one doorbell for the lot.
void write_wqes(Driver* drv, const WqeQueue& q, const std::vector<rnic::Wqe>& wqes,
                uint64_t first) {
  const uint64_t win = q.page + (q.rq ? rnic::reg::kRqWindow : rnic::reg::kSqWindow);
  const uint64_t db = q.page + (q.rq ? rnic::reg::kRqDoorbell : rnic::reg::kSqDoorbell);
  uint8_t buf[rnic::kWqeBytes];
  for (size_t i = 0; i < wqes.size(); ++i) {
    const uint64_t idx = first + i;
    spend(uint64_t(drv->cost().wqe_build_ns));
    rnic::encode(wqes[i], buf);
    if (q.ring) {
      drv->mem().write(q.ring + (idx % q.depth) * rnic::kWqeBytes, buf, rnic::kWqeBytes);
      continue;
    }
    const uint64_t slot = win + (idx % rnic::reg::kWindowSlots) * rnic::kWqeBytes;
    for (uint32_t off = 0; off < wqes[i].used_bytes(); off += 64)
      drv->rc().mmio_write(slot + off, std::vector<uint8_t>(buf + off, buf + off + 64));
    if ((idx + 1) % rnic::reg::kWindowSlots == 0 || i + 1 == wqes.size())
      drv->rc().mmio_write_le(db, idx + 1, 8);
  }
  if (q.ring && !wqes.empty()) drv->rc().mmio_write_le(db, first + wqes.size(), 8);
}

// The receive WQEs of a list of WRs, each checked against the queue's SGE limit and free slots
// (posted - freed of depth); the first refused stops the list (its errno, the WR in *bad_wr).
int recv_wqes(ibv_recv_wr* wr, uint32_t max_sge, uint64_t in_use, uint64_t depth,
              std::vector<rnic::Wqe>* wqes, ibv_recv_wr** bad_wr) {
  int rc = 0;
  for (; wr; wr = wr->next) {
    if (wr->num_sge < 0 || uint32_t(wr->num_sge) > max_sge)
      rc = EINVAL;
    else if (in_use + wqes->size() >= depth)
      rc = ENOMEM;
    if (rc) break;
    rnic::Wqe w;
    w.num_sge = uint8_t(wr->num_sge);
    w.wr_id = wr->wr_id;
    for (int i = 0; i < wr->num_sge; ++i)
      w.sge[i] = {wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey};
    wqes->push_back(w);
  }
  if (rc && bad_wr) *bad_wr = wr;
  return rc;
}
}  // namespace

namespace {
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  if (!live(qp)) {
    if (bad_wr) *bad_wr = wr;
    return EINVAL;
  }
  QpImpl& q = *qpi(qp);
  Driver* drv = drv_of(qp->context);
  if (drv->probe) drv->probe(Driver::Probe::kPost, qp->qp_num, q.sq_pi, 0);
  std::vector<rnic::Wqe> wqes;
  int rc = 0;
  for (; wr; wr = wr->next) {
    if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR && qp->state != IBV_QPS_SQD)
      rc = EINVAL;
    else if (wr->num_sge < 0 || uint32_t(wr->num_sge) > q.max_send_sge)
      rc = EINVAL;
    else if (rnic::abi::WqeOpcode op; !rnic::host::to_card(wr->opcode, &op))
      rc = EINVAL;
    else if (rnic::host::is_atomic_wr(wr->opcode) &&
             (wr->num_sge != 1 || wr->sg_list[0].length != 8))
      rc = EINVAL;  // the original value's 8 bytes, one SGE
    else if ((wr->send_flags & IBV_SEND_INLINE) &&
             (!q.max_inline ||
              (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_RDMA_WRITE &&
               wr->opcode != IBV_WR_SEND_WITH_INV && wr->opcode != IBV_WR_SEND_WITH_IMM &&
               wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)))
      rc = EINVAL;
    else if (q.sq_pi + wqes.size() - q.sq_freed >= q.sq_depth)
      rc = ENOMEM;
    if (rc) break;
    rnic::Wqe w;
    rnic::abi::WqeOpcode op{};
    rnic::host::to_card(wr->opcode, &op);  // every opcode the checks above let through maps
    w.opcode = op;
    w.flags =
        rnic::host::to_card_send_flags(wr->send_flags | (q.sq_sig_all ? IBV_SEND_SIGNALED : 0));
    w.num_sge = uint8_t(wr->num_sge);
    w.invalidate_rkey = wr->opcode == IBV_WR_SEND_WITH_INV || wr->opcode == IBV_WR_LOCAL_INV
                            ? wr->invalidate_rkey
                            : 0;
    if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || wr->opcode == IBV_WR_SEND_WITH_IMM)
      w.imm = wr->imm_data;  // as the program stored it (it goes on the wire so)
    w.wr_id = wr->wr_id;
    rnic::host::remote_of(*wr, &w.remote_addr, &w.rkey);
    if (rnic::host::is_atomic_wr(wr->opcode)) {
      w.compare_add = wr->wr.atomic.compare_add;
      w.swap = wr->wr.atomic.swap;
    }
    for (int i = 0; i < wr->num_sge; ++i)
      w.sge[i] = {wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey};
    if (wr->opcode == IBV_WR_LOCAL_INV) w.num_sge = 0;
    if (wr->send_flags & IBV_SEND_INLINE) {
      // The bytes now, into the WQE's slot (the program may reuse its buffer at once; no lkey):
      // the card then reads them from the slot.
      uint64_t len = 0;
      for (int i = 0; i < wr->num_sge; ++i) len += wr->sg_list[i].length;
      if (len > q.max_inline) {
        rc = EINVAL;
        break;
      }
      const uint64_t slot = q.inline_buf + ((q.sq_pi + wqes.size()) % q.sq_depth) * q.max_inline;
      std::vector<uint8_t> bytes(len);
      size_t at = 0;
      for (int i = 0; i < wr->num_sge; ++i) {
        if (rnic_mem_read(reinterpret_cast<const void*>(wr->sg_list[i].addr), bytes.data() + at,
                          wr->sg_list[i].length)) {
          rc = EFAULT;
          break;
        }
        at += wr->sg_list[i].length;
      }
      if (rc) break;
      rnic_mem_write(reinterpret_cast<void*>(slot), bytes.data(), len);
      spend(uint64_t(drv_of(qp->context)->cost().copy_line_ns) * ((len + 63) / 64));
      w.num_sge = len ? 1 : 0;
      w.sge[0] = {slot, uint32_t(len), q.inline_mr->lkey};
    }
    if (wr->opcode == RNIC_WR_FAST_REG_MR) {
      ibv_mr* mr = wr->bind_mw.bind_info.mr;
      if (!mr || !mrx(mr)->fast_max_pages || !mrx(mr)->fast_pages) {
        rc = EINVAL;
        break;
      }
      const uint32_t stag = (mr->lkey & ~0xFFu) | (wr->bind_mw.rkey & 0xFFu);
      w.invalidate_rkey = stag;
      w.remote_addr = reinterpret_cast<uint64_t>(mr->addr);
      w.rkey = rnic::host::to_card_access(wr->bind_mw.bind_info.mw_access_flags);
      w.num_sge = 1;
      w.sge[0] = {mrx(mr)->fast_list, uint32_t(mr->length), mrx(mr)->fast_pages};
      mr->lkey = mr->rkey = stag;  // as ib_update_fast_reg_key
    }
    wqes.push_back(w);
  }
  if (rc && bad_wr) *bad_wr = wr;
  if (!wqes.empty()) {
    write_wqes(drv, queue_of(qp, false), wqes, q.sq_pi);
    q.sq_pi += wqes.size();
  }
  if (drv->probe) drv->probe(Driver::Probe::kPosted, qp->qp_num, q.sq_pi, 0);
  return rc;
}

int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  // A QP in RESET, or one whose receives come from an SRQ, takes none (as siw).
  if (!live(qp) || qp->state == IBV_QPS_RESET || qpi(qp)->srq) {
    if (bad_wr) *bad_wr = wr;
    return EINVAL;
  }
  QpImpl& q = *qpi(qp);
  std::vector<rnic::Wqe> wqes;
  const int rc = recv_wqes(wr, q.max_recv_sge, q.rq_pi - q.rq_freed, q.rq_depth, &wqes, bad_wr);
  if (!wqes.empty()) {
    write_wqes(drv_of(qp->context), queue_of(qp, true), wqes, q.rq_pi);
    q.rq_pi += wqes.size();
  }
  return rc;
}

int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  if (!live(srq)) {
    if (bad_wr) *bad_wr = wr;
    return EINVAL;
  }
  SrqImpl& q = *srqi(srq);
  std::vector<rnic::Wqe> wqes;
  const int rc = recv_wqes(wr, q.max_sge, q.pi - q.freed, q.depth, &wqes, bad_wr);
  if (!wqes.empty()) {
    write_wqes(drv_of(srq->context), {q.page, q.ring, q.depth, true}, wqes, q.pi);
    q.pi += wqes.size();
  }
  return rc;
}

// The CQE carries the WQE index modulo 2^32; widen it next to the queue's producer count.
uint64_t widen(uint32_t index, uint64_t pi) {
  uint64_t idx = (pi & ~0xFFFFFFFFull) | index;
  if (idx >= pi) idx -= 1ull << 32;
  return idx;
}

// poll_cq whose first look's cost.cq_poll_ns was spent already (`first_spent`).
int poll_cq_from(ibv_cq* cq, int num_entries, ibv_wc* wc, bool first_spent) {
  if (!live(cq)) return -EINVAL;
  CqImpl& c = *cqi(cq);
  Driver* drv = drv_of(cq->context);
  Context& ctx = objects_of(cq->context);
  int n = 0;
  ibv_qp* via = nullptr;
  while (n < num_entries) {
    if (n > 0 || !first_spent) spend(uint64_t(drv->cost().cq_poll_ns));
    if (!cqe_ready(cq)) break;
    uint8_t raw[rnic::kCqeBytes];
    drv->mem().read(c.ring_pa + (c.ci % c.entries) * rnic::kCqeBytes, raw, sizeof raw);
    const rnic::Cqe e = rnic::decode_cqe(raw);
    ibv_wc& w = wc[n++];
    w = ibv_wc{};
    w.wr_id = e.wr_id;
    w.status = rnic::host::to_ibv(rnic::abi::CqeStatus(e.status));
    w.opcode = rnic::host::to_ibv(rnic::abi::CqeOpcode(e.opcode));
    w.byte_len = e.byte_len;
    w.invalidated_rkey = e.invalidated_rkey;
    w.qp_num = e.qp_num;
    w.wc_flags = rnic::host::to_ibv_wc_flags(e.wc_flags);
    if (drv->probe)
      drv->probe(Driver::Probe::kPolled, e.qp_num, e.wqe_index,
                 e.opcode == rnic::abi::kCqeRecv ? 1 : 0);
    auto it = ctx.qps.find(e.qp_num);
    if (it != ctx.qps.end()) {
      QpImpl& q = *qpi(it->second);
      const bool recv = e.opcode == rnic::abi::kCqeRecv;
      if (recv && q.srq) {
        SrqImpl& sq = *srqi(q.srq);
        sq.completed(widen(e.wqe_index, sq.pi));
      } else {
        uint64_t& freed = recv ? q.rq_freed : q.sq_freed;
        const uint64_t idx = widen(e.wqe_index, recv ? q.rq_pi : q.sq_pi);
        if (idx + 1 > freed) freed = idx + 1;
      }
      via = it->second;
    }
    ++c.ci;
  }
  if (n > 0 && (via || !c.qps.empty())) cq_doorbell(cq, via ? via : c.qps.front(), false, false);
  return n;
}
int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  return poll_cq_from(cq, num_entries, wc, false);
}
}  // namespace

int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  Driver* drv = drv_of(context);
  while (drv->async_queue().empty()) rnic::host::host_wait(drv->async_event());
  const Driver::AsyncEvent e = drv->async_queue().front();
  drv->async_queue().pop_front();
  Context& ctx = objects_of(context);
  *event = ibv_async_event{};
  event->event_type = e.type;
  if (e.type == IBV_EVENT_CQ_ERR) {
    auto it = ctx.cqs.find(e.num);
    event->element.cq = it == ctx.cqs.end() ? nullptr : it->second;
  } else if (e.type == IBV_EVENT_SRQ_ERR) {
    auto it = ctx.srqs.find(e.num);
    event->element.srq = it == ctx.srqs.end() ? nullptr : it->second;
  } else {
    auto it = ctx.qps.find(e.num);
    event->element.qp = it == ctx.qps.end() ? nullptr : it->second;
  }
  return 0;
}

void ibv_ack_async_event(ibv_async_event*) {}

const char* ibv_wc_status_str(ibv_wc_status status) {
  static const char* const names[] = {"success",
                                      "local length error",
                                      "local QP operation error",
                                      "local EE context operation error",
                                      "local protection error",
                                      "Work Request Flushed Error",
                                      "memory management operation error",
                                      "bad response error",
                                      "local access error",
                                      "remote invalid request error",
                                      "remote access error",
                                      "remote operation error",
                                      "transport retry counter exceeded",
                                      "RNR retry counter exceeded",
                                      "local RDD violation error",
                                      "remote invalid RD request",
                                      "aborted error",
                                      "invalid EE context number",
                                      "invalid EE context state",
                                      "fatal error",
                                      "response timeout error",
                                      "general error"};
  return unsigned(status) < sizeof names / sizeof *names ? names[status] : "unknown";
}

void* rnic_malloc(size_t bytes) { return reinterpret_cast<void*>(current().proc->malloc(bytes)); }

void* rnic_malloc_lazy(size_t bytes) {
  return reinterpret_cast<void*>(current().proc->malloc_untouched(bytes));
}

long rnic_page_out(void* addr, size_t length) {
  if (length == 0) {
    errno = EINVAL;
    return -1;
  }
  const ProcessContext& c = current();
  return long(c.drv->os().page_out(*c.proc, reinterpret_cast<uint64_t>(addr), length));
}

namespace {
int advise_mr(ibv_pd* pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge* sg_list,
              uint32_t num_sge) {
  if (!live(pd)) return EINVAL;
  if (!pd || !sg_list || num_sge == 0) return EINVAL;
  if (advice == IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT) return EOPNOTSUPP;
  for (uint32_t i = 0; i < num_sge; ++i)
    if (int rc = drv_of(pd->context)
                     ->advise_mr(pd->handle, sg_list[i].lkey, sg_list[i].addr, sg_list[i].length,
                                 flags & IBV_ADVISE_MR_FLAG_FLUSH))
      return rc;
  return 0;
}
}  // namespace

// rnic_malloc memory through the model's page tables; the program's own memory (not in the
// model's address range) is plain memory: a copy.
int rnic_mem_write(void* dst, const void* src, size_t len) {
  rnic::host::Process& p = *current().proc;
  const auto va = reinterpret_cast<uint64_t>(dst);
  if (!p.model_va(va)) {
    std::memcpy(dst, src, len);
    return 0;
  }
  return p.write_virt(va, src, len) ? 0 : EFAULT;
}

int rnic_mem_read(const void* src, void* dst, size_t len) {
  rnic::host::Process& p = *current().proc;
  const auto va = reinterpret_cast<uint64_t>(src);
  if (!p.model_va(va)) {
    std::memcpy(dst, src, len);
    return 0;
  }
  return p.read_virt(va, dst, len) ? 0 : EFAULT;
}

void rnic_spend_ns(uint64_t ns) { spend(ns); }

namespace {
// Every key's puts by (at_ps, host, seq), OobPut's order; those no get can see any more (a later
// one was already seen) are dropped.
struct OobBoard {
  std::map<std::string, std::vector<rnic::host::OobPut>> keys;
  sc_core::sc_event* put = nullptr;  // made on first use (needs the simulation context)
  struct Sender {
    uint64_t tx_free_ps = 0;  // the host's link to the board is busy until then
    uint64_t puts = 0;
  };
  std::map<const Driver*, Sender> senders;
  std::function<void(const rnic::host::OobPut&)> forward;
  sc_core::sc_event& event() {
    if (!put) put = new sc_core::sc_event("rnic_oob_put");
    return *put;
  }
};
OobBoard& oob() {
  static OobBoard b;
  return b;
}

bool before(const rnic::host::OobPut& a, const rnic::host::OobPut& b) {
  return std::tie(a.at_ps, a.host, a.seq) < std::tie(b.at_ps, b.host, b.seq);
}

// The put of `key` a get at `now` sees (nullptr: none yet), after dropping those before it; and
// the time the first one not yet seen is (UINT64_MAX: none).
const rnic::host::OobPut* seen(std::vector<rnic::host::OobPut>& v, uint64_t now,
                               uint64_t* next_ps) {
  size_t k = 0;
  while (k < v.size() && v[k].at_ps <= now) ++k;
  *next_ps = k < v.size() ? v[k].at_ps : UINT64_MAX;
  if (k == 0) return nullptr;
  v.erase(v.begin(), v.begin() + std::ptrdiff_t(k - 1));
  return &v.front();
}

void insert(rnic::host::OobPut p) {
  OobBoard& b = oob();
  std::vector<rnic::host::OobPut>& v = b.keys[p.key];
  v.insert(std::upper_bound(v.begin(), v.end(), p, before), std::move(p));
  uint64_t next = 0;
  seen(v, sc_core::sc_time_stamp().value(), &next);  // (a key put over and over stays small)
  rnic::notify_now(b.event());
}
}  // namespace

void rnic::host::oob_clear() {
  oob().keys.clear();
  oob().senders.clear();
}

void rnic::host::oob_set_forward(std::function<void(const OobPut&)> forward) {
  oob().forward = std::move(forward);
}

void rnic::host::oob_arrived(OobPut put) { insert(std::move(put)); }

uint64_t rnic::host::mgmt_send(size_t bytes) {
  const Driver* drv = current().drv;
  const rnic::HostConfig& h = drv->host_config();
  const uint64_t now = sc_core::sc_time_stamp().value();
  uint64_t& free = oob().senders[drv].tx_free_ps;
  free = std::max(free, now) + uint64_t(double(bytes) * 8.0 / h.mgmt_gbps * 1000.0);
  return free + uint64_t(h.mgmt_latency_ns) * 1000;
}

// The board is the management network's: a value put at t is seen at t + host.mgmt_latency_ns
// + its bytes at host.mgmt_gbps, behind what the same host put before (as a TCP exchange of the
// same bytes between executables, sim/exec/mgmt_net.h). Until then a get sees the value before.
void rnic_oob_put(const char* key, const void* data, size_t len) {
  OobBoard& b = oob();
  const auto* p = static_cast<const uint8_t*>(data);
  const Driver* drv = current().drv;
  rnic::host::OobPut put;
  put.key = key;
  put.bytes.assign(p, p + len);
  put.at_ps = rnic::host::mgmt_send(len);
  put.host = rnic::mac_value(drv->mac());
  put.seq = b.senders[drv].puts++;
  if (b.forward) b.forward(put);
  insert(std::move(put));
}

size_t rnic_oob_get(const char* key, void* data, size_t len) {
  OobBoard& b = oob();
  std::vector<rnic::host::OobPut>& v = b.keys[key];  // (a map's values stay put)
  uint64_t next = 0;
  const rnic::host::OobPut* got = seen(v, sc_core::sc_time_stamp().value(), &next);
  if (!got) {
    const rnic::host::BlockedIn blocked(std::string("rnic_oob_get(\"") + key + "\")");
    for (;;) {
      const uint64_t now = sc_core::sc_time_stamp().value();
      got = seen(v, now, &next);
      if (got) break;
      if (next != UINT64_MAX)
        rnic::host::host_wait(sc_core::sc_time::from_value(next - now), b.event());
      else
        rnic::host::host_wait(b.event());
    }
  }
  std::memcpy(data, got->bytes.data(), std::min(len, got->bytes.size()));
  return got->bytes.size();
}

double rnic_now_ns() { return double(sc_core::sc_time_stamp().value()) / 1000.0; }

namespace {
// Waits for ready() as a loop testing it every poll_ns would: woken by ev, aligned to the loop's
// steps from the call.
template <class Ready, class Event>
int wait_polled(Ready ready, const Event& ev, uint64_t poll_ns, uint64_t timeout_ns) {
  const uint64_t step = poll_ns * 1000;
  const uint64_t t0 = sc_core::sc_time_stamp().value();
  const bool forever = timeout_ns == RNIC_WAIT_FOREVER;
  const uint64_t limit = forever ? 0 : t0 + timeout_ns * 1000;
  // A busy loop: the whole wait is the thread's CPU time.
  struct Busy {
    uint64_t t0;
    ~Busy() { rnic::host::host_cpu_add(sc_core::sc_time_stamp().value() - t0); }
  } busy{t0};
  while (!ready()) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (forever) {
      rnic::host::host_wait(ev);
    } else {
      if (now >= limit) return 0;
      rnic::host::host_wait(sc_core::sc_time::from_value(limit - now), ev);
    }
    if (step) {
      const uint64_t el = sc_core::sc_time_stamp().value() - t0;
      const uint64_t pad = (step - el % step) % step;
      if (pad) rnic::host::host_wait(sc_core::sc_time::from_value(pad));
    }
  }
  return 1;
}
}  // namespace

double rnic_cpu_ns() { return double(rnic::host::host_cpu_ps()) / 1000.0; }

double rnic_irq_cpu_ns() { return double(current().drv->irq_cpu_ps()) / 1000.0; }

int rnic_cq_set_callback(ibv_cq* cq, rnic_wc_cb fn, void* arg) {
  if (!live(cq)) return EINVAL;
  if (!cq) return EINVAL;
  cqi(cq)->cb = fn;
  cqi(cq)->cb_arg = arg;
  return 0;
}

int rnic_wr_set_callback(ibv_cq* cq, uint64_t wr_id, rnic_wc_cb fn, void* arg) {
  if (!live(cq)) return EINVAL;
  if (!cq || !fn) return EINVAL;
  cqi(cq)->wr_cbs[wr_id] = {fn, arg};
  return 0;
}

int rnic_dispatch_callbacks(ibv_comp_channel* channel) {
  if (!channel) {
    errno = EINVAL;
    return -1;
  }
  ibv_cq* cq = nullptr;
  void* cq_ctx = nullptr;
  if (ibv_get_cq_event(channel, &cq, &cq_ctx) != 0) return -1;
  ibv_ack_cq_events(cq, 1);
  int n = 0;
  auto drain = [&] {
    ibv_wc wc{};
    while (ibv_poll_cq(cq, 1, &wc) == 1) {
      ++n;
      auto it = cqi(cq)->wr_cbs.find(wc.wr_id);
      if (it != cqi(cq)->wr_cbs.end()) {
        const auto [fn, arg] = it->second;
        cqi(cq)->wr_cbs.erase(it);
        fn(&wc, arg);
      } else if (cqi(cq)->cb) {
        cqi(cq)->cb(&wc, cqi(cq)->cb_arg);
      }
    }
  };
  drain();
  ibv_req_notify_cq(cq, 0);
  drain();
  return n;
}

int rnic_wait_cq(ibv_cq* cq, uint64_t timeout_ns) {
  if (!live(cq)) return EINVAL;
  return wait_polled([cq] { return cqe_ready(cq); }, cqi(cq)->written,
                     uint64_t(drv_of(cq->context)->cost().cq_poll_ns), timeout_ns);
}

int rnic_wait_cqs(ibv_cq** cqs, int n, uint64_t timeout_ns) {
  if (n < 1 || !cqs) return 0;
  sc_core::sc_event_or_list any;
  for (int i = 0; i < n; ++i) {
    if (!live(cqs[i])) return 0;
    any |= cqi(cqs[i])->written;
  }
  int which = 0;
  const auto ready = [&] {
    for (int i = 0; i < n && !which; ++i)
      if (cqe_ready(cqs[i])) which = i + 1;
    return which != 0;
  };
  if (!wait_polled(ready, any, uint64_t(drv_of(cqs[0]->context)->cost().cq_poll_ns), timeout_ns))
    return 0;
  return which;
}

int rnic_poll_rounds(ibv_cq** cqs, int n, uint64_t poll_ns, uint64_t until_ps, int num_entries,
                     ibv_wc* wc, int* which) {
  if (n < 1 || !cqs || !which) return (errno = EINVAL, -1);
  *which = -1;
  for (int k = 0; k < n; ++k)
    if (!live(cqs[k]) || drv_of(cqs[k]->context) != drv_of(cqs[0]->context))
      return (errno = EINVAL, -1);
  Driver* drv = drv_of(cqs[0]->context);
  const uint64_t look = uint64_t(drv->cost().cq_poll_ns) * 1000, poll = poll_ns * 1000;
  const uint64_t round = poll + uint64_t(n) * look;
  if (look == 0) return (errno = EINVAL, -1);
  // Round j (from 1) starts at first + (j - 1) * round; its look at CQ k at that + (k + 1) * look.
  const uint64_t t0 = sc_core::sc_time_stamp().value(), first = t0 + poll;
  const uint64_t end = until_ps <= first        ? first
                       : until_ps == UINT64_MAX ? UINT64_MAX
                                                : first + (until_ps - first + round - 1) / round *
                                                              round;  // that round's start
  // The first look at CQ k at or after `at` (after it where `after`).
  auto look_at = [&](int k, uint64_t at, bool after) {
    const uint64_t base = first + uint64_t(k + 1) * look;
    if (at < base || (at == base && !after)) return base;
    uint64_t t = base + (at - base) / round * round;
    if (t < at || (t == at && after)) t += round;
    return t;
  };
  // The first look that will find a CQE, and its CQ. A CQ with one now got it after its last
  // look: the next round's look finds it.
  uint64_t due = UINT64_MAX;
  int due_k = -1;
  std::vector<bool> seen(size_t(n), false);
  sc_core::sc_event_or_list any;
  for (int k = 0; k < n; ++k) {
    CqImpl& c = *cqi(cqs[k]);
    any |= c.written;
    drv->clear_first_write(&c.written);
    if (cqe_ready(cqs[k])) {
      seen[size_t(k)] = true;
      const uint64_t t = look_at(k, first, false);
      if (t < due) due = t, due_k = k;
    }
  }
  for (;;) {
    const uint64_t now = sc_core::sc_time_stamp().value();
    const uint64_t stop = std::min(due, end);
    if (now >= stop) break;
    if (stop == UINT64_MAX)
      rnic::host::host_wait(any);
    else
      rnic::host::host_wait(sc_core::sc_time::from_value(stop - now), any);
    // What landed: a CQE written in the first delta cycle of a look's time is seen by that look
    // (the look runs after it), a later one by the next.
    const uint64_t woke = sc_core::sc_time_stamp().value();
    for (int k = 0; k < n; ++k) {
      if (seen[size_t(k)]) continue;
      const sc_core::sc_event* ev = &cqi(cqs[k])->written;
      if (!cqe_ready(cqs[k])) {
        drv->clear_first_write(ev);  // a write that left no CQE to poll
        continue;
      }
      seen[size_t(k)] = true;
      uint64_t w_ps = woke, w_delta = 1;
      drv->first_write(ev, &w_ps, &w_delta);
      // (Woken at each write's time, no look passed unseen: the clamp only keeps it so.)
      uint64_t t = look_at(k, w_ps, w_delta > 0);
      if (t < woke) t = look_at(k, woke, false);
      if (t < due) due = t, due_k = k;
    }
  }
  // The whole time was the loop's: the thread's CPU time.
  const uint64_t now = sc_core::sc_time_stamp().value();
  rnic::host::host_cpu_add(now - t0);
  if (due < end && now == due) {
    *which = due_k;
    return poll_cq_from(cqs[due_k], num_entries, wc, true);
  }
  return 0;
}

namespace {
// Busy-polls `len` bytes at addr (within one page) until ready(bytes): cost.cq_poll_ns per look.
template <class Ready>
int wait_mem(const void* addr, size_t len, Ready ready, uint64_t timeout_ns) {
  const ProcessContext& c = current();
  uint64_t pa = 0, reads = 0;
  if (!c.proc->page_table().translate(reinterpret_cast<uint64_t>(addr), &pa, &reads)) return 0;
  sc_core::sc_event ev;
  c.drv->watch(pa, len, &ev);
  Driver* drv = c.drv;
  const int r = wait_polled(
      [drv, pa, len, &ready] {
        uint8_t b[8] = {};
        drv->mem().read(pa, b, len);
        return ready(b);
      },
      ev, uint64_t(drv->cost().cq_poll_ns), timeout_ns);
  drv->unwatch(&ev);
  if (r && drv->probe) drv->probe(Driver::Probe::kMemSeen, 0, pa, 0);
  return r;
}
}  // namespace

int rnic_wait_mem(const void* addr, uint8_t value, uint64_t timeout_ns) {
  return wait_mem(
      addr, 1, [value](const uint8_t* b) { return b[0] == value; }, timeout_ns);
}

int rnic::host::wait_mem_change(const void* addr, const uint8_t* old, size_t len,
                                uint64_t timeout_ns) {
  if (len == 0 || len > 8) return 0;
  return wait_mem(
      addr, len, [old, len](const uint8_t* b) { return std::memcmp(b, old, len) != 0; },
      timeout_ns);
}

ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  ibv_qp_ex* ex = live(qp) ? rnic::host::qp_ex_of(&reinterpret_cast<Qp*>(qp)->ex) : nullptr;
  if (!ex) errno = EOPNOTSUPP;
  return ex;
}

namespace {

// The operations rdma-core's inline verbs call (a provider's ops table): what the card does, and
// a refusal naming the verb for the rest.
void fill_ops(verbs_context& v) {
  rnic::host::fill_unsupported_ops<Refuse>(v);
  ibv_context_ops& o = v.context.ops;
  o.post_send = post_send;
  o.post_recv = post_recv;
  o.post_srq_recv = post_srq_recv;
  o.poll_cq = poll_cq;
  o.req_notify_cq = req_notify_cq;
  v.sz = sizeof v;
  v.query_port = query_port;
  v.advise_mr = advise_mr;
  v.query_device_ex = query_device_ex;
  v.create_cq_ex = rnic::host::create_cq_ex<Cq, poll_cq, Refuse>;
  v.create_qp_ex = rnic::host::create_qp_ex<Qp, post_send, Refuse>;
}
}  // namespace

rnic::host::Driver& rnic::host::context_driver(const ibv_context* c) { return *drv_of(c); }
rnic::host::Process& rnic::host::context_process(const ibv_context* c) { return *proc_of(c); }
uint32_t rnic::host::mr_pbl_count(const ibv_mr* mr) {
  return reinterpret_cast<const Mr*>(mr)->pbl_count;
}
