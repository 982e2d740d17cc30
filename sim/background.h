// Side tasks of a run that must not change it: periodic ones (time-series sampling) and one-shot
// ones at a time (opening and closing the waveform window). They are not SystemC processes and
// post no event: run_control::simulate() stops the simulation at each task's time (between two
// slices, which changes nothing: the kernel resumes where it stopped) and runs the task there.
// So they never move the order of same-time events, and a task due after the run's last event
// never runs (the run ends when its own work does).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace rnic {

class Background {
 public:
  // fn(t) at every multiple of period from the run's start (period 0: never).
  void every(uint64_t period_ps, std::function<void(uint64_t t_ps)> fn) {
    if (period_ps) tasks_.push_back({0, period_ps, std::move(fn)});
  }
  // fn(t) once, at t.
  void at(uint64_t t_ps, std::function<void(uint64_t t_ps)> fn) {
    tasks_.push_back({t_ps, 0, std::move(fn)});
  }
  // The earliest time a task is due (UINT64_MAX: none).
  uint64_t next_due() const {
    uint64_t next = UINT64_MAX;
    for (const Task& t : tasks_) next = std::min(next, t.next);
    return next;
  }
  // Runs the tasks due at or before t (each with its own due time), in time order.
  void run_due(uint64_t t) {
    for (uint64_t due = next_due(); due <= t; due = next_due()) {
      for (Task& k : tasks_) {
        if (k.next != due) continue;
        k.fn(due);
        k.next = k.period ? due + k.period : UINT64_MAX;
      }
      tasks_.erase(std::remove_if(tasks_.begin(), tasks_.end(),
                                  [](const Task& k) { return k.next == UINT64_MAX; }),
                   tasks_.end());
    }
  }

 private:
  struct Task {
    uint64_t next, period;
    std::function<void(uint64_t)> fn;
  };
  std::vector<Task> tasks_;
};

}  // namespace rnic
