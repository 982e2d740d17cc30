// Statistics: a named group per block (after gem5's ADD_STAT), registered in one registry and
// dumped to stats.json with units and descriptions. Three kinds:
//   Counter    a 64-bit count (events, bytes, TLPs ...)
//   Histogram  counts of samples per bucket, fixed bucket edges, with min/max/sum
//   TimeSeries a value sampled every sim.stats_interval_ns (between simulation slices, at most
//              StatRegistry::kMaxSamples times)
// Objects live as long as the registry and never move, so blocks keep references to them.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

namespace rnic {

// Adds `key` at the end of the object `obj` without looking for it first: an ordered_json object
// finds a key by a linear search, so a large object (a run's statistics groups, one key per
// block) built by operator[] takes time quadratic in its size. The caller knows the key is new.
inline void append_new_key(nlohmann::ordered_json& obj, std::string key, nlohmann::ordered_json v) {
  using Map = nlohmann::ordered_json::object_t;
  obj.get_ref<Map&>().Map::Container::emplace_back(std::move(key), std::move(v));
}

// `text`, a dump made at the top level, appended to `out` as it stands `depth` levels deep in a
// larger dump of that indent (a dump's newlines are all between its lines: strings escape theirs).
void append_nested(std::string& out, const std::string& text, int indent, int depth);
// `"key": ` as a dump of that indent has it `depth` levels deep (the key escaped as JSON's).
void append_json_key(std::string& out, const std::string& key, int indent, int depth);

struct Counter {
  std::string name, unit, desc;
  uint64_t value = 0;
  // Whether a change is progress for the watchdog (StatRegistry::activity): false for what
  // repeats without anything getting done (resends, their timers, the wire carrying them).
  bool progress = true;
  Counter& operator+=(uint64_t v) {
    value += v;
    return *this;
  }
  Counter& operator++() {
    ++value;
    return *this;
  }
};

// c, marked as no progress (Counter::progress).
inline Counter& no_progress(Counter& c) {
  c.progress = false;
  return c;
}

class Histogram {
 public:
  // edges e0 < e1 < ... : buckets (-inf,e0), [e0,e1), ..., [en,inf).
  Histogram(std::string name, std::string unit, std::string desc, std::vector<double> edges);
  static std::vector<double> linear_edges(double first, double width, int n);
  static std::vector<double> log2_edges(double first, int n);
  void sample(double v);
  void clear();
  uint64_t count() const { return count_; }
  nlohmann::ordered_json json() const;
  const std::string& name() const { return name_; }

 private:
  std::string name_, unit_, desc_;
  std::vector<double> edges_;
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

struct TimeSeries {
  std::string name, unit, desc;
  std::function<double()> source;
  std::vector<std::pair<uint64_t, double>> samples;  // (time in ps, value)
};

class StatGroup {
 public:
  explicit StatGroup(std::string name) : name_(std::move(name)) {}
  Counter& counter(const std::string& name, const std::string& unit, const std::string& desc);
  Histogram& histogram(const std::string& name, const std::string& unit, const std::string& desc,
                       std::vector<double> edges);
  TimeSeries& series(const std::string& name, const std::string& unit, const std::string& desc,
                     std::function<double()> source);
  const std::string& name() const { return name_; }
  // Whether this group's counters and histograms count as progress (the wire: MAC ports,
  // links, switch ports, which carry resends as they carry new frames, do not).
  void set_progress(bool p) { progress_ = p; }
  nlohmann::ordered_json json() const;
  // Appends json().dump(indent) to `out` as it stands `depth` levels deep in a larger dump (each
  // line after the first indented by depth * indent more), without building the object: its
  // counters are written directly.
  void append_json(std::string& out, int indent, int depth) const;
  void sample(uint64_t now_ps);
  void reset();               // counters and histograms to zero (between the points of a sweep)
  uint64_t activity() const;  // sum of its progress counters and histogram samples

