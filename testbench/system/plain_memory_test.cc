// A verbs program's own memory as RDMA buffers (docs/verbs.md, "Plain memory"): heap (new[]),
// std::vector, stack and static buffers are registered with ibv_reg_mr and used directly; what
// the peer writes (RDMA Write, Send) is seen by plain loads, what the program stores is what the
// card sends (Send, RDMA Read responses). Freeing or unmapping registered memory never crashes
// the simulator: the registration keeps the pages it pinned.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "sim/cluster.h"
#include "sim/run_record.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using testbench::pattern;
using testbench::rdma_write_wr;
using testbench::wait_completions;
using testbench::wait_one;
using traffic::Endpoint;
using traffic::EndpointConfig;
using traffic::Oob;
using traffic::PeerInfo;

constexpr size_t kLen = 3 * 4096 + 100;  // a few pages, not page-aligned in the middle
uint8_t g_static_buf[kLen + 64];         // a static buffer of the program

// What the responder publishes: one registered buffer of each kind.
struct Target {
  uint64_t addr = 0;
  uint32_t rkey = 0;
};

ibv_mr* reg(ibv_pd* pd, void* p, size_t n) {
  ibv_mr* mr = ibv_reg_mr(
      pd, p, n, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  EXPECT_TRUE(mr) << "ibv_reg_mr: errno " << errno;
  return mr;
}

// These tests register the program's own stack, heap and static buffers at their real
// addresses; ASLR moves them between processes, and the page boundaries they cross with them, so
// a run with RTL (another process) is not compared with the model run record by record
// (sim/run_record.h); each run still checks every byte.
void not_comparable() {
  RunRecord::get().not_comparable("PlainMemory registers the process's own memory (ASLR)");
}

// The requester writes a different pattern into each of the responder's four buffers with RDMA
// Writes, then a Send whose receive buffer is a fifth (a std::vector); the responder, once that
// Send has completed (so the Writes before it are placed), checks all five with plain loads. Then
// the responder stores a pattern with plain stores into its heap buffer and the requester reads
// it back with an RDMA Read into a stack buffer of its own, checked with plain loads too.
TEST(PlainMemory, HeapVectorStackAndStaticBuffersTakeRemoteBytes) {
  not_comparable();
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  std::vector<Target> targets(4);
  std::vector<std::vector<uint8_t>> want;
  for (int i = 0; i < 5; ++i) want.push_back(pattern(kLen, uint64_t(10 + i)));
  const std::vector<uint8_t> stored = pattern(kLen, 99);
  cl.run({[&] {  // requester
            a.open(EndpointConfig{});
            oob.put(1, a.info());
            const PeerInfo peer = oob.get(0);
            a.connect(peer);
            oob.get(0);  // the responder's buffers are registered
            // Sources: the program's own heap buffers, filled with plain stores.
            std::vector<std::vector<uint8_t>> src(want);
            std::vector<ibv_mr*> mrs;
            for (auto& s : src) mrs.push_back(reg(a.pd, s.data(), s.size()));
            for (int i = 0; i < 4; ++i) {
              ibv_sge sge{reinterpret_cast<uint64_t>(src[size_t(i)].data()), uint32_t(kLen),
                          mrs[size_t(i)]->lkey};
              ibv_send_wr w = rdma_write_wr(uint64_t(i), &sge, 1, targets[size_t(i)].addr,
                                            targets[size_t(i)].rkey, true);
              ibv_send_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
            }
            ibv_sge sge{reinterpret_cast<uint64_t>(src[4].data()), uint32_t(kLen), mrs[4]->lkey};
            ibv_send_wr s = rdma_write_wr(4, &sge, 1, 0, 0, true);
            s.opcode = IBV_WR_SEND;
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], &s, &bad), 0);
            for (const ibv_wc& wc : wait_completions(a.cq, 5))
              EXPECT_EQ(wc.status, IBV_WC_SUCCESS)
                  << wc.wr_id << ": " << ibv_wc_status_str(wc.status);
            // An RDMA Read of the responder's heap buffer into a stack buffer of this program.
            oob.get(0);  // the responder stored its pattern
            uint8_t sink[kLen];
            std::memset(sink, 0, kLen);
            ibv_mr* smr = reg(a.pd, sink, kLen);
            ibv_sge rs{reinterpret_cast<uint64_t>(sink), uint32_t(kLen), smr->lkey};
            ibv_send_wr r = rdma_write_wr(9, &rs, 1, targets[0].addr, targets[0].rkey, true);
            r.opcode = IBV_WR_RDMA_READ;
            ASSERT_EQ(ibv_post_send(a.qps[0], &r, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(std::memcmp(sink, stored.data(), kLen), 0)
                << "the Read's bytes, by plain loads";
            ASSERT_EQ(ibv_dereg_mr(smr), 0);  // before the stack frame goes
            for (ibv_mr* m : mrs) ASSERT_EQ(ibv_dereg_mr(m), 0);
            oob.put(1, {});
          },
          [&] {  // responder
            b.open(EndpointConfig{});
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            auto* heap = new uint8_t[kLen];
            std::vector<uint8_t> vec(kLen), recv(kLen);
            uint8_t stack_buf[kLen];
            uint8_t* statics = g_static_buf + 7;
            uint8_t* bufs[4] = {heap, vec.data(), stack_buf, statics};
            std::vector<ibv_mr*> mrs;
            for (int i = 0; i < 4; ++i) {
              mrs.push_back(reg(b.pd, bufs[i], kLen));
              targets[size_t(i)] = {reinterpret_cast<uint64_t>(bufs[i]), mrs.back()->rkey};
            }
            ibv_mr* rmr = reg(b.pd, recv.data(), kLen);
            ibv_sge rs{reinterpret_cast<uint64_t>(recv.data()), uint32_t(kLen), rmr->lkey};
            ibv_recv_wr rw{5, nullptr, &rs, 1};
            ibv_recv_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_recv(b.qps[0], &rw, &bad), 0);
            oob.put(0, {});
            const ibv_wc wc = wait_one(b.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            const char* names[4] = {"heap", "std::vector", "stack", "static"};
            for (int i = 0; i < 4; ++i)
              EXPECT_EQ(std::memcmp(bufs[i], want[size_t(i)].data(), kLen), 0)
                  << names[i] << " buffer: the peer's RDMA Write, by plain loads";
            EXPECT_EQ(recv, want[4]) << "the Send's bytes in the receive vector";
            std::memcpy(heap, stored.data(), kLen);  // plain stores the peer then reads
            oob.put(0, {});
            oob.get(1);
            for (ibv_mr* m : mrs) ASSERT_EQ(ibv_dereg_mr(m), 0);
            ASSERT_EQ(ibv_dereg_mr(rmr), 0);
            delete[] heap;
          }});
}

