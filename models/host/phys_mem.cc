#include "models/host/phys_mem.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <stdexcept>

namespace rnic::host {

namespace {
// Every frame backed by the program's memory, by the real page: (PhysMem, frame number). Built
// on first use (munmap may run before static initialisation is over); `g_backed` is 0 until a
// frame is backed, so munmap costs nothing more until then.
std::atomic<uint64_t> g_backed{0};
std::multimap<uintptr_t, std::pair<PhysMem*, uint64_t>>& backed_pages() {
  static auto* m = new std::multimap<uintptr_t, std::pair<PhysMem*, uint64_t>>;
  return *m;
}
}  // namespace

PhysMem::~PhysMem() {
  if (!backed_) return;
  auto& m = backed_pages();
  for (auto it = m.begin(); it != m.end();)
    it = it->second.first == this ? m.erase(it) : std::next(it);
  g_backed -= backed_;
}

void PhysMem::back(uint64_t frame_pa, uint8_t* real_page) {
  forget(frame_pa / kPageSize);
  Page& p = pages_[frame_pa / kPageSize];
  p.own.reset();
  p.data = real_page;
  backed_pages().emplace(reinterpret_cast<uintptr_t>(real_page),
                         std::make_pair(this, frame_pa / kPageSize));
  ++backed_;
  ++g_backed;
}

void PhysMem::detach(uint64_t pfn) {
  forget(pfn);
  Page& p = pages_[pfn];
  p.own.reset(new uint8_t[kPageSize]);
  std::memcpy(p.own.get(), p.data, kPageSize);
  p.data = p.own.get();
  --backed_;
  --g_backed;
}

bool PhysMem::any_backed() { return g_backed.load(std::memory_order_relaxed) != 0; }

bool PhysMem::backs(uintptr_t addr, uint64_t len) {
  if (!any_backed() || len == 0) return false;
  const auto& m = backed_pages();
  auto it = m.lower_bound(addr & ~uintptr_t(kPageSize - 1));
  return it != m.end() && it->first < addr + len;
}

void PhysMem::unmapping(uintptr_t addr, uint64_t len) {
  if (g_backed.load(std::memory_order_relaxed) == 0 || len == 0) return;
  auto& m = backed_pages();
  const uintptr_t first = addr & ~uintptr_t(kPageSize - 1);
  for (auto it = m.lower_bound(first); it != m.end() && it->first < addr + len;) {
    it->second.first->detach(it->second.second);
    it = m.erase(it);
  }
}

PhysMem::PhysMem(uint64_t size, std::vector<Hole> holes, bool hole_reads_time_out)
    : size_(size), holes_(std::move(holes)), hole_timeout_(hole_reads_time_out) {
  const uint64_t frames = size_ / kPageSize;
  used_.assign((frames + 63) / 64, 0);
  user_end_ = frames - std::min((kKernelReserveMib << 20) / kPageSize, frames / 4);
}

PhysMem::PhysMem(const HostConfig& c)
    : PhysMem(uint64_t(c.mem_mib) << 20,
              c.hole_mib > 0
                  ? std::vector<Hole>{{uint64_t(c.hole_base_mib) << 20, uint64_t(c.hole_mib) << 20}}
                  : std::vector<Hole>{},
              c.hole_behaviour == "timeout") {}

Region PhysMem::region(uint64_t addr, uint64_t len) const {
  if (len == 0) len = 1;
  if (addr >= size_ || len > size_ - addr) return Region::kOutside;
  for (const Hole& h : holes_)
    if (addr < h.base + h.size && addr + len > h.base) return Region::kHole;
  return Region::kMemory;
}

uint8_t* PhysMem::found(uint64_t pfn) const {
  Recent& r = recent_[pfn % kRecent];
  if (r.pfn == pfn) return r.data;
  const auto it = pages_.find(pfn);
  if (it == pages_.end() || !it->second.data) return nullptr;
  r = {pfn, it->second.data};
  return r.data;
}

uint8_t* PhysMem::page(uint64_t pfn) {
  if (uint8_t* d = found(pfn)) return d;
  Page& p = pages_[pfn];
  if (!p.data) {
    p.own.reset(new uint8_t[kPageSize]);
    std::memset(p.own.get(), 0, kPageSize);
    p.data = p.own.get();
  }
  recent_[pfn % kRecent] = {pfn, p.data};
  return p.data;
}

void PhysMem::read(uint64_t addr, void* out, uint64_t len) const {
  auto* o = static_cast<uint8_t*>(out);
  while (len) {
    const uint64_t off = addr % kPageSize, n = std::min(len, kPageSize - off);
    const uint8_t* d = found(addr / kPageSize);
    if (!d)
      std::memset(o, 0, n);
    else
      std::memcpy(o, d + off, n);
    o += n;
    addr += n;
    len -= n;
  }
}

void PhysMem::append(uint64_t addr, uint64_t len, std::vector<uint8_t>& out) const {
  while (len) {
    const uint64_t off = addr % kPageSize, n = std::min(len, kPageSize - off);
    const uint8_t* d = found(addr / kPageSize);
    if (!d)
      out.insert(out.end(), n, uint8_t(0));
    else
      out.insert(out.end(), d + off, d + off + n);
    addr += n;
    len -= n;
  }
}

void PhysMem::write(uint64_t addr, const void* in, uint64_t len) {
  auto* i = static_cast<const uint8_t*>(in);
  while (len) {
    const uint64_t off = addr % kPageSize, n = std::min(len, kPageSize - off);
    std::memcpy(page(addr / kPageSize) + off, i, n);
    i += n;
    addr += n;
    len -= n;
  }
}

bool PhysMem::frame_free(uint64_t pfn) const {
  if (pfn == 0 || pfn >= size_ / kPageSize) return false;
  if ((used_[pfn / 64] >> (pfn % 64)) & 1) return false;
  return region(pfn * kPageSize, kPageSize) == Region::kMemory;
}

bool PhysMem::free_frame(uint64_t pa) {
  const uint64_t pfn = pa / kPageSize;
  if (pfn == 0 || pfn >= size_ / kPageSize || !((used_[pfn / 64] >> (pfn % 64)) & 1)) return false;
  const auto it = pages_.find(pfn);
  if (it != pages_.end() && !it->second.own) return false;  // the program's page
  if (it != pages_.end()) {
    forget(pfn);
    pages_.erase(it);
  }
  used_[pfn / 64] &= ~(1ull << (pfn % 64));
  --used_count_;
  return true;
}

uint64_t PhysMem::next_free(uint64_t pfn, uint64_t end) const {
  pfn = std::max<uint64_t>(pfn, 1);
  while (pfn < end) {
    // The next clear bit of the bitmap, a word at a time.
    uint64_t word = ~used_[pfn / 64] & (~0ull << (pfn % 64));
    while (!word && (pfn = (pfn / 64 + 1) * 64) < end) word = ~used_[pfn / 64];
    if (pfn >= end) break;
    pfn = pfn / 64 * 64 + uint64_t(__builtin_ctzll(word));
    if (pfn >= end) break;
    const Hole* in = nullptr;
    for (const Hole& h : holes_)
      if (pfn * kPageSize < h.base + h.size && (pfn + 1) * kPageSize > h.base) in = &h;
    if (!in) return pfn;
    pfn = (in->base + in->size + kPageSize - 1) / kPageSize;
  }
  return end;
}

uint64_t PhysMem::alloc_frame(uint64_t hint) {
  uint64_t pfn = hint < user_end_ ? next_free(hint, user_end_) : user_end_;
  const uint64_t wrap_end = std::min(hint, user_end_);
  if (pfn >= user_end_ && (pfn = next_free(1, wrap_end)) >= wrap_end)
    throw std::runtime_error(fmt::format(
        "host physical memory exhausted: all {} MiB below the kernel's reserve are in use "
        "(raise host.mem_mib)",
        (user_end_ * kPageSize) >> 20));
  used_[pfn / 64] |= 1ull << (pfn % 64);
  ++used_count_;
  next_ = pfn + 1;
  return pfn * kPageSize;
}

uint64_t PhysMem::alloc_contiguous(uint64_t pages, uint64_t hint) {
  const uint64_t frames = size_ / kPageSize;
  uint64_t run = 0;
  for (uint64_t k = 0; k < 2 * frames && pages <= frames; ++k) {
    const uint64_t pfn = (hint + k) % frames;
    if (pfn == 0) run = 0;  // a run does not wrap around the end of memory
    run = frame_free(pfn) ? run + 1 : 0;
    if (run < pages) continue;
    const uint64_t first = pfn + 1 - pages;
    for (uint64_t f = first; f <= pfn; ++f) used_[f / 64] |= 1ull << (f % 64);
    used_count_ += pages;
    next_ = pfn + 1;
    return first * kPageSize;
  }
  throw std::runtime_error(fmt::format(
      "host physical memory exhausted: no {} contiguous free pages left in {} MiB (raise "
      "host.mem_mib)",
      pages, size_ >> 20));
}

}  // namespace rnic::host
