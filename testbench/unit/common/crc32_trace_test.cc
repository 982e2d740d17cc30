// `--trace fst`: one FST file holds the Verilated crc32's internals and the model's channels,
// on one time base. The test writes it, then reads its hierarchy back with fstapi.
#include <gtest/gtest.h>
#include <systemc.h>
#include <verilated_fst_sc.h>

#include <filesystem>

#include "Vcrc32_w8.h"
#include "sim/fst_trace.h"
#include "testbench/common/fst_read.h"
#include "testbench/unit/common/crc32_tb.h"

namespace rnic::tb {
namespace {

TEST(Crc32Trace, OneFstHoldsRtlInternalsAndModelChannels) {
  std::mt19937 rng(3);
  Crc32Stimulus st;
  for (int i = 0; i < 40; ++i) st.messages.push_back(random_bytes(rng, rng() % 50));
  Crc32Bench<8> tb("tb", st, 2);
  Crc32PinModel<8> model("model", Crc32::kPolyIeee);
  Vcrc32_w8 rtl("rtl");
  tb.connect(0, model);
  tb.connect(1, rtl);
  FstTrace ft;
  tb.bundle(0).trace_fst(ft, "tb.model_if");
  tb.bundle(1).trace_fst(ft, "tb.rtl_if");
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  rtl.trace(&ft.file(), 99);
  const std::string path =
      (std::filesystem::temp_directory_path() / "rnicsim_crc32_trace.fst").string();
  ft.open(path);
  tb.run(5000);
  ft.close();
  ASSERT_TRUE(tb.done());
  EXPECT_EQ(tb.mismatches(), 0u);

  const FstContents c = read_fst(path);
  ASSERT_TRUE(c.opened);
  EXPECT_GT(c.end, 0u);
  EXPECT_GT(c.change_sections, 0u);
  std::string all;
  for (const auto& [v, bits] : c.vars) all += v + " ";
  // RTL internals (registers) and the model-side channels.
  for (const char* v : {"rtl.crc32.state_reg", "rtl.crc32.out_valid_reg", "tb.model_if.m_crc",
                        "tb.model_if.s_data", "tb.rtl_if.s_ready"})
    EXPECT_TRUE(c.vars.count(v)) << v << " not in " << all;
  ASSERT_TRUE(c.vars.count("tb.model_if.s_cnt"));
  EXPECT_EQ(c.vars.at("tb.model_if.s_cnt"), 4u);  // the port list's width, not the C++ type's
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rnic::tb
