// DMA read and write throughput of the card over PCIe, swept over generation, width, MPS, MRRS
// and transfer size. Each point moves at least `total_bytes` as back-to-back transfers of
// `bytes` each (all issued at once; the DMA service bounds reads by its tags).
//   write: from the first transfer's issue to the last byte in host memory;
//   read:  from the first transfer's issue to the last transfer's data at the card.
// link_gbps is the TLP-overhead limit of the transfer: its bytes over its TLPs' wire bytes
// (TLPs of at most MPS bytes, 3DW headers) at the link's data rate. dmac_gbps is the DMAC's:
// an MWr (or an MPS-sized CplD) takes ceil(MPS / core.dma_bytes) beats of one core cycle.
// limit_gbps is the lower of the two.
#include <fmt/format.h>

#include <algorithm>

#include "sim/experiment.h"
#include "sim/host_card.h"

namespace rnic {

ExperimentKind pcie_dma_experiment() {
  ExperimentKind k;
  k.kind = "pcie_dma";
  k.desc = "card DMA read/write throughput over PCIe vs generation, lanes, MPS, MRRS, size";
  k.keys = {
      {"gens", ExpKey::kIntList, "[1, 3, 4]", 1, 5, {}, "", "PCIe generations"},
      {"lanes", ExpKey::kIntList, "[1, 8, 16]", 1, 16, {}, "lanes", "link widths"},
      {"mps", ExpKey::kIntList, "[128, 256, 512]", 128, 4096, {}, "B", "max payload sizes"},
      {"mrrs",
       ExpKey::kIntList,
       "[512, 1024, 2048, 4096]",
       128,
       4096,
       {},
       "B",
       "max read request sizes"},
      {"ops", ExpKey::kStringList, "[read, write]", 0, 0, {"read", "write"}, "", "directions"},
      {"min_bytes", ExpKey::kInt, "64", 1, double(1 << 30), {}, "B", "smallest transfer"},
      {"max_bytes",
       ExpKey::kInt,
       "1048576",
       1,
       double(1 << 30),
       {},
       "B",
       "largest transfer (doubling)"},
      {"total_bytes",
       ExpKey::kInt,
       "1048576",
       1,
       double(1ull << 34),
       {},
       "B",
       "bytes moved per point"},
  };
  k.run = [](ExperimentContext& ctx) {
    SystemConfig cfg = ctx.cfg;
    HostCard sys(cfg, ctx.stats);
    ctx.attach(sys);
    const uint64_t base = 1ull << 30;  // host memory the transfers target
    const uint64_t total = uint64_t(ctx.get_int("total_bytes"));
    int bad = 0;
    uint64_t sizes = 0;
    for (uint64_t b = uint64_t(ctx.get_int("min_bytes")); b <= uint64_t(ctx.get_int("max_bytes"));
         b *= 2)
      ++sizes;
    const uint64_t points = ctx.get_ints("gens").size() * ctx.get_ints("lanes").size() *
                            ctx.get_ints("mps").size() * ctx.get_ints("mrrs").size() *
                            ctx.get_strings("ops").size() * sizes;
    for (int64_t gen : ctx.get_ints("gens"))
      for (int64_t lanes : ctx.get_ints("lanes"))
        for (int64_t mps : ctx.get_ints("mps"))
          for (int64_t mrrs : ctx.get_ints("mrrs"))
            for (const std::string& op : ctx.get_strings("ops"))
              for (uint64_t b = uint64_t(ctx.get_int("min_bytes"));
                   b <= uint64_t(ctx.get_int("max_bytes")); b *= 2) {
                cfg.pcie.gen = gen;
                cfg.pcie.lanes = lanes;
                cfg.pcie.mps = mps;
                cfg.pcie.mrrs = mrrs;
                sys.configure(cfg);
                run_control::set_point(ctx.rows.size(), points);
                const uint64_t n = std::max<uint64_t>(1, total / b);
                uint64_t t0 = 0, t_end = 0;
                run_host_thread(sys, "dma", [&] {
                  t0 = now_ps();
                  for (uint64_t i = 0; i < n; ++i) {
                    const uint64_t addr = base + (i * b) % (256ull << 20);
                    if (op == "write") {
                      sys.card.dmac.write(addr, std::vector<uint8_t>(b, uint8_t(i)));
                    } else {
                      sys.card.dmac.read(addr, uint32_t(b),
                                         [&](DmacStatus st, std::vector<uint8_t>&&) {
                                           if (st != DmacStatus::kOk) ++bad;
                                           t_end = now_ps();
                                         });
                    }
                  }
                });
                if (op == "write") t_end = sys.rc.last_write_ps();
                const double link = pcie::tlp_limit_gbps(int(gen), int(lanes), uint64_t(mps), b);
                const int64_t beats = (mps + cfg.core.dma_bytes - 1) / cfg.core.dma_bytes;
                const double dmac =
                    double(mps) / double(beats) * double(cfg.core.clk_mhz) * 8.0 / 1000.0;
                const double ns = double(t_end - t0) / 1000.0;
                ctx.rows.push_back({{"gen", gen},
                                    {"lanes", lanes},
                                    {"mps", mps},
                                    {"mrrs", mrrs},
                                    {"op", op},
                                    {"bytes", b},
                                    {"gbps", 8.0 * double(n * b) / ns},
                                    {"link_gbps", link},
                                    {"dmac_gbps", dmac},
                                    {"limit_gbps", std::min(link, dmac)}});
              }
    ctx.x = "bytes";
    ctx.y = {"gbps", "limit_gbps"};
    ctx.summary = fmt::format("{} points", ctx.rows.size());
    return bad ? 1 : 0;
  };
  return k;
}

}  // namespace rnic
