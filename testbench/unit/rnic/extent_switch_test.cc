// The firmware's extent switch (models/rnic/firmware/extent_switch.h, firmware.extent_switch
// "firmware"): a translation over a scatter-gather handle answers
// firmware.extent_switch_cycles firmware cycles later per extent boundary inside its range than
// xlat alone, with the same chunks; a range with no boundary inside, a check request and an
// STag the firmware did not register pass straight through. With the firmware's processor
// hooked in, the switches are its work and the answer waits for it.
#include "models/rnic/firmware/extent_switch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <systemc>

#include "models/common/stats.h"

namespace rnic {
namespace {

// SMT entry 1 (key 7, PD 1): a handle of three 1000-byte extents, known to the switch too.
bool three_extents(XlatModelChannel& xlat, ExtentSwitchXlat& sw) {
  SmtEntry e;
  e.state = SmtEntry::State::kValid;
  e.key = 7;
  e.type = SmtEntry::Type::kSgHandle;
  e.access = abi::access::kRemoteWrite;
  e.pd = 1;
  e.length = 3000;
  e.pbl_count = 3;
  if (!xlat.write_pbl(0, {{0x10000, 1000}, {0x20000, 1000}, {0x30000, 1000}}) ||
      !xlat.write_smt(1, e))
    return false;
  sw.learn(1, 0, {1000, 1000, 1000});
  return true;
}

TEST(ExtentSwitch, EachBoundaryInsideTheRangeCostsTheFirmwareCycles) {
  const ClockDomain core = ClockDomain::mhz(250), fw = ClockDomain::mhz(200);
  XlatModelChannel xlat("xlat", 16, 64, core);
  EventQueue own("own"), to("to");
  StatRegistry stats;
  Counter& switches = stats.group("fw").counter("extent_switches", "", "");
  constexpr uint64_t kCycles = 20;
  ExtentSwitchXlat sw(xlat, own, fw, kCycles, switches);
  ASSERT_TRUE(three_extents(xlat, sw));
  const uint32_t stag = abi::make_stag(1, 7);
  struct Case {
    XlatRequest r;
    uint64_t boundaries;
  };
  const Case cases[] = {
      {{stag, 500, 2000, abi::access::kRemoteWrite, 1}, 2},        // crosses 1000 and 2000
      {{stag, 0, 1000, abi::access::kRemoteWrite, 1}, 0},          // ends on a boundary
      {{stag, 999, 2, abi::access::kRemoteWrite, 1}, 1},           // one byte either side
      {{stag, 500, 2000, abi::access::kRemoteWrite, 1, true}, 0},  // a check request
  };
  // Each case alone, from t = 0 of its own slot: xlat's answer, then through the firmware.
  std::vector<uint64_t> plain, firm;
  std::vector<std::vector<XlatChunk>> plain_chunks, firm_chunks;
  uint64_t slot = 0;
  for (const Case& c : cases) {
    for (bool through : {false, true}) {
      const uint64_t t0 = (slot++) * 1'000'000;
      to.at(t0, [&, c, through, t0] {
        XlatChannel& ch = through ? static_cast<XlatChannel&>(sw) : xlat;
        ch.request(c.r, to, [&, through, t0](XlatResult&& x) {
          EXPECT_EQ(x.status, XlatStatus::kOk);
          (through ? firm : plain).push_back(now_ps() - t0);
          (through ? firm_chunks : plain_chunks).push_back(x.chunks);
        });
      });
    }
  }
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));
  ASSERT_EQ(plain.size(), 4u);
  ASSERT_EQ(firm.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(firm[i] - plain[i], cases[i].boundaries * kCycles * fw.period_ps) << "case " << i;
    ASSERT_EQ(firm_chunks[i].size(), plain_chunks[i].size());
    for (size_t k = 0; k < plain_chunks[i].size(); ++k) {
      EXPECT_EQ(firm_chunks[i][k].pa, plain_chunks[i][k].pa);
      EXPECT_EQ(firm_chunks[i][k].len, plain_chunks[i][k].len);
    }
  }
  EXPECT_EQ(switches.value, 3u);
  EXPECT_EQ(sw.switches(abi::make_stag(2, 7), 500, 2000), 0u) << "not a handle it registered";
  sw.forget(1);
  EXPECT_EQ(sw.switches(stag, 500, 2000), 0u);
}

// With the processor hooked in (Firmware::occupy), a translation's switches are work handed to
// it: n x extent_switch_cycles, and the answer comes when the processor is done with them, here
// after a piece of 5 us it was running already.
TEST(ExtentSwitch, WithTheProcessorTheAnswerWaitsForIt) {
  const ClockDomain core = ClockDomain::mhz(250), fw = ClockDomain::mhz(200);
  XlatModelChannel xlat("xlat", 16, 64, core);
  EventQueue own("own"), to("to");
  StatRegistry stats;
  Counter& switches = stats.group("fw").counter("extent_switches", "", "");
  constexpr uint64_t kCycles = 20, kBusyPs = 5'000'000;
  ExtentSwitchXlat sw(xlat, own, fw, kCycles, switches);
  std::vector<uint64_t> asked;
  sw.occupy = [&](uint64_t cycles, std::function<void()> done) {
    asked.push_back(cycles);
    own.at(std::max(now_ps(), kBusyPs) + cycles * fw.period_ps, std::move(done));
  };
  ASSERT_TRUE(three_extents(xlat, sw));
  uint64_t answered = 0;
  to.at(0, [&] {
    sw.request({abi::make_stag(1, 7), 500, 2000, abi::access::kRemoteWrite, 1}, to,
               [&](XlatResult&& x) {
                 EXPECT_EQ(x.status, XlatStatus::kOk);
                 EXPECT_EQ(x.chunks.size(), 3u);
                 answered = now_ps();
               });
  });
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));
  ASSERT_EQ(asked, std::vector<uint64_t>{2 * kCycles});
  EXPECT_EQ(answered, kBusyPs + 2 * kCycles * fw.period_ps);
}

}  // namespace
}  // namespace rnic
