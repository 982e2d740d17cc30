// rnic_dmac's RTL (rtl/rnic/rnic_dmac.sv) Verilated in C++ mode (V: no SystemC ports, eval() per
// clock edge) as a DmacCore: each edge() sets the input pins of dmac_core.h's DmacIn, ticks the
// clock once and reads DmacOut back. The card's DMA service (dmac.h) and the lockstep bench drive
// it exactly as they drive the model.
//
// TRACED: V is a build with FST tracing (rnic_verilate_cc_traced) in the thread's context; the
// core's trace() puts its internals in the run's waveform under `name` (the DMA service's
// <name>.rtl.rnic_dmac.*), each edge at the time the service clocks it.
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <verilated_fst_sc.h>

#include <algorithm>
#include <string>

#include "models/common/rtl_cc.h"
#include "models/rnic/dmac/dmac_core.h"
#include "models/rnic/dmac/rnic_dmac_ports.h"

namespace rnic {

// Compile-time proof that C++-mode Verilated class V has the rnic_dmac port list at BYTES.
RNIC_CC_PORTS_MATCH(dmac_cc_ports_match, RNIC_DMAC_PORTS)

// TAGS: the build's TAGS parameter (the most tags cfg_tags may ask for).
template <class V, int BYTES, int TAGS, bool TRACED = false>
class DmacRtlCore : public DmacCore {
  static_assert(dmac_cc_ports_match<V, BYTES>(), "rnic_dmac port list");

 public:
  // own_context: a context of its own (several blocks in one process); else the thread's,
  // whose coverage counters the lockstep tests write (CcRtl). A traced build is always in the
  // thread's context, with `name` as its model's name.
  // period_ps: a traced build's clock, shown in the waveform (CcRtl::show_clock).
  explicit DmacRtlCore(std::string impl = "rtl", bool own_context = true,
                       const std::string& name = "", uint64_t period_ps = 0)
      : rtl_("rnic_dmac", own_context && !TRACED, name), impl_(std::move(impl)) {
    if constexpr (TRACED) {
      std::string fall = name + "_clk_fall";
      std::replace(fall.begin(), fall.end(), '.', '_');
      if (period_ps) rtl_.show_clock(fall, period_ps);
    }
  }

  void edge(const DmacIn& in) override {
    V& v = *rtl_;
#define RNIC_DMAC_SET(f) v.f = in.f;
#define RNIC_DMAC_SET_DATA(f) cc_set_bytes(v.f, in.f.data(), BYTES);
#define RNIC_DMAC_GET(f) o_.f = v.f;
#define RNIC_DMAC_GET_DATA(f) cc_get_bytes(v.f, o_.f.data(), BYTES);
    RNIC_DMAC_IN_SCALARS(RNIC_DMAC_SET)
    RNIC_DMAC_IN_DATA(RNIC_DMAC_SET_DATA)
    rtl_.tick();
    RNIC_DMAC_OUT_SCALARS(RNIC_DMAC_GET)
    RNIC_DMAC_OUT_DATA(RNIC_DMAC_GET_DATA)
#undef RNIC_DMAC_SET
#undef RNIC_DMAC_SET_DATA
#undef RNIC_DMAC_GET
#undef RNIC_DMAC_GET_DATA
  }
  const DmacOut& out() const override { return o_; }
  int bytes() const override { return BYTES; }
  int max_tags() const override { return TAGS; }
  const char* impl() const override { return impl_.c_str(); }
  void trace(TraceSink& t) const override {
    if constexpr (TRACED)
      t.add_verilated([this](VerilatedFstSc& f) { const_cast<CcRtl<V, TRACED>&>(rtl_).trace(f); });
  }

 private:
  CcRtl<V, TRACED> rtl_;
  std::string impl_;
  DmacOut o_;
};

}  // namespace rnic
