#include "models/host/driver.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "models/common/log.h"
#include "models/common/sim_time.h"
#include "models/host/host_wait.h"
#include "models/host/verbs/card_codes.h"
#include "models/rnic/abi/regs.h"
#include "models/rnic/abi/wqe.h"

namespace rnic::host {

Driver::Driver(std::string name, PhysMem& mem, RootComplex& rc, Os& os, uint64_t bar0,
               uint64_t bar2, MacAddr mac, const abi::CardCaps& caps, const HostConfig& host,
               const CostConfig& cost, StatRegistry& stats)
    : name_(std::move(name)),
      mem_(mem),
      rc_(rc),
      os_(os),
      bar0_(bar0),
      bar2_(bar2),
      mac_(mac),
      caps_(caps),
      host_(host),
      cost_(cost),
      qp_used_(size_t(caps.qps)),
      cq_used_(size_t(caps.cqs)),
      stag_used_(size_t(caps.stags)),
      stag_key_(size_t(caps.stags)),
      odp_faults_(stats.group(name_).counter("odp_faults", "faults",
                                             "page-fault records of the card the driver resolved")),
      odp_pages_mapped_(stats.group(name_).counter(
          "odp_pages_mapped", "pages",
          "pages of on-demand regions made present on the card (faults and prefetches)")),
      odp_pages_unmapped_(stats.group(name_).counter(
          "odp_pages_unmapped", "pages",
          "pages of on-demand regions made absent on the card before they went out")),
      odp_failed_(stats.group(name_).counter(
          "odp_failed", "faults", "faults the driver could not resolve (the range not mapped)")),
      odp_fault_ns_(stats.group(name_).histogram(
          "odp_fault_ns", "ns", "a page fault: its interrupt to its ODP_MAP's completion",
          Histogram::log2_edges(1000, 16))) {
  qp_used_[0] = true;    // QPN 0 is not handed out (as in rdma-core providers)
  stag_used_[0] = true;  // STag 0 is reserved (RFC 5040)
  pbl_free_[0] = uint32_t(caps.pbl_entries);
  rc_.on_msi = [this](uint64_t, uint32_t data) {
    irq_pending_.push_back(data);
    notify_now(irq_ev_);
  };
  rc_.on_write = [this](uint64_t addr, uint32_t len) {
    for (Watch& w : watches_)
      if (addr < w.end && addr + len > w.base) {
        if (!w.written) {
          w.written = true;
          w.first_ps = now_ps();
          w.first_delta = delta_now();
        }
        notify_now(*w.ev);
      }
  };
  sc_core::sc_spawn_options o;
  std::string thread = name_ + "_irq";
  std::replace(thread.begin(), thread.end(), '.', '_');
  sc_core::sc_spawn([this] { irq_thread(); }, thread.c_str(), &o);
  sc_core::sc_spawn([this] { odp_thread(); }, (thread.substr(0, thread.size() - 3) + "odp").c_str(),
                    &o);
  os_.add_notifier([this](Process& p, uint64_t va, uint64_t len) { odp_invalidate(p, va, len); });
}

void Driver::watch(uint64_t base, uint64_t len, sc_core::sc_event* ev) {
  watches_.push_back({base, base + len, ev});
}
void Driver::unwatch(sc_core::sc_event* ev) {
  for (size_t i = 0; i < watches_.size(); ++i)
    if (watches_[i].ev == ev) watches_.erase(watches_.begin() + long(i--));
}
bool Driver::first_write(const sc_core::sc_event* ev, uint64_t* ps, uint64_t* delta) const {
  for (const Watch& w : watches_)
    if (w.ev == ev && w.written) {
      *ps = w.first_ps;
      *delta = w.first_delta;
      return true;
    }
  return false;
}
void Driver::clear_first_write(const sc_core::sc_event* ev) {
  for (Watch& w : watches_)
    if (w.ev == ev) w.written = false;
}

void Driver::irq_thread() {
  for (;;) {
    if (irq_pending_.empty()) rnic::host::host_wait(irq_ev_);
    if (irq_pending_.empty()) continue;
    const uint32_t vec = irq_pending_.front();
    irq_pending_.pop_front();
    const uint64_t t0 = sc_core::sc_time_stamp().value();
    struct Busy {  // the handler runs from its entry to its last MMIO access
      uint64_t t0;
      uint64_t& acc;
      ~Busy() { acc += sc_core::sc_time_stamp().value() - t0; }
    } busy{t0, irq_cpu_ps_};
    Os::spend(uint64_t(cost_.interrupt_entry_ns));
    if (vec == reg::cmd_vector(caps_.cqs)) {
      cmd_completed_ = rc_.mmio_read32(bar0_ + reg::kCmdConsumer);
      rc_.mmio_write_le(bar0_ + reg::kIntCause, reg::kIntCommand, 4);
      notify_now(cmd_ev_);
    } else if (vec == reg::kAsyncVector) {
      for (;;) {
        const uint32_t e = rc_.mmio_read32(bar0_ + reg::kEvent);
        if (!(e >> 31)) break;
        async_.push_back({to_ibv(abi::AsyncEvent((e >> 24) & 0x7F)), e & 0xFFFFFF});
      }
      rc_.mmio_write_le(bar0_ + reg::kIntCause, reg::kIntAsyncEvent, 4);
      notify_now(async_ev_);
    } else if (vec == reg::fault_vector(caps_.cqs)) {
      // Page faults: the new records of the ring (each known by its sequence number) go to the
      // ODP worker.
      for (;;) {
        uint8_t rec[reg::kFaultRecordBytes];
        mem_.read(fault_ring_ + uint64_t(fault_taken_ % reg::kFaultSlots) * reg::kFaultRecordBytes,
                  rec, sizeof(rec));
        uint32_t seq;
        std::memcpy(&seq, rec, 4);
        if (seq != fault_taken_ + 1) break;
        Os::spend(uint64_t(cost_.copy_line_ns));
        ++fault_taken_;
        OdpJob j;
        std::memcpy(&j.stag, rec + 8, 4);
        std::memcpy(&j.to, rec + 16, 8);
        std::memcpy(&j.end, rec + 24, 8);
        j.t0 = t0;
        odp_jobs_.push_back(j);
      }
      rc_.mmio_write_le(bar0_ + reg::kFaultConsumer, fault_taken_, 4);
      rc_.mmio_write_le(bar0_ + reg::kIntCause, reg::kIntPageFault, 4);
      notify_now(odp_ev_);
    } else {
      rc_.mmio_write_le(bar0_ + reg::kIntCause, reg::kIntCompletion, 4);
      if (on_cq_event) on_cq_event(vec - 1);
    }
  }
}

// A kernel thread calls the driver's function directly: no system call around it.
void Driver::ioctl_enter() {
  if (!in_kernel_thread()) Os::spend(uint64_t(cost_.syscall_entry_ns + cost_.ioctl_dispatch_ns));
  ioctl_lock_.lock();
}
void Driver::ioctl_exit() {
  ioctl_lock_.unlock();
  if (!in_kernel_thread()) Os::spend(uint64_t(cost_.syscall_exit_ns));
}

// Inside an ioctl: posts the command in the queue's next slot (one 64-byte MMIO write and the
// producer count), lets other threads' ioctls run while the firmware works, and waits for its
// completion word: read until it is there (host.cmd_wait poll), or read once after the command's
// completion interrupt (interrupt).
int Driver::command(uint32_t op, const uint32_t* args, size_t n, uint32_t* value) {
  const bool irq = host_.cmd_wait == "interrupt";
  while (cmd_posted_ - cmd_completed_ >= reg::kCmdSlots) host_wait(cmd_ev_);  // queue full
  const uint32_t index = cmd_posted_++;
  std::vector<uint8_t> slot(reg::kCmdSlotBytes, 0);
  const uint32_t w0 = op | (irq ? reg::kCmdFlagInterrupt : 0);
  std::memcpy(slot.data(), &w0, 4);
  std::memcpy(slot.data() + 4, args, std::min<size_t>(reg::kCmdArgCount, n) * 4);
  const uint64_t done = bar0_ + reg::kCmdDone + 8 * (index % reg::kCmdSlots);
  rc_.mmio_write(bar0_ + reg::kCmdQueue + uint64_t(index % reg::kCmdSlots) * reg::kCmdSlotBytes,
                 std::move(slot));
  rc_.mmio_write_le(bar0_ + reg::kCmdProducer, cmd_posted_, 4);
  ioctl_lock_.unlock();
  uint64_t word = 0;
  for (;;) {
    while (irq && int32_t(cmd_completed_ - index) <= 0) host_wait(cmd_ev_);
    const std::vector<uint8_t> d = rc_.mmio_read(done, 8);
    if (d.size() == 8) std::memcpy(&word, d.data(), 8);
    if (reg::cmd_done_seq(word) == uint16_t(index + 1)) break;
  }
  // Completions come in order: every command before this one is done too.
  if (int32_t(index + 1 - cmd_completed_) > 0) cmd_completed_ = index + 1;
  notify_now(cmd_ev_);
  ioctl_lock_.lock();
  const uint32_t rc = reg::cmd_done_result(word);
  if (value) *value = reg::cmd_done_value(word);
  if (rc) log::debug("{}: command {} failed: errno {}", name_, op, rc);
  return int(rc);
}

int Driver::open() {
  if (opened_) return 0;
  ioctl_enter();
  if (opened_) {  // another thread opened the card while this one waited for the lock
    ioctl_exit();
    return 0;
  }
  rc_.mmio_write_le(bar0_ + reg::kMsiAddrLo, uint32_t(kMsiBase), 4);
  rc_.mmio_write_le(bar0_ + reg::kMsiAddrHi, 0, 4);
  fault_ring_ = alloc_dma(uint64_t(reg::kFaultSlots) * reg::kFaultRecordBytes);
  rc_.mmio_write_le(bar0_ + reg::kFaultRingLo, uint32_t(fault_ring_), 4);
  rc_.mmio_write_le(bar0_ + reg::kFaultRingHi, uint32_t(fault_ring_ >> 32), 4);
  rc_.mmio_write_le(
      bar0_ + reg::kIntMask,
      reg::kIntAsyncEvent | reg::kIntCompletion | reg::kIntCommand | reg::kIntPageFault, 4);
  rc_.mmio_write_le(bar0_ + reg::kControl, 1, 4);
  const bool ok = rc_.mmio_read32(bar0_ + reg::kId) == reg::kIdValue;
  ioctl_exit();
  opened_ = ok;
  return ok ? 0 : ENODEV;
}

int Driver::alloc_pd(uint32_t* pd) {
  ioctl_enter();
  *pd = next_pd_++;
  ioctl_exit();
  return 0;
}

int Driver::dealloc_pd(uint32_t) {
  ioctl_enter();
  ioctl_exit();
  return 0;
}

uint64_t Driver::alloc_dma(uint64_t bytes) {
  const uint64_t pages = std::max<uint64_t>(1, (bytes + kPageSize - 1) / kPageSize);
  return mem_.alloc_contiguous(pages, mem_.next_frame());
}

uint32_t Driver::free_stag() const {
  for (uint32_t i = 1; i < stag_used_.size(); ++i)
    if (!stag_used_[i]) return i;
  return 0;
}

int Driver::alloc_range(std::map<uint32_t, uint32_t>& free, uint32_t n, uint32_t* first) {
  for (auto it = free.begin(); it != free.end(); ++it) {
    if (it->second < n) continue;
    *first = it->first;
    const uint32_t rest = it->second - n, at = it->first + n;
    free.erase(it);
    if (rest) free[at] = rest;
    return 0;
  }
  return ENOMEM;
}

void Driver::free_range(std::map<uint32_t, uint32_t>& free, uint32_t first, uint32_t n) {
  auto it = free.emplace(first, n).first;
  auto next = std::next(it);
  if (next != free.end() && first + n == next->first) {
    it->second += next->second;
    free.erase(next);
  }
  if (it != free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == first) {
      prev->second += it->second;
      free.erase(it);
    }
  }
}

