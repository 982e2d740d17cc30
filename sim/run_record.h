// The run record: what a run's swappable blocks answered and when, and every card write that
// reached host memory and when, in the order the simulation produced them; two runs of one test
// (models only, and with RTL blocks) are compared record by record, and the first difference
// names its simulated time, its cycle on the source's clock and the block or host it came from.
//
// A record is (time in ps, source, two 64-bit values). Sources:
//   <channel instance> crc32         a = CRC, b = the cycle it is valid at
//   <channel instance> ddp_rx_parse  a = digest of the header result, b = its cycles; and
//                                    "... ready" when the block takes the next segment
//   <channel instance> rnic_xlat     a = digest of status, chunks and fault offset, b = cycles;
//                                    table writes: a = index, b = digest of the entry
//   <node> host write                a = address, b = digest of length and bytes written
// Recording is off unless a test binary asks for it (--rtl ... --compare-with-model, or
// --record FILE); then sim/blocks.h's factories wrap each block's face in its recorder
// (its Recorded, models/common/block.h) and each Node
// records its root complex's writes. The file is binary: 32-byte records, then the source
// table (name and clock period per source), then its offset. Header only: the test binaries
// main() (testbench/common/gtest_sc_main.cc) drives it without linking the simulator.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/common/block.h"

namespace rnic {

class RunRecord : public AnswerLog {
 public:
  static RunRecord& get();

  // Starts recording to `path` (truncated). Throws std::runtime_error if it cannot be written.
  void open(const std::string& path);
  bool enabled() const { return f_ != nullptr; }
  // Writes the source table and closes the file.
  void close();

  // A source's id (registered once per name); period_ps: its clock, for cycle numbers.
  uint32_t source(const std::string& name, uint64_t period_ps) override;
  void add(uint32_t src, uint64_t t_ps, uint64_t a, uint64_t b) override;

  // Marks this run's record as not comparable with another process's (a test whose simulated
  // behaviour depends on where the process's own memory lies: a verbs program's stack and heap
  // buffers registered at their real addresses, which ASLR moves from process to process).
  void not_comparable(const std::string& reason) { source(kNotComparable + reason, 0); }
  // The reason a record file was marked so, or "".
  static std::string not_comparable_reason(const std::string& path);

  // Compares two record files. Returns "" when they hold the same records, else the first
  // difference in words: its index, time, cycle and source, and both sides' values.
  static std::string compare(const std::string& model_path, const std::string& rtl_path);

 private:
  static constexpr const char* kNotComparable = "not comparable: ";
  struct Source {
    std::string name;
    uint64_t period_ps;
  };
  std::FILE* f_ = nullptr;
  std::vector<Source> sources_;
};

namespace run_record_detail {

struct Rec {
  uint64_t t_ps;
  uint32_t src;
  uint32_t pad;
  uint64_t a, b;
};
static_assert(sizeof(Rec) == 32, "record layout");

struct File {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f;
  std::vector<std::pair<std::string, uint64_t>> sources;
  uint64_t records = 0;
};

// Opens a record file: its source table and record count.
inline File load(const std::string& path) {
  File r{{std::fopen(path.c_str(), "rb"), &std::fclose}, {}, 0};
  if (!r.f) throw std::runtime_error(fmt::format("{}: cannot read the run record", path));
  uint64_t table = 0;
  if (std::fseek(r.f.get(), -8, SEEK_END) != 0 || std::fread(&table, 8, 1, r.f.get()) != 1)
    throw std::runtime_error(fmt::format("{}: not a finished run record", path));
  r.records = table / sizeof(Rec);
  std::fseek(r.f.get(), long(table), SEEK_SET);
  uint32_t n = 0;
  if (std::fread(&n, 4, 1, r.f.get()) != 1)
    throw std::runtime_error(fmt::format("{}: no source table", path));
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len = 0;
    uint64_t period = 0;
    if (std::fread(&len, 4, 1, r.f.get()) != 1 || std::fread(&period, 8, 1, r.f.get()) != 1)
      throw std::runtime_error(fmt::format("{}: source table cut short", path));
    std::string name(len, '\0');
    if (len && std::fread(name.data(), 1, len, r.f.get()) != len)
      throw std::runtime_error(fmt::format("{}: source table cut short", path));
    r.sources.push_back({name, period});
  }
  std::fseek(r.f.get(), 0, SEEK_SET);
  return r;
}

}  // namespace run_record_detail

