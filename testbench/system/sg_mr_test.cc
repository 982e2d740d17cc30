// Scatter-gather handles (rnic_reg_sg_mr, docs/memory.md): discrete regions of one process
// registered as one STag whose tagged offsets run over their concatenation in the order given.
// A remote RDMA Write at offset 0 lands slice by slice in the regions and nowhere else (guard
// bytes everywhere around them); a remote RDMA Read across two region boundaries returns the
// concatenation; a Write past the handle's end is refused with the remote access error and
// changes nothing; bad lists are refused with EINVAL. A kernel consumer's handle (kernel memory
// locked by Driver::kernel_lock_sg) serves remote Reads and Writes the same way.
#include <gtest/gtest.h>

#include "models/host/verbs/verbs_internal.h"
#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::kGuard;
using testbench::mem_fill;
using testbench::pattern;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::Oob;
using traffic::PeerInfo;

struct Region {
  size_t off, len;
};
// In the order registered: tagged offsets 0-4999 are the second, 5000-5999 the first, 6000-8999
// the third region of the buffer.
const Region kRegions[] = {{8192 + 7, 5000}, {100, 1000}, {20000, 3000}};
constexpr size_t kTotal = 9000;

std::vector<uint8_t> bytes_at(const void* base, size_t off, size_t len) {
  return testbench::mem_read(static_cast<const uint8_t*>(base) + off, len);
}