int Driver::create_cq(uint32_t entries, CqInfo* out) {
  ioctl_enter();
  int rc = EINVAL;
  if (entries >= 1 && entries <= uint32_t(caps_.max_cqe)) {
    rc = ENOMEM;
    for (uint32_t i = 0; i < cq_used_.size(); ++i) {
      if (cq_used_[i]) continue;
      const uint64_t ring = alloc_dma(uint64_t(entries) * 32);
      cq_used_[i] = true;
      rc = command(abi::CreateCq{i, ring, entries});
      if (rc == 0)
        *out = {i, ring, entries};
      else
        cq_used_[i] = false;
      break;
    }
  }
  ioctl_exit();
  return rc;
}

int Driver::destroy_cq(uint32_t cqn) {
  ioctl_enter();
  const int rc = command(abi::DestroyCq{cqn});
  if (rc == 0) cq_used_[cqn] = false;
  ioctl_exit();
  return rc;
}

int Driver::create_qp(uint32_t pd, uint32_t scq, uint32_t rcq, uint32_t sq_depth, uint32_t rq_depth,
                      QpInfo* out, uint32_t srq) {
  return create_queue(pd, scq, rcq, sq_depth, rq_depth,
                      srq == kNoSrq ? 0 : abi::CreateQp::kQpUsesSrq, srq == kNoSrq ? 0 : srq, out);
}