inline RunRecord& RunRecord::get() {
  static RunRecord r;
  return r;
}

inline void RunRecord::open(const std::string& path) {
  close();
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) throw std::runtime_error(fmt::format("{}: cannot write the run record", path));
  sources_.clear();
}

inline void RunRecord::close() {
  if (!f_) return;
  const uint64_t table = uint64_t(std::ftell(f_));
  const uint32_t n = uint32_t(sources_.size());
  std::fwrite(&n, 4, 1, f_);
  for (const Source& s : sources_) {
    const uint32_t len = uint32_t(s.name.size());
    std::fwrite(&len, 4, 1, f_);
    std::fwrite(&s.period_ps, 8, 1, f_);
    std::fwrite(s.name.data(), 1, len, f_);
  }
  std::fwrite(&table, 8, 1, f_);
  std::fclose(f_);
  f_ = nullptr;
}

inline uint32_t RunRecord::source(const std::string& name, uint64_t period_ps) {
  for (size_t i = 0; i < sources_.size(); ++i)
    if (sources_[i].name == name) return uint32_t(i);
  sources_.push_back({name, period_ps});
  return uint32_t(sources_.size() - 1);
}

inline void RunRecord::add(uint32_t src, uint64_t t_ps, uint64_t a, uint64_t b) {
  if (!f_) return;
  const run_record_detail::Rec r{t_ps, src, 0, a, b};
  std::fwrite(&r, sizeof r, 1, f_);
}

inline std::string RunRecord::not_comparable_reason(const std::string& path) {
  const run_record_detail::File f = run_record_detail::load(path);
  const std::string k = kNotComparable;
  for (const auto& s : f.sources)
    if (s.first.compare(0, k.size(), k) == 0) return s.first.substr(k.size());
  return "";
}

inline std::string RunRecord::compare(const std::string& model_path, const std::string& rtl_path) {
  using run_record_detail::File;
  using run_record_detail::Rec;
  File m = run_record_detail::load(model_path), r = run_record_detail::load(rtl_path);
  auto name = [](const File& f, uint32_t s) {
    return s < f.sources.size() ? f.sources[s].first : fmt::format("source {}", s);
  };
  auto when = [](const File& f, const Rec& x) {
    const uint64_t p = x.src < f.sources.size() ? f.sources[x.src].second : 0;
    return p ? fmt::format("t = {:.3f} ns (cycle {} of its {:.0f} MHz clock)", x.t_ps / 1000.0,
                           x.t_ps / p, 1e6 / double(p))
             : fmt::format("t = {:.3f} ns", x.t_ps / 1000.0);
  };
  const uint64_t n = std::min(m.records, r.records);
  std::vector<Rec> bm(4096), br(4096);
  for (uint64_t i = 0; i < n;) {
    const size_t k = size_t(std::min<uint64_t>(bm.size(), n - i));
    if (std::fread(bm.data(), sizeof(Rec), k, m.f.get()) != k ||
        std::fread(br.data(), sizeof(Rec), k, r.f.get()) != k)
      throw std::runtime_error("run record: read failed");
    for (size_t j = 0; j < k; ++j, ++i) {
      const Rec &x = bm[j], &y = br[j];
      const std::string nx = name(m, x.src), ny = name(r, y.src);
      if (x.t_ps == y.t_ps && nx == ny && x.a == y.a && x.b == y.b) continue;
      return fmt::format(
          "record {} of {}: the model run has {} at {}: {:#x} {:#x}; the RTL run has {} at {}: "
          "{:#x} {:#x}",
          i, n, nx, when(m, x), x.a, x.b, ny, when(r, y), y.a, y.b);
    }
  }
  if (m.records != r.records)
    return fmt::format("the model run has {} records, the RTL run {}: the same up to the shorter",
                       m.records, r.records);
  return "";
}

}  // namespace rnic
