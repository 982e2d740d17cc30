// PCIe: exact link rates, TLP wire cost, TLP/DLLP counts of an 8 KiB write and read counted by
// hand, credits, BAR decode and UR, holes, completion timeout, 4 KiB and MPS/MRRS splits.
#include <gtest/gtest.h>

#include "sim/host_card.h"

namespace rnic::pcie {
namespace {

TEST(LinkRate, ExactByteTimes) {
  ByteClock g1x1(LinkRate::of(1, 1));
  EXPECT_EQ(g1x1.ps_for(1), 4000u);  // 2.5 GT/s, 8b/10b: 10 bits of 400 ps
  ByteClock g4x1(LinkRate::of(4, 1));
  // 507.8125 ps per byte: the remainder carries, nothing drifts.
  EXPECT_EQ(g4x1.ps_for(1), 507u);
  EXPECT_EQ(g4x1.ps_for(1), 508u);
  EXPECT_EQ(g4x1.ps_for(14), 7110u);  // 16 bytes in all = 8125 ps exactly
  ByteClock g4x1b(LinkRate::of(4, 1));
  EXPECT_EQ(g4x1b.ps_for(1000000), 507812500u);
  EXPECT_NEAR(LinkRate::of(3, 8).gbps_raw(), 63.015, 0.001);
  EXPECT_NEAR(LinkRate::of(4, 16).gbps_raw(), 252.06, 0.01);
}

TEST(Tlp, WireBytes) {
  EXPECT_EQ(tlp_wire_bytes(256, 12, 1), 256u + 12 + 2 + 4 + 2);
  EXPECT_EQ(tlp_wire_bytes(256, 12, 3), 256u + 12 + 2 + 4 + 4);
  Tlp t;
  t.type = TlpType::kMWr;
  t.addr = 0x1002;
  t.len = 5;  // touches 2 DWs
  EXPECT_EQ(t.payload_wire_bytes(), 8u);
  EXPECT_EQ(t.header_bytes(), 12u);
  t.addr = 5ull << 32;
  EXPECT_EQ(t.header_bytes(), 16u);
  EXPECT_NEAR(tlp_limit_gbps(3, 8, 256, 256), 63.015 * 256 / 278, 0.01);
  EXPECT_NEAR(tlp_limit_gbps(3, 8, 256, 600), 63.015 * 600 / (600 + 3 * 22), 0.01);  // 3 TLPs
}

struct Bench {
  SystemConfig cfg;
  StatRegistry stats;
  std::unique_ptr<HostCard> sys;
  explicit Bench(void (*tweak)(SystemConfig&) = nullptr) {
    // Batching by count only: the hand count below does not depend on timers.
    cfg.pcie.ack_timer_ns = 100000;
    cfg.pcie.updatefc_timer_ns = 100000;
    if (tweak) tweak(cfg);
    sys = std::make_unique<HostCard>(cfg, stats);
  }
  uint64_t value(const std::string& group, const std::string& name) {
    return stats.group(group).counter(name, "", "").value;
  }
};

// A credit release at the very time the UpdateFC timer is due comes after the timer, whichever
// runs first: the timer's UpdateFC returns the credit owed before, the release starts the next
// timer (two UpdateFCs). Here the release is made before the kernel has run the timer's event
// (sc_start stops before the events of the time it reaches); the other order gives the same.
TEST(PcieCredits, AReleaseWhenTheUpdateFcTimerIsDueGoesInTheNextUpdateFc) {
  PcieConfig c;
  c.updatefc_factor = 100;  // only the timer sends UpdateFCs
  c.updatefc_timer_ns = 1000;
  StatRegistry stats;
  PcieLink link("link", c, stats);
  link.set_receiver(PcieLink::kRc, [](Tlp&&) {});
  link.set_receiver(PcieLink::kCard, [](Tlp&&) {});
  link.release(PcieLink::kCard, FcClass::kPosted, 1);  // at 0: the timer is due at 1 us
  sc_core::sc_start(1000, sc_core::SC_NS);
  ASSERT_EQ(sc_core::sc_time_stamp().value(), 1000000u);
  EXPECT_EQ(link.count_updatefcs(PcieLink::kCard), 0u) << "the timer has not run yet";
  link.release(PcieLink::kCard, FcClass::kPosted, 1);
  sc_core::sc_start(500, sc_core::SC_NS);
  EXPECT_EQ(link.count_updatefcs(PcieLink::kCard), 1u) << "the first credit, at 1 us";
  sc_core::sc_start(1000, sc_core::SC_NS);
  EXPECT_EQ(link.count_updatefcs(PcieLink::kCard), 2u) << "the second, a timer later";
}

// TLPs one side is given in the same delta by two processes queue in the order of the senders'
// names, whatever order the kernel runs them in (docs/decisions.md, "Determinism between hosts").
// "z_sender" is made first, so the kernel runs it first.
TEST(PcieLinkOrder, SameDeltaTlpsQueueInTheOrderOfTheSendersNames) {
  PcieConfig c;
  StatRegistry stats;
  PcieLink link("link", c, stats);
  std::vector<uint64_t> got, sent;
  link.set_receiver(PcieLink::kRc, [&got](Tlp&& t) { got.push_back(t.addr); });
  link.set_receiver(PcieLink::kCard, [](Tlp&&) {});
  auto sender = [&link, &sent](uint64_t addr) {
    return [&link, &sent, addr] {
      sc_core::wait(1, sc_core::SC_NS);
      Tlp t;
      t.type = TlpType::kMWr;
      t.addr = addr;
      t.len = 4;
      t.data.resize(4);
      sent.push_back(addr);
      link.send(PcieLink::kCard, std::move(t));
    };
  };
  sc_core::sc_spawn(sender(0x2000), "z_sender");
  sc_core::sc_spawn(sender(0x1000), "a_sender");
  sc_core::sc_start(1, sc_core::SC_US);
  ASSERT_EQ(sent, (std::vector<uint64_t>{0x2000, 0x1000})) << "the kernel ran z_sender first";
  EXPECT_EQ(got, (std::vector<uint64_t>{0x1000, 0x2000})) << "a_sender's TLP goes first";
}

// A receiver that holds TLPs (the root complex: its write and read latencies) takes each one its
// type's hold after the arrival, and in that order: an MRd held less goes before the MWr sent
// ahead of it. The ACKs the arrivals owe do not move.
TEST(PcieLinkHold, AReceiverTakesEachTlpItsHoldAfterItsArrival) {
  PcieConfig c;
  c.ack_factor = 2;
  StatRegistry stats;
  PcieLink plain("plain", c, stats), held("held", c, stats);
  struct Got {
    uint64_t t;
    TlpType type;
  };
  std::vector<Got> at_plain, at_held;
  plain.set_receiver(PcieLink::kRc, [&](Tlp&& t) { at_plain.push_back({now_ps(), t.type}); });
  held.set_receiver(PcieLink::kRc,
                    [&](Tlp&& t) {
                      at_held.push_back({now_ps(), t.type});
                    },
                    {500000, 100000, 0, 0});
  for (PcieLink* l : {&plain, &held}) l->set_receiver(PcieLink::kCard, [](Tlp&&) {});
  sc_core::sc_spawn([&] {
    sc_core::wait(1, sc_core::SC_NS);
    for (PcieLink* l : {&plain, &held}) {
      Tlp w;
      w.type = TlpType::kMWr;
      w.len = 256;
      w.data.resize(256);
      l->send(PcieLink::kCard, std::move(w));
      Tlp r;
      r.type = TlpType::kMRd;
      r.len = 512;
      l->send(PcieLink::kCard, std::move(r));
    }
  });
  sc_core::sc_start(2, sc_core::SC_US);
  ASSERT_EQ(at_plain.size(), 2u);
  ASSERT_EQ(at_held.size(), 2u);
  EXPECT_EQ(at_plain[0].type, TlpType::kMWr);
  EXPECT_LT(at_plain[0].t, at_plain[1].t);
  EXPECT_EQ(at_held[0].type, TlpType::kMRd) << "held 400 ns less than the MWr";
  EXPECT_EQ(at_held[0].t, at_plain[1].t + 100000);
  EXPECT_EQ(at_held[1].type, TlpType::kMWr);
  EXPECT_EQ(at_held[1].t, at_plain[0].t + 500000);
  EXPECT_EQ(held.count_acks(PcieLink::kRc), 1u);
  EXPECT_EQ(plain.count_acks(PcieLink::kRc), 1u);
}

// TLPs a receiver says it takes later do not wake it: they come with the next one that does, or
// when it asks (take_arrived), each with its arrival time.
TEST(PcieLinkLater, TlpsTakenLaterComeWithTheNextWakeOrWhenAsked) {
  PcieConfig c;
  StatRegistry stats;
  PcieLink link("link", c, stats);
  struct Got {
    uint64_t now, at, addr;
  };
  std::vector<Got> got;
  link.set_receiver(PcieLink::kCard, [&](Tlp&& t) {
    got.push_back({now_ps(), link.taken_at(), t.addr});
  });
  link.set_receiver(PcieLink::kRc, [](Tlp&&) {});
  link.set_later(PcieLink::kCard, [](const Tlp& t) { return t.addr != 0x2000; });
  auto send = [&link](uint64_t addr) {
    Tlp t;
    t.type = TlpType::kCplD;
    t.addr = addr;
    t.len = 64;
    t.byte_count = 64;
    t.data.resize(64);
    link.send(PcieLink::kRc, std::move(t));
  };
  sc_core::sc_spawn([&] {
    sc_core::wait(1, sc_core::SC_NS);
    send(0x1000);
    send(0x2000);
    sc_core::wait(1, sc_core::SC_US);
    send(0x3000);
  });
  sc_core::sc_start(2, sc_core::SC_US);
  ASSERT_EQ(got.size(), 2u) << "0x3000 waits to be asked for";
  EXPECT_EQ(got[0].addr, 0x1000u);
  EXPECT_EQ(got[1].addr, 0x2000u);
  EXPECT_EQ(got[0].now, got[1].at) << "taken at 0x2000's arrival";
  EXPECT_LT(got[0].at, got[1].at);
  EXPECT_EQ(got[1].now, got[1].at);
  link.take_arrived(PcieLink::kCard, 1001000);
  EXPECT_EQ(got.size(), 2u) << "0x3000 had not arrived by then";
  link.take_arrived(PcieLink::kCard, now_ps());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].addr, 0x3000u);
  EXPECT_GT(got[2].at, 1001000u) << "its arrival, after it was sent";
  EXPECT_LT(got[2].at, 2000000u);
  EXPECT_EQ(got[2].now, 2000000u);
}