int Driver::create_srq(uint32_t pd, uint32_t depth, QpInfo* out) {
  return create_queue(pd, 0, 0, 0, depth, abi::CreateQp::kQpSrq, 0, out);
}

int Driver::create_queue(uint32_t pd, uint32_t scq, uint32_t rcq, uint32_t sq_depth,
                         uint32_t rq_depth, uint32_t flags, uint32_t srq, QpInfo* out) {
  ioctl_enter();
  int rc = ENOMEM;
  const bool rings = host_.wqe_mode == "ring";
  for (uint32_t i = 1; i < qp_used_.size(); ++i) {
    if (qp_used_[i]) continue;
    QpInfo info;
    info.qpn = i;
    if (rings && sq_depth <= uint32_t(caps_.max_qp_wr) && rq_depth <= uint32_t(caps_.max_qp_wr)) {
      if (sq_rings_.size() < qp_used_.size()) sq_rings_.resize(qp_used_.size());
      if (rq_rings_.size() < qp_used_.size()) rq_rings_.resize(qp_used_.size());
      for (auto [ring, depth] : {std::pair{&sq_rings_[i], sq_depth}, {&rq_rings_[i], rq_depth}}) {
        if (ring->slots < depth) *ring = {alloc_dma(uint64_t(depth) * kWqeBytes), depth};
      }
      flags |= abi::CreateQp::kQpHostRings;
      info.sq_ring = sq_depth ? sq_rings_[i].pa : 0;
      info.rq_ring = rq_depth ? rq_rings_[i].pa : 0;
    }
    qp_used_[i] = true;
    rc = command(
        abi::CreateQp{i, pd, scq, rcq, sq_depth, rq_depth, flags, info.sq_ring, info.rq_ring, srq});
    if (rc == 0)
      *out = info;
    else
      qp_used_[i] = false;
    break;
  }
  ioctl_exit();
  return rc;
}

