// rnic_dmac's swap boundary (models/rnic/rnic_dmac_ports.h): the pin face between an engine
// driver and a completer with host memory. Random reads and writes under valid/ready stalls,
// completions split at a 64-byte RCB and interleaved across tags: every read returns the
// memory's bytes with its id, every write lands, MRds and MWrs keep the MRRS/MPS/4 KiB rules and
// the tag limit, and a protocol checker watches every stream. With no stalls the pin timing of
// the header holds to the cycle. The RTL issue runs the same bench on the Verilated block.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "models/rnic/rnic_dmac_ports.h"
#include "testbench/common/stream_checker.h"

namespace rnic {
namespace {

using tb::StreamChecker;

constexpr int kB = 16;
constexpr uint64_t kMrrs = 512, kMps = 256, kIf = 2;
constexpr int kTags = 8;
constexpr uint64_t kReadBase = 0x10000, kReadSpan = 0x40000, kWriteBase = 0x100000,
                   kWriteSpan = 0x40000;

struct Cpl {
  uint16_t tag;
  uint32_t byte_count, len;
  uint64_t addr;
};

class DmacBench : public sc_core::sc_module {
 public:
  sc_core::sc_clock clk{"clk", 4, sc_core::SC_NS};
  DmacSignals<kB> sig{"sig"};
  DmacPinModel<kB> dut{"dut", kMrrs, kMps, kTags, kIf, 1000000};

