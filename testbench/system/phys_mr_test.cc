// Physical regions (rnic_reg_phys_mr, docs/memory.md): a privileged thread registers a range of
// host physical memory. A remote Read returns what physical memory holds there and a remote
// Write changes it and nothing around it. Unprivileged callers and bad ranges are refused. A
// Read of a device-reserved hole that gives no completion (host.hole_behaviour timeout): the
// responder's DMA completion timeout fires and, by default, it sends nothing, counted; the
// Read behind it on the same QP waits behind it; the requester's Read Response timer ends the
// first with IBV_WC_RETRY_EXC_ERR and nothing lands in the requester's buffers. With
// core.read_dma_error terminate the responder answers with a Terminate instead.
#include <gtest/gtest.h>

#include <cerrno>

#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::counter;
using testbench::kGuard;
using testbench::mem_fill;
using testbench::pattern;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::open_connected;
using traffic::PeerInfo;

constexpr int kRemote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

class PhysRegion : public ::testing::Test {
 protected:
  SystemConfig cfg = preset_config("rnic-10g", "test");
  // The first byte above the device-reserved window (memory again).
  uint64_t hole_end() const {
    return (uint64_t(cfg.host.hole_base_mib) + uint64_t(cfg.host.hole_mib)) << 20;
  }
  // node0 (unprivileged) works on node1's physical memory: node1's privileged thread runs
  // `kernel` (which may write physical memory), registers [pa, pa + len) as a physical region
  // and hands it over; `client` runs on node0 with the region's PeerInfo.
  void run(Cluster& cl, uint64_t pa, uint64_t len, const EndpointConfig& ec,
           const std::function<void(Endpoint&, const PeerInfo&)>& client,
           const std::function<void()>& kernel = {}) {
    Oob oob;
    Endpoint a, b;
    cl.run({{0,
             [&] {
               a.open(ec);
               mem_fill(a.buf, a.cfg.buf_bytes);
               oob.put(1, a.info());
               a.connect(oob.get(0));
               client(a, oob.get(0));
               oob.put(1, {});
             }},
            {1,
             [&] {
               open_connected(b, 1, ec, oob);
               if (kernel) kernel();
               ibv_mr* mr = rnic_reg_phys_mr(b.pd, pa, len, kRemote);
               ASSERT_NE(mr, nullptr) << errno;
               EXPECT_EQ(reinterpret_cast<uint64_t>(mr->addr), pa);
               PeerInfo p = b.info();
               p.addr = pa;
               p.rkey = mr->rkey;
               oob.put(0, p);
               oob.get(1);
             },
             true}});
  }
};

ibv_send_wr read_wr(uint64_t id, ibv_sge* s, uint64_t addr, uint32_t rkey) {
  ibv_send_wr r = testbench::rdma_write_wr(id, s, 1, addr, rkey, true);
  r.opcode = IBV_WR_RDMA_READ;
  return r;
}

// Two pages of node1's physical memory (1 GiB up, below the hole) hold a pattern, written as
// the kernel writes its memory; the region is 4 KiB from 64 B into them. A Read of the region
// returns what physical memory holds; a Write of 1,000 B at 100 B into it changes exactly those
// bytes of physical memory, and no byte of the two pages outside them.
TEST_F(PhysRegion, RemoteReadReturnsPhysicalMemoryAndWriteChangesIt) {
  StatRegistry stats;
  Cluster cl(cfg, stats);
  host::PhysMem& mem = cl.nodes[1]->host.mem;
  constexpr uint64_t kPages = 0x40000000, kRegion = kPages + 64, kLen = 4096;
  const std::vector<uint8_t> phys = pattern(8192, 11), data = pattern(1000, 3);
  std::vector<uint8_t> got;
  run(
      cl, kRegion, kLen, EndpointConfig{},
      [&](Endpoint& a, const PeerInfo& p) {
        ibv_sge s{a.addr(), uint32_t(kLen), a.mr->lkey};
        ibv_send_wr r = read_wr(1, &s, p.addr, p.rkey);
        ibv_send_wr* bad = nullptr;
        ASSERT_EQ(ibv_post_send(a.qps[0], &r, &bad), 0);
        EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
        got = testbench::mem_read(a.buf, kLen);
        ASSERT_EQ(rnic_mem_write(static_cast<uint8_t*>(a.buf) + 65536, data.data(), data.size()),
                  0);
        ibv_sge w{a.addr() + 65536, uint32_t(data.size()), a.mr->lkey};
        ibv_send_wr wr = testbench::rdma_write_wr(2, &w, 1, p.addr + 100, p.rkey, true);
        ASSERT_EQ(ibv_post_send(a.qps[0], &wr, &bad), 0);
        EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
        // A Read behind the Write: it is placed when the Read's answer comes.
        ibv_sge f{a.addr() + 131072, 1, a.mr->lkey};
        ibv_send_wr fence = read_wr(3, &f, p.addr, p.rkey);
        ASSERT_EQ(ibv_post_send(a.qps[0], &fence, &bad), 0);
        EXPECT_EQ(wait_one(a.cq).status, IBV_WC_SUCCESS);
      },
      [&] { mem.write(kPages, phys.data(), phys.size()); });
  EXPECT_EQ(got, std::vector<uint8_t>(phys.begin() + 64, phys.begin() + 64 + kLen));
  std::vector<uint8_t> now(8192);
  mem.read(kPages, now.data(), now.size());
  std::vector<uint8_t> expect = phys;
  std::copy(data.begin(), data.end(), expect.begin() + 64 + 100);
  EXPECT_EQ(now, expect);
}

