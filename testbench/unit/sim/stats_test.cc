// Statistics: counters, histogram buckets, reset, JSON; time series sampled at the configured
// interval while a run has work, and the sampler lets the run end; the actions a model leaves to
// be worked out when next asked still take their time at the run's end; timers that do not keep
// a run going (a keepalive's) go off until the workload is done.
#include "models/common/stats.h"

#include <gtest/gtest.h>

#include <functional>

#include "models/common/sim_time.h"
#include "sim/background.h"
#include "sim/host_card.h"
#include "sim/run_control.h"

namespace rnic {
namespace {

TEST(Stats, HistogramBucketsAndReset) {
  StatRegistry r;
  Histogram& h = r.group("g").histogram("lat", "ns", "latency", Histogram::linear_edges(10, 10, 3));
  for (double v : {5.0, 10.0, 19.9, 20.0, 35.0, 100.0}) h.sample(v);
  auto j = r.json()["g"]["lat"];
  EXPECT_EQ(j["buckets"].get<std::vector<int>>(),
            std::vector<int>({1, 2, 1, 2}));  // <10 [10,20) [20,30) >=30
  EXPECT_EQ(j["count"], 6);
  EXPECT_EQ(j["unit"], "ns");
  EXPECT_DOUBLE_EQ(double(j["max"]), 100.0);
  Counter& c = r.group("g").counter("n", "events", "things");
  c += 5;
  EXPECT_EQ(&r.group("g").counter("n", "", ""), &c);  // same object on second lookup
  r.reset();
  EXPECT_EQ(c.value, 0u);
  j = r.json()["g"]["lat"];
  EXPECT_EQ(j["count"], 0);
  EXPECT_EQ(j["unit"], "ns");
  EXPECT_EQ(j["edges"].size(), 3u);
}

// stats.json's statistics are written group by group as text (StatRegistry::append_json); the
// text must be the whole object's dump, nested where the file has it, whatever the groups hold.
TEST(Stats, TheStatisticsWrittenAsTextAreTheObjectsDump) {
  StatRegistry r;
  r.group("empty");
  StatGroup& g = r.group("node0.mac");
  g.counter("tx_frames", "frames", "frames sent") += 12345678901234ull;
  g.counter("odd \"name\"\\", "un\nit", "d\u00e9sc \x01") += 1;
  g.counter("zero", "", "");
  Histogram& h = g.histogram("lat", "ns", "latency", Histogram::linear_edges(0.5, 0.25, 4));
  for (double v : {0.1, 0.6, 0.61, 1e9, 1.0 / 3}) h.sample(v);
  g.histogram("none", "ns", "never sampled", {1.0});
  StatGroup& s = r.group("link.a");
  s.counter("bytes", "B", "bytes");
  s.series("util", "", "utilisation", [] { return 0.0; }).samples = {{1500, 0.25}, {3000, 1.0 / 7}};
  StatGroup& twice = r.group("twice");  // a series of a counter's name: json() keeps the last
  twice.counter("x", "n", "counted") += 3;
  twice.series("x", "", "sampled", [] { return 1.0; }).samples = {{1000, 2.0}};
  r.group("\u00fcber").counter("n", "", "") += 2;
  for (int depth : {0, 1, 3})
    for (int indent : {2, 4}) {
      std::string got, want;
      r.append_json(got, indent, depth);
      append_nested(want, r.json().dump(indent), indent, depth);
      EXPECT_EQ(got, want) << "indent " << indent << ", depth " << depth;
    }
  auto only_links = [](const std::string& n) { return n.rfind("link.", 0) == 0; };
  std::string got, want;
  r.append_json(got, 2, 1, only_links);
  append_nested(want, r.json(only_links).dump(2), 2, 1);
  EXPECT_EQ(got, want);
  got.clear();
  r.append_json(got, 2, 1, [](const std::string&) { return false; });
  EXPECT_EQ(got, "{}");
}

TEST(Stats, TimeSeriesSampledWhileTheRunHasWork) {
  SystemConfig cfg;
  cfg.sim.stats_interval_ns = 1000;
  StatRegistry stats;
  HostCard sys(cfg, stats);
  run_host_thread(sys, "w",
                  [&] { sys.card.dmac.write(1ull << 30, std::vector<uint8_t>(64 * 1024, 1)); });
  // 64 KiB at 58 Gb/s is ~9 us of transmission: about 9 samples of 1 us.
  auto u = stats.json()["pcie.card_tx"]["utilisation"];
  const auto& v = u["values"];
  ASSERT_GE(v.size(), 8u);
  ASSERT_LE(v.size(), 14u);
  EXPECT_NEAR(double(v[4]), 1.0, 0.01);  // mid-transfer: the card's transmitter never idles
  auto rc = stats.json()["pcie.rc_tx"]["utilisation"]["values"];
  EXPECT_LT(double(rc[4]), 0.2);  // only DLLPs flow back
}

TEST(Stats, MsixWriteRaisesAnInterrupt) {
  SystemConfig cfg;
  StatRegistry stats;
  HostCard sys(cfg, stats);
  uint64_t addr = 0;
  uint32_t data = 0;
  sys.rc.on_msi = [&](uint64_t a, uint32_t d) {
    addr = a;
    data = d;
  };
  run_host_thread(sys, "m", [&] { sys.card.dmac.msi(0xFEE00000 + 0x40, 0x2A); });
  EXPECT_EQ(addr, 0xFEE00040u);
  EXPECT_EQ(data, 0x2Au);
  EXPECT_EQ(stats.group("rc").counter("msi", "", "").value, 1u);
  EXPECT_EQ(stats.group("rc").counter("dma_writes", "", "").value, 0u);  // not a memory write
}

// What a model leaves to be worked out when next asked (StatRegistry::on_lazy, as the PCIe link
// does with its UpdateFCs and timers) still takes its time: with no event left, the run moves
// the clock to each such action in turn, after a side task due before it, and ends at the last.
TEST(Stats, ARunEndsAtTheLastActionAModelLeftToWorkOut) {
  SystemConfig cfg;
  StatRegistry stats;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const uint64_t t0 = now_ps();
  const int owner = 0;
  std::vector<uint64_t> runs;
  uint64_t next = t0 + 5000;
  stats.on_lazy(
      &owner, [&] { return next; },
      [&] {
        runs.push_back(now_ps());
        next = runs.size() == 1 ? t0 + 8000 : UINT64_MAX;
      });
  Background bg;
  uint64_t task_at = 0;
  bg.at(t0 + 2000, [&](uint64_t) { task_at = now_ps(); });
  run_control::simulate(
      cfg, stats, [] { return true; }, [] { return std::string(); }, &bg);
  stats.drop_settle(&owner);
  EXPECT_EQ(task_at, t0 + 2000);
  EXPECT_EQ(runs, (std::vector<uint64_t>{t0 + 5000, t0 + 8000}));
  EXPECT_EQ(now_ps(), t0 + 8000) << "the run ends at the last of them";
}

// A model's timer that does not keep the run going (StatRegistry::on_idle_timer): each due time
// in `due` in turn; when it goes off, its action (an event at that time) records the clock and
// arms the next.
struct IdleModel {
  IdleModel(StatRegistry& stats, std::vector<uint64_t> due) : stats_(stats), due_(std::move(due)) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&ev_);
    o.dont_initialize();
    sc_core::sc_spawn(
        [this] {
          went.push_back(now_ps());
          set_ = false;
        },
        "idle_model", &o);
    stats.on_idle_timer(
        this, [this] { return set_ || next_ >= due_.size() ? UINT64_MAX : due_[next_]; },
        [this](uint64_t t) {
          set_ = true;
          ++next_;
          notify_at(ev_, t);
        });
  }
  ~IdleModel() { stats_.drop_settle(this); }
  std::vector<uint64_t> went;

