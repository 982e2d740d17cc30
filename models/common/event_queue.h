// Timed actions at absolute picosecond times, run in time order as one client of the scheduler
// (models/common/scheduler.h); ties by
// the action's rank (at_ranked; at() is rank 0), then in the order they were scheduled. A rank
// states a tie rule where the order of scheduling would be SystemC's process order (a switch's
// arrivals from several ports). Blocks use it for their fixed pipeline latencies instead of
// one process per pending action; an empty queue costs nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "models/common/action.h"
#include "models/common/scheduler.h"
#include "models/common/sim_time.h"

namespace rnic {

class EventQueue : public sc_core::sc_module {
 public:
  explicit EventQueue(sc_core::sc_module_name n)
      : sc_core::sc_module(n), id_(sched_.add(std::string(name()) + ".run", [this] { run(); })) {}
  ~EventQueue() override { sched_.drop(id_); }
  // fn: a callable (made in its slot) or an Action.
  template <class F>
  void at(uint64_t t_ps, F&& fn) {
    at_ranked(t_ps, 0, std::forward<F>(fn));
  }
  template <class F>
  void at_ranked(uint64_t t_ps, uint64_t rank, F&& fn) {
    const uint64_t now = now_ps();
    if (t_ps < now) t_ps = now;
    uint32_t slot;
    if (free_.empty() && used_near_ < kNear) {
      slot = used_near_++;
    } else if (free_.empty()) {
      slot = uint32_t(kNear + more_.size());
      more_.push_back(std::make_unique<Action>());
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    if constexpr (std::is_same_v<std::decay_t<F>, Action>)
      action(slot) = std::move(fn);
    else
      action(slot).emplace(std::forward<F>(fn));
    q_.push_back({t_ps, rank, seq_++, slot});
    std::push_heap(q_.begin(), q_.end(), later);
    if (q_.front().t == t_ps && t_ps <= alarm_t_) sched_.wake(id_, t_ps);
  }
  template <class F>
  void after(uint64_t d_ps, F&& fn) {
    at(now_ps() + d_ps, std::forward<F>(fn));
  }
  bool empty() const { return q_.empty() && alarm_t_ == UINT64_MAX; }
  // The time of the earliest action queued (the alarm aside; UINT64_MAX: none).
  uint64_t next_at() const { return q_.empty() ? UINT64_MAX : q_.front().t; }

  // One cancellable action (a block's timer): set_alarm replaces the pending one; it runs in
  // this queue's wake-up after the actions due at the same time, so its order against them
  // never depends on how the simulation is sliced. A cancelled alarm leaves no event behind.
  void set_alarm(uint64_t t_ps, Action fn) {
    const uint64_t now = now_ps();
    if (t_ps < now) t_ps = now;
    alarm_t_ = t_ps;
    alarm_ = std::move(fn);
    rearm();
  }
  void cancel_alarm() {
    alarm_t_ = UINT64_MAX;
    alarm_.reset();
    rearm();
  }
  uint64_t alarm_at() const { return alarm_t_; }

 private:
  // The heap holds keys only; the actions wait in slots that are reused, so ordering the heap
  // moves no action.
  struct Item {
    uint64_t t, rank, seq;
    uint32_t slot;
  };
  // A type of its own, not a function pointer, so that the heap's operations inline it.
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      if (a.t != b.t) return a.t > b.t;
      return a.rank != b.rank ? a.rank > b.rank : a.seq > b.seq;
    }
  };
  static constexpr Later later{};
  // The wake for the earliest action or the alarm, whichever comes first.
  void rearm() { sched_.set(id_, std::min(q_.empty() ? UINT64_MAX : q_.front().t, alarm_t_)); }
  void run() {
    const uint64_t now = now_ps();
    while (true) {
      while (!q_.empty() && q_.front().t <= now) {
        const uint32_t slot = q_.front().slot;
        std::pop_heap(q_.begin(), q_.end(), later);
        q_.pop_back();
        Action& fn = action(slot);  // it stays put while fn queues more
        fn();
        fn.reset();
        free_.push_back(slot);
      }
      if (alarm_t_ > now) break;
      auto fn = std::move(alarm_);
      alarm_t_ = UINT64_MAX;
      alarm_.reset();
      fn();  // may set the alarm again, or queue actions for now
    }
    rearm();
  }
  Action& action(uint32_t slot) { return slot < kNear ? near_[slot] : *more_[slot - kNear]; }
  std::vector<Item> q_;  // a heap, earliest at the front
  // The actions' slots: the first kNear in the queue itself (a block rarely has more pending,
  // and they are then in the cache lines the queue's wake-up reads anyway), the rest each in an
  // allocation of its own, so that none moves while it runs.
  static constexpr uint32_t kNear = 2;
  Action near_[kNear];
  uint32_t used_near_ = 0;
  std::vector<std::unique_ptr<Action>> more_;
  std::vector<uint32_t> free_;
  uint64_t seq_ = 0;
  uint64_t alarm_t_ = UINT64_MAX;
  Action alarm_;
  Scheduler& sched_ = Scheduler::get();
  size_t id_;
};

// A clock domain: period in ps and edge alignment (DESIGN.md §2).
struct ClockDomain {
  uint64_t period_ps = 4000;
  static ClockDomain mhz(int64_t f) { return {uint64_t(1000000 / f)}; }
  // The rising edge `cycles` cycles after the first edge at or after t.
  uint64_t edge_after(uint64_t t, uint64_t cycles) const {
    return (t + period_ps - 1) / period_ps * period_ps + cycles * period_ps;
  }
};

}  // namespace rnic
