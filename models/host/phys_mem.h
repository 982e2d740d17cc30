// Sparse host physical memory (DESIGN.md §3.1). 4 KiB pages materialise on first write; a page
// never written reads as zeros. Holes (device-reserved windows) are not memory: DMA reads there
// get an Unsupported Request or no completion at all (configured), DMA writes are dropped.
// A frame allocator hands out physical pages for page tables and buffers, skipping holes. The
// top kKernelReserveMib of memory (a quarter of a smaller memory) is the kernel's: frames for
// processes' pages and page tables never come from it, so the kernel's physically contiguous
// allocations (rings, page lists) find room however scattered the processes' pages are. A
// process's frames that reach the reserve wrap to the lowest free frame and fill the gaps its
// scattered pages left (docs/memory.md, "Physical memory").
//
// A frame may instead be backed by a page of the program's own memory (a plain buffer it
// registered: docs/verbs.md): its bytes are that page's, so the card's DMA and the program's
// loads and stores see the same bytes. When the program unmaps such a page (munmap, seen by
// the host model: process.cc defines munmap and forwards it to the kernel), the frame takes a copy
// of the page first and keeps it, as a kernel keeps a page a registration pinned; nothing then
// refers to the unmapped page. A heap chunk the program frees on such a page is kept instead (free,
// defined in process.cc, does not return it), so the heap never hands out memory the card may
// write; and free() must never unmap: main() keeps glibc's allocator from returning memory to
// the kernel (sc_main_entry.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/host/host_params.h"

namespace rnic::host {

constexpr uint64_t kPageSize = 4096;
// The kernel's reserve at the top of physical memory (at most a quarter of it): the OS, page
// lists and rings.
constexpr uint64_t kKernelReserveMib = 256;

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
  // Appends the bytes [addr, addr + len) to `out` (no zeroing of room first, as read would need).
  void append(uint64_t addr, uint64_t len, std::vector<uint8_t>& out) const;
  void write(uint64_t addr, const void* in, uint64_t len);
  uint64_t read64(uint64_t addr) const {
    uint64_t v;
    read(addr, &v, 8);
    return v;
  }
  void write64(uint64_t addr, uint64_t v) { write(addr, &v, 8); }
  uint64_t pages_materialised() const { return pages_.size(); }
  // The frame at frame_pa takes the program's page at real_page (page-aligned) as its bytes.
  void back(uint64_t frame_pa, uint8_t* real_page);
  // Frames backed by the program's memory now (not yet unmapped).
  uint64_t frames_backed() const { return backed_; }
  ~PhysMem();
  PhysMem(const PhysMem&) = delete;
  PhysMem& operator=(const PhysMem&) = delete;
  // Called for the program's munmap of [addr, addr + len), before the kernel's: every frame of
  // any PhysMem backed by a page in it takes a copy of the page.
  static void unmapping(uintptr_t addr, uint64_t len);
  // Whether any frame of any PhysMem is backed by the program's memory now; whether one is by a
  // page of [addr, addr + len).
  static bool any_backed();
  static bool backs(uintptr_t addr, uint64_t len);

  // Frame allocation for a process: the next free frame at or after `hint` (a physical page
  // number) below the kernel's reserve, skipping holes and used frames, wrapping to the lowest
  // free frame. Returns the frame's address; throws when none is left.
  uint64_t alloc_frame(uint64_t hint);
  // The first frame of the kernel's reserve (frames below it are for processes).
  uint64_t reserve_start() const { return user_end_; }
  // `pages` physically contiguous free frames (the first run at or after `hint`, wrapping),
  // taken together; the first one's address. Throws when no such run is left.
  uint64_t alloc_contiguous(uint64_t pages, uint64_t hint);
  // The frame goes back to the allocator; its bytes are dropped (a frame backed by the
  // program's memory is not freed: false).
  bool free_frame(uint64_t pa);
  uint64_t frames_used() const { return used_count_; }
  uint64_t next_frame() const { return next_; }

 private:
  uint8_t* page(uint64_t pfn);
  bool frame_free(uint64_t pfn) const;
  // The first free frame in [pfn, end), or `end`.
  uint64_t next_free(uint64_t pfn, uint64_t end) const;

  uint64_t size_;
  std::vector<Hole> holes_;
  bool hole_timeout_;
  struct Page {
    uint8_t* data = nullptr;  // the frame's bytes: `own`, or the program's page
    std::unique_ptr<uint8_t[]> own;
  };
  void detach(uint64_t pfn);
  std::unordered_map<uint64_t, Page> pages_;
  // The frames' bytes found last, direct-mapped by frame number: a CQ ring polled or a buffer
  // copied piece by piece finds its page without the table's lookup. An entry goes when its
  // frame's bytes move or go (back, detach, free_frame).
  struct Recent {
    uint64_t pfn = UINT64_MAX;
    uint8_t* data = nullptr;
  };
  static constexpr uint64_t kRecent = 16;
  mutable std::array<Recent, kRecent> recent_{};
  uint8_t* found(uint64_t pfn) const;  // the frame's bytes, nullptr if never written
  void forget(uint64_t pfn) {
    if (recent_[pfn % kRecent].pfn == pfn) recent_[pfn % kRecent] = Recent{};
  }
  uint64_t backed_ = 0;
  std::vector<uint64_t> used_;  // bitmap over frames
  uint64_t used_count_ = 0;
  uint64_t next_ = 1;  // frame 0 stays unused (a zero PTE means "not present")
  uint64_t user_end_;  // processes' frames are below it
};

}  // namespace rnic::host