// rnic-10g: Gen3 x8, MPS 256, MRRS 512, RCB 64, ACK every 4 TLPs, UpdateFC every 8 released.
// 8 KiB write at a 4 KiB-aligned address:
//   card -> RC: 8192 / 256 = 32 MWr, no DLLP (nothing flows the other way);
//   RC -> card: 32 / 4 = 8 ACK, 32 / 8 = 4 UpdateFC (posted).
TEST(PcieCount, EightKiBWrite) {
  Bench b;
  run_host_thread(*b.sys, "w",
                  [&] { b.sys->card.dmac.write(1ull << 30, std::vector<uint8_t>(8192, 0x5a)); });
  EXPECT_EQ(b.sys->link.count_tlps(PcieLink::kCard), 32u);
  EXPECT_EQ(b.sys->link.count_acks(PcieLink::kCard), 0u);
  EXPECT_EQ(b.sys->link.count_updatefcs(PcieLink::kCard), 0u);
  EXPECT_EQ(b.sys->link.count_tlps(PcieLink::kRc), 0u);
  EXPECT_EQ(b.sys->link.count_acks(PcieLink::kRc), 8u);
  EXPECT_EQ(b.sys->link.count_updatefcs(PcieLink::kRc), 4u);
  EXPECT_EQ(b.value("pcie.card_tx", "tlp_wire_bytes"), 32u * 278);
  // Timing: the write reaches the DMAC at edge 2 (if_cycles = 2, 4 ns each) and its 32-B data
  // beats at edges 2..257; the first MWr (beats 0-7, in by edge 9) is loaded at edge 10, its
  // beats are taken at edges 11..18 and it enters the link at edge 18 (72 ns). The DMAC then
  // offers an MWr every 8 edges (32 ns), faster than the link takes them: 32 TLPs of 278 B at
  // 126.953125 ps/B back to back = 1129375 ps, + 60 ns link + 40 ns write.
  EXPECT_EQ(b.sys->rc.last_write_ps(), 72000u + 1129375u + 60000u + 40000u);
  uint8_t v = 0;
  b.sys->mem.read((1ull << 30) + 8191, &v, 1);
  EXPECT_EQ(v, 0x5a);
}

