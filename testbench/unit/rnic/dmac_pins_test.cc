// rnic_dmac's SystemC pin face (models/rnic/dmac/rnic_dmac_ports.h): DmacPinModel between the port
// list's signals, clocked, under the random bench (testbench/common/dmac_stimulus.h) in lockstep
// with the C++ model it wraps: every output pin equal after every edge, and the bench's own checks
// (reads return their bytes, writes land, MRRS/MPS/4 KiB, tags, held outputs) pass.
#include <gtest/gtest.h>

#include "models/rnic/dmac/rnic_dmac_ports.h"
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
    auto beat = [](const Data& d) {
      DmacBeat b{};
      for (int i = 0; i < kB; ++i) b[size_t(i)] = pin_byte(d, i);
      return b;
    };
#define RNIC_DMAC_WRITE(f) sig.f.write(in.f);
#define RNIC_DMAC_WRITE_DATA(f) sig.f.write(pack_beat<Data>(in.f.data(), kB));
#define RNIC_DMAC_READ(f) o_.f = sig.f.read();
#define RNIC_DMAC_READ_DATA(f) o_.f = beat(sig.f.read());
    RNIC_DMAC_IN_SCALARS(RNIC_DMAC_WRITE)
    RNIC_DMAC_IN_DATA(RNIC_DMAC_WRITE_DATA)
    clk.write(true);
    sc_core::sc_start(1, sc_core::SC_NS);
    clk.write(false);
    sc_core::sc_start(1, sc_core::SC_NS);
    RNIC_DMAC_OUT_SCALARS(RNIC_DMAC_READ)
    RNIC_DMAC_OUT_DATA(RNIC_DMAC_READ_DATA)
#undef RNIC_DMAC_WRITE
#undef RNIC_DMAC_WRITE_DATA
#undef RNIC_DMAC_READ
#undef RNIC_DMAC_READ_DATA
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