 private:
  StatRegistry& stats_;
  std::vector<uint64_t> due_;
  size_t next_ = 0;
  bool set_ = false;
  sc_core::sc_event ev_;
};

// A workload's own event: each time `ev` wakes it, the time goes into `at`, then `then` runs
// (it may notify `ev` again).
struct Work {
  explicit Work(std::function<void(Work&)> then = {}) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&ev);
    o.dont_initialize();
    sc_core::sc_spawn(
        [this, then] {
          at.push_back(now_ps());
          if (then) then(*this);
        },
        "work", &o);
  }
  sc_core::sc_event ev;
  std::vector<uint64_t> at;
};

// The idle-timer tests' system: the configuration, the statistics and the clock at the start.
struct IdleTimer : ::testing::Test {
  void SetUp() override {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    t0 = now_ps();
  }
  SystemConfig cfg;
  StatRegistry stats;
  uint64_t t0 = 0;
};

// A workload that is done, with nothing else pending: the run ends at once, the timer armed.
TEST_F(IdleTimer, ATimerThatDoesNotKeepTheRunGoingLetsADoneRunEnd) {
  IdleModel m(stats, {t0 + 5000});
  run_control::simulate(
      cfg, stats, [] { return true; }, [] { return std::string(); });
  EXPECT_TRUE(m.went.empty());
  EXPECT_EQ(now_ps(), t0);
}