// 8 KiB read: card -> RC: 8192 / 512 = 16 MRd; RC -> card: each 512 B request in MPS-sized
// completions = 2 CplD each = 32 CplD.
//   RC -> card DLLPs: 16 / 4 = 4 ACK, 16 / 8 = 2 UpdateFC (non-posted);
//   card -> RC DLLPs: 32 / 4 = 8 ACK, no UpdateFC (completion credits are infinite).
TEST(PcieCount, EightKiBRead) {
  Bench b;
  std::vector<uint8_t> pattern(8192);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint8_t(i ^ (i >> 8));
  b.sys->mem.write(1ull << 30, pattern.data(), pattern.size());
  std::vector<uint8_t> got;
  DmacStatus st = DmacStatus::kAbort;
  run_host_thread(*b.sys, "r", [&] {
    b.sys->card.dmac.read(1ull << 30, 8192, [&](DmacStatus s, std::vector<uint8_t>&& d) {
      st = s;
      got = std::move(d);
    });
  });
  EXPECT_EQ(st, DmacStatus::kOk);
  EXPECT_EQ(got, pattern);
  EXPECT_EQ(b.sys->link.count_tlps(PcieLink::kCard), 16u);
  EXPECT_EQ(b.sys->link.count_tlps(PcieLink::kRc), 32u);
  EXPECT_EQ(b.sys->link.count_acks(PcieLink::kRc), 4u);
  EXPECT_EQ(b.sys->link.count_updatefcs(PcieLink::kRc), 2u);
  EXPECT_EQ(b.sys->link.count_acks(PcieLink::kCard), 8u);
  EXPECT_EQ(b.sys->link.count_updatefcs(PcieLink::kCard), 0u);
}