int Driver::modify_qp(uint32_t qpn, uint32_t mask, ibv_qp_state state, const QpAttrs& a) {
  ioctl_enter();
  abi::ModifyQp m;
  m.qpn = qpn;
  using M = abi::ModifyQp;
  const std::pair<uint32_t, uint32_t> bits[] = {
      {IBV_QP_STATE, M::kState},          {IBV_QP_AV, M::kPeerMac},
      {IBV_QP_DEST_QPN, M::kPeerQpn},     {IBV_QP_MAX_DEST_RD_ATOMIC, M::kIrd},
      {IBV_QP_MAX_QP_RD_ATOMIC, M::kOrd}, {IBV_QP_ACCESS_FLAGS, M::kAccess},
      {IBV_QP_PATH_MTU, M::kMtu},         {IBV_QP_TIMEOUT, M::kReadTimeout},
      {IBV_QP_RETRY_CNT, M::kReadTimeout}};
  for (const auto& [ibv, card] : bits)
    if (mask & ibv) m.set |= card;
  m.state = to_card(state);
  m.peer_mac = a.peer;
  m.peer_qpn = a.peer_qpn;
  m.ird = a.ird;
  m.ord = a.ord;
  m.access = to_card_access(a.access);
  m.mtu = a.mtu;
  m.read_timeout_ns = a.read_timeout_ns;
  if (a.local_port || a.remote_port) {
    m.set |= M::kPorts;
    m.local_port = a.local_port;
    m.remote_port = a.remote_port;
  }
  if (a.role != abi::kRoleByRule) {
    m.set |= M::kRole;
    m.role = abi::ConnRole(a.role);
  }
  const int rc = command(m);
  ioctl_exit();
  return rc;
}

int Driver::destroy_qp(uint32_t qpn) {
  ioctl_enter();
  const int rc = command(abi::DestroyQp{qpn});
  if (rc == 0) qp_used_[qpn] = false;
  ioctl_exit();
  return rc;
}

// The SMT entry of a page-list region of [va, va + len) (4 KiB pages; tagged offsets are the
// virtual addresses); install_mr fills in its index, key and PBL range.
abi::WriteStag Driver::page_list_stag(abi::StagType type, uint32_t access, uint32_t pd, uint64_t va,
                                      uint64_t len) {
  abi::WriteStag w;
  w.type = type;
  w.access = to_card_access(access);
  w.pd = pd;
  w.base_to = va;
  w.length = len;
  w.page_shift = 12;
  w.first_page_offset = uint32_t(va & (kPageSize - 1));
  return w;
}

int Driver::reg_mr(Process& p, uint32_t pd, uint64_t va, uint64_t len, uint32_t access,
                   MrInfo* out) {
  if (len == 0) return EINVAL;
  os_.mlock(p, va, len);
  const Os::PblResult pbl = os_.get_pbl(p, va, len);
  if (!pbl.ok) return EFAULT;
  const abi::WriteStag w = page_list_stag(abi::kStagMemoryRegion, access, pd, va, len);
  ioctl_enter();
  const int rc = install_mr(pbl.pages.data(), uint32_t(pbl.pages.size()), w, out);
  ioctl_exit();
  return rc;
}

