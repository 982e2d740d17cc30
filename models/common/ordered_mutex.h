// A mutex for simulated threads whose order of acquisition never depends on SystemC's order of
// processes: the lock is granted at the end of a time step (StepEnd), when every request of that
// time has arrived, to the request made earliest, ties by the requesting process's name.
// sc_mutex gives it to whichever waiter the kernel runs first, and two threads that ask at one
// time run in an order other hosts' events move. A grant takes no simulated time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "models/common/sim_time.h"
#include "models/common/step_end.h"

namespace rnic {

class OrderedMutex {
 public:
  OrderedMutex() : step_id_(StepEnd::get().add([this] { grant(); })) {}
  OrderedMutex(const OrderedMutex&) = delete;
  OrderedMutex& operator=(const OrderedMutex&) = delete;

  void lock() {
    const sc_core::sc_process_handle me = sc_core::sc_get_current_process_handle();
    waiters_.push_back({now_ps(), me.name(), me});
    StepEnd::get().request(step_id_);
    while (!(owned_ && owner_ == me)) sc_core::wait(granted_);
  }
  void unlock() {
    owned_ = false;
    if (!waiters_.empty()) StepEnd::get().request(step_id_);
  }

 private:
  struct Waiter {
    uint64_t since_ps;
    std::string name;
    sc_core::sc_process_handle who;
  };
  void grant() {
    if (owned_ || waiters_.empty()) return;
    size_t best = 0;
    for (size_t i = 1; i < waiters_.size(); ++i) {
      const Waiter &w = waiters_[i], &b = waiters_[best];
      if (w.since_ps < b.since_ps || (w.since_ps == b.since_ps && w.name < b.name)) best = i;
    }
    owner_ = waiters_[best].who;
    owned_ = true;
    waiters_.erase(waiters_.begin() + std::ptrdiff_t(best));
    notify_now(granted_);
  }

  size_t step_id_;
  std::vector<Waiter> waiters_;
  bool owned_ = false;
  sc_core::sc_process_handle owner_;
  sc_core::sc_event granted_;
};

}  // namespace rnic