// Memory freed (delete[]) or unmapped (munmap) while still registered: the peer's RDMA Writes to
// it still complete and nothing crashes; the unmapped pages' frames keep a copy of their bytes
// (the registration's pinned pages), which an RDMA Read returns with what the Write put there.
TEST(PlainMemory, FreeingOrUnmappingRegisteredMemoryIsSafe) {
  not_comparable();
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  Target heap_t, map_t;
  uint64_t backed_before = 0, backed_after = 0;
  const std::vector<uint8_t> data = pattern(kLen, 5);
  cl.run({[&] {
            a.open(EndpointConfig{});
            oob.put(1, a.info());
            a.connect(oob.get(0));
            oob.get(0);  // the responder registered, then freed and unmapped
            testbench::mem_write(a.buf, 0, data);
            ibv_sge s{a.addr(), uint32_t(kLen), a.mr->lkey};
            ibv_send_wr w[2] = {rdma_write_wr(1, &s, 1, heap_t.addr, heap_t.rkey, true),
                                rdma_write_wr(2, &s, 1, map_t.addr, map_t.rkey, true)};
            w[0].next = &w[1];
            ibv_send_wr* bad = nullptr;
            ASSERT_EQ(ibv_post_send(a.qps[0], w, &bad), 0);
            for (const ibv_wc& wc : wait_completions(a.cq, 2))
              EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            ibv_sge r{a.addr() + 0x80000, uint32_t(kLen), a.mr->lkey};
            ibv_send_wr rd = rdma_write_wr(3, &r, 1, map_t.addr, map_t.rkey, true);
            rd.opcode = IBV_WR_RDMA_READ;
            ASSERT_EQ(ibv_post_send(a.qps[0], &rd, &bad), 0);
            const ibv_wc wc = wait_one(a.cq);
            EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
            EXPECT_EQ(testbench::mem_read(static_cast<uint8_t*>(a.buf) + 0x80000, kLen), data)
                << "the unmapped region's pinned pages lost the Write";
          },
          [&] {
            b.open(EndpointConfig{});
            const PeerInfo peer = oob.get(1);
            oob.put(0, b.info());
            b.connect(peer);
            auto* heap = new uint8_t[kLen];
            void* m =
                mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            ASSERT_NE(m, MAP_FAILED);
            ibv_mr* hm = reg(b.pd, heap, kLen);
            ibv_mr* mm = reg(b.pd, m, kLen);
            heap_t = {reinterpret_cast<uint64_t>(heap), hm->rkey};
            map_t = {reinterpret_cast<uint64_t>(m), mm->rkey};
            backed_before = cl.nodes[1]->host.mem.frames_backed();
            delete[] heap;
            ASSERT_EQ(munmap(m, kLen), 0);
            backed_after = cl.nodes[1]->host.mem.frames_backed();
            oob.put(0, {});
          }});
  EXPECT_EQ(backed_before - backed_after, (kLen + 4095) / 4096)
      << "the unmapped pages' frames did not take their copies";
}

