// Host model: physical memory and holes, page tables in simulated memory, malloc scatter, and
// the OS cost model of mlock and get_pbl.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "models/host/os.h"
#include "models/host/page_table.h"
#include "models/host/process.h"
#include "sim/host_card.h"

namespace rnic::host {
namespace {

// Entries a kernel walker must read for [va, va+len): one per distinct PML4E, PDPTE and PDE
// covering the range, plus one PTE per page. Counted from the address bits, not from the walker.
uint64_t expected_walk_reads(uint64_t va, uint64_t len) {
  std::set<uint64_t> l4, l3, l2;
  uint64_t pages = 0;
  for (uint64_t p = va & ~(kPageSize - 1); p < va + len; p += kPageSize, ++pages) {
    l4.insert(p >> 39);
    l3.insert(p >> 30);
    l2.insert(p >> 21);
  }
  return l4.size() + l3.size() + l2.size() + pages;
}

TEST(PhysMem, SparseReadsZeroAndHolesAreNotMemory) {
  PhysMem m(64ull << 20, {{32ull << 20, 8ull << 20}}, false);
  uint64_t v = 0xdead;
  m.read(12345, &v, 8);
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(m.pages_materialised(), 0u);
  m.write64(4096 * 7 + 8, 0x1122334455667788ull);
  EXPECT_EQ(m.read64(4096 * 7 + 8), 0x1122334455667788ull);
  EXPECT_EQ(m.pages_materialised(), 1u);
  EXPECT_EQ(m.region(32ull << 20, 4), Region::kHole);
  EXPECT_EQ(m.region((32ull << 20) - 2, 4), Region::kHole);  // straddles the hole's start
  EXPECT_EQ(m.region(64ull << 20, 1), Region::kOutside);
  EXPECT_EQ(m.region(0, 64ull << 20), Region::kHole);
  // Frames never come from the hole.
  for (int i = 0; i < 4000; ++i) {
    const uint64_t f = m.alloc_frame((31ull << 20) / kPageSize);
    EXPECT_EQ(m.region(f, kPageSize), Region::kMemory);
  }
}

// Reads and writes find a frame's bytes where they are now, after the frame was read through:
// a frame backed by a program's page, then unmapped (a copy, whatever the page holds later); a
// frame freed (zeros); frames that share a place among the recent ones.
TEST(PhysMem, AFramesBytesAreWhereTheyAreNowAfterBackingUnmappingAndFreeing) {
  PhysMem m(64ull << 20, {}, false);
  alignas(4096) static uint8_t program_page[4096];
  std::memset(program_page, 0xA1, sizeof program_page);
  const uint64_t f = m.alloc_frame(100);
  m.write64(f, 7);  // the frame's own bytes, read through
  EXPECT_EQ(m.read64(f), 7u);
  m.back(f, program_page);
  EXPECT_EQ(m.read64(f), 0xA1A1A1A1A1A1A1A1ull) << "the program's page now";
  PhysMem::unmapping(reinterpret_cast<uintptr_t>(program_page), sizeof program_page);
  std::memset(program_page, 0xB2, sizeof program_page);  // the program's memory, reused
  EXPECT_EQ(m.read64(f), 0xA1A1A1A1A1A1A1A1ull) << "the copy taken at the unmap";
  m.write64(f + 8, 9);
  EXPECT_EQ(program_page[8], 0xB2) << "a write goes to the copy";
  EXPECT_EQ(m.read64(f + 8), 9u);
  EXPECT_TRUE(m.free_frame(f));
  EXPECT_EQ(m.read64(f), 0u) << "a freed frame's bytes are dropped";
  // Frames 16 apart share a place among the recent ones: each keeps its own bytes.
  const uint64_t a = m.alloc_frame(2000), b = m.alloc_frame(2016);
  ASSERT_EQ((b - a) / kPageSize, 16u);
  m.write64(a, 1);
  m.write64(b, 2);
  EXPECT_EQ(m.read64(a), 1u);
  EXPECT_EQ(m.read64(b), 2u);
  EXPECT_EQ(m.read64(a), 1u);
}

TEST(PageTable, MapTranslateAndWalkReadsFollowTheStructure) {
  PhysMem m(256ull << 20, {}, false);
  PageTable pt(m, 1);
  // A range that crosses a 2 MiB (PDE) and a 1 GiB (PDPTE) boundary.
  const uint64_t va = (1ull << 30) - 3 * (2ull << 20) + 5 * kPageSize;
  const uint64_t len = 4 * (2ull << 20) + 300;
  std::vector<uint64_t> frames;
  for (uint64_t p = va; p < va + len; p += kPageSize) {
    frames.push_back(m.alloc_frame(1000 + 3 * frames.size()));
    pt.map(p, frames.back());
  }
  uint64_t reads = 0, pa = 0;
  ASSERT_TRUE(pt.translate(va + 17, &pa, &reads));
  EXPECT_EQ(pa, frames[0] + 17);
  EXPECT_EQ(reads, 4u);
  reads = 0;
  std::vector<uint64_t> seen;
  ASSERT_TRUE(pt.walk_range(va, len, &reads, [&](uint64_t, uint64_t f) { seen.push_back(f); }));
  EXPECT_EQ(seen, frames);
  EXPECT_EQ(reads, expected_walk_reads(va, len));
  // An unmapped page stops the walk.
  reads = 0;
  EXPECT_FALSE(
      pt.walk_range(va + len + 8 * kPageSize, kPageSize, &reads, [](uint64_t, uint64_t) {}));
}

TEST(Process, MallocScattersPagesAsConfigured) {
  HostConfig c;
  c.mem_mib = 1024;
  c.hole_mib = 0;
  for (double scatter : {0.0, 0.5, 1.0}) {
    c.malloc_scatter = scatter;
    PhysMem m(c);
    Process p(m, c, 1, 1);
    const uint64_t va = p.malloc(256 * kPageSize);
    uint64_t reads = 0, adjacent = 0, prev = 0;
    p.page_table().walk_range(va, 256 * kPageSize, &reads, [&](uint64_t v, uint64_t f) {
      if (v != va && f == prev + kPageSize) ++adjacent;
      prev = f;
    });
    if (scatter == 0.0) {
      EXPECT_EQ(adjacent, 255u);
    }
    if (scatter == 1.0) {
      EXPECT_EQ(adjacent, 0u);
    }
    if (scatter == 0.5) {
      EXPECT_GT(adjacent, 90u);
      EXPECT_LT(adjacent, 165u);
    }
    // Data written through the virtual address comes back.
    std::vector<uint8_t> d(3 * kPageSize + 11), back(d.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = uint8_t(i * 7);
    ASSERT_TRUE(p.write_virt(va + 100, d.data(), d.size()));
    ASSERT_TRUE(p.read_virt(va + 100, back.data(), back.size()));
    EXPECT_EQ(d, back);
  }
}

// Scattered pages leave gaps that later buffers fill: 12 GiB of buffers allocate on a 16 GiB
// host (1 GiB hole, the kernel's reserve aside), their pages still scattered, none in the
// hole or the reserve; what no longer fits is refused.
TEST(Process, BuffersFillTheGapsUpToTheHostsFreeMemory) {
  HostConfig c;  // 16 GiB, a 1 GiB hole, malloc_scatter 0.5, gaps up to 64 pages
  PhysMem m(c);
  Process p(m, c, 1, 1);
  constexpr uint64_t kGib = 1ull << 30, kPages = kGib / kPageSize;
  std::vector<bool> taken(m.size() / kPageSize);
  uint64_t twice = 0;
  for (int i = 0; i < 12; ++i) {
    const uint64_t va = p.malloc(kGib);
    uint64_t reads = 0, adjacent = 0, prev = 0, bad = 0;
    p.page_table().walk_range(va, kGib, &reads, [&](uint64_t v, uint64_t f) {
      if (v != va && f == prev + kPageSize) ++adjacent;
      if (m.region(f, kPageSize) != Region::kMemory || f / kPageSize >= m.reserve_start()) ++bad;
      if (taken[f / kPageSize]) ++twice;
      taken[f / kPageSize] = true;
      prev = f;
    });
    EXPECT_EQ(bad, 0u) << "buffer " << i;
    // About half the pages follow their predecessor (fewer once the gaps fill).
    EXPECT_LT(adjacent, kPages * 6 / 10) << "buffer " << i;
    EXPECT_GT(adjacent, kPages / 10) << "buffer " << i;
  }
  EXPECT_EQ(twice, 0u) << "frames given to two pages";
  EXPECT_EQ(m.reserve_start(), (16ull << 30) / kPageSize - (kKernelReserveMib << 20) / kPageSize);
  // 16 GiB - 1 GiB hole - 256 MiB reserve - 12 GiB leaves less than 3 GiB.
  try {
    p.malloc(3 * kGib);
    ADD_FAILURE() << "3 GiB more were allocated";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("host physical memory exhausted"), std::string::npos);
  }
  // The reserve is still there for the kernel's contiguous allocations.
  EXPECT_GE(m.alloc_contiguous(512, m.next_frame()) / kPageSize, m.reserve_start());
}

// The OS charges exactly its cost model: entry, dispatch, one walk step per entry read, one
// line per 8 page addresses, exit.
TEST(Os, GetPblAndMlockSpendTheirCosts) {
  SystemConfig cfg;
  StatRegistry stats;
  HostCard sys(cfg, stats);
  Process p(sys.mem, cfg.host, 1, 1);
  const uint64_t len = 300 * kPageSize;
  const uint64_t va = p.malloc(len);
  uint64_t mlock_ps = 0, pbl_ps = 0, mlock_reads = 0;
  Os::PblResult r;
  run_host_thread(sys, "t", [&] {
    uint64_t t0 = now_ps();
    EXPECT_EQ(sys.os.mlock(p, va, len, &mlock_reads), 300u);
    mlock_ps = now_ps() - t0;
    t0 = now_ps();
    r = sys.os.get_pbl(p, va, len);
    pbl_ps = now_ps() - t0;
  });
  const CostConfig& c = cfg.cost;
  const uint64_t reads = expected_walk_reads(va, len);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.pages.size(), 300u);
  EXPECT_EQ(r.walk_reads, reads);
  EXPECT_EQ(mlock_reads, reads);
  EXPECT_TRUE(p.pinned(va) && p.pinned(va + len - 1) && !p.pinned(va + len));
  EXPECT_EQ(pbl_ps, 1000 * uint64_t(c.syscall_entry_ns + c.ioctl_dispatch_ns +
                                    int64_t(reads) * c.walk_step_ns +
                                    (300 * 8 + 63) / 64 * c.copy_line_ns + c.syscall_exit_ns));
  EXPECT_EQ(mlock_ps, 1000 * uint64_t(c.syscall_entry_ns + int64_t(reads) * c.walk_step_ns +
                                      300 * c.mlock_page_ns + c.syscall_exit_ns));
}

}  // namespace
}  // namespace rnic::host
