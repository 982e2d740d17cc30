// The one SystemC process that runs the models' timed work. Each block that waits for a time
// (an EventQueue, a PCIe link, the DMAC) is a client here with at most one pending wake, as an
// sc_event has at most one pending notification: wake() keeps an earlier one, set() replaces
// it. Clients due at one time run in rounds that stand for SystemC's delta cycles: a wake made
// for the current time runs in the next round (as a notification of SC_ZERO_TIME would), and
// within a round clients run in the order their wakes were made.
//
// Running ahead. When the kernel has nothing else to do before some later time (no host thread,
// side task, rank window or other SystemC process is due), the scheduler runs its clients' later
// times itself, in time order, without a kernel time step for each: now_ps() reads the time
// being run, delta_now() its round, and the blocks' end-of-step calls (StepEnd) run when a
// time's rounds are done, as the kernel would run them. It stops before the first time anything
// outside it is due: an event notified for a host thread from a client (notify_at) stops it at
// that event's time. The kernel's clock then catches up at the next wake. Run-ahead is on only
// between set_horizon() and the horizon (run_control sets it for each slice it runs: a bare
// sc_start() in a test steps every time as SystemC does), and off where a waveform is written
// or RTL pins are driven (need_kernel_steps: both are read at every kernel time step).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/sim_time.h"
#include "models/common/step_end.h"

namespace rnic {

class Scheduler {
 public:
  static Scheduler& get() {
    static Scheduler* s = new Scheduler;  // lives as long as the simulation context
    return *s;
  }

  // A client: fn runs at each wake. `name` orders it against SystemC processes where a block
  // orders same-time inputs by their sender's name (the PCIe link's TLP queue).
  size_t add(std::string name, std::function<void()> fn) {
    if (!dropped_.empty()) {  // a gone block's place (a sweep builds a system per point)
      const size_t id = dropped_.back();
      dropped_.pop_back();
      fns_[id] = std::move(fn);
      names_[id] = std::move(name);
      return id;
    }
    fns_.push_back(std::move(fn));
    names_.push_back(std::move(name));
    pos_.push_back(kNone);
    return fns_.size() - 1;
  }
  // Wakes `id` at t (or at the current time, if t has passed), unless it is due earlier.
  void wake(size_t id, uint64_t t) {
    const Entry e = entry(id, t);
    const size_t p = pos_[id];
    // (The running client's place still holds the wake it runs for.)
    if (p != kNone && (id != running_ || replaced_) && !(e < heap_[p])) return;
    place(e);
  }
  // Wakes `id` at t and at no other time (UINT64_MAX: never).
  void set(size_t id, uint64_t t) {
    if (t == UINT64_MAX) return cancel(id);
    place(entry(id, t));
  }
  void cancel(size_t id) {
    if (pos_[id] == kNone) return;
    if (id == running_) replaced_ = true;
    remove_at(pos_[id]);
  }
  // A client whose block is gone: never woken again.
  void drop(size_t id) {
    cancel(id);
    fns_[id] = nullptr;
    dropped_.push_back(id);
  }

  // The name of the client running now, or of the SystemC process running now ("" outside).
  const char* actor() const {
    if (running_ != kNone) return names_[running_].c_str();
    const sc_core::sc_object* p = sc_core::sc_get_current_process_b();
    return p ? p->name() : "";
  }
  // Run-ahead up to (not including) `ps`; 0 turns it off.
  void set_horizon(uint64_t ps) { horizon_ = ps; }
  // From a client running ahead too: nothing at or after ps runs ahead any more.
  void lower_horizon(uint64_t ps) {
    if (ps >= horizon_) return;
    horizon_ = ps;
    if (g_virtual_clock.on) g_virtual_clock.touched = true;
  }
  // Something reads the models at the kernel's time steps (pins, a waveform): no run-ahead.
  void need_kernel_steps() { allowed_ = false; }
  // The time points run ahead of the kernel so far (the tests ask whether any were).
  uint64_t times_ahead() const { return times_ahead_; }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  // A pending wake: the heap holds these, each client's place in pos_.
  struct Entry {
    uint64_t t, round, seq;
    size_t id;
    bool operator<(const Entry& o) const {
      if (t != o.t) return t < o.t;
      return round != o.round ? round < o.round : seq < o.seq;
    }
  };

  Scheduler() : ev_("rnic_scheduler_ev") {
    spawn_method_on(ev_, "rnic_scheduler", [this] { run(); });
    ahead_step_ = StepEnd::get().add([this] { try_run_ahead(); });
  }

  Entry entry(size_t id, uint64_t t) {
    const uint64_t now = now_ps();
    if (t <= now) return {now, delta_now() + (dispatching_ ? 1 : 0), seq_++, id};
    return {t, 0, seq_++, id};
  }
  // A running client that wakes again stays at the top until then: its new wake is later, so
  // it only moves down.
  void place(const Entry& e) {
    size_t p = pos_[e.id];
    if (e.id == running_) replaced_ = true;
    if (p == kNone) {
      p = heap_.size();
      heap_.push_back(e);
      pos_[e.id] = p;
      sift_up(p);
    } else {
      const bool up = e < heap_[p];
      heap_[p] = e;
      up ? sift_up(p) : sift_down(p);
    }
    if (heap_[0].id == e.id && !dispatching_ && !g_virtual_clock.on) arm();
  }
  void remove_at(size_t p) {
    pos_[heap_[p].id] = kNone;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (p == heap_.size()) return;
    heap_[p] = last;
    pos_[last.id] = p;
    if (p > 0 && last < heap_[(p - 1) / 2])
      sift_up(p);
    else
      sift_down(p);
  }
  void sift_up(size_t i) {
    const Entry e = heap_[i];
    while (i > 0) {
      const size_t up = (i - 1) / 2;
      if (!(e < heap_[up])) break;
      heap_[i] = heap_[up];
      pos_[heap_[i].id] = i;
      i = up;
    }
    heap_[i] = e;
    pos_[e.id] = i;
  }
  void sift_down(size_t i) {
    const Entry e = heap_[i];
    const size_t n = heap_.size();
    for (;;) {
      size_t m = 2 * i + 1;
      if (m >= n) break;
      if (m + 1 < n && heap_[m + 1] < heap_[m]) ++m;
      if (!(heap_[m] < e)) break;
      heap_[i] = heap_[m];
      pos_[heap_[i].id] = i;
      i = m;
    }
    heap_[i] = e;
    pos_[e.id] = i;
  }

