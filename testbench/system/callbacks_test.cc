// Completion callbacks (rnic_cq_set_callback, rnic_wr_set_callback, rnic_dispatch_callbacks;
// docs/memory.md): a WR's own callback runs for that WR once, the CQ's for the others, each in
// the thread that dispatches, after it was woken by the CQ's completion event. That thread's
// CPU time is its wake-up, its polls and what the callbacks spend, not the time it slept; the
// interrupt's entry is the driver's. A kernel thread's handler runs from the interrupt (no
// wake-up), and its driver calls are not system calls.
#include <gtest/gtest.h>

#include <vector>

#include "models/host/host_wait.h"
#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using traffic::Endpoint;
using traffic::Oob;
using traffic::open_connected;
using traffic::PeerInfo;

struct Seen {
  std::vector<std::pair<char, uint64_t>> calls;  // ('w' per-WR | 'c' per-CQ, wr_id)
};

TEST(Callbacks, PerWrThenPerCqInTheWokenThread) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  Seen seen;
  double slept_ns = 0, cpu_ns = 0, irq_ns = 0;
  int dispatched = 0;
  traffic::EndpointConfig ec;
  ec.comp_channel = true;
  cl.run({[&] {
            open_connected(a, 0, ec, oob);
            const PeerInfo p = oob.get(0);
            rnic_cq_set_callback(
                a.cq,
                [](const ibv_wc* wc, void* arg) {
                  static_cast<Seen*>(arg)->calls.push_back({'c', wc->wr_id});
                  rnic_spend_ns(100);
                },
                &seen);
            ASSERT_EQ(rnic_wr_set_callback(
                          a.cq, 2,
                          [](const ibv_wc* wc, void* arg) {
                            static_cast<Seen*>(arg)->calls.push_back({'w', wc->wr_id});
                            rnic_spend_ns(100);
                          },
                          &seen),
                      0);
            ASSERT_EQ(ibv_req_notify_cq(a.cq, 0), 0);
            // A 64 KiB Write: tens of microseconds asleep before its event.
            ibv_sge s{a.addr(), 65536, a.mr->lkey};
            ibv_send_wr w[3];
            for (uint64_t i = 0; i < 3; ++i) {
              w[i] = testbench::rdma_write_wr(i + 1, &s, 1, p.addr, p.rkey, true);
              w[i].next = i < 2 ? &w[i + 1] : nullptr;
            }
            ibv_send_wr* bad = nullptr;
            const double i0 = rnic_irq_cpu_ns();
            ASSERT_EQ(ibv_post_send(a.qps[0], &w[0], &bad), 0);
            const double posted = rnic_now_ns(), c_posted = rnic_cpu_ns();
            while (seen.calls.size() < 3) {
              const int n = rnic_dispatch_callbacks(a.channel);
              ASSERT_GT(n, 0);
              dispatched += n;
            }
            slept_ns = rnic_now_ns() - posted;
            cpu_ns = rnic_cpu_ns() - c_posted;
            irq_ns = rnic_irq_cpu_ns() - i0;
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, {}, oob);
            oob.put(0, b.info());
            oob.get(1);
          }});
  ASSERT_EQ(seen.calls.size(), 3u);
  EXPECT_EQ(dispatched, 3);
  EXPECT_EQ(seen.calls[0], std::make_pair('c', uint64_t(1)));
  EXPECT_EQ(seen.calls[1], std::make_pair('w', uint64_t(2)));
  EXPECT_EQ(seen.calls[2], std::make_pair('c', uint64_t(3)));
  EXPECT_GT(slept_ns, 100'000.0) << "three 64 KiB Writes at 10 Gb/s";
  // Woken at least once, three callbacks of 100 ns, CQ polls: far less than the time asleep.
  EXPECT_GE(cpu_ns, double(cfg.cost.wakeup_ns) + 300);
  EXPECT_LT(cpu_ns, slept_ns / 10);
  EXPECT_GE(irq_ns, double(cfg.cost.interrupt_entry_ns));
}

// The same thread as a process's and as the kernel's: a 4 KiB Write's callback is done
// cost.wakeup_ns sooner in the kernel, and creating a CQ takes a system call's entry, the ioctl's
// dispatch and its exit less (within two 4 ns core cycles: the firmware command's completion
// lands on the card's clock edges, whose phase the earlier start moves).
TEST(Callbacks, AKernelThreadSkipsTheWakeUpAndTheSystemCall) {
  SystemConfig cfg = preset_config("rnic-10g", "test");
  cfg.efe.cc_start_fraction = 1;  // the first Write would pay the channel's slow start
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Oob oob;
  Endpoint a, b;
  traffic::EndpointConfig ec;
  ec.comp_channel = true;
  double done_ns[2] = {}, create_ns[2] = {};
  cl.run({[&] {
            open_connected(a, 0, ec, oob);
            const PeerInfo p = oob.get(0);
            for (int kernel = 0; kernel < 2; ++kernel) {
              std::unique_ptr<host::KernelThread> k;
              if (kernel) k = std::make_unique<host::KernelThread>();
              double t0 = rnic_now_ns();
              ibv_cq* cq = ibv_create_cq(a.ctx, 16, nullptr, nullptr, 0);
              create_ns[kernel] = rnic_now_ns() - t0;
              ASSERT_NE(cq, nullptr);
              ASSERT_EQ(ibv_destroy_cq(cq), 0);
              bool called = false;
              ASSERT_EQ(
                  rnic_wr_set_callback(
                      a.cq, 7, [](const ibv_wc*, void* arg) { *static_cast<bool*>(arg) = true; },
                      &called),
                  0);
              ASSERT_EQ(ibv_req_notify_cq(a.cq, 0), 0);
              ibv_sge s{a.addr(), 4096, a.mr->lkey};
              ibv_send_wr w = testbench::rdma_write_wr(7, &s, 1, p.addr, p.rkey, true);
              ibv_send_wr* bad = nullptr;
              t0 = rnic_now_ns();
              ASSERT_EQ(ibv_post_send(a.qps[0], &w, &bad), 0);
              while (!called) ASSERT_GT(rnic_dispatch_callbacks(a.channel), 0);
              done_ns[kernel] = rnic_now_ns() - t0;
            }
            oob.put(1, {});
          },
          [&] {
            open_connected(b, 1, {}, oob);
            oob.put(0, b.info());
            oob.get(1);
          }});
  EXPECT_NEAR(done_ns[0] - done_ns[1], double(cfg.cost.wakeup_ns), 8.0);
  EXPECT_NEAR(
      create_ns[0] - create_ns[1],
      double(cfg.cost.syscall_entry_ns + cfg.cost.ioctl_dispatch_ns + cfg.cost.syscall_exit_ns),
      8.0);
}

}  // namespace
}  // namespace rnic
