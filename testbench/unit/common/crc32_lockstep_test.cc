// crc32 lockstep: the model pin face and the Verilated RTL driven by the same random stream,
// every output compared every cycle; and the mutation check (a build with one output bit
// flipped must make the comparison fail).
#include <gtest/gtest.h>
#include <systemc.h>
#include <verilated_fst_sc.h>

#include "Vcrc32_w1.h"
#include "Vcrc32_w16.h"
#include "Vcrc32_w64.h"
#include "Vcrc32_w8.h"
#include "Vcrc32_w8_mut.h"
#include "sim/fst_trace.h"
#include "testbench/common/lockstep.h"
#include "testbench/common/trace_option.h"
#include "testbench/unit/common/crc32_tb.h"

namespace rnic::tb {
namespace {

// ~1e5 cycles per width in the CI (rtl) form.
template <int B, class V>
uint64_t lockstep(unsigned dflt_seed, size_t messages) {
  const unsigned seed = unsigned(seed_or(dflt_seed));
  std::fprintf(stderr, "crc32 lockstep: seed %u (RNIC_SEED=%u replays it)\n", seed, seed);
  std::mt19937 rng(seed);
  Crc32Stimulus st;
  messages *= size_t(lockstep_scale());
  for (size_t i = 0; i < messages; ++i)
    st.messages.push_back(random_bytes(rng, rng() % (6 * B + 40)));
  st.valid_pattern = duty_pattern(seed, 70);
  st.ready_pattern = duty_pattern(seed + 1, 80);
  Crc32Bench<B> tb("tb", st, 2);
  Crc32PinModel<B> model("model", Crc32::kPolyIeee);
  V rtl("rtl");
  tb.connect(0, model);
  tb.connect(1, rtl);
  std::unique_ptr<FstTrace> ft;
  if (trace_format() == "fst") {
    ft = std::make_unique<FstTrace>();
    tb.bundle(0).trace_fst(*ft, "tb.model_if");
    tb.bundle(1).trace_fst(*ft, "tb.rtl_if");
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    rtl.trace(&ft->file(), 99);
    ft->open(fmt::format("crc32_lockstep_w{}.fst", B));
  }
  tb.run(200000 * uint64_t(lockstep_scale()));
  write_rtl_coverage(fmt::format("crc32_w{}", B));
  EXPECT_TRUE(tb.done());
  EXPECT_EQ(tb.violations(), 0);
  return tb.mismatches();
}

TEST(Crc32Lockstep, Width1) { EXPECT_EQ((lockstep<1, Vcrc32_w1>(1, 1500)), 0u); }
TEST(Crc32Lockstep, Width8) { EXPECT_EQ((lockstep<8, Vcrc32_w8>(2, 8000)), 0u); }
TEST(Crc32Lockstep, Width16) { EXPECT_EQ((lockstep<16, Vcrc32_w16>(3, 8000)), 0u); }
TEST(Crc32Lockstep, Width64) { EXPECT_EQ((lockstep<64, Vcrc32_w64>(4, 8000)), 0u); }
TEST(Crc32Lockstep, MutantIsCaught) { EXPECT_GT((lockstep<8, Vcrc32_w8_mut>(2, 500)), 0u); }

}  // namespace
}  // namespace rnic::tb
