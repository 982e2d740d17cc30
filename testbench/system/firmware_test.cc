// The firmware controller's command queue (docs/firmware.md), driven from a host thread by raw
// MMIO as a driver would: completions in order with their cycle costs, one at a time and
// pipelined; bad input refused (unknown opcodes, empty or unreadable lists, producer writes that
// go backwards or overfill the queue) with the right counters; and the driver over it: waiting
// by interrupt, and two threads' registrations overlapping in the queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

#include "models/rnic/abi/commands.h"
#include "models/rnic/abi/regs.h"
#include "sim/cluster.h"
#include "sim/traffic/endpoint.h"
#include "testbench/common/verbs_helpers.h"

namespace rnic {
namespace {

using Probe = RnicCore::Probe;

// The command queue of one card, reached the way the driver reaches it.
struct RawQueue {
  host::RootComplex& rc;
  uint64_t bar0;
  uint32_t posted = 0;

  template <class Cmd>
  void put(const Cmd& c) {
    const auto a = c.encode();
    put_raw(Cmd::kOp, a.data(), a.size());
  }
  void put_raw(uint32_t w0, const uint32_t* a, size_t n) {
    std::vector<uint8_t> slot(reg::kCmdSlotBytes, 0);
    std::memcpy(slot.data(), &w0, 4);
    std::memcpy(slot.data() + 4, a, n * 4);
    rc.mmio_write(bar0 + reg::kCmdQueue + (posted % reg::kCmdSlots) * reg::kCmdSlotBytes,
                  std::move(slot));
    ++posted;
  }
  void ring(uint32_t producer) { rc.mmio_write_le(bar0 + reg::kCmdProducer, producer, 4); }
  void ring() { ring(posted); }
  uint64_t word(uint32_t index) {
    const std::vector<uint8_t> d =
        rc.mmio_read(bar0 + reg::kCmdDone + 8 * (index % reg::kCmdSlots), 8);
    uint64_t w = 0;
    std::memcpy(&w, d.data(), 8);
    return w;
  }
  // The completion word of command `index`, once the firmware has written it.
  uint64_t wait(uint32_t index) {
    for (;;) {
      const uint64_t w = word(index);
      if (reg::cmd_done_seq(w) == uint16_t(index + 1)) return w;
    }
  }
  uint32_t consumer() { return rc.mmio_read32(bar0 + reg::kCmdConsumer); }
};

struct Probes {
  std::vector<uint64_t> taken, done;
  void attach(RnicCore& core) {
    core.probe = [this](const ProbeEvent& e) {
      const Probe p = e.point;
      const uint64_t t = e.t_ps;
      if (p == Probe::kCommand) taken.push_back(t);
      if (p == Probe::kCommandDone) done.push_back(t);
    };
  }
};

class Firmware : public ::testing::Test {
 protected:
  SystemConfig cfg = preset_config("rnic-10g", "test");
  uint64_t fw_cycle() const { return ClockDomain::mhz(cfg.firmware.clk_mhz).period_ps; }
  uint64_t counter(StatRegistry& s, const char* name) {
    return s.group("node0.core.firmware").counter(name, "", "").value;
  }
  // Runs `fn` on a host thread of node 0 with its card open and nothing else on it.
  void on_card(StatRegistry& stats, Probes& pr, const std::function<void(Node&, RawQueue&)>& fn) {
    Cluster cl(cfg, stats);
    pr.attach(cl.nodes[0]->card.core);
    Node& n = *cl.nodes[0];
    cl.run({[&] {
      ASSERT_EQ(n.driver.open(), 0);
      RawQueue q{n.host.rc, n.driver.bar0()};
      fn(n, q);
    }});
  }
};

// A page list of `pages` entries in host memory for LOAD_PBL (physically contiguous).
uint64_t page_list(Node& n, uint32_t pages) {
  const uint64_t pa =
      n.host.mem.alloc_contiguous((pages * 8 + 4095) / 4096, n.host.mem.next_frame());
  std::vector<uint64_t> list(pages);
  for (uint32_t i = 0; i < pages; ++i) list[i] = 0x100000000ull + uint64_t(i) * 4096;
  n.host.mem.write(pa, list.data(), list.size() * 8);
  return pa;
}

class FirmwareModes : public Firmware, public ::testing::WithParamInterface<bool> {};

// LOAD_PBL of 512 pages alone (its time L: the handler, the list's DMA read, the entries); then
// LOAD_PBL, CREATE_CQ, DESTROY_CQ under one producer write. One at a time (false): each starts
// when the one ahead completes, the CQ commands dispatch + cq_cycles apart. Pipelined (true): the
// two CQ handlers run while LOAD_PBL waits for its list, and all three complete on the edge the
// list's 512 entries are written (completions stay in order): after L, or after the processor's
// work of all three when that is longer.
TEST_P(FirmwareModes, OneAtATimeOrPipelined) {
  const bool pipelined = GetParam();
  cfg.firmware.pipelined = pipelined;
  constexpr uint32_t kPages = 512;
  const uint64_t f = fw_cycle();
  const uint64_t handler = uint64_t(cfg.firmware.dispatch_cycles + cfg.firmware.cq_cycles);
  const uint64_t load = uint64_t(cfg.firmware.dispatch_cycles + cfg.firmware.mr_cycles);
  const uint64_t entries = kPages * uint64_t(cfg.firmware.pbl_entry_cycles);
  StatRegistry stats;
  Probes pr;
  on_card(stats, pr, [&](Node& n, RawQueue& q) {
    const uint32_t first = uint32_t(cfg.core.pbl_entries) - kPages;
    const uint64_t list = page_list(n, kPages);
    q.put(abi::LoadPbl{first, kPages, list});
    q.ring();
    EXPECT_EQ(reg::cmd_done_result(q.wait(0)), 0u);
    const uint32_t cqn = uint32_t(cfg.core.cqs) - 1;
    const uint64_t ring = n.host.mem.alloc_contiguous(1, n.host.mem.next_frame());
    q.put(abi::LoadPbl{first, kPages, list});
    q.put(abi::CreateCq{cqn, ring, 16});
    q.put(abi::DestroyCq{cqn});
    q.ring();
    const uint32_t op[3] = {abi::kCmdLoadPbl, abi::kCmdCreateCq, abi::kCmdDestroyCq};
    for (uint32_t i = 0; i < 3; ++i) {
      const uint64_t w = q.wait(1 + i);
      EXPECT_EQ(reg::cmd_done_result(w), 0u) << "command " << i;
      EXPECT_EQ(uint32_t(w >> 24) & 0xFF, op[i]);
    }
    EXPECT_EQ(q.consumer(), 4u);
  });
  ASSERT_EQ(pr.taken.size(), 4u);
  ASSERT_EQ(pr.done.size(), 4u);
  const uint64_t alone = pr.done[0] - pr.taken[0];
  EXPECT_GT(alone, (load + entries) * f) << "the list's DMA read comes on top";
  EXPECT_EQ(pr.taken[1], pr.taken[3]) << "one producer write takes all three";
  const uint64_t t0 = pr.taken[1];
  if (!pipelined) {
    EXPECT_EQ(pr.done[1] - t0, alone);
    EXPECT_EQ(pr.done[2] - pr.done[1], handler * f);
    EXPECT_EQ(pr.done[3] - pr.done[2], handler * f);
  } else {
    EXPECT_EQ(pr.done[1] - t0, std::max(alone, (load + 2 * handler + entries) * f));
    EXPECT_EQ(pr.done[2], pr.done[1]);
    EXPECT_EQ(pr.done[3], pr.done[1]);
    EXPECT_LT(pr.done[3] - t0, alone + 2 * handler * f) << "faster than one at a time";
  }
  EXPECT_EQ(counter(stats, "busy_cycles"), 2 * (load + entries) + 2 * handler);
  EXPECT_EQ(counter(stats, "commands"), 4u);
}
INSTANTIATE_TEST_SUITE_P(Firmware, FirmwareModes, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "pipelined" : "one_at_a_time"; });

// Bad input: an unknown opcode, a LOAD_PBL of no entries or past the PBLMT and a REG_MR whose
// list is in the device-reserved hole (Unsupported Request: EIO) complete with their errors and
// write nothing (the REG_MR's STag cannot be invalidated: it was never written); producer writes
// that go backwards or post more than the queue's 16 slots are ignored and counted, and the
// queue goes on working.
TEST_F(Firmware, BadInputIsRefusedAndCounted) {
  StatRegistry stats;
  Probes pr;
  on_card(stats, pr, [&](Node& n, RawQueue& q) {
    const uint32_t junk[3] = {1, 2, 3};
    q.put_raw(0x7F, junk, 3);
    q.put(abi::LoadPbl{0, 0, page_list(n, 1)});
    q.put(abi::LoadPbl{uint32_t(cfg.core.pbl_entries) - 1, 2, page_list(n, 2)});
    abi::RegMr r;
    r.stag.index = 5;
    r.stag.key = 0x42;
    r.stag.length = 4096;
    r.stag.pbl_first = 0;
    r.stag.pbl_count = 1;
    r.list = (uint64_t(cfg.host.hole_base_mib) + 1) << 20;
    q.put(r);
    q.put(abi::InvalidateStag{abi::make_stag(5, 0x42)});
    q.ring();
    const uint32_t expect[5] = {EINVAL, EINVAL, EINVAL, EIO, EINVAL};
    for (uint32_t i = 0; i < 5; ++i)
      EXPECT_EQ(reg::cmd_done_result(q.wait(i)), expect[i]) << "command " << i;
    EXPECT_EQ(counter(stats, "command_errors"), 5u);

    q.ring(3);              // backwards
    q.ring(q.posted + 17);  // 17 posted, 16 slots
    EXPECT_EQ(q.consumer(), 5u);
    EXPECT_EQ(counter(stats, "bad_doorbells"), 2u);
    // The queue still works: a good REG_MR, then its STag invalidated.
    r.list = page_list(n, 1);
    q.put(r);
    q.put(abi::InvalidateStag{abi::make_stag(5, 0x42)});
    q.ring();
    EXPECT_EQ(reg::cmd_done_result(q.wait(5)), 0u);
    EXPECT_EQ(reg::cmd_done_result(q.wait(6)), 0u);
    EXPECT_EQ(q.consumer(), 7u);
  });
  EXPECT_EQ(counter(stats, "commands"), 7u);
}

// host.cmd_wait interrupt: the driver posts each command asking for an interrupt and sleeps
// until its MSI-X (data 1 + core.cqs); with poll no command raises one. Either way the set-up
// (CQ, MR, QP, three modifies) works and a Write over it completes.
class FirmwareWait : public Firmware, public ::testing::WithParamInterface<const char*> {};

TEST_P(FirmwareWait, DriverWaitsByInterruptOrPolling) {
  {
    const std::string mode = GetParam();
    cfg.host.cmd_wait = mode;
    StatRegistry stats;
    Cluster cl(cfg, stats);
    uint32_t msis = 0;
    auto& rc = cl.nodes[0]->host.rc;
    auto prev = rc.on_msi;
    rc.on_msi = [&, prev](uint64_t a, uint32_t d) {
      if (d == reg::cmd_vector(uint32_t(cfg.core.cqs))) ++msis;
      prev(a, d);
    };
    traffic::Endpoint ep[2];
    traffic::Oob oob;
    auto setup = [&](int me) {
      ep[me].open(traffic::EndpointConfig{});
      oob.put(1 - me, ep[me].info());
      const traffic::PeerInfo peer = oob.get(me);
      ep[me].connect(peer);
      return peer;
    };
    cl.run({[&] {
              const traffic::PeerInfo p = setup(0);
              ibv_sge s{ep[0].addr(), 64, ep[0].mr->lkey};
              ibv_send_wr wr = testbench::rdma_write_wr(1, &s, 1, p.addr, p.rkey, true);
              ibv_send_wr* bad = nullptr;
              ASSERT_EQ(ibv_post_send(ep[0].qps[0], &wr, &bad), 0);
              EXPECT_EQ(testbench::wait_one(ep[0].cq).status, IBV_WC_SUCCESS);
              oob.put(1, {});
            },
            [&] {
              setup(1);
              oob.get(1);
            }});
    EXPECT_EQ(msis, mode == "poll" ? 0u : 6u) << mode;
    EXPECT_EQ(counter(stats, "commands"), 6u) << mode;
  }
}
INSTANTIATE_TEST_SUITE_P(Firmware, FirmwareWait, ::testing::Values("poll", "interrupt"),
                         [](const auto& i) { return std::string(i.param); });

// Two threads of one process: the first registers 16 MiB (a REG_MR of 4096 pages, tens of
// microseconds in the firmware); once that command is in the card the second registers 4 KiB.
// The driver lets the second thread post its REG_MR while the first's runs, and the pipelined
// firmware runs its handler during the first one's list read and entries, so it completes less
// than a handler's time after the first. Both get their own STag.
TEST_F(Firmware, TwoThreadsRegistrationsOverlap) {
  cfg.firmware.pipelined = true;
  StatRegistry stats;
  Cluster cl(cfg, stats);
  Probes pr;
  sc_core::sc_event first_taken;
  cl.nodes[0]->card.core.probe = [&](const ProbeEvent& e) {
    const Probe p = e.point;
    const uint64_t t = e.t_ps;
    if (p == Probe::kCommand) pr.taken.push_back(t);
    if (p == Probe::kCommandDone) pr.done.push_back(t);
    if (p == Probe::kCommand) first_taken.notify(sc_core::SC_ZERO_TIME);
  };
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_mr* mr[2] = {};
  const size_t bytes[2] = {16u << 20, 4096};
  std::vector<uint8_t> buf[2] = {std::vector<uint8_t>(bytes[0]), std::vector<uint8_t>(bytes[1])};
  cl.run({{0,
           [&] {
             ibv_device** list = ibv_get_device_list(nullptr);
             ctx = ibv_open_device(list[0]);
             ibv_free_device_list(list);
             pd = ibv_alloc_pd(ctx);
             mr[0] = ibv_reg_mr(pd, buf[0].data(), bytes[0], IBV_ACCESS_LOCAL_WRITE);
           }},
          {0, [&] {
             while (pr.taken.empty()) sc_core::wait(first_taken);
             mr[1] = ibv_reg_mr(pd, buf[1].data(), bytes[1], IBV_ACCESS_LOCAL_WRITE);
           }}});
  ASSERT_NE(mr[0], nullptr);
  ASSERT_NE(mr[1], nullptr);
  EXPECT_NE(mr[0]->lkey, mr[1]->lkey);
  ASSERT_EQ(pr.taken.size(), 2u);
  ASSERT_EQ(pr.done.size(), 2u);
  EXPECT_LT(pr.taken[1], pr.done[0]) << "the second REG_MR was posted while the first ran";
  EXPECT_LT(pr.done[1] - pr.done[0],
            uint64_t(cfg.firmware.dispatch_cycles + cfg.firmware.mr_cycles) * fw_cycle())
      << "its handler ran while the first one's list was read and written";
}

}  // namespace
}  // namespace rnic