  // stall = false: every valid and ready high, completions at once and whole (no RCB split).
  DmacBench(sc_core::sc_module_name n, uint64_t seed, int reads, int writes, bool stall)
      : sc_core::sc_module(n), rng_(seed), nreads_(reads), nwrites_(writes), stall_(stall) {
    SC_HAS_PROCESS(DmacBench);
    dut.clk(clk);
    sig.connect(dut);
    mem_.resize(kWriteBase + kWriteSpan);
    for (auto& b : mem_) b = uint8_t(rng_());
    expect_ = mem_;
    auto add = [&](const char* what, auto v, auto r, auto p) {
      chk_.push_back(std::make_unique<StreamChecker>(what, v, r, p));
      chk_.back()->clk(clk);
    };
    add(
        "chk_rq", [this] { return sig.rq_valid.read(); }, [this] { return sig.rq_ready.read(); },
        [this] {
          return fmt::format("{} {} {}", sig.rq_addr.read(), sig.rq_len.read(), sig.rq_id.read());
        });
    add(
        "chk_rd", [this] { return sig.rd_valid.read(); }, [this] { return sig.rd_ready.read(); },
        [this] { return pin_str(sig.rd_data.read()) + std::to_string(sig.rd_cnt.read()); });
    add(
        "chk_wq", [this] { return sig.wq_valid.read(); }, [this] { return sig.wq_ready.read(); },
        [this] { return fmt::format("{} {}", sig.wq_addr.read(), sig.wq_len.read()); });
    add(
        "chk_wd", [this] { return sig.wd_valid.read(); }, [this] { return sig.wd_ready.read(); },
        [this] { return pin_str(sig.wd_data.read()); });
    add(
        "chk_tx", [this] { return sig.tx_valid.read(); }, [this] { return sig.tx_ready.read(); },
        [this] {
          return fmt::format("{} {} {}", sig.tx_addr.read(), sig.tx_len.read(), sig.tx_tag.read());
        });
    add(
        "chk_cp", [this] { return sig.cp_valid.read(); }, [this] { return sig.cp_ready.read(); },
        [this] { return fmt::format("{} {}", sig.cp_tag.read(), pin_str(sig.cp_data.read())); });
    SC_THREAD(drive_reads);
    SC_THREAD(drive_writes);
    SC_THREAD(complete);
    SC_METHOD(monitor);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  struct ReadSeen {
    uint64_t addr;
    uint32_t len;
    uint64_t accept_edge = 0, first_mrd_edge = 0, first_data_edge = 0, last_cpl_edge = 0;
    std::vector<uint8_t> data;
    int status = -1;
  };
  std::vector<ReadSeen> reads;
  std::vector<uint8_t> mem_, expect_;
  std::vector<std::pair<uint64_t, uint32_t>> mrds, mwrs;  // addr, len as sent
  std::vector<uint64_t> write_last_edge, mwr_first_edge;
  int max_tags = 0;
  bool finished = false;
  int violations() const {
    int v = 0;
    for (const auto& c : chk_) v += c->violations();
    return v;
  }

 private:
  bool chance(int pct) { return !stall_ || int(rng_() % 100) < pct; }
  void tick() { wait(clk.posedge_event()); }

  void drive_reads() {
    sig.rst.write(true);
    tick();
    tick();
    sig.rst.write(false);
    for (int i = 0; i < nreads_; ++i) {
      ReadSeen r;
      r.len = uint32_t(rng_() % 3000);
      r.addr = kReadBase + rng_() % (kReadSpan - r.len);
      reads.push_back(r);
      while (!chance(60)) tick();
      sig.rq_addr.write(r.addr);
      sig.rq_len.write(r.len);
      sig.rq_id.write(uint32_t(i));
      sig.rq_valid.write(true);
      do tick();
      while (!sig.rq_ready.read());
      sig.rq_valid.write(false);
      // Without stalls one read at a time, so each one's timing stands alone.
      if (!stall_)
        while (reads[size_t(i)].status < 0) tick();
    }
    while (!done()) tick();
    for (int i = 0; i < 20; ++i) tick();
    finished = true;
    sc_core::sc_stop();
  }

  bool done() const {
    for (const auto& r : reads)
      if (r.status < 0) return false;
    return int(reads.size()) == nreads_ && writes_done_ == nwrites_ && mwr_bytes_ == write_bytes_;
  }

  void drive_writes() {
    tick();
    tick();
    // Without stalls the writes start once the reads are done (no queueing between the two).
    if (!stall_)
      while (int(reads.size()) < nreads_ || reads.back().status < 0) tick();
    for (int i = 0; i < nwrites_; ++i) {
      const uint32_t len = uint32_t(1 + rng_() % 2000);
      const uint64_t addr = kWriteBase + rng_() % (kWriteSpan - len);
      std::vector<uint8_t> d(len);
      for (auto& b : d) b = uint8_t(rng_());
      std::copy(d.begin(), d.end(), expect_.begin() + int64_t(addr));
      write_bytes_ += len;
      while (!chance(50)) tick();
      sig.wq_addr.write(addr);
      sig.wq_len.write(len);
      sig.wq_valid.write(true);
      do tick();
      while (!sig.wq_ready.read());
      sig.wq_valid.write(false);
      for (size_t k = 0; k * kB < len; ++k) {
        while (!chance(70)) {
          sig.wd_valid.write(false);
          tick();
        }
        pin_t<8 * kB> v{};
        const size_t n = std::min<size_t>(kB, len - k * kB);
        v = pack_beat<pin_t<8 * kB>>(&d[k * kB], n);
        sig.wd_data.write(v);
        sig.wd_cnt.write(unsigned(n));
        sig.wd_last.write((k + 1) * kB >= len);
        sig.wd_valid.write(true);
        do tick();
        while (!sig.wd_ready.read());
      }
      sig.wd_valid.write(false);
      ++writes_done_;
      // Without stalls the next write waits for this one's MWrs (its timing stands alone).
      if (!stall_)
        while (mwr_bytes_ != write_bytes_) tick();
    }
  }

  // The completer: answers each MRd with CplDs (split at the 64-byte RCB when stalling), picks
  // the next completion among all outstanding tags at random, one completion's beats at a time.
  void complete() {
    while (true) {
      tick();
      if (pending_.empty() || !chance(50)) {
        sig.cp_valid.write(false);
        continue;
      }
      // Completions of one tag stay in order; tags interleave.
      auto it = pending_.begin();
      std::advance(it, int64_t(rng_() % pending_.size()));
      std::deque<Cpl>& q = it->second;
      const Cpl c = q.front();
      q.pop_front();
      if (q.empty()) pending_.erase(it);
      const size_t beats = std::max<size_t>(1, (c.len + kB - 1) / kB);
      for (size_t k = 0; k < beats; ++k) {
        pin_t<8 * kB> v{};
        const size_t n = std::min<size_t>(kB, c.len - std::min<size_t>(c.len, k * kB));
        if (n) v = pack_beat<pin_t<8 * kB>>(&mem_[c.addr + k * kB], n);
        sig.cp_tag.write(c.tag);
        sig.cp_status.write(0);
        sig.cp_byte_count.write(c.byte_count);
        sig.cp_len.write(c.len);
        sig.cp_data.write(v);
        sig.cp_cnt.write(unsigned(n));
        sig.cp_last.write(k + 1 == beats);
        sig.cp_valid.write(true);
        do tick();
        while (!sig.cp_ready.read());
      }
      sig.cp_valid.write(false);
    }
  }

  void monitor() {
    ++edge_;
    if (sig.rq_valid.read() && sig.rq_ready.read()) reads[sig.rq_id.read()].accept_edge = edge_;
    if (sig.tx_valid.read() && sig.tx_ready.read()) take_tx();
    if (sig.wd_valid.read() && sig.wd_ready.read() && sig.wd_last.read())
      write_last_edge.push_back(edge_);
    if (sig.cp_valid.read() && sig.cp_ready.read() && sig.cp_last.read()) {
      const uint16_t tag = uint16_t(sig.cp_tag.read());
      cpl_edge_[tag] = edge_;
      if (sig.cp_byte_count.read() == sig.cp_len.read()) outstanding_.erase(tag);  // tag free
    }
    if (sig.rd_valid.read() && sig.rd_ready.read()) {
      ReadSeen& r = reads[sig.rd_id.read()];
      if (r.first_data_edge == 0) r.first_data_edge = edge_;
      const auto v = sig.rd_data.read();
      unpack_beat(v, sig.rd_cnt.read(), r.data);
      if (sig.rd_last.read()) {
        r.status = int(sig.rd_status.read());
        r.last_cpl_edge = last_cpl_of(r);
      }
    }
    sig.tx_ready.write(chance(70));
    sig.rd_ready.write(chance(70));
  }

  void take_tx() {
    if (!sig.tx_write.read()) {
      const uint64_t a = sig.tx_addr.read();
      const uint32_t len = sig.tx_len.read();
      const uint16_t tag = uint16_t(sig.tx_tag.read());
      mrds.push_back({a, len});
      for (auto& r : reads)
        if (r.status < 0 && a >= r.addr && a < r.addr + std::max<uint32_t>(r.len, 1) &&
            r.first_mrd_edge == 0)
          r.first_mrd_edge = edge_;
      tag_read_[tag] = a;
      std::deque<Cpl>& q = pending_[tag];
      for (uint64_t x = a; x < a + len;) {
        const uint64_t stop = stall_ ? std::min<uint64_t>(a + len, (x / 64 + 1) * 64) : a + len;
        q.push_back({tag, uint32_t(a + len - x), uint32_t(stop - x), x});
        x = stop;
      }
      outstanding_.insert(tag);
      max_tags = std::max(max_tags, int(outstanding_.size()));
      return;
    }
    if (!in_mwr_) {
      in_mwr_ = true;
      mwr_at_ = sig.tx_addr.read();
      mwr_len_ = sig.tx_len.read();
      mwr_off_ = 0;
      mwrs.push_back({mwr_at_, mwr_len_});
      mwr_first_edge.push_back(edge_);
    }
    const auto v = sig.tx_data.read();
    for (unsigned i = 0; i < sig.tx_cnt.read(); ++i)
      mem_[mwr_at_ + mwr_off_++] = pin_byte(v, int(i));
    if (sig.tx_last.read()) {
      in_mwr_ = false;
      mwr_bytes_ += mwr_len_;
    }
  }

  // The last completion edge among the tags that served this read (for the timing check).
  uint64_t last_cpl_of(const ReadSeen& r) {
    uint64_t e = 0;
    for (auto it = tag_read_.begin(); it != tag_read_.end();) {
      if (it->second >= r.addr && it->second < r.addr + std::max<uint32_t>(r.len, 1) &&
          cpl_edge_.count(it->first)) {
        e = std::max(e, cpl_edge_[it->first]);
        cpl_edge_.erase(it->first);
        it = tag_read_.erase(it);
      } else {
        ++it;
      }
    }
    return e;
  }

  std::mt19937_64 rng_;
  int nreads_, nwrites_;
  bool stall_;
  uint64_t edge_ = 0;
  int writes_done_ = 0;
  uint64_t write_bytes_ = 0, mwr_bytes_ = 0;
  std::map<uint16_t, std::deque<Cpl>> pending_;
  std::map<uint16_t, uint64_t> tag_read_, cpl_edge_;
  std::set<uint16_t> outstanding_;
  bool in_mwr_ = false;
  uint64_t mwr_at_ = 0, mwr_off_ = 0;
  uint32_t mwr_len_ = 0;
  std::vector<std::unique_ptr<StreamChecker>> chk_;
};

void check_common(const DmacBench& b) {
  ASSERT_TRUE(b.finished);
  EXPECT_EQ(b.violations(), 0);
  for (size_t i = 0; i < b.reads.size(); ++i) {
    const auto& r = b.reads[i];
    EXPECT_EQ(r.status, 0) << "read " << i;
    ASSERT_EQ(r.data.size(), r.len) << "read " << i;
    EXPECT_TRUE(std::equal(r.data.begin(), r.data.end(), b.mem_.begin() + int64_t(r.addr)))
        << "read " << i;
  }
  for (const auto& [a, len] : b.mrds) {
    EXPECT_GT(len, 0u);
    EXPECT_LE(len, kMrrs);
    EXPECT_EQ(a / 4096, (a + len - 1) / 4096);
  }
  for (const auto& [a, len] : b.mwrs) {
    EXPECT_GT(len, 0u);
    EXPECT_LE(len, kMps);
    EXPECT_EQ(a / 4096, (a + len - 1) / 4096);
  }
  EXPECT_LE(b.max_tags, kTags);
  EXPECT_TRUE(b.mem_ == b.expect_) << "host memory after the writes";
}

TEST(DmacPins, RandomTrafficUnderStallsAndInterleavedCompletions) {
  DmacBench b("bench", 21, 200, 150, true);
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  check_common(b);
  EXPECT_EQ(b.max_tags, kTags) << "the stimulus keeps every tag busy at times";
}

TEST(DmacPins, PinTimingWithoutStalls) {
  DmacBench b("bench", 22, 40, 30, false);
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  check_common(b);
  for (size_t i = 0; i < b.reads.size(); ++i) {
    const auto& r = b.reads[i];
    if (r.len == 0) continue;
    EXPECT_EQ(r.first_mrd_edge, r.accept_edge + kIf + 1) << "read " << i;
    EXPECT_EQ(r.first_data_edge, r.last_cpl_edge + kIf + 1) << "read " << i;
  }
  ASSERT_EQ(b.write_last_edge.size(), 30u);
  size_t k = 0;
  // Each write's first MWr leaves if_cycles after its last data beat (0-byte writes send none).
  for (size_t w = 0; w < b.write_last_edge.size() && k < b.mwr_first_edge.size(); ++w) {
    while (k < b.mwr_first_edge.size() && b.mwr_first_edge[k] < b.write_last_edge[w]) ++k;
    if (k < b.mwr_first_edge.size()) {
      EXPECT_EQ(b.mwr_first_edge[k], b.write_last_edge[w] + kIf + 1) << "write " << w;
    }
    while (k < b.mwr_first_edge.size() &&
           (w + 1 == b.write_last_edge.size() || b.mwr_first_edge[k] < b.write_last_edge[w + 1]))
      ++k;
  }
}

static_assert(dmac_ports_match<DmacPinModel<kB>, kB>(),
              "the pin model has the rnic_dmac port list");

}  // namespace
}  // namespace rnic