// Memory that is not the program's, or that the card would write but cannot be written, is
// refused with EFAULT as the kernel refuses to pin it.
TEST(PlainMemory, MemoryThatIsNotTheProgramsIsRefused) {
  not_comparable();
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  cl.run({[&] {
    Endpoint e;
    e.open(EndpointConfig{});
    void* ro = mmap(nullptr, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(ro, MAP_FAILED);
    errno = 0;
    EXPECT_EQ(ibv_reg_mr(e.pd, ro, 8192, IBV_ACCESS_LOCAL_WRITE), nullptr);
    EXPECT_EQ(errno, EFAULT) << "read-only memory registered for the card to write";
    ibv_mr* mr = ibv_reg_mr(e.pd, ro, 8192, IBV_ACCESS_REMOTE_READ);
    EXPECT_TRUE(mr) << "read-only memory for remote reads only";
    if (mr) ibv_dereg_mr(mr);
    munmap(ro, 8192);
    errno = 0;
    EXPECT_EQ(ibv_reg_mr(e.pd, ro, 8192, IBV_ACCESS_REMOTE_READ), nullptr);
    EXPECT_EQ(errno, EFAULT) << "unmapped memory";
    errno = 0;
    EXPECT_EQ(ibv_reg_mr(e.pd, reinterpret_cast<void*>(0x1000), 4096, IBV_ACCESS_LOCAL_WRITE),
              nullptr);
    EXPECT_EQ(errno, EFAULT) << "address 0x1000";
  }});
}

}  // namespace
}  // namespace rnic

namespace rnic {
namespace {

// Simulated processes share the simulator's one OS thread: each keeps its own errno across
// waits (host_wait), so a failure one program sees is not overwritten by another's while it
// waits.
TEST(HostPrograms, EachKeepsItsOwnErrnoAcrossWaits) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  int a_after = 0, b_after = 0;
  cl.run({[&] {
            errno = 1234;
            rnic_spend_ns(1000);  // B runs meanwhile and sets its own
            a_after = errno;
          },
          [&] {
            errno = 42;
            rnic_spend_ns(500);
            b_after = errno;
            errno = 7;
            rnic_spend_ns(1000);
          }});
  EXPECT_EQ(a_after, 1234);
  EXPECT_EQ(b_after, 42);
}

}  // namespace
}  // namespace rnic