// Takes n PBLMT entries and a free STag and has the firmware load `list` into the entries (n
// page addresses; for a scatter-gather handle n (address, length) extents) and write the STag as
// `w` describes (index, key and PBL range filled in here): one REG_MR. Inside an ioctl.
int Driver::install_mr(const void* list, uint32_t n, abi::WriteStag w, MrInfo* out) {
  uint32_t first = 0;
  int rc = alloc_range(pbl_free_, n, &first);
  if (rc) return rc;
  const uint32_t idx = free_stag();
  if (!idx) {
    free_range(pbl_free_, first, n);
    return ENOMEM;
  }
  const uint64_t bytes = uint64_t(n) * (w.type == abi::kStagSgHandle ? 16 : 8);
  uint64_t buf = 0;  // none: an on-demand region's pages start absent
  if (list) {
    buf = alloc_dma(bytes);
    mem_.write(buf, list, bytes);
    const uint64_t lines = (bytes + 63) / 64;
    Os::spend(lines * uint64_t(cost_.copy_line_ns) + os_.miss_ns(2 * bytes, 2 * lines));
  }
  w.index = idx;
  w.key = ++stag_key_[idx];
  w.pbl_first = first;
  w.pbl_count = n;
  stag_used_[idx] = true;
  rc = command(abi::RegMr{w, buf});
  if (rc) {
    stag_used_[idx] = false;
    free_range(pbl_free_, first, n);
    return rc;
  }
  *out = {abi::make_stag(idx, w.key), first, n};
  return 0;
}

namespace {
// A scatter-gather list's shape: 1 to kMaxSgRegions regions, none empty or wrapping, no two
// overlapping (in any order). 0 or EINVAL.
int check_sg_list(const std::vector<std::pair<uint64_t, uint64_t>>& regions) {
  if (regions.empty() || regions.size() > Driver::kMaxSgRegions) return EINVAL;
  std::vector<std::pair<uint64_t, uint64_t>> sorted = regions;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto [va, len] = sorted[i];
    if (len == 0 || va + len < va) return EINVAL;
    if (i + 1 < sorted.size() && va + len > sorted[i + 1].first) return EINVAL;  // overlap
  }
  return 0;
}

// A scatter-gather handle's STag: `total` bytes at tagged offsets from 0.
abi::WriteStag sg_handle_stag(uint32_t access, uint32_t pd, uint64_t total) {
  abi::WriteStag w;
  w.type = abi::kStagSgHandle;
  w.access = to_card_access(access);
  w.pd = pd;
  w.base_to = 0;
  w.length = total;
  w.page_shift = 12;
  return w;
}
}  // namespace

int Driver::reg_sg_mr(Process& p, uint32_t pd,
                      const std::vector<std::pair<uint64_t, uint64_t>>& regions, uint32_t access,
                      MrInfo* out) {
  if (const int rc = check_sg_list(regions)) return rc;
  // The extents: each region's pages, physically contiguous runs merged.
  std::vector<uint64_t> ext;  // address, length pairs
  uint64_t total = 0;
  for (const auto& [va, len] : regions) {
    os_.mlock(p, va, len);
    const Os::PblResult pbl = os_.get_pbl(p, va, len);
    if (!pbl.ok) return EFAULT;
    uint64_t off = va & (kPageSize - 1), left = len;
    for (const uint64_t page : pbl.pages) {
      const uint64_t n = std::min(left, kPageSize - off), pa = page + off;
      if (!ext.empty() && ext[ext.size() - 2] + ext.back() == pa)
        ext.back() += n;
      else
        ext.insert(ext.end(), {pa, n});
      left -= n;
      off = 0;
      if (!left) break;
    }
    total += len;
  }
  const abi::WriteStag w = sg_handle_stag(access, pd, total);
  ioctl_enter();
  const int rc = install_mr(ext.data(), uint32_t(ext.size() / 2), w, out);
  ioctl_exit();
  return rc;
}

uint64_t Driver::kmalloc(uint64_t bytes) { return kernel_va(alloc_dma(bytes)); }

// The physical address of [kva, kva + len) in the direct map, or ~0 when it is not this
// host's memory.
uint64_t Driver::kernel_pa(uint64_t kva, uint64_t len) const {
  if (kva < kDirectMap || len > mem_.size() || kva - kDirectMap > mem_.size() - len) return ~0ull;
  const uint64_t pa = kva - kDirectMap;
  return mem_.region(pa, len) == Region::kMemory ? pa : ~0ull;
}