// With one tag, reads follow tags x MRRS / round trip, not the link. One 512 B request's cycle
// on rnic-10g: MRd 22 B (2792.97 ps) + 60 ns + 90 ns memory + 2 CplD of 278 B (2 x 35292.97 ps)
// + 60 ns = 283378.9 ps from the MRd's edge to the last CplD's arrival; the DMAC takes its first
// beat at the next edge (71 edges after the MRd) and its 8th 7 edges later, which frees the tag;
// the next MRd is loaded at the edge after and enters the link when taken at the one after that:
// 80 edges = 320 ns per request; 64 KiB = 128 requests back to back.
TEST(PcieReadBound, TagsTimesMrrsOverRoundTrip) {
  Bench b([](SystemConfig& c) { c.pcie.tags = 1; });
  uint64_t t0 = 0, t1 = 0;
  run_host_thread(*b.sys, "r", [&] {
    t0 = now_ps();
    b.sys->card.dmac.read(1ull << 30, 65536,
                          [&](DmacStatus, std::vector<uint8_t>&&) { t1 = now_ps(); });
  });
  const double cycle_ps = 80 * 4000;
  const double expect_gbps = 8.0 * 512 / cycle_ps * 1000;
  const double got_gbps = 8.0 * 65536 / double(t1 - t0) * 1000;
  EXPECT_NEAR(got_gbps, expect_gbps, 0.01 * expect_gbps);
  EXPECT_LT(got_gbps, 0.3 * tlp_limit_gbps(3, 8, 256, 65536));
}

// With pcie.if_cycles 0 a read made in another read's callback (at the edge that finished the
// first, which the DMAC has clocked) is taken at the next edge, and both return their bytes.
TEST(PcieDmac, ZeroIfCyclesRequestAtAClockedEdge) {
  Bench b([](SystemConfig& c) { c.pcie.if_cycles = 0; });
  std::vector<uint8_t> pattern(128);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = uint8_t(i * 3 + 1);
  b.sys->mem.write(1ull << 30, pattern.data(), pattern.size());
  std::vector<uint8_t> first, second;
  run_host_thread(*b.sys, "r", [&] {
    b.sys->card.dmac.read(1ull << 30, 64, [&](DmacStatus st, std::vector<uint8_t>&& d) {
      EXPECT_EQ(st, DmacStatus::kOk);
      first = std::move(d);
      b.sys->card.dmac.read((1ull << 30) + 64, 64, [&](DmacStatus s2, std::vector<uint8_t>&& d2) {
        EXPECT_EQ(s2, DmacStatus::kOk);
        second = std::move(d2);
      });
    });
  });
  EXPECT_EQ(first, std::vector<uint8_t>(pattern.begin(), pattern.begin() + 64));
  EXPECT_EQ(second, std::vector<uint8_t>(pattern.begin() + 64, pattern.end()));
}

