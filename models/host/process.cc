#include "models/host/process.h"

#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>
#include <systemc>
#include <tuple>
#include <vector>

namespace rnic::host {
void (*Process::on_release)(uintptr_t, uint64_t) = nullptr;

namespace {
// Live processes, for munmap (built on first use: munmap may run before static initialisation
// is over).
std::vector<Process*>& processes() {
  static auto* v = new std::vector<Process*>;
  return *v;
}
}  // namespace

Process::Process(PhysMem& mem, const HostConfig& cfg, uint64_t seed, int pid)
    : mem_(mem),
      cfg_(cfg),
      pid_(pid),
      rng_(seed * 0x9E3779B97F4A7C15ull + uint64_t(pid)),
      pt_(mem, mem.next_frame()) {
  processes().push_back(this);
}

Process::~Process() {
  auto& v = processes();
  v.erase(std::remove(v.begin(), v.end(), this), v.end());
}

void Process::unmapping(uintptr_t addr, uint64_t len) {
  if (len == 0) return;
  const uint64_t first = addr & ~uintptr_t(kPageSize - 1);
  // MMU notifiers first (on-demand regions' translations made absent on the card), from a
  // simulated thread only: they wait for the card.
  const sc_core::sc_process_handle me = sc_core::sc_get_current_process_handle();
  if (me.valid() && me.proc_kind() == sc_core::SC_THREAD_PROC_)
    for (Process* p : std::vector<Process*>(processes())) {
      if (!p->plain_pages_ || p->external_ || !p->unmap_notifier) continue;
      bool mine = false;
      for (uint64_t va = first; va < addr + len && !mine; va += kPageSize) {
        uint64_t pa, reads;
        mine = !p->model_va(va) && p->pt_.translate(va, &pa, &reads);
      }
      if (mine) p->unmap_notifier(first, addr + len - first);
    }
  PhysMem::unmapping(addr, len);
  for (Process* p : processes()) {
    if (!p->plain_pages_ || p->external_) continue;  // another OS process's addresses
    for (uint64_t va = first; va < addr + len; va += kPageSize)
      if (!p->model_va(va) && p->pt_.unmap(va)) --p->plain_pages_;
  }
}

uint64_t Process::rand() {  // splitmix64: the same sequence on every platform
  uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The next frame of a buffer: after the last one, or after a gap (always for a buffer's first
// page; with probability malloc_scatter for the others).
uint64_t Process::next_frame_for(bool first) {
  uint64_t hint = last_frame_ ? last_frame_ / kPageSize + 1 : mem_.next_frame();
  const double u = double(rand() >> 11) / double(1ull << 53);
  if (first || u < cfg_.malloc_scatter) hint += 1 + rand() % uint64_t(cfg_.malloc_max_gap);
  last_frame_ = mem_.alloc_frame(hint);
  return last_frame_;
}

uint64_t Process::malloc(uint64_t bytes) {
  const uint64_t pages = std::max<uint64_t>(1, (bytes + kPageSize - 1) / kPageSize);
  const uint64_t va = next_va_;
  for (uint64_t i = 0; i < pages; ++i) pt_.map(va + i * kPageSize, next_frame_for(i == 0));
  next_va_ += (pages + 1) * kPageSize;
  return va;
}

uint64_t Process::malloc_untouched(uint64_t bytes) {
  const uint64_t va = malloc(bytes);
  const uint64_t pages = std::max<uint64_t>(1, (bytes + kPageSize - 1) / kPageSize);
  for (uint64_t i = 0; i < pages; ++i) untouched_.insert(va + i * kPageSize);
  return va;
}

void Process::free(uint64_t va, uint64_t bytes) {
  const uint64_t pages = std::max<uint64_t>(1, (bytes + kPageSize - 1) / kPageSize);
  for (uint64_t i = 0; i < pages; ++i) {
    const uint64_t pg = (va & ~(kPageSize - 1)) + i * kPageSize;
    uint64_t pa = 0, reads = 0;
    if (!model_va(pg) || !pt_.translate(pg, &pa, &reads)) continue;
    pt_.unmap(pg);
    mem_.free_frame(pa);
    pinned_.erase(pg);
    untouched_.erase(pg);
    paged_out_.erase(pg);
  }
}

namespace {
// Whether [va, va + len) is mapped in this process (the simulator's), and writable if asked:
// from /proc/self/maps, read once per registration.
bool real_range_ok(uint64_t va, uint64_t len, bool write) {
  std::ifstream f("/proc/self/maps");
  std::string line;
  uint64_t covered = va;
  const uint64_t end = va + len;
  std::vector<std::tuple<uint64_t, uint64_t, bool>> maps;
  while (std::getline(f, line)) {
    uint64_t lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s", &lo, &hi, perms) != 3) continue;
    maps.emplace_back(lo, hi, perms[0] == 'r' && (!write || perms[1] == 'w'));
  }
  std::sort(maps.begin(), maps.end());
  for (const auto& [lo, hi, ok] : maps) {
    if (hi <= covered || lo > covered) continue;
    if (!ok) return false;
    covered = hi;
    if (covered >= end) return true;
  }
  return covered >= end;
}
}  // namespace

int Process::map_plain(uint64_t va, uint64_t len, bool write) {
  if (len == 0) len = 1;
  const uint64_t first = va & ~(kPageSize - 1), last = (va + len - 1) & ~(kPageSize - 1);
  if (va + len < va) return EFAULT;
  bool all_mapped = true;
  for (uint64_t p = first; p <= last && all_mapped; p += kPageSize) {
    uint64_t pa, reads;
    if (!pt_.translate(p, &pa, &reads)) all_mapped = false;
  }
  if (all_mapped) return 0;
  // Unmapped pages in the model's own range (past a malloc buffer's end, its guard page) are
  // not the program's memory.
  if (last >= kSimVaBase && first < next_va_ + kPageSize) return EFAULT;
  if (!real_range_ok(first, last + kPageSize - first, write)) return EFAULT;
  bool first_page = true;
  for (uint64_t p = first; p <= last; p += kPageSize) {
    uint64_t pa, reads;
    if (pt_.translate(p, &pa, &reads)) continue;
    const uint64_t frame = next_frame_for(first_page);
    first_page = false;
    pt_.map(p, frame);
    mem_.back(frame, reinterpret_cast<uint8_t*>(p));
    ++plain_pages_;
  }
  return 0;
}

int Process::map_external(uint64_t va, uint64_t len, uint8_t* host) {
  if (va % kPageSize || len % kPageSize || len == 0 || va + len < va) return EFAULT;
  if (va + len > kSimVaBase && va < next_va_ + kPageSize) return EFAULT;
  external_ = true;
  bool first_page = true;
  for (uint64_t p = va; p < va + len; p += kPageSize) {
    uint64_t pa, reads;
    if (pt_.translate(p, &pa, &reads)) {  // shared again (the process remapped it): new bytes
      mem_.back(pa & ~(kPageSize - 1), host + (p - va));
      continue;
    }
    const uint64_t frame = next_frame_for(first_page);
    first_page = false;
    pt_.map(p, frame);
    mem_.back(frame, host + (p - va));
    ++plain_pages_;
  }
  return 0;
}

template <class Fn>
bool Process::for_each_chunk(uint64_t va, uint64_t len, Fn fn) {
  uint64_t done = 0;
  while (done < len) {
    uint64_t pa, reads = 0;
    if (!pt_.translate(va + done, &pa, &reads)) return false;
    const uint64_t n = std::min(len - done, kPageSize - (va + done) % kPageSize);
    fn(pa, done, n);
    done += n;
  }
  return true;
}

bool Process::write_virt(uint64_t va, const void* data, uint64_t len) {
  for (uint64_t pg = va & ~(kPageSize - 1);
       (!untouched_.empty() || !paged_out_.empty()) && pg < va + len; pg += kPageSize)
    fault_in(pg);  // the program's own access: resident, at no simulated cost
  auto* p = static_cast<const uint8_t*>(data);
  return for_each_chunk(va, len,
                        [&](uint64_t pa, uint64_t off, uint64_t n) { mem_.write(pa, p + off, n); });
}

bool Process::read_virt(uint64_t va, void* out, uint64_t len) {
  for (uint64_t pg = va & ~(kPageSize - 1);
       (!untouched_.empty() || !paged_out_.empty()) && pg < va + len; pg += kPageSize)
    fault_in(pg);  // the program's own access: resident, at no simulated cost
  auto* p = static_cast<uint8_t*>(out);
  return for_each_chunk(va, len,
                        [&](uint64_t pa, uint64_t off, uint64_t n) { mem_.read(pa, p + off, n); });
}

}  // namespace rnic::host

// The program's munmap: the pages leave the simulated processes and their frames keep a copy
// (Process::unmapping), then the kernel unmaps them. Calls from the simulator's own code and
// the programs linked into it come here; glibc's internal unmapping does not (main() keeps its
// allocator from unmapping: sc_main_entry.h).
extern "C" int munmap(void* addr, size_t len) {
  if (rnic::host::Process::on_release)
    rnic::host::Process::on_release(reinterpret_cast<uintptr_t>(addr), len);
  rnic::host::Process::unmapping(reinterpret_cast<uintptr_t>(addr), len);
  return int(syscall(SYS_munmap, addr, len));
}

// The program's free (and operator delete, which calls it): the simulator's heap is the
// program's, so a freed buffer would be handed out again, to the simulator's own objects too,
// while the card may still write it. A chunk on a page that backs a frame is therefore kept
// (never returned to the heap), as a kernel keeps the pages a registration pinned: at most the
// registered buffers' pages stay allocated (docs/verbs.md).
extern "C" void __libc_free(void*);
extern "C" void free(void* p) {
  if (p && rnic::host::Process::on_release)
    rnic::host::Process::on_release(reinterpret_cast<uintptr_t>(p), malloc_usable_size(p));
  if (p && rnic::host::PhysMem::any_backed() &&
      rnic::host::PhysMem::backs(reinterpret_cast<uintptr_t>(p), malloc_usable_size(p)))
    return;
  __libc_free(p);
}