int Driver::kernel_reg_mem(uint32_t pd, uint64_t kva, uint64_t len, uint32_t access, MrInfo* out) {
  if (len == 0 || kva + len < kva) return EINVAL;
  const uint64_t pa = kernel_pa(kva, len);
  if (pa == ~0ull) return EFAULT;
  Os::spend(uint64_t(cost_.kernel_reg_call_ns + cost_.kernel_region_ns));
  std::vector<uint64_t> pages;
  for (uint64_t pg = pa & ~(kPageSize - 1); pg < pa + len; pg += kPageSize) pages.push_back(pg);
  const abi::WriteStag w = page_list_stag(abi::kStagMemoryRegion, access, pd, kva, len);
  ioctl_lock_.lock();
  const int rc = install_mr(pages.data(), uint32_t(pages.size()), w, out);
  ioctl_lock_.unlock();
  return rc;
}

int Driver::kernel_lock_sg(uint32_t pd, const std::vector<std::pair<uint64_t, uint64_t>>& regions,
                           uint32_t access, MrInfo* out) {
  if (const int rc = check_sg_list(regions)) return rc;
  std::vector<uint64_t> ext;  // address, length pairs; physically contiguous regions merged
  uint64_t total = 0;
  for (const auto& [kva, len] : regions) {
    const uint64_t pa = kernel_pa(kva, len);
    if (pa == ~0ull) return EFAULT;
    if (!ext.empty() && ext[ext.size() - 2] + ext.back() == pa)
      ext.back() += len;
    else
      ext.insert(ext.end(), {pa, len});
    total += len;
  }
  Os::spend(uint64_t(cost_.kernel_reg_call_ns) +
            uint64_t(regions.size()) * uint64_t(cost_.kernel_region_ns));
  const abi::WriteStag w = sg_handle_stag(access, pd, total);
  ioctl_lock_.lock();
  const int rc = install_mr(ext.data(), uint32_t(ext.size() / 2), w, out);
  ioctl_lock_.unlock();
  return rc;
}

int Driver::kernel_dereg(const MrInfo& mr) {
  ioctl_lock_.lock();
  const uint32_t idx = abi::stag_index(mr.lkey);
  const int rc = command(abi::FreeStag{idx});
  if (rc == 0) {
    stag_used_[idx] = false;
    if (mr.pbl_count) free_range(pbl_free_, mr.pbl_first, mr.pbl_count);
  }
  ioctl_lock_.unlock();
  return rc;
}

int Driver::reg_phys_mr(uint32_t pd, uint64_t pa, uint64_t len, uint32_t access, MrInfo* out) {
  if (len == 0 || pa + len < pa || pa + len > mem_.size()) return EINVAL;
  ioctl_enter();
  const uint32_t idx = free_stag();
  int rc = ENOMEM;
  if (idx) {
    abi::WriteStag w;
    w.index = idx;
    w.key = ++stag_key_[idx];
    w.type = abi::kStagPhysical;
    w.access = to_card_access(access);
    w.pd = pd;
    w.base_to = pa;
    w.length = len;
    w.phys_base = pa;
    stag_used_[idx] = true;
    rc = command(w);
    if (rc == 0)
      *out = {abi::make_stag(idx, w.key), 0, 0};
    else
      stag_used_[idx] = false;
  }
  ioctl_exit();
  return rc;
}

int Driver::alloc_fast_mr(uint32_t pd, uint32_t max_pages, FastMrInfo* out) {
  ioctl_enter();
  uint32_t first = 0;
  int rc = alloc_range(pbl_free_, max_pages, &first);
  const uint32_t idx = rc == 0 ? free_stag() : 0;
  if (rc == 0 && !idx) {
    free_range(pbl_free_, first, max_pages);
    rc = ENOMEM;
  }
  if (rc == 0) {
    stag_used_[idx] = true;
    rc = command(abi::AllocFastMr{idx, pd, first, max_pages});
    if (rc == 0) {
      *out = {abi::make_stag(idx, 0), first, max_pages, alloc_dma(uint64_t(max_pages) * 8)};
    } else {
      stag_used_[idx] = false;
      free_range(pbl_free_, first, max_pages);
    }
  }
  ioctl_exit();
  return rc;
}

int Driver::map_fast_mr(Process& p, const FastMrInfo& f, uint64_t va, uint64_t len,
                        uint32_t* pages) {
  if (len == 0) return EINVAL;
  const uint64_t n = ((va & (kPageSize - 1)) + len + kPageSize - 1) / kPageSize;
  if (n > f.max_pages) return EINVAL;
  os_.mlock(p, va, len);
  const Os::PblResult pbl = os_.get_pbl(p, va, len);
  if (!pbl.ok) return EFAULT;
  mem_.write(f.list_pa, pbl.pages.data(), pbl.pages.size() * 8);
  *pages = uint32_t(pbl.pages.size());
  return 0;
}