TEST(PcieSplit, FourKiBBoundaryAndMps) {
  Bench b;
  run_host_thread(*b.sys, "w", [&] {
    b.sys->card.dmac.write((1ull << 30) + 4000, std::vector<uint8_t>(600, 1));
  });
  // 4000..4095 (96 B), then 4096..4351 (256 B, MPS), then 4352..4599 (248 B).
  EXPECT_EQ(b.sys->link.count_tlps(PcieLink::kCard), 3u);
}

TEST(PcieCredits, FewPostedCreditsStallButDeliverEverything) {
  Bench b([](SystemConfig& c) {
    c.pcie.rc_ph = 2;
    c.pcie.rc_pd = 32;
    c.pcie.updatefc_factor = 1;
  });
  run_host_thread(*b.sys, "w",
                  [&] { b.sys->card.dmac.write(1ull << 30, std::vector<uint8_t>(64 * 1024, 3)); });
  EXPECT_EQ(b.value("rc", "dma_write_bytes"), 65536u);
  EXPECT_GT(b.value("pcie.card_tx", "credit_stalls"), 0u);
}

TEST(PcieMmio, BarsDecodeAndUnknownRegistersAreUnsupported) {
  Bench b;
  std::vector<uint8_t> id, bad, outside;
  CplStatus s_bad = CplStatus::kSc, s_out = CplStatus::kSc;
  run_host_thread(*b.sys, "m", [&] {
    id = b.sys->rc.mmio_read(b.sys->bar0 + reg::kId, 4);
    bad = b.sys->rc.mmio_read(b.sys->bar0 + 0x0ffc, 4, &s_bad);
    outside = b.sys->rc.mmio_read(b.sys->bar0 + (8 << 20), 4, &s_out);
    b.sys->rc.mmio_write(b.sys->bar0 + reg::kScratch, {0x78, 0x56, 0x34, 0x12});
  });
  ASSERT_EQ(id.size(), 4u);
  EXPECT_EQ(id[0] | id[1] << 8 | id[2] << 16 | uint32_t(id[3]) << 24, reg::kIdValue);
  EXPECT_TRUE(bad.empty());
  EXPECT_EQ(s_bad, CplStatus::kUr);
  EXPECT_EQ(s_out, CplStatus::kUr);
  uint8_t v[4];
  ASSERT_TRUE(b.sys->card.regs.reg_read(0, reg::kScratch, 4, v));
  EXPECT_EQ(v[3], 0x12);
  EXPECT_EQ(b.value("card_pcie", "mmio_ur"), 2u);
}

// MMIO read latency on rnic-10g, by hand (each direction has its own byte clock):
//   t = 0        the thread issues; 45 ns to the root complex
//   45000        MRd, 22 B (12 B header + 2 + 4 + 4) x 126.953125 ps = 2792 ps on the wire
//   107792       + 60 ns: at the card; next core edge 108000, + (2 + 4 + 2) cycles x 4 ns
//   140000       CplD, 26 B (4 B payload) = 3300 ps on the wire
//   203300       + 60 ns: at the root complex; + 25 ns until the load retires
//   228300
TEST(PcieMmio, ReadLatencyIsTheSumOfItsParts) {
  Bench b;
  uint64_t t = 0;
  run_host_thread(*b.sys, "m", [&] {
    const uint64_t t0 = now_ps();
    b.sys->rc.mmio_read(b.sys->bar0 + reg::kId, 4);
    t = now_ps() - t0;
  });
  EXPECT_EQ(t, 228300u);
}

void hole_behaviour(SystemConfig& c, const char* how) {
  c.pcie.cpl_timeout_us = 10;
  c.host.hole_behaviour = how;
}

