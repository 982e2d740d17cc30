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
#include "models/rnic/dmac_core.h"
#include "models/rnic/rnic_dmac_ports.h"

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
    v.rst = in.rst;
    v.skip = in.skip;
    v.cfg_mrrs = uint16_t(in.cfg_mrrs);
    v.cfg_mps = uint16_t(in.cfg_mps);
    v.cfg_tags = uint16_t(in.cfg_tags);
    v.cfg_timeout = in.cfg_timeout;
    v.rq_valid = in.rq_valid;
    v.rq_addr = in.rq_addr;
    v.rq_len = in.rq_len;
    v.rq_id = in.rq_id;
    v.rd_ready = in.rd_ready;
    v.wq_valid = in.wq_valid;
    v.wq_addr = in.wq_addr;
    v.wq_len = in.wq_len;
    v.wd_valid = in.wd_valid;
    cc_set_bytes(v.wd_data, in.wd_data.data(), BYTES);
    v.tx_ready = in.tx_ready;
    v.cp_valid = in.cp_valid;
    v.cp_tag = in.cp_tag;
    v.cp_status = in.cp_status;
    v.cp_byte_count = uint16_t(in.cp_byte_count);
    v.cp_len = uint16_t(in.cp_len);
    cc_set_bytes(v.cp_data, in.cp_data.data(), BYTES);
    v.cp_cnt = uint8_t(in.cp_cnt);
    v.cp_last = in.cp_last;
    cc_tick(v);
    o_.rq_ready = v.rq_ready;
    o_.wq_ready = v.wq_ready;
    o_.wd_ready = v.wd_ready;
    o_.cp_ready = v.cp_ready;
    o_.rd_valid = v.rd_valid;
    o_.rd_id = v.rd_id;
    o_.rd_status = v.rd_status;
    o_.rw_valid = v.rw_valid;
    o_.rw_id = v.rw_id;
    o_.rw_off = v.rw_off;
    o_.rw_cnt = v.rw_cnt;
    cc_get_bytes(v.rw_data, o_.rw_data.data(), BYTES);
    o_.tx_valid = v.tx_valid;
    o_.tx_write = v.tx_write;
    o_.tx_last = v.tx_last;
    o_.tx_addr = v.tx_addr;
    o_.tx_len = v.tx_len;
    o_.tx_cnt = v.tx_cnt;
    o_.tx_tag = v.tx_tag;
    cc_get_bytes(v.tx_data, o_.tx_data.data(), BYTES);
    o_.busy = v.busy;
    o_.tmo_wait = v.tmo_wait;
    o_.tags_used = v.tags_used;
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