int Driver::dereg_mr(const MrInfo& mr) {
  ioctl_enter();
  const uint32_t idx = abi::stag_index(mr.lkey);
  const int rc = command(abi::FreeStag{idx});
  if (rc == 0) {
    stag_used_[idx] = false;
    if (mr.pbl_count) free_range(pbl_free_, mr.pbl_first, mr.pbl_count);
    odp_.erase(idx);
  }
  ioctl_exit();
  return rc;
}

// A kernel DMA buffer of at least `bytes` for an ODP_MAP's page list: a free one of the pool,
// else a new one (given back to the pool once its command is done).
uint64_t Driver::take_list(uint64_t bytes) {
  for (size_t i = 0; i < odp_lists_.size(); ++i)
    if (odp_lists_[i].second >= bytes) {
      const uint64_t pa = odp_lists_[i].first;
      odp_lists_.erase(odp_lists_.begin() + long(i));
      return pa;
    }
  return alloc_dma(bytes);
}

int Driver::reg_odp_mr(Process& p, uint32_t pd, uint64_t va, uint64_t len, uint32_t access,
                       MrInfo* out) {
  if (len == 0 || va + len < va) return EINVAL;
  const uint64_t first_page = va & ~(kPageSize - 1);
  const uint64_t pages = ((va + len + kPageSize - 1) & ~(kPageSize - 1)) - first_page;
  const abi::WriteStag w = page_list_stag(abi::kStagOnDemand, access, pd, va, len);
  ioctl_enter();
  const int rc = install_mr(nullptr, uint32_t(pages / kPageSize), w, out);
  if (rc == 0)
    odp_[abi::stag_index(out->lkey)] = {
        &p, va, len, out->lkey, out->pbl_first, pd, std::vector<bool>(out->pbl_count)};
  ioctl_exit();
  return rc;
}

int Driver::advise_mr(uint32_t pd, uint32_t lkey, uint64_t va, uint64_t len, bool wait) {
  ioctl_enter();
  const auto it = odp_.find(abi::stag_index(lkey));
  if (it == odp_.end() || it->second.stag != lkey || it->second.pd != pd || len == 0 ||
      va < it->second.va || va + len > it->second.va + it->second.len) {
    ioctl_exit();
    return EINVAL;
  }
  const OdpJob j{lkey, va, va + len, 0};
  int rc = 0;
  if (wait) {
    rc = odp_map(j);
  } else {
    odp_jobs_.push_back(j);
    notify_now(odp_ev_);
  }
  ioctl_exit();
  return rc;
}

// The ODP worker: faults and asynchronous prefetches in order; once a fault is resolved, the
// region on past it (host.odp_prefetch_kib from the faulting address, its pages not present
// yet) in pieces of kOdpAheadPages, each after every fault that came meanwhile.
void Driver::odp_thread() {
  for (;;) {
    while (odp_jobs_.empty() && odp_ahead_.empty()) host_wait(odp_ev_);
    Os::spend(uint64_t(cost_.wakeup_ns));  // the worker woken by the interrupt's handler
    while (!odp_jobs_.empty() || !odp_ahead_.empty()) {
      std::deque<OdpJob>& q = odp_jobs_.empty() ? odp_ahead_ : odp_jobs_;
      const OdpJob j = q.front();
      q.pop_front();
      ioctl_lock_.lock();
      const int rc = odp_map(j);
      ioctl_lock_.unlock();
      const uint64_t ahead = uint64_t(host_.odp_prefetch_kib) * 1024;
      if (rc || !j.t0 || j.to + ahead <= j.end) continue;
      for (uint64_t at = j.end & ~(kPageSize - 1); at < j.to + ahead;
           at += kOdpAheadPages * kPageSize)
        odp_ahead_.push_back({j.stag, std::max(at, j.end),
                              std::min(at + kOdpAheadPages * kPageSize, j.to + ahead), 0});
    }
  }
}

