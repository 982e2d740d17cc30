// Samples every time series of a StatRegistry every `interval` of simulated time while the
// simulation has other work; it stops by itself when nothing else is pending (so a run still
// ends) and is restarted by kick() when work is added.
#pragma once

#include <systemc>

#include "sim/stats.h"

namespace rnic {

class StatsSampler : public sc_core::sc_module {
 public:
  StatsSampler(sc_core::sc_module_name n, StatRegistry& stats, uint64_t interval_ps)
      : sc_core::sc_module(n), stats_(stats), interval_ps_(interval_ps) {
    SC_HAS_PROCESS(StatsSampler);
    SC_METHOD(sample);
    sensitive << ev_;
    dont_initialize();
  }
  void kick() {
    if (interval_ps_ && !armed_) {
      armed_ = true;
      ev_.notify(sc_core::SC_ZERO_TIME);
    }
  }

 private:
  void sample() {
    stats_.sample(sc_core::sc_time_stamp().value());
    armed_ = sc_core::sc_pending_activity();  // other work, now or later
    if (armed_) ev_.notify(sc_core::sc_time::from_value(interval_ps_));
  }
  StatRegistry& stats_;
  uint64_t interval_ps_;
  bool armed_ = false;
  sc_core::sc_event ev_;
};

}  // namespace rnic
