// crc32: typed over the model (pin face) and the Verilated RTL at every built width.
#include <gtest/gtest.h>

#include <cstring>

#include "Vcrc32_w1.h"
#include "Vcrc32_w16.h"
#include "Vcrc32_w64.h"
#include "Vcrc32_w8.h"
#include "Vcrc32c_w8.h"
#include "testbench/unit/common/crc32_tb.h"

namespace rnic::tb {
namespace {

static_assert(crc32_ports_match<Vcrc32_w1, 1>());
static_assert(crc32_ports_match<Vcrc32_w8, 8>());
static_assert(crc32_ports_match<Vcrc32_w16, 16>());
static_assert(crc32_ports_match<Vcrc32_w64, 64>());
static_assert(crc32_ports_match<Vcrc32c_w8, 8>());

template <int B, uint32_t POLY>
struct ModelImpl {
  static constexpr int kBytes = B;
  static constexpr uint32_t kPoly = POLY;
  static std::unique_ptr<sc_core::sc_module> make(Crc32Bench<B>& tb) {
    auto m = std::make_unique<Crc32PinModel<B>>("dut", POLY);
    tb.connect(0, *m);
    return m;
  }
};

template <class V, int B, uint32_t POLY>
struct RtlImpl {
  static constexpr int kBytes = B;
  static constexpr uint32_t kPoly = POLY;
  static std::unique_ptr<sc_core::sc_module> make(Crc32Bench<B>& tb) {
    auto m = std::make_unique<V>("dut");
    tb.connect(0, *m);
    return m;
  }
};

constexpr uint32_t kIeee = Crc32::kPolyIeee;
constexpr uint32_t kC = Crc32::kPolyCastagnoli;

template <class Impl>
class Crc32Typed : public ::testing::Test {
 protected:
  static constexpr int B = Impl::kBytes;
  // Elaborates one bench around the implementation, runs it, checks protocol and latency.
  std::vector<Crc32Result> run(Crc32Stimulus stim) {
    auto messages = stim.messages;
    bool stalls = stim.ready_pattern.size() > 1 || !stim.ready_pattern[0];
    bench_ = std::make_unique<Crc32Bench<B>>("tb", std::move(stim), 1);
    dut_ = Impl::make(*bench_);
    size_t beats = 0;
    for (const auto& m : messages) beats += m.empty() ? 1 : (m.size() + B - 1) / B;
    auto results = bench_->run(20 * beats + 1000);
    EXPECT_TRUE(bench_->done()) << "results out: " << results.size() << " of " << messages.size();
    EXPECT_EQ(bench_->violations(), 0);
    for (size_t i = 0; i < results.size() && i < messages.size(); ++i) {
      EXPECT_EQ(results[i].crc, reference_crc(Impl::kPoly, messages[i]))
          << "message " << i << ", " << messages[i].size() << " bytes";
      // Latency pin: m_valid rises exactly Crc32Model::kLatency after the last beat; when the
      // previous result is still held by m_ready, the new one rises after it is taken.
      if (!stalls)
        EXPECT_EQ(results[i].rise_cycle, results[i].last_accept_cycle + Crc32Model::kLatency);
      else
        EXPECT_GE(results[i].rise_cycle, results[i].last_accept_cycle + Crc32Model::kLatency);
    }
    return results;
  }
  std::unique_ptr<Crc32Bench<B>> bench_;
  std::unique_ptr<sc_core::sc_module> dut_;
};

using Impls =
    ::testing::Types<ModelImpl<1, kIeee>, RtlImpl<Vcrc32_w1, 1, kIeee>, ModelImpl<8, kIeee>,
                     RtlImpl<Vcrc32_w8, 8, kIeee>, ModelImpl<16, kIeee>,
                     RtlImpl<Vcrc32_w16, 16, kIeee>, ModelImpl<64, kIeee>,
                     RtlImpl<Vcrc32_w64, 64, kIeee>, ModelImpl<8, kC>, RtlImpl<Vcrc32c_w8, 8, kC>>;
TYPED_TEST_SUITE(Crc32Typed, Impls);

std::vector<uint8_t> bytes_of(const char* s) { return {s, s + std::strlen(s)}; }

TYPED_TEST(Crc32Typed, KnownVectors) {
  Crc32Stimulus st;
  st.messages = {bytes_of("123456789"), std::vector<uint8_t>(32, 0x00)};
  auto r = this->run(st);
  ASSERT_EQ(r.size(), 2u);
  if (TypeParam::kPoly == kIeee) {
    EXPECT_EQ(r[0].crc, 0xCBF43926u);
  } else {
    EXPECT_EQ(r[0].crc, 0xE3069283u);
    // On the wire, least significant byte first: aa 36 91 8a.
    const uint8_t wire[4] = {uint8_t(r[1].crc), uint8_t(r[1].crc >> 8), uint8_t(r[1].crc >> 16),
                             uint8_t(r[1].crc >> 24)};
    EXPECT_EQ(wire[0], 0xaa);
    EXPECT_EQ(wire[1], 0x36);
    EXPECT_EQ(wire[2], 0x91);
    EXPECT_EQ(wire[3], 0x8a);
  }
}

TYPED_TEST(Crc32Typed, EveryLength0To300BackToBack) {
  std::mt19937 rng(7);
  Crc32Stimulus st;
  for (size_t n = 0; n <= 300; ++n) st.messages.push_back(random_bytes(rng, n));
  this->run(st);
}

TYPED_TEST(Crc32Typed, RandomValidIdlePatterns) {
  std::mt19937 rng(11);
  Crc32Stimulus st;
  for (int i = 0; i < 120; ++i) st.messages.push_back(random_bytes(rng, rng() % 200));
  st.valid_pattern = {true, true, true, false};
  st.messages.push_back(random_bytes(rng, 3 * TypeParam::kBytes));
  this->run(st);
}

TYPED_TEST(Crc32Typed, SparseValidAndBackpressure) {
  std::mt19937 rng(13);
  Crc32Stimulus st;
  for (int i = 0; i < 120; ++i) st.messages.push_back(random_bytes(rng, rng() % 150));
  st.valid_pattern = duty_pattern(3, 40);
  st.ready_pattern = duty_pattern(5, 30);
  this->run(st);
}

TEST(Crc32Model, BurstTimingIsBackToBackBeatsPlusLatency) {
  Crc32Model m(Crc32::kPolyIeee, 16);
  std::vector<uint8_t> d(33, 1);
  EXPECT_EQ(m.beats(0), 1u);
  EXPECT_EQ(m.beats(16), 1u);
  EXPECT_EQ(m.beats(17), 2u);
  auto r = m.submit(d.data(), d.size(), 100);
  EXPECT_EQ(r.valid_cycle, 100u + 3 - 1 + 1);
  EXPECT_EQ(r.crc, reference_crc(Crc32::kPolyIeee, d));
}

// Crc32 takes whole 16-byte blocks of a message of 64 bytes or more by carry-less
// multiplication where the CPU has it, CRC-32C by the CPU's crc32 instruction where it has that,
// the rest by tables: every length, alignment and running state gives the bit-serial CRC.
TEST(Crc32, EveryLengthAndStateMatchesTheBitSerialCrc) {
  std::mt19937 rng(5);
  for (uint32_t poly : {Crc32::kPolyIeee, Crc32::kPolyCastagnoli}) {
    const Crc32 crc(poly);
    for (size_t len = 0; len < 600; ++len) {
      std::vector<uint8_t> m = random_bytes(rng, len + 3);
      const size_t skew = len % 4;  // start at every alignment
      const std::vector<uint8_t> msg(m.begin() + int64_t(skew), m.begin() + int64_t(skew + len));
      ASSERT_EQ(crc.compute(m.data() + skew, len), reference_crc(poly, msg)) << len;
      // Split at an arbitrary point: the running state carries over.
      const size_t cut = len ? rng() % len : 0;
      const uint32_t mid = crc.update(Crc32::kInit, m.data() + skew, cut);
      ASSERT_EQ(~crc.update(mid, m.data() + skew + cut, len - cut), reference_crc(poly, msg))
          << len << " cut at " << cut;
    }
  }
  const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(Crc32(Crc32::kPolyIeee).compute(check, 9), 0xCBF43926u);
  EXPECT_EQ(Crc32(Crc32::kPolyCastagnoli).compute(check, 9), 0xE3069283u);
}

}  // namespace
}  // namespace rnic::tb