TEST(PcieHoles, ReadOfAHoleIsUnsupported) {
  Bench b([](SystemConfig& c) { hole_behaviour(c, "ur"); });
  DmacStatus st = DmacStatus::kOk;
  run_host_thread(*b.sys, "h", [&] {
    b.sys->card.dmac.read(b.sys->bar0, 64, [&](DmacStatus s, std::vector<uint8_t>&&) { st = s; });
    b.sys->card.dmac.write(b.sys->bar0, std::vector<uint8_t>(64, 9));
  });
  EXPECT_EQ(st, DmacStatus::kUnsupported);
  EXPECT_EQ(b.value("rc", "ur_reads"), 1u);
  EXPECT_EQ(b.value("rc", "dropped_writes"), 1u);
}

TEST(PcieHoles, ReadOfAHoleTimesOut) {
  Bench b([](SystemConfig& c) { hole_behaviour(c, "timeout"); });
  DmacStatus st = DmacStatus::kOk;
  uint64_t done_at = 0;
  run_host_thread(*b.sys, "h", [&] {
    b.sys->card.dmac.read(b.sys->bar0, 64, [&](DmacStatus s, std::vector<uint8_t>&&) {
      st = s;
      done_at = now_ps();
    });
  });
  EXPECT_EQ(st, DmacStatus::kTimeout);
  EXPECT_GE(done_at, 10000000u);
  EXPECT_LT(done_at, 10100000u);
  EXPECT_EQ(b.value("card_dmac", "cpl_timeouts"), 1u);
  EXPECT_EQ(b.value("rc", "unanswered_reads"), 1u);
}

// A timeout longer than the check's 10 us step (PcieIf::kTimeoutStepPs) still fires at its
// deadline, and a second read issued while the first waits keeps its own deadline.
TEST(PcieHoles, LongTimeoutFiresAtItsDeadline) {
  Bench b([](SystemConfig& c) {
    hole_behaviour(c, "timeout");
    c.pcie.cpl_timeout_us = 35;
  });
  std::vector<uint64_t> done_at;
  run_host_thread(*b.sys, "h", [&] {
    auto cb = [&](DmacStatus s, std::vector<uint8_t>&&) {
      EXPECT_EQ(s, DmacStatus::kTimeout);
      done_at.push_back(now_ps());
    };
    b.sys->card.dmac.read(b.sys->bar0, 64, cb);
    sc_core::wait(sc_core::sc_time(12, sc_core::SC_US));
    b.sys->card.dmac.read(b.sys->bar0, 64, cb);
  });
  ASSERT_EQ(done_at.size(), 2u);
  EXPECT_GE(done_at[0], 35000000u);
  EXPECT_LT(done_at[0], 35100000u);
  EXPECT_GE(done_at[1], 47000000u);
  EXPECT_LT(done_at[1], 47100000u);
  EXPECT_EQ(b.value("card_dmac", "cpl_timeouts"), 2u);
}

}  // namespace
}  // namespace rnic::pcie

namespace rnic::pcie {
namespace {

// A DMA read of a hole that never answers, with a completion timeout longer than the watchdog:
// nothing moves for sim.watchdog_us, the run is stopped with the state of every queue.
TEST(Watchdog, NoProgressStopsTheRunWithAStateDump) {
  Bench b([](SystemConfig& c) {
    c.host.hole_behaviour = "timeout";
    c.pcie.cpl_timeout_us = 100000;
    c.sim.watchdog_us = 50;
  });
  bool answered = false;
  try {
    run_host_thread(*b.sys, "h", [&] {
      sc_core::sc_event done;
      b.sys->card.dmac.read(b.sys->bar0, 64, [&](DmacStatus, std::vector<uint8_t>&&) {
        answered = true;
        done.notify();
      });
      sc_core::wait(done);
    });
    FAIL() << "the watchdog did not fire";
  } catch (const HungError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no progress for 50 us"), std::string::npos) << what;
    EXPECT_NE(what.find("tags in use 1"), std::string::npos) << what;
    EXPECT_LT(sc_core::sc_time_stamp().to_seconds(), 100e-6);
  }
  EXPECT_FALSE(answered);
}

TEST(Watchdog, AThreadWaitingForNothingIsReported) {
  Bench b;
  try {
    run_host_thread(*b.sys, "stuck", [&] {
      sc_core::sc_event never;
      sc_core::wait(never);
    });
    FAIL() << "a stuck thread went unnoticed";
  } catch (const HungError& e) {
    EXPECT_NE(std::string(e.what()).find("host thread 'stuck' not finished"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rnic::pcie
