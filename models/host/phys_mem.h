// Sparse host physical memory (DESIGN.md §3.1). 4 KiB pages materialise on first write; a page
// never written reads as zeros. Holes (device-reserved windows) are not memory: DMA reads there
// get an Unsupported Request or no completion at all (configured), DMA writes are dropped.
// A frame allocator hands out physical pages for page tables and buffers, skipping holes.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/host/host_params.h"

namespace rnic::host {

constexpr uint64_t kPageSize = 4096;

enum class Region { kMemory, kHole, kOutside };

class PhysMem {
 public:
  struct Hole {
    uint64_t base, size;
  };
  PhysMem(uint64_t size, std::vector<Hole> holes, bool hole_reads_time_out);
  explicit PhysMem(const HostConfig& c);

  uint64_t size() const { return size_; }
  Region region(uint64_t addr, uint64_t len) const;
  bool hole_reads_time_out() const { return hole_timeout_; }

  void read(uint64_t addr, void* out, uint64_t len) const;
  void write(uint64_t addr, const void* in, uint64_t len);
  uint64_t read64(uint64_t addr) const {
    uint64_t v;
    read(addr, &v, 8);
    return v;
  }
  void write64(uint64_t addr, uint64_t v) { write(addr, &v, 8); }
  uint64_t pages_materialised() const { return pages_.size(); }

  // Frame allocation: next free frame at or after `hint` (a physical page number), skipping
  // holes and used frames. Returns the frame's address.
  uint64_t alloc_frame(uint64_t hint);
  // `pages` physically contiguous free frames (the first run at or after `hint`, wrapping),
  // taken together; the first one's address. Throws when no such run is left.
  uint64_t alloc_contiguous(uint64_t pages, uint64_t hint);
  uint64_t frames_used() const { return used_count_; }
  uint64_t next_frame() const { return next_; }

 private:
  uint8_t* page(uint64_t pfn);
  bool frame_free(uint64_t pfn) const;

  uint64_t size_;
  std::vector<Hole> holes_;
  bool hole_timeout_;
  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
  std::vector<uint64_t> used_;  // bitmap over frames
  uint64_t used_count_ = 0;
  uint64_t next_ = 1;  // frame 0 stays unused (a zero PTE means "not present")
};

}  // namespace rnic::host
