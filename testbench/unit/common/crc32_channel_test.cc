// The crc32 request/response channel (crc32_channel.h): the model channel and the RTL channel
// (crc32_cc.h: a crc32 Verilated in C++ mode, clocked only while it has work) take the same
// requests — random lengths,
// back-to-back beats as a transmit FCS generator sends them, sparse beats as a receive checker
// sees them at line rate — and must return the same CRC at the same cycle, the CRC being the
// reference one. The mutant build (one output bit flipped) must disagree.
#include <gtest/gtest.h>

#include <random>

#include "Vcrc32_w16.h"
#include "Vcrc32_w8_mut.h"
#include "Vcrc32cc_w16.h"
#include "Vcrc32cc_w16___024root.h"
#include "Vcrc32cc_w64.h"
#include "Vcrc32cc_w64___024root.h"
#include "Vcrc32cc_w8.h"
#include "Vcrc32cc_w8___024root.h"
#include "Vcrc32cc_w8_mut.h"
#include "Vcrc32cc_w8_mut___024root.h"
#include "models/common/crc32_cc.h"
#include "models/common/crc32_sc.h"

namespace rnic {
namespace {

struct Answer {
  uint32_t crc;
  uint64_t valid_cycle, at_ps;
};

// Requests for a channel of `bytes` per beat: lengths 0..2000, every other one with gaps of 0..3
// idle cycles between beats; messages follow each other after 0..5 idle cycles.
struct Schedule {
  std::vector<Crc32Channel::Message> msgs;
  std::vector<std::vector<uint64_t>> cycles;
};
Schedule schedule(unsigned seed, unsigned bytes, int n) {
  std::mt19937 rng(seed);
  Schedule s;
  uint64_t next = 3;
  for (int i = 0; i < n; ++i) {
    auto m = std::make_shared<std::vector<uint8_t>>(rng() % 2001);
    for (auto& b : *m) b = uint8_t(rng());
    const uint64_t beats = m->empty() ? 1 : (m->size() + bytes - 1) / bytes;
    std::vector<uint64_t> c;
    for (uint64_t b = 0; b < beats; ++b) {
      c.push_back(next);
      next += 1 + ((i % 2) ? rng() % 4 : 0);
    }
    next += rng() % 6;
    s.msgs.push_back(m);
    s.cycles.push_back(std::move(c));
  }
  return s;
}

// Both channels take every message of s in the same simulation (y only each message's last
// beat's cycle when y_last_only): their answers, side by side.
void run_both(Crc32Channel& x, Crc32Channel& y, const Schedule& s, const ClockDomain& clk,
              bool y_last_only, std::vector<Answer>* a, std::vector<Answer>* b) {
  EventQueue eq("requests");
  for (size_t i = 0; i < s.msgs.size(); ++i)
    eq.at((s.cycles[i].front() - 1) * clk.period_ps, [&, i] {
      x.request(s.msgs[i], s.cycles[i], [a](uint32_t crc, uint64_t v) {
        a->push_back({crc, v, now_ps()});
      });
      y.request(s.msgs[i], y_last_only ? std::vector<uint64_t>{s.cycles[i].back()} : s.cycles[i],
                [b](uint32_t crc, uint64_t v) {
                  b->push_back({crc, v, now_ps()});
                });
    });
  // A bounded run: the traced adapter's clock never stops.
  sc_core::sc_start(
      sc_core::sc_time(double((s.cycles.back().back() + 2000) * clk.period_ps), sc_core::SC_PS));
}

template <class RtlChannel, int BYTES>
void compare(unsigned seed, bool expect_equal) {
  const ClockDomain clk{4000};
  const Schedule s = schedule(seed, BYTES, 300);
  Crc32ModelChannel model("model", Crc32::kPolyIeee, BYTES, clk);
  RtlChannel rtl("rtl", clk);
  std::vector<Answer> a, b;
  run_both(model, rtl, s, clk, false, &a, &b);
  ASSERT_EQ(a.size(), s.msgs.size());
  ASSERT_EQ(b.size(), s.msgs.size());
  const Crc32 ref(Crc32::kPolyIeee);
  size_t differ = 0;
  for (size_t i = 0; i < s.msgs.size(); ++i) {
    EXPECT_EQ(a[i].crc, ref.compute(s.msgs[i]->data(), s.msgs[i]->size()));
    EXPECT_EQ(a[i].valid_cycle, s.cycles[i].back() + 1) << "message " << i;
    EXPECT_EQ(a[i].at_ps, a[i].valid_cycle * clk.period_ps);
    EXPECT_EQ(b[i].valid_cycle, a[i].valid_cycle) << "message " << i;
    EXPECT_EQ(b[i].at_ps, a[i].at_ps) << "message " << i;
    if (b[i].crc != a[i].crc && ++differ && expect_equal)
      ADD_FAILURE() << "message " << i << " of " << s.msgs[i]->size() << " B: rtl " << b[i].crc
                    << " model " << a[i].crc;
  }
  if (expect_equal)
    EXPECT_EQ(differ, 0u);
  else
    EXPECT_GT(differ, 0u) << "the mutant RTL agreed with the model on every message";
}

TEST(Crc32Channel, RtlMatchesModelAt16Bytes) {
  compare<Crc32CcChannel<Vcrc32cc_w16, 16>, 16>(1, true);
}
TEST(Crc32Channel, RtlMatchesModelAt64Bytes) {
  compare<Crc32CcChannel<Vcrc32cc_w64, 64>, 64>(2, true);
}
TEST(Crc32Channel, RtlMatchesModelAt8Bytes) { compare<Crc32CcChannel<Vcrc32cc_w8, 8>, 8>(3, true); }
TEST(Crc32Channel, MutantRtlDisagrees) { compare<Crc32CcChannel<Vcrc32cc_w8_mut, 8>, 8>(4, false); }
// The SystemC-mode adapter a traced run uses (crc32_sc.h), clocked in simulated time.
TEST(Crc32Channel, TracedRtlMatchesModelAt16Bytes) {
  compare<Crc32ScChannel<Vcrc32_w16, 16>, 16>(5, true);
}
TEST(Crc32Channel, TracedMutantRtlDisagrees) {
  compare<Crc32ScChannel<Vcrc32_w8_mut, 8>, 8>(6, false);
}

// A MAC gives a channel that reads only the last beat's cycle that one alone (eth_mac.cc): the
// model must answer it as it answers every beat's cycles; the RTL adapters clock each beat and
// ask for all of them.
TEST(Crc32Channel, TheModelNeedsOnlyTheLastBeatsCycle) {
  const ClockDomain clk{4000};
  const Schedule s = schedule(7, 16, 100);
  Crc32ModelChannel every("every", Crc32::kPolyIeee, 16, clk);
  Crc32ModelChannel last("last", Crc32::kPolyIeee, 16, clk);
  Crc32CcChannel<Vcrc32cc_w16, 16> rtl("rtl", clk);
  Crc32ScChannel<Vcrc32_w16, 16> traced("traced", clk);
  EXPECT_TRUE(every.last_beat_only());
  EXPECT_FALSE(rtl.last_beat_only());
  EXPECT_FALSE(traced.last_beat_only());
  std::vector<Answer> a, b;
  run_both(every, last, s, clk, true, &a, &b);
  ASSERT_EQ(a.size(), s.msgs.size());
  ASSERT_EQ(b.size(), s.msgs.size());
  for (size_t i = 0; i < s.msgs.size(); ++i) {
    EXPECT_EQ(b[i].crc, a[i].crc) << "message " << i;
    EXPECT_EQ(b[i].valid_cycle, a[i].valid_cycle) << "message " << i;
    EXPECT_EQ(b[i].at_ps, a[i].at_ps) << "message " << i;
  }
}

}  // namespace
}  // namespace rnic
