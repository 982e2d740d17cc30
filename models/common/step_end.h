// Decisions taken at the end of a time step: a block that must see every input of the current
// time before it acts (what it sends next, when several inputs at one time would change the
// choice) asks for a call here instead of acting at once. The call comes once nothing else is
// left to run at the current time (no process runnable, no delta notification), so its inputs
// at that time have all arrived, in whatever order SystemC ran their senders. Callers of one
// time step are called in the order they registered (construction order: deterministic), each
// once however often it asked; a call that makes more activity at the current time waits for it
// to settle too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <systemc>
#include <vector>

#include "models/common/sim_time.h"

namespace rnic {

class StepEnd {
 public:
  // The one coordinator of this simulation, made at first use (during elaboration).
  static StepEnd& get() {
    static StepEnd* s = new StepEnd;  // lives as long as the simulation context
    return *s;
  }
  // A caller's handle: its place in the order of calls.
  size_t add(std::function<void()> fn) {
    clients_.push_back({std::move(fn), false});
    return clients_.size() - 1;
  }
  // Calls `id` at the end of the current time step.
  void request(size_t id) {
    Client& c = clients_[id];
    if (c.wanted) return;
    c.wanted = true;
    wanted_.push_back(id);
    std::push_heap(wanted_.begin(), wanted_.end(), std::greater<size_t>());
    if (!armed_ && !g_virtual_clock.on) {  // ahead of the kernel, the scheduler calls
      armed_ = true;
      ev_.notify(sc_core::SC_ZERO_TIME);
    }
  }
  bool pending() const { return !wanted_.empty(); }
  // The calls asked for at the current time, made now (the scheduler, ahead of the kernel, at
  // the end of each time it runs). False when none was asked for.
  bool run_pending() {
    if (wanted_.empty()) return false;
    drain();
    return true;
  }

 private:
  struct Client {
    std::function<void()> fn;
    bool wanted;
  };
  StepEnd() : ev_("rnic_step_end_ev") {
    spawn_method_on(ev_, "rnic_step_end", [this] { run(); });
  }
  void run() {
    if (sc_core::sc_pending_activity_at_current_time()) {
      ev_.notify(sc_core::SC_ZERO_TIME);  // not the end yet
      return;
    }
    armed_ = false;
    drain();
  }
  void drain() {
    // In registration order; a caller that asks again during the pass, at or before the place
    // the pass has reached, waits for the next one (a later one is called in this pass).
    std::vector<size_t> later;
    bool any = false;
    size_t last = 0;
    while (!wanted_.empty()) {
      std::pop_heap(wanted_.begin(), wanted_.end(), std::greater<size_t>());
      const size_t id = wanted_.back();
      wanted_.pop_back();
      if (any && id <= last) {
        later.push_back(id);
        continue;
      }
      any = true;
      last = id;
      clients_[id].wanted = false;
      clients_[id].fn();
    }
    for (size_t id : later) {
      wanted_.push_back(id);
      std::push_heap(wanted_.begin(), wanted_.end(), std::greater<size_t>());
    }
  }
  sc_core::sc_event ev_;
  std::vector<Client> clients_;
  std::vector<size_t> wanted_;  // the callers that asked, a min-heap of their places
  bool armed_ = false;
};

}  // namespace rnic