  // The kernel's wake-up for the earliest client (a delta for one due at the current time).
  void arm() {
    if (heap_.empty()) return;
    const uint64_t k = kernel_now_ps(), t = heap_[0].t;
    if (t == armed_for_ && armed_) return;
    armed_ = true;
    armed_for_ = t;
    ev_.cancel();
    ev_.notify(ps_time(t > k ? t - k : 0));
  }

  // Runs every client due at the current time up to the current round.
  void dispatch(uint64_t now, uint64_t round) {
    struct Done {  // however a client leaves
      Scheduler& s;
      ~Done() {
        s.dispatching_ = false;
        s.running_ = kNone;
      }
    } done{*this};
    dispatching_ = true;
    while (!heap_.empty()) {
      const Entry& top = heap_[0];
      if (top.t > now || (top.t == now && top.round > round)) break;
      running_ = top.id;
      replaced_ = false;
      fns_[running_]();
      if (!replaced_) remove_at(pos_[running_]);
      running_ = kNone;
    }
    dispatching_ = false;
  }

  void run() {
    armed_ = false;
    const uint64_t now = kernel_now_ps();
    dispatch(now, delta_now());
    if (heap_.empty()) return;
    if (heap_[0].t == now) return arm();  // the next round: a delta
    if (allowed_ && now < horizon_) {
      if (!sc_core::sc_pending_activity_at_current_time()) return run_ahead(now);
      StepEnd::get().request(ahead_step_);
    }
    arm();
  }
  void try_run_ahead() {
    if (armed_ && armed_for_ == kernel_now_ps()) return;  // a round at this time is to come
    if (heap_.empty() || !allowed_ || kernel_now_ps() >= horizon_) return;
    // Not before the other end-of-step calls of this time, nor what they start.
    if (sc_core::sc_pending_activity_at_current_time() || StepEnd::get().pending())
      return StepEnd::get().request(ahead_step_);
    run_ahead(kernel_now_ps());
  }

  // The clients' times before anything else is due, each time's rounds and end-of-step calls as
  // the kernel would run them.
  void run_ahead(uint64_t k) {
    ev_.cancel();  // its own wake is not something else due
    armed_ = false;
    uint64_t limit = horizon_;
    if (sc_core::sc_pending_activity())
      limit = std::min<uint64_t>(limit, k + sc_core::sc_time_to_pending_activity().value());
    VirtualClock& v = g_virtual_clock;
    v.touched = false;
    struct Back {  // to the kernel's time, however a client leaves
      VirtualClock& v;
      ~Back() { v.on = false; }
    } back{v};
    uint64_t last = k;
    while (!heap_.empty()) {
      const uint64_t t = heap_[0].t;
      if (t >= limit) break;
      v.on = true;
      v.now = t;
      v.round = 0;
      for (;;) {
        dispatch(t, v.round);
        if (!heap_.empty() && heap_[0].t == t) {
          ++v.round;
          continue;
        }
        if (!StepEnd::get().run_pending()) break;
        ++v.round;
      }
      v.last_t = t;
      v.last_round = v.round;
      last = t;
      ++times_ahead_;
      if (v.touched) {      // an event for something outside, or a lower horizon: nothing after it
        v.touched = false;  // runs here
        limit = std::min<uint64_t>(limit, k + sc_core::sc_time_to_pending_activity().value());
        limit = std::min(limit, horizon_);
      }
    }
    v.on = false;
    // The kernel's clock moves on to the last time run: the next wake is before the slice ends,
    // or a wake of its own comes at that time (a slice that starves would end before it).
    if (!heap_.empty() && heap_[0].t < horizon_) return arm();
    if (last > k) {
      armed_ = true;
      armed_for_ = last;
      ev_.notify(ps_time(last - k));
    } else {
      arm();
    }
  }

  std::vector<std::function<void()>> fns_;  // by client
  std::deque<std::string> names_;           // a deque: they stay where actor() showed them
  std::vector<size_t> pos_;                 // each client's place in heap_ (kNone: not due)
  std::vector<Entry> heap_;                 // the pending wakes, earliest first
  bool replaced_ = false;                   // the running client woke again or was cancelled
  std::vector<size_t> dropped_;             // clients whose blocks are gone, to reuse
  uint64_t seq_ = 0;
  size_t running_ = kNone;
  bool dispatching_ = false;
  bool armed_ = false;
  uint64_t armed_for_ = 0;
  bool allowed_ = true;
  uint64_t horizon_ = 0;
  uint64_t times_ahead_ = 0;
  size_t ahead_step_ = 0;
  sc_core::sc_event ev_;
};

}  // namespace rnic
