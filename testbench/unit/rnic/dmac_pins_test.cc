// rnic_dmac's SystemC pin face (models/rnic/rnic_dmac_ports.h): DmacPinModel between the port
// list's signals, clocked, under the random bench (testbench/common/dmac_stimulus.h) in lockstep
// with the C++ model it wraps: every output pin equal after every edge, and the bench's own checks
// (reads return their bytes, writes land, MRRS/MPS/4 KiB, tags, held outputs) pass.
#include <gtest/gtest.h>

#include "models/rnic/rnic_dmac_ports.h"
#include "testbench/common/dmac_stimulus.h"
#include "testbench/common/lockstep.h"

namespace rnic {
namespace {

constexpr int kB = 16;
static_assert(dmac_ports_match<DmacPinModel<kB>, kB>(), "the pin model has the port list");

// DmacPinModel as a DmacCore: each edge() writes the input signals and toggles the clock.
class PinFace : public DmacCore {
 public:
  PinFace() {
    dut.clk(clk);
    sig.connect(dut);
  }
  void edge(const DmacIn& in) override {
    using Data = pin_t<8 * kB>;
    sig.rst.write(in.rst);
    sig.skip.write(in.skip);
    sig.cfg_mrrs.write(in.cfg_mrrs);
    sig.cfg_mps.write(in.cfg_mps);
    sig.cfg_tags.write(in.cfg_tags);
    sig.cfg_timeout.write(in.cfg_timeout);
    sig.rq_valid.write(in.rq_valid);
    sig.rq_addr.write(in.rq_addr);
    sig.rq_len.write(in.rq_len);
    sig.rq_id.write(in.rq_id);
    sig.rd_ready.write(in.rd_ready);
    sig.wq_valid.write(in.wq_valid);
    sig.wq_addr.write(in.wq_addr);
    sig.wq_len.write(in.wq_len);
    sig.wd_valid.write(in.wd_valid);
    sig.wd_data.write(pack_beat<Data>(in.wd_data.data(), kB));
    sig.tx_ready.write(in.tx_ready);
    sig.cp_valid.write(in.cp_valid);
    sig.cp_tag.write(in.cp_tag);
    sig.cp_status.write(in.cp_status);
    sig.cp_byte_count.write(in.cp_byte_count);
    sig.cp_len.write(in.cp_len);
    sig.cp_data.write(pack_beat<Data>(in.cp_data.data(), kB));
    sig.cp_cnt.write(in.cp_cnt);
    sig.cp_last.write(in.cp_last);
    clk.write(true);
    sc_core::sc_start(1, sc_core::SC_NS);
    clk.write(false);
    sc_core::sc_start(1, sc_core::SC_NS);
    auto beat = [](const Data& d) {
      DmacBeat b{};
      for (int i = 0; i < kB; ++i) b[size_t(i)] = pin_byte(d, i);
      return b;
    };
    o_.rq_ready = sig.rq_ready.read();
    o_.wq_ready = sig.wq_ready.read();
    o_.wd_ready = sig.wd_ready.read();
    o_.cp_ready = sig.cp_ready.read();
    o_.rd_valid = sig.rd_valid.read();
    o_.rd_id = uint8_t(sig.rd_id.read());
    o_.rd_status = uint8_t(sig.rd_status.read());
    o_.rw_valid = sig.rw_valid.read();
    o_.rw_id = uint8_t(sig.rw_id.read());
    o_.rw_off = sig.rw_off.read();
    o_.rw_cnt = sig.rw_cnt.read();
    o_.rw_data = beat(sig.rw_data.read());
    o_.tx_valid = sig.tx_valid.read();
    o_.tx_write = sig.tx_write.read();
    o_.tx_last = sig.tx_last.read();
    o_.tx_addr = sig.tx_addr.read();
    o_.tx_len = sig.tx_len.read();
    o_.tx_cnt = sig.tx_cnt.read();
    o_.tx_tag = uint16_t(sig.tx_tag.read());
    o_.tx_data = beat(sig.tx_data.read());
    o_.busy = sig.busy.read();
    o_.tmo_wait = sig.tmo_wait.read();
    o_.tags_used = uint16_t(sig.tags_used.read());
  }
  const DmacOut& out() const override { return o_; }
  int bytes() const override { return kB; }
  int max_tags() const override { return 1024; }
  const char* impl() const override { return "pin face"; }

 private:
  sc_core::sc_signal<bool> clk{"clk"};
  DmacSignals<kB> sig{"sig"};
  DmacPinModel<kB> dut{"dut"};
  DmacOut o_;
};

TEST(DmacPins, PinFaceMatchesTheModelEveryEdge) {
  const uint64_t seed = tb::seed_or(21);
  PinFace face;
  DmacModel ref(kB);
  tb::DmacBenchCfg c;
  c.seed = seed;
  c.reads = c.writes = 80;
  c.err_pct = 4;
  c.drop_pct = 3;
  c.junk_pct = 4;
  tb::DmacBench b(face, c, &ref);
  b.run(400000);
  for (const auto& e : b.errors) ADD_FAILURE() << e << " (seed " << seed << ")";
  EXPECT_GT(b.mrds, 100u);
  EXPECT_GT(b.mwrs, 100u);
}

}  // namespace
}  // namespace rnic
