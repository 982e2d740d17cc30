// Run waveforms: the models' signals land in OUT/trace.fst inside the window, filtered by scope.
#include "sim/run_trace.h"

#include <gtest/gtest.h>
#include <gtkwave/fstapi.h>

#include <filesystem>
#include <set>

#include "sim/host_card.h"

namespace rnic {
namespace {

std::set<std::string> read_vars(const std::string& path, uint64_t* start, uint64_t* end) {
  void* r = fstReaderOpen(path.c_str());
  EXPECT_NE(r, nullptr);
  std::set<std::string> vars;
  if (!r) return vars;
  std::vector<std::string> scope;
  while (fstHier* h = fstReaderIterateHier(r)) {
    if (h->htyp == FST_HT_SCOPE) scope.push_back(h->u.scope.name);
    if (h->htyp == FST_HT_UPSCOPE) scope.pop_back();
    if (h->htyp == FST_HT_VAR) {
      std::string full;
      for (const auto& s : scope) full += s + ".";
      const std::string n = h->u.var.name;
      vars.insert(full + n.substr(0, n.find(' ')));
    }
  }
  *start = fstReaderGetStartTime(r);
  *end = fstReaderGetEndTime(r);
  fstReaderClose(r);
  return vars;
}

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
                  [&] { sys.card_if.dma_write(1ull << 30, std::vector<uint8_t>(128 * 1024, 1)); });
  trace.close();
  ASSERT_TRUE(trace.opened());
  uint64_t start = 0, end = 0;
  auto vars = read_vars(trace.path(), &start, &end);
  EXPECT_TRUE(vars.count("pcie.card_tx.packet"));
  EXPECT_TRUE(vars.count("pcie.rc_tx.credits_pd"));
  EXPECT_FALSE(vars.count("card_pcie.tags_in_use"));  // outside the scope filter
  // Time in ps (the SystemC resolution): inside [2 us, 6 us].
  EXPECT_GE(start, 2000000u);
  EXPECT_LE(end, 6000000u);
  EXPECT_GT(end, start);
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
