// rnic_dmac's RTL (rtl/rnic/rnic_dmac.sv) Verilated in C++ mode (V: no SystemC ports, eval() per
// clock edge) as a DmacCore: each edge() sets the input pins of dmac_core.h's DmacIn, ticks the
// clock once and reads DmacOut back. The card's DMA service (dmac.h) and the lockstep bench drive
// it exactly as they drive the model.
//
// Include only where the Verilated headers are on the include path (sim/, testbench/).
#pragma once

#include <verilated.h>

#include <memory>
#include <string>

#include "models/common/crc32_cc.h"
#include "models/rnic/dmac/dmac_core.h"
#include "models/rnic/dmac/rnic_dmac_ports.h"

namespace rnic {

// Compile-time proof that C++-mode Verilated class V has the rnic_dmac port list at BYTES.
template <class V, int BYTES>
constexpr bool dmac_cc_ports_match() {
  RNIC_CHECK_CC_PORT(in, clk, 1)
  RNIC_DMAC_PORTS(RNIC_CHECK_CC_PORT)
  return true;
}

// TAGS: the build's TAGS parameter (the most tags cfg_tags may ask for).
template <class V, int BYTES, int TAGS>
class DmacRtlCore : public DmacCore {
  static_assert(dmac_cc_ports_match<V, BYTES>(), "rnic_dmac port list");

 public:
  // own_context: a context of its own (several blocks in one process); else the process's
  // default one, whose coverage counters the lockstep tests write.
  explicit DmacRtlCore(std::string impl = "rtl", bool own_context = true) : impl_(std::move(impl)) {
    // Making a context, or a model in it, makes it the thread's context, which the SystemC-mode
    // blocks and the waveform file made later would then share: the thread's is put back.
    VerilatedContext* const prev = Verilated::threadContextp();
    if (own_context) ctx_ = std::make_unique<VerilatedContext>();
    rtl_ = std::make_unique<V>(own_context ? ctx_.get() : prev, "rnic_dmac");
    Verilated::threadContextp(prev);
    rtl_->clk = 0;
    rtl_->rst = 1;
    rtl_->eval();
  }
  ~DmacRtlCore() override { rtl_->final(); }

  void edge(const DmacIn& in) override {
    V& v = *rtl_;
#define RNIC_DMAC_SET(f) v.f = in.f;
#define RNIC_DMAC_SET_DATA(f) cc_set_bytes(v.f, in.f.data(), BYTES);
#define RNIC_DMAC_GET(f) o_.f = v.f;
#define RNIC_DMAC_GET_DATA(f) cc_get_bytes(v.f, o_.f.data(), BYTES);
    RNIC_DMAC_IN_SCALARS(RNIC_DMAC_SET)
    RNIC_DMAC_IN_DATA(RNIC_DMAC_SET_DATA)
    cc_tick(v);
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

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> rtl_;
  std::string impl_;
  DmacOut o_;
};

}  // namespace rnic
