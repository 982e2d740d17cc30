// `--trace fst`: one FST file holds the Verilated crc32's internals and the model's channels,
// on one time base. The test writes it, then reads its hierarchy back with fstapi.
#include <gtest/gtest.h>
#include <gtkwave/fstapi.h>
#include <systemc.h>
#include <verilated_fst_sc.h>

#include <filesystem>
#include <set>

#include "Vcrc32_w8.h"
#include "sim/fst_trace.h"
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

  void* r = fstReaderOpen(path.c_str());
  ASSERT_NE(r, nullptr);
  std::set<std::string> vars;
  uint32_t cnt_bits = 0;
  std::vector<std::string> scope;
  while (fstHier* h = fstReaderIterateHier(r)) {
    if (h->htyp == FST_HT_SCOPE) scope.push_back(h->u.scope.name);
    if (h->htyp == FST_HT_UPSCOPE) scope.pop_back();
    if (h->htyp == FST_HT_VAR) {
      std::string full;
      for (const auto& s : scope) full += s + ".";
      std::string name = h->u.var.name;  // "m_crc [31:0]": the range follows a space
      vars.insert(full + name.substr(0, name.find(' ')));
      if (full + name.substr(0, name.find(' ')) == "tb.model_if.s_cnt") cnt_bits = h->u.var.length;
    }
  }
  EXPECT_GT(fstReaderGetEndTime(r), 0u);
  EXPECT_GT(fstReaderGetValueChangeSectionCount(r), 0u);
  fstReaderClose(r);
  std::string all;
  for (const auto& v : vars) all += v + " ";
  // RTL internals (registers and next-state logic) and the model-side channels.
  EXPECT_TRUE(vars.count("rtl.crc32.state_reg")) << all;
  EXPECT_TRUE(vars.count("rtl.crc32.out_crc_next")) << all;
  EXPECT_TRUE(vars.count("tb.model_if.m_crc")) << all;
  EXPECT_TRUE(vars.count("tb.model_if.s_data")) << all;
  EXPECT_TRUE(vars.count("tb.rtl_if.s_ready")) << all;
  EXPECT_EQ(cnt_bits, 4u);  // the port list's width, not the C++ type's
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace rnic::tb