// Only privileged callers register physical regions (EPERM otherwise); a length of 0 and a
// range past the top of physical memory are refused with EINVAL.
TEST_F(PhysRegion, UnprivilegedCallersAndBadRangesAreRefused) {
  StatRegistry stats;
  Cluster cl(cfg, stats);
  const uint64_t top = uint64_t(cfg.host.mem_mib) << 20;
  auto attempt = [&](uint64_t pa, size_t len) {
    ibv_device** list = ibv_get_device_list(nullptr);
    ibv_context* ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    ibv_pd* pd = ibv_alloc_pd(ctx);
    errno = 0;
    ibv_mr* mr = rnic_reg_phys_mr(pd, pa, len, kRemote);
    const int e = mr ? 0 : errno;
    if (mr) ibv_dereg_mr(mr);
    return e;
  };
  int user = -1, zero = -1, past = -1, wraps = -1, good = -1, top_page = -1;
  cl.run({{0, [&] { user = attempt(0x40000000, 4096); }},
          {1,
           [&] {
             zero = attempt(0x40000000, 0);
             past = attempt(top - 4096, 8192);
             wraps = attempt(~uint64_t(0) - 100, 4096);
             good = attempt(0x40000000, 4096);
             top_page = attempt(top - 4096, 4096);
           },
           true}});
  EXPECT_EQ(user, EPERM);
  EXPECT_EQ(zero, EINVAL);
  EXPECT_EQ(past, EINVAL);
  EXPECT_EQ(wraps, EINVAL);
  EXPECT_EQ(good, 0);
  EXPECT_EQ(top_page, 0);
}

struct HoleCase {
  const char* name;
  const char* read_dma_error;
};

class PhysHole : public PhysRegion, public ::testing::WithParamInterface<HoleCase> {};

// The region is the hole's last page and the memory page above it. A 64-byte Read of the hole
// page (no completion), then one of the memory page on the same QP. silent: the responder's
// completion timeout fires, it sends nothing (core.responses_unsent 1, no Terminate), the second
// Read waits behind the first; the requester's Read Response timer ends the first with
// IBV_WC_RETRY_EXC_ERR and the second is flushed; neither wrote a byte into the requester's buffer.
// terminate: the first completes IBV_WC_REM_OP_ERR from a Terminate (RDMAP / 2 / 0x07).
TEST_P(PhysHole, ReadOfAHoleThatGivesNoCompletion) {
  const bool silent = std::string(GetParam().read_dma_error) == "silent";
  cfg.host.hole_behaviour = "timeout";
  cfg.pcie.cpl_timeout_us = 1000;  // 1 ms
  cfg.core.read_dma_error = GetParam().read_dma_error;
  EndpointConfig ec;
  ec.timeout = 10;   // 4.096 us x 2^10 = 4.2 ms
  ec.retry_cnt = 1;  // x 2: the Read Response timer gives up 8.4 ms after the last progress
  StatRegistry stats;
  Cluster cl(cfg, stats);
  ibv_wc_status first = IBV_WC_SUCCESS, second = IBV_WC_SUCCESS;
  std::vector<uint8_t> sink;
  uint64_t t_first = 0;
  run(cl, hole_end() - 4096, 8192, ec, [&](Endpoint& a, const PeerInfo& p) {
    ibv_sge s1{a.addr(), 64, a.mr->lkey}, s2{a.addr() + 4096, 64, a.mr->lkey};
    ibv_send_wr r1 = read_wr(1, &s1, p.addr, p.rkey), r2 = read_wr(2, &s2, p.addr + 4096, p.rkey);
    ibv_send_wr* bad = nullptr;
    const uint64_t t0 = now_ps();
    ASSERT_EQ(ibv_post_send(a.qps[0], &r1, &bad), 0);
    ASSERT_EQ(ibv_post_send(a.qps[0], &r2, &bad), 0);
    const ibv_wc w1 = wait_one(a.cq);
    t_first = now_ps() - t0;
    first = w1.status;
    second = wait_one(a.cq).status;
    sink = testbench::mem_read(a.buf, 8192);
  });
  const std::vector<uint8_t> guard(8192, kGuard);
  EXPECT_EQ(sink, guard) << "nothing of either Read landed";
  if (silent) {
    EXPECT_EQ(first, IBV_WC_RETRY_EXC_ERR);
    EXPECT_EQ(second, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(counter(stats, "node1.core", "responses_unsent"), 1u);
    EXPECT_GT(t_first, 8'000'000'000ull) << "the Read Response timer, not the completion timeout";
  } else {
    EXPECT_EQ(first, IBV_WC_REM_OP_ERR);
    EXPECT_EQ(second, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(counter(stats, "node1.core", "responses_unsent"), 0u);
    EXPECT_GE(counter(stats, "node1.core", "tx_terminates"), 1u);
    EXPECT_LT(t_first, 2'000'000'000ull) << "answered after the 1 ms completion timeout";
  }
}
INSTANTIATE_TEST_SUITE_P(PhysRegion, PhysHole,
                         ::testing::Values(HoleCase{"silent", "silent"},
                                           HoleCase{"terminate", "terminate"}),
                         [](const auto& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace rnic