// With the ioctl lock held (command() lets it go while the firmware works): the pages of the
// job's range faulted in and their addresses loaded into the region's PBLMT entries by one
// ODP_MAP, which resumes what waits on them; or ODP_MAP kFailed when the range is not mapped.
int Driver::odp_map(const OdpJob& j) {
  for (;;) {
    const auto it = odp_.find(abi::stag_index(j.stag));
    if (it == odp_.end() || it->second.stag != j.stag) return EINVAL;  // deregistered meanwhile
    OdpMr& mr = it->second;
    const uint64_t base = mr.va & ~(kPageSize - 1);
    uint64_t lo = std::max(j.to, mr.va) & ~(kPageSize - 1);
    uint64_t hi = (std::min(j.end, mr.va + mr.len) + kPageSize - 1) & ~(kPageSize - 1);
    if (!j.t0) {  // a prefetch maps only what is not present yet
      while (lo < hi && mr.present[(lo - base) / kPageSize]) lo += kPageSize;
      while (hi > lo && mr.present[(hi - base) / kPageSize - 1]) hi -= kPageSize;
      if (lo >= hi) return 0;
    }
    abi::OdpMap m;
    m.stag = j.stag;
    m.first = mr.pbl_first + uint32_t((std::min(lo, hi) - base) / kPageSize);
    m.count = hi > lo ? uint32_t((hi - lo) / kPageSize) : 0;
    // Faulting in runs without the lock (its reclaim may run the MMU notifier, which takes it);
    // a notifier that ran meanwhile may have taken pages of the range away: then again.
    Process& proc = *mr.proc;
    const uint64_t seq = odp_invalidations_;
    ioctl_lock_.unlock();
    const Os::PblResult r = hi > lo ? os_.fault_pages(proc, lo, hi - lo) : Os::PblResult{};
    ioctl_lock_.lock();
    if (odp_invalidations_ != seq && r.ok) continue;
    const auto again = odp_.find(abi::stag_index(j.stag));
    if (again == odp_.end() || again->second.stag != j.stag) return EINVAL;
    uint64_t list = 0;
    if (!r.ok || r.pages.size() != m.count) {
      m.flags = abi::OdpMap::kFailed;
      m.count = std::max<uint32_t>(m.count, 1);
      ++odp_failed_;
    } else {
      const uint64_t bytes = uint64_t(m.count) * 8;
      list = take_list(bytes);
      mem_.write(list, r.pages.data(), bytes);
      const uint64_t lines = (bytes + 63) / 64;
      Os::spend(lines * uint64_t(cost_.copy_line_ns) + os_.miss_ns(2 * bytes, 2 * lines));
      m.list = list;
    }
    return odp_load(j, m, list);
  }
}

// ODP_MAP sent and waited for (the lock held, let go while it runs); the region's pages it
// loaded are present.
int Driver::odp_load(const OdpJob& j, const abi::OdpMap& m, uint64_t list) {
  const uint32_t first = m.first - odp_.at(abi::stag_index(j.stag)).pbl_first;
  const uint64_t seq = odp_invalidations_;
  const int rc = command(m);
  if (list)
    odp_lists_.push_back({list, (uint64_t(m.count) * 8 + kPageSize - 1) & ~(kPageSize - 1)});
  if (rc == 0 && !m.flags) {
    odp_pages_mapped_ += m.count;
    // The region may have gone, or pages of it been unmapped, while the command ran (command()
    // lets the lock go): only then are they not known present.
    const auto now = odp_.find(abi::stag_index(j.stag));
    if (now != odp_.end() && now->second.stag == j.stag && odp_invalidations_ == seq)
      for (uint32_t i = 0; i < m.count; ++i) now->second.present[first + i] = true;
  }
  if (j.t0) {
    ++odp_faults_;
    odp_fault_ns_.sample(double(sc_core::sc_time_stamp().value() - j.t0) / 1000.0);
  }
  return rc ? rc : (m.flags ? EFAULT : 0);
}

// The MMU notifier (Os::page_out): the pages of p's on-demand regions in [va, va + len) become
// absent on the card (ODP_UNMAP, waited for) before the kernel takes them away.
void Driver::odp_invalidate(Process& p, uint64_t va, uint64_t len) {
  std::vector<abi::OdpUnmap> ranges;
  for (auto& [idx, mr] : odp_) {
    if (mr.proc != &p) continue;
    const uint64_t base = mr.va & ~(kPageSize - 1);
    const uint64_t lo = std::max(va, mr.va) & ~(kPageSize - 1);
    const uint64_t hi = (std::min(va + len, mr.va + mr.len) + kPageSize - 1) & ~(kPageSize - 1);
    if (hi <= lo) continue;
    const uint32_t first = uint32_t((lo - base) / kPageSize), n = uint32_t((hi - lo) / kPageSize);
    ranges.push_back({mr.pbl_first + first, n});
    for (uint32_t i = 0; i < n; ++i) mr.present[first + i] = false;
  }
  if (ranges.empty()) return;
  ++odp_invalidations_;
  ioctl_lock_.lock();
  for (const abi::OdpUnmap& u : ranges)
    if (command(u) == 0) odp_pages_unmapped_ += u.count;
  ioctl_lock_.unlock();
}

}  // namespace rnic::host
