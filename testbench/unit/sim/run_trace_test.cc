// Run waveforms: the models' signals land in OUT/trace.fst inside the window, filtered by scope.
#include "sim/run_trace.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sim/host_card.h"
#include "testbench/common/fst_read.h"

namespace rnic {
namespace {

TEST(RunTrace, WindowAndScope) {
  const std::string dir = (std::filesystem::temp_directory_path() / "rnicsim_run_trace").string();
  std::filesystem::create_directories(dir);
  SystemConfig cfg;
  StatRegistry stats;
  OutputSpec o;
  o.trace = "fst";
  o.trace_window = "2000:6000";  // ns
  o.trace_scope = "pcie.*";
  RunTrace trace(o, dir);
  HostCard sys(cfg, stats);
  trace.attach(sys);
  run_host_thread(sys, "w",
                  [&] { sys.card.dmac.write(1ull << 30, std::vector<uint8_t>(128 * 1024, 1)); });
  trace.close();
  ASSERT_TRUE(trace.opened());
  const tb::FstContents c = tb::read_fst(trace.path());
  ASSERT_TRUE(c.opened);
  EXPECT_TRUE(c.vars.count("pcie.card_tx.packet"));
  EXPECT_TRUE(c.vars.count("pcie.rc_tx.credits_pd"));
  EXPECT_FALSE(c.vars.count("card_dmac.tags_in_use"));  // outside the scope filter
  // Time in ps (the SystemC resolution): inside [2 us, 6 us].
  EXPECT_GE(c.start, 2000000u);
  EXPECT_LE(c.end, 6000000u);
  EXPECT_GT(c.end, c.start);
  std::filesystem::remove_all(dir);
}

TEST(RunTrace, BadWindowIsRefused) {
  uint64_t a, b;
  EXPECT_THROW(parse_trace_window("10", "--trace-window", &a, &b), InputError);
  EXPECT_THROW(parse_trace_window("9:3", "--trace-window", &a, &b), InputError);
  EXPECT_THROW(parse_trace_window("x:3", "--trace-window", &a, &b), InputError);
  parse_trace_window(":3", "--trace-window", &a, &b);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 3000u);
}

}  // namespace
}  // namespace rnic