// While the workload is not done such a timer goes off at its time, in order with the other
// events; once it is done (here at the first other event) none does, and the run ends at its
// last other event.
TEST_F(IdleTimer, ATimerThatDoesNotKeepTheRunGoingGoesOffUntilTheWorkloadIsDone) {
  IdleModel m(stats, {t0 + 4000, t0 + 7000, t0 + 12000, t0 + 20000});
  Work work([t0 = t0](Work& w) {
    if (w.at.size() == 1) notify_at(w.ev, t0 + 15000);
  });
  notify_at(work.ev, t0 + 10000);
  run_control::simulate(
      cfg, stats, [&] { return !work.at.empty(); }, [] { return std::string(); });
  EXPECT_EQ(m.went, (std::vector<uint64_t>{t0 + 4000, t0 + 7000}));
  EXPECT_EQ(work.at, (std::vector<uint64_t>{t0 + 10000, t0 + 15000}));
  EXPECT_EQ(now_ps(), t0 + 15000) << "the run ends at its last other event";
}

// Side tasks (a time series sampled every 700 ps) move nothing: the timers go off at their
// times, as without them, and the tasks at theirs.
TEST_F(IdleTimer, ATimerThatDoesNotKeepTheRunGoingGoesOffAtItsTimeBesideSideTasks) {
  IdleModel m(stats, {t0 + 4000, t0 + 7000, t0 + 12000});
  Work work;
  notify_at(work.ev, t0 + 10000);
  Background bg;
  std::vector<uint64_t> sampled;
  bg.every(700, [&](uint64_t t) { sampled.push_back(t); });
  run_control::simulate(
      cfg, stats, [&] { return !work.at.empty(); }, [] { return std::string(); }, &bg);
  EXPECT_EQ(m.went, (std::vector<uint64_t>{t0 + 4000, t0 + 7000}));
  EXPECT_EQ(work.at, (std::vector<uint64_t>{t0 + 10000}));
  ASSERT_FALSE(sampled.empty());
  for (size_t i = 0; i < sampled.size(); ++i) EXPECT_EQ(sampled[i] % 700, 0u);
}

// A workload that waits with nothing else left: the earliest timer goes off (at its time) rather
// than the run stopping as hung, and the workload may then finish.
TEST_F(IdleTimer, AWaitingWorkloadHearsATimerThatDoesNotKeepTheRunGoing) {
  IdleModel m(stats, {t0 + 3000, t0 + 9000, t0 + 50000});
  run_control::simulate(
      cfg, stats, [&] { return m.went.size() == 2; }, [] { return std::string(); });
  EXPECT_EQ(m.went, (std::vector<uint64_t>{t0 + 3000, t0 + 9000}));
  EXPECT_EQ(now_ps(), t0 + 9000);
}

}  // namespace
}  // namespace rnic
