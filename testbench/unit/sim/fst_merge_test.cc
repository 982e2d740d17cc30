// Merging the ranks' waveforms (sim/fst_merge.h): variables in the given order with their scopes,
// aliases kept, bits and reals carried, every change in time order, the last time kept, the
// spill files gone; a part that cannot be read is named.
#include "sim/fst_merge.h"

#include <gtest/gtest.h>
#include <gtkwave/fstapi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "testbench/common/fst_read.h"

namespace rnic {
namespace {

namespace fs = std::filesystem;

// A folder of this test's own, removed when the test binary ends.
fs::path dir() {
  struct Dir {
    fs::path p = fs::temp_directory_path() / ("fst_merge_test." + std::to_string(::getpid()));
    Dir() { fs::create_directories(p); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  };
  static const Dir d;
  return d.p;
}

// Part A: host h1's 8-bit `count` under h1.mac, the same signal again under h1.copy (an alias),
// a real `rate` under h1, changes at 0, 10 and 30 ns; its end at 40 ns.
std::string part_a() {
  const std::string path = (dir() / "a.fst").string();
  void* w = fstWriterCreate(path.c_str(), 1);
  fstWriterSetTimescale(w, -12);
  fstWriterSetScope(w, FST_ST_VCD_MODULE, "h1", nullptr);
  fstWriterSetScope(w, FST_ST_VCD_MODULE, "mac", nullptr);
  const fstHandle c = fstWriterCreateVar(w, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, 8, "count", 0);
  fstWriterSetUpscope(w);
  fstWriterSetScope(w, FST_ST_VCD_MODULE, "copy", nullptr);
  fstWriterCreateVar(w, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, 8, "count", c);
  fstWriterSetUpscope(w);
  const fstHandle r = fstWriterCreateVar(w, FST_VT_VCD_REAL, FST_VD_IMPLICIT, 8, "rate", 0);
  fstWriterSetUpscope(w);
  const double rates[] = {1.5, 2.25};
  fstWriterEmitTimeChange(w, 0);
  fstWriterEmitValueChange(w, c, "00000000");
  fstWriterEmitValueChange(w, r, &rates[0]);
  fstWriterEmitTimeChange(w, 10000);
  fstWriterEmitValueChange(w, c, "00000011");
  fstWriterEmitTimeChange(w, 30000);
  fstWriterEmitValueChange(w, c, "11111111");
  fstWriterEmitValueChange(w, r, &rates[1]);
  fstWriterEmitTimeChange(w, 40000);
  fstWriterClose(w);
  return path;
}

// Part B: host h0's 1-bit `busy`, changes at 0, 10 and 20 ns; its end at 25 ns.
std::string part_b() {
  const std::string path = (dir() / "b.fst").string();
  void* w = fstWriterCreate(path.c_str(), 1);
  fstWriterSetTimescale(w, -12);
  fstWriterSetScope(w, FST_ST_VCD_MODULE, "h0", nullptr);
  const fstHandle b = fstWriterCreateVar(w, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, 1, "busy", 0);
  fstWriterSetUpscope(w);
  for (auto [t, v] : {std::pair<uint64_t, const char*>{0, "0"}, {10000, "1"}, {20000, "0"}}) {
    fstWriterEmitTimeChange(w, t);
    fstWriterEmitValueChange(w, b, v);
  }
  fstWriterEmitTimeChange(w, 25000);
  fstWriterClose(w);
  return path;
}

struct Read {
  std::vector<std::string> vars;            // "scope.scope.name", in the file's order
  std::map<std::string, fstHandle> handle;  // ... and each one's handle
  std::vector<std::string> changes;         // "time handle value", in the file's order
  uint64_t end = 0;
};

void on_change(void* user, uint64_t t, fstHandle h, const unsigned char* v) {
  auto* r = static_cast<Read*>(user);
  std::string value = reinterpret_cast<const char*>(v);
  if (h == r->handle["h1.rate"]) value = std::to_string(*reinterpret_cast<const double*>(v));
  r->changes.push_back(std::to_string(t) + " " + std::to_string(h) + " " + value);
}

Read read(const std::string& path) {
  Read out;
  const tb::FstContents c = tb::read_fst(path);
  EXPECT_TRUE(c.opened) << path;
  for (const auto& [name, h] : c.order) {
    out.vars.push_back(name);
    out.handle[name] = h;
  }
  out.end = c.end;
  void* f = fstReaderOpen(path.c_str());
  if (!f) return out;
  fstReaderSetFacProcessMaskAll(f);
  fstReaderIterBlocksSetNativeDoublesOnCallback(f, 1);
  fstReaderIterBlocks(f, on_change, &out, nullptr);
  fstReaderClose(f);
  return out;
}

// The hosts' order: h0 before h1, whatever the parts' order.
size_t host_order(const std::string& top) { return top == "h0" ? 0 : top == "h1" ? 1 : 2; }

TEST(FstMerge, VariablesInTheHostsOrderAndChangesInTimeOrder) {
  const std::string out = (dir() / "merged.fst").string();
  merge_fst({part_a(), part_b()}, out, host_order);
  const Read m = read(out);
  EXPECT_EQ(m.vars,
            (std::vector<std::string>{"h0.busy", "h1.mac.count", "h1.copy.count", "h1.rate"}));
  EXPECT_EQ(m.handle.at("h1.mac.count"), m.handle.at("h1.copy.count")) << "the alias kept";
  const std::string busy = std::to_string(m.handle.at("h0.busy"));
  const std::string count = std::to_string(m.handle.at("h1.mac.count"));
  const std::string rate = std::to_string(m.handle.at("h1.rate"));
  // (The reader gives one time's changes in an order of its own: compared as a set per time.)
  std::vector<std::string> got = m.changes;
  std::sort(got.begin(), got.end(), [](const std::string& a, const std::string& b) {
    const uint64_t ta = std::stoull(a), tb = std::stoull(b);
    return ta != tb ? ta < tb : a < b;
  });
  std::vector<std::string> want = {
      "0 " + count + " 00000000",     "0 " + rate + " 1.500000",    "0 " + busy + " 0",
      "10000 " + count + " 00000011", "10000 " + busy + " 1",       "20000 " + busy + " 0",
      "30000 " + count + " 11111111", "30000 " + rate + " 2.250000"};
  std::sort(want.begin(), want.end(), [](const std::string& a, const std::string& b) {
    const uint64_t ta = std::stoull(a), tb = std::stoull(b);
    return ta != tb ? ta < tb : a < b;
  });
  EXPECT_EQ(got, want);
  std::vector<uint64_t> times;
  for (const std::string& c : m.changes) times.push_back(std::stoull(c));
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end())) << "the changes in time order";
  EXPECT_EQ(m.end, 40000u) << "the last part's end";
  EXPECT_FALSE(fs::exists(out + ".part0"));
  EXPECT_FALSE(fs::exists(out + ".part1"));
}

TEST(FstMerge, APartThatCannotBeReadIsNamed) {
  const std::string bad = (dir() / "not_fst.fst").string();
  std::FILE* f = std::fopen(bad.c_str(), "w");
  std::fputs("not a waveform\n", f);
  std::fclose(f);
  try {
    merge_fst({part_b(), bad}, (dir() / "merged_bad.fst").string(), host_order);
    FAIL() << "merged an unreadable part";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not_fst.fst"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rnic