 private:
  std::string name_;
  bool progress_ = true;
  std::deque<Counter> counters_;
  std::deque<Histogram> histograms_;
  std::deque<TimeSeries> series_;
};

class StatRegistry {
 public:
  // The group with this name, created on first use.
  StatGroup& group(const std::string& name);
  // Every group: those made before the simulation started in the order made, then those made
  // while it ran (an EFE's group per peer, at its first frame) by name, so that the order does
  // not depend on which process SystemC ran first, or on a run's split over processes.
  // keep: only the groups it says yes to (all when empty).
  nlohmann::ordered_json json(const std::function<bool(const std::string&)>& keep = {}) const;
  // json(keep).dump(indent) appended to `out` as it stands `depth` levels deep in a larger dump,
  // group by group (a large run's stats.json, without building the whole object).
  void append_json(std::string& out, int indent, int depth,
                   const std::function<bool(const std::string&)>& keep = {}) const;
  // The groups json(keep) lists, in its order, brought up to date first (on_settle).
  std::vector<const StatGroup*> listed(
      const std::function<bool(const std::string&)>& keep = {}) const;
  // The names of the groups made before the simulation started, in the order made.
  std::vector<std::string> names_before_start() const;
  // Samples every time series; after kMaxSamples samples it stops (the series end there, a
  // too short sim.stats_interval_ns cannot fill memory or stats.json) and truncated() says so.
  static constexpr uint64_t kMaxSamples = 100000;
  void sample(uint64_t now_ps);
  bool truncated() const { return samples_ >= kMaxSamples; }
  void reset();
  // Moves whenever any block does anything that is progress (not a resend, its timer, or the
  // wire carrying it): the watchdog's measure.
  uint64_t activity() const;
  // A model that works out what it did only when asked (the PCIe link) brings its counters up
  // to date here before they are read: json, sample and reset call every one, in the order
  // registered. The owner drops its own before it goes.
  void on_settle(const void* owner, std::function<void()> f);
  // drop_settle drops the owner's on_lazy too.
  void drop_settle(const void* owner);
  // Such a model may also leave actions that no one sees (the PCIe link's UpdateFC arrivals and
  // timers) to be worked out then, instead of waking for them: `next` says when the first is
  // due (UINT64_MAX: none). When the kernel has nothing left to run, run_control moves the
  // clock to the earliest and calls `run`, until none is left, so that a run still ends at its
  // last action.
  void on_lazy(const void* owner, std::function<uint64_t()> next, std::function<void()> run);
  uint64_t next_lazy() const;
  void run_lazy() const;
  // A timer that does not keep a run going (the EFE's keepalive): `next` says when it is due
  // (UINT64_MAX: not armed). While the workload is not done, run_control calls `fire(t)` once
  // nothing before t is left to run; fire starts the timer's work at t (an action of the
  // owner's at t, which may find nothing to do) and disarms it until that action has run. So a
  // workload that waits for nothing else to happen hears them go off, and once it is done none
  // does: the run ends at its last other event. drop_settle drops the owner's too.
  void on_idle_timer(const void* owner, std::function<uint64_t()> next,
                     std::function<void(uint64_t t_ps)> fire);
  uint64_t next_idle_timer() const;
  // Fires every timer due at or before t_ps, each at its own time.
  void fire_idle_timers(uint64_t t_ps) const;
  // The end of the stretch run_control is simulating (UINT64_MAX: none). A model whose timer
  // may have become due before it says so (idle_timer_moved): the stretch then stops early
  // (sc_pause; the scheduler runs no client ahead to that time), so that run_control fires the
  // timer at its time. idle_paused(): that happened since set_idle_horizon.
  void set_idle_horizon(uint64_t t_ps) const {
    idle_horizon_ = t_ps;
    idle_paused_ = false;
  }
  void idle_timer_moved(uint64_t t_ps) const;
  bool idle_paused() const { return idle_paused_; }

 private:
  void settle() const;

  std::deque<StatGroup> groups_;                         // in the order made
  std::vector<const StatGroup*> late_;                   // made while the simulation ran
  std::unordered_map<std::string, StatGroup*> by_name_;  // a run of many hosts has 10^5 groups
  uint64_t samples_ = 0;
  std::vector<std::pair<const void*, std::function<void()>>> settle_;
  struct Lazy {
    const void* owner;
    std::function<uint64_t()> next;
    std::function<void()> run;
  };
  std::vector<Lazy> lazy_;
  struct IdleTimer {
    const void* owner;
    std::function<uint64_t()> next;
    std::function<void(uint64_t)> fire;
  };
  std::vector<IdleTimer> idle_;
  mutable uint64_t idle_horizon_ = UINT64_MAX;
  mutable bool idle_paused_ = false;
};

}  // namespace rnic
