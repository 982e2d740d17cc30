#include "models/host/process.h"

#include <algorithm>

namespace rnic::host {

Process::Process(PhysMem& mem, const HostConfig& cfg, uint64_t seed, int pid)
    : mem_(mem),
      cfg_(cfg),
      pid_(pid),
      rng_(seed * 0x9E3779B97F4A7C15ull + uint64_t(pid)),
      pt_(mem, mem.next_frame()) {}

uint64_t Process::rand() {  // splitmix64: the same sequence on every platform
  uint64_t z = (rng_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t Process::malloc(uint64_t bytes) {
  const uint64_t pages = std::max<uint64_t>(1, (bytes + kPageSize - 1) / kPageSize);
  const uint64_t va = next_va_;
  for (uint64_t i = 0; i < pages; ++i) {
    uint64_t hint = last_frame_ ? last_frame_ / kPageSize + 1 : mem_.next_frame();
    const double u = double(rand() >> 11) / double(1ull << 53);
    if (i == 0 || u < cfg_.malloc_scatter) hint += 1 + rand() % uint64_t(cfg_.malloc_max_gap);
    last_frame_ = mem_.alloc_frame(hint);
    pt_.map(va + i * kPageSize, last_frame_);
  }
  next_va_ += (pages + 1) * kPageSize;
  return va;
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
  auto* p = static_cast<const uint8_t*>(data);
  return for_each_chunk(va, len,
                        [&](uint64_t pa, uint64_t off, uint64_t n) { mem_.write(pa, p + off, n); });
}

bool Process::read_virt(uint64_t va, void* out, uint64_t len) {
  auto* p = static_cast<uint8_t*>(out);
  return for_each_chunk(va, len,
                        [&](uint64_t pa, uint64_t off, uint64_t n) { mem_.read(pa, p + off, n); });
}

}  // namespace rnic::host