TEST(SgHandle, RemoteWriteAndReadRunAcrossTheRegions) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  const std::vector<uint8_t> data = pattern(kTotal, 7);
  Endpoint a, b;
  cl.run({[&] {
            a.open({});
            mem_fill(a.buf, 1 << 20);
            oob.put(1, a.info());
            a.connect(oob.get(0));
            const PeerInfo sg = oob.get(0);  // the handle
            ASSERT_EQ(rnic_mem_write(a.buf, data.data(), kTotal), 0);
            ibv_sge sge{a.addr(), uint32_t(kTotal), a.mr->lkey};
            ibv_send_wr* bad = nullptr;
            ibv_send_wr w = testbench::rdma_write_wr(1, &sge, 1, 0, sg.rkey, true);
            ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
            ibv_send_wr fence{};  // completes at the responder once the Write is placed
            fence.wr_id = 2;
            fence.opcode = IBV_WR_SEND;
            fence.send_flags = IBV_SEND_SIGNALED;
            ASSERT_EQ(ibv_post_send(a.qps[0], &fence, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
            // Read 3,000 B from offset 4,000: the end of one region, all of the next, the start
            // of the third.
            ibv_sge rs{a.addr() + 65536, 3000, a.mr->lkey};
            ibv_send_wr r = testbench::rdma_write_wr(3, &rs, 1, 4000, sg.rkey, true);
            r.opcode = IBV_WR_RDMA_READ;
            ASSERT_EQ(ibv_post_send(a.qps[0], &r, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
            EXPECT_EQ(bytes_at(a.buf, 65536, 3000),
                      std::vector<uint8_t>(data.begin() + 4000, data.begin() + 7000));
            oob.put(1, {});  // b checks its buffer
            oob.get(0);
            // 1,000 B at offset 8,500 run past the handle's 9,000: refused, nothing written.
            ibv_send_wr past = testbench::rdma_write_wr(4, &sge, 1, 8500, sg.rkey, true);
            sge.length = 1000;
            ASSERT_EQ(ibv_post_send(a.qps[0], &past, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_REM_ACCESS_ERR);
            oob.put(1, {});
          },
          [&] {
            b.open({});
            mem_fill(b.buf, 1 << 20);
            oob.put(0, b.info());
            b.connect(oob.get(1));
            ibv_recv_wr fence{2, nullptr, nullptr, 0};
            ibv_recv_wr* bad_recv = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &fence, &bad_recv), 0);
            std::vector<ibv_sge> sges;
            for (const Region& g : kRegions) sges.push_back({b.addr() + g.off, uint32_t(g.len), 0});
            const int access =
                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
            ibv_mr* sg = rnic_reg_sg_mr(b.pd, sges.data(), int(sges.size()), access);
            ASSERT_NE(sg, nullptr);
            EXPECT_EQ(sg->length, kTotal);
            EXPECT_EQ(sg->addr, nullptr);
            PeerInfo info;
            info.rkey = sg->rkey;
            info.len = kTotal;
            oob.put(0, info);
            EXPECT_EQ(wait_one(b.cq).status, IBV_WC_SUCCESS);  // the Send after the Write
            auto check = [&] {
              const std::vector<uint8_t> all = bytes_at(b.buf, 0, 32768);
              std::vector<uint8_t> want(all.size(), kGuard);
              size_t to = 0;
              for (const Region& g : kRegions) {
                std::copy(data.begin() + to, data.begin() + to + g.len, want.begin() + g.off);
                to += g.len;
              }
              for (size_t i = 0; i < all.size(); ++i)
                ASSERT_EQ(all[i], want[i]) << "byte " << i << " of the responder's buffer";
            };
            oob.get(1);
            check();
            oob.put(0, {});
            oob.get(1);
            check();  // the refused Write changed nothing
            EXPECT_EQ(ibv_dereg_mr(sg), 0);
          }});
}

TEST(SgHandle, BadListsAreRefused) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Endpoint a;
  cl.run({[&] {
    a.open({});
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    const uint64_t base = a.addr();
    auto refused = [&](std::vector<ibv_sge> s, const char* what) {
      errno = 0;
      EXPECT_EQ(rnic_reg_sg_mr(a.pd, s.data(), int(s.size()), access), nullptr) << what;
      EXPECT_EQ(errno, EINVAL) << what;
    };
    refused({}, "no region");
    refused({{base, 100, 0}, {base + 4096, 0, 0}}, "a 0-byte region");
    refused({{base, 1000, 0}, {base + 500, 1000, 0}}, "overlapping regions");
    refused({{base + 500, 1000, 0}, {base, 501, 0}}, "overlapping regions, given out of order");
    refused(std::vector<ibv_sge>(257, ibv_sge{base, 1, 0}), "257 regions");
    std::vector<ibv_sge> many;
    for (uint64_t i = 0; i < 256; ++i) many.push_back({base + 2 * i, 1, 0});
    ibv_mr* mr = rnic_reg_sg_mr(a.pd, many.data(), int(many.size()), access);
    ASSERT_NE(mr, nullptr) << "256 one-byte regions";
    EXPECT_EQ(mr->length, 256u);
    EXPECT_EQ(rnic::host::mr_pbl_count(mr), 256u);  // not contiguous: one extent each
    EXPECT_EQ(ibv_dereg_mr(mr), 0);
  }});
}

// Kernel memory locked as one handle by node1's kernel (three kmalloc'd buffers, one region
// not at its buffer's start): node0 reads the concatenation and writes across a boundary;
// bad lists and addresses outside the direct map are refused; the handle unlocks.
TEST(KernelSgHandle, RemoteReadAndWriteReachKernelMemory) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  host::Driver& drv = cl.nodes[1]->driver;
  host::PhysMem& mem = cl.nodes[1]->host.mem;
  Oob oob;
  Endpoint a, b;
  const std::vector<uint8_t> data = pattern(7096, 3), patch = pattern(1500, 9);
  struct KRegion {
    uint64_t kva, len;
  };
  std::vector<KRegion> regions;
  cl.run({[&] {
            a.open({});
            mem_fill(a.buf, 1 << 20);
            oob.put(1, a.info());
            a.connect(oob.get(0));
            const PeerInfo h = oob.get(0);
            ASSERT_NE(h.rkey, 0u);
            ibv_send_wr* bad = nullptr;
            ibv_sge rs{a.addr(), uint32_t(data.size()), a.mr->lkey};
            ibv_send_wr r = testbench::rdma_write_wr(1, &rs, 1, 0, h.rkey, true);
            r.opcode = IBV_WR_RDMA_READ;
            ASSERT_EQ(ibv_post_send(a.qps[0], &r, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
            EXPECT_EQ(bytes_at(a.buf, 0, data.size()), data);
            // 1,500 B at offset 3,500: the first region's last 596 B, the second's first 904.
            ASSERT_EQ(
                rnic_mem_write(static_cast<uint8_t*>(a.buf) + 65536, patch.data(), patch.size()),
                0);
            ibv_sge ws{a.addr() + 65536, uint32_t(patch.size()), a.mr->lkey};
            ibv_send_wr w = testbench::rdma_write_wr(2, &ws, 1, 3500, h.rkey, true);
            ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
            ibv_send_wr fence{};  // completes at the responder once the Write is placed
            fence.wr_id = 3;
            fence.opcode = IBV_WR_SEND;
            fence.send_flags = IBV_SEND_SIGNALED;
            ASSERT_EQ(ibv_post_send(a.qps[0], &fence, &bad), 0);
            EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
          },
          [&] {
            b.open({});
            oob.put(0, b.info());
            b.connect(oob.get(1));
            ibv_recv_wr fence{3, nullptr, nullptr, 0};
            ibv_recv_wr* bad_recv = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &fence, &bad_recv), 0);
            const uint64_t k0 = drv.kmalloc(4096), k1 = drv.kmalloc(8192), k2 = drv.kmalloc(4096);
            regions = {{k0, 4096}, {k2 + 100, 1000}, {k1 + 4096, 2000}};
            size_t at = 0;
            for (const KRegion& g : regions) {
              mem.write(g.kva - host::Driver::kDirectMap, data.data() + at, g.len);
              at += g.len;
            }
            const uint32_t access =
                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
            const uint32_t pd = b.pd->handle;
            host::Driver::MrInfo mr;
            EXPECT_EQ(drv.kernel_lock_sg(pd, {}, access, &mr), EINVAL);
            EXPECT_EQ(drv.kernel_lock_sg(pd, {{k0, 100}, {k0 + 50, 100}}, access, &mr), EINVAL);
            EXPECT_EQ(drv.kernel_lock_sg(pd, {{b.addr(), 100}}, access, &mr), EFAULT)
                << "a process's address is not kernel memory";
            EXPECT_EQ(drv.kernel_lock_sg(pd, {{host::Driver::kernel_va(mem.size() - 100), 200}},
                                         access, &mr),
                      EFAULT)
                << "past the top of memory";
            EXPECT_EQ(drv.kernel_reg_mem(pd, k0, 0, access, &mr), EINVAL);
            std::vector<std::pair<uint64_t, uint64_t>> list;
            for (const KRegion& g : regions) list.push_back({g.kva, g.len});
            ASSERT_EQ(drv.kernel_lock_sg(pd, list, access, &mr), 0);
            PeerInfo info;
            info.rkey = mr.lkey;
            info.len = data.size();
            oob.put(0, info);
            EXPECT_EQ(wait_one(b.cq).status, IBV_WC_SUCCESS);  // the Send after the Write
            std::vector<uint8_t> want = data;
            std::copy(patch.begin(), patch.end(), want.begin() + 3500);
            std::vector<uint8_t> got;
            for (const KRegion& g : regions) {
              std::vector<uint8_t> part(g.len);
              mem.read(g.kva - host::Driver::kDirectMap, part.data(), g.len);
              got.insert(got.end(), part.begin(), part.end());
            }
            EXPECT_EQ(got, want);
            // The bytes around the second region stay as they were (zero).
            uint8_t around[2] = {1, 1};
            mem.read(k2 + 99 - host::Driver::kDirectMap, &around[0], 1);
            mem.read(k2 + 1100 - host::Driver::kDirectMap, &around[1], 1);
            EXPECT_EQ(around[0], 0);
            EXPECT_EQ(around[1], 0);
            EXPECT_EQ(drv.kernel_dereg(mr), 0);
          }});
}

}  // namespace
}  // namespace rnic
