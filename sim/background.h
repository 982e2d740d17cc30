// Side tasks of a run that must not keep it alive: periodic ones (time-series sampling) and
// one-shot ones at a time (opening and closing the waveform window). All run off one event,
// which is re-armed only while the simulation has other work pending; when the run's own work
// is done the background stops, and kick() resumes it when work is added.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

namespace rnic {

class Background : public sc_core::sc_module {
 public:
  explicit Background(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    SC_HAS_PROCESS(Background);
    SC_METHOD(run);
    sensitive << ev_;
    dont_initialize();
  }
  // fn at every multiple of period from the first kick on (period 0: never).
  void every(uint64_t period_ps, std::function<void()> fn) {
    if (period_ps) tasks_.push_back({UINT64_MAX, period_ps, std::move(fn)});
  }
  // fn once, at t (or at the first kick after t).
  void at(uint64_t t_ps, std::function<void()> fn) { tasks_.push_back({t_ps, 0, std::move(fn)}); }
  void kick() {
    if (armed_) return;
    const uint64_t now = sc_core::sc_time_stamp().value();
    for (Task& t : tasks_)
      if (t.period && t.next == UINT64_MAX) t.next = now;
    arm(now);
  }

 private:
  struct Task {
    uint64_t next, period;
    std::function<void()> fn;
  };
  void arm(uint64_t now) {
    uint64_t next = UINT64_MAX;
    for (const Task& t : tasks_) next = std::min(next, t.next);
    armed_ = next != UINT64_MAX;
    if (armed_) ev_.notify(sc_core::sc_time::from_value(next > now ? next - now : 0));
  }
  void run() {
    const uint64_t now = sc_core::sc_time_stamp().value();
    for (Task& t : tasks_) {
      if (t.next > now) continue;
      t.fn();
      t.next = t.period ? now + t.period : UINT64_MAX - 1;  // one-shot: done
    }
    tasks_.erase(std::remove_if(tasks_.begin(), tasks_.end(),
                                [](const Task& t) { return t.next == UINT64_MAX - 1; }),
                 tasks_.end());
    armed_ = false;
    if (sc_core::sc_pending_activity()) arm(now);  // the run still has work: keep going
  }
  std::vector<Task> tasks_;
  bool armed_ = false;
  sc_core::sc_event ev_;
};

}  // namespace rnic
